"""Reverse-mode gradients over the lazy graph: each rule builds its input gradients from Tensor ops,
so backward graphs fuse and schedule like forward ones."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytc import flags
from pytc.dtype import dtypes
from pytc.graph import VIEW_OPS, LazyOp, toposort
from pytc.helpers import LRUCache
from pytc.template import Recording, leaf_pool, record, replay

if TYPE_CHECKING:
  from pytc.tensor import Tensor

Rule = Callable[["Tensor", "Tensor", tuple["Tensor", ...], object], tuple["Tensor | None", ...]]


def _argsort(order: tuple[int, ...]) -> tuple[int, ...]: return tuple(sorted(range(len(order)), key=order.__getitem__))


def _max_grad(g: Tensor, out: Tensor, srcs: tuple[Tensor, ...], _) -> tuple[Tensor, Tensor]:
  """The larger input takes the gradient, ties split it in half, and a NaN input passes none to either."""
  a, b = srcs
  tie = (a == b).where(g * 0.5, 0.0)
  return (a > b).where(g, tie), (b > a).where(g, tie)


def _reduce_grad(g: Tensor, out: Tensor, srcs: tuple[Tensor, ...], arg) -> tuple[Tensor]:
  (x,), (kind, axes) = srcs, arg
  if kind == "add": return (g.expand(x.shape),)
  if kind == "max":
    is_max = (x == out.expand(x.shape)).cast(g.dtype)
    return (is_max / is_max.sum(axes, keepdim=True).expand(x.shape) * g.expand(x.shape),)
  if kind == "mul":
    # d(prod)/dx_i is the product of the others: out / x_i where x_i != 0; at a zero it is the product of the
    # nonzero rest when x_i is the only zero of its group, else 0
    is_zero = x == 0
    nonzero = is_zero.where(1.0, x).cast(g.dtype)
    only_zero = is_zero.cast(dtypes.int32).sum(axes, keepdim=True) == 1
    others = is_zero.where(only_zero.where(nonzero.prod(axes, keepdim=True), 0.0).expand(x.shape), out.expand(x.shape) / nonzero)
    return (others * g.expand(x.shape),)
  raise NotImplementedError(f"no gradient for a {kind} reduction")


def _pow_grad(g: Tensor, out: Tensor, srcs: tuple[Tensor, ...], _) -> tuple[Tensor, Tensor]:
  """d/db b**e = e * b**(e-1), 0 where e == 0 (b**0 is constant); d/de b**e = b**e * ln(b), which at b == 0 is 0
  for e >= 0 and -inf for e < 0 (the limit from the right)."""
  b, e = srcs
  at_zero_base = (e < 0).where(-math.inf, e.zeros_like())
  return g * (e == 0).where(0.0, e * b.pow(e - 1)), g * (b == 0).where(at_zero_base, out * b.log())


def _exp2_grad(g: Tensor, out: Tensor, srcs: tuple[Tensor, ...], _) -> tuple[Tensor]:
  """A zero gradient stays zero where exp2 overflowed to inf (0 * inf would make it NaN); so does exp's."""
  return ((g == 0).where(0.0, g * out * math.log(2)),)


def _tanh_grad(g: Tensor, out: Tensor, srcs: tuple[Tensor, ...], _) -> tuple[Tensor]:
  """sech^2 x = 4e / (1 + e)^2 with e = e^(-2|x|): 1 - tanh^2 would cancel to 0 where tanh rounds to +-1, long before
  sech^2 underflows. |x| by a select, which passes a NaN on."""
  x = srcs[0]
  e = ((x < 0).where(x, -x) * 2).exp()
  return (g * (4 * e) / ((1 + e) * (1 + e)),)


def _recip_grad(g: Tensor, out: Tensor, srcs: tuple[Tensor, ...], _) -> tuple[Tensor]:
  """-1/x**2 is 0 at x = +-inf (out == 0), whatever gradient arrives (inf * 0 would make it NaN)."""
  return ((out == 0).where(0.0, -g * out * out),)


def _ruled_grad(g: Tensor, out: Tensor, srcs: tuple[Tensor, ...], arg) -> tuple[Tensor | None, ...]:
  """A `gradient_rule` node's value (its first source) passes no gradient through its own graph: its rule gives the
  other sources' gradients."""
  rule, params = arg
  return (None, *rule(g, srcs[1:], params))


def ruled(value: Tensor, inputs: tuple[Tensor, ...], rule: Callable, params: tuple) -> Tensor:
  """`value` (computed from `inputs`) whose gradients to `inputs` are rule(output gradient, inputs, params) rather than
  those of the graph that computes it: a convolution's are convolutions, which lower as well as the forward."""
  node = value.lazydata
  return type(value)(LazyOp("gradient_rule", node.dtype, node.symbolic or node.shape, node.device, (node, *(t.lazydata for t in inputs)),
                            arg=(rule, params)))


def materialized(g: Tensor) -> Tensor:
  """g as its own buffer, unless it is a view of data already (a buffer's or a constant's): the gradient several
  kernels read many times each (a matmul's two, a convolution's two) is computed once, not inlined into each."""
  node = g.lazydata
  while node.op in VIEW_OPS: node = node.srcs[0]
  return g if node.op in ("buffer", "const") else g.contiguous()


def by_slope(value: Tensor, x: Tensor, slope: Callable[[Tensor], Tensor]) -> Tensor:
  """`value`, an elementwise function of `x` whose gradient is g * slope(x): one kernel that reads g once (its own graph
  reads g in every product of its chain rule, and the matmuls behind an activation inline each of those reads)."""
  return ruled(value, (x,), _slope_gradient, (slope,))


def _slope_gradient(g: Tensor, inputs: tuple[Tensor], params: tuple) -> tuple[Tensor]: return ((g * params[0](inputs[0])).contiguous(),)


def materialized_gradient(g: Tensor, inputs: tuple[Tensor, ...], params: tuple) -> tuple[Tensor]: return (materialized(g),)


def cast_gradient(g: Tensor, inputs: tuple[Tensor], params: tuple) -> tuple[Tensor]:
  """A cast's gradient, for casts computed by other ops (fp8's, through bit patterns): g cast back to the input's dtype."""
  return (g.cast(inputs[0].dtype),)


RULES: dict[str, Rule] = {
  "gradient_rule": _ruled_grad,
  "add": lambda g, out, s, _: (g, g),
  "mul": lambda g, out, s, _: (g * s[1], g * s[0]),
  "max": _max_grad,
  "neg": lambda g, out, s, _: (-g,),
  "exp2": _exp2_grad,
  "exp": lambda g, out, s, _: ((g == 0).where(0.0, g * out),),
  "log2": lambda g, out, s, _: (g / (s[0] * math.log(2)),),
  "log": lambda g, out, s, _: (g / s[0],),
  "tanh": _tanh_grad,
  "sin": lambda g, out, s, _: (g * s[0].cos(),),
  "cos": lambda g, out, s, _: (-(g * s[0].sin()),),
  "sqrt": lambda g, out, s, _: (g / (out * 2),),
  "recip": _recip_grad,
  "pow": _pow_grad,
  "where": lambda g, out, s, _: (None, s[0].where(g, 0.0), s[0].where(0.0, g)),
  "cast": lambda g, out, s, _: (g.cast(s[0].dtype),),
  "contiguous": lambda g, out, s, _: (g,),
  "copy": lambda g, out, s, _: (g.to(s[0].device),),
  "assign": lambda g, out, s, _: (None, g),
  "reduce": _reduce_grad,
  "reshape": lambda g, out, s, _: (g.reshape(s[0].shape),),
  "permute": lambda g, out, s, order: (g.permute(_argsort(order)),),
  "expand": lambda g, out, s, _: (g.sum(tuple(i for i, (a, b) in enumerate(zip(s[0].shape, out.shape)) if a != b), keepdim=True),),
  "pad": lambda g, out, s, arg: (g.shrink(tuple((lo, lo + n) for lo, n in zip(arg[0], s[0].shape))),),
  "shrink": lambda g, out, s, arg: (g.pad(tuple((b, n - e) for b, e, n in zip(arg[0], arg[1], s[0].shape))),),
  "flip": lambda g, out, s, axes: (g.flip(axes),),
}
NO_GRADIENT = {"detach", "cmplt", "cmpne", "cmpeq", "trunc", "idiv", "mod", "and", "or", "xor", "shl", "shr", "bitcast", "iota", "const", "buffer"}


def gradients(root: Tensor, seed: Tensor, targets: list[LazyOp]) -> dict[int, Tensor]:
  """d(root)/d(node) for every node of `targets` in root's graph, keyed by id(node); zeros for those that root
  reaches only through ops without a gradient (comparisons, where's condition, detach). The gradient graph of a
  forward graph seen before (the same structures wired the same way, the same targets) is replayed, not rebuilt."""
  nodes = toposort([root.lazydata])
  index = {id(node): i for i, node in enumerate(nodes)}
  wanted = sorted({index[id(t)] for t in targets if id(t) in index})
  parts: list[object] = [dtypes.default_float, dtypes.default_int, seed.lazydata.structure, index.get(id(seed.lazydata)), *wanted, None]
  for node in nodes:  # each node's arity follows from its structure, so the flat list is unambiguous
    parts.append(node.structure)
    parts.extend([index[id(src)] for src in node.srcs])
  inputs, key = nodes + [seed.lazydata], tuple(parts)
  if (recording := _GRADIENT_GRAPHS.get(key)) is None:
    built = _build_gradients(nodes, seed, [nodes[i] for i in wanted])
    if (recording := record([g.lazydata for g in built], inputs)) is not None: _GRADIENT_GRAPHS[key] = recording
    else: return {id(nodes[w]): g for w, g in zip(wanted, built)}
  leaves = leaf_pool([nodes[-1], seed.lazydata])  # the forward nodes' leaves follow from the key, the seed's may not
  return {id(nodes[w]): type(seed)(g) for w, g in zip(wanted, replay(recording, inputs, leaves))}


_GRADIENT_GRAPHS: LRUCache[tuple, Recording] = LRUCache(flags.GRADIENT_CACHE)  # by the forward graph's shape


def _build_gradients(nodes: list[LazyOp], seed: Tensor, targets: list[LazyOp]) -> list[Tensor]:
  """The gradient of each target by the rules, over `nodes` (the root's graph in topological order, the root last)."""
  tensor = type(seed)
  wanted = {id(t) for t in targets}
  needed: set[int] = set()
  for node in nodes:
    if id(node) in wanted or any(id(s) in needed for s in node.srcs): needed.add(id(node))
  grads: dict[int, Tensor] = {id(nodes[-1]): seed}
  for node in reversed(nodes):
    if id(node) not in grads or node.op in NO_GRADIENT or not any(id(s) in needed for s in node.srcs): continue
    if node.op not in RULES: raise NotImplementedError(f"no gradient rule for {node.op}")
    g = grads[id(node)]
    for src, src_grad in zip(node.srcs, RULES[node.op](g, tensor(node), tuple(tensor(s) for s in node.srcs), node.arg)):
      if src_grad is None or id(src) not in needed: continue
      grads[id(src)] = grads[id(src)] + src_grad if id(src) in grads else src_grad
  return [grads[id(t)] if id(t) in grads else tensor(LazyOp("const", t.dtype, t.shape, t.device, arg=0.0)) for t in targets]
