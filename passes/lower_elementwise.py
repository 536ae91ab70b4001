"""pytc-lower-elementwise: a graph of same-shape elementwise uops becomes one loop nest.

The graph function `@f(tensors...) { uop ops; uop.sink %outs; return }` becomes
`@f(memrefs for the inputs..., memrefs for the outputs...)` whose body is one `scf.parallel`
over the common shape: each input is loaded, each op becomes its arith/math scalar op, and each
sink operand is stored to its output memref. Movement ops and reductions are left to the
scheduling passes; this pass rejects them.
"""
from mlir import ir
from mlir.dialects import arith, func, memref, scf

from pytc.passes import PassError, register
from pytc.passes.scalar import constant_from_attr, element_type, load, lower_scalar, signless, storage_type, store


def memref_of(tensor_type: ir.Type) -> ir.MemRefType:
  tensor = ir.RankedTensorType(tensor_type)
  return ir.MemRefType.get(tensor.shape, storage_type(tensor.element_type))


def graph_parts(fn: func.FuncOp) -> tuple[list[ir.OpView], ir.OpView]:
  ops = list(fn.entry_block.operations)
  sinks = [op for op in ops if op.operation.name == "uop.sink"]
  if len(sinks) != 1: raise PassError(fn.location, f"graph function @{fn.sym_name.value} needs exactly one uop.sink")
  if ops[-1].operation.name != "func.return" or len(ops[-1].operands):
    raise PassError(fn.location, f"graph function @{fn.sym_name.value} must end in a 'return' without values")
  return [op for op in ops[:-1] if op.operation.name != "uop.sink"], sinks[0]


NOT_ELEMENTWISE = {"uop.reshape", "uop.permute", "uop.expand", "uop.pad", "uop.shrink", "uop.flip", "uop.reduce",
                   "uop.copy", "uop.assign"}


def check_elementwise(fn: func.FuncOp, ops: list[ir.OpView], outputs: list[ir.Value]) -> list[int]:
  """The one shape every value has; movement ops, reductions and mixed shapes are rejected."""
  shape = list(ir.RankedTensorType(outputs[0].type).shape)
  for op in ops:
    if op.operation.name in NOT_ELEMENTWISE:
      raise PassError(op.location, f"{op.operation.name} is not elementwise: it needs the scheduling passes")
  for value in [*fn.arguments, *outputs]:
    if list(ir.RankedTensorType(value.type).shape) != shape:
      raise PassError(fn.location, f"pytc-lower-elementwise needs every value to have shape {shape}, got {value.type}")
  return shape


def lower_graph(fn: func.FuncOp) -> None:
  ops, sink = graph_parts(fn)
  outputs = list(sink.operands)
  if not outputs: raise PassError(sink.location, "uop.sink has no operands: nothing to compute")
  shape = check_elementwise(fn, ops, outputs)
  inputs = [memref_of(arg.type) for arg in fn.arguments]
  with fn.location, ir.InsertionPoint(fn):
    kernel = func.FuncOp(fn.sym_name.value, (inputs + [memref_of(v.type) for v in outputs], []))
    entry = kernel.add_entry_block()
  with fn.location, ir.InsertionPoint(entry):
    bounds = [arith.constant(ir.IndexType.get(), n) for n in (0, 1, *shape)]
    if shape:
      loop = scf.ParallelOp([], [bounds[0]] * len(shape), bounds[2:], [bounds[1]] * len(shape), [])
      body = loop.region.blocks.append(*[ir.IndexType.get()] * len(shape))
      with ir.InsertionPoint(body): scf.ReduceOp([], 0)
      point, indices = ir.InsertionPoint.at_block_terminator(body), list(body.arguments)
    else: point, indices = ir.InsertionPoint(entry), []
    with point:
      scalars = {arg: load(element_type(arg), memref.load(new, indices)) for arg, new in zip(fn.arguments, entry.arguments)}
      for op in ops:
        with op.location: scalars[op.results[0]] = lower_op(op, [scalars[v] for v in op.operands], indices)
      for value, out in zip(outputs, entry.arguments[len(inputs):]):
        memref.store(store(element_type(value), scalars[value]), out, indices)
    func.ReturnOp([])
  kernel.attributes["pytc.kernel"] = ir.UnitAttr.get()
  fn.operation.erase()


def lower_op(op: ir.OpView, operands: list[ir.Value], indices: list[ir.Value]) -> ir.Value:
  name = op.operation.name
  if name == "uop.const": return constant_from_attr(op.attributes["value"])
  if name == "uop.iota":
    index = indices[ir.IntegerAttr(op.attributes["axis"]).value]
    t = element_type(op.results[0])
    if isinstance(t, ir.FloatType): return arith.sitofp(t, arith.index_cast(ir.IntegerType.get_signless(64), index))
    return arith.index_cast(signless(t), index)
  return lower_scalar(op, operands)


@register("pytc-lower-elementwise", "one scf.parallel kernel over memrefs from a graph of same-shape elementwise uops")
def lower_elementwise(module: ir.Operation) -> None:
  for op in list(module.regions[0].blocks[0].operations):
    if op.operation.name == "func.func" and any(o.operation.name == "uop.sink" for o in op.entry_block.operations):
      with op.location: lower_graph(op)
