"""Object code for the host from an LLVM-dialect module, compiled on several threads at once.

The module's kernel functions (public, with a body) are dealt into shares of about equal size (their op counts, the
largest first onto the lightest share); each share, with a copy of everything else the module holds (declarations,
private helpers), moves into a context of its own as bytecode and becomes one object file through MLIR's ExecutionEngine
(LLVM at -O3 for the host), called through MLIR's C API: a ctypes call runs without the GIL, so the shares compile on as
many cores. One share is compiled on the calling thread. PYTC_COMPILE_THREADS (default: the cores) caps the shares."""
from __future__ import annotations

import ctypes
import io
import os
import threading

from mlir import _mlir_libs, ir

from pytc.dialects.uop import _capsule_pointer
from pytc.helpers import getenv


class ObjectCodeError(RuntimeError):
  """LLVM could not turn an LLVM-dialect module into object code."""


class _Handle(ctypes.Structure):  # MlirModule, MlirExecutionEngine: one pointer, passed by value
  _fields_ = [("ptr", ctypes.c_void_p)]


class _StringRef(ctypes.Structure):  # MlirStringRef
  _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]


_capi = ctypes.CDLL(os.path.join(os.path.dirname(_mlir_libs.__file__), "libMLIRPythonCAPI.so"))
_capi.mlirExecutionEngineCreate.argtypes = [_Handle, ctypes.c_int, ctypes.c_int, ctypes.POINTER(_StringRef), ctypes.c_bool, ctypes.c_bool]
_capi.mlirExecutionEngineCreate.restype = _Handle
_capi.mlirExecutionEngineDumpToObjectFile.argtypes = [_Handle, _StringRef]
_capi.mlirExecutionEngineDestroy.argtypes = [_Handle]


def compile_threads() -> int:
  """How many shares a module may be compiled in at once: PYTC_COMPILE_THREADS (at least 1), else the cores."""
  try: return max(1, getenv("PYTC_COMPILE_THREADS", os.cpu_count() or 1))
  except ValueError: raise ValueError(f"PYTC_COMPILE_THREADS is {os.environ['PYTC_COMPILE_THREADS']!r}, not a number of threads") from None


def object_files(module: ir.Module, folder: str, threads: int | None = None) -> list[str]:
  """Compile `module` (LLVM dialect; consumed: the calling thread's share is compiled in place) into object files in
  `folder`, one per share of its kernel functions; ObjectCodeError when LLVM fails on one."""
  shares = _shares(module, compile_threads() if threads is None else threads)
  others = [_bytecode(module, share) for share in shares[1:]]
  for op in [op for share in shares[1:] for op in share]: op.erase()
  paths = [os.path.join(folder, f"kernels{i}.o") for i in range(len(shares))]
  errors: list[str] = []
  workers = [threading.Thread(target=_compile_bytecode, args=(share, path, errors)) for share, path in zip(others, paths[1:])]
  for worker in workers: worker.start()
  _compile(module, paths[0], errors)
  for worker in workers: worker.join()
  if errors: raise ObjectCodeError(errors[0])
  return paths


def _is_kernel(op: ir.Operation) -> bool:
  """A function with a body that other objects may call (external linkage): one share holds it, the others do not."""
  linkage = str(op.attributes["linkage"]) if "linkage" in op.attributes else "#llvm.linkage<external>"
  return op.name == "llvm.func" and len(op.regions[0].blocks) > 0 and linkage == "#llvm.linkage<external>"


def _op_count(function: ir.Operation) -> int:
  """The ops of an LLVM-dialect function (its blocks hold them all: control flow is branches by now)."""
  return sum(len(block.operations) for block in function.regions[0].blocks)


def _shares(module: ir.Module, threads: int) -> list[list[ir.Operation]]:
  """The module's kernel functions in at most `threads` shares of about equal op counts (none empty)."""
  kernels = sorted(((_op_count(op), n, op) for n, op in enumerate(o.operation for o in module.body.operations) if _is_kernel(op)),
                   key=lambda entry: (-entry[0], entry[1]))
  shares: list[list[ir.Operation]] = [[] for _ in range(max(1, min(threads, len(kernels))))]
  loads = [0] * len(shares)
  for count, _, op in kernels:
    lightest = loads.index(min(loads))
    shares[lightest].append(op)
    loads[lightest] += count
  return shares


def _bytecode(module: ir.Module, share: list[ir.Operation]) -> bytes:
  """`module` with only the kernel functions of `share` (everything else kept), as MLIR bytecode."""
  chosen = set(share)
  keep = [op.operation for op in module.body.operations if not _is_kernel(op.operation) or op.operation in chosen]
  with module.context, ir.Location.unknown():
    copy = ir.Module.create()
    for op in keep: op.clone(ip=ir.InsertionPoint(copy.body))
  stream = io.BytesIO()
  copy.operation.write_bytecode(stream)
  return stream.getvalue()


def _compile_bytecode(bytecode: bytes, path: str, errors: list[str]) -> None:
  with ir.Context(): _compile(ir.Module.parse(bytecode), path, errors)


def _compile(module: ir.Module, path: str, errors: list[str]) -> None:
  """Have LLVM write the object file of `module` at `path` (an error appended to `errors` instead)."""
  handle = _Handle(_capsule_pointer(module._CAPIPtr, b"mlir.ir.Module._CAPIPtr"))
  engine = _capi.mlirExecutionEngineCreate(handle, 3, 0, None, True, True)
  if not engine.ptr:
    errors.append("LLVM could not compile the kernels' LLVM-dialect IR for the host")
    return
  try: _capi.mlirExecutionEngineDumpToObjectFile(engine, _StringRef(name := path.encode(), len(name)))
  finally: _capi.mlirExecutionEngineDestroy(engine)
  if not os.path.exists(path): errors.append(f"LLVM wrote no object file for the kernels at {path}")
