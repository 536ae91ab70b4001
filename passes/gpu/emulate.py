"""pytc-gpu-emulate: kernels mapped onto the gpu dialect run on the CPU, so their numerics are checked without a GPU.

Each `gpu.func @k` kernel becomes `func.func @k` (its arguments, attributes {pytc.kernel}; the gpu.module is erased):
scf.for loops over the grid's workgroups, one after another, sharing `memref.alloca` buffers for the workgroup
attributions (allocated once, at the function's entry: a GPU leaves workgroup memory undefined when a workgroup starts),
and the body cut at each gpu.barrier into phases, each phase an scf.for nest over the workgroup's threads: every thread
finishes a phase before any starts the next, which is what a barrier promises. A barrier inside an scf.for (the steps of
a tree reduction) keeps that loop outside the thread loops of its phases. A value used in a later phase than the one
defining it is recomputed there when it comes from constants, ids and arith ops, else kept per thread in a buffer of one
element per thread of the workgroup.

The workgroup size is known_block_size (or pytc.gpu's local), the grid pytc.gpu's grid (or known_grid_size; without
either, or with grid_arguments=1, the function takes three trailing index arguments, the grid's x, y and z sizes: a
runtime that reads the grid from a dispatch packet runs the grid the packet asks for). Threads of a phase run one after
another: the result checks numerics and barrier placement, not races or the memory model. Vector reads drop the
alignment they claim: a GPU runtime's buffers keep it, host memory a CPU device wraps (from_blob) need not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, func, memref, scf

from pytc.passes import PassError, register
from pytc.passes.common.attributes import GPU, KERNEL
from pytc.passes.common.clone import clone

ARGUMENT = "pytc-gpu-emulate"
IDS = ("gpu.thread_id", "gpu.block_id", "gpu.block_dim", "gpu.grid_dim", "gpu.global_id")
THREAD_IDS = ("gpu.thread_id", "gpu.global_id")
EMULATED = IDS + ("gpu.barrier", "gpu.return")
RECOMPUTED = ("arith.", "index.")  # pure ops: recomputed in a later phase rather than kept per thread


def dimension(op: ir.Operation) -> int:
  """0, 1 or 2: the dimension (`#gpu<dim x>`) an id op reads."""
  return "xyz".index(str(op.attributes["dimension"])[-2])


def first_barrier(op: ir.Operation) -> ir.Operation | None:
  found: list[ir.Operation] = []
  op.walk(
    lambda o: ir.WalkResult.INTERRUPT if o.name == "gpu.barrier" and not found.append(o) else ir.WalkResult.ADVANCE
  )
  return found[0] if found else None


@dataclass(eq=False)
class Phase:
  """The thread loops of one phase: their induction variables by dimension, the innermost body's terminator, and the
  phase's first op, before which the values it brings from other phases are recomputed or reloaded."""

  ivs: dict[int, ir.Value]
  end: ir.Operation
  anchor: ir.Operation
  linear: ir.Value | None = None


@dataclass(eq=False)
class Emulation:
  """One kernel's rewrite into `fn`, its workgroup loops' innermost block `body`."""

  kernel: ir.OpView
  local: tuple[int, int, int]
  fn: func.FuncOp | None = None
  body: ir.Block | None = None
  entry_end: ir.Operation | None = None  # constants and buffers go before it (the workgroup loops, once built)
  grid: list[ir.Value] = field(default_factory=list)
  block_ivs: dict[int, ir.Value] = field(default_factory=dict)
  phases: dict[ir.Operation, Phase] = field(default_factory=dict)  # each thread loop -> its phase
  constants: dict[int, ir.Value] = field(default_factory=dict)
  spills: dict[ir.Value, ir.Value] = field(default_factory=dict)
  brought: dict[tuple[Phase, ir.Value], ir.Value] = field(default_factory=dict)

  def constant(self, n: int) -> ir.Value:
    if n not in self.constants:
      with ir.InsertionPoint(self.entry_end), self.kernel.location:
        self.constants[n] = arith.constant(ir.IndexType.get(), n)
    return self.constants[n]

  def build(self, before: ir.Operation, grid: tuple[int, int, int] | None) -> list[ir.Operation]:
    """The function, its workgroup buffers and loops; the kernel's ops, returned, moved into the innermost loop."""
    kernel, index = self.kernel, ir.IndexType.get()
    inputs = list(ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value).inputs)
    with ir.InsertionPoint(before), kernel.location:
      self.fn = func.FuncOp(
        ir.StringAttr(kernel.attributes["sym_name"]).value, (inputs + ([index] * 3 if grid is None else []), [])
      )
      KERNEL.set(self.fn)
      entry = self.fn.add_entry_block()
    with ir.InsertionPoint(entry), kernel.location:
      self.entry_end = func.ReturnOp([])
    self.grid = [self.constant(g) for g in grid] if grid is not None else list(entry.arguments)[len(inputs) :]
    block = kernel.regions[0].blocks[0]
    with ir.InsertionPoint(self.entry_end), kernel.location:
      for i, arg in enumerate(block.arguments):
        if i < len(inputs):
          arg.replace_all_uses_with(self.fn.arguments[i])
        else:
          arg.replace_all_uses_with(
            memref.alloca(
              ir.MemRefType.get(ir.MemRefType(arg.type).shape, ir.MemRefType(arg.type).element_type), [], []
            )
          )
    dims = [d for d in (2, 1, 0) if d == 0 or grid is None or grid[d] != 1]
    self.block_ivs, loops, end = self.loops(self.entry_end, {d: self.grid[d] for d in dims})
    self.entry_end, self.body = loops[0], end.operation.block
    ops = [op.operation for op in block.operations][:-1]
    for op in ops:
      op.move_before(end)
    return ops

  def loops(
    self, before: ir.Operation, sizes: dict[int, ir.Value]
  ) -> tuple[dict[int, ir.Value], list[ir.Operation], ir.Operation]:
    """A nest of scf.for loops from 0 to `sizes` (by dimension, outermost first) before `before`: their induction
    variables by dimension, the loops, the innermost body's terminator."""
    ivs, loops, at = {}, [], ir.InsertionPoint(before)
    for d, size in sizes.items():
      with at, before.location:
        loop = scf.ForOp(self.constant(0), size, self.constant(1))
      with ir.InsertionPoint(loop.body), before.location:
        end = scf.YieldOp([])
      at, ivs[d] = ir.InsertionPoint(end), loop.induction_variable
      loops.append(loop.operation)
    return ivs, loops, end.operation

  def split(self, ops: list[ir.Operation]) -> None:
    """Cut `ops` (a block's, in order) at their barriers into phases; an scf.for holding a barrier stays at the
    workgroup level with its body split likewise."""
    segment: list[ir.Operation] = []
    for op in ops:
      if op.name == "gpu.barrier":
        self.phase(segment)
        segment = []
        op.erase()
      elif (barrier := first_barrier(op)) is not None:
        if op.name != "scf.for":
          raise PassError(
            barrier.location,
            f"{ARGUMENT}: a gpu.barrier under {op.name} cannot be emulated: phases are cut only at barriers at "
            "the top level of the kernel or of an scf.for around them",
          )
        if len(op.results):
          raise PassError(
            op.location,
            f"{ARGUMENT}: this scf.for carries iter_args around a gpu.barrier, so its iterations cannot be split "
            "into phases (carry the value in workgroup memory instead)",
          )
        self.phase(segment)
        segment = []
        self.split([o.operation for o in op.regions[0].blocks[0].operations][:-1])
      else:
        segment.append(op)
    self.phase(segment)

  def phase(self, ops: list[ir.Operation]) -> None:
    """Wrap `ops` in the thread loops (z, y, x; a dimension of one thread has none, x always has one) of a new phase."""
    if not ops:
      return
    ivs, loops, end = self.loops(
      ops[0], {d: self.constant(self.local[d]) for d in (2, 1, 0) if d == 0 or self.local[d] != 1}
    )
    for op in ops:
      op.move_before(end)
    phase = Phase(ivs, end, ops[0])
    for loop in loops:
      self.phases[loop] = phase

  def phase_at(self, op: ir.Operation) -> Phase | None:
    """The phase whose thread loops hold `op` (or are it); None at the workgroup level."""
    while op is not None and op.name != "func.func":
      if (phase := self.phases.get(op)) is not None:
        return phase
      op = op.parent.operation if op.parent is not None else None
    return None

  def phase_of(self, value: ir.Value) -> Phase | None:
    return self.phase_at(value.owner.owner.operation if isinstance(value.owner, ir.Block) else value.owner.operation)

  def recomputable(self, value: ir.Value) -> bool:
    if self.phase_of(value) is None:
      return True
    if isinstance(value.owner, ir.Block):
      return False
    op = value.owner.operation
    return (
      (op.name.startswith(RECOMPUTED) or op.name in IDS)
      and not len(op.regions)
      and all(self.recomputable(v) for v in op.operands)
    )

  def connect(self) -> None:
    """Give every op the values it uses from another phase: recomputed, or reloaded from a per-thread buffer."""
    ops: list[ir.Operation] = []
    for top in self.body.operations:
      top.operation.walk(lambda o: ops.append(o) or ir.WalkResult.ADVANCE)
    for op in ops:
      phase = self.phase_at(op)
      for i, value in enumerate(op.operands):
        if (home := self.phase_of(value)) is None or home is phase:
          continue
        op.operands[i] = self.bring(value, phase) if phase is not None else self.uniform(value, op)

  def bring(self, value: ir.Value, phase: Phase) -> ir.Value:
    """`value` (of another phase) in `phase`, before its first op."""
    if (home := self.phase_of(value)) is None or home is phase:
      return value
    if (phase, value) in self.brought:
      return self.brought[(phase, value)]
    if self.recomputable(value):
      op = value.owner.operation
      operands = [self.bring(v, phase) for v in op.operands]
      with ir.InsertionPoint(phase.anchor):
        result = clone(op, {}, operands).results[value.result_number]
    else:
      with ir.InsertionPoint(phase.anchor), phase.anchor.location:
        result = memref.load(self.spill(value, home), [self.linear(phase)])
    self.brought[(phase, value)] = result
    return result

  def spill(self, value: ir.Value, home: Phase) -> ir.Value:
    """A workgroup buffer of `value` per thread, stored at the end of its phase `home`."""
    if value not in self.spills:
      kind = value.type
      if not isinstance(kind, (ir.IntegerType, ir.FloatType, ir.IndexType, ir.VectorType)):
        where = value.owner.owner if isinstance(value.owner, ir.Block) else value.owner
        raise PassError(
          where.location,
          f"{ARGUMENT}: this {kind} value is used across a gpu.barrier and cannot be kept per thread "
          "(only integers, floats, indices and vectors can)",
        )
      with ir.InsertionPoint(self.entry_end), self.kernel.location:
        self.spills[value] = memref.alloca(
          ir.MemRefType.get([self.local[0] * self.local[1] * self.local[2]], kind), [], []
        )
      with ir.InsertionPoint(home.end), home.end.location:
        memref.store(value, self.spills[value], [self.linear(home)])
    return self.spills[value]

  def linear(self, phase: Phase) -> ir.Value:
    """The thread's position in the workgroup, x fastest."""
    if phase.linear is None:
      with ir.InsertionPoint(phase.anchor), phase.anchor.location:
        linear = phase.ivs[0]
        if 1 in phase.ivs:
          linear = arith.addi(linear, arith.muli(phase.ivs[1], self.constant(self.local[0])))
        if 2 in phase.ivs:
          linear = arith.addi(linear, arith.muli(phase.ivs[2], self.constant(self.local[0] * self.local[1])))
      phase.linear = linear
    return phase.linear

  def uniform(self, value: ir.Value, user: ir.Operation) -> ir.Value:
    """`value` recomputed before `user`, an scf.for around a barrier, whose bounds every thread must agree on."""
    if self.phase_of(value) is None:
      return value
    if not self.recomputable(value):
      raise PassError(
        user.location,
        f"{ARGUMENT}: the bounds of this scf.for around a gpu.barrier are not computed from constants, ids "
        "and arguments alone: the emulator cannot tell that every thread reaches the same barriers",
      )
    op = value.owner.operation
    if op.name in THREAD_IDS:
      raise PassError(
        user.location,
        f"{ARGUMENT}: the bounds of this scf.for around a gpu.barrier depend on {op.name}: threads would reach "
        "different barriers",
      )
    operands = [self.uniform(v, user) for v in op.operands]
    with ir.InsertionPoint(user):
      return clone(op, {}, operands).results[value.result_number]

  def lower_ids(self) -> None:
    """gpu.thread_id -> its phase's thread loop variable, gpu.block_id -> the workgroup loop's; sizes -> constants or
    the grid arguments."""
    ops: list[ir.Operation] = []
    for top in self.body.operations:
      top.operation.walk(lambda o: (o.name in IDS and ops.append(o)) or ir.WalkResult.ADVANCE)
    zero = self.constant(0)
    for op in ops:
      d, phase = dimension(op), self.phase_at(op)
      assert phase is not None or op.name not in THREAD_IDS, "a thread id outside the thread loops"
      thread = phase.ivs.get(d, zero) if phase is not None else zero
      block = self.block_ivs.get(d, zero)
      if op.name == "gpu.global_id":
        with ir.InsertionPoint(op), op.location:
          value = arith.addi(arith.muli(block, self.constant(self.local[d])), thread)
      else:
        value = {
          "gpu.thread_id": thread,
          "gpu.block_id": block,
          "gpu.block_dim": self.constant(self.local[d]),
          "gpu.grid_dim": self.grid[d],
        }[op.name]
      op.results[0].replace_all_uses_with(value)
      op.erase()


def sizes(kernel: ir.OpView) -> tuple[tuple[int, int, int], tuple[int, int, int] | None]:
  """The workgroup size and the grid (None where unknown) of `kernel`."""
  attributes, name = kernel.attributes, f"@{ir.StringAttr(kernel.attributes['sym_name']).value}"
  launch = GPU.get(kernel)  # pytc-gpu-map's launch, checked against its declaration before the pass runs

  def known(key: str) -> tuple[int, int, int] | None:
    if key not in attributes:
      return None
    values = list(ir.DenseI32ArrayAttr(attributes[key]))
    if len(values) != 3 or min(values) < 1:
      raise PassError(kernel.location, f"{ARGUMENT}: {key} of {name} is not three positive sizes")
    return tuple(values)

  block = known("known_block_size")
  if launch is not None and block is not None and block != (launch["local"], 1, 1):
    raise PassError(
      kernel.location, f"{ARGUMENT}: {name} has known_block_size {list(block)} but {GPU.name} local = {launch['local']}"
    )
  if (local := block or ((launch["local"], 1, 1) if launch is not None else None)) is None:
    raise PassError(
      kernel.location,
      f"{ARGUMENT}: kernel {name} has no workgroup size: it needs known_block_size or {GPU.name} = {{local = ...}}",
    )
  return local, (launch["grid"], 1, 1) if launch is not None else known("known_grid_size")


def check_kernel(kernel: ir.OpView) -> None:
  name = f"@{ir.StringAttr(kernel.attributes['sym_name']).value}"
  if "gpu.kernel" not in kernel.attributes:
    raise PassError(
      kernel.location, f"{ARGUMENT}: {name} is a gpu.func without `kernel`: device functions are not emulated"
    )
  if len(kernel.regions[0].blocks) != 1:
    raise PassError(
      kernel.location,
      f"{ARGUMENT}: kernel {name} has {len(kernel.regions[0].blocks)} blocks: only a single-block body is emulated",
    )
  inputs = len(ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value).inputs)
  workgroup = (
    ir.IntegerAttr(kernel.attributes["workgroup_attributions"]).value
    if "workgroup_attributions" in kernel.attributes
    else 0
  )
  if len(kernel.regions[0].blocks[0].arguments) != inputs + workgroup:
    raise PassError(kernel.location, f"{ARGUMENT}: kernel {name} has private attributions: not emulated")
  found: list[ir.Operation] = []
  kernel.operation.walk(
    lambda o: (
      ir.WalkResult.INTERRUPT
      if o.name.startswith("gpu.") and o.name not in EMULATED and o != kernel.operation and not found.append(o)
      else ir.WalkResult.ADVANCE
    )
  )
  if found:
    raise PassError(found[0].location, f"{ARGUMENT}: {found[0].name} is not emulated (ids, sizes and gpu.barrier are)")


def unaligned_reads(module: ir.Operation) -> None:
  """Drop the alignment `vector.load`s claim."""

  def visit(op: ir.Operation) -> ir.WalkResult:
    if op.name == "vector.load" and "alignment" in op.attributes:
      del op.attributes["alignment"]
    return ir.WalkResult.ADVANCE

  module.walk(visit)


@register(
  ARGUMENT,
  "run every gpu.func kernel's whole grid on the CPU: a func.func looping over workgroups, and over threads in each "
  "phase between barriers",
  takes=("gpu",),
)
def gpu_emulate(module: ir.Operation, grid_arguments: bool = False) -> None:
  top = module.regions[0].blocks[0]
  launches: list[ir.Operation] = []
  module.walk(
    lambda o: (
      ir.WalkResult.INTERRUPT if o.name == "gpu.launch_func" and not launches.append(o) else ir.WalkResult.ADVANCE
    )
  )
  if launches:
    raise PassError(
      launches[0].location, f"{ARGUMENT}: gpu.launch_func is not emulated: the CPU runtime calls each emulated kernel"
    )
  symbols = {
    ir.StringAttr(op.attributes["sym_name"]).value: op
    for op in top.operations
    if "sym_name" in op.attributes and op.name != "gpu.module"
  }
  for gpu_module in [op for op in top.operations if op.name == "gpu.module"]:
    for kernel in list(gpu_module.regions[0].blocks[0].operations):
      if kernel.operation.name != "gpu.func":
        raise PassError(
          kernel.location,
          f"{ARGUMENT}: {kernel.operation.name} in a gpu.module is not emulated (only gpu.func kernels are)",
        )
      check_kernel(kernel)
      local, grid = sizes(kernel)
      if grid_arguments:
        grid = None
      if (declared := symbols.get(name := ir.StringAttr(kernel.attributes["sym_name"]).value)) is not None:
        declaration = declared.operation.name == "func.func" and not len(declared.regions[0].blocks)
        if (
          not declaration or grid is None or declared.attributes["function_type"] != kernel.attributes["function_type"]
        ):
          raise PassError(
            kernel.location,
            f"{ARGUMENT}: kernel @{name} would clash with the module's @{name}, which is not a declaration "
            "of the same function",
          )
        declared.operation.erase()  # the launches' declaration: the emulated kernel defines it
      symbols[name] = kernel
      emulation = Emulation(kernel, local)
      emulation.split(emulation.build(gpu_module.operation, grid))
      emulation.connect()
      emulation.lower_ids()
    gpu_module.operation.erase()
  unaligned_reads(module)
  if "gpu.container_module" in module.attributes:
    del module.attributes["gpu.container_module"]
