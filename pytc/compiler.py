"""The compile driver: a `uop` graph module through pytc's scheduling passes to a list of kernel
launches, and the kernels through the CPU target into one JIT module."""
from __future__ import annotations

import _ctypes
import ctypes
import os
import threading
import time
import weakref
from dataclasses import dataclass

from mlir import ir
from mlir.execution_engine import ExecutionEngine

from pytc import kernel_cache
from pytc.dialects import uop
from pytc.helpers import DEBUG, cpu_features, getenv
from pytc.passes import pass_manager

SCHEDULE_PIPELINE = ("builtin.module(canonicalize, pytc-split-reduce, pytc-rangeify, canonicalize, cse, pytc-fuse, canonicalize, cse, "
                     "pytc-bufferize, pytc-split-kernels, pytc-schedule, canonicalize, cse)")


def vector_lanes() -> int:
  """32-bit lanes of the vectors pytc-vectorize builds: 16 where the host has AVX-512, else 8 (two registers where
  they are narrower)."""
  return 16 if "avx512f" in cpu_features() else 8


LANES = vector_lanes()
# 16 lanes (AVX-512) come with 32 vector registers: room for 8 rows x 2 vectors of accumulators; 8 lanes with 16: 4 rows
KERNEL_PIPELINE = (f"builtin.module(pytc-order-loops, pytc-vectorize{{lanes={LANES} rows={8 if LANES == 16 else 4}}}, "
                   "pytc-lower-kernels, canonicalize{top-down=false})")
CPU_PIPELINE = ("builtin.module(convert-scf-to-cf, convert-vector-to-llvm, convert-math-to-llvm, expand-strided-metadata, "
                "finalize-memref-to-llvm, convert-arith-to-llvm, convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}, "
                "convert-cf-to-llvm, reconcile-unrealized-casts)")

_context: ir.Context | None = None
# Held while pytc builds, schedules or compiles IR: all of it lives in one context, and a schedule's kernels compile once.
COMPILE_LOCK = threading.RLock()


def context() -> ir.Context:
  """The MLIR context pytc builds its graphs in (uop loaded)."""
  global _context
  with COMPILE_LOCK:
    if _context is None: _context = uop.context()
  return _context


@dataclass(frozen=True)
class Launch:
  """One kernel launch of a schedule; each argument is ("input" | "output" | "temp", position)."""
  kernel: str
  args: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Temporary:
  shape: tuple[int, ...]
  element: str  # the MLIR element type


@dataclass(frozen=True)
class Program:
  """The kernels of a schedule compiled into one module: `entries` maps kernel names to their packed entry points.
  `code` keeps that code alive: the ExecutionEngine that JIT-compiled it, or the library loaded from the disk cache."""
  entries: dict[str, int]
  extents: dict[str, int]  # the full size of each kernel's outermost parallel range (its last two arguments slice it)
  kernel_ir: str
  compile_seconds: float
  code: object
  from_disk: bool = False


@dataclass
class Schedule:
  """A scheduled graph: its launches in order, the temporary buffers they need, which output buffer each output of the
  graph is (outputs computing the same value share one), and its kernels (compiled on first use)."""
  launches: tuple[Launch, ...]
  temporaries: tuple[Temporary, ...]
  outputs: tuple[int, ...]
  kernels: ir.Module
  schedule_seconds: float
  program: Program | None = None




class InvalidGraphError(ValueError):
  """A graph the uop verifier rejects: an op given shapes, dtypes or axes it does not take."""


class CompileError(RuntimeError):
  """The passes could not schedule or compile a graph; the message is MLIR's first error."""


def first_error(error: ir.MLIRError) -> str:
  return error.error_diagnostics[0].message if error.error_diagnostics else str(error).splitlines()[0]


def verify(module: ir.Module) -> None:
  """Raise InvalidGraphError unless `module` verifies: passes, upstream ones above all, assume valid input."""
  try: module.operation.verify()
  except ir.MLIRError as error: raise InvalidGraphError(f"invalid graph: {first_error(error)}") from None


def run_pipeline(module: ir.Module, pipeline: str, dump_name: str = "") -> None:
  """Run `pipeline` on `module` (verified after every pass); with PYTC_DUMP=dir the IR after every pass goes under dir/dump_name."""
  pm = pass_manager(pipeline, module.context)
  pm.enable_verifier(True)
  if dump := getenv("PYTC_DUMP", ""):
    os.makedirs(directory := os.path.join(dump, dump_name), exist_ok=True)
    pm.enable_ir_printing(print_after_all=True, tree_printing_dir_path=directory)
  try: pm.run(module.operation)
  except ir.MLIRError as error: raise CompileError(first_error(error)) from None


def extract_schedule(graph: ir.Operation, inputs: int) -> tuple[tuple[Launch, ...], tuple[Temporary, ...], tuple[int, ...]]:
  """The launches, temporaries and output buffer of each sink operand of a scheduled graph function (arguments: inputs,
  then outputs)."""
  names: dict[ir.Value, tuple[str, int]] = {}
  for i, arg in enumerate(graph.regions[0].blocks[0].arguments): names[arg] = ("input", i) if i < inputs else ("output", i - inputs)
  launches, temporaries, outputs = [], [], ()
  for op in graph.regions[0].blocks[0].operations:
    if op.operation.name == "uop.buffer":
      memref = ir.MemRefType(op.results[0].type)
      names[op.results[0]] = ("temp", len(temporaries))
      temporaries.append(Temporary(tuple(memref.shape), str(memref.element_type)))
    elif op.operation.name == "uop.launch":
      launches.append(Launch(ir.FlatSymbolRefAttr(op.attributes["kernel"]).value, tuple(names[v] for v in op.operands)))
    elif op.operation.name == "uop.sink": outputs = tuple(names[v][1] for v in op.operands)
  return tuple(launches), tuple(temporaries), outputs


def schedule_graph(module: ir.Module, name: str, inputs: int) -> Schedule:
  """Run the scheduling passes on the graph function `name` (whose first `inputs` arguments are inputs)."""
  start = time.perf_counter()
  verify(module)
  run_pipeline(module, SCHEDULE_PIPELINE, f"{name}/1-schedule")
  graph = next(op for op in module.body.operations if op.attributes["sym_name"].value == name)
  launches, temporaries, outputs = extract_schedule(graph, inputs)
  graph.operation.erase()
  return Schedule(launches, temporaries, outputs, module, time.perf_counter() - start)


def unloading(program: Program, library: ctypes.CDLL) -> Program:
  """`program`, set to unmap its `library` (dlclose) once it is garbage collected. Nothing else points into the library: its
  kernels run only through a live Program (a realize holds it until its launches finished, a TinyJit capture while it can
  replay), and it exports no symbol another library binds to (ctypes loads it RTLD_LOCAL). At exit it stays mapped: the
  device's threads may still be in its code."""
  if (dlclose := getattr(_ctypes, "dlclose", None)) is not None: weakref.finalize(program, dlclose, library._handle).atexit = False
  return program


def compile_kernels(schedule: Schedule, name: str = "graph") -> Program:
  """Lower the schedule's kernels and JIT them into one module for the CPU (once per schedule, whichever threads ask)."""
  if schedule.program is not None: return schedule.program
  with COMPILE_LOCK:
    if schedule.program is None: schedule.program = _compile(schedule, name)
  return schedule.program


def _compile(schedule: Schedule, name: str) -> Program:
  start = time.perf_counter()
  run_pipeline(schedule.kernels, KERNEL_PIPELINE, f"{name}/2-kernels")
  kernel_ir = str(schedule.kernels)
  if DEBUG >= 4: print(kernel_ir)
  kernels = sorted({launch.kernel for launch in schedule.launches})
  extents = {str(ir.StringAttr(op.attributes["sym_name"]).value): ir.IntegerAttr(op.attributes["pytc.extent"]).value
             for op in schedule.kernels.body.operations if "pytc.extent" in op.attributes}
  key = kernel_cache.cache_key(kernel_ir, CPU_PIPELINE)
  if kernels and (cached := kernel_cache.load(key, kernels)) is not None:
    return unloading(Program(cached[1], extents, kernel_ir, time.perf_counter() - start, cached[0], from_disk=True), cached[0])
  run_pipeline(schedule.kernels, CPU_PIPELINE, f"{name}/3-cpu")
  engine = ExecutionEngine(schedule.kernels, opt_level=3, enable_pic=True) if kernels else None
  entries = {kernel: engine.raw_lookup(kernel) for kernel in kernels}
  if missing := [kernel for kernel, address in entries.items() if not address]:
    raise RuntimeError(f"the CPU JIT could not build kernel(s) {', '.join(missing)} (see the JIT error above)")
  if engine is not None: kernel_cache.store(key, engine)
  return Program(entries, extents, kernel_ir, time.perf_counter() - start, engine)
