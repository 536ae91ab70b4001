"""The `uop` dialect: generated op classes, and loading the C++ dialect into a context.

pytc's own contexts (`pytc.dialects.uop.context()`) load it already; a context made
elsewhere gets it with `pytc.dialects.uop.load_dialect(ctx)`.
"""
import ctypes

from mlir import ir

from pytc.helpers import package_library

from ._ods_common import _cext
from ._uop_enums import RangeKind, ReduceKind  # noqa: F401
from ._uop_ops_gen import *  # noqa: F403
from ._uop_ops_gen import _Dialect  # noqa: F401

_cext.globals.append_dialect_search_prefix("pytc.dialects")  # op views of uop ops resolve here, without import lookups

_library = package_library("pytc", "libpytc_uop.so")
_library.pytcLoadUOpDialect.argtypes = [ctypes.c_void_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def load_dialect(context: ir.Context) -> None:
  """Load the uop dialect into an `mlir.ir.Context` made outside pytc."""
  _library.pytcLoadUOpDialect(_capsule_pointer(context._CAPIPtr, b"mlir.ir.Context._CAPIPtr"))


def context() -> ir.Context:
  """A new MLIR context with the uop dialect loaded."""
  ctx = ir.Context()
  load_dialect(ctx)
  return ctx
