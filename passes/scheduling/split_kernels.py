"""pytc-split-kernels: each store with its closed loop nest becomes a kernel function.

For every `uop.end`, the ops it depends on (up to buffers: arguments, `uop.buffer`s and other
kernels' ends) move into `func.func @<name>(%out, %in...) attributes {pytc.kernel}`; the graph
function keeps the buffers and an ordered list of `uop.launch @<name>(%out, %in...)` and the `uop.transfer`s between
devices. Kernels are
named like tinygrad's (`E_4_8` elementwise, `r_4_8` with a reduction, sizes of the loop then
reduce ranges). Structurally identical kernels (same body once range ids are renumbered) are
emitted once and launched by the same name.
"""

from mlir import ir
from mlir.dialects import func

from pytc.dialects import uop
from pytc.passes import functions_with, range_size, register
from pytc.passes.common.attributes import KERNEL
from pytc.passes.common.clone import clone, erase_dead
from pytc.passes.common.uops import defined_by, isa, range_id, range_kind
from pytc.passes.common.walk import dependencies


def is_buffer(value: ir.Value) -> bool:
  return isinstance(value, ir.BlockArgument) or defined_by(value, uop.BufferOp, uop.EndOp, uop.TransferOp)


def kernel_cone(end: ir.Operation) -> list[ir.Operation]:
  """The ops `end` depends on (itself included), each after its operands, stopping at buffers."""
  return dependencies(end, lambda op, v: not is_buffer(v) or (op == end and defined_by(v, uop.StoreOp)))


def underlying_buffer(value: ir.Value) -> ir.Value:
  """The buffer a memref value names: ends, transfers and stores forward their destination."""
  while defined_by(value, uop.EndOp, uop.TransferOp, uop.StoreOp):
    value = value.owner.operands[1] if isa(value.owner, uop.StoreOp) else value.owner.operands[0]
  return value


def kernel_name(cone: list[ir.Operation], end: ir.Operation) -> str:
  loops = [range_size(r) for r in end.operands[1:]]
  ranges = sorted((op for op in cone if isa(op, uop.RangeOp)), key=range_id)
  reduces = [range_size(op.results[0]) for op in ranges if range_kind(op) is uop.RangeKind.reduce]
  return ("r" if reduces else "E") + "".join(f"_{n}" for n in loops + reduces)


class Splitter:
  def __init__(self, module: ir.Operation, graph: func.FuncOp):
    self.module, self.graph, self.kernels = module, graph, {}
    self.taken = {
      str(ir.StringAttr(op.attributes["sym_name"]).value)
      for op in module.regions[0].blocks[0].operations
      if "sym_name" in op.attributes
    }

  def split(self, end: ir.Operation) -> None:
    cone = kernel_cone(end)
    written = underlying_buffer(end.operands[0])
    reads = []
    for op in cone:
      for v in op.operands:
        if (
          is_buffer(v)
          and isa(op, uop.IndexOp)
          and underlying_buffer(v) not in reads
          and underlying_buffer(v) != written
        ):
          reads.append(underlying_buffer(v))
    params = [written, *reads]
    name = self.emit_kernel(cone, end, params)
    with ir.InsertionPoint(end), end.location:
      uop.LaunchOp(ir.FlatSymbolRefAttr.get(name), params)
    end.results[0].replace_all_uses_with(written)
    erase_dead([op for op in cone if op != end] + [end])

  def emit_kernel(self, cone: list[ir.Operation], end: ir.Operation, params: list[ir.Value]) -> str:
    with ir.InsertionPoint(self.graph), self.graph.location:
      kernel = func.FuncOp("kernel", ([p.type for p in params], []))
      entry = kernel.add_entry_block()
    mapping = {}
    with ir.InsertionPoint(entry):
      for op in cone:
        operands = [
          entry.arguments[params.index(underlying_buffer(v))] if is_buffer(v) and not (op == end) else mapping.get(v, v)
          for v in op.operands
        ]
        clone(op, mapping, operands)
      func.ReturnOp([])
    ranges = sorted((op for op in entry.operations if isinstance(op, uop.RangeOp)), key=range_id)
    for number, op in enumerate(ranges):
      op.id = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), number)
    key = kernel.operation.get_asm(use_local_scope=True)  # the whole module would be numbered otherwise
    if key in self.kernels:
      kernel.operation.erase()
      return self.kernels[key]
    name = base = kernel_name(cone, end)
    suffix = 1
    while name in self.taken:
      name, suffix = f"{base}n{suffix}", suffix + 1
    self.taken.add(name)
    kernel.attributes["sym_name"] = ir.StringAttr.get(name)
    KERNEL.set(kernel)
    self.kernels[key] = name
    return name


@register(
  "pytc-split-kernels",
  "each store with its loop nest becomes a kernel function; the graph a list of launches",
  takes=("bufferized", "split"),
)
def split_kernels(module: ir.Operation) -> None:
  for op in functions_with(module, uop.EndOp.OPERATION_NAME, uop.TransferOp.OPERATION_NAME):
    if KERNEL.get(op):
      continue
    ends = [o.operation for o in op.entry_block.operations if isinstance(o, uop.EndOp)]
    splitter = Splitter(module, op)
    for end in ends:
      with end.location:
        splitter.split(end)
    for transfer in [o for o in op.entry_block.operations if isinstance(o, uop.TransferOp)]:
      transfer.result.replace_all_uses_with(transfer.dst)
    erase_dead(
      [
        o.operation
        for o in op.entry_block.operations
        if not isinstance(o, (uop.SinkOp, func.ReturnOp, uop.LaunchOp, uop.TransferOp))
      ]
    )
