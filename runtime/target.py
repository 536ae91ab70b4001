"""Target descriptions: what the code a device runs can use. A compiler builds its pipelines from one (vector width,
registers, fma, native transcendentals, workgroups), and a compiled binary names the target it was built for.

The host CPU's description is read from the machine when a CPU device opens, never at import."""
from __future__ import annotations

import functools
import platform
from dataclasses import dataclass

ALL_DTYPES = frozenset({"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32",
                        "float64"})


@dataclass(frozen=True)
class Target:
  """One kind of processor code is compiled for. `name` is what compilers are found by ("cpu", later "amdgpu", "nvptx");
  `arch` the exact chip (an x86_64 host, gfx942, sm_90); `features` what else tells binaries apart (the CPU's flags)."""
  name: str
  arch: str
  features: tuple[str, ...] = ()
  vector_lanes: int = 1  # 32-bit lanes of one vector register
  vector_registers: int = 0  # architectural vector registers (what register blocking may keep live)
  fma: bool = False  # fused multiply-add in one instruction
  native_transcendentals: frozenset[str] = frozenset()  # math ops the hardware computes itself (else pytc's polynomials)
  local_memory: int = 0  # bytes of memory a workgroup shares (0: no workgroups)
  wave_size: int = 1  # threads that execute in lockstep
  max_workgroup_size: int = 1  # threads of one workgroup
  dtypes: frozenset[str] = ALL_DTYPES  # element types it computes with
  buffer_alignment: int = 64  # bytes every buffer's address is a multiple of: kernels may assume it (aligned vector stores)

  def __str__(self) -> str: return f"{self.name}:{self.arch}"

  def cache_key(self) -> str:
    """What a binary compiled for this target depends on (a different key: compile again)."""
    return f"{self} {' '.join(self.features)}"


def cpu_features() -> tuple[str, ...]:
  """The host CPU's model and feature flags as Linux reports them (empty elsewhere): what the JIT compiles for."""
  try:
    with open("/proc/cpuinfo") as f: lines = [line for line in f if line.startswith(("model name", "flags", "Features"))]
  except OSError: return ()
  model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "")
  flags = next((line.split(":", 1)[1].split() for line in lines if not line.startswith("model name")), [])
  return (model, *sorted(flags))


@functools.cache
def host_cpu() -> Target:
  """The machine this process runs on: LLVM compiles for all its features. AVX-512 gives 16 lanes and 32 registers;
  otherwise 8 lanes (AVX2, or two narrower registers) and 16 registers."""
  features = cpu_features()
  wide = "avx512f" in features
  return Target("cpu", f"{platform.machine()}-{platform.system()}".lower(), features, vector_lanes=16 if wide else 8,
                vector_registers=32 if wide else 16, fma="fma" in features or "asimd" in features,
                native_transcendentals=frozenset({"sqrt"}))
