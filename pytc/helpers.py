"""Flags from the environment, counters and small shared utilities."""
import functools
import math
import os
from typing import TypeVar

T = TypeVar("T", int, float, str)


@functools.cache
def getenv(key: str, default: T = 0) -> T:  # type: ignore[assignment]
  return type(default)(os.environ.get(key, default))


DEBUG: int = getenv("DEBUG", 0)


class GlobalCounters:
  """Process-wide counts, named as tinygrad names them."""
  kernel_count: int = 0
  time_sum_s: float = 0.0
  schedules_built: int = 0  # graphs whose structure was new: the passes ran and the kernels compiled

  @staticmethod
  def reset() -> None:
    GlobalCounters.kernel_count, GlobalCounters.time_sum_s, GlobalCounters.schedules_built = 0, 0.0, 0


@functools.cache
def cpu_features() -> tuple[str, ...]:
  """The host CPU's model and feature flags as Linux reports them (empty elsewhere): what the JIT compiles for."""
  try:
    with open("/proc/cpuinfo") as f: lines = [line for line in f if line.startswith(("model name", "flags", "Features"))]
  except OSError: return ()
  model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "")
  flags = next((line.split(":", 1)[1].split() for line in lines if not line.startswith("model name")), [])
  return (model, *sorted(flags))


def prod(values) -> int: return math.prod(values)
