"""einops-style rearrange: one formula that splits, reorders and merges dims ("b (h w) c -> b c h w")."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
  from pytc.tensor import Tensor

ELLIPSIS = "..."


def parse_side(side: str, formula: str) -> list[list[str] | str]:
  """One side of a formula as groups of axis names: a bare name is a group of one, "(a b)" a group of two, "()" and "1"
  an empty group (a dim of size 1); a bare "..." stays the string "...", one group per dim it stands for."""
  tokens = side.replace("…", ELLIPSIS).replace("(", " ( ").replace(")", " ) ").split()
  groups: list[list[str] | str] = []
  current: list[str] | None = None
  for token in tokens:
    if token == "(":
      if current is not None: raise ValueError(f"rearrange {formula!r}: nested parentheses")
      current = []
    elif token == ")":
      if current is None: raise ValueError(f"rearrange {formula!r}: unbalanced parentheses")
      groups.append(current)
      current = None
    elif token == "1":
      if current is None: groups.append([])
    elif token != ELLIPSIS and not (token.isidentifier() and not token.startswith("_") and not token.endswith("_")):
      raise ValueError(f"rearrange {formula!r}: {token!r} is not an axis name")
    elif current is None: groups.append(token if token == ELLIPSIS else [token])
    else: current.append(token)
  if current is not None: raise ValueError(f"rearrange {formula!r}: unbalanced parentheses")
  return groups


class Rearrange:
  """The rearrange method of Tensor (mixed into it)."""
  def rearrange(self, formula: str, **sizes: int) -> Tensor:
    """Rearrange dims by an einops formula "lhs -> rhs": each side names every axis once, parentheses group axes into one
    dim (split on the left, merged on the right), "..." stands for the dims not named, and `sizes` gives the sizes of
    axes that splitting a dim cannot infer."""
    if not isinstance(formula, str): raise TypeError(f"rearrange needs a formula string such as 'b c h w -> b (c h w)', got {formula!r}")
    if formula.count("->") != 1: raise ValueError(f"rearrange {formula!r} needs exactly one '->'")
    lhs, rhs = (parse_side(side, formula) for side in formula.split("->"))
    names = lambda side: [n for g in side for n in ([g] if isinstance(g, str) else g)]
    left_names, right_names = names(lhs), names(rhs)
    if len(set(left_names)) != len(left_names) or sorted(left_names) != sorted(right_names):
      raise ValueError(f"rearrange {formula!r}: each side must name the same axes once each")
    if unknown := set(sizes) - set(left_names): raise ValueError(f"rearrange {formula!r}: sizes for axes it does not name: {sorted(unknown)}")
    if any(isinstance(g, list) and ELLIPSIS in g for g in lhs): raise ValueError(f"rearrange {formula!r}: '...' cannot be grouped on the left")
    if ELLIPSIS in left_names:
      if self.ndim < len(lhs) - 1: raise ValueError(f"rearrange {formula!r} names more dims than shape {self.shape} has")
      extra = [f"{ELLIPSIS}{i}" for i in range(self.ndim - len(lhs) + 1)]
      expand = lambda side: [part for g in side for part in ([[n] for n in extra] if g == ELLIPSIS else
                                                             [[n for name in g for n in (extra if name == ELLIPSIS else [name])]])]
      lhs, rhs = expand(lhs), expand(rhs)
    left_names, right_names = names(lhs), names(rhs)
    if len(lhs) != self.ndim: raise ValueError(f"rearrange {formula!r} names {len(lhs)} dims, shape {self.shape} has {self.ndim}")
    axis_size: dict[str, int] = {}
    for group, n in zip(lhs, self.shape):
      known, unknown = math.prod(sizes[name] for name in group if name in sizes), [name for name in group if name not in sizes]
      if len(unknown) > 1: raise ValueError(f"rearrange {formula!r}: cannot infer the sizes of {unknown} from a dim of {n}")
      if unknown: axis_size[unknown[0]] = n // known if known and n % known == 0 else -1
      if math.prod(sizes.get(name, axis_size.get(name, 1)) for name in group) != n:
        raise ValueError(f"rearrange {formula!r}: axes {group or '()'} cannot make a dim of {n} with sizes {sizes}")
      axis_size.update({name: sizes[name] for name in group if name in sizes})
    x = self.reshape(tuple(axis_size[name] for name in left_names))
    x = x.permute(tuple(left_names.index(name) for name in right_names))
    return x.reshape(tuple(math.prod(axis_size[name] for name in group) for group in rhs))
