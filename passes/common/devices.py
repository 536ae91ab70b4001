"""Which device each value of a graph function lives on.

A graph runs on its own device (`uop.device` on the function, absent in hand-written graphs); what lives elsewhere says
so: a graph argument by its `uop.device` argument attribute, a `uop.copy` by its target, a materialization or buffer by
its own `uop.device`. Here a device is its name, or None for the graph's own. A value computed by other ops lives with
its operands (operands on two devices are an error: a `uop.copy` must bring one over); one computed from constants
alone, or a copy of one, lives with its first reader.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from pytc.dialects import uop
from pytc.passes import PassError
from pytc.passes.common.attributes import GRAPH_DEVICE

ATTRIBUTE = "uop.device"
Device = str | None


def normalized(fn: func.FuncOp, device: str) -> Device:
  """`device` as a name, None when it is the graph's own."""
  return None if device == GRAPH_DEVICE.get(fn) else device


def argument_devices(fn: func.FuncOp) -> list[Device]:
  """The device of each argument of `fn`."""
  if "arg_attrs" not in fn.attributes:
    return [None] * len(fn.entry_block.arguments)
  devices = []
  for position, attrs in enumerate(ir.ArrayAttr(fn.attributes["arg_attrs"])):
    attrs = ir.DictAttr(attrs)
    if ATTRIBUTE not in attrs:
      devices.append(None)
    elif GRAPH_DEVICE.kind.problem(attrs[ATTRIBUTE]) is not None:
      raise PassError(
        fn.location, f"argument #{position} of @{fn.sym_name.value}: {ATTRIBUTE} must be a non-empty string"
      )
    else:
      devices.append(normalized(fn, ir.StringAttr(attrs[ATTRIBUTE]).value))
  return devices


def set_argument_devices(fn: func.FuncOp, devices: list[Device]) -> None:
  """Give each argument its device's attribute (none for the graph's own); drops the argument attributes otherwise."""
  if all(d is None for d in devices):
    if "arg_attrs" in fn.attributes:
      del fn.attributes["arg_attrs"]
    return
  fn.attributes["arg_attrs"] = ir.ArrayAttr.get(
    [ir.DictAttr.get({ATTRIBUTE: ir.StringAttr.get(d)} if d else {}) for d in devices]
  )


def tensor_devices(fn: func.FuncOp) -> dict[ir.Value, Device]:
  """The device of every tensor value of a tensor-level graph function."""
  known: dict[ir.Value, Device] = dict(zip(fn.entry_block.arguments, argument_devices(fn)))
  ops = [op for op in fn.entry_block.operations if len(op.results) == 1]
  for op in ops:
    if isinstance(op, uop.CopyOp):
      if op.src in known:
        known[op.result] = normalized(fn, op.device.value)
      continue
    found = {known[v] for v in op.operands if v in known}
    if len(found) > 1:
      names = " and ".join(sorted(d or "the graph's own device" for d in found))
      raise PassError(
        op.location, f"{op.operation.name} reads values on {names}: a uop.copy must bring them to one device"
      )
    if found:
      known[op.results[0]] = found.pop()
  for op in reversed(ops):  # values computed from constants alone (copies of them too): where their first reader is
    if op.results[0] not in known:
      readers = [use.owner.results[0] for use in op.results[0].uses if use.owner.name != uop.SinkOp.OPERATION_NAME]
      known[op.results[0]] = known[readers[0]] if readers else None
  return known
