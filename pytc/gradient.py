"""Reverse-mode gradients over the lazy graph: each rule builds its input gradients from Tensor ops,
so backward graphs fuse and schedule like forward ones."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytc.graph import LazyOp, toposort

if TYPE_CHECKING:
  from pytc.tensor import Tensor

Rule = Callable[["Tensor", "Tensor", tuple["Tensor", ...], object], tuple["Tensor | None", ...]]


def _argsort(order: tuple[int, ...]) -> tuple[int, ...]: return tuple(sorted(range(len(order)), key=order.__getitem__))


def _max_grad(g: Tensor, out: Tensor, srcs: tuple[Tensor, ...], _) -> tuple[Tensor, Tensor]:
  a, b = srcs
  share = (a == b).where(0.5, 1.0)
  return (a < b).where(0.0, g * share), (b < a).where(0.0, g * share)


def _reduce_grad(g: Tensor, out: Tensor, srcs: tuple[Tensor, ...], arg) -> tuple[Tensor]:
  (x,), (kind, axes) = srcs, arg
  if kind == "add": return (g.expand(x.shape),)
  if kind == "max":
    is_max = (x == out.expand(x.shape)).cast(g.dtype)
    return (is_max / is_max.sum(axes, keepdim=True).expand(x.shape) * g.expand(x.shape),)
  raise NotImplementedError(f"no gradient for a {kind} reduction")


RULES: dict[str, Rule] = {
  "add": lambda g, out, s, _: (g, g),
  "mul": lambda g, out, s, _: (g * s[1], g * s[0]),
  "max": _max_grad,
  "neg": lambda g, out, s, _: (-g,),
  "exp2": lambda g, out, s, _: (g * out * math.log(2),),
  "log2": lambda g, out, s, _: (g / (s[0] * math.log(2)),),
  "sin": lambda g, out, s, _: (g * (math.pi / 2 - s[0]).sin(),),
  "sqrt": lambda g, out, s, _: (g / (out * 2),),
  "recip": lambda g, out, s, _: (-g * out * out,),
  "pow": lambda g, out, s, _: (g * s[1] * s[0].pow(s[1] - 1), g * out * s[0].log()),
  "where": lambda g, out, s, _: (None, s[0].where(g, 0.0), s[0].where(0.0, g)),
  "cast": lambda g, out, s, _: (g.cast(s[0].dtype),),
  "contiguous": lambda g, out, s, _: (g,),
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
  """d(root)/d(node) for every node of `targets` that `root` depends on, keyed by id(node)."""
  from pytc.tensor import Tensor
  wanted = {id(t) for t in targets}
  nodes = toposort([root.lazydata])
  needed: set[int] = set()
  for node in nodes:
    if id(node) in wanted or any(id(s) in needed for s in node.srcs): needed.add(id(node))
  grads: dict[int, Tensor] = {id(root.lazydata): seed}
  for node in reversed(nodes):
    if id(node) not in grads or node.op in NO_GRADIENT or not any(id(s) in needed for s in node.srcs): continue
    if node.op not in RULES: raise NotImplementedError(f"no gradient rule for {node.op}")
    g = grads[id(node)]
    for src, src_grad in zip(node.srcs, RULES[node.op](g, Tensor(node), tuple(Tensor(s) for s in node.srcs), node.arg)):
      if src_grad is None or id(src) not in needed: continue
      grads[id(src)] = grads[id(src)] + src_grad if id(src) in grads else src_grad
  return {k: v for k, v in grads.items() if k in wanted}
