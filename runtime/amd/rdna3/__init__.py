"""An RDNA3 (gfx11) instruction-set emulator: the decoder (decode.py), operand types (operands.py), the scalar and
vector ALU semantics (salu.py, valu.py) and a wave executor (wave.py) that runs a code object's kernels for the MOCK
GPU."""
