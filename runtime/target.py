"""Target descriptions: what the code a device runs can use. A compiler builds its pipelines from one (vector width,
registers, fma, native transcendentals, a math library or none, workgroups), and a compiled binary names the target it
was built for.

The host CPU's description is read from the machine when a CPU device opens, never at import."""

from __future__ import annotations

import functools
import os
import platform
from dataclasses import dataclass, replace

ALL_DTYPES = frozenset(
  {
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
  }
)


@dataclass(frozen=True)
class Target:
  """One kind of processor code is compiled for. `name` is what compilers are found by ("cpu", later "amdgpu", "nvptx");
  `arch` the exact chip (an x86_64 host, gfx942, sm_90); `features` what else tells binaries apart (the CPU's flags)."""

  name: str
  arch: str
  features: tuple[str, ...] = ()
  vector_lanes: int = 1  # 32-bit lanes of one vector register
  vector_registers: int = 0  # architectural vector registers (what register blocking may keep live)
  # vectors side by side in a register tile of a matmul-like kernel (rows x tile_vectors accumulators)
  tile_vectors: int = 2
  l2_bytes: int = 0  # the L2 cache of one core (0: unknown)
  fma: bool = False  # fused multiply-add in one instruction
  # math ops the hardware computes itself (else pytc's polynomials)
  native_transcendentals: frozenset[str] = frozenset()
  # its code links a math library (libm, libdevice); else f64 math and pow are pytc's polynomials too
  math_library: bool = True
  local_memory: int = 0  # bytes of memory a workgroup shares (0: no workgroups)
  wave_size: int = 1  # threads that execute in lockstep
  max_workgroup_size: int = 1  # threads of one workgroup
  dtypes: frozenset[str] = ALL_DTYPES  # element types it computes with
  # bytes every buffer's address is a multiple of: kernels may assume it (aligned vector stores)
  buffer_alignment: int = 64
  cores: int = 1  # cores a CPU launch is split across (its outermost parallel range is cut into that many slices)

  def __str__(self) -> str:
    return f"{self.name}:{self.arch}"

  def cache_key(self) -> str:
    """What a binary compiled for this target depends on (a different key: compile again)."""
    return f"{self}{f' cores={self.cores}' if self.cores > 1 else ''} {' '.join(self.features)}"


def cpu_features() -> tuple[str, ...]:
  """The host CPU's model and feature flags as Linux reports them (empty elsewhere): what the JIT compiles for."""
  try:
    with open("/proc/cpuinfo") as f:
      lines = [line for line in f if line.startswith(("model name", "flags", "Features"))]
  except OSError:
    return ()
  model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "")
  flags = next((line.split(":", 1)[1].split() for line in lines if not line.startswith("model name")), [])
  return (model, *sorted(flags))


@functools.cache
def host_cpu() -> Target:
  """The machine this process runs on: LLVM compiles for all its features. AVX-512 gives 16 lanes and 32 registers;
  otherwise 8 lanes (AVX2, or two narrower registers) and 16 registers. Intel's AVX-512 cores, which issue two 512-bit
  FMAs a cycle, take register tiles three vectors wide (24 accumulators: square and GPT-2 matmuls 1.05-1.25x faster than
  two, the kernel search's choice on each); elsewhere two."""
  features = cpu_features()
  wide = "avx512f" in features
  intel = bool(features) and "Intel" in features[0]
  return Target(
    "cpu",
    f"{platform.machine()}-{platform.system()}".lower(),
    features,
    vector_lanes=16 if wide else 8,
    vector_registers=32 if wide else 16,
    tile_vectors=3 if wide and intel else 2,
    l2_bytes=l2_bytes(),
    fma="fma" in features or "asimd" in features,
    native_transcendentals=frozenset({"sqrt"}),
    cores=usable_cores(),
  )


SIZE_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}  # the suffixes of Linux's cache sizes


def l2_bytes(cache_folder: str = "/sys/devices/system/cpu/cpu0/cache") -> int:
  """The size of the first core's L2 cache as Linux reports it (`index<n>/level` 2, `size` like 2048K), 0 where it does
  not or the entry is malformed."""
  try:
    entries = sorted(os.listdir(cache_folder))
  except OSError:
    return 0
  for entry in entries:
    try:
      with (
        open(os.path.join(cache_folder, entry, "level")) as level,
        open(os.path.join(cache_folder, entry, "size")) as size,
      ):
        if level.read().strip() != "2":
          continue
        text = size.read().strip()
    except OSError:
      continue
    number, unit = (text[:-1], SIZE_UNITS[text[-1]]) if text[-1:] in SIZE_UNITS else (text, 1)
    return int(number) * unit if number.isdigit() else 0
  return 0


def usable_cores() -> int:
  """The cores this process may run on: its CPU affinity where the system has one (a container or `taskset` may allow
  fewer than the machine has), else every core."""
  return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


GPU_TARGETS = {
  # AMD: CDNA2/3 run 64-thread waves, RDNA3 32; 64 KiB of LDS per workgroup; 1024 threads per workgroup; no device
  # library.
  "gfx90a": Target(
    "amdgpu",
    "gfx90a",
    vector_lanes=4,
    fma=True,
    native_transcendentals=frozenset({"sqrt"}),
    math_library=False,
    local_memory=65536,
    wave_size=64,
    max_workgroup_size=1024,
    buffer_alignment=256,
  ),
  "gfx942": Target(
    "amdgpu",
    "gfx942",
    vector_lanes=4,
    fma=True,
    native_transcendentals=frozenset({"sqrt"}),
    math_library=False,
    local_memory=65536,
    wave_size=64,
    max_workgroup_size=1024,
    buffer_alignment=256,
  ),
  "gfx1100": Target(
    "amdgpu",
    "gfx1100",
    vector_lanes=4,
    fma=True,
    native_transcendentals=frozenset({"sqrt"}),
    math_library=False,
    local_memory=65536,
    wave_size=32,
    max_workgroup_size=1024,
    buffer_alignment=256,
  ),
  # NVIDIA: 32-thread warps; 48 KiB of static shared memory per block; 1024 threads per block.
  "sm_80": Target(
    "nvptx",
    "sm_80",
    vector_lanes=4,
    fma=True,
    native_transcendentals=frozenset({"sqrt"}),
    local_memory=49152,
    wave_size=32,
    max_workgroup_size=1024,
    buffer_alignment=256,
  ),
  "sm_90": Target(
    "nvptx",
    "sm_90",
    vector_lanes=4,
    fma=True,
    native_transcendentals=frozenset({"sqrt"}),
    local_memory=49152,
    wave_size=32,
    max_workgroup_size=1024,
    buffer_alignment=256,
  ),
}


def gpu_target(spec: str) -> Target:
  """A GPU target by name: "gfx942", "amdgpu:gfx942", "sm_90" or "nvptx:sm_90"; ValueError naming the known ones."""
  kind, _, arch = spec.lower().rpartition(":")
  if (target := GPU_TARGETS.get(arch)) is None or kind not in ("", target.name):
    raise ValueError(
      f"unknown GPU target '{spec}' (known: {', '.join(f'{t.name}:{t.arch}' for t in GPU_TARGETS.values())})"
    )
  return target


def emulated(spec: str = "gfx942") -> Target:
  """The target of the EMU device: the GPU `spec` names (its wave size, workgroup limits, memory: what the GPU mapping
  is chosen for), its kernels compiled for this host's CPU, which runs them."""
  gpu = gpu_target(spec)
  return replace(gpu, name="emu", arch=f"{gpu.name}-{gpu.arch}", features=host_cpu().features, buffer_alignment=64)
