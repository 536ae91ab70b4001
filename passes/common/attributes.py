"""Every attribute one pytc pass leaves for another: declared once here, read and written through typed accessors.

Each declaration names the attribute, the op it sits on, its value, the passes (or runtime code) that write and read
it, and what it means. `verify` (run by forms.check_input before every pytc pass) makes an undeclared `pytc.*`
attribute, a declared one on another op, or one with a malformed value a located error, so a typo in one pass
surfaces at the next one instead of as a silently ignored hint.

  KERNEL.get(fn) -> bool          KERNEL.set(fn)
  EXTENT.get(fn) -> int | None    EXTENT.set(fn, 4096)
  VECTOR.get(fn) -> dict | None   VECTOR.set(fn, {"lanes": 8, ...})
  TUNE.get(fn, {}) -> dict        TUNE.set(fn, {"rows": 4, "cores": 1})
  REASON.get(bufferize) -> Reason REASON.set(bufferize, Reason.OUTPUT)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Generic, TypeVar

from mlir import ir
from mlir.dialects import func

from pytc.dialects import uop
from pytc.passes import PassError, Within

T = TypeVar("T")
FUNC = func.FuncOp.OPERATION_NAME
GPU_MODULE, GPU_FUNC = "gpu.module", "gpu.func"


class Reason(StrEnum):
  """Why pytc-rangeify (or pytc-fuse, for `split`) materializes a value: the `reason` of a uop.bufferize."""

  OUTPUT = "output"  # a graph output
  CONTIGUOUS = "contiguous"  # asked for by uop.contiguous
  COPY = "copy"  # uop.copy to another device
  MULTI_USE = "multi-use"  # read by several consumers: pytc-fuse keeps or inlines it
  REDUCE_EXPAND = "reduce-expand"  # a reduction broadcast back along its rows: pytc-fuse may join it to its reader
  SPLIT = "split"  # live across a cut pytc-fuse made in a kernel past its limits
  PADDED = "padded"  # a convolution's input with its zero padding, read by windows without bounds checks


class Kind(Generic[T]):
  """How an attribute's value is spelled in the IR: `problem` says what is wrong with one (None if nothing)."""

  shape: str = ""

  def problem(self, attr: ir.Attribute) -> str | None:
    raise NotImplementedError

  def read(self, attr: ir.Attribute) -> T:
    raise NotImplementedError

  def build(self, value: T) -> ir.Attribute:
    raise NotImplementedError


class Unit(Kind[bool]):
  shape = "a unit attribute"

  def problem(self, attr: ir.Attribute) -> str | None:
    return None if isinstance(attr, ir.UnitAttr) else "it has a value"

  def read(self, attr: ir.Attribute) -> bool:
    return True

  def build(self, value: bool) -> ir.Attribute:
    return ir.UnitAttr.get()


def _int_problem(attr: ir.Attribute, within: Within | None) -> str | None:
  if not isinstance(attr, ir.IntegerAttr) or not isinstance(attr.type, ir.IntegerType) or attr.type.width != 64:
    return "it is not an i64 integer"
  return None if within is None or attr.value in within else f"{attr.value} is not {within}"


@dataclass(frozen=True)
class I64(Kind[int]):
  within: Within | None = None

  @property
  def shape(self) -> str:
    return f"an i64 integer ({self.within})" if self.within else "an i64 integer"  # type: ignore[override]

  def problem(self, attr: ir.Attribute) -> str | None:
    return _int_problem(attr, self.within)

  def read(self, attr: ir.Attribute) -> int:
    return ir.IntegerAttr(attr).value

  def build(self, value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


@dataclass(frozen=True)
class Choice(Kind[str]):
  """A string from a fixed set (an enum class, whose members it reads back)."""

  values: type[StrEnum]

  @property
  def shape(self) -> str:
    return "one of " + ", ".join(f'"{v.value}"' for v in self.values)  # type: ignore[override]

  def problem(self, attr: ir.Attribute) -> str | None:
    if not isinstance(attr, ir.StringAttr):
      return "it is not a string"
    return None if attr.value in self.values._value2member_map_ else f'"{attr.value}" is not {self.shape}'

  def read(self, attr: ir.Attribute) -> StrEnum:
    return self.values(ir.StringAttr(attr).value)

  def build(self, value: str) -> ir.Attribute:
    return ir.StringAttr.get(self.values(value).value)


@dataclass(frozen=True)
class Tagged(Kind[str]):
  """A free-text string that starts with one of `tags` (`"kept: ..."`)."""

  tags: tuple[str, ...]

  @property
  def shape(self) -> str:
    return "a string starting with " + " or ".join(f'"{t}: "' for t in self.tags)  # type: ignore[override]

  def problem(self, attr: ir.Attribute) -> str | None:
    if not isinstance(attr, ir.StringAttr):
      return "it is not a string"
    return None if any(attr.value.startswith(f"{t}: ") for t in self.tags) else f'"{attr.value}" is not {self.shape}'

  def read(self, attr: ir.Attribute) -> str:
    return ir.StringAttr(attr).value

  def build(self, value: str) -> ir.Attribute:
    return ir.StringAttr.get(value)


class Text(Kind[str]):
  """A non-empty string."""

  shape = "a non-empty string"

  def problem(self, attr: ir.Attribute) -> str | None:
    return None if isinstance(attr, ir.StringAttr) and attr.value else "it is not a non-empty string"

  def read(self, attr: ir.Attribute) -> str:
    return ir.StringAttr(attr).value

  def build(self, value: str) -> ir.Attribute:
    return ir.StringAttr.get(value)


@dataclass(frozen=True)
class IntDict(Kind[dict[str, int]]):
  """A dictionary of i64 values: every key of `required`, any of `optional`, each within its range."""

  required: Mapping[str, Within]
  optional: Mapping[str, Within] = field(default_factory=dict)

  @property
  def shape(self) -> str:
    return f"a dictionary of i64 {{{', '.join(self.required)}[, {', '.join(self.optional)}]}}"  # type: ignore[override]

  def problem(self, attr: ir.Attribute) -> str | None:
    if not isinstance(attr, ir.DictAttr):
      return "it is not a dictionary"
    keys = {named.name: named.attr for named in (attr[i] for i in range(len(attr)))}
    if missing := [k for k in self.required if k not in keys]:
      return f"it lacks {', '.join(missing)}"
    if unknown := [k for k in keys if k not in self.required and k not in self.optional]:
      return f"it has unknown keys {', '.join(unknown)}"
    for key, value in keys.items():
      if (why := _int_problem(value, {**self.required, **self.optional}[key])) is not None:
        return f"{key}: {why}"
    return None

  def read(self, attr: ir.Attribute) -> dict[str, int]:
    return {
      named.name: ir.IntegerAttr(named.attr).value
      for named in (ir.DictAttr(attr)[i] for i in range(len(ir.DictAttr(attr))))
    }

  def build(self, value: dict[str, int]) -> ir.Attribute:
    return ir.DictAttr.get({k: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(v)) for k, v in value.items()})


@dataclass(frozen=True)
class Attribute(Generic[T]):
  name: str
  on: str  # the op it sits on
  kind: Kind[T]  # its value
  written_by: tuple[str, ...]
  read_by: tuple[str, ...]
  meaning: str
  applies: Callable[[ir.OpView], bool] | None = None  # the ops of kind `on` it may sit on (None: all)
  applies_to: str = ""  # those ops, in words

  def has(self, op: ir.OpView | ir.Operation) -> bool:
    return self.name in op.attributes

  def get(self, op: ir.OpView | ir.Operation, default: T | None = None) -> T | None:
    """The value on `op` (default if it has none); KERNEL and SPLIT (unit attributes) read as True or False."""
    if self.name not in op.attributes:
      return False if isinstance(self.kind, Unit) and default is None else default
    return self.kind.read(op.attributes[self.name])

  def set(self, op: ir.OpView | ir.Operation, value: T = True) -> None:
    attr = self.kind.build(value)
    assert (why := self.kind.problem(attr)) is None, f"{self.name} = {value}: {why}"
    op.attributes[self.name] = attr

  def spelled(self, value: T = True) -> ir.Attribute:
    """The attribute itself, for an op built with its attributes."""
    return self.kind.build(value)


def _kernel(fn: ir.OpView) -> bool:
  return KERNEL.name in fn.attributes


def _graph(fn: ir.OpView) -> bool:
  return KERNEL.name not in fn.attributes


ATTRIBUTES: dict[tuple[str, str], Attribute] = {}
PLACES: dict[str, list[str]] = {}  # an attribute's name -> the ops it is declared on


def declare(attribute: Attribute[T]) -> Attribute[T]:
  assert (attribute.on, attribute.name) not in ATTRIBUTES, f"{attribute.name} on {attribute.on} declared twice"
  ATTRIBUTES[(attribute.on, attribute.name)] = attribute
  PLACES.setdefault(attribute.name, []).append(attribute.on)
  return attribute


KERNEL = declare(
  Attribute(
    "pytc.kernel",
    FUNC,
    Unit(),
    ("pytc-split-kernels", "pytc-lower-kernels"),
    ("forms.check_input", "pytc-order-loops", "pytc-vectorize", "pytc-lower-kernels", "pytc/compiler.py"),
    "the function is a kernel (index level, or lowered), not a graph",
  )
)
SPLIT = declare(
  Attribute(
    "pytc.split",
    uop.ReduceOp.OPERATION_NAME,
    Unit(),
    ("pytc-split-reduce",),
    ("pytc-split-reduce",),
    "one of the two reductions a split sum became: it is not split again",
  )
)
REASON = declare(
  Attribute(
    "reason",
    uop.BufferizeOp.OPERATION_NAME,
    Choice(Reason),
    ("pytc-rangeify", "pytc-fuse"),
    ("pytc-fuse",),
    "why the value is materialized; multi-use and reduce-expand are pytc-fuse's candidates",
  )
)
FUSE = declare(
  Attribute(
    "fuse",
    uop.BufferizeOp.OPERATION_NAME,
    Tagged(("kept", "split")),
    ("pytc-fuse",),
    ("people reading the IR",),
    "why pytc-fuse kept the materialization (`kept: ...`) or cut a kernel there (`split: ...`)",
  )
)
KERNELS = declare(
  Attribute(
    "pytc.kernels",
    FUNC,
    I64(Within(0)),
    ("pytc-schedule",),
    ("forms.check_input", "pytc compile"),
    "the number of kernel launches of the scheduled graph; marks it scheduled",
    _graph,
    "graph functions",
  )
)
BUFFERS = declare(
  Attribute(
    "pytc.buffers",
    FUNC,
    I64(Within(0)),
    ("pytc-schedule",),
    ("pytc compile",),
    "the temporary buffers the scheduled graph allocates, after reuse",
    _graph,
    "graph functions",
  )
)
PEAK_BYTES = declare(
  Attribute(
    "pytc.peak_bytes",
    FUNC,
    I64(Within(0)),
    ("pytc-schedule",),
    ("pytc compile",),
    "the most temporary bytes live at once in the scheduled graph",
    _graph,
    "graph functions",
  )
)


WRITES = declare(
  Attribute(
    "pytc.writes",
    uop.LaunchOp.OPERATION_NAME,
    I64(Within(2)),
    ("pytc-merge-kernels",),
    ("pytc-schedule", "pytc/compiler.py"),
    "the launch writes its first this many buffers (absent: the first only), one per store of its kernel",
  )
)


ELSEWHERE = (
  "the device it lives on, when not the graph's own (a graph argument's is an argument attribute of that name)"
)
GRAPH_DEVICE = declare(
  Attribute(
    "uop.device",
    FUNC,
    Text(),
    ("pytc (the frontend)",),
    ("pytc-rangeify", "pytc-bufferize"),
    "the device the graph runs on: values without a uop.device of their own live there",
    _graph,
    "graph functions",
  )
)
BUFFERIZE_DEVICE = declare(
  Attribute("uop.device", uop.BufferizeOp.OPERATION_NAME, Text(), ("pytc-rangeify",), ("pytc-bufferize",), ELSEWHERE)
)
BUFFER_DEVICE = declare(
  Attribute(
    "uop.device",
    uop.BufferOp.OPERATION_NAME,
    Text(),
    ("pytc-bufferize",),
    ("pytc-schedule", "pytc/compiler.py"),
    ELSEWHERE,
  )
)


class LoopOrder(StrEnum):
  REDUCE_OUTER = "reduce-outer"  # reduce ranges outside the innermost output range, one accumulator per its element


LOOP_ORDER = declare(
  Attribute(
    "pytc.loop_order",
    FUNC,
    Choice(LoopOrder),
    ("pytc-order-loops",),
    ("pytc-lower-kernels",),
    "where the kernel's reductions loop (absent: innermost)",
    _kernel,
    "kernels",
  )
)
VECTOR = declare(
  Attribute(
    "pytc.vector",
    FUNC,
    IntDict(
      {
        "lanes": Within(1, 64, power_of_two=True),
        "vectors": Within(1),
        "rows": Within(1),
        "group": Within(1),
        "upcast": Within(-1),
        "pack": Within(0, 1),
        "unroll": Within(0, 1),
      },
      {
        "stream": Within(1, 1),
        "along": Within(0),
        "across": Within(1, 1),
        "chunks": Within(2),
        "transpose": Within(0),
        "interleave": Within(1, 1),
      },
    ),
    ("pytc-vectorize",),
    ("pytc-lower-kernels",),
    "the kernel's vector tile: lanes x vectors accumulators for rows of range id upcast (-1: none), groups of blocks, "
    "packed "
    "panel, body unrolled along the reduce range; stream: elementwise vectors along the row; along: the range id of "
    "the output range in "
    "the lanes (absent: the innermost); across: each reduction vector code along its row, the outputs scalar loops "
    "(rows 1) or "
    "blocks of `rows` = lanes outputs whose other work is vector code; chunks: each group's blocks of the innermost "
    "range run "
    "as that many runs, the outermost parallel range over groups x chunks; transpose (with stream): the range id of "
    "the output "
    "range some reads index last, in tiles of lanes x lanes outputs whose reads across rows are transposed by "
    "shuffles; interleave (with "
    "stream and along): one vector along `along` per value of the short innermost range, interleaved by shuffles into "
    "one store",
    _kernel,
    "kernels",
  )
)
TUNE = declare(
  Attribute(
    "pytc.tune",
    FUNC,
    IntDict(
      {},
      {
        "vectorize": Within(0, 1),
        "lanes": Within(1, 64, power_of_two=True),
        "vectors": Within(1, 16),
        "rows": Within(1, 64),
        "group": Within(1, 4096),
        "pack": Within(0, 1),
        "reduce_outer": Within(0, 1),
        "cores": Within(1, 1024),
        "chunks": Within(1, 1024),
      },
    ),
    ("pytc/search.py (a searched or cached winner)", "people trying a choice by hand"),
    (
      "pytc-order-loops",
      "pytc-vectorize",
      "pytc-lower-kernels (carries it to the lowered kernel)",
      "the CPU compiler (cores)",
    ),
    "choices for this kernel that replace the passes' defaults, each still only where it is legal: vectorize 0 keeps "
    "scalar "
    "loops; lanes, vectors, rows, group, pack the vector tile; reduce_outer 1/0 forces or forbids the reduce-outer "
    "loop "
    "order; cores how many cores a launch is split across; chunks how many runs of the innermost range's blocks each "
    "group of "
    "rows takes (1: none)",
    _kernel,
    "kernels",
  )
)
IN_PLACE = declare(
  Attribute(
    "pytc.in_place",
    FUNC,
    Unit(),
    ("pytc/compiler.py (an assign's value computed into its target)",),
    ("pytc-lower-kernels",),
    "the kernel may write into a buffer it reads only where it writes: those buffers and the output keep no "
    "llvm.noalias, and "
    "each output element is computed once (no partial vector block moved back over its neighbour)",
    _kernel,
    "kernels",
  )
)
EXTENT = declare(
  Attribute(
    "pytc.extent",
    FUNC,
    I64(Within(0)),
    ("pytc-lower-kernels",),
    ("pytc/compiler.py",),
    "the full size of a lowered kernel's outermost parallel range, [begin, end) of which a launch runs",
    _kernel,
    "kernels",
  )
)
WORK = declare(
  Attribute(
    "pytc.work",
    FUNC,
    I64(Within(0)),
    ("pytc-lower-kernels",),
    ("pytc/compiler.py",),
    "the steps a launch of the whole kernel takes: its outputs times the steps of its reductions (the CPU runtime "
    "splits a launch "
    "of many across cores however few bytes it touches)",
    _kernel,
    "kernels",
  )
)
GPU = declare(
  Attribute(
    "pytc.gpu",
    GPU_FUNC,
    IntDict(
      {"local": Within(1, 1024, power_of_two=True), "grid": Within(0), "outputs": Within(1), "total": Within(0)},
      {"group": Within(1), "tile": Within(1), "vector": Within(2)},
    ),
    ("pytc-gpu-map",),
    ("the GPU runtime (the launch's grid and workgroup size)", "the GPU emulation"),
    "a mapped kernel's launch: grid workgroups (0: launch nothing) of local threads, each computing `outputs` "
    "consecutive "
    "of its total outputs; with `group` (the number of reductions grouped), one row per workgroup, its threads "
    "reducing together "
    "through workgroup memory and each computing every local-th output of the row; with `tile`, a matmul, each "
    "workgroup one "
    "tile x tile block of outputs staged through workgroup memory; with `vector`, each output is that many lanes along "
    "the "
    "innermost output range, read and written as vectors where contiguous",
  )
)


def verify(module: ir.Operation, argument: str) -> None:
  """Raise PassError at the first op of `module` (its functions and their top-level ops) holding an undeclared `pytc.*`
  attribute, a declared attribute on another op than it is declared for, or one with a malformed value. (A pass's input
  check makes the same `check_op` calls in the walk it makes anyway.)"""
  for fn in module.regions[0].blocks[0].operations:
    check_op(fn, argument)
    for kernel in gpu_functions(fn):
      check_op(kernel, argument)
    if fn.operation.name != FUNC or not len(fn.regions[0].blocks):
      continue
    for op in fn.regions[0].blocks[0].operations:
      check_op(op, argument)


def gpu_functions(op: ir.OpView) -> list[ir.OpView]:
  """The functions of `op` if it is a gpu.module (pytc-gpu-map's kernels), else none."""
  return list(op.regions[0].blocks[0].operations) if op.operation.name == GPU_MODULE else []


def check_op(op: ir.OpView, argument: str) -> None:
  attributes = op.operation.attributes
  for key in attributes:  # most ops hold only their own ODS attributes: one name test each
    if key not in PLACES and not key.startswith("pytc."):
      continue
    name = op.operation.name
    if (declared := ATTRIBUTES.get((name, key))) is None:
      sits = PLACES.get(key, [])
      raise PassError(
        op.location,
        f"{argument}: {key} "
        + (
          f"belongs on {' or '.join(sits)}, not on {name}"
          if sits
          else f"is not an attribute pytc declares (passes/common/attributes.py: {', '.join(sorted(declared_names()))})"
        ),
      )
    if declared.applies is not None and not declared.applies(op):
      raise PassError(op.location, f"{argument}: {key} belongs on {declared.applies_to}, not on this {name}")
    if (why := declared.kind.problem(attributes[key])) is not None:
      raise PassError(op.location, f"{argument}: malformed {key} on {name}: {why} (expected {declared.kind.shape})")


def declared_names() -> set[str]:
  return {a.name for a in ATTRIBUTES.values() if a.name.startswith("pytc.")}
