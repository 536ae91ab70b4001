"""The compiler of a target as the command-line tools name it: "cpu" (this machine) or a GPU target."""
from __future__ import annotations

from pytc.compilers import Compiler
from pytc.compilers.cpu import CPUCompiler
from pytc.compilers.gpu import gpu_compiler
from pytc.runtime.target import GPU_TARGETS, host_cpu

TARGETS = ("cpu", *(f"{t.name}:{t.arch}" for t in GPU_TARGETS.values()))


def compiler_for(spec: str) -> Compiler:
  """The compiler for "cpu" or a GPU target ("amdgpu:gfx942", "gfx942", "nvptx:sm_90", "sm_90"); ValueError naming the
  known ones."""
  if spec.lower() == "cpu": return CPUCompiler(host_cpu())
  try: return gpu_compiler(spec)
  except ValueError: raise ValueError(f"unknown target '{spec}' (known: {', '.join(TARGETS)})") from None


def stage_table(compiler: Compiler) -> str:
  """The target's stages, one per line: number, name, what the module holds after it, and its pipeline."""
  lines = [f"stages of the {compiler.target.name} target ({compiler.target.arch}):"]
  for stage in compiler.stages():
    lines.append(f"  {stage.number}. {stage.name:<9} {stage.result}")
    lines.append(f"     {stage.pipeline or '(code emission: pytc compile --stage binary)'}")
  return "\n".join(lines)
