"""The EMU compiler: kernels through the GPU mapping for the emulated target (pytc-gpu-map), then back to CPU loops
(pytc-gpu-emulate), then the CPU's LLVM lowering and link: the gpu-dialect kernels that go into ROCDL/NVVM are the ones
that run."""
from __future__ import annotations

from mlir import ir

from pytc.compilers import gpu_map, signature
from pytc.compilers.cpu import CPUCompiler
from pytc.runtime.device import KernelInfo


class EMUCompiler(CPUCompiler):
  searchable = False  # its choices are the GPU mapping's, not the CPU passes'
  kernels_result = "CPU loops running the kernels mapped for the emulated GPU"

  def kernel_pipeline(self) -> str:
    return f"builtin.module({gpu_map(self.target)}, pytc-gpu-emulate, canonicalize)"

  def kernel_info(self, function: ir.Operation) -> KernelInfo:
    return KernelInfo(*signature(function))  # the buffers only: a call runs the whole grid
