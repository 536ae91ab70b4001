"""The lazy graph behind a Tensor, and its translation to a `uop` graph function in MLIR."""
from __future__ import annotations

import itertools
import math
import struct

import numpy as np
from mlir import ir
from mlir.dialects import func

from pytc import flags
from pytc.dialects import uop
from pytc.dtype import DType, dtypes, float_to_fp8
from pytc.passes.common.attributes import GRAPH_DEVICE
from pytc.passes.common.devices import set_argument_devices
from pytc.symbolic import Usage, concrete, is_symbolic


class LazyOp:
  """One node of the lazy graph: a uop op name (`add`, `const`, ...) or `buffer` for realized data. `arg` holds a
  const's scalar, a buffer's device buffer, or a movement/reduce op's parameters (see _attributes). Nodes are never
  changed once made; each carries its leaves and structure number (below), computed here."""
  __slots__ = ("op", "dtype", "shape", "symbolic", "device", "srcs", "arg", "_leaves", "structure")

  def __init__(self, op: str, dtype: DType, shape: tuple, device: str, srcs: tuple[LazyOp, ...] = (), arg: object = None):
    """`shape` may hold symbolic sizes (pytc.symbolic): the node is then stored at their largest, `symbolic` keeps them."""
    self.symbolic, key_shape = (shape if Usage.seen and is_symbolic(shape) else None), shape
    if self.symbolic: shape = concrete(shape)
    self.op, self.dtype, self.shape, self.device, self.srcs, self.arg = op, dtype, shape, device, srcs, arg
    if len(srcs) == 1:  # the common cases first, without the general merge
      self._leaves, key = srcs[0].leaves, (op, dtype.name, key_shape, device, arg if arg is None else arg_key(arg), srcs[0].structure)
    elif not srcs:
      self._leaves = None if op == "buffer" else ()
      key = (op, dtype.name, key_shape, device, None if op == "buffer" or arg is None else arg_key(arg))
    else:
      self._leaves, wiring = merge_leaves(self)
      key = (op, dtype.name, key_shape, device, None if arg is None else arg_key(arg), *[src.structure for src in srcs], *wiring)
    if (structure := _structures.get(key)) is None:
      if len(_structures) >= flags.STRUCTURE_CACHE.value: _structures.clear()  # numbers stay unique: a structure seen again only misses the caches
      structure = _structures.setdefault(key, next(_numbers))  # atomic across threads
    self.structure = structure

  def __repr__(self) -> str: return f"LazyOp({self.op}, {self.dtype.name}, {self.shape}, {self.device})"

  @property
  def leaves(self) -> tuple[LazyOp, ...]:
    """The buffers this node reads, in first-use order (a buffer is its own leaf; not stored, so it makes no cycle)."""
    return (self,) if self._leaves is None else self._leaves

  @property
  def is_realized(self) -> bool: return self.op == "buffer"


# Structural identity, computed as the graph is built so that looking up a schedule costs O(outputs):
# `structure` numbers what a node computes from its leaves (the buffers it reads, in first-use order),
# and `wiring` says which of a node's leaves each source's leaves are. Equal structures compute the same
# function of their leaves, whichever buffers those are.
_structures: dict[tuple, int] = {}
_numbers = itertools.count()


SMALL_MERGE = 16  # leaves searched in place, not through a table of positions
PLAIN_ARGS, DOUBLE = {type(None), int, str}, struct.Struct("<d")


def arg_key(arg: object) -> object:
  """`arg` as a structure key: Python calls 0.0 and -0.0 equal, NaN unequal to itself, and 1, 1.0 and True equal, but
  each computes something else, so a float keys as its bits and a bool as itself beside its type. (Hot: every node.)"""
  if (kind := type(arg)) in PLAIN_ARGS: return arg
  if kind is tuple:
    for item in arg:
      if type(item) is not int: return tuple(map(arg_key, arg))
    return arg
  if kind is float: return ("float", DOUBLE.pack(arg))
  if kind is bool or isinstance(arg, np.bool_): return ("bool", bool(arg))
  if isinstance(arg, float | np.floating): return ("float", DOUBLE.pack(float(arg)))
  return arg


def merge_leaves(node: LazyOp) -> tuple[tuple[LazyOp, ...], tuple]:
  """The node's leaves (its first source's, then those of the others not among them yet) and each source's wiring: None
  when all sources with leaves have the same ones, else per source the positions of its leaves among the node's, except
  for the first source with leaves: just their count (they are the node's first leaves, in order). (Hot: every node
  with several sources.)"""
  per_source = [src.leaves for src in node.srcs]
  if len(per_source) == 2:
    left, right = per_source
    if left is right or not right or left == right: return left or right, (None, None)
    if not left: return right, (None, None)
    if len(right) == 1:  # x op buffer
      if (leaf := right[0]) in left: return left, (len(left), (left.index(leaf),))
      return left + right, (len(left), (len(left),))
    if len(left) == 1:  # buffer op x (an assign's target and value): the positions the general merge finds, by ranges
      if (leaf := left[0]) not in right: return left + right, (1, tuple(range(1, len(right) + 1)))
      i = right.index(leaf)
      return left + right[:i] + right[i + 1:], (1, (*range(1, i + 1), 0, *range(i + 1, len(right))))
    if len(left) + len(right) <= SMALL_MERGE:  # searched in place: most binary ops while a graph grows
      merged = list(left)
      for leaf in right:
        if leaf not in merged: merged.append(leaf)
      return tuple(merged), (len(left), tuple([merged.index(leaf) for leaf in right]))
  first, first_source = (), -1
  for i, leaves in enumerate(per_source):
    if not leaves: continue
    if first_source < 0: first, first_source = leaves, i
    elif leaves != first: break
  else: return first, (None,) * len(per_source)  # one set of leaves, shared by every source that has some
  position = dict(zip(map(id, first), range(len(first))))
  added = []
  for leaves in per_source[first_source + 1:]:
    for leaf in leaves:
      if id(leaf) not in position:
        position[id(leaf)] = len(position)
        added.append(leaf)
  wiring = tuple(len(first) if i == first_source else tuple([position[id(leaf)] for leaf in leaves]) for i, leaves in enumerate(per_source))
  return first + tuple(added), wiring


def structure_of(outputs: list[LazyOp]) -> tuple[tuple[LazyOp, ...], int]:
  """The leaves of several outputs together and a number for what they compute from them."""
  holder = LazyOp("sink", outputs[0].dtype, (), outputs[0].device, tuple(outputs))
  return holder.leaves, holder.structure


MOVEMENT = {"reshape", "permute", "expand", "pad", "shrink", "flip"}
VIEW_OPS = MOVEMENT | {"detach"}


def is_view(node: LazyOp) -> bool:
  """Movement ops over realized data only: a view that realizing alone would just copy."""
  while node.op in VIEW_OPS: node = node.srcs[0]
  return node.is_realized


def toposort(outputs: list[LazyOp]) -> list[LazyOp]:
  """The nodes `outputs` reach, each after its sources (depth first, sources in order)."""
  order, seen = [], set()
  for out in outputs:
    if id(out) in seen: continue
    seen.add(id(out))
    stack = [(out, iter(out.srcs))]  # each node on the path with the sources it has yet to visit
    while stack:
      node, pending = stack[-1]
      for src in pending:
        if id(src) not in seen:
          seen.add(id(src))
          stack.append((src, iter(src.srcs)))
          break
      else:
        stack.pop()
        order.append(node)
  return order


def tensor_type(node: LazyOp) -> ir.RankedTensorType:
  return ir.RankedTensorType.get(list(node.shape), ir.Type.parse(node.dtype.mlir))


def _scalar_attr(value: object, dtype: DType) -> ir.Attribute:
  element = ir.Type.parse(dtype.mlir)
  if dtype.is_fp8: return ir.IntegerAttr.get(element, float_to_fp8(float(value), dtype))  # stored as its bit pattern
  if dtype.is_float: return ir.FloatAttr.get(element, float(value))
  if dtype is dtypes.bool: return ir.BoolAttr.get(bool(value))
  bits = 8 * dtype.itemsize  # a Python int wraps into the element type (two's complement), as in C and NumPy
  wrapped = int(value) & ((1 << bits) - 1)
  return ir.IntegerAttr.get(element, wrapped - (1 << bits) if wrapped >> (bits - 1) else wrapped)


def _attributes(node: LazyOp) -> dict[str, ir.Attribute]:
  """The attributes of `node`'s uop, from its `arg`."""
  arrays = lambda **kw: {k: ir.DenseI64ArrayAttr.get(list(v)) for k, v in kw.items()}
  if node.op == "const": return {"value": _scalar_attr(node.arg, node.dtype)}
  if node.op == "permute": return arrays(order=node.arg)
  if node.op == "flip": return arrays(axes=node.arg)
  if node.op == "pad": return arrays(low=node.arg[0], high=node.arg[1])
  if node.op == "shrink": return arrays(starts=node.arg[0], ends=node.arg[1])
  if node.op == "reduce":
    return {"kind": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), uop.ReduceKind[node.arg[0]]), **arrays(axes=node.arg[1])}
  if node.op == "copy": return {"device": ir.StringAttr.get(node.arg)}
  if node.op == "iota": return {"axis": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), node.arg)}
  return {}


class SizeOverflowError(RuntimeError):
  """A tensor too large for 64-bit sizes: no device could hold it and no index could reach all of it."""


def check_size(node: LazyOp) -> None:
  if (nbytes := math.prod(node.shape) * node.dtype.itemsize) >= 2 ** 63:
    raise SizeOverflowError(f"{node.op} of shape {node.shape} and dtype {node.dtype.name} would need {nbytes} bytes, more than 64-bit sizes address")


def to_mlir(outputs: list[LazyOp], inputs: tuple[LazyOp, ...], name: str) -> ir.Module:
  """A module with `func.func @name(inputs) { uop ops; uop.sink outputs; return }`, one argument per input
  buffer node in the order given. The text depends only on the graph's structure, not on buffer identity. The function
  runs on the first output's device (`uop.device`); an input on another device says which (passes/common/devices.py)."""
  nodes = toposort(outputs)
  for node in nodes: check_size(node)
  module = ir.Module.create()
  with ir.InsertionPoint(module.body):
    fn = ir.Operation.create("func.func", attributes={
      "sym_name": ir.StringAttr.get(name),
      "function_type": ir.TypeAttr.get(ir.FunctionType.get([tensor_type(n) for n in inputs], []))}, regions=1)
  GRAPH_DEVICE.set(fn, home := outputs[0].device)
  set_argument_devices(fn, [n.device if n.device != home else None for n in inputs])
  block = fn.regions[0].blocks.append(*[tensor_type(n) for n in inputs])
  values: dict[int, ir.Value] = {id(n): arg for n, arg in zip(inputs, block.arguments)}
  with ir.InsertionPoint(block):
    for node in nodes:
      if node.is_realized: continue
      if node.op in ("detach", "gradient_rule"):  # only change gradients: the value is the first source's
        values[id(node)] = values[id(node.srcs[0])]
        continue
      if node.op == "assign":  # read before it was realized: its value (the store into the target happens when it is realized)
        values[id(node)] = values[id(node.srcs[1])]
        continue
      attributes = _attributes(node)
      op = ir.Operation.create(f"uop.{node.op}", results=[tensor_type(node)],  # every LazyOp op is the uop op of that name
                               operands=[values[id(src)] for src in node.srcs], attributes=attributes)
      values[id(node)] = op.result
    uop.SinkOp([values[id(out)] for out in outputs])
    func.ReturnOp([])
  return module
