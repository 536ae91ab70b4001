"""pytc-bufferize: each `uop.bufferize` becomes a buffer, a store inside its ranges, and a loop end.

A materialized graph output is stored into a new function argument (the caller's output buffer);
any other materialization gets a `uop.buffer`. The graph's tensor arguments become memrefs, and
readers of a materialized value read the buffer returned by its `uop.end`:

  %t = uop.bufferize %v over (%i, %j) : f32 -> tensor<4x8xf32>
becomes
  %b = uop.buffer : memref<4x8xf32>
  %w = uop.store %v, %b[%i, %j] : memref<4x8xf32>
  %t = uop.end %w over (%i, %j) : memref<4x8xf32>
"""
from mlir import ir
from mlir.dialects import func

from pytc.passes import functions_with, register


def memref_of(tensor: ir.Type) -> ir.MemRefType:
  tensor = ir.RankedTensorType(tensor)
  return ir.MemRefType.get(list(tensor.shape), tensor.element_type)


def bufferize(fn: func.FuncOp) -> None:
  block = fn.entry_block
  for arg in block.arguments: arg.set_type(memref_of(arg.type))
  sink = next(op for op in block.operations if op.operation.name == "uop.sink")
  outputs = {}
  for value in sink.operands:
    if value not in outputs: outputs[value] = block.add_argument(memref_of(value.type), fn.location)
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
  fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in block.arguments], []))


@register("pytc-bufferize", "materializations become buffers, stores inside their ranges and loop ends")
def bufferize_pass(module: ir.Operation) -> None:
  for fn in functions_with(module, "uop.bufferize"):
    with fn.location: bufferize(fn)
