"""pytc-bufferize: each `uop.bufferize` becomes a buffer, a store inside its ranges, and a loop end.

A materialized graph output is stored into a new function argument (the caller's output buffer; an
output the sink lists again, a value equal to an earlier one, is copied into its own: no two outputs
share a buffer); any other materialization gets a `uop.buffer`. The graph's tensor arguments become memrefs, and
readers of a materialized value read the buffer returned by its `uop.end`. A `uop.copy` between devices becomes a
`uop.transfer` into a new buffer (or the output). Buffers and output arguments on another device than the graph's
carry `uop.device` (see devices.py):

  %t = uop.bufferize %v over (%i, %j) : f32 -> tensor<4x8xf32>
becomes
  %b = uop.buffer : memref<4x8xf32>
  %w = uop.store %v, %b[%i, %j] : memref<4x8xf32>
  %t = uop.end %w over (%i, %j) : memref<4x8xf32>
"""

from mlir import ir
from mlir.dialects import arith, func

from pytc.dialects import uop
from pytc.passes import functions_with, register
from pytc.passes.common.attributes import BUFFER_DEVICE, BUFFERIZE_DEVICE
from pytc.passes.common.devices import Device, argument_devices, normalized, set_argument_devices
from pytc.passes.common.uops import defined_by, is_loop, new_range, range_id, read


def memref_of(tensor: ir.Type) -> ir.MemRefType:
  tensor = ir.RankedTensorType(tensor)
  return ir.MemRefType.get(list(tensor.shape), tensor.element_type)


def device_of(fn: func.FuncOp, value: ir.Value, arguments: list[Device]) -> Device:
  """The device a materialized value (a bufferize, a copy between devices or an argument) lives on."""
  if isinstance(value, ir.BlockArgument):
    return arguments[value.arg_number]
  if isinstance(value.owner.opview, uop.CopyOp):
    return normalized(fn, value.owner.opview.device.value)
  return BUFFERIZE_DEVICE.get(value.owner)


def new_buffer(memref: ir.MemRefType, device: Device) -> ir.Value:
  buffer = uop.BufferOp(memref)
  if device is not None:
    BUFFER_DEVICE.set(buffer, device)
  return buffer.result


def bufferize(fn: func.FuncOp) -> None:
  block = fn.entry_block
  devices = argument_devices(fn)
  for arg in block.arguments:
    arg.set_type(memref_of(arg.type))
  sink = next(op for op in block.operations if isinstance(op, uop.SinkOp))
  outputs, repeated = {}, []  # every sink operand gets its own output: one that repeats an earlier operand copies it
  for position, value in enumerate(sink.operands):
    argument = block.add_argument(memref_of(value.type), fn.location)
    devices.append(device_of(fn, value, devices))
    if value in outputs:
      repeated.append((position, argument))
    else:
      outputs[value] = argument
  for op in [op for op in block.operations if isinstance(op, (uop.BufferizeOp, uop.CopyOp))]:
    with ir.InsertionPoint(op), op.location:
      target = outputs.get(op.result) or new_buffer(memref_of(op.result.type), device_of(fn, op.result, devices))
      if isinstance(op, uop.CopyOp):
        done = uop.TransferOp(target, op.src).result
      else:
        stored = uop.StoreOp(op.src, target, list(op.ranges)).result
        done = uop.EndOp(stored, [r for r in op.ranges if defined_by(r, uop.RangeOp)]).result
    op.results[0].replace_all_uses_with(done)
    op.operation.erase()
  for position, argument in repeated:
    sink.operands[position] = copy(sink.operands[position], argument, sink)
  fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in block.arguments], []))
  set_argument_devices(fn, devices)


def copy(buffer: ir.Value, target: ir.Value, sink: ir.OpView) -> ir.Value:
  """A store of `buffer` into `target` element by element, over new ranges, before the sink; its end."""
  first = 1 + max((range_id(op) for op in sink.operation.block.operations if isinstance(op, uop.RangeOp)), default=-1)
  with ir.InsertionPoint(sink), sink.location:
    ranges = [
      new_range(uop.RangeKind.loop, n, first + axis) if n != 1 else arith.constant(ir.IndexType.get(), 0)
      for axis, n in enumerate(ir.MemRefType(target.type).shape)
    ]
    stored = uop.StoreOp(read(buffer, ranges), target, ranges).result
    return uop.EndOp(stored, [r for r in ranges if is_loop(r)]).result


@register(
  "pytc-bufferize",
  "materializations become buffers, stores inside their ranges and loop ends",
  takes=("rangeified", "bufferized"),
)
def bufferize_pass(module: ir.Operation) -> None:
  for fn in functions_with(module, uop.BufferizeOp.OPERATION_NAME, uop.CopyOp.OPERATION_NAME):
    with fn.location:
      bufferize(fn)
