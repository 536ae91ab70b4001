"""pytc-merge-kernels: neighbouring launches that compute over the same loop nest become one kernel with several stores.

A launch joins the launch just before it (no launch or transfer between them in the graph) when
- both kernels are elementwise (no reduction), on the same device, over loop ranges of the same sizes, and store at
  those ranges in order;
- they read a buffer in common, or the second reads what the first writes: an optimizer's update of a parameter and of
  its moments then reads the gradient and the old values once, not three times;
- the second reads what the first writes only at the element it writes, unmasked, and writes a buffer that neither
  reads nor the first writes;
- the merged kernel takes at most `max_buffers` buffers and weighs at most `max_ops` (pytc-fuse's bounds: LLVM's compile
  time grows faster than a kernel).
The merged kernel computes the first's values, then the second's over the first's ranges, taking the first's value where
the second read it back from the first's output. The first store stays closed by the kernel's `uop.end`; the others are
its sibling stores, at the same element (forms.py), and the lowerings compute every value of an element before they
store any. The launch writes its first `pytc.writes` buffers. Merged kernels of the same body are emitted once.
"""

from collections import Counter

from mlir import ir
from mlir.dialects import func

from pytc.dialects import uop
from pytc.passes import Limit, functions_with, range_size, register
from pytc.passes.common.analysis import constant_value, kernel_end, read_only_at, sibling_stores, weight
from pytc.passes.common.attributes import BUFFER_DEVICE, KERNEL, WRITES
from pytc.passes.common.clone import clone
from pytc.passes.common.devices import argument_devices
from pytc.passes.common.uops import is_loop


def stores_of(kernel: func.FuncOp) -> list[uop.StoreOp]:
  """The kernel's stores, the one its `uop.end` closes first."""
  return [kernel_end(kernel.operation).src.owner, *sibling_stores(kernel.operation)]


def element(kernel: func.FuncOp) -> tuple | None:
  """Where an elementwise kernel's stores write, the same for all of them: per index, ("range", size, position among the
  loop ranges) or ("constant", value) (a dim of size 1); None for another kernel."""
  ops = list(kernel.entry_block.operations)
  if any(isinstance(op, uop.RangeReduceOp) or (isinstance(op, uop.RangeOp) and not is_loop(op.result)) for op in ops):
    return None
  loops, where = list(kernel_end(kernel.operation).ranges), []
  for index in stores_of(kernel)[0].indices:  # siblings write at the same indices (forms.py)
    if index in loops:
      where.append(("range", range_size(index), loops.index(index)))
    elif (value := constant_value(index)) is not None:
      where.append(("constant", value))
    else:
      return None
  return (len(loops), *where)


class Merger:
  def __init__(self, module: ir.Operation, max_buffers: int, max_ops: int):
    self.module, self.max_buffers, self.max_ops = module, max_buffers, max_ops
    self.functions = {
      op.sym_name.value: op for op in module.regions[0].blocks[0].operations if isinstance(op, func.FuncOp)
    }
    self.graphs = functions_with(module, uop.LaunchOp.OPERATION_NAME)
    self.launched = Counter(
      op.kernel.value for graph in self.graphs for op in graph.entry_block.operations if isinstance(op, uop.LaunchOp)
    )
    self.bodies: dict[str, str] = {}  # a merged kernel's body -> its name
    self.devices: dict[ir.Value, str | None] = {}

  def device(self, buffer: ir.Value) -> str | None:
    return self.devices.get(buffer) if isinstance(buffer, ir.BlockArgument) else BUFFER_DEVICE.get(buffer.owner)

  def kernel(self, launch: uop.LaunchOp) -> func.FuncOp:
    return self.functions[launch.kernel.value]

  def mergeable(self, first: uop.LaunchOp, second: uop.LaunchOp) -> bool:
    a, b = self.kernel(first), self.kernel(second)
    if not (len(a.regions[0].blocks) and len(b.regions[0].blocks)) or WRITES.get(second, 1) != 1:
      return False
    if (where := element(a)) is None or element(b) != where:
      return False
    writes = WRITES.get(first, 1)
    written, reads = list(first.operands)[:writes], list(first.operands)[writes:]
    output, inputs = second.operands[0], list(second.operands)[1:]
    if output in list(first.operands) or output in inputs or self.device(output) != self.device(written[0]):
      return False
    forwarded = [p for p, v in zip(list(b.entry_block.arguments)[1:], inputs) if v in written]
    if not all(read_only_at(p, list(stores_of(b)[0].indices)) for p in forwarded):
      return False
    buffers = len(written) + 1 + len({v for v in reads + inputs if v not in written})
    ops = weight([op.operation for op in a.entry_block.operations]) + weight(
      [op.operation for op in b.entry_block.operations]
    )
    return bool(forwarded or set(reads) & set(inputs)) and buffers <= self.max_buffers and ops <= self.max_ops

  def merge(self, first: uop.LaunchOp, second: uop.LaunchOp) -> uop.LaunchOp:
    """One launch of a kernel doing both, where `second` was."""
    a, b, writes = self.kernel(first), self.kernel(second), WRITES.get(first, 1)
    outputs = [*list(first.operands)[:writes], second.operands[0]]
    reads = list(
      dict.fromkeys(v for v in [*list(first.operands)[writes:], *list(second.operands)[1:]] if v not in outputs)
    )
    buffers = outputs + reads
    with ir.InsertionPoint(a), a.location:
      merged = func.FuncOp("kernel", ([v.type for v in buffers], []))
      entry = merged.add_entry_block()
    argument = dict(zip(buffers, entry.arguments))
    first_map = {p: argument[v] for p, v in zip(a.entry_block.arguments, first.operands)}
    with ir.InsertionPoint(entry):
      for op in list(a.entry_block.operations)[:-1]:
        clone(op, first_map)
      # by the merged kernel's argument each writes
      stored = {first_map[store.dst]: first_map[store.value] for store in stores_of(a)}
      # the second's loop ranges and store indices are the first's (element() matched them); `b` may be `a` itself (two
      # launches of one kernel), so its ops map apart
      mapping = dict(zip(kernel_end(b.operation).ranges, [first_map[r] for r in kernel_end(a.operation).ranges]))
      mapping.update(zip(stores_of(b)[0].indices, [first_map[i] for i in stores_of(a)[0].indices]))
      mapping.update((p, argument[v]) for p, v in zip(b.entry_block.arguments, second.operands))
      for op in list(b.entry_block.operations)[:-1]:
        if isinstance(op, uop.EndOp) or all(r in mapping for r in op.results):
          continue
        if isinstance(op, uop.IndexOp) and (value := stored.get(mapping[op.src])) is not None:
          mapping[op.result] = value
        else:
          clone(op, mapping)
      func.ReturnOp([])
    KERNEL.set(merged)
    nest = [range_size(r) for r in kernel_end(a.operation).ranges]
    for launch in (first, second):
      self.forget(launch)
    with ir.InsertionPoint(second), second.location:
      launch = uop.LaunchOp(ir.FlatSymbolRefAttr.get(self.named(merged, nest)), buffers)
    WRITES.set(launch, len(outputs))
    self.launched[launch.kernel.value] += 1
    first.operation.erase()
    second.operation.erase()
    return launch

  def forget(self, launch: uop.LaunchOp) -> None:
    """Count `launch` out: a kernel nothing launches any more is erased (its name free again)."""
    name = launch.kernel.value
    self.launched[name] -= 1
    if self.launched[name] == 0:
      self.functions.pop(name).operation.erase()
      self.bodies = {body: kept for body, kept in self.bodies.items() if kept != name}

  def named(self, merged: func.FuncOp, nest: list[int]) -> str:
    """The merged kernel's name (`E_<sizes>`, numbered apart from the module's others); a body emitted before keeps its
    own."""
    key = merged.operation.get_asm(use_local_scope=True)
    if (name := self.bodies.get(key)) is not None:
      merged.operation.erase()
      return name
    name = base = "E" + "".join(f"_{n}" for n in nest)
    suffix = 1
    while name in self.functions:
      name, suffix = f"{base}n{suffix}", suffix + 1
    merged.attributes["sym_name"] = ir.StringAttr.get(name)
    self.functions[name], self.bodies[key] = merged, name
    return name

  def run(self) -> None:
    for graph in self.graphs:
      self.devices = dict(zip(graph.entry_block.arguments, argument_devices(graph)))
      previous = None
      for op in list(graph.entry_block.operations):
        if isinstance(op, uop.TransferOp):
          previous = None
        elif isinstance(op, uop.LaunchOp):
          previous = self.merge(previous, op) if previous is not None and self.mergeable(previous, op) else op


@register(
  "pytc-merge-kernels",
  "neighbouring elementwise launches over the same loop nest that share what they read (or the "
  "second reads what the first writes, at its element) become one kernel with several stores, within max_buffers "
  "buffers and max_ops op weight",
  takes=("split",),
)
def merge_kernels(module: ir.Operation, max_buffers: Limit = 16, max_ops: Limit = 2000) -> None:
  Merger(module, max_buffers, max_ops).run()
