"""Gradients of sliding windows and convolutions, built so that they lower as well as the forward ops.

The windows of `_pool` pass each window element's gradient back to its input position: per stride phase (the input
positions of one residue mod the stride), an elementwise sum of the shifted gradients of the taps that reach it, the
phases then interleaved (rather than undoing the windows' movement ops, whose index arithmetic costs a division per
element and copy). A convolution's input gradient is a
transposed convolution of the output gradient with the weights (for a stride s, one per phase: the input positions of
each residue mod s see a sub-kernel of every s-th tap, so no zeros are multiplied in), its weight gradient a
convolution of the input with the output gradient, batch and channels swapped, stride and dilation swapped."""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from pytc.gradient import materialized

if TYPE_CHECKING:
  from pytc.tensor import Tensor


def window_gradients(g: Tensor, inputs: tuple[Tensor], params: tuple) -> tuple[Tensor]:
  """d/dx of x._pool(kernel, strides, dilations) given the windows' gradient `g` (..., out..., kernel...). With strides, the
  input positions of each residue mod the stride (a phase) take a fixed subset of the taps, each shifted by whole windows:
  a sum of shifted slices per phase, the phases interleaved (no per-element division or zeros spread between outputs)."""
  (x,), (kernel, strides, dilations) = inputs, params
  g, lead = materialized(g), x.ndim - len(kernel)  # each element is read once per tap that reaches it
  sizes = x.shape[lead:]
  phased = tuple(-(-n // s) for n, s in zip(sizes, strides))
  phases = [phase_gradient(g, lead, kernel, strides, dilations, residues, phased) for residues in itertools.product(*[range(s) for s in strides])]
  if len(phases) == 1: return (phases[0],)
  spatial, outer = len(kernel), x.shape[:lead]
  stacked = phases[0].stack(*phases[1:], dim=-1).reshape(*outer, *phased, *strides)
  interleaved = stacked.permute(*range(lead), *[lead + i for d in range(spatial) for i in (d, spatial + d)]).contiguous()
  whole = interleaved.reshape(*outer, *[q * s for q, s in zip(phased, strides)])
  return (whole.shrink(tuple((0, n) for n in x.shape)),)


def phase_gradient(g: Tensor, lead: int, kernel: tuple[int, ...], strides: tuple[int, ...], dilations: tuple[int, ...],
                   residues: tuple[int, ...], phased: tuple[int, ...]) -> Tensor:
  """The gradient at input positions q * s + r (r the residues) of each spatial dim: the sum over the taps j with
  j * d = r (mod s) of the windows' gradient at window q - (j * d - r) / s (j * d >= r, as r < s)."""
  total = None
  for taps in itertools.product(*[[j for j in range(k) if (j * d - r) % s == 0] for k, s, d, r in zip(kernel, strides, dilations, residues)]):
    part = g[(Ellipsis, *taps)]
    for dim, j, s, d, r, m in zip(range(lead, g.ndim), taps, strides, dilations, residues, phased):
      part = shifted(part, dim, (j * d - r) // s, m)
    total = part if total is None else total + part
  if total is None: return type(g).zeros(*g.shape[:lead], *phased, dtype=g.dtype, device=g.device)
  return total if all(s == 1 for s in strides) else total.contiguous()  # phases are interleaved after


def spread(x: Tensor, dim: int, stride: int) -> Tensor:
  """x with stride - 1 zeros after each element along `dim` (n elements become n * stride)."""
  if stride == 1: return x
  return x.unsqueeze(dim + 1).pad(tuple((0, stride - 1) if a == dim + 1 else None for a in range(x.ndim + 1))).flatten(dim, dim + 1)


def shifted(x: Tensor, dim: int, offset: int, n: int) -> Tensor:
  """x along `dim` moved to start at `offset`, cut or zero-padded to length n."""
  x = x.pad(tuple((offset, 0) if a == dim else None for a in range(x.ndim)))
  if x.shape[dim] > n: return x.shrink(tuple((0, n) if a == dim else None for a in range(x.ndim)))
  return x.pad(tuple((0, n - x.shape[dim]) if a == dim else None for a in range(x.ndim)))


def conv_gradients(g: Tensor, inputs: tuple[Tensor, Tensor], params: tuple) -> tuple[Tensor, Tensor]:
  """d/d(padded input) and d/d(weight) of conv2d(padded input, weight) given its output gradient `g`."""
  (padded, weight), (groups, strides, dilations) = inputs, params
  g = materialized(g)  # read by both gradients, each many times (a BatchNorm's backward feeds it)
  return (input_gradient(g, weight, groups, strides, dilations, padded.shape[2:]).cast(padded.dtype),
          weight_gradient(g, padded, groups, strides, dilations, weight.shape[2:]).cast(weight.dtype))


def fit(x: Tensor, sizes: tuple[int, ...]) -> Tensor:
  """x with its spatial dims cut or zero-padded at the end to `sizes`."""
  x = x.shrink(((0, x.shape[0]), (0, x.shape[1]), *[(0, min(n, m)) for n, m in zip(x.shape[2:], sizes)]))
  return x.pad(((0, 0), (0, 0), *[(0, m - n) for n, m in zip(x.shape[2:], sizes)]))


def input_gradient(g: Tensor, weight: Tensor, groups: int, strides: tuple[int, ...], dilations: tuple[int, ...],
                   sizes: tuple[int, ...]) -> Tensor:
  if all(s == 1 for s in strides): return fit(g.conv_transpose2d(weight, groups=groups, dilation=dilations), sizes)
  if any(d != 1 for d in dilations):
    return fit(g.conv_transpose2d(weight, groups=groups, stride=strides, dilation=dilations), sizes)
  # position q * s + r of each dim takes taps r, r + s, ... of the kernel from outputs q, q - 1, ...
  phased = tuple(-(-n // s) for n, s in zip(sizes, strides))
  batch, channels = g.shape[0], weight.shape[1] * groups
  phases = []
  for residues in itertools.product(*[range(s) for s in strides]):
    if any(r >= k for r, k in zip(residues, weight.shape[2:])):  # no tap of this phase: a stride over a smaller kernel
      phases.append(type(g).zeros(batch, channels, *phased, dtype=g.dtype, device=g.device))
      continue
    taps = weight[(slice(None), slice(None), *[slice(r, None, s) for r, s in zip(residues, strides)])]
    phases.append(fit(g.conv_transpose2d(taps, groups=groups), phased).contiguous())
  spatial = len(sizes)
  stacked = phases[0].stack(*phases[1:], dim=-1).reshape(batch, channels, *phased, *strides)
  interleaved = stacked.permute(0, 1, *[i for d in range(spatial) for i in (2 + d, 2 + spatial + d)])
  return fit(interleaved.reshape(batch, channels, *[q * s for q, s in zip(phased, strides)]), sizes)


def weight_gradient(g: Tensor, padded: Tensor, groups: int, strides: tuple[int, ...], dilations: tuple[int, ...],
                    kernel: tuple[int, ...]) -> Tensor:
  (batch, channels), out_channels, spatial = padded.shape[:2], g.shape[1], len(kernel)
  x = padded.reshape(batch, groups, channels // groups, *padded.shape[2:]).permute(2, 1, 0, *range(3, 3 + spatial))
  x = x.reshape(channels // groups, groups * batch, *padded.shape[2:])
  w = g.reshape(batch, groups, out_channels // groups, *g.shape[2:]).permute(1, 2, 0, *range(3, 3 + spatial))
  w = w.reshape(out_channels, batch, *g.shape[2:])
  swapped = x.conv2d(w, groups=groups, stride=dilations, dilation=strides)  # (channels per group, out_channels, kernel'...)
  return fit(swapped, kernel).permute(1, 0, *range(2, 2 + spatial))
