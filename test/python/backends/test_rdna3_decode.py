"""The RDNA3 decoder against LLVM itself: every kernel of bench/run.py's workloads (--quick sizes) and of the demo's
graphs, compiled for gfx1100, decodes instruction by instruction to the text LLVM's assembly printer gives for the same
module (branch targets compared as the labels they land on; the s_nop padding that aligns loops is not in the text), and the
emulator has semantics for every one of those instructions.
Bytes that are no instruction are a DecodeError."""
import re
import struct
import sys
from pathlib import Path

import pytest

from pytc.compilers import amdgpu
from pytc.compilers.gpu import gpu_compiler
from pytc.runtime.amd.rdna3.decode import BRANCHES, DecodeError, decode, decode_one
from pytc.runtime.amd.rdna3.wave import implemented
from pytc.runtime.amd_code_object import parse

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from gpu_compile import compile_for, graphs  # noqa: E402

LABEL = re.compile(r"^(\.?[A-Za-z_][\w.]*):$")


def assembly_lines(text: str) -> dict[str, tuple[list[str], dict[str, int]]]:
  """Each kernel's instruction lines (whitespace collapsed) and its labels' positions among them."""
  kernels, current = {}, None
  for raw in text.splitlines():
    line = raw.split(";")[0].strip()
    if not line: continue
    if line == "---" or line.startswith(".Lfunc_end"): current = None
    elif (label := LABEL.match(line)):
      if not label.group(1).startswith("."): current = kernels[label.group(1)] = ([], {})
      elif current: current[1][label.group(1)] = len(current[0])
    elif current is not None and not line.startswith("."): current[0].append(re.sub(r"\s+", " ", line))
  return kernels


@pytest.fixture(scope="module")
def compiled():
  """(code object, LLVM's assembly) of every schedule of the workloads, for gfx1100."""
  texts, original = [], amdgpu.compile_llvm_ir
  def keep(text, chip, name="kernels"):
    texts.append(text)
    return original(text, chip, name)
  amdgpu.compile_llvm_ir = keep
  try:
    compiler = gpu_compiler("amdgpu:gfx1100")
    objects = [compile_for(compiler, scheduled)[0].code for scheduled in graphs().values()]
  finally: amdgpu.compile_llvm_ir = original
  return [(parse(code), amdgpu.assembly(text, "gfx1100")) for code, text in zip(objects, texts)]


def test_every_instruction_decodes_as_llvm_prints_it(compiled):
  checked = set()
  for code_object, text in compiled:
    image, listed = code_object.image(), assembly_lines(text)
    for name, kernel in code_object.kernels.items():
      lines, labels = listed[name]
      decoded = [i for i in decode(image, kernel.code_address, kernel.code_address + kernel.code_size) if i.name != "s_code_end"]
      matched, position = [], 0
      for instruction in decoded:
        if instruction.name == "s_nop" and not (position < len(lines) and lines[position].startswith("s_nop")): continue
        matched.append(instruction)
        position += 1
      assert len(matched) == len(lines), name
      label_at = {matched[index].pc if index < len(matched) else -1: label for label, index in labels.items()}
      for instruction, line in zip(matched, lines):
        mine = instruction.text
        if instruction.name in BRANCHES: mine = f"{instruction.name} {label_at[int(mine.split('pc:')[1], 16)]}"
        assert mine == line, f"{name} at {instruction.pc:#x}"
        checked.add(instruction.name)
  assert len(checked) > 60  # the workloads use many instructions: a decoder that handled a few would fail above
  assert not [name for name in checked if not implemented(name)]  # and the emulator executes every one of them


def test_bad_bytes():
  with pytest.raises(DecodeError, match="runs past the code's end"): decode_one(b"\x00\x00", 0)
  with pytest.raises(DecodeError, match="starts no RDNA3 encoding"): decode_one(struct.pack("<I", 0xF4000000 | 0x3 << 26), 0)
  global_load = struct.pack("<II", 0xDC520000, 0x007C0000)
  assert decode_one(global_load, 0).name == "global_load_b32"
  with pytest.raises(DecodeError, match="runs past"): decode_one(global_load[:4], 0)
  with pytest.raises(DecodeError, match="literal .* runs past"): decode_one(struct.pack("<I", 0x7E0002FF), 0)  # v_mov_b32 v0, literal
  assert decode_one(struct.pack("<II", 0x7E0002FF, 0x3F800000), 0).text == "v_mov_b32_e32 v0, 0x3f800000"
