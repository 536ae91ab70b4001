"""Command graphs: a list of steps (kernel launches, copies between buffers) turned into command buffers for every queue
they use, ordered by the buffers each step reads and writes, so independent work on different queues (a GPU's compute
and copy queues, two devices) runs at the same time.

Where a step runs: a kernel on its device's compute queue. A copy on the destination's copy queue when it has one and
can reach the source (a GPU of the same driver: its memory mapped for this one), as a COPY packet on the destination's
queue when both buffers are host memory; between host memory and a device that cannot read it, through the device's
host-visible staging memory (filled by the host, or emptied by the other device's queue); else by the host, through host
bytes.

A step waits for the last writer of each buffer it reads, and for the readers and the writer of the buffer it writes:
- on its own queue by order alone;
- on another queue of its device, or on any queue when its queue runs on the host (it polls any signal), by a WAIT
  packet on that queue's progress signal (each queue signals after the steps others wait for);
- otherwise the host waits for that signal before it submits what follows (everything built so far is submitted first).
A command buffer is submitted only after the ones holding what it waits for. Work given to a device before the graph
runs is ordered by the device's timeline, and a device whose buffers are copied to another is synchronized before the
graph starts. At the end each device's compute queue waits for its other queues and signals the device's timeline;
`run()` returns once every device reached it. A graph that is one buffer of one device, waiting on nothing, runs at once
on the calling thread instead when the device offers that (`immediate`: the CPU, while its queue is idle). A graph runs
again as built (TinyJit): kernel arguments re-pointed at other buffers are what the next run reads, and its progress
signals start from zero on every run.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pytc.helpers import DEBUG, GlobalCounters
from pytc.runtime.hcq import SUBMIT_LOCK, Signal

COMPUTE, COPY = "compute", "copy"
# a graph whose steps' buffers add up to no more than this runs for microseconds: run at once, it keeps the GIL (letting
# go of it and taking it back would cost a good part of such a run)
BRIEF_BYTES = 1 << 18
Place = tuple[Any, str] | None  # (device, queue), None for the host


@dataclass(frozen=True)
class Step:
  """`kernel` (a loaded Kernel) over `buffers` on `device`; or, without a kernel, a copy of buffers[1] (memory of
  `source`) into buffers[0] (of `device`). Buffers are raw device buffers (`address`, `nbytes`); the first `writes` are
  the ones written. `ops`: the arithmetic a kernel does (pytc.estimate)."""

  device: Any
  kernel: Any | None
  buffers: tuple[Any, ...]
  source: Any | None = None
  ops: int = 0
  writes: int = 1


@dataclass(slots=True)
class Node:
  """One thing to do at one place: encode into its queue (`encode(queue)`) or, on the host, run (`encode(None)`)."""

  place: Place
  encode: Callable[[Any], None]
  writes: tuple[int, ...]
  reads: tuple[int, ...]
  step: int
  what: str
  waits: list[tuple[int, bool]] = field(default_factory=list)  # (node index, by the host)
  signals: bool = False


def moved_bytes(step: Step) -> int:
  """The bytes a step reads and writes: each buffer of a kernel once, or what a copy copies."""
  if step.kernel is None:
    return min(step.buffers[0].nbytes, step.buffers[1].nbytes)
  return sum({id(buffer): buffer.nbytes for buffer in step.buffers}.values())


def how_copied(step: Step) -> str:
  """How a copy runs (DEBUG=2 says it): "peer to peer", "host memory", "through staging" or "through the host"."""
  device, source = step.device, step.source
  if device.copy_queue() is not None and device.allocator.reaches(source, step.buffers[1]):
    return "peer to peer"
  if device.allocator.host_memory and source.allocator.host_memory:
    return "host memory"
  if (device.copy_queue() is not None and source.allocator.host_memory) or (
    source.copy_queue() is not None and device.allocator.host_memory
  ):
    return "through staging"
  return "through the host"


class CommandGraph:
  """The command buffers of `steps` (see the module's doc), built once; `run()` submits them and waits for every
  device."""

  def __init__(self, steps: list[Step]):
    self.steps, self.lock, self.stamped = steps, threading.Lock(), set()
    self.timed = DEBUG >= 2  # timestamps around each device's work and each kernel (else the buffers hold none)
    self.kernel_args: list[Any] = []  # per kernel step, in order: its LaunchArgs (TinyJit re-points them)
    self.stamps: list[tuple[int, Signal, Signal]] = []  # DEBUG=2: (step, before, after) around each kernel
    self.nodes = nodes = [node for number, step in enumerate(steps) for node in self._nodes(number, step)]
    self.moved = [moved_bytes(step) for step in steps]
    # what a run adds to GlobalCounters: kernels, their arithmetic, the bytes kernels and copies move
    self.counts = (
      ("kernel_count", len(self.kernel_args)),
      ("global_ops", sum(step.ops for step in steps)),
      ("global_mem", sum(self.moved)),
    )
    self.devices = list(
      (
        {id(n.place[0]): n.place[0] for n in nodes if n.place is not None} | {id(s.device): s.device for s in steps}
      ).values()
    )
    if len({n.place for n in nodes}) > 1:
      _dependencies(nodes)  # on one queue, order is all
    self.signals = {place: place[0].new_signal() for place in {n.place for n in nodes if n.signals}}
    for node in nodes:
      for index, by_host in node.waits:
        self.signals[nodes[index].place].wakes_host |= by_host
    self.began = {id(d): d.new_signal() for d in self.devices} if self.timed else {}
    # devices whose buffers are read elsewhere: what they were given before this graph must be done before it starts
    self.sources = list(
      {id(s.source): s.source for s in steps if s.kernel is None and s.source is not s.device}.values()
    )
    self.actions = self._encode(nodes)
    self.finals = self._finals(nodes)
    # one device's one buffer, waiting on nothing: the device may run it at once (when idle) instead of queueing it
    alone = len(self.finals) == 1 and not (self.actions or self.signals or self.sources)
    brief = sum(buffer.nbytes for step in steps for buffer in step.buffers) <= BRIEF_BYTES
    self.alone = self.finals[0][0].immediate(self.finals[0][1], brief) if alone else None
    if DEBUG >= 3:
      print("command graph:" + "".join(f"\n  {line}" for line in self.plan()))

  # ***** building *****

  def _nodes(self, number: int, step: Step) -> list[Node]:
    """What a step does at each place it touches (a copy through staging: two places)."""
    device, first = step.device, step.buffers[0]
    if (kernel := step.kernel) is not None:
      self.kernel_args.append(args := kernel.args(list(step.buffers)))
      launch = lambda queue: self._launch(queue, number, device, kernel, args)  # noqa: E731
      written, read = step.buffers[: step.writes], step.buffers[step.writes :]
      return [Node((device, COMPUTE), launch, tuple(map(id, written)), tuple(map(id, read)), number, step.kernel.name)]
    source, second = step.source, step.buffers[1]
    nbytes, kind = min(first.nbytes, second.nbytes), how_copied(step)
    if DEBUG >= 2:
      print(f"*** {device.name:<6} copy {nbytes} bytes from {source.name} ({kind})")
    if not nbytes:
      return []
    what = f"copy {nbytes} bytes from {source.name}"
    if kind in ("peer to peer", "host memory"):
      place = (device, COPY if kind == "peer to peer" else COMPUTE)
      return [Node(place, _copy(first.address, second.address, nbytes), (id(first),), (id(second),), number, what)]
    if kind == "through the host":
      return [
        Node(
          None,
          lambda _: _through_host(device, first, source, second),
          (id(first),),
          (id(second),),
          number,
          what + " through host bytes",
        )
      ]
    owner = device if device.copy_queue() is not None else source
    staging = owner.allocator.staging(nbytes)
    weakref.finalize(self, owner.allocator.free_staging, staging)
    if owner is device:  # host memory -> the host fills the staging memory -> the device's copy queue
      return [
        Node(
          None,
          _copy(staging.address, second.address, nbytes),
          (id(staging),),
          (id(second),),
          number,
          f"{what} into staging",
        ),
        Node(
          (device, COPY),
          _copy(first.address, staging.address, nbytes),
          (id(first),),
          (id(staging),),
          number,
          f"{what} from staging",
        ),
      ]
    return [
      Node(
        (source, COPY),
        _copy(staging.address, second.address, nbytes),
        (id(staging),),
        (id(second),),
        number,
        f"{what} into staging",
      ),
      Node(
        (device, COMPUTE),
        _copy(first.address, staging.address, nbytes),
        (id(first),),
        (id(staging),),
        number,
        f"{what} from staging",
      ),
    ]

  def _launch(self, queue: Any, number: int, device: Any, kernel: Any, args: Any) -> None:
    if self.timed:
      self.stamps.append((number, before := device.new_signal(), after := device.new_signal()))
      queue.timestamp(before).exec(kernel, args).timestamp(after)
    else:
      queue.exec(kernel, args)

  def _encode(self, nodes: list[Node]) -> list[tuple[str, Any, Any]]:
    """The host's actions in order: (COMPUTE or COPY, device, command buffer) to submit, ("wait", signal, value),
    ("host", step, None) to run.
    A command buffer is submitted only after everything it waits for was (each queue runs in order, so a WAIT on work
    that another thread's submission could get in front of would deadlock): a node waiting in its queue for a node still
    in another place's unsubmitted buffer submits that buffer first; the host waiting, or running a step, submits them
    all."""
    actions: list[tuple[str, Any, Any]] = []
    self.pending: dict[Place, Any] = {}
    first: dict[Place, int] = {}  # the first node in each unsubmitted buffer

    def flush(*places: Place) -> None:
      for place in places or list(self.pending):
        (device, ring), queue = place, self.pending.pop(place)
        actions.append((ring, device, queue.bytes() if ring == COMPUTE else queue.packets))

    for number, node in enumerate(nodes):
      if any(by_host for _, by_host in node.waits) or node.place is None:
        flush()
      for index, by_host in node.waits:
        if by_host:
          actions.append(("wait", self.signals[nodes[index].place], index + 1))
        elif (place := nodes[index].place) in self.pending and index >= first[place]:
          flush(place)
      if node.place is None:
        actions.append(("host", node.encode, None))
        continue
      if node.place not in self.pending:
        first[node.place] = number
      queue = self._queue(node.place)
      for index, by_host in node.waits:
        if not by_host:
          queue.wait(self.signals[nodes[index].place], index + 1)
      node.encode(queue)
      if node.signals:
        queue.signal(self.signals[node.place], number + 1)
    return actions

  def _queue(self, place: tuple[Any, str]) -> Any:
    if (queue := self.pending.get(place)) is None:
      device, ring = place
      queue = self.pending[place] = device.queue() if ring == COMPUTE else device.copy_queue()
      # the device's first compute buffer: its start
      if id(device) in self.began and ring == COMPUTE and id(device) not in self.stamped:
        self.stamped.add(id(device))
        queue.timestamp(self.began[id(device)])
    return queue

  def _finals(self, nodes: list[Node]) -> list[tuple[Any, bytes, Signal | None, Signal | None, Callable[[], None]]]:
    """Per device, what its last compute command buffer holds before the timeline signal: waits for its other queues'
    last steps, the end timestamp (DEBUG=2); with the signals of when its work began and ended (None unless DEBUG=2),
    and the device's function submitting it with the timeline's next value. The copy queues' pending buffers go to
    `actions` first."""
    last = {n.place: i for i, n in enumerate(nodes) if n.place is not None}
    for (device, ring), queue in list(self.pending.items()):
      if ring != COMPUTE:
        self.actions.append((COPY, device, queue.packets))
    finals = []
    for device in self.devices:
      queue = self.pending.get((device, COMPUTE)) or self._queue((device, COMPUTE))
      for place, index in last.items():
        if place[0] is device and place[1] != COMPUTE:
          queue.wait(self.signals[place], index + 1)
      ended = device.new_signal() if self.timed else None
      if ended is not None:
        queue.timestamp(ended)
      data = queue.bytes()
      finals.append((device, data, self.began.get(id(device)), ended, device.timeline_submitter(data)))
    self.pending.clear()
    return finals

  def plan(self) -> list[str]:
    """Per step and place, where it runs and what it waits for: `AMD:MOCK copy: step 2 copy 64 bytes from CPU from
    staging, after AMD:MOCK compute step 1`; "(host waits)" marks a wait the host does between submissions, the others
    are WAIT packets."""
    return [describe(self.nodes, number) for number in range(len(self.nodes))]

  def command_buffers(self) -> list[tuple[Any, str, Any]]:
    """What a run submits, in order: (device, queue, command buffer: bytes for a compute queue, SDMA packets for a copy
    queue); each device's last one ends with its timeline signal (of value 0 here)."""
    found = [(device, kind, payload) for kind, device, payload in self.actions if kind in (COMPUTE, COPY)]
    return found + [
      (device, COMPUTE, data + device.queue().signal(device.timeline, 0).bytes()) for device, data, *_ in self.finals
    ]

  def release_buffers(self) -> None:
    """Let go of the buffers the graph was built over (a graph kept to run again over others must not keep them alive):
    its steps keep their devices and kernels, its kernel arguments the addresses, until run_over re-points them (a
    kernel step's node holds its kernel and arguments, not its buffers)."""
    self.steps = [replace(step, buffers=(None,) * len(step.buffers)) for step in self.steps]

  # ***** running *****

  def run(self) -> None:
    """Submit everything, each device's timeline signal last, and wait until every device reached it."""
    with self.lock:
      self._submit_and_wait()
    if self.timed:
      self._account()

  def run_over(self, buffers: list[tuple[Any, ...]]) -> None:
    """Run again over other buffers: per kernel step, in order, the raw buffers its arguments point at from now on
    (those of the same schedule run again: the same sizes, the same ones shared)."""
    with self.lock:
      for args, step_buffers in zip(self.kernel_args, buffers, strict=True):
        for position, buffer in enumerate(step_buffers):
          args.set(position, buffer)
      self._submit_and_wait()
    if self.timed:
      self._account()

  def _submit_and_wait(self) -> None:
    if self.alone is not None and self.alone():
      return
    for signal in self.signals.values():
      signal.value = 0
    for device in self.sources:
      device.synchronize()
    for kind, target, argument in self.actions:
      if kind == "wait":
        target.wait(argument)
      elif kind == "host":
        target(None)
      else:  # holding the lock a timeline value is taken and submitted under: a device submitting reads its last value
        with SUBMIT_LOCK:
          (target.submit if kind == COMPUTE else target.submit_copy)(argument)
    for *_, submit in self.finals:
      with SUBMIT_LOCK:
        submit()
    for device in self.devices:
      device.synchronize()

  def _account(self) -> None:
    """DEBUG>=2: add the devices' time to GlobalCounters.time_sum_s, and print each kernel's."""
    for _, _, began, ended, _ in self.finals:
      GlobalCounters.time_sum_s += max(ended.timestamp_ns - began.timestamp_ns, 0) * 1e-9
    for number, before, after in self.stamps:
      step, microseconds = self.steps[number], (after.timestamp_ns - before.timestamp_ns) * 1e-3
      rates = (
        f"{step.ops / microseconds * 1e-3:9.2f} GFLOP/s {self.moved[number] / microseconds * 1e-3:8.2f} GB/s"
        if microseconds > 0
        else ""
      )
      print(
        f"*** {step.device.name:<6} {step.kernel.name:<20} args {len(step.buffers):3d}  tm {microseconds:9.2f}us "
        f"{rates}"
      )


def place_name(place: Place) -> str:
  return "host" if place is None else f"{place[0].name} {place[1]}"


def describe(nodes: list[Node], number: int) -> str:
  node = nodes[number]
  after = ", ".join(
    f"{place_name(nodes[j].place)} step {nodes[j].step}" + (" (host waits)" if by_host else "")
    for j, by_host in node.waits
  )
  return f"{place_name(node.place)}: step {node.step} {node.what}" + (f", after {after}" if after else "")


def _dependencies(nodes: list[Node]) -> None:
  """Fill each node's waits (the latest conflicting node per other place) and mark the nodes others wait for."""
  writer: dict[int, int] = {}
  readers: dict[int, list[int]] = {}
  for i, node in enumerate(nodes):
    conflicts = [writer[b] for b in (*node.reads, *node.writes) if b in writer] + [
      j for b in node.writes for j in readers.get(b, [])
    ]
    latest: dict[Place, int] = {}
    for j in conflicts:
      if nodes[j].place != node.place or node.place is None:
        latest[nodes[j].place] = max(latest.get(nodes[j].place, -1), j)
    for place, j in latest.items():
      if place is None:
        continue  # host steps run in order before anything submitted after them
      nodes[j].signals = True
      in_queue = node.place is not None and (node.place[0] is place[0] or node.place[0].polls_host_signals)
      node.waits.append((j, not in_queue))
    for b in node.reads:
      readers.setdefault(b, []).append(i)
    for b in node.writes:
      writer[b], readers[b] = i, []
  for i, node in enumerate(nodes):  # each device's compute queue waits at the end for its other queues' last step
    if (
      node.place is not None
      and node.place[1] != COMPUTE
      and i == max(j for j, n in enumerate(nodes) if n.place == node.place)
    ):
      node.signals = True


def _copy(destination: int, source: int, nbytes: int) -> Callable[[Any], None]:
  """Encode a copy into a queue, or (without a queue) run it on the host."""
  return lambda queue: (
    ctypes.memmove(destination, source, nbytes) if queue is None else queue.copy(destination, source, nbytes)
  )


def _through_host(device: Any, destination: Any, source_device: Any, source: Any) -> None:
  host = bytearray(source.nbytes)
  source_device.allocator.copyout(memoryview(host), source)
  device.allocator.copyin(destination, memoryview(host))
