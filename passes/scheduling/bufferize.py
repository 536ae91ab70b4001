"""pytc-bufferize: each `uop.bufferize` becomes a buffer, a store inside its ranges, and a loop end.

A materialized graph output is stored into a new function argument (the caller's output buffer; an
output the sink lists again, a value equal to an earlier one, is copied into its own: no two outputs
share a buffer); any other materialization gets a `uop.buffer`. The graph's tensor arguments become memrefs, and
readers of a materialized value read the buffer returned by its `uop.end`:

  %t = uop.bufferize %v over (%i, %j) : f32 -> tensor<4x8xf32>
becomes
  %b = uop.buffer : memref<4x8xf32>
  %w = uop.store %v, %b[%i, %j] : memref<4x8xf32>
  %t = uop.end %w over (%i, %j) : memref<4x8xf32>
"""
from mlir import ir
from mlir.dialects import arith, func

from pytc.passes import functions_with, register


def memref_of(tensor: ir.Type) -> ir.MemRefType:
  tensor = ir.RankedTensorType(tensor)
  return ir.MemRefType.get(list(tensor.shape), tensor.element_type)


def bufferize(fn: func.FuncOp) -> None:
  block = fn.entry_block
  for arg in block.arguments: arg.set_type(memref_of(arg.type))
  sink = next(op for op in block.operations if op.operation.name == "uop.sink")
  outputs, repeated = {}, []  # every sink operand gets its own output: one that repeats an earlier operand copies it
  for position, value in enumerate(sink.operands):
    argument = block.add_argument(memref_of(value.type), fn.location)
    if value in outputs: repeated.append((position, argument))
    else: outputs[value] = argument
  for op in [op for op in block.operations if op.operation.name == "uop.bufferize"]:
    source, *ranges = op.operands
    memref = memref_of(op.results[0].type)
    with ir.InsertionPoint(op), op.location:
      target = outputs.get(op.results[0]) or ir.Operation.create("uop.buffer", results=[memref]).result
      stored = ir.Operation.create("uop.store", results=[memref], operands=[source, target, *ranges]).result
      loops = [r for r in ranges if r.owner.name == "uop.range"]
      done = ir.Operation.create("uop.end", results=[memref], operands=[stored, *loops]).result
    op.results[0].replace_all_uses_with(done)
    op.operation.erase()
  for position, argument in repeated: sink.operands[position] = copy(sink.operands[position], argument, sink)
  fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in block.arguments], []))


def copy(buffer: ir.Value, target: ir.Value, sink: ir.OpView) -> ir.Value:
  """A store of `buffer` into `target` element by element, over new ranges, before the sink; its end."""
  i32, i64, memref = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64), ir.MemRefType(target.type)
  ids = [ir.IntegerAttr(op.attributes["id"]).value for op in sink.operation.block.operations if op.operation.name == "uop.range"]
  with ir.InsertionPoint(sink), sink.location:
    ranges = [ir.Operation.create("uop.range", results=[ir.IndexType.get()], attributes={"kind": ir.IntegerAttr.get(i32, 0),
              "size": ir.IntegerAttr.get(i64, n), "id": ir.IntegerAttr.get(i64, max(ids, default=-1) + 1 + axis)}).result
              if n != 1 else arith.constant(ir.IndexType.get(), 0) for axis, n in enumerate(memref.shape)]
    value = ir.Operation.create("uop.index", results=[memref.element_type], operands=[buffer, *ranges],
                                attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(ranges), 0])}).result
    stored = ir.Operation.create("uop.store", results=[memref], operands=[value, target, *ranges]).result
    return ir.Operation.create("uop.end", results=[memref], operands=[stored, *(r for r in ranges if r.owner.name == "uop.range")]).result


@register("pytc-bufferize", "materializations become buffers, stores inside their ranges and loop ends", takes=("rangeified", "bufferized"))
def bufferize_pass(module: ir.Operation) -> None:
  for fn in functions_with(module, "uop.bufferize"):
    with fn.location: bufferize(fn)
