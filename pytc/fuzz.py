"""Differential fuzzing: random tensor programs run by pytc and by a NumPy reference.

    python -m pytc.fuzz [--seeds A:B] [--workers N] [--timeout S] [--no-shrink] [-v]

A seed makes one program (`generate`): inputs of random shapes (size-1 dims often, empty ones sometimes) and dtypes
(float32, float16, int32, uint8, bool; NaN, +-inf and -0.0 in some), then 3-12 steps drawn from the op families in OPS
(elementwise math, comparisons and where, casts, reductions, argmax, cumsum, softmax, movement, pad, flip, slicing, cat,
repeat, tensor indexing and gather, matmul, conv2d, pooling). Each step is one line of Python over pytc Tensors and a
NumPy function computing the same in the dtype pytc gives it. A forward program compares pytc's output (with one
intermediate realized in the same call, sometimes) against the reference's. A gradient program (float32 inputs,
differentiable steps) also compares pytc's gradients of sum(out * w) against central finite differences of the float64
reference at sampled elements, skipping an element whose one-sided differences disagree (a kink: relu at 0, a tie in a
max), and, when torch is installed and every step has a torch form, against torch's autograd in float64.

Programs run in worker processes (`--worker`, one program per request), so a crash or a hang is reported with its seed
instead of ending the run. A failing program is shrunk (steps dropped, the output moved earlier, unused inputs removed,
as long as it fails the same way) and printed as a Python program that reproduces it on its own. Exit status 1 when
any seed failed.
"""
from __future__ import annotations

import argparse
import ast
import concurrent.futures
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from math import prod

import numpy as np

FLOATS = ("float32", "float16")
DTYPES = ("float32", "float32", "float16", "int32", "uint8", "bool")
INT_RANGE = {"int32": (-50, 50), "uint8": (0, 255)}
TOLERANCE = {"float32": 3e-4, "float16": 2e-2, "float64": 1e-9}  # relative to max(1, the reference's largest magnitude)
GRAD_TOLERANCE = 2e-3


@dataclass(frozen=True)
class Input:
  shape: tuple[int, ...]
  dtype: str
  kind: str = "normal"  # normal | special (NaN, inf, -0.0 among normal values) | index:<n> (ints in [0, n))
  draw: int = 0  # its values are drawn by (the program's seed, draw): its number when made, kept when a shrink renumbers it


@dataclass(frozen=True)
class Step:
  op: str
  args: tuple[int, ...]  # value numbers: the inputs first, then the steps
  params: tuple[tuple[str, str], ...]  # name -> Python literal, as the source writes it
  shape: tuple[int, ...]  # what pytc gave it when the program was made
  dtype: str

  def param(self, name: str): return ast.literal_eval(dict(self.params)[name])


@dataclass(frozen=True)
class Program:
  """Inputs and steps in the order they were made; a value's number is its place in `nodes`."""
  seed: int
  nodes: tuple[Input | Step, ...]
  output: int
  gradient: bool
  also: int | None = None  # a value realized together with the output

  def inputs(self) -> list[int]: return [i for i, node in enumerate(self.nodes) if isinstance(node, Input)]


@dataclass(frozen=True)
class Op:
  """`source`: a Python expression, {a} {b} {c} standing for the step's values and {name} for its params; `numpy(p, dtype,
  *arrays)`: the same in NumPy, computed in `dtype` (the step's, or float64 where it is float32 in a gradient reference);
  `propose(gen, a)`: (args, params) for a step on value `a`, or None where the op does not apply."""
  source: str
  numpy: Callable[..., np.ndarray]
  propose: Callable[..., tuple[tuple[int, ...], dict[str, object]] | None]
  smooth: bool = True  # differentiable almost everywhere: may appear in gradient programs
  torch: Callable | None = None  # (p, *tensors) -> tensor, for the torch gradient check


# *** NumPy references ***

def np_dtype(name: str) -> np.dtype: return np.dtype(np.bool_ if name == "bool" else name)


def wide(dtype: np.dtype) -> np.dtype:
  """The accumulation dtype of a reference reduction: float64, int64 or uint64."""
  return np.dtype(np.float64 if dtype.kind == "f" else np.uint64 if dtype.kind == "u" else np.int64)


def np_conv2d(x: np.ndarray, w: np.ndarray, groups: int, stride: int, dilation: int, padding: int) -> np.ndarray:
  n, c, h, width = x.shape
  out_channels, group_channels, kh, kw = w.shape
  xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
  oh, ow = (h + 2 * padding - dilation * (kh - 1) - 1) // stride + 1, (width + 2 * padding - dilation * (kw - 1) - 1) // stride + 1
  out = np.zeros((n, groups, out_channels // groups, oh, ow), dtype=np.result_type(x, w))
  wg = w.reshape(groups, out_channels // groups, group_channels, kh, kw)
  for i in range(kh):
    for j in range(kw):
      patch = xp[:, :, i * dilation:i * dilation + stride * (oh - 1) + 1:stride, j * dilation:j * dilation + stride * (ow - 1) + 1:stride]
      out += np.einsum("ngcyx,goc->ngoyx", patch.reshape(n, groups, group_channels, oh, ow), wg[..., i, j])
  return out.reshape(n, out_channels, oh, ow)


def np_pool(x: np.ndarray, kernel: int, stride: int, padding: int, kind: str) -> np.ndarray:
  fill = (-np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min) if kind == "max" else 0
  xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)), constant_values=fill)
  windows = np.lib.stride_tricks.sliding_window_view(xp, (kernel, kernel), axis=(2, 3))[:, :, ::stride, ::stride]
  return windows.max(axis=(-2, -1)) if kind == "max" else windows.mean(axis=(-2, -1))


def np_softmax(x: np.ndarray, axis: int, log: bool) -> np.ndarray:
  shifted = x - x.max(axis=axis, keepdims=True)
  total = np.exp(shifted).sum(axis=axis, keepdims=True)
  return shifted - np.log(total) if log else np.exp(shifted) / total


def np_gelu(x: np.ndarray) -> np.ndarray: return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def np_floordiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  with np.errstate(all="ignore"): return np.floor_divide(a, b)


def np_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  with np.errstate(all="ignore"): return np.mod(a, b)


# *** proposals: which steps apply to a value, with what ***

@dataclass
class Gen:
  """The state of a program being made: its inputs, steps and the pytc values they give (built lazily, never run)."""
  rng: np.random.Generator
  gradient: bool
  special: bool
  nodes: list[Input | Step] = field(default_factory=list)
  tensors: list = field(default_factory=list)  # of each node
  pending: list[Input] = field(default_factory=list)  # fresh inputs of the step being proposed

  def shape(self, v: int) -> tuple[int, ...]: return tuple(self.tensors[v].shape)
  def dtype(self, v: int) -> str: return self.tensors[v].dtype.name

  def fresh(self, shape: tuple[int, ...], dtype: str, kind: str = "normal") -> int:
    """A new input for the step being proposed, numbered after the values made so far."""
    number = len(self.nodes) + len(self.pending)
    self.pending.append(Input(tuple(shape), dtype, kind, number))
    return number

  def pick(self, options):
    return options[int(self.rng.integers(len(options)))]

  def axis(self, v: int) -> int | None:
    return int(self.rng.integers(len(self.shape(v)))) if self.shape(v) else None

  def partner_shape(self, v: int) -> tuple[int, ...]:
    """A shape that broadcasts with value v's: some dims 1, sometimes fewer dims."""
    shape = [1 if self.rng.random() < 0.3 else n for n in self.shape(v)]
    return tuple(shape[int(self.rng.integers(len(shape) + 1)):] if shape and self.rng.random() < 0.2 else shape)

  def partner_dtype(self, v: int) -> str:
    return "float32" if self.gradient else self.dtype(v) if self.rng.random() < 0.6 else self.pick(DTYPES)


def is_float(gen: Gen, v: int) -> bool: return gen.dtype(v) in FLOATS
def unary(gen: Gen, a: int): return (a,), {}
def float_unary(gen: Gen, a: int): return ((a,), {}) if is_float(gen, a) or not gen.gradient else None
def float_only(gen: Gen, a: int): return ((a,), {}) if is_float(gen, a) else None  # composites whose int parts would wrap
def float_binary(gen: Gen, a: int):
  if not is_float(gen, a): return None
  b = partner(gen, a)
  return ((a, b), {}) if b >= len(gen.nodes) or is_float(gen, b) else None
def integer_unary(gen: Gen, a: int): return None if is_float(gen, a) else ((a,), {})
def partner(gen: Gen, a: int) -> int:
  """An earlier value whose shape broadcasts with a's (so the graph reuses values: several readers), else a fresh input."""
  def fits(v: int) -> bool:
    x, y = gen.shape(a), gen.shape(v)
    return len(y) <= len(x) and all(n in (1, m) for n, m in zip(y[::-1], x[::-1])) and (not gen.gradient or is_float(gen, v))
  earlier = [v for v in range(len(gen.nodes)) if v != a and fits(v)]
  if earlier and gen.rng.random() < 0.4: return gen.pick(earlier)
  return gen.fresh(gen.partner_shape(a), gen.partner_dtype(a))


def binary(gen: Gen, a: int): return (a, partner(gen, a)), {}
def integer_binary(gen: Gen, a: int):
  return None if is_float(gen, a) else ((a, gen.fresh(gen.partner_shape(a), gen.dtype(a))), {})
def ternary(gen: Gen, a: int):
  return (a, partner(gen, a), partner(gen, a)), {}
def scalar(gen: Gen, a: int):
  return (a,), {"s": gen.pick([2, -3, 0.5, 1.5]) if not gen.gradient else gen.pick([0.5, 1.5, -2.0])}


def cast(gen: Gen, a: int):
  if gen.gradient: return None
  targets = [d for d in DTYPES if d != gen.dtype(a) and not (is_float(gen, a) and d in INT_RANGE)]
  return (a,), {"to": gen.pick(targets)}


def to_int(gen: Gen, a: int):
  if gen.gradient or not is_float(gen, a): return None
  to = gen.pick(list(INT_RANGE))
  return (a,), {"to": to, "low": INT_RANGE[to][0], "high": INT_RANGE[to][1]}


def reduce_axis(gen: Gen, a: int):
  if not gen.shape(a): return (a,), {"axis": None, "keepdim": False}
  return (a,), {"axis": gen.axis(a) if gen.rng.random() < 0.8 else None, "keepdim": bool(gen.rng.random() < 0.4)}


def nonempty_axis(gen: Gen, a: int):
  """An axis of a non-empty value (max, argmax and softmax have no identity over nothing)."""
  if not gen.shape(a) or 0 in gen.shape(a): return None
  return (a,), {"axis": gen.axis(a)}


def float_axis(gen: Gen, a: int): return nonempty_axis(gen, a) if is_float(gen, a) else None
def cumsum(gen: Gen, a: int): return ((a,), {"axis": gen.axis(a)}) if gen.shape(a) else None


def reshape(gen: Gen, a: int):
  shape = list(gen.shape(a))
  if len(shape) >= 2 and gen.rng.random() < 0.5:  # merge two neighbours
    i = int(gen.rng.integers(len(shape) - 1))
    shape[i:i + 2] = [shape[i] * shape[i + 1]]
  else:  # split a dim, or add one of 1
    i = int(gen.rng.integers(len(shape) + 1))
    n = shape[i] if i < len(shape) else 1
    factor = next((f for f in (2, 3) if n % f == 0 and n > f), None)
    shape[i:i + 1] = [factor, n // factor] if factor and i < len(shape) else [1] + shape[i:i + 1]
  return (a,), {"shape": tuple(shape)}


def permute(gen: Gen, a: int):
  return ((a,), {"order": tuple(int(i) for i in gen.rng.permutation(len(gen.shape(a))))}) if len(gen.shape(a)) >= 2 else None


def expand(gen: Gen, a: int):
  shape = gen.shape(a)
  if 1 not in shape: return None
  return (a,), {"shape": tuple(int(gen.rng.integers(2, 5)) if n == 1 and gen.rng.random() < 0.7 else n for n in shape)}


def pad(gen: Gen, a: int):
  if not gen.shape(a): return None
  return (a,), {"padding": tuple((int(gen.rng.integers(0, 3)), int(gen.rng.integers(0, 3))) if gen.rng.random() < 0.6 else (0, 0)
                                 for _ in gen.shape(a))}


def shrink(gen: Gen, a: int):
  if not gen.shape(a): return None
  bounds = []
  for n in gen.shape(a):
    start = int(gen.rng.integers(0, n)) if n > 1 else 0
    bounds.append((start, int(gen.rng.integers(start + 1, n + 1)) if n else 0))
  return (a,), {"bounds": tuple(bounds)}


def flip(gen: Gen, a: int): return ((a,), {"axis": gen.axis(a)}) if gen.shape(a) else None


def strided(gen: Gen, a: int):
  """A basic index of slices with steps (negative ones included) and an int."""
  if not gen.shape(a): return None
  parts = []
  for n in gen.shape(a):
    choice = gen.rng.random()
    if choice < 0.2 and n > 0: parts.append(str(int(gen.rng.integers(-n, n))))
    elif choice < 0.6: parts.append(f"::{gen.pick([2, -1, -2, 3])}")
    else: parts.append(f"{int(gen.rng.integers(0, max(n, 1)))}:")
  return (a,), {"index": ", ".join(parts)}


def cat(gen: Gen, a: int):
  if not gen.shape(a): return None
  axis = gen.axis(a)
  shape = list(gen.shape(a))
  shape[axis] = int(gen.rng.integers(1, 4))
  return (a, gen.fresh(tuple(shape), gen.dtype(a))), {"axis": axis}


def repeat(gen: Gen, a: int):
  return (a,), {"repeats": tuple(gen.pick([1, 1, 2, 3]) for _ in range(len(gen.shape(a)) + int(gen.rng.integers(0, 2))))}


def take(gen: Gen, a: int):
  """a[index] along the first axis, with an int32 tensor index."""
  shape = gen.shape(a)
  if not shape or shape[0] == 0: return None
  return (a, gen.fresh((int(gen.rng.integers(1, 5)),), "int32", f"index:{shape[0]}")), {}


def gather(gen: Gen, a: int):
  shape = gen.shape(a)
  if not shape or 0 in shape: return None
  axis = gen.axis(a)
  index = list(shape)
  index[axis] = int(gen.rng.integers(1, 5))
  return (a, gen.fresh(tuple(index), "int32", f"index:{shape[axis]}")), {"axis": axis}


def matmul(gen: Gen, a: int):
  shape = gen.shape(a)
  if not shape or (gen.dtype(a) == "bool"): return None
  other = (shape[-1],) if gen.rng.random() < 0.2 else (shape[-1], int(gen.pick([1, 3, 6, 16])))
  return (a, gen.fresh(other, "float32" if gen.gradient or gen.rng.random() < 0.7 else gen.dtype(a))), {}


def conv2d(gen: Gen, a: int):
  shape = gen.shape(a)
  if len(shape) != 4 or not is_float(gen, a) or 0 in shape: return None
  channels = shape[1]
  groups = gen.pick([g for g in (1, 2, 3) if channels % g == 0])
  out_channels = groups * int(gen.rng.integers(1, 4))
  kernel, stride, dilation, padding = gen.pick([1, 2, 3]), gen.pick([1, 1, 2]), gen.pick([1, 1, 2]), gen.pick([0, 0, 1, 2])
  if min(shape[2:]) + 2 * padding - dilation * (kernel - 1) < 1: return None
  weight = gen.fresh((out_channels, channels // groups, kernel, kernel), gen.dtype(a))
  return (a, weight), {"groups": groups, "stride": stride, "dilation": dilation, "padding": padding}


def pool(gen: Gen, a: int):
  shape = gen.shape(a)
  if len(shape) != 4 or not is_float(gen, a) or 0 in shape: return None
  kernel = gen.pick([2, 3])
  stride, padding = gen.pick([1, 2, kernel]), gen.pick([0, 0, 1])
  if min(shape[2:]) + 2 * padding < kernel: return None
  return (a,), {"kernel": kernel, "stride": stride, "padding": padding}


def ref_unary(f: Callable) -> Callable:
  def run(p, dtype, a):
    with np.errstate(all="ignore"): return f(a.astype(dtype))
  return run


def ref_binary(f: Callable) -> Callable:
  def run(p, dtype, a, b):
    with np.errstate(all="ignore"): return f(a.astype(dtype), b.astype(dtype))
  return run


def ref_compare(f: Callable) -> Callable:
  def run(p, dtype, a, b):
    common = promoted(a.dtype, b.dtype)
    return f(a.astype(common), b.astype(common))
  return run


def promoted(x: np.dtype, y: np.dtype) -> np.dtype:
  """The dtype pytc computes a binary op of two tensors in (its promotion lattice)."""
  from pytc.dtype import dtypes, least_upper_dtype
  return np_dtype(least_upper_dtype(*(getattr(dtypes, "bool" if t == np.bool_ else str(t)) for t in (x, y))).name)


def ref_where(p, dtype, a, b, c):
  return np.where(a.astype(np.float64) > b.astype(np.float64), a.astype(dtype), c.astype(dtype))


def ref_reduce(kind: str) -> Callable:
  def run(p, dtype, a):
    axis, keepdim = p.get("axis"), p.get("keepdim", False)
    if kind == "sum": return a.astype(wide(np.dtype(dtype))).sum(axis=axis, keepdims=keepdim).astype(dtype)
    if kind == "mean":  # an integer mean divides the sum in the dtype's sum dtype, wrapped as that sum is (tinygrad's)
      with np.errstate(all="ignore"):
        total = a.astype(np.float64).sum(axis=axis, keepdims=keepdim)
        count = np.float64(a.size // total.size if total.size else 0)  # none: 0 / 0, NaN
        return ((integer_sum(a, axis, keepdim).astype(np.float64) if a.dtype.kind in "iub" else total) / count).astype(dtype)
    return (a.max if kind == "max" else a.min)(axis=axis, keepdims=keepdim).astype(dtype)
  return run


def integer_sum(a: np.ndarray, axis, keepdim: bool) -> np.ndarray:
  """The sum of an integer (or bool) array in pytc's sum dtype for it, wrapping as that dtype does."""
  from pytc.dtype import dtypes, sum_dtype
  accumulate = np_dtype(sum_dtype(getattr(dtypes, "bool" if a.dtype == np.bool_ else str(a.dtype))).name)
  return a.astype(wide(accumulate)).sum(axis=axis, keepdims=keepdim).astype(accumulate)


def ref_cast(p, dtype, a):
  with np.errstate(all="ignore"): return a.astype(dtype)


def ref_to_int(p, dtype, a):
  """A float cast to an integer is clipped into its range first, NaN taken as 0 (C leaves the rest undefined), and rounded
  (floor(x + 0.5)) rather than truncated: a saturating op's result a rounding below an integer (gelu(5)) would truncate to
  either neighbour, while a value a rounding from a half is rarer."""
  return np.floor(np.clip(np.where(np.isnan(a), 0, a), *INT_RANGE[p["to"]]).astype(a.dtype) + np.asarray(0.5, a.dtype)).astype(dtype)


def torch_pool(kind: str):
  def run(p, x):
    import torch
    return (torch.nn.functional.avg_pool2d(x, p["kernel"], p["stride"], p["padding"]) if kind == "avg"
            else torch.nn.functional.max_pool2d(x, p["kernel"], p["stride"], p["padding"]))
  return run


def torch_conv(p, x, w):
  import torch
  return torch.nn.functional.conv2d(x, w, None, p["stride"], p["padding"], p["dilation"], p["groups"])


def torch_gelu(p, x):
  import torch
  return torch.nn.functional.gelu(x, approximate="tanh")


OPS: dict[str, Op] = {
  "neg": Op("-{a}", ref_unary(lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.negative(x)), unary, torch=lambda p, a: -a),
  "abs": Op("{a}.abs()", ref_unary(np.abs), unary),
  "exp": Op("{a}.exp()", ref_unary(np.exp), float_unary, torch=lambda p, a: a.exp()),
  "log": Op("({a}.abs() + 0.5).log()", ref_unary(lambda x: np.log(np.abs(x) + np.asarray(0.5, x.dtype))), float_only),
  "sin": Op("{a}.clip(-10, 10).sin()", ref_unary(lambda x: np.sin(np.clip(x, -10, 10))), float_unary, torch=lambda p, a: a.clip(-10, 10).sin()),
  "tanh": Op("{a}.tanh()", ref_unary(np.tanh), float_unary, torch=lambda p, a: a.tanh()),
  "sigmoid": Op("{a}.sigmoid()", ref_unary(lambda x: 1 / (1 + np.exp(-x))), float_unary, torch=lambda p, a: a.sigmoid()),
  "relu": Op("{a}.relu()", ref_unary(lambda x: np.maximum(x, np.asarray(0, x.dtype))), unary),
  "gelu": Op("{a}.gelu()", ref_unary(np_gelu), float_unary, torch=torch_gelu),
  "sqrt": Op("({a}.square() + 1).sqrt()", ref_unary(lambda x: np.sqrt(x * x + np.asarray(1, x.dtype))), float_only,
             torch=lambda p, a: (a.square() + 1).sqrt()),
  "square": Op("{a}.square()", ref_unary(np.square), unary, torch=lambda p, a: a.square()),
  "add": Op("{a} + {b}", ref_binary(np.add), binary, torch=lambda p, a, b: a + b),
  "sub": Op("{a} - {b}", ref_binary(lambda a, b: a | ~b if a.dtype == np.bool_ else a - b), binary, torch=lambda p, a, b: a - b),
  "mul": Op("{a} * {b}", ref_binary(np.multiply), binary, torch=lambda p, a, b: a * b),
  "div": Op("{a} / ({b}.abs() + 1)", ref_binary(lambda a, b: a / (np.abs(b) + np.asarray(1, b.dtype))), float_binary,
            torch=lambda p, a, b: a / (b.abs() + 1)),
  "maximum": Op("{a}.maximum({b})", ref_binary(np.maximum), binary),
  "scale": Op("{a} * {s}", lambda p, dtype, a: (a.astype(dtype) * np.asarray(p["s"]).astype(dtype)).astype(dtype), scalar,
              torch=lambda p, a: a * p["s"]),
  "floordiv": Op("{a} // ({b} | 1)", ref_binary(lambda a, b: np_floordiv(a, b | np.asarray(1, b.dtype))), integer_binary, smooth=False),
  "mod": Op("{a} % ({b} | 1)", ref_binary(lambda a, b: np_mod(a, b | np.asarray(1, b.dtype))), integer_binary, smooth=False),
  "xor": Op("{a} ^ {b}", ref_binary(np.bitwise_xor), integer_binary, smooth=False),
  "not": Op("~{a}", ref_unary(np.invert), integer_unary, smooth=False),
  "less": Op("{a} < {b}", ref_compare(np.less), binary, smooth=False),
  "equal": Op("{a} == {b}", ref_compare(np.equal), binary, smooth=False),
  "where": Op("({a} > {b}).where({a}, {c})", ref_where, ternary, torch=lambda p, a, b, c: __import__("torch").where(a > b, a, c)),
  "cast": Op("{a}.cast(dtypes.{to})", ref_cast, cast, smooth=False),
  "to_int": Op("(({a} != {a}).where(0, {a}).clip({low}, {high}) + 0.5).floor().cast(dtypes.{to})", ref_to_int, to_int, smooth=False),
  "sum": Op("{a}.sum(axis={axis}, keepdim={keepdim})", ref_reduce("sum"), reduce_axis,
            torch=lambda p, a: a.sum(dim=tuple(range(a.ndim)) if p["axis"] is None else p["axis"], keepdim=p["keepdim"])),
  "mean": Op("{a}.mean(axis={axis}, keepdim={keepdim})", ref_reduce("mean"), reduce_axis),
  "max": Op("{a}.max(axis={axis}, keepdim={keepdim})", ref_reduce("max"), lambda g, a: nonempty_axis(g, a) and ((a,), {
    "axis": g.axis(a), "keepdim": bool(g.rng.random() < 0.4)})),
  "argmax": Op("{a}.argmax(axis={axis})", lambda p, dtype, a: np.argmax(a, axis=p["axis"]).astype(dtype), nonempty_axis, smooth=False),
  "cumsum": Op("{a}.cumsum({axis})", lambda p, dtype, a: np.cumsum(a.astype(wide(np.dtype(dtype))), axis=p["axis"]).astype(dtype), cumsum,
               torch=lambda p, a: a.cumsum(p["axis"])),
  "softmax": Op("{a}.softmax({axis})", lambda p, dtype, a: np_softmax(a.astype(np.float64), p["axis"], False).astype(dtype), float_axis,
                torch=lambda p, a: a.softmax(p["axis"])),
  "log_softmax": Op("{a}.log_softmax({axis})", lambda p, dtype, a: np_softmax(a.astype(np.float64), p["axis"], True).astype(dtype),
                    float_axis, torch=lambda p, a: a.log_softmax(p["axis"])),
  "reshape": Op("{a}.reshape({shape})", lambda p, dtype, a: a.reshape(p["shape"]).astype(dtype), reshape,
                torch=lambda p, a: a.reshape(p["shape"])),
  "permute": Op("{a}.permute({order})", lambda p, dtype, a: a.transpose(p["order"]).astype(dtype), permute,
                torch=lambda p, a: a.permute(p["order"])),
  "expand": Op("{a}.expand({shape})", lambda p, dtype, a: np.broadcast_to(a, p["shape"]).astype(dtype), expand,
               torch=lambda p, a: a.expand(p["shape"])),
  "pad": Op("{a}.pad({padding})", lambda p, dtype, a: np.pad(a, p["padding"]).astype(dtype), pad,
            torch=lambda p, a: __import__("torch").nn.functional.pad(a, [n for pair in reversed(p["padding"]) for n in pair])),
  "shrink": Op("{a}.shrink({bounds})", lambda p, dtype, a: a[tuple(slice(s, e) for s, e in p["bounds"])].astype(dtype), shrink,
               torch=lambda p, a: a[tuple(slice(s, e) for s, e in p["bounds"])]),
  "flip": Op("{a}.flip({axis})", lambda p, dtype, a: np.flip(a, p["axis"]).astype(dtype), flip, torch=lambda p, a: a.flip(p["axis"])),
  "slice": Op("{a}[{index}]", lambda p, dtype, a: np.asarray(eval(f"a[{p['index']}]", {"a": a})).astype(dtype), strided),
  "cat": Op("{a}.cat({b}, dim={axis})", lambda p, dtype, a, b: np.concatenate([a.astype(dtype), b.astype(dtype)], p["axis"]), cat,
            torch=lambda p, a, b: __import__("torch").cat([a, b], p["axis"])),
  "repeat": Op("{a}.repeat({repeats})", lambda p, dtype, a: np.tile(a, p["repeats"]).astype(dtype), repeat,
               torch=lambda p, a: a.repeat(p["repeats"])),
  "take": Op("{a}[{b}]", lambda p, dtype, a, b: a[b].astype(dtype), take, torch=lambda p, a, b: a[b]),
  "gather": Op("{a}.gather({axis}, {b})", lambda p, dtype, a, b: np.take_along_axis(a, b, p["axis"]).astype(dtype), gather,
               torch=lambda p, a, b: a.gather(p["axis"], b)),
  "matmul": Op("{a} @ {b}", lambda p, dtype, a, b: np.matmul(a.astype(wide(np.dtype(dtype))), b.astype(wide(np.dtype(dtype)))).astype(dtype),
               matmul, torch=lambda p, a, b: a @ b),
  "conv2d": Op("{a}.conv2d({b}, groups={groups}, stride={stride}, dilation={dilation}, padding={padding})",
               lambda p, dtype, a, b: np_conv2d(a.astype(np.float64), b.astype(np.float64), p["groups"], p["stride"], p["dilation"],
                                                p["padding"]).astype(dtype), conv2d, torch=torch_conv),
  "max_pool2d": Op("{a}.max_pool2d({kernel}, stride={stride}, padding={padding})",
                   lambda p, dtype, a: np_pool(a, p["kernel"], p["stride"], p["padding"], "max").astype(dtype), pool),
  "avg_pool2d": Op("{a}.avg_pool2d({kernel}, stride={stride}, padding={padding})",
                   lambda p, dtype, a: np_pool(a.astype(np.float64), p["kernel"], p["stride"], p["padding"], "avg").astype(dtype), pool,
                   torch=torch_pool("avg")),
}
SMOOTH = [name for name, op in OPS.items() if op.smooth]


# *** making a program ***

def generate(seed: int) -> Program:
  """The program of `seed`: the same on every run of the same pytc."""
  rng = np.random.default_rng(seed)
  gradient = bool(rng.random() < 0.4)
  gen = Gen(rng, gradient, special=not gradient and bool(rng.random() < 0.15))
  rank = int(rng.choice([0, 1, 2, 3, 4, 4], p=[0.05, 0.15, 0.2, 0.2, 0.2, 0.2]))
  dims = [1, 1, 2, 3, 4, 5, 7, 8] + ([0] if not gradient and rng.random() < 0.3 else [])
  first = Input(tuple(int(rng.choice(dims)) for _ in range(rank)), "float32" if gradient else gen.pick(DTYPES),
                "special" if gen.special else "normal")
  gen.nodes.append(first)
  gen.tensors.append(lazy_input(first))
  names = SMOOTH if gradient else list(OPS)
  for _ in range(int(rng.integers(3, 13))):
    for _ in range(20):
      a = len(gen.nodes) - 1 if rng.random() < 0.7 else int(rng.integers(len(gen.nodes)))
      gen.pending = []
      if (proposal := OPS[name := gen.pick(names)].propose(gen, a)) is None: continue
      if take_step(gen, name, *proposal): break
  last = len(gen.nodes) - 1
  steps = [i for i, node in enumerate(gen.nodes) if isinstance(node, Step) and i != last]
  also = gen.pick(steps) if not gradient and steps and rng.random() < 0.3 else None
  return Program(seed, tuple(gen.nodes), last, gradient, also)


def take_step(gen: Gen, name: str, args: tuple[int, ...], params: dict[str, object]) -> bool:
  """Add the proposed step after its fresh inputs; False (nothing added) when its value would be too large to check."""
  from pytc import Tensor, dtypes
  tensors = gen.tensors + [lazy_input(i) for i in gen.pending]
  step = Step(name, args, tuple((k, repr(v)) for k, v in sorted(params.items())), (), "")
  value = eval(expression_of(step, lambda v: f"v{v}"), {"Tensor": Tensor, "dtypes": dtypes}, {f"v{i}": t for i, t in enumerate(tensors)})
  if prod(value.shape) > 4096: return False
  gen.nodes += gen.pending + [replace(step, shape=tuple(value.shape), dtype=value.dtype.name)]
  gen.tensors = tensors + [value]
  return True


def lazy_input(inp: Input):
  from pytc import Tensor
  return Tensor.empty(*inp.shape, dtype=inp.dtype)


def expression_of(step: Step, name: Callable[[int], str]) -> str:
  """The step's Python source, its values named by `name`."""
  params = {k: (value if isinstance(value := ast.literal_eval(v), str) else repr(value)) for k, v in step.params}
  return OPS[step.op].source.format(**dict(zip("abc", map(name, step.args))), **params)


def input_values(program: Program, number: int) -> np.ndarray:
  inp = program.nodes[number]
  rng = np.random.default_rng([program.seed, inp.draw])
  if inp.kind.startswith("index:"): return np.asarray(rng.integers(0, int(inp.kind[6:]), inp.shape), np.int32)
  if inp.dtype in FLOATS:
    values = np.asarray(rng.standard_normal(inp.shape) * rng.choice([1.0, 3.0]))
    if inp.kind == "special" and values.size:
      flat = values.reshape(-1)
      picks = rng.integers(0, flat.size, max(1, flat.size // 4))
      flat[picks] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0], picks.size)
    return values.astype(inp.dtype)
  if inp.dtype == "bool": return np.asarray(rng.random(inp.shape) < 0.5)
  low, high = (0, 255) if np.dtype(inp.dtype).kind == "u" else (-50, 50)
  return np.asarray(rng.integers(low, high, size=inp.shape, endpoint=True), inp.dtype)


# *** checking a program ***

class Mismatch(AssertionError):
  """pytc's values differ from the reference's."""


class ReferenceError(Exception):
  """The NumPy reference could not compute the program: a fault of the fuzzer, not of pytc."""


def evaluate(program: Program, arrays: dict[int, np.ndarray], float64: bool = False) -> list[np.ndarray]:
  """The reference's value of every node (the inputs' are `arrays`), float32 steps in float64 when `float64`."""
  values: list[np.ndarray] = []
  for step in program.nodes:
    if isinstance(step, Input):
      values.append(arrays[len(values)])
      continue
    dtype = np.dtype(np.float64) if float64 and step.dtype == "float32" else np_dtype(step.dtype)
    params = {k: ast.literal_eval(v) for k, v in step.params}
    values.append(np.asarray(OPS[step.op].numpy(params, dtype, *(values[a] for a in step.args))).astype(dtype))
  return values


def tolerance(program: Program, number: int) -> float:
  """The relative tolerance of a value: its own float dtype's, or a less precise one's that it was computed from (a float16
  result cast to float32 carries float16's rounding)."""
  tolerances, stack, seen = [TOLERANCE.get(program.nodes[number].dtype, 0.0)], [number], set()
  while stack:
    if (n := stack.pop()) in seen: continue
    seen.add(n)
    tolerances.append(TOLERANCE.get(program.nodes[n].dtype, 0.0))
    if isinstance(node := program.nodes[n], Step): stack.extend(node.args)
  return max(tolerances)


def compare(name: str, ours: np.ndarray, reference: np.ndarray, dtype: str, relative: float) -> None:
  if ours.shape != reference.shape: raise Mismatch(f"{name}: shape {ours.shape}, the reference's {reference.shape}")
  if dtype not in FLOATS:
    if not np.array_equal(ours, reference):
      where = np.argwhere(ours != reference)[0]
      raise Mismatch(f"{name} ({dtype}): {ours[tuple(where)]!r} at {tuple(where)}, the reference's {reference[tuple(where)]!r}")
    return
  ours, reference = ours.astype(np.float64), reference.astype(np.float64)
  finite = np.isfinite(reference)
  scale = max(1.0, float(np.abs(reference[finite]).max())) if finite.any() else 1.0
  with np.errstate(invalid="ignore"):
    wrong = ~((ours == reference) | (np.isnan(ours) & np.isnan(reference)) | (np.abs(ours - reference) <= relative * scale))
  if wrong.any():
    where = tuple(np.argwhere(wrong)[0])
    raise Mismatch(f"{name} ({dtype}): {ours[where]!r} at {where}, the reference's {reference[where]!r} ({int(wrong.sum())} of {wrong.size} differ)")


def run_pytc(program: Program, arrays: dict[int, np.ndarray]) -> dict[str, object]:
  """The program's values as pytc Tensors, not realized, by name (v0, v1, ...)."""
  from pytc import Tensor, dtypes
  differentiated, env = differentiated_inputs(program), {}
  for number, node in enumerate(program.nodes):
    if isinstance(node, Input): env[f"v{number}"] = Tensor(arrays[number], requires_grad=True if number in differentiated else None)
    else: env[f"v{number}"] = eval(expression_of(node, lambda v: f"v{v}"), {"Tensor": Tensor, "dtypes": dtypes}, env)
  return env


def differentiated_inputs(program: Program) -> list[int]:
  return [i for i in program.inputs() if program.gradient and program.nodes[i].dtype == "float32" and program.nodes[i].kind == "normal"]


def output_weight(program: Program) -> np.ndarray:
  return np.random.default_rng([program.seed, 1 << 20]).standard_normal(program.nodes[program.output].shape)


def check(program: Program) -> None:
  """Raise Mismatch where pytc and the reference disagree (any other exception is pytc's own)."""
  from pytc import Tensor
  arrays = {i: input_values(program, i) for i in program.inputs()}
  try: reference = evaluate(program, arrays)
  except Exception as error: raise ReferenceError(f"{type(error).__name__}: {error}") from error
  env = run_pytc(program, arrays)
  out = env[f"v{program.output}"]
  outputs = [out] + ([env[f"v{program.also}"]] if program.also is not None else [])
  differentiated = differentiated_inputs(program)
  grads = []
  if program.gradient:
    grads = (out * Tensor(output_weight(program).astype(np.float32))).sum().gradient(*[env[f"v{i}"] for i in differentiated])
  Tensor.realize(*outputs, *grads)
  for value, tensor in zip([program.output, program.also], outputs):
    compare(f"v{value}", tensor.numpy(), reference[value], program.nodes[value].dtype, tolerance(program, value))
  overflowed = any(node.dtype in FLOATS and not np.isfinite(value).all() for node, value in zip(program.nodes, reference))
  if grads and not overflowed:  # past float32's range a gradient is inf or NaN where float64's differences are not
    ours = [g.numpy().astype(np.float64) for g in grads]
    terms = evaluate(program, {i: a.astype(np.float64) if i in differentiated else a for i, a in arrays.items()}, float64=True)[program.output]
    rounding = 1e-6 * float(np.abs(terms * output_weight(program)).sum())  # float32's rounding of the loss's terms
    check_finite_differences(program, arrays, differentiated, ours, rounding)
    check_torch(program, arrays, differentiated, ours, rounding)


def check_finite_differences(program: Program, arrays: dict[int, np.ndarray], differentiated: list[int], grads: list[np.ndarray],
                             rounding: float) -> None:
  """At sampled elements; a gradient may be off by `rounding`, float32's rounding of the loss's terms (a sum of softmax rows,
  whose gradient is 0, computed as differences of terms as large as the loss)."""
  weight = output_weight(program)
  base = {i: a.astype(np.float64) if i in differentiated else a for i, a in arrays.items()}
  def loss(values: dict[int, np.ndarray]) -> float: return float((evaluate(program, values, float64=True)[program.output] * weight).sum())
  rng = np.random.default_rng([program.seed, 1 << 21])
  for i, grad in zip(differentiated, grads):
    if grad.shape != base[i].shape: raise Mismatch(f"gradient of v{i}: shape {grad.shape}, the input's {base[i].shape}")
    samples = rng.choice(base[i].size, min(base[i].size, 6), replace=False) if base[i].size else []
    for flat in samples:
      where = np.unravel_index(int(flat), base[i].shape)
      x, h = base[i][where], 1e-6 * max(1.0, abs(float(base[i][where])))
      at = [loss(perturbed(base, i, where, x + d)) for d in (-h, 0.0, h)]
      backward, forward = (at[1] - at[0]) / h, (at[2] - at[1]) / h
      if abs(forward - backward) > 1e-4 * (1 + abs(forward) + abs(backward)): continue  # a kink or a jump within h
      central = (at[2] - at[0]) / (2 * h)
      if not abs(grad[where] - central) <= GRAD_TOLERANCE * (1 + abs(central)) + rounding:
        raise Mismatch(f"gradient of v{i} at {tuple(int(w) for w in where)}: {grad[where]!r}, finite differences {central!r}")


def perturbed(values: dict[int, np.ndarray], i: int, where: tuple, x: float) -> dict[int, np.ndarray]:
  copy = values[i].copy()
  copy[where] = x
  return {**values, i: copy}


def check_torch(program: Program, arrays: dict[int, np.ndarray], differentiated: list[int], grads: list[np.ndarray], rounding: float) -> None:
  """pytc's gradients against torch's autograd in float64, when torch is installed and every step has a torch form."""
  if any(isinstance(s, Step) and OPS[s.op].torch is None for s in program.nodes): return
  try:
    import torch
  except ImportError: return
  values = []
  for number, node in enumerate(program.nodes):
    if isinstance(node, Input):
      a = arrays[number]
      values.append(torch.tensor(a.astype(np.float64) if number in differentiated else a.astype(np.int64) if a.dtype.kind in "iu" else a,
                                 requires_grad=number in differentiated))
    else:
      try: values.append(OPS[node.op].torch({k: ast.literal_eval(v) for k, v in node.params}, *(values[a] for a in node.args)))
      except Exception as error: raise ReferenceError(f"torch: {type(error).__name__}: {error}") from error
  if not values[program.output].requires_grad: return
  (values[program.output] * torch.tensor(output_weight(program))).sum().backward()
  for i, grad in zip(differentiated, grads):
    theirs = values[i].grad.numpy() if values[i].grad is not None else np.zeros_like(grad)
    atol = GRAD_TOLERANCE * max(1.0, float(np.abs(theirs).max(initial=0))) + rounding
    if not np.allclose(grad, theirs, atol=atol, rtol=GRAD_TOLERANCE):
      where = tuple(np.argwhere(~np.isclose(grad, theirs, atol=atol, rtol=GRAD_TOLERANCE))[0])
      raise Mismatch(f"gradient of v{i} at {where}: {grad[where]!r}, torch's {theirs[where]!r}")


# *** printing a program ***

def literal(array: np.ndarray) -> str:
  """A NumPy expression that makes `array` exactly."""
  def item(x) -> str:
    if array.dtype.kind == "b": return repr(bool(x))
    if array.dtype.kind in "iu": return repr(int(x))
    return "np.nan" if np.isnan(x) else ("np.inf" if x > 0 else "-np.inf") if np.isinf(x) else repr(float(x))
  flat = ", ".join(item(x) for x in array.reshape(-1))
  return f"np.array([{flat}], dtype=np.{np.dtype(array.dtype).name}).reshape({tuple(array.shape)})"


def python_source(program: Program) -> str:
  """The program as a Python script that runs it on pytc and prints what the fuzzer compared."""
  lines = ["import numpy as np", "from pytc import Tensor, dtypes", ""]
  differentiated = differentiated_inputs(program)
  for number, node in enumerate(program.nodes):
    if isinstance(node, Input):
      grad = ", requires_grad=True" if number in differentiated else ""
      lines.append(f"v{number} = Tensor({literal(input_values(program, number))}{grad})")
    else: lines.append(f"v{number} = {expression_of(node, lambda v: f'v{v}')}")
  out = f"v{program.output}"
  if program.gradient:
    lines.append(f"w = Tensor({literal(output_weight(program).astype(np.float32))})")
    lines.append(f"grads = ({out} * w).sum().gradient({', '.join(f'v{i}' for i in differentiated)})")
    lines.append(f"Tensor.realize({out}, *grads)")
    lines.append(f"print({out}.numpy(), *(g.numpy() for g in grads))")
  else:
    realized = [out] + ([f"v{program.also}"] if program.also is not None else [])
    lines.append(f"Tensor.realize({', '.join(realized)})")
    lines.append(f"print({', '.join(f'{v}.numpy()' for v in realized)})")
  return "\n".join(lines)


def describe(program: Program) -> str:
  kinds = " ".join(f"{node.op}" for node in program.nodes if isinstance(node, Step))
  return f"{'gradient' if program.gradient else 'forward'}: {kinds}"


# *** workers: one program a request, in a process of its own ***

def encode(program: Program) -> str:
  nodes = [{"input": [list(n.shape), n.dtype, n.kind, n.draw]} if isinstance(n, Input) else
           {"step": [n.op, list(n.args), [list(p) for p in n.params], list(n.shape), n.dtype]} for n in program.nodes]
  return json.dumps({"seed": program.seed, "nodes": nodes, "output": program.output, "gradient": program.gradient, "also": program.also})


def decode(text: str) -> Program:
  data = json.loads(text)
  nodes = tuple(Input(tuple(n["input"][0]), *n["input"][1:]) if "input" in n else
                Step(n["step"][0], tuple(n["step"][1]), tuple(tuple(p) for p in n["step"][2]), tuple(n["step"][3]), n["step"][4])
                for n in data["nodes"])
  return Program(data["seed"], nodes, data["output"], data["gradient"], data["also"])


def outcome(program: Program) -> tuple[str, str]:
  """("pass", ""), ("mismatch", message), ("error", "ExceptionType: message") from pytc, or ("reference", message)."""
  try: check(program)
  except Mismatch as error: return "mismatch", str(error)
  except ReferenceError as error: return "reference", str(error)[:400]
  except Exception as error: return "error", f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:400]
  return "pass", ""


def worker() -> None:
  """Read programs (JSON lines; "seed N" makes one) from stdin and answer each with a JSON line on the original stdout;
  anything pytc prints goes to stderr."""
  answers = os.fdopen(os.dup(1), "w")
  os.dup2(2, 1)
  for line in sys.stdin:
    program = generate(int(line.split()[1])) if line.startswith("seed ") else decode(line)
    status, message = outcome(program)
    answers.write(json.dumps({"status": status, "message": message, "program": encode(program) if status != "pass" else None}) + "\n")
    answers.flush()


class Worker:
  """A `python -m pytc.fuzz --worker` child; a request that kills it or outlives `timeout` is a crash or a hang."""
  def __init__(self, timeout: float):
    self.timeout, self.process = timeout, None

  def ask(self, request: str) -> dict:
    if self.process is None:
      self.process = subprocess.Popen([sys.executable, "-m", "pytc.fuzz", "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True, bufsize=1)
    self.process.stdin.write(request + "\n")
    self.process.stdin.flush()
    ready, _, _ = select.select([self.process.stdout], [], [], self.timeout)
    answer = self.process.stdout.readline() if ready else ""
    if answer: return json.loads(answer)
    status = "hang" if not ready else f"crash (exit {self.process.wait()})"
    self.close()
    return {"status": status, "message": f"the worker {'took over ' + str(self.timeout) + ' s' if status == 'hang' else 'died'}",
            "program": None}

  def close(self) -> None:
    if self.process is not None:
      self.process.kill()
      self.process.wait()
      self.process = None


def same_failure(a: dict, b: dict) -> bool:
  """Whether two answers fail alike: the same status (and exception type, for errors)."""
  if a["status"] != b["status"]: return False
  return a["status"] != "error" or a["message"].split(":")[0] == b["message"].split(":")[0]


# *** shrinking ***

def without_unused(program: Program) -> Program:
  """Drop the nodes the output (and `also`) do not depend on, renumbering the rest."""
  needed, stack = set(), [program.output] + ([program.also] if program.also is not None else [])
  while stack:
    if (n := stack.pop()) in needed: continue
    needed.add(n)
    if isinstance(node := program.nodes[n], Step): stack.extend(node.args)
  order = sorted(needed)
  number = {old: new for new, old in enumerate(order)}
  nodes = tuple(replace(n, args=tuple(number[a] for a in n.args)) if isinstance(n, Step) else n for n in (program.nodes[i] for i in order))
  return replace(program, nodes=nodes, output=number[program.output], also=None if program.also is None else number[program.also])


def candidates(program: Program):
  """Smaller programs: the output moved to an earlier step, `also` dropped, a step bypassed (its uses read its first operand,
  where that has its shape and dtype)."""
  if program.also is not None: yield replace(program, also=None)
  steps = [i for i, n in enumerate(program.nodes) if isinstance(n, Step)]
  for i in steps:
    if i < program.output and (not program.gradient or program.nodes[i].dtype == "float32"): yield replace(program, output=i, also=None)
  for i in reversed(steps):
    node = program.nodes[i]
    source = program.nodes[node.args[0]]
    if source.shape != node.shape or source.dtype != node.dtype or i in (program.output, program.also): continue
    yield replace(program, nodes=tuple(replace(n, args=tuple(node.args[0] if a == i else a for a in n.args)) if isinstance(n, Step) else n
                                       for n in program.nodes))


def shrink(program: Program, failure: dict, worker: Worker, budget: int = 60) -> Program:
  """The smallest program found (within `budget` runs) that fails as `program` does."""
  program = without_unused(program)
  improved = True
  while improved and budget > 0:
    improved = False
    for candidate in candidates(program):
      candidate = without_unused(candidate)
      if len(candidate.nodes) > len(program.nodes) or candidate == program: continue
      budget -= 1
      if same_failure(worker.ask(encode(candidate)), failure):
        program, improved = candidate, True
        break
      if budget <= 0: break
  return program


# *** the command ***

def parse_seeds(text: str) -> range:
  start, _, end = text.partition(":")
  return range(int(start), int(end)) if end else range(int(start), int(start) + 1)


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(prog="python -m pytc.fuzz", description=__doc__.split("\n\n")[2].replace("\n", " "))
  parser.add_argument("--seeds", default="0:100", help="a seed or a range A:B of seeds (default 0:100)")
  parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="worker processes (default: 2 or the cores)")
  parser.add_argument("--timeout", type=float, default=300, help="seconds a program may take before it counts as a hang")
  parser.add_argument("--no-shrink", action="store_true", help="report failing programs as generated")
  parser.add_argument("--print", action="store_true", help="print each seed's program as Python instead of running it")
  parser.add_argument("-v", "--verbose", action="store_true", help="one line per seed")
  parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  os.environ.setdefault("PYTC_CHECK_FORMS", "1")  # every pass checks what the one before it left (the workers inherit it)
  if args.worker:
    worker()
    return 0
  seeds = parse_seeds(args.seeds)
  if args.print:
    for seed in seeds: print(f"# seed {seed}: {describe(generate(seed))}\n{python_source(generate(seed))}\n")
    return 0
  failures, started = run_seeds(seeds, args.workers, args.timeout, args.verbose), time.time()
  for seed, answer in failures:
    program = generate(seed) if answer["program"] is None else decode(answer["program"])
    if not args.no_shrink:
      shrinker = Worker(args.timeout)
      program = shrink(program, answer, shrinker)
      shrinker.close()
    print(f"\nFAIL seed {seed} ({answer['status']}): {answer['message']}\n{describe(program)}\n{python_source(program)}")
  print(f"\npytc.fuzz: {len(seeds) - len(failures)} of {len(seeds)} seeds passed ({args.seeds}), {time.time() - started:.0f} s shrinking")
  return 1 if failures else 0


def run_seeds(seeds: range, workers: int, timeout: float, verbose: bool) -> list[tuple[int, dict]]:
  """Every seed through a pool of workers, in order of completion; the failures by seed."""
  pool = [Worker(timeout) for _ in range(max(1, workers))]
  todo, failures = list(seeds), []
  with concurrent.futures.ThreadPoolExecutor(len(pool)) as executor:
    free = list(pool)
    def run(seed: int) -> tuple[int, dict]:
      worker = free.pop()
      try: return seed, worker.ask(f"seed {seed}")
      finally: free.append(worker)
    for seed, answer in executor.map(run, todo):
      if verbose or answer["status"] != "pass": print(f"seed {seed}: {answer['status']} {answer['message']}", flush=True)
      if answer["status"] != "pass": failures.append((seed, answer))
  for worker in pool: worker.close()
  return failures


if __name__ == "__main__":
  sys.exit(main())
