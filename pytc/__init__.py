"""pytc: a tensor compiler on MLIR with tinygrad's Tensor API.

The names below load on first use, so a process that only runs exported graphs (`pytc.runtime.exported`) imports
neither the compiler nor MLIR."""
import importlib

_HOMES = {"Context": "pytc.helpers", "Device": "pytc.device", "function": "pytc.function", "GlobalCounters": "pytc.helpers",
          "Tensor": "pytc.tensor", "TinyJit": "pytc.jit", "Variable": "pytc.symbolic", "dtypes": "pytc.dtype",
          "load_dialect": "pytc.dialects.uop"}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> object:
  if (home := _HOMES.get(name)) is None: raise AttributeError(f"module 'pytc' has no attribute {name!r}")
  value = globals()[name] = getattr(importlib.import_module(home), name)
  return value


def __dir__() -> list[str]: return sorted(set(globals()) | set(__all__))
