"""pytc: a tensor compiler on MLIR with tinygrad's Tensor API."""
from pytc.device import Device
from pytc.dialects.uop import load_dialect
from pytc.dtype import dtypes
from pytc.helpers import GlobalCounters
from pytc.jit import TinyJit
from pytc.tensor import Tensor

__all__ = ["Device", "GlobalCounters", "Tensor", "TinyJit", "dtypes", "load_dialect"]
