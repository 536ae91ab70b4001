"""Realize lazy graphs: build the uop graph, schedule and compile it, and run its kernels and transfers as a command graph
(runtime/graph.py): command buffers for each queue of each device, ordered by the buffers the steps share."""
from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from mlir import ir

from pytc import flags
from pytc.compiler import COMPILE_LOCK, DTYPE_OF_MLIR, Launch, Schedule, compile_kernels, context, schedule_graph
from pytc.device import Buffer, Device
from pytc.graph import LazyOp, is_view, structure_of, to_mlir
from pytc.helpers import DEBUG, GlobalCounters, LRUCache
from pytc.pipelines import Stage
from pytc.runtime.graph import CommandGraph, Step


@dataclass(eq=False)
class Kept:
  """A schedule and what realize keeps with it between runs: the command graph it last ran through, to run again (see
  command_graph), and a finished run's small temporaries, for the next (see temporaries)."""
  schedule: Schedule
  command_graph: CommandGraph | None = None
  spare_temporaries: list = field(default_factory=list)


# The schedules built, by graph structure and schedule stage: the PYTC_SCHEDULE_CACHE (default 256) used last. A schedule
# holds its kernel IR and, per device, its loaded library (tens of KB for a small graph); a TinyJit capture holds its own
# programs.
_schedules: LRUCache[tuple, Kept] = LRUCache(flags.SCHEDULE_CACHE)
# A schedule keeps the temporaries of its last run for the next when they hold this many bytes at most: allocating and
# freeing one costs about a microsecond, which small graphs notice; larger ones would hold memory between calls.
SPARE_BYTES = 1 << 20


class JitError(RuntimeError):
  """A jitted function was called in a way its capture cannot replay."""


class Captures(threading.local):
  """The TinyJit captures in progress on this thread and what they record; a capture sees only its own thread's work. Each
  list in `launches` gets ([(Step, its Buffers)], the Programs holding the steps' kernels) from every realize, each in `draws`
  the (words buffer, device, word count) of every random draw."""
  def __init__(self) -> None:
    self.jits: list = []
    self.launches: list[list] = []
    self.draws: list[list] = []


CAPTURES = Captures()


def schedule(outputs: list[LazyOp], destinations: dict[int, Buffer] | None = None,
             stage: Stage | None = None) -> tuple[Schedule, tuple[LazyOp, ...], list[LazyOp]]:
  """The schedule computing the unrealized `outputs`, its input buffer nodes and the nodes it computes, by `stage` (default:
  the schedule stage of their device's compiler). A graph with the structure of one scheduled before by the same stage
  (same ops, shapes, dtypes and wiring, any buffers) reuses that schedule without running the passes. `destinations` (by
  node id) that are input buffers ask for those outputs to be computed into them (an assign's value into its target),
  which is part of the schedule's key."""
  kept, inputs, pending = scheduled_and_kept(outputs, destinations, stage)
  return kept.schedule, inputs, pending


def scheduled_and_kept(outputs: list[LazyOp], destinations: dict[int, Buffer] | None,
                       stage: Stage | None = None) -> tuple[Kept, tuple[LazyOp, ...], list[LazyOp]]:
  """As schedule, the schedule with what realize keeps with it."""
  pending = list({id(n): n for n in outputs if not n.is_realized}.values())
  inputs, structure = structure_of(pending)
  into = into_inputs(pending, inputs, destinations) if destinations else ()
  stage = stage or Device[pending[0].device if pending else Device.DEFAULT].compiler.schedule_stage
  key = (structure, into, stage.pipeline)
  if (cached := _schedules.get(key)) is None:
    with COMPILE_LOCK:
      if (cached := _schedules.get(key)) is None:  # another thread may have built it meanwhile
        GlobalCounters.schedules_built += 1
        with context(), ir.Location.unknown():
          cached = _schedules[key] = Kept(schedule_graph(to_mlir(pending, inputs, "graph"), "graph", len(inputs), stage, into))
        if DEBUG >= 3: print_steps(cached.schedule, pending[0].device)
  return cached, inputs, pending


def input_of_buffers(inputs: tuple[LazyOp, ...]) -> dict[int, int | None]:
  """Each input buffer (by id) -> the input reading it, None where several do."""
  read_as: dict[int, int | None] = {}
  for i, n in enumerate(inputs): read_as[id(n.arg)] = None if id(n.arg) in read_as else i
  return read_as


def into_inputs(pending: list[LazyOp], inputs: tuple[LazyOp, ...], destinations: dict[int, Buffer]) -> tuple[tuple[int, int], ...]:
  """(output, input) pairs: the outputs whose destination is the buffer of exactly one input."""
  read_as = input_of_buffers(inputs)
  return tuple((k, source) for k, n in enumerate(pending)
               if (wanted := destinations.get(id(n))) is not None and (source := read_as.get(id(wanted))) is not None)


def print_steps(scheduled: Schedule, home: str) -> None:
  """The schedule's steps in order, each with the device where it writes: kernels, and transfers between devices; what they
  write and read ("output 0", "temp 1", ...)."""
  for number, launch in enumerate(scheduled.launches):
    written, read = ([f"{role} {i}" for role, i in args] for args in (launch.args[:launch.writes], launch.args[launch.writes:]))
    what = "transfer" if launch.kernel is None else launch.kernel
    print(f"step {number:3d}: {what:<20} on {launch.device or home}: writes {', '.join(written)}, reads {', '.join(read) or 'nothing'}")


def realize(outputs: list[LazyOp], destinations: dict[int, Buffer] | None = None) -> list[LazyOp]:
  """Compute every unrealized node of `outputs`; returns buffer nodes in the same order. `destinations` asks for the buffer a node
  is computed into (by id), taken when the schedule reads nothing from it. Outputs on several devices are realized a device at a time."""
  by_device: dict[str, list[LazyOp]] = {}
  for n in outputs:
    if n.op == "assign": return realize_assigns(outputs)
    if not n.is_realized: by_device.setdefault(n.device, []).append(n)
  if not by_device: return outputs
  if len(by_device) > 1:
    done = {id(n): r for group in by_device.values() for n, r in zip(group, realize(group, destinations))}
    return [done.get(id(n), n) for n in outputs]
  start = time.perf_counter() if DEBUG >= 1 else 0.0
  kept, inputs, pending = scheduled_and_kept(outputs, destinations)
  scheduled, home = kept.schedule, pending[0].device
  buffers = {"input": [n.arg for n in inputs], "output": output_buffers(pending, scheduled, inputs, destinations or {}),
             "temp": temporaries(kept, home)}
  raw = [[buffers[role][i].raw for role, i in launch.args] for launch in scheduled.launches]
  if CAPTURES.launches or (graph := run_kept(kept, raw)) is None: graph, compile_seconds = first_run(kept, buffers, home)
  else: compile_seconds = 0.0
  if not CAPTURES.launches and not kept.spare_temporaries and scheduled.temporary_bytes <= SPARE_BYTES:
    kept.spare_temporaries.append(buffers["temp"])  # a capture's replays write them: not shared with later runs
  kernels, moved = len(graph.kernel_args), len(graph.steps) - len(graph.kernel_args)
  GlobalCounters.add(graph.counts)
  if DEBUG >= 1:
    what = f"{kernels} kernels" + (f", {moved} transfers" if moved else "")
    print(f"realize: {what} in {(time.perf_counter() - start) * 1e3:.2f} ms "
          f"(when first seen: schedule {scheduled.schedule_seconds * 1e3:.2f} ms, compile {compile_seconds * 1e3:.2f} ms)")
  done = {id(n): LazyOp("buffer", n.dtype, n.symbolic or n.shape, n.device, arg=buffers["output"][slot])
          for n, slot in zip(pending, scheduled.outputs)}
  return [done.get(id(n), n) for n in outputs]


def temporaries(kept: Kept, home: str) -> list[Buffer]:
  """The schedule's temporary buffers: those a finished run left (SPARE_BYTES at most in all, their contents dead), or new."""
  try: return kept.spare_temporaries.pop()  # atomic: two threads never take the same ones
  except IndexError: return [Buffer(t.device or home, DTYPE_OF_MLIR[t.element], t.shape) for t in kept.schedule.temporaries]


def first_run(kept: Kept, buffers: dict[str, list[Buffer]], home: str) -> tuple[CommandGraph, float]:
  """Run a schedule over `buffers` the whole way: its kernels compiled (or found) per device, its steps shown to the TinyJit
  captures in progress, a command graph built (and kept, when it can run again: see command_graph); with the compile seconds."""
  scheduled = kept.schedule
  compile_seconds, programs, kernels = 0.0, {}, kernels_by_device(scheduled.launches, home)
  for device_name, names in kernels.items():
    executable = compile_kernels(scheduled, Device[device_name], kernels=names if len(kernels) > 1 else None)
    compile_seconds += executable.compile_seconds
    programs[device_name] = executable.program
  devices = {name: Device[name] for name in {home, *(launch.device for launch in scheduled.launches if launch.device)}}
  steps = [(step_of(launch, launch_buffers, home, devices, programs, scheduled.kernel_ops), launch_buffers)
           for launch in scheduled.launches for launch_buffers in ([buffers[role][i] for role, i in launch.args],)]
  for recorder in CAPTURES.launches: recorder.append((steps, list(programs.values())))
  return command_graph(kept, [step for step, _ in steps]), compile_seconds


def command_graph(kept: Kept, steps: list[Step]) -> CommandGraph:
  """Run the steps: through the command graph built when the schedule last ran (its programs, compiled once per schedule
  and device, are the same), its kernel arguments re-pointed at these buffers, when it has only kernels on one device and
  is not running elsewhere; else through a new one, kept with the schedule for the next run (which realize then runs
  directly, without steps). Building a graph costs ~5 us a kernel (the launches' arguments, the order between queues, the
  command buffers); re-pointing the arguments a fraction of that."""
  if (graph := run_kept(kept, [step.buffers for step in steps])) is not None: return graph
  graph = CommandGraph(steps)
  graph.run()
  if all(step.kernel is not None for step in steps) and len({id(step.device) for step in steps}) == 1:
    graph.release_buffers()
    kept.command_graph = graph
  return graph


def run_kept(kept: Kept, buffers: list) -> CommandGraph | None:
  """The schedule's kept command graph run over `buffers` (per kernel, the raw buffers of its arguments); None when it has
  none, or its graph is running in another thread."""
  if (graph := kept.command_graph) is None or graph.lock.locked(): return None
  graph.run_over(buffers)
  return graph


def step_of(launch: Launch, buffers: list[Buffer], home: str, devices: dict, programs: dict, kernel_ops: dict[str, int]) -> Step:
  """A schedule's launch as a command graph step: a kernel of the program loaded on its device (with its operation count),
  or a transfer."""
  device = launch.device or home
  if launch.kernel is None: return Step(devices[device], None, (buffers[0].raw, buffers[1].raw), Device[buffers[1].device])
  return Step(devices[device], programs[device].kernels[launch.kernel], tuple(b.raw for b in buffers), ops=kernel_ops[launch.kernel],
              writes=launch.writes)


def kernels_by_device(launches: tuple[Launch, ...], home: str) -> dict[str, frozenset[str]]:
  found: dict[str, set[str]] = {}
  for launch in launches:
    if launch.kernel is not None: found.setdefault(launch.device or home, set()).add(launch.kernel)
  return {device: frozenset(names) for device, names in found.items()}


def output_buffers(pending: list[LazyOp], scheduled: Schedule, inputs: tuple[LazyOp, ...], destinations: dict[int, Buffer]) -> list[Buffer]:
  """A buffer for each output slot of a schedule: the destination asked for the one node computed there, unless another
  output takes it or it is an input's buffer the schedule does not compute that output into (see in_place_outputs), else
  a new one."""
  if not destinations and len(pending) == 1: return [Buffer(pending[0].device, pending[0].dtype, pending[0].shape)]
  at_slot: dict[int, list[LazyOp]] = {}
  for node, slot in zip(pending, scheduled.outputs): at_slot.setdefault(slot, []).append(node)
  read_as = input_of_buffers(inputs)
  taken, result = set(), []
  for slot in range(len(at_slot)):
    first = at_slot[slot][0]
    wanted = destinations.get(id(first)) if len(at_slot[slot]) == 1 else None
    if wanted is not None and id(wanted) not in taken and (id(wanted) not in read_as or (slot, read_as[id(wanted)]) in scheduled.in_place):
      taken.add(id(wanted))
      result.append(wanted)
    else: result.append(Buffer(first.device, first.dtype, first.shape))
  return result


def stored_value(assign: LazyOp) -> LazyOp:
  """What an assign computes: its value, copied when that is a buffer or a view of one (a kernel must write the target)."""
  value = assign.srcs[1]
  return LazyOp("contiguous", value.dtype, value.shape, value.device, (value,)) if is_view(value) else value


def realize_assigns(outputs: list[LazyOp]) -> list[LazyOp]:
  """Realize `outputs` where some are `assign` nodes (target buffer, value): each value lands in its target's buffer, computed
  there directly when no kernel would then read it changed (see in_place_outputs: the kernel writing it reads it only at the
  element it writes, and none after reads it), else computed aside and copied in after all the schedule's kernels ran, so
  every kernel reads the values from before. An assign comes back as its target's buffer node."""
  for target in (n.srcs[0] for n in outputs if n.op == "assign"):
    if target.arg.address % (alignment := Device[target.device].target.buffer_alignment):
      raise ValueError(f"cannot assign into the buffer at {target.arg.address:#x}: {target.device} kernels write only buffers aligned to "
                       f"{alignment} bytes (memory given to from_blob may not be)")
  values = [stored_value(n) if n.op == "assign" else n for n in outputs]
  uses = Counter(id(v) for v in values)
  assigns = [(n.srcs[0], v) for n, v in zip(outputs, values) if n.op == "assign"]
  done = realize(values, {id(v): target.arg for target, v in assigns if uses[id(v)] == 1})
  computed = [node for n, node in zip(outputs, done) if n.op == "assign"]
  copy_into_targets([(target, node) for (target, _), node in zip(assigns, computed) if node.arg is not target.arg])
  return [n.srcs[0] if n.op == "assign" else node for n, node in zip(outputs, done)]


def copy_into_targets(copies: list[tuple[LazyOp, LazyOp]]) -> None:
  """Copy each computed buffer into its target's, after everything that computed them ran: on the host, when both are in host
  memory and no TinyJit capture is recording (a replay must run the copies too), else by kernels."""
  if not copies: return
  if not CAPTURES.launches and all(Device[target.device].allocator.host_memory for target, _ in copies):
    for target, node in copies: Device[target.device].allocator.copyin(target.arg.raw, node.arg.raw.as_memoryview())
    return
  kernels = [(target, LazyOp("contiguous", node.dtype, node.shape, node.device, (node,))) for target, node in copies]
  realize([copy for _, copy in kernels], {id(copy): target.arg for target, copy in kernels})
