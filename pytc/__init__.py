"""pytc: a tensor compiler on MLIR with tinygrad's Tensor API."""
from pathlib import Path

# Imported from a source checkout (Python started in its root): the installed package maps the checkout's passes/ and
# runtime/ into pytc; here they are found beside pytc/ (`make` copies the built libraries into the checkout).
if not Path(__file__).with_name("runtime").is_dir(): __path__.append(str(Path(__file__).parent.parent))

from pytc.device import Device
from pytc.dialects.uop import load_dialect
from pytc.dtype import dtypes
from pytc.helpers import GlobalCounters
from pytc.jit import TinyJit
from pytc.tensor import Tensor

__all__ = ["Device", "GlobalCounters", "Tensor", "TinyJit", "dtypes", "load_dialect"]
