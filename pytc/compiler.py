"""The compile driver: a `uop` graph module through pytc's scheduling passes to a schedule (its kernel launches in
order), and the schedule's kernels through a device's compiler to a program loaded on that device."""
from __future__ import annotations

import functools
import math
import threading
import time
from dataclasses import dataclass, field

from mlir import ir

from pytc.dialects import uop
from pytc.dtype import dtypes
from pytc.estimate import kernel_ops
from pytc.helpers import DEBUG
from pytc.passes.common.analysis import read_where_written
from pytc.passes.common.attributes import BUFFER_DEVICE, IN_PLACE, WRITES
from pytc.passes.common.devices import argument_devices
from pytc.pipelines import CompileError, Stage, copy_module, verify
from pytc.runtime.device import Binary, Compiled, Program
from pytc.search import tune

DTYPE_OF_MLIR = {dt.mlir: dt for dt in dtypes.all}  # an element type as MLIR spells it (a temporary's) -> its dtype
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
  """One step of a schedule: a kernel launch, or a transfer between devices when `kernel` is None. Each argument is
  ("input" | "output" | "temp", position), the first `writes` the buffers it writes; `device` is where those are (and so
  where a kernel runs), None for the graph's own device."""
  kernel: str | None
  args: tuple[tuple[str, int], ...]
  device: str | None = None
  writes: int = 1


@dataclass(frozen=True)
class Temporary:
  shape: tuple[int, ...]
  element: str  # the MLIR element type
  device: str | None = None  # None: the graph's own device


@dataclass(frozen=True)
class Executable:
  """A schedule's kernels compiled for a device's target and loaded on it: `program.kernels` by name. `kernel_ir` is the IR
  the binary was built from; `from_disk`: the binary came from the disk cache."""
  program: Program
  binary: Binary
  kernel_ir: str
  compile_seconds: float
  from_disk: bool = False


@dataclass
class Schedule:
  """A scheduled graph: its launches in order, the temporary buffers they need, which output buffer each output of the
  graph is (outputs computing the same value share one), its kernels, compiled on first use for each device, and the
  (output slot, input) pairs whose output is computed into that input's buffer (see in_place_outputs). What running it
  keeps between runs is realize's (pytc.realize.Kept), not part of it."""
  launches: tuple[Launch, ...]
  temporaries: tuple[Temporary, ...]
  outputs: tuple[int, ...]
  kernels: ir.Module
  schedule_seconds: float
  in_place: frozenset[tuple[int, int]]
  executables: dict[str, Executable] = field(default_factory=dict)  # by device name

  @functools.cached_property
  def temporary_bytes(self) -> int: return sum(math.prod(t.shape) * DTYPE_OF_MLIR[t.element].itemsize for t in self.temporaries)

  @functools.cached_property
  def kernel_ops(self) -> dict[str, int]: return kernel_ops(self.kernels)





def extract_schedule(graph: ir.Operation, inputs: int) -> tuple[tuple[Launch, ...], tuple[Temporary, ...], tuple[int, ...]]:
  """The launches, temporaries and output buffer of each sink operand of a scheduled graph function (arguments: inputs,
  then outputs)."""
  names: dict[ir.Value, tuple[str, int]] = {}
  arguments = graph.regions[0].blocks[0].arguments
  devices = dict(zip(arguments, argument_devices(graph.opview)))
  for i, arg in enumerate(arguments): names[arg] = ("input", i) if i < inputs else ("output", i - inputs)
  launches, temporaries, outputs = [], [], ()
  for op in graph.regions[0].blocks[0].operations:
    if isinstance(op, uop.BufferOp):
      memref = ir.MemRefType(op.results[0].type)
      names[op.results[0]], devices[op.results[0]] = ("temp", len(temporaries)), BUFFER_DEVICE.get(op)
      temporaries.append(Temporary(tuple(memref.shape), str(memref.element_type), devices[op.results[0]]))
    elif isinstance(op, uop.LaunchOp | uop.TransferOp):
      kernel = op.kernel.value if isinstance(op, uop.LaunchOp) else None
      launches.append(Launch(kernel, tuple(names[v] for v in op.operands), devices[op.operands[0]], WRITES.get(op, 1)))
    elif isinstance(op, uop.SinkOp): outputs = tuple(names[v][1] for v in op.operands)
  return tuple(launches), tuple(temporaries), outputs


def schedule_graph(module: ir.Module, name: str, inputs: int, stage: Stage, into: tuple[tuple[int, int], ...] = ()) -> Schedule:
  """Run `stage` (a compiler's schedule_stage: the scheduling passes with its target's facts) on the graph function `name`
  (whose first `inputs` arguments are inputs). `into`: (output, input) pairs, each asking for the graph's output to be
  computed into that input's buffer (an assign's value into its target)."""
  start = time.perf_counter()
  verify(module)
  stage.run(module, name)
  graph = next(op for op in module.body.operations if op.attributes["sym_name"].value == name)
  launches, temporaries, outputs = extract_schedule(graph, inputs)
  graph.operation.erase()
  in_place = in_place_outputs(launches, module, [(outputs[output], source) for output, source in into])
  return Schedule(launches, temporaries, outputs, module, time.perf_counter() - start, in_place)


def in_place_outputs(launches: tuple[Launch, ...], kernels: ir.Module, wanted: list[tuple[int, int]]) -> frozenset[tuple[int, int]]:
  """The (output slot, input) pairs of `wanted` whose output may be computed into the input's buffer: no launch after the
  one writing the output reads the input, and that kernel reads it, if at all, only at the element it writes (it is then
  marked IN_PLACE, so its lowering writes each element once and gives up exclusive access to those buffers)."""
  writers: dict[int, list[int]] = {}
  for n, launch in enumerate(launches):
    for role, slot in launch.args[:launch.writes]:
      if role == "output": writers.setdefault(slot, []).append(n)
  functions = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in kernels.body.operations if "sym_name" in op.attributes}
  allowed = set()
  for slot, source in wanted:
    if len(writing := writers.get(slot, [])) != 1 or any(("input", source) in launch.args for launch in launches[writing[0] + 1:]): continue
    writer = launches[writing[0]]
    if positions := {k for k, arg in enumerate(writer.args) if arg == ("input", source)}:
      if writer.kernel is None or not positions <= read_where_written(function := functions[writer.kernel]): continue
      IN_PLACE.set(function)
    allowed.add((slot, source))
  return frozenset(allowed)


def compile_kernels(schedule: Schedule, device: Compiled, name: str = "graph", kernels: frozenset[str] | None = None) -> Executable:
  """The schedule's kernels (those named in `kernels` when given: the ones launched on this device) compiled by the device's
  compiler and loaded on it, once per schedule and device, whichever threads ask; devices of one target share the binary."""
  if (executable := schedule.executables.get(device.name)) is not None: return executable
  with COMPILE_LOCK:
    if (executable := schedule.executables.get(device.name)) is None:
      executable = schedule.executables[device.name] = _compile(schedule, device, name, kernels)
  return executable


def _compile(schedule: Schedule, device: Compiled, name: str, kernels: frozenset[str] | None) -> Executable:
  start = time.perf_counter()
  target = device.target.cache_key()
  for built in schedule.executables.values():
    if built.binary.target == target and (kernels is None or kernels <= {k.name for k in built.binary.kernels}):
      return Executable(device.program(built.binary), built.binary, built.kernel_ir, time.perf_counter() - start, built.from_disk)
  binary, kernel_ir, from_disk = _build(schedule, device, name, kernels, cached=True)
  try: program = device.program(binary)
  except (OSError, ValueError) as error:  # a cached binary that does not load (say, written for another library version)
    if not from_disk: raise CompileError(f"{device.name} cannot load the kernels it compiled: {error}") from error
    if DEBUG >= 1: print(f"kernel cache: rebuilding kernels that did not load: {error}")
    binary, kernel_ir, from_disk = _build(schedule, device, name, kernels, cached=False)
    program = device.program(binary)
  if DEBUG >= 4: print(kernel_ir)
  return Executable(program, binary, kernel_ir, time.perf_counter() - start, from_disk)


def _build(schedule: Schedule, device: Compiled, name: str, kernels: frozenset[str] | None, cached: bool) -> tuple[Binary, str, bool]:
  try:
    module = copy_module(schedule.kernels, kernels)
    if device.compiler.searchable: tune(module, device)
    return device.compiler.compile(module, name, cached)
  except (OSError, RuntimeError) as error:
    if isinstance(error, CompileError): raise
    raise CompileError(f"{device.name}: {error}") from error
