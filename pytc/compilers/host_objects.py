"""Object code for the host from kernel functions, lowered and compiled on several threads at once.

The module's kernel functions (public, with a body) are dealt into shares of about equal size (their op counts, the
largest first onto the lightest share); each share, with a copy of everything else the module holds, moves into a
context of its own as bytecode, goes through the lowering pipeline (to the LLVM dialect) and becomes one object file
through LLVM's C API (host_llvm), each kernel beside the entry the CPU runtime calls it through. LLVM unrolls no loop of a
kernel of fewer than UNROLL_WORK steps (pytc.work): such a launch takes microseconds, while unrolling its small constant
loops whole took two thirds of a ResNet-18 training step's compile time. The pass manager and LLVM are called through C
APIs: a ctypes call runs without the GIL, so the shares lower and compile on as many cores. The calling thread takes one
share, in place. PYTC_COMPILE_THREADS (default: the cores) caps the shares.

A `Builder` takes modules one at a time instead, while its caller prepares the next: the CPU compiler hands it the kernels
chunk by chunk as its (Python) kernel pipeline finishes each, so LLVM runs on the cores the pipeline leaves idle."""
from __future__ import annotations

import ctypes
import io
import os
import queue
import shutil
import tempfile
import threading
from collections.abc import Callable

from mlir import ir
from mlir.passmanager import PassManager

from pytc import flags
from pytc.compilers.host_llvm import Handle, HostCodeError, add_packed_entries, emit_object, mlir_capi
from pytc.dialects.uop import _capsule_pointer
from pytc.passes.common.attributes import KERNEL, WORK
from pytc.runtime.target import usable_cores


class ObjectCodeError(RuntimeError):
  """The kernels could not be lowered to LLVM or turned into object code."""


class _LogicalResult(ctypes.Structure):  # MlirLogicalResult
  _fields_ = [("value", ctypes.c_int8)]


UNROLL_WORK = 1 << 16
mlir_capi.mlirPassManagerRunOnOp.argtypes, mlir_capi.mlirPassManagerRunOnOp.restype = [Handle, Handle], _LogicalResult
mlir_capi.mlirOperationVerify.argtypes, mlir_capi.mlirOperationVerify.restype = [Handle], ctypes.c_bool


def compile_threads() -> int:
  """How many shares a module may be compiled in at once: PYTC_COMPILE_THREADS (at least 1), else the cores it may use."""
  return max(1, usable_cores() if (threads := flags.COMPILE_THREADS.value) is None else threads)


def object_files(module: ir.Module, folder: str, pipeline: str, threads: int | None = None, dump: str = "") -> list[str]:
  """Lower `module` with `pipeline` (from kernel functions to the LLVM dialect; the module is consumed: the calling
  thread's share is lowered in place) and compile it into object files in `folder`, one per share of its kernel
  functions; with `dump`, the IR after every pass goes under that folder (share<n>/ per share when there are several).
  ObjectCodeError when the pipeline or LLVM fails on a share."""
  shares = _shares(module, compile_threads() if threads is None else threads)
  others = [_bytecode(module, share) for share in shares[1:]]
  for op in [op for share in shares[1:] for op in share]: op.erase()
  paths = [os.path.join(folder, f"kernels{i}.o") for i in range(len(shares))]
  dumps = [os.path.join(dump, f"share{i}") if dump and len(shares) > 1 else dump for i in range(len(shares))]
  errors: list[str] = []
  workers = [threading.Thread(target=_collecting, args=(errors, _compile_bytecode, share, pipeline, path, where))
             for share, path, where in zip(others, paths[1:], dumps[1:])]
  for worker in workers: worker.start()
  _collecting(errors, _compile, module, pipeline, paths[0], dumps[0])
  for worker in workers: worker.join()
  if errors: raise ObjectCodeError(errors[0])
  return paths


def _is_kernel(op: ir.Operation) -> bool:
  """A function with a body that other objects may call (public): one share holds it, the others do not."""
  linkage = str(op.attributes["linkage"]) if "linkage" in op.attributes else "#llvm.linkage<external>"
  private = "sym_visibility" in op.attributes and ir.StringAttr(op.attributes["sym_visibility"]).value != "public"
  return op.name in ("func.func", "llvm.func") and len(op.regions[0].blocks) > 0 and linkage == "#llvm.linkage<external>" and not private


def _op_count(function: ir.Operation) -> int:
  count = 0
  def visit(_: ir.Operation) -> ir.WalkResult:
    nonlocal count
    count += 1
    return ir.WalkResult.ADVANCE
  function.walk(visit)
  return count


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


def chunks(module: ir.Module, count: int) -> list[ir.Module]:
  """Modules in `module`'s context holding its pytc kernels (`pytc.kernel` functions, what a compiler's pipelines take) in
  at most `count` runs of about equal op counts, in order, and nothing else."""
  kernels = [op.operation for op in module.body.operations if KERNEL.get(op)]
  sizes = [_op_count(op) for op in kernels]
  runs: list[list[ir.Operation]] = [[]]
  total, done = sum(sizes), 0
  for op, size in zip(kernels, sizes):
    if runs[-1] and done >= total * len(runs) / count: runs.append([])
    runs[-1].append(op)
    done += size
  return [_copy(module, run, everything_else=False) for run in runs] if kernels else []


def _copy(module: ir.Module, share: list[ir.Operation], everything_else: bool = True) -> ir.Module:
  """`module` with only the kernel functions of `share`, and everything else it holds unless told not to."""
  chosen = set(share)
  keep = [op.operation for op in module.body.operations if op.operation in chosen or (everything_else and not _is_kernel(op.operation))]
  with module.context, ir.Location.unknown():
    copy = ir.Module.create()
    for op in keep: op.clone(ip=ir.InsertionPoint(copy.body))
  return copy


def _bytecode(module: ir.Module, share: list[ir.Operation]) -> bytes:
  """`module` with only the kernel functions of `share` (everything else kept), as MLIR bytecode."""
  stream = io.BytesIO()
  _copy(module, share).operation.write_bytecode(stream)
  return stream.getvalue()


def _collecting(errors: list[str], compile_share: Callable[..., None], *args) -> None:
  """Run `compile_share(*args, errors)`, whatever it raises appended to `errors` (a thread's exception would be lost)."""
  try: compile_share(*args, errors)
  except Exception as error: errors.append(f"{type(error).__name__}: {str(error).strip()}")


def _compile_bytecode(bytecode: bytes, pipeline: str, path: str, dump: str, errors: list[str]) -> None:
  """A worker thread's share: parsed into a context of its own, then as `_compile`."""
  with ir.Context(): _compile(ir.Module.parse(bytecode), pipeline, path, dump, errors)


def _without_unrolling(module: ir.Module, names: set[str]) -> None:
  """Mark every loop of the LLVM functions `names` not to be unrolled: each branch back to an earlier block (the lowering
  of scf places a loop's header before its body) carries `llvm.loop.unroll.disable`."""
  with module.context:
    annotation = ir.Attribute.parse("#llvm.loop_annotation<unroll = <disable = true>>")
    for function in module.body.operations:
      if function.operation.name != "llvm.func" or ir.StringAttr(function.attributes["sym_name"]).value not in names: continue
      blocks = list(function.operation.regions[0].blocks)
      order = {block: n for n, block in enumerate(blocks)}
      for n, block in enumerate(blocks):
        branch = block.operations[len(block.operations) - 1].operation
        if branch.name == "llvm.br" and order[branch.successors[0]] <= n: branch.attributes["loop_annotation"] = annotation


def _compile(module: ir.Module, pipeline: str, path: str, dump: str, errors: list[str]) -> None:
  """Lower `module` with `pipeline` and have LLVM write its object file at `path` (an error appended to `errors` instead).
  The lowering's result is verified once, not after each of its (upstream) conversions: a tenth of the lowering's time."""
  passes = PassManager.parse(pipeline, context=module.context)
  passes.enable_verifier(False)
  if dump:
    os.makedirs(dump, exist_ok=True)
    passes.enable_ir_printing(print_after_all=True, tree_printing_dir_path=dump)
  kernels = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in module.body.operations if _is_kernel(op.operation)}
  names = ", ".join(kernels)
  small = {name for name, op in kernels.items() if WORK.has(op) and WORK.get(op) < UNROLL_WORK}
  operation = Handle(_capsule_pointer(module.operation._CAPIPtr, b"mlir.ir.Operation._CAPIPtr"))
  manager = Handle(_capsule_pointer(passes._CAPIPtr, b"mlir.passmanager.PassManager._CAPIPtr"))
  if not mlir_capi.mlirPassManagerRunOnOp(manager, operation).value or not mlir_capi.mlirOperationVerify(operation):
    errors.append(f"the lowering to LLVM failed on kernels {names} (PYTC_DUMP=dir keeps the IR after every pass)")
    return
  _without_unrolling(module, small)
  try:
    add_packed_entries(module, list(kernels))
    emit_object(module, path)
  except HostCodeError as error: errors.append(f"LLVM could not compile kernels {names} for the host: {error}")


class Builder:
  """Object files of the modules `submit`ted to it (lowered to the LLVM dialect by `pipeline`, then compiled by LLVM), built on
  `threads` worker threads while the caller goes on, into a scratch folder of its own."""

  def __init__(self, pipeline: str, threads: int):
    self.folder, self.pipeline = tempfile.mkdtemp(prefix="pytc-objects-"), pipeline
    self.paths: list[str] = []
    self.errors: list[str] = []
    self.abandoned, self.running, self.lock = False, threads, threading.Lock()
    self.work: queue.SimpleQueue = queue.SimpleQueue()
    # not daemons: an interpreter that exits waits for LLVM to finish what it compiles (it aborts when torn down under it)
    self.workers = [threading.Thread(target=self._compile_submitted) for _ in range(threads)]
    for worker in self.workers: worker.start()

  def submit(self, module: ir.Module) -> None:
    """Queue `module` (its bytecode: a worker parses it into a context of its own) for its object file."""
    stream = io.BytesIO()
    module.operation.write_bytecode(stream)
    self.paths.append(path := os.path.join(self.folder, f"kernels{len(self.paths)}.o"))
    self.work.put((stream.getvalue(), path))

  def finish(self) -> list[str]:
    """The object files of every module submitted, in order, once all are built (ObjectCodeError if one failed); `close`
    removes them."""
    for _ in self.workers: self.work.put(None)
    for worker in self.workers: worker.join()
    if self.errors: raise ObjectCodeError(self.errors[0])
    return self.paths

  def abandon(self) -> None:
    """Build nothing more: the workers finish what they compile now, and the last one removes the folder."""
    with self.lock: self.abandoned = True
    for _ in self.workers: self.work.put(None)

  def close(self) -> None: shutil.rmtree(self.folder, ignore_errors=True)

  def _compile_submitted(self) -> None:
    while (item := self.work.get()) is not None:
      if not self.abandoned: _collecting(self.errors, _compile_bytecode, item[0], self.pipeline, item[1], "")
    with self.lock:
      self.running -= 1
      if self.abandoned and not self.running: self.close()
