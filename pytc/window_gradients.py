"""Gradients of sliding windows and convolutions, built so that they lower as well as the forward ops.

The windows of `_pool` pass each window element's gradient back to its input position: per stride phase (the input
positions of one residue mod the stride), an elementwise sum of the shifted gradients of the taps that reach it, the
phases then interleaved (rather than undoing the windows' movement ops, whose index arithmetic costs a division per
element and copy). A convolution's input gradient is a
transposed convolution of the output gradient with the weights (for a stride s, one per phase: the input positions of
each residue mod s see a sub-kernel of every s-th tap, so no zeros are multiplied in), its weight gradient a
convolution of the input with the output gradient, batch and channels swapped, stride and dilation swapped. The rule
takes the convolution's input before its padding: the input gradient's phases then cover the input's own positions only
(a 3x3 stride-2 convolution over 8x8 pixels padded by 1: 4x4 per phase, not the padded input's 5x5)."""
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
  return (windows_to_input(materialized(g), x.shape, kernel, strides, dilations),)  # each element is read once per tap that reaches it


def max_pool_gradients(g: Tensor, inputs: tuple[Tensor, Tensor], params: tuple) -> tuple[Tensor, None]:
  """d/dx of the window maxima `pooled` of x (padded), given their gradient `g`: each window's gradient shared equally among
  the positions holding its maximum, as the max reduction's own gradient shares it ((x == max) / ties * g, to the bit). Only
  the share per window, (1 / ties) * g, is a buffer: the phases read the windows' gradient as x compared with each window's
  maximum times its share, rather than a buffer of every window's taps (9 values per window of a 3x3 pool)."""
  (x, pooled), (kernel, strides, dilations) = inputs, params
  axes, taps = tuple(range(-len(kernel), 0)), (1,) * len(kernel)
  hits = (x._pool(kernel, strides, dilations) == pooled.reshape(*pooled.shape, *taps)).cast(g.dtype)
  share = (1 / hits.sum(axes) * materialized(g)).contiguous()  # g as its own kernel: a convolution's gradient, not fused beside the ties
  return windows_to_input(hits * share.reshape(*share.shape, *taps), x.shape, kernel, strides, dilations), None


def windows_to_input(g: Tensor, shape: tuple[int, ...], kernel: tuple[int, ...], strides: tuple[int, ...], dilations: tuple[int, ...]
                     ) -> Tensor:
  """The gradient at an input of `shape` given its windows' gradient `g` (..., out..., kernel...): per phase, the sum of the
  shifted taps that reach it, the phases interleaved."""
  lead = len(shape) - len(kernel)
  sizes = shape[lead:]
  phased = tuple(-(-n // s) for n, s in zip(sizes, strides))
  phases = [phase_gradient(g, lead, kernel, strides, dilations, residues, phased) for residues in itertools.product(*[range(s) for s in strides])]
  if len(phases) == 1: return phases[0]
  spatial, outer = len(kernel), shape[:lead]
  stacked = phases[0].stack(*phases[1:], dim=-1).reshape(*outer, *phased, *strides)
  interleaved = stacked.permute(*range(lead), *[lead + i for d in range(spatial) for i in (d, spatial + d)]).contiguous()
  whole = interleaved.reshape(*outer, *[q * s for q, s in zip(phased, strides)])
  return whole.shrink(tuple((0, n) for n in shape))


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


def conv_gradients(g: Tensor, inputs: tuple[Tensor, Tensor, Tensor], params: tuple) -> tuple[Tensor, Tensor, None]:
  """d/d(input) and d/d(weight) of conv2d(padded, weight), `padded` the input padded by `pads`, given its output gradient
  `g`; none through `padded` (the input's is computed whole, the weight's reads the forward's padded input)."""
  (x, weight, padded), (groups, strides, dilations, pads) = inputs, params
  g = materialized(g)  # read by both gradients, each many times (a BatchNorm's backward feeds it)
  return (input_gradient(g, weight, groups, strides, dilations, pads, x.shape[2:]).cast(x.dtype),
          weight_gradient(g, padded, groups, strides, dilations, weight.shape[2:]).cast(weight.dtype), None)


def crop(x: Tensor, starts: tuple[int, ...], sizes: tuple[int, ...]) -> Tensor:
  """x's spatial dims from `starts`, `sizes` long each, zeros where that runs outside x."""
  lead = x.ndim - len(starts)
  before = [max(0, -a) for a in starts]
  after = [max(0, a + n - m) for a, n, m in zip(starts, sizes, x.shape[lead:])]
  x = x.pad(((0, 0),) * lead + tuple(zip(before, after)))
  return x.shrink(tuple((0, n) for n in x.shape[:lead]) + tuple((a + b, a + b + n) for a, b, n in zip(starts, before, sizes)))


def fit(x: Tensor, sizes: tuple[int, ...]) -> Tensor:
  """x with its spatial dims cut or zero-padded at the end to `sizes`."""
  return crop(x, (0,) * len(sizes), sizes)


def input_gradient(g: Tensor, weight: Tensor, groups: int, strides: tuple[int, ...], dilations: tuple[int, ...],
                   pads: tuple[tuple[int, int], ...], sizes: tuple[int, ...]) -> Tensor:
  """The gradient at the input of `sizes` (padded by `pads` before the convolution): only its own positions, none of the
  padding's, are computed."""
  starts = tuple(before for before, _ in pads)
  if all(s == 1 for s in strides) or any(d != 1 for d in dilations):  # the transposed convolution ends within the padded input
    return crop(g.conv_transpose2d(weight, groups=groups, stride=strides, dilation=dilations), starts, sizes)
  # input position m * s + p of each dim is padded position m * s + p + before: the kernel's taps r, r + s, ... with
  # r = (p + before) mod s, from outputs m + (p + before) // s, m + (p + before) // s - 1, ...
  phased = tuple(-(-n // s) for n, s in zip(sizes, strides))
  batch, channels = g.shape[0], weight.shape[1] * groups
  phases = []
  for residues in itertools.product(*[range(s) for s in strides]):
    taps = [(p + before) % s for p, (before, _), s in zip(residues, pads, strides)]
    if any(r >= k for r, k in zip(taps, weight.shape[2:])):  # no tap of this phase: a stride over a smaller kernel
      phases.append(type(g).zeros(batch, channels, *phased, dtype=g.dtype, device=g.device))
      continue
    sub_kernel = weight[(slice(None), slice(None), *[slice(r, None, s) for r, s in zip(taps, strides)])]
    first = tuple((p + before) // s for p, (before, _), s in zip(residues, pads, strides))
    phases.append(crop(g.conv_transpose2d(sub_kernel, groups=groups), first, phased).contiguous())
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
