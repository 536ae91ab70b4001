"""The forms IR takes along pytc's pipeline, and the check every pass makes of its input.

A graph function (it lists its outputs with `uop.sink`) goes tensor-level -> rangeified (pytc-rangeify) ->
bufferized (pytc-bufferize) -> split into kernel launches (pytc-split-kernels) -> scheduled (pytc-schedule);
a kernel function (`attributes {pytc.kernel}`) goes index-level (pytc-split-kernels) -> lowered
(pytc-lower-kernels). Each pass registers the forms it takes (`register(..., takes=...)`); before it runs, every
function of the module is classified by the ops it holds and one in another form is an error at the op that
shows its form, naming the passes to run first (or the pass the function is already past). Functions with no
uop op (declarations, helpers) are in every form. Kernels a pass takes must be well formed: one store closed by
one `uop.end` over its loop ranges (with the sibling stores pytc-merge-kernels adds: each into another buffer, at the
same element), and no index provably outside its buffer (bounds from symbolic.py).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from pytc.dialects import uop
from pytc.passes import PassError
from pytc.passes.common import attributes
from pytc.passes.common.analysis import UOP_PREFIX
from pytc.passes.common.attributes import KERNEL, KERNELS
from pytc.passes.common.symbolic import Lin, Range
from pytc.passes.common.uops import isa, range_kind


@dataclass(frozen=True)
class Form:
  key: str  # how `register(..., takes=...)` names it
  kernel: bool  # a form of kernel functions (else of graph functions)
  stage: int  # position along the pipeline of its kind of function
  made_by: str  # the pass whose output it is
  name: str  # what a function in this form is
  expected: str  # how a pass that takes it asks for it


TENSOR = Form("tensor", False, 0, "", "a tensor-level graph", "a tensor-level graph")
RANGEIFIED = Form("rangeified", False, 1, "pytc-rangeify", "a rangeified graph", "a graph rangeified by pytc-rangeify")
BUFFERIZED = Form(
  "bufferized", False, 2, "pytc-bufferize", "a bufferized graph", "a graph bufferized by pytc-bufferize"
)
SPLIT = Form(
  "split", False, 3, "pytc-split-kernels", "a graph split into kernel launches", "kernels split by pytc-split-kernels"
)
SCHEDULED = Form("scheduled", False, 4, "pytc-schedule", "a scheduled graph", "a graph scheduled by pytc-schedule")
KERNEL_FORM = Form("kernel", True, 0, "pytc-split-kernels", "an index-level kernel", "index-level kernels")
LOWERED = Form("lowered", True, 1, "pytc-lower-kernels", "a lowered kernel", "lowered kernels")
GRAPH_FORMS = (TENSOR, RANGEIFIED, BUFFERIZED, SPLIT, SCHEDULED)
KERNEL_FORMS = (KERNEL_FORM, LOWERED)
# An index-level kernel mapped onto the gpu dialect: a gpu.func in a gpu.module, no longer a func.func (off the CPU
# ladder).
GPU_FORM = Form(
  "gpu",
  True,
  len(KERNEL_FORMS),
  "pytc-gpu-map",
  "a GPU-mapped kernel",
  "kernels mapped onto the gpu dialect by pytc-gpu-map",
)
FORMS = {form.key: form for form in GRAPH_FORMS + KERNEL_FORMS + (GPU_FORM,)}

# The graph stages (lowest, highest) an op can appear in, by its name.
TENSOR_LEVEL = tuple(
  op.OPERATION_NAME
  for op in (
    uop.ReduceOp,
    uop.ReshapeOp,
    uop.PermuteOp,
    uop.ExpandOp,
    uop.PadOp,
    uop.ShrinkOp,
    uop.FlipOp,
    uop.ContiguousOp,
    uop.AssignOp,
    uop.IotaOp,
  )
)
STAGES = {
  **{name: (0, 0) for name in TENSOR_LEVEL},
  **{
    op.OPERATION_NAME: stages
    for op, stages in (
      (uop.CopyOp, (0, 1)),
      (uop.BufferizeOp, (1, 1)),
      (uop.RangeOp, (1, 2)),
      (uop.IndexOp, (1, 2)),
      (uop.RangeReduceOp, (1, 2)),
      (uop.StoreOp, (2, 2)),
      (uop.EndOp, (2, 2)),
      (uop.BufferOp, (2, 4)),
      (uop.TransferOp, (2, 4)),
      (uop.LaunchOp, (3, 4)),
    )
  },
}
NOT_IN_KERNELS = (
  tuple(
    op.OPERATION_NAME for op in (uop.SinkOp, uop.LaunchOp, uop.BufferOp, uop.BufferizeOp, uop.CopyOp, uop.TransferOp)
  )
  + TENSOR_LEVEL
)
ARITH = (
  "arith.addi",
  "arith.subi",
  "arith.muli",
  "arith.divui",
  "arith.divsi",
  "arith.floordivsi",
  "arith.remui",
  "arith.remsi",
)


def body(fn: ir.OpView) -> list[ir.OpView]:
  return list(fn.regions[0].blocks[0].operations) if len(fn.regions) and len(fn.regions[0].blocks) else []


def symbol(fn: ir.OpView) -> str:
  return (
    f"@{ir.StringAttr(fn.attributes['sym_name']).value}" if "sym_name" in fn.attributes else f"this {fn.operation.name}"
  )


def op_stages(op: ir.OpView, name: str) -> tuple[int, int] | None:
  """The stages `op` (named `name`) shows by its name (elementwise ops show none: they are at every level), a sink by
  what it lists."""
  if name != uop.SinkOp.OPERATION_NAME:
    return STAGES.get(name)
  stages = [sink_operand_stages(v) for v in op.operands]
  return (max(s[0] for s in stages), min(s[1] for s in stages)) if stages else None


def sink_operand_stages(value: ir.Value) -> tuple[int, int]:
  tensor = isinstance(value.type, ir.RankedTensorType)
  if isinstance(value, ir.BlockArgument):
    return (0, 1) if tensor else (2, 4)
  return STAGES.get(value.owner.name) or ((0, 0) if tensor else (2, 4))


def graph_stages(
  fn: ir.OpView, ops: list[ir.OpView], names: list[str], argument: str
) -> tuple[tuple[int, ir.OpView], tuple[int, ir.OpView]]:
  """The (stage, the op that shows it) of the earliest and the latest form the graph function can be in."""
  low, high = (0, fn), (len(GRAPH_FORMS) - 1, fn)
  low_width, high_width = high[0], low[0]  # the other end of the op that shows each: the narrowest shows it best
  if KERNELS.has(fn):
    (low, high), low_width, high_width = ((SCHEDULED.stage, fn),) * 2, SCHEDULED.stage, SCHEDULED.stage
  for op, name in zip(ops, names):
    if (stages := op_stages(op, name)) is None:
      continue
    if stages[0] > high[0] or stages[1] < low[0]:
      other = high if stages[0] > high[0] else low
      holds = f"the {KERNELS.name} attribute" if other[1] is fn else other[1].operation.name
      raise PassError(
        op.location,
        f"{argument}: {name} belongs to {GRAPH_FORMS[stages[0]].name}, but {symbol(fn)} also holds "
        f"{holds}, of {GRAPH_FORMS[other[0]].name}: a function is in one form at a time",
      )
    if stages[0] > low[0] or (stages[0] == low[0] and stages[1] < low_width):
      low, low_width = (stages[0], op), stages[1]
    if stages[1] < high[0] or (stages[1] == high[0] and stages[0] > high_width):
      high, high_width = (stages[1], op), stages[0]
  return low, high


def check_form(
  argument: str, fn: ir.OpView, wanted: list[Form], low: tuple[int, ir.OpView], high: tuple[int, ir.OpView]
) -> None:
  """Raise PassError unless `fn`, in one of the forms from stage `low` to `high` (each with the op that shows it) of
  its ladder, is in a form the pass `argument` takes or past one that pass makes (its work there is done)."""
  ladder = KERNEL_FORMS if wanted[0].kernel else GRAPH_FORMS
  if any(low[0] <= f.stage <= high[0] for f in wanted):
    return
  name = symbol(fn)
  if low[0] > wanted[-1].stage:
    if argument in (f.made_by for f in ladder[: low[0] + 1]):
      return
    form, next_form = ladder[low[0]], ladder[wanted[-1].stage + 1]
    raise PassError(
      low[1].location,
      f"{argument} expects {wanted[0].expected}, but {name} is {form.name} already ({form.made_by} ran): "
      f"run {argument} before {next_form.made_by}",
    )
  target = next(f for f in wanted if f.stage > high[0])
  needed = [f.made_by for f in ladder[high[0] + 1 : target.stage + 1]]
  raise PassError(
    high[1].location,
    f"{argument} expects {target.expected}, but {name} is {ladder[high[0]].name}: run {', '.join(needed)} first",
  )


def check_input(module: ir.Operation, argument: str, takes: tuple[str, ...]) -> None:
  """Raise PassError unless every function of `module` is in a form the pass `argument` takes (see the module doc). A
  pass that names no kernel form leaves kernel functions alone, whatever their form; one that names no graph form,
  graphs."""
  graph_forms = sorted((FORMS[key] for key in takes if not FORMS[key].kernel), key=lambda f: f.stage)
  kernel_forms = sorted(
    (FORMS[key] for key in takes if FORMS[key].kernel and FORMS[key] is not GPU_FORM), key=lambda f: f.stage
  )
  for fn in module.regions[0].blocks[0].operations:
    attributes.check_op(fn, argument)
    for kernel in attributes.gpu_functions(fn):
      attributes.check_op(kernel, argument)
    if not isinstance(fn, func.FuncOp):
      if fn.operation.name.startswith(UOP_PREFIX):
        raise PassError(fn.location, f"{argument}: {fn.operation.name} belongs in a graph or kernel func.func")
      continue
    if not (ops := body(fn)):
      continue
    for op in ops:
      attributes.check_op(op, argument)
    names = [op.operation.name for op in ops]
    if KERNEL.get(fn):
      form = KERNEL_FORM if any(name.startswith(UOP_PREFIX) for name in names) else LOWERED
      if form is KERNEL_FORM and GPU_FORM.key in takes and not kernel_forms:
        raise PassError(
          fn.location,
          f"{argument} expects {GPU_FORM.expected}, but {symbol(fn)} is {form.name}: run {GPU_FORM.made_by} first",
        )
      if not kernel_forms:
        continue
      check_form(argument, fn, kernel_forms, (form.stage, fn), (form.stage, fn))
      if form is KERNEL_FORM and KERNEL_FORM in kernel_forms:
        check_kernel(fn, ops, names, argument)
      continue
    if uop.SinkOp.OPERATION_NAME not in names:
      if (
        stray := next((op for op, name in zip(ops, names) if name.startswith(UOP_PREFIX)), None) or nested_uop(ops)
      ) is not None:
        raise PassError(
          stray.location,
          f"{argument}: {symbol(fn)} holds uop ops but is neither a graph (with a uop.sink listing its outputs at "
          "its top level) nor a kernel (with the pytc.kernel attribute)",
        )
      continue
    if ops[-1].operation.name == "func.return" and len(ops[-1].operands):
      raise PassError(
        ops[-1].location,
        f"{argument}: graph function {symbol(fn)} returns values: a graph lists its outputs in uop.sink "
        "and returns nothing",
      )
    low, high = graph_stages(fn, ops, names, argument)
    if not graph_forms:
      continue
    check_form(argument, fn, graph_forms, low, high)
    if high[0] == TENSOR.stage and (
      foreign := next((op for op, name in zip(ops[:-1], names) if not name.startswith(UOP_PREFIX)), None)
    ):
      raise PassError(
        foreign.location,
        f"{argument}: {foreign.operation.name} is not a uop op: a tensor-level graph holds uop ops only",
      )


def nested_uop(ops: list[ir.OpView]) -> ir.Operation | None:
  """The first uop op inside the regions of `ops`."""
  found: list[ir.Operation] = []
  for op in ops:
    if not len(op.operation.regions):
      continue
    op.operation.walk(
      lambda o: (
        ir.WalkResult.INTERRUPT if o.name.startswith(UOP_PREFIX) and not found.append(o) else ir.WalkResult.ADVANCE
      )
    )
    if found:
      return found[0]
  return None


def check_kernel(fn: ir.OpView, ops: list[ir.OpView], names: list[str], argument: str) -> None:
  """A kernel (its `ops`, named `names`) is one store closed by one uop.end over the loop ranges it uses (and sibling
  stores into other buffers at the same element), reads and writes inside its buffers."""
  name, named = symbol(fn), {}
  for op, kind in zip(ops, names):
    named.setdefault(kind, []).append(op)
  if misplaced := [op for kind in NOT_IN_KERNELS for op in named.get(kind, [])]:
    raise PassError(
      misplaced[0].location,
      f"{argument}: {misplaced[0].operation.name} cannot appear in kernel {name}: a kernel is index-level code",
    )
  ends, stores = named.get(uop.EndOp.OPERATION_NAME, []), named.get(uop.StoreOp.OPERATION_NAME, [])
  if not ends:
    raise PassError(
      (stores or [fn])[0].location,
      f"{argument}: kernel {name} has no uop.end: its store must be closed by `uop.end %stored over (%loop ranges)`",
    )
  if len(ends) != 1:
    raise PassError(fn.location, f"{argument}: kernel {name} needs exactly one uop.end")
  end = ends[0]  # the uop verifier makes it close a uop.store over uop.range loops
  closed = end.operands[0].owner.opview
  for store in (op.operation.opview for op in stores):
    sibling = store.dst != closed.dst and list(store.indices) == list(closed.indices)
    if store.operation != closed.operation and not sibling:
      raise PassError(
        store.location,
        f"{argument}: this uop.store is not closed by the uop.end of kernel {name}, nor a sibling "
        "of the one it closes (into another buffer, at the same indices)",
      )
  loops = set(list(end.operands)[1:])
  reduced = {r for op in named.get(uop.RangeReduceOp.OPERATION_NAME, []) for r in list(op.operands)[1:]}
  for op in named.get(uop.RangeOp.OPERATION_NAME, []):
    if not any(True for _ in op.results[0].uses):
      continue
    if range_kind(op) is uop.RangeKind.loop and op.results[0] not in loops:
      raise PassError(
        op.location, f"{argument}: this loop range is used but not closed by the uop.end of kernel {name}"
      )
    if range_kind(op) is uop.RangeKind.reduce and op.results[0] not in reduced:
      raise PassError(
        op.location, f"{argument}: this reduce range is used but not closed by a uop.range_reduce in kernel {name}"
      )
  if any(ir.IntegerAttr(r.owner.attributes["size"]).value == 0 for r in loops):
    return  # the body never runs
  check_bounds(named.get(uop.IndexOp.OPERATION_NAME, []) + stores, argument)


class IndexForms:
  """The linear form (symbolic.py) of an `index` value built from ranges, constants and arith ops; None where
  unknown."""

  def __init__(self) -> None:
    self.forms: dict[ir.Value, Lin | None] = {}
    self.ids = itertools.count()

  def __call__(self, value: ir.Value) -> Lin | None:
    if value not in self.forms:
      self.forms[value] = None if isinstance(value, ir.BlockArgument) else self.build(value.owner)
    return self.forms[value]

  def build(self, op: ir.Operation) -> Lin | None:
    name = op.name
    if isa(op, uop.RangeOp):
      size = ir.IntegerAttr(op.attributes["size"]).value
      return Lin.of(Range(next(self.ids), size)) if size > 0 else None  # a range with no values reads nothing
    if name == "arith.constant":
      value = op.attributes["value"]
      return (
        Lin.of(ir.IntegerAttr(value).value)
        if isinstance(op.results[0].type, ir.IndexType) and isinstance(value, ir.IntegerAttr)
        else None
      )
    if name not in ARITH:
      return None
    a, b = (self(v) for v in op.operands)
    if a is None or b is None:
      return None
    if name == "arith.addi":
      return a + b
    if name == "arith.subi":
      return a - b
    if name == "arith.muli":
      return a * b.const if not b.terms else b * a.const if not a.terms else None
    if b.terms or b.const <= 0:
      return None
    if name == "arith.floordivsi" or (name in ("arith.divui", "arith.divsi") and a.bounds()[0] >= 0):
      return a.floordiv(b.const)
    return a.mod(b.const) if name in ("arith.remui", "arith.remsi") and a.bounds()[0] >= 0 else None


def check_bounds(accesses: list[ir.OpView], argument: str) -> None:
  """Raise PassError at a read (not guarded by a validity condition) or a store with an index provably outside its
  buffer: every value of its range is outside, or the index is linear in ranges (its bounds are reached) and one bound
  is."""
  forms = IndexForms()
  for op in accesses:
    name = op.operation.name
    if isinstance(op, uop.IndexOp) and op.valid is None:
      buffer, indices, what = op.src, list(op.indices), "reads"
    elif isinstance(op, uop.StoreOp):
      buffer, indices, what = op.operands[1], list(op.operands)[2:], "writes"
    else:
      continue
    shape = list(ir.ShapedType(buffer.type).shape)
    if 0 in shape:
      continue
    for axis, (index, size) in enumerate(zip(indices, shape)):
      if (form := forms(index)) is None:
        continue
      low, high = form.bounds()
      linear = all(isinstance(atom, Range) for atom, _ in form.terms)
      if high < 0 or low >= size or (linear and (low < 0 or high >= size)):
        at = f"index {low}" if low == high else f"indices {low} to {high}"
        raise PassError(
          op.location,
          f"{argument}: this {name} {what} {at} along axis {axis} of {buffer.type}, outside its {size} elements",
        )
