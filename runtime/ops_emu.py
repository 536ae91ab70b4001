"""The EMU device: a GPU target's kernels, mapped onto workgroups and threads exactly as for the GPU, run on the CPU
(the emulation lowers workgroups and threads to loops, split at each barrier: see passes/gpu/emulate.py). It checks the
numerics of GPU-mapped kernels on any machine. `EMU` emulates gfx942; `EMU:gfx1100`, `EMU:sm_90`, ... name another
target. Memory, queue and signals are the CPU device's; a kernel takes its buffers only and runs its whole grid in one
call."""

from __future__ import annotations

from pytc.runtime.device import Kernel, KernelInfo
from pytc.runtime.ops_cpu import CPUBuffer, CPUDevice, CPUProgram, Kernargs
from pytc.runtime.target import emulated


class EMUKernel(Kernel):
  def __init__(self, device: EMUDevice, info: KernelInfo, entry: int):
    self.device, self.name, self.entry = device, info.name, entry

  def args(self, buffers: list[CPUBuffer]) -> Kernargs:
    return Kernargs([b.address for b in buffers])


class EMUProgram(CPUProgram):
  kernel = EMUKernel


class EMUDevice(CPUDevice):
  def __init__(self, name: str = "EMU"):
    # an unknown target fails before the device starts its threads
    target = emulated(name.partition(":")[2] or "gfx942")
    super().__init__(name)
    self.target, self._compiler, self._program = target, "pytc.compilers.emu:EMUCompiler", EMUProgram
