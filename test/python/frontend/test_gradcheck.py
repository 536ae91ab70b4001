"""Gradients of every differentiable Tensor op, in float64: against derivatives written in NumPy at ordinary and edge
inputs (exact zeros, ties, kinks, +-1e3, +-1e30, NaN), and against central finite differences of pytc's own forward pass
at ordinary inputs, one op at a time and in composite graphs."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from pytc import Tensor, dtypes, gradient

rng = np.random.default_rng(0)
ZERO = np.array([0.0, -0.0, 0.0, 1.0, -1.0, 0.5])
LARGE = np.array([1e3, -1e3, 1e30, -1e30, 1e3, -1e30])
NANS = np.array([math.nan, 0.5, -1.5, math.nan, 2.0, -0.25])
CLOSE = (1e-7, 1e-9)       # against the NumPy reference
FD_TOL = (1e-5, 1e-6)      # against finite differences
FD_SAMPLES = 8             # elements per input checked by finite differences


@dataclass
class Edge:
  """A dataset with the ordinary inputs' shapes. mode: "close" (values match the reference), "finite" (finite where the
  reference is), "nan" (NaN where the reference is NaN; other gradients at NaN inputs are implementation-defined)."""
  name: str
  inputs: list[np.ndarray]
  mode: str = "close"


@dataclass
class Spec:
  """`reference(weight, *inputs)`: the gradient of (output * weight).sum() for each input, None for those never differentiated."""
  name: str
  ours: Callable[..., Tensor]
  reference: Callable[..., list[np.ndarray | None]]
  inputs: list[np.ndarray]   # float64 inputs are differentiated (except those in `constant`); integer and bool ones never
  edges: list[Edge] = field(default_factory=list)
  tol: tuple[float, float] = CLOSE
  constant: tuple[int, ...] = ()

  def differentiated(self, arrays) -> list[int]:
    return [i for i, a in enumerate(arrays) if a.dtype == np.float64 and i not in self.constant]


def normal(*shape, scale: float = 1.0) -> np.ndarray: return rng.standard_normal(shape) * scale
def uniform(lo: float, hi: float, *shape) -> np.ndarray: return rng.uniform(lo, hi, shape)
def away(x: np.ndarray, points=(0.0,), gap: float = 0.15) -> np.ndarray:
  """x with every element moved at least `gap` away from each kink in `points`."""
  x = np.array(x, dtype=np.float64)
  for p in points:
    near = np.abs(x - p) < gap
    x[near] = p + np.where(x[near] >= p, gap, -gap)
  return x
def distinct(*shape) -> np.ndarray:
  """Values with no ties, at least 0.1 apart."""
  return rng.permutation(np.arange(math.prod(shape)) * 0.37 - 1.5).reshape(shape)


def weight_like(shape) -> np.ndarray:
  """The upstream gradient: fixed, non-uniform, never zero."""
  return (np.cos(np.arange(math.prod(shape)) * 1.3 + 0.5) + 1.5).reshape(shape)


# *** NumPy references ***

def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
  """grad summed over the dimensions an input of `shape` was broadcast along."""
  grad = grad.sum(tuple(range(grad.ndim - len(shape))))
  return grad.sum(tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True).reshape(shape)


def pointwise(*partials: Callable | None) -> Callable:
  """The reference of an elementwise op from its partial derivatives, one per input (None: never differentiated)."""
  def grads(weight, *xs):
    return [None if d is None else unbroadcast(np.broadcast_to(weight * d(*xs), weight.shape), x.shape) for d, x in zip(partials, xs)]
  return grads


def unit_responses(forward: Callable, xs: list[np.ndarray], i: int, weight: np.ndarray) -> np.ndarray:
  """For each element j of input i: the weighted change of the output when a unit is added at j (the others held)."""
  def at(v): return forward(*xs[:i], v, *xs[i + 1:])
  base, x = at(np.zeros_like(xs[i])), xs[i]
  return np.array([(weight * (at(unit) - base)).sum() for unit in np.eye(x.size).reshape(x.size, *x.shape)]).reshape(x.shape)


def affine(forward: Callable) -> Callable:
  """The reference of an op that is affine in each float input while the others are held (movement, sums, products of
  tensors, convolutions): its gradient is exactly the weighted unit responses."""
  def grads(weight, *xs): return [unit_responses(forward, list(xs), i, weight) if x.dtype == np.float64 else None for i, x in enumerate(xs)]
  return grads


def kept(weight: np.ndarray, x: np.ndarray, axis: int | None) -> np.ndarray:
  """The upstream gradient of a reduction of x over `axis`, with the reduced dimensions kept."""
  return weight.reshape((1,) * x.ndim) if axis is None else np.expand_dims(weight, axis)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
  e = np.exp(x - x.max(axis, keepdims=True))
  return e / e.sum(axis, keepdims=True)


def sigmoid(x: np.ndarray) -> np.ndarray: return 1 / (1 + np.exp(-x))


def np_conv2d(x, w, bias=None, stride=1, dilation=1, padding=0, groups=1) -> np.ndarray:
  x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
  (n, channels, h, width), (o, _, kh, kw) = x.shape, w.shape
  oh, ow = (h - dilation * (kh - 1) - 1) // stride + 1, (width - dilation * (kw - 1) - 1) // stride + 1
  xg, wg, out = x.reshape(n, groups, channels // groups, h, width), w.reshape(groups, o // groups, -1, kh, kw), 0.0
  for i, j in np.ndindex(kh, kw):
    patch = xg[..., i * dilation:i * dilation + stride * (oh - 1) + 1:stride, j * dilation:j * dilation + stride * (ow - 1) + 1:stride]
    out = out + np.einsum("ngchw,goc->ngohw", patch, wg[..., i, j])
  return out.reshape(n, o, oh, ow) + (0 if bias is None else bias.reshape(1, -1, 1, 1))


def np_conv_transpose2d(x, w, stride, padding) -> np.ndarray:
  (n, _, h, width), (_, o, kh, kw) = x.shape, w.shape
  out = np.zeros((n, o, (h - 1) * stride + kh, (width - 1) * stride + kw))
  for i, j in np.ndindex(kh, kw):
    out[:, :, i:i + stride * (h - 1) + 1:stride, j:j + stride * (width - 1) + 1:stride] += np.einsum("nchw,co->nohw", x, w[..., i, j])
  return out[:, :, padding:out.shape[2] - padding, padding:out.shape[3] - padding]


def windows(x: np.ndarray, kernel: int, stride: int, padding: int, value: float) -> tuple[np.ndarray, np.ndarray]:
  """x padded with `value` and its pooling windows (..., out_h, out_w, kernel, kernel), a view of the padded array."""
  padded = np.pad(x, ((0, 0),) * (x.ndim - 2) + ((padding, padding),) * 2, constant_values=value)
  return padded, np.lib.stride_tricks.sliding_window_view(padded, (kernel, kernel), (-2, -1))[..., ::stride, ::stride, :, :]


def avg_pool(x: np.ndarray, kernel: int, stride: int, padding: int = 0) -> np.ndarray:
  return windows(x, kernel, stride, padding, 0.0)[1].mean((-2, -1))


# *** running a group ***

def ours_loss(spec: Spec, arrays) -> tuple[Tensor, list[Tensor], np.ndarray]:
  """(output * weight).sum() of pytc's op, its inputs, and the weight (shaped as pytc's output)."""
  xs = [Tensor(a) if a.dtype == np.float64 else Tensor(a.astype(np.int32) if a.dtype.kind in "iu" else a) for a in arrays]
  out = spec.ours(*xs)
  weight = weight_like(out.shape)
  return (out * Tensor(weight)).sum(), xs, weight


def reference_grads(spec: Spec, arrays, weight: np.ndarray) -> list[np.ndarray]:
  with np.errstate(all="ignore"): grads = spec.reference(weight, *arrays)
  return [np.asarray(grads[i], dtype=np.float64) for i in spec.differentiated(arrays)]


def compare(got: np.ndarray, want: np.ndarray, mode: str, tol: tuple[float, float]) -> str | None:
  if got.shape != want.shape: return f"shape {got.shape} != {want.shape}"
  with np.errstate(all="ignore"):
    close = (got == want) | (np.abs(got - want) <= tol[1] + tol[0] * np.abs(want))
    got_nan, want_nan = np.isnan(got), np.isnan(want)
    if mode == "finite": bad = np.isfinite(want) & ~np.isfinite(got)
    elif mode == "nan": bad = want_nan & ~got_nan
    else: bad = ~(close | (got_nan & want_nan))
  if not bad.any(): return None
  where = list(zip(*np.nonzero(bad))) if want.ndim else [()]
  shown = "; ".join(f"at {tuple(int(i) for i in index)} got {got[index]:.6g} want {want[index]:.6g}" for index in where[:3])
  return f"{int(bad.sum())}/{bad.size} wrong: {shown}"


def first_line(e: Exception) -> str: return f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:200]}"


def datasets(spec: Spec) -> list[Edge]: return [Edge("ordinary", spec.inputs)] + spec.edges


def run_gradients(specs: list[Spec]) -> list[str]:
  """Each dataset index: every spec's gradients built, realized together, compared with the NumPy reference. Specs with
  fewer datasets run their ordinary inputs again, so every index has the structure of the first and reuses its schedule."""
  problems: list[str] = []
  count = max(len(datasets(s)) for s in specs)
  broken: set[str] = set()
  ordinary: dict[str, list[np.ndarray]] = {}
  for d in range(count):
    built = []
    for spec in specs:
      if spec.name in broken: continue
      sets = datasets(spec)
      edge, repeat = (sets[d], False) if d < len(sets) else (sets[0], True)
      try:
        loss, xs, weight = ours_loss(spec, edge.inputs)
        grads = loss.gradient(*[xs[i] for i in spec.differentiated(edge.inputs)])
      except Exception as e:
        problems.append(f"{spec.name}: building the gradient raised {first_line(e)}")
        broken.add(spec.name)
        continue
      try: want = reference_grads(spec, edge.inputs, weight)
      except Exception as e: raise AssertionError(f"{spec.name} [{edge.name}]: the NumPy reference raised {first_line(e)}") from e
      built.append((spec, edge, repeat, grads, want))
    batch_error = None
    try: Tensor.realize(*[g for *_, grads, _ in built for g in grads])
    except Exception as e: batch_error = first_line(e)
    for spec, edge, repeat, grads, want in built:
      if repeat: continue
      try: got = [g.numpy() for g in grads]
      except Exception as e:
        problems.append(f"{spec.name} [{edge.name}]: realizing raised {first_line(e)}" + (f" (with the group: {batch_error})" if batch_error else ""))
        broken.add(spec.name)
        continue
      if d == 0: ordinary[spec.name] = got
      for i, g, w in zip(spec.differentiated(edge.inputs), got, want):
        if (found := compare(g, w, edge.mode, spec.tol)) is not None: problems.append(f"{spec.name} [{edge.name}] d/input{i}: {found} (vs NumPy)")
  problems += finite_differences([s for s in specs if s.name in ordinary], ordinary)
  return problems


def finite_differences(specs: list[Spec], ours: dict[str, list[np.ndarray]]) -> list[str]:
  """Central differences of pytc's forward loss at FD_SAMPLES elements of each differentiated input of the ordinary
  dataset; round r perturbs the r-th sampled element of every spec at once (each loss only sees its own inputs)."""
  if not specs: return []
  samples, problems = {}, []
  for spec in specs:
    picks = []
    for i in spec.differentiated(spec.inputs):
      n = spec.inputs[i].size
      picks += [(i, int(j)) for j in np.unique(np.linspace(0, n - 1, min(n, FD_SAMPLES)).round())]
    samples[spec.name] = picks
  rounds = max(len(p) for p in samples.values())
  for r in range(rounds):
    losses = []
    for spec in specs:
      picks = samples[spec.name]
      i, j = picks[min(r, len(picks) - 1)]
      h = 1e-6 * max(1.0, abs(spec.inputs[i].flat[j]))
      pair = []
      for sign in (1, -1):
        arrays = [a.copy() for a in spec.inputs]
        arrays[i].flat[j] += sign * h
        pair.append(ours_loss(spec, arrays)[0])
      losses.append((spec, r < len(picks), i, j, h, pair))
    Tensor.realize(*[t for *_, pair in losses for t in pair])
    for spec, fresh, i, j, h, (plus, minus) in losses:
      if not fresh: continue
      estimate = (plus.item() - minus.item()) / (2 * h)
      got = ours[spec.name][spec.differentiated(spec.inputs).index(i)].flat[j]
      if not abs(got - estimate) <= FD_TOL[1] + FD_TOL[0] * abs(estimate):
        problems.append(f"{spec.name} [ordinary] d/input{i} at flat {j}: got {got:.8g}, finite difference {estimate:.8g}")
  return problems


# *** unary ***

def unary(name: str, ours, derivative, x=None, kinks=None, large: str = "close", tol=CLOSE, zero=ZERO, big=LARGE) -> Spec:
  """One input of shape (6,): ordinary values `x`, then zeros, +-1e3/+-1e30, NaN and the op's own kinks."""
  x = away(normal(6)) if x is None else np.asarray(x, dtype=np.float64)
  edges = [Edge("zero", [zero]), Edge("large", [big], large), Edge("nan", [NANS], "nan")]
  if kinks is not None: edges.append(Edge("kinks", [np.array(kinks, dtype=np.float64)]))
  return Spec(name, ours, pointwise(derivative), [x], edges, tol)


POSITIVE = uniform(0.3, 2.5, 6)
UNIT = uniform(-0.85, 0.85, 6)
OFF_GRID = np.array([0.3, -1.3, 2.7, -0.6, 1.2, -2.2])  # no integers or halves: floor/round/sign have zero derivatives
SELU_ALPHA, SELU_GAMMA = 1.67326, 1.0507
GELU_BETA, GELU_KAPPA = math.sqrt(2 / math.pi), 0.044715


def gelu_derivative(x):
  inner = np.tanh(GELU_BETA * (x + GELU_KAPPA * x ** 3))
  return 0.5 * (1 + inner) + 0.5 * x * (1 - inner ** 2) * GELU_BETA * (1 + 3 * GELU_KAPPA * x * x)


def mish_derivative(x):
  inner = np.tanh(np.logaddexp(0, x))
  return inner + x * sigmoid(x) * (1 - inner ** 2)


UNARY = [
  unary("neg", lambda x: -x, lambda x: -1.0),
  unary("exp", Tensor.exp, np.exp), unary("exp2", Tensor.exp2, lambda x: np.exp2(x) * math.log(2)),
  unary("log", Tensor.log, lambda x: 1 / x, POSITIVE), unary("log2", Tensor.log2, lambda x: 1 / (x * math.log(2)), POSITIVE),
  unary("log10", Tensor.log10, lambda x: 1 / (x * math.log(10)), POSITIVE),
  unary("sqrt", Tensor.sqrt, lambda x: 1 / (2 * np.sqrt(x)), POSITIVE),
  unary("rsqrt", Tensor.rsqrt, lambda x: -0.5 * (1 / np.sqrt(x)) ** 3, POSITIVE),
  unary("sin", Tensor.sin, np.cos, large="finite"), unary("cos", Tensor.cos, lambda x: -np.sin(x), large="finite"),
  unary("tan", Tensor.tan, lambda x: 1 + np.tan(x) ** 2, UNIT, large="finite"),
  unary("reciprocal", Tensor.reciprocal, lambda x: -(1 / x) ** 2), unary("square", Tensor.square, lambda x: 2 * x),
  unary("abs", Tensor.abs, lambda x: np.where(x > 0, 1.0, np.where(x < 0, -1.0, 0.0)), kinks=[0.0, -0.0, 1.0, -1.0, 0.0, 2.0]),
  unary("sign", Tensor.sign, lambda x: 0.0, OFF_GRID), unary("floor", Tensor.floor, lambda x: 0.0, OFF_GRID),
  unary("ceil", Tensor.ceil, lambda x: 0.0, OFF_GRID), unary("trunc", Tensor.trunc, lambda x: 0.0, OFF_GRID),
  unary("round", Tensor.round, lambda x: 0.0, OFF_GRID),
  unary("sinh", Tensor.sinh, np.cosh), unary("cosh", Tensor.cosh, np.sinh), unary("asinh", Tensor.asinh, lambda x: 1 / np.sqrt(x * x + 1)),
  # inside their domains: acosh's large inputs positive, atanh's zeros without its poles at +-1
  unary("acosh", Tensor.acosh, lambda x: 1 / np.sqrt(x * x - 1), uniform(1.3, 3.0, 6), big=np.abs(LARGE)),
  unary("atanh", Tensor.atanh, lambda x: 1 / (1 - x * x), UNIT, zero=np.array([0.0, -0.0, 0.0, 0.5, -0.5, 0.25])),
  unary("asin", lambda x: x.asin(), lambda x: 1 / np.sqrt(1 - x * x), UNIT, tol=(1e-5, 1e-5)),
  unary("acos", lambda x: x.acos(), lambda x: -1 / np.sqrt(1 - x * x), UNIT, tol=(1e-5, 1e-5)),
  unary("atan", lambda x: x.atan(), lambda x: 1 / (1 + x * x), tol=(1e-5, 1e-5)),
  # tinygrad's erf is Abramowitz-Stegun 7.1.26: its derivative is close to, not equal to, the true one
  unary("erf", Tensor.erf, lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x), tol=(1e-5, 1e-5)),
]

ACTIVATIONS = [
  unary("sigmoid", Tensor.sigmoid, lambda x: sigmoid(x) * (1 - sigmoid(x))), unary("tanh", Tensor.tanh, lambda x: 1 - np.tanh(x) ** 2),
  unary("relu", Tensor.relu, lambda x: (x > 0).astype(np.float64), kinks=[0.0, -0.0, 1.0, -1.0, 0.0, 2.0]),
  unary("leaky_relu", lambda x: x.leaky_relu(0.1), lambda x: np.where(x < 0, 0.1, 1.0), kinks=[0.0, -0.0, 1.0, -1.0, 0.0, 2.0]),
  unary("gelu", Tensor.gelu, gelu_derivative),
  unary("quick_gelu", Tensor.quick_gelu, lambda x: sigmoid(1.702 * x) + 1.702 * x * sigmoid(1.702 * x) * (1 - sigmoid(1.702 * x))),
  unary("silu", Tensor.silu, lambda x: sigmoid(x) * (1 + x * (1 - sigmoid(x)))), unary("mish", Tensor.mish, mish_derivative),
  unary("softplus", Tensor.softplus, sigmoid),
  unary("logsigmoid", Tensor.logsigmoid, lambda x: sigmoid(-x)), unary("softsign", Tensor.softsign, lambda x: 1 / (1 + np.abs(x)) ** 2),
  # relu(x) - relu(1 - exp(x)): 0 at 0
  unary("elu", Tensor.elu, lambda x: np.where(x > 0, 1.0, np.where(x < 0, np.exp(x), 0.0)), kinks=[0.0, -0.0, 1.0, -1.0, 0.0, 2.0]),
  # maximum(x, 0) + minimum(exp(x) - 1, 0): both ties at 0 split, so 1/2 + 1/2
  unary("celu", Tensor.celu, lambda x: np.where(x < 0, np.exp(x), 1.0), kinks=[0.0, -0.0, 1.0, -1.0, 0.0, 2.0]),
  unary("selu", Tensor.selu, lambda x: SELU_GAMMA * np.where(x < 0, SELU_ALPHA * np.exp(x), 1.0), kinks=[0.0, -0.0, 1.0, -1.0, 0.0, 2.0]),
  # relu(x) - relu(x - 6): 0 at 0, 1 at 6
  unary("relu6", Tensor.relu6, lambda x: ((x > 0) & (x <= 6)).astype(np.float64), away(uniform(-2, 8, 6), (0.0, 6.0)),
        kinks=[0.0, 6.0, -0.0, 3.0, 7.0, -1.0]),
  unary("hardtanh", Tensor.hardtanh, lambda x: ((x >= -1) & (x <= 1)).astype(np.float64), away(normal(6, scale=2), (-1.0, 1.0)),
        kinks=[-1.0, 1.0, 0.0, -2.0, 2.0, 0.5]),
  unary("clip", lambda x: x.clip(-0.5, 0.7), lambda x: ((x >= -0.5) & (x <= 0.7)).astype(np.float64), away(normal(6), (-0.5, 0.7)),
        kinks=[-0.5, 0.7, 0.0, -1.0, 1.0, 0.7]),
  # relu(x / 6 + 0.5) - relu(x / 6 - 0.5): 0 at -3, 1/6 at 3
  unary("hardsigmoid", Tensor.hardsigmoid, lambda x: np.where((x > -3) & (x <= 3), 1 / 6, 0.0), away(normal(6, scale=3), (-3.0, 3.0)),
        kinks=[-3.0, 3.0, 0.0, -4.0, 4.0, 1.0]),
  # x * relu6(x + 3) / 6: 0 at -3, 1.5 at 3
  unary("hardswish", Tensor.hardswish, lambda x: np.where(x > 3, 1.0, np.where(x > -3, x / 3 + 0.5, 0.0)), away(normal(6, scale=3), (-3.0, 3.0)),
        kinks=[-3.0, 3.0, 0.0, -4.0, 4.0, 1.0]),
]


# *** binary ***

A, B = normal(2, 3), normal(2, 3)
PAIR_ZERO = [np.array([[0.0, 1.0, -2.0], [0.0, -0.0, 3.0]]), np.array([[0.0, 0.0, -0.0], [2.0, 1.0, 0.0]])]
PAIR_LARGE = [np.array([[1e3, -1e3, 1e30], [-1e30, 1e30, 2.0]]), np.array([[1e-30, 1e3, -1e30], [1e30, 1e-3, -1e30]])]
PAIR_NAN = [np.array([[math.nan, 1.0, 2.0], [math.nan, -1.0, 0.5]]), np.array([[1.0, math.nan, 2.0], [math.nan, 3.0, -0.5]])]
TIES = [np.array([[1.0, 2.0, -1.0], [0.0, 3.0, 3.0]]), np.array([[1.0, 0.5, -1.0], [0.0, 4.0, 2.0]])]


def binary(name: str, ours, reference, a=None, b=None, ties: bool = False, large: bool = True, **kw) -> Spec:
  edges = [Edge("zero", PAIR_ZERO), Edge("nan", PAIR_NAN, "nan")]
  edges += ([Edge("large", PAIR_LARGE)] if large else []) + ([Edge("ties", TIES)] if ties else [])
  return Spec(name, ours, reference, [A.copy() if a is None else a, B.copy() if b is None else b], edges, **kw)


def larger(a, b):
  """d maximum(a, b) / da: 1 where a wins, 1/2 at a tie (a NaN takes it all)."""
  return np.where(a < b, 0.0, np.where(a == b, 0.5, 1.0))


# pow: a zero exponent has no gradient to the base, a zero base none to a non-negative exponent
POW = pointwise(lambda a, b: np.where(b == 0, 0.0, b * a ** (b - 1)), lambda a, b: np.where((a == 0) & (b >= 0), 0.0, a ** b * np.log(a)))
CONDITION = np.array([[True, False, True], [False, False, True]])
# quotients off integers: fmod and mod jump where a / b is one (as +-1e30 / -+1e30 is), so no large dataset for them
DIVIDENDS, DIVISORS = np.array([[2.3, -2.3, 5.1], [0.7, -4.2, 3.3]]), np.array([[1.1, 1.1, -2.0], [0.4, 1.5, -0.9]])
BINARY = [
  binary("add", lambda a, b: a + b, pointwise(lambda a, b: 1.0, lambda a, b: 1.0)),
  binary("sub", lambda a, b: a - b, pointwise(lambda a, b: 1.0, lambda a, b: -1.0)),
  binary("mul", lambda a, b: a * b, pointwise(lambda a, b: b, lambda a, b: a)),
  binary("div", lambda a, b: a / b, pointwise(lambda a, b: 1 / b, lambda a, b: -a / (b * b)), b=away(B, gap=0.3)),
  binary("pow", lambda a, b: a ** b, POW, a=uniform(0.3, 2.0, 2, 3)),
  binary("maximum", Tensor.maximum, pointwise(larger, lambda a, b: larger(b, a)), ties=True),
  binary("minimum", Tensor.minimum, pointwise(lambda a, b: larger(-a, -b), lambda a, b: larger(-b, -a)), ties=True),
  binary("logaddexp", Tensor.logaddexp, pointwise(lambda a, b: 1 / (1 + np.exp(b - a)), lambda a, b: 1 / (1 + np.exp(a - b))), ties=True),
  # copysign(a, b) / a: a's sign flip, none at a zero
  binary("copysign", Tensor.copysign, pointwise(lambda a, b: np.where(a == 0, 0.0, np.copysign(a, b) / a), lambda a, b: 0.0), a=away(A)),
  binary("fmod", lambda a, b: a.fmod(b), pointwise(lambda a, b: 1.0, lambda a, b: -np.trunc(a / b)), a=DIVIDENDS.copy(), b=DIVISORS.copy(),
         large=False),
  binary("mod", lambda a, b: a % b, pointwise(lambda a, b: 1.0, lambda a, b: -np.floor(a / b)), a=DIVIDENDS.copy(), b=DIVISORS.copy(), large=False),
  Spec("broadcast add (2,3)+(3,)", lambda a, b: a + b, pointwise(lambda a, b: 1.0, lambda a, b: 1.0), [normal(2, 3), normal(3)]),
  Spec("broadcast mul (2,1)*(1,3)", lambda a, b: a * b, pointwise(lambda a, b: b, lambda a, b: a), [normal(2, 1), normal(1, 3)]),
  Spec("pow const 3", lambda x: x ** 3, pointwise(lambda x: 3 * x ** 2), [normal(6)], [Edge("zero", [ZERO]), Edge("large", [LARGE])]),
  Spec("pow const 0.5", lambda x: x ** 0.5, pointwise(lambda x: 0.5 * x ** -0.5), [POSITIVE.copy()],
       [Edge("zero", [ZERO]), Edge("nan", [NANS], "nan")]),
  Spec("pow const -2", lambda x: x ** -2, pointwise(lambda x: -2 * x ** -3.0), [away(normal(6), gap=0.3)],
       [Edge("zero", [ZERO]), Edge("large", [LARGE])]),
  Spec("rpow 2**x", lambda x: 2 ** x, pointwise(lambda x: 2 ** x * math.log(2)), [normal(6)],
       [Edge("zero", [ZERO]), Edge("large", [LARGE], "finite")]),
  Spec("maximum scalar tie", lambda x: x.maximum(0.5), pointwise(lambda x: larger(x, 0.5)), [away(normal(6), (0.5,))],
       [Edge("ties", [np.array([0.5, 0.5, 1.0, -1.0, 0.0, 0.5])])]),
  Spec("where", lambda c, a, b: c.where(a, b), pointwise(None, lambda c, a, b: c, lambda c, a, b: ~c), [CONDITION, A.copy(), B.copy()],
       [Edge("nan", [CONDITION, *PAIR_NAN], "nan")]),
  # the branch not taken has a NaN derivative at 0 (log'(0) * 0): it reaches the input
  Spec("where(log) unselected branch", lambda c, x: c.where(x.log(), 0.0), pointwise(None, lambda c, x: c / x),
       [CONDITION, uniform(0.5, 2, 2, 3)], [Edge("zero", [CONDITION, np.array([[1.0, 0.0, 2.0], [-1.0, 0.0, 3.0]])], "nan")]),
  Spec("lerp", lambda a, b, w: a.lerp(b, w), pointwise(lambda a, b, w: 1 - w, lambda a, b, w: w, lambda a, b, w: b - a),
       [normal(2, 3), normal(2, 3), uniform(0, 1, 2, 3)]),
]


# *** reductions and cumulative ops ***

M = distinct(3, 4)
ROW_TIES = np.array([[2.0, 2.0, 1.0, 0.0], [3.0, 3.0, 3.0, 3.0], [-1.0, 5.0, 5.0, -1.0]])
ROW_ZEROS = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 2.0], [1.0, 2.0, -0.5, 3.0]])
ROW_LARGE = np.array([[1e3, -1e3, 0.0, 1.0], [1e30, 1e30, -1e30, 0.0], [-1e3, -1e3, -1e3, -1e3]])
ROW_NAN = np.array([[math.nan, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0], [0.5, math.nan, -1.0, 2.0]])
ROW_NEG_INF = np.array([[-math.inf, 1.0, 2.0, 0.0], [1.0, -math.inf, -math.inf, 3.0], [0.5, 0.5, 0.5, 0.5]])


def reduction(name: str, ours, reference, x=None, extra=(), **kw) -> Spec:
  edges = [Edge("ties", [ROW_TIES]), Edge("zeros", [ROW_ZEROS]), Edge("large", [ROW_LARGE], "finite"), Edge("nan", [ROW_NAN], "nan"), *extra]
  return Spec(name, ours, reference, [M.copy() if x is None else x], edges, **kw)


def along(axis: int | None, grad: Callable) -> Callable:
  """A reference `grad(weight, x)` written for the last axis, applied along `axis` (to all elements when None); a
  reduction's weight arrives with a trailing dimension of 1."""
  def grads(weight, x):
    if axis is None: return [grad(weight.reshape(1, 1), x.reshape(1, -1)).reshape(x.shape)]
    up = np.moveaxis(weight, axis, -1) if weight.ndim == x.ndim else weight[..., None]
    return [np.moveaxis(grad(up, np.moveaxis(x, axis, -1)), -1, axis)]
  return grads


def products_of_others(x: np.ndarray) -> np.ndarray:
  """Each element's product of the other elements of its row: the derivative of the row's product, exact at zeros."""
  return np.stack([np.delete(x, j, -1).prod(-1) for j in range(x.shape[-1])], -1)


def extreme(w, x, pick=np.max):
  """max/min: tied elements share the gradient evenly (a row with a NaN shares it among none: NaN)."""
  hit = x == pick(x, axis=-1, keepdims=True)
  return w * hit / hit.sum(-1, keepdims=True)


def running_extreme(w, x, pick=np.max):
  """cummax/cummin: a max over each prefix window, whose tied elements share the window's gradient."""
  out = np.zeros_like(x)
  for k in range(x.shape[-1]): out[..., :k + 1] += extreme(w[..., k:k + 1], x[..., :k + 1], pick)
  return out


def std_grad(w, x):
  """d std: (x - mean) / ((n - 1) std), none for a constant row (whose std is 0)."""
  std = x.std(-1, ddof=1, keepdims=True)
  return (x - x.mean(-1, keepdims=True)) / (x.shape[-1] - 1) * np.where(std == 0, 0.0, w / std)


def cumprod_grad(w, x):
  """d out_k / d x_j: the product of x_0..x_k without x_j, for j <= k."""
  out = np.zeros_like(x)
  for k in range(x.shape[-1]): out[..., :k + 1] += w[..., k:k + 1] * products_of_others(x[..., :k + 1])
  return out


def logcumsumexp_grad(w, x):
  """d out_k / d x_j: exp(x_j - out_k), for j <= k."""
  out = np.logaddexp.accumulate(x, -1)
  later = np.triu(np.ones((x.shape[-1],) * 2, bool))
  return np.where(later, w[..., None, :] * np.exp(x[..., :, None] - out[..., None, :]), 0.0).sum(-1)


def sorted_values_grad(w, x, descending: bool = False):
  """Each sorted value's gradient back at the element it came from; topk's are the first columns of a descending sort."""
  out = np.zeros_like(x)
  np.put_along_axis(out, np.argsort(-x if descending else x, -1)[..., :w.shape[-1]], w, -1)
  return out


REDUCTIONS = [
  reduction("sum", Tensor.sum, affine(np.sum)), reduction("sum(0)", lambda x: x.sum(0), affine(lambda x: x.sum(0))),
  reduction("sum(1, keepdim)", lambda x: x.sum(1, keepdim=True), affine(lambda x: x.sum(1, keepdims=True))),
  reduction("mean", Tensor.mean, affine(np.mean)), reduction("mean(1)", lambda x: x.mean(1), affine(lambda x: x.mean(1))),
  reduction("prod", Tensor.prod, along(None, lambda w, x: w * products_of_others(x)), normal(3, 4)),
  reduction("prod(1)", lambda x: x.prod(1), along(1, lambda w, x: w * products_of_others(x)), normal(3, 4)),
  reduction("max", Tensor.max, along(None, extreme)), reduction("max(1)", lambda x: x.max(1), along(1, extreme)),
  reduction("min(0)", lambda x: x.min(0), along(0, lambda w, x: extreme(w, x, np.min))),
  reduction("min", Tensor.min, along(None, lambda w, x: extreme(w, x, np.min))),
  reduction("var(1)", lambda x: x.var(1), along(1, lambda w, x: 2 * w * (x - x.mean(-1, keepdims=True)) / (x.shape[-1] - 1))),
  reduction("std(0)", lambda x: x.std(0), along(0, std_grad)), reduction("std", Tensor.std, along(None, std_grad)),
  reduction("logsumexp(1)", lambda x: x.logsumexp(1), along(1, lambda w, x: w * softmax(x)), extra=[Edge("-inf", [ROW_NEG_INF])]),
  reduction("softmax", Tensor.softmax, along(-1, lambda w, x: softmax(x) * (w - (w * softmax(x)).sum(-1, keepdims=True))),
            extra=[Edge("-inf", [ROW_NEG_INF])]),
  reduction("softmax(0)", lambda x: x.softmax(0), along(0, lambda w, x: softmax(x) * (w - (w * softmax(x)).sum(-1, keepdims=True)))),
  reduction("log_softmax", Tensor.log_softmax, along(-1, lambda w, x: w - softmax(x) * w.sum(-1, keepdims=True)),
            extra=[Edge("-inf", [ROW_NEG_INF])]),
  reduction("cumsum(1)", lambda x: x.cumsum(1), affine(lambda x: x.cumsum(1))),
  reduction("cumsum(0)", lambda x: x.cumsum(0), affine(lambda x: x.cumsum(0))),
  reduction("cumprod(1)", lambda x: x.cumprod(1), along(1, cumprod_grad), normal(3, 4)),
  reduction("cummax(1)", lambda x: x.cummax(1)[0], along(1, running_extreme)),
  reduction("cummin(0)", lambda x: x.cummin(0)[0], along(0, lambda w, x: running_extreme(w, x, np.min))),
  reduction("logcumsumexp(1)", lambda x: x.logcumsumexp(1), along(1, logcumsumexp_grad)),
  # which of several tied elements receives which sorted gradient is unspecified: ordinary inputs only
  Spec("sort(1) values", lambda x: x.sort(1)[0], along(1, sorted_values_grad), [M.copy()]),
  Spec("topk(2) values", lambda x: x.topk(2)[0], along(1, lambda w, x: sorted_values_grad(w, x, descending=True)), [M.copy()]),
]


# *** movement and indexing ***

X = normal(2, 3, 4)
X_EDGES = [Edge("large", [np.resize(LARGE, (2, 3, 4))]), Edge("nan", [np.resize(NANS, (2, 3, 4))], "nan")]


def movement(name: str, ours, forward, inputs=None) -> Spec:
  """`forward`: the op in NumPy; it is affine, so its unit responses are the reference at every dataset."""
  return Spec(name, ours, affine(forward), [X.copy()] if inputs is None else inputs, X_EDGES if inputs is None else [])


def scattered(x, index, source):
  out = x.copy()
  np.put_along_axis(out, index, source, 1)
  return out


INDEX = np.array([0, 2, 0, 1])
GATHER_INDEX = np.array([[0, 3, 3], [1, 1, 0], [2, 0, 2]])
SCATTER_INDEX = np.array([[3, 0], [1, 2], [0, 3]])
MASK = (np.arange(24).reshape(2, 3, 4) % 5) == 0

MOVEMENT = [
  movement("reshape", lambda x: x.reshape(4, 6), lambda x: x.reshape(4, 6)),
  movement("permute", lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1)),
  movement("transpose", lambda x: x.transpose(-1, 0), lambda x: x.swapaxes(-1, 0)),
  movement("expand", lambda x: x.expand(3, 4), lambda x: np.broadcast_to(x, (3, 4)), [normal(3, 1)]),
  movement("pad", lambda x: x.pad(((1, 0), (0, 2), (1, 1))), lambda x: np.pad(x, ((1, 0), (0, 2), (1, 1)))),
  movement("pad value negative", lambda x: x.pad(((0, 0), (-1, 1), (2, -1)), value=2.0),
           lambda x: np.pad(x[:, 1:, :-1], ((0, 0), (0, 1), (2, 0)), constant_values=2.0)),
  movement("shrink", lambda x: x.shrink(((0, 1), (1, 3), (1, 4))), lambda x: x[0:1, 1:3, 1:4]),
  movement("flip", lambda x: x.flip((0, 2)), lambda x: np.flip(x, (0, 2))),
  movement("cat", lambda x, y: x.cat(y, dim=1), lambda x, y: np.concatenate([x, y], 1), [normal(2, 3, 4), normal(2, 1, 4)]),
  movement("stack", lambda x, y: Tensor.stack(x, y, dim=-1), lambda x, y: np.stack([x, y], -1), [normal(2, 3), normal(2, 3)]),
  movement("getitem int", lambda x: x[1], lambda x: x[1]),
  movement("getitem steps", lambda x: x[:, ::2, 1::2], lambda x: x[:, ::2, 1::2]),
  movement("getitem negative step", lambda x: x[::-1, 1:, ::-3], lambda x: x[::-1, 1:, ::-3]),
  movement("getitem none ellipsis", lambda x: x[None, ..., -1], lambda x: x[None, ..., -1]),
  movement("repeat", lambda x: x.repeat(2, 1, 3), lambda x: np.tile(x, (2, 1, 3))),
  movement("tril", lambda x: x.tril(), np.tril, [normal(3, 4)]),
  movement("triu(1)", lambda x: x.triu(1), lambda x: np.triu(x, 1), [normal(3, 4)]),
  movement("roll", lambda x: x.roll(1, 2), lambda x: np.roll(x, 1, 2)),
  movement("split", lambda x: x.split(2, dim=2)[1], lambda x: x[:, :, 2:4]),
  movement("unfold", lambda x: x.unfold(2, 2, 1), lambda x: np.lib.stride_tricks.sliding_window_view(x, 2, 2)),
  movement("flatten unsqueeze squeeze", lambda x: x.flatten(1).unsqueeze(0).squeeze(0), lambda x: x.reshape(2, 12)),
  movement("tensor index repeated", lambda x, i: x[i], lambda x, i: x[i], [normal(3, 4), INDEX]),
  movement("tensor index dim 1", lambda x, i: x[:, i], lambda x, i: x[:, i], [normal(3, 4), INDEX[:2].reshape(1, 2)]),
  movement("gather repeated", lambda x, i: x.gather(1, i), lambda x, i: np.take_along_axis(x, i, 1), [normal(3, 4), GATHER_INDEX]),
  movement("scatter", lambda x, i, s: x.scatter(1, i, s), scattered, [normal(3, 4), SCATTER_INDEX, normal(3, 2)]),
  movement("masked_fill", lambda x, m: x.masked_fill(m, 0.5), lambda x, m: np.where(m, 0.5, x), [X.copy(), MASK]),
]


# *** linear algebra, convolution, pooling ***

def max_pool_grad(kernel: int, stride: int, padding: int = 0) -> Callable:
  """tinygrad's max_pool2d: each window's gradient goes to its max, shared evenly by ties in the window."""
  def grads(weight, x):
    padded, views = windows(x, kernel, stride, padding, -math.inf)
    out = np.zeros_like(padded)
    for i, j in np.ndindex(*weight.shape[-2:]):
      hit = views[..., i, j, :, :] == views[..., i, j, :, :].max((-2, -1), keepdims=True)
      share = weight[..., i, j, None, None] / hit.sum((-2, -1), keepdims=True)
      out[..., i * stride:i * stride + kernel, j * stride:j * stride + kernel] += hit * share
    return [out[..., padding:out.shape[-2] - padding, padding:out.shape[-1] - padding]]
  return grads


POOL_TIES = np.resize(np.array([1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 0.0]), (1, 2, 4, 4))
LINALG = [
  Spec("matmul", lambda a, b: a @ b, affine(np.matmul), [normal(3, 4), normal(4, 5)], [Edge("large", [np.resize(LARGE, (3, 4)), normal(4, 5)])]),
  Spec("matmul batched", lambda a, b: a @ b, affine(np.matmul), [normal(2, 3, 4), normal(4, 2)]),
  Spec("matmul vector-matrix", lambda a, b: a @ b, affine(np.matmul), [normal(4), normal(4, 3)]),
  Spec("matmul matrix-vector", lambda a, b: a @ b, affine(np.matmul), [normal(3, 4), normal(4)]),
  Spec("dot 1-D", lambda a, b: a.dot(b), affine(np.dot), [normal(5), normal(5)]),
  Spec("linear", lambda x, w, b: x.linear(w, b), affine(lambda x, w, b: x @ w + b), [normal(2, 4), normal(4, 3), normal(3)]),
  Spec("einsum ij,jk->ik", lambda a, b: Tensor.einsum("ij,jk->ik", a, b), affine(lambda a, b: np.einsum("ij,jk->ik", a, b)),
       [normal(2, 3), normal(3, 4)]),
  Spec("einsum bij,bkj->bik", lambda a, b: Tensor.einsum("bij,bkj->bik", a, b), affine(lambda a, b: np.einsum("bij,bkj->bik", a, b)),
       [normal(2, 3, 4), normal(2, 2, 4)]),
  Spec("conv2d padding bias", lambda x, w, b: x.conv2d(w, b, padding=1), affine(lambda x, w, b: np_conv2d(x, w, b, padding=1)),
       [normal(2, 2, 5, 5), normal(3, 2, 3, 3), normal(3)]),
  Spec("conv2d stride groups", lambda x, w: x.conv2d(w, groups=2, stride=2), affine(lambda x, w: np_conv2d(x, w, groups=2, stride=2)),
       [normal(1, 4, 6, 6), normal(4, 2, 3, 3)]),
  Spec("conv2d dilation", lambda x, w: x.conv2d(w, dilation=2, padding=2), affine(lambda x, w: np_conv2d(x, w, dilation=2, padding=2)),
       [normal(1, 2, 5, 5), normal(2, 2, 3, 3)]),
  Spec("conv_transpose2d", lambda x, w: x.conv_transpose2d(w, stride=2, padding=1), affine(lambda x, w: np_conv_transpose2d(x, w, 2, 1)),
       [normal(1, 2, 3, 3), normal(2, 3, 3, 3)]),
  Spec("max_pool2d", lambda x: x.max_pool2d(2), max_pool_grad(2, 2), [distinct(1, 2, 4, 4)], [Edge("ties", [POOL_TIES])]),
  Spec("max_pool2d overlapping padded", lambda x: x.max_pool2d(3, stride=1, padding=1), max_pool_grad(3, 1, 1), [distinct(1, 2, 4, 4)],
       [Edge("ties", [POOL_TIES])]),
  Spec("avg_pool2d", lambda x: x.avg_pool2d(2), affine(lambda x: avg_pool(x, 2, 2)), [normal(1, 2, 4, 4)]),
  # the padding counts in each window's mean, as tinygrad's count_include_pad=True
  Spec("avg_pool2d padded", lambda x: x.avg_pool2d(3, stride=1, padding=1), affine(lambda x: avg_pool(x, 3, 1, 1)), [normal(1, 2, 4, 4)]),
]


# *** normalization, attention, losses ***

def layernorm_grad(weight, x, eps: float = 1e-5):
  rstd = 1 / np.sqrt(x.var(-1, keepdims=True) + eps)
  y = (x - x.mean(-1, keepdims=True)) * rstd
  return [rstd * (weight - weight.mean(-1, keepdims=True) - y * (weight * y).mean(-1, keepdims=True))]


def attention_grad(causal: bool = False) -> Callable:
  """softmax(q k^T / sqrt(d)) v, future keys masked when causal."""
  def grads(weight, q, k, v):
    scale = 1 / math.sqrt(q.shape[-1])
    scores = q @ k.swapaxes(-1, -2) * scale
    probs = softmax(np.where(np.tril(np.ones(scores.shape[-2:], bool)), scores, -math.inf) if causal else scores)
    d_probs = weight @ v.swapaxes(-1, -2)
    d_scores = probs * (d_probs - (d_probs * probs).sum(-1, keepdims=True)) * scale
    return [d_scores @ k, d_scores.swapaxes(-1, -2) @ q, probs.swapaxes(-1, -2) @ weight]
  return grads


def cross_entropy_grad(smoothing: float = 0.0) -> Callable:
  """The mean over rows of -sum(target * log_softmax(x)); integer labels are one-hot rows, smoothed toward uniform."""
  def grads(weight, x, labels):
    target = labels if labels.dtype == np.float64 else (1 - smoothing) * np.eye(x.shape[1])[labels] + smoothing / x.shape[1]
    return [weight * (softmax(x) * target.sum(1, keepdims=True) - target) / len(x), None]
  return grads


LOGITS = normal(3, 5)
LABELS = np.array([1, 0, 4])
NN = [
  Spec("layernorm", lambda x: x.layernorm(), layernorm_grad, [normal(3, 4)],
       [Edge("constant row", [np.array([[1.0, 1.0, 1.0, 1.0], [0.0, 1.0, 2.0, 3.0], [-2.0, -2.0, -2.0, -2.0]])]),
        Edge("large", [np.array([[1e3, -1e3, 0.0, 1.0], [1e3, 1e3 + 1, 1e3 + 2, 1e3 + 3], [-1e3, -1e3, -1e3, -1e3]])])]),
  Spec("batchnorm", lambda x, w, b, m, s: x.batchnorm(w, b, m, s), affine(lambda x, w, b, m, s: (x - m.reshape(1, -1, 1)) * w.reshape(1, -1, 1) *
       s.reshape(1, -1, 1) + b.reshape(1, -1, 1)), [normal(2, 3, 4), normal(3), normal(3), normal(3), uniform(0.5, 2, 3)]),
  Spec("scaled_dot_product_attention", lambda q, k, v: q.scaled_dot_product_attention(k, v), attention_grad(),
       [normal(2, 3, 4), normal(2, 5, 4), normal(2, 5, 4)]),
  Spec("scaled_dot_product_attention causal", lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True), attention_grad(causal=True),
       [normal(2, 4, 4), normal(2, 4, 4), normal(2, 4, 4)]),
  Spec("cross_entropy indices", lambda x, y: x.cross_entropy(y), cross_entropy_grad(), [LOGITS.copy(), LABELS],
       [Edge("large", [np.array([[1e3, -1e3, 0.0, 1.0, 2.0], [1e3, 1e3, -1e3, 0.0, 0.0], [-1e3] * 5]), LABELS])]),
  Spec("cross_entropy smoothing", lambda x, y: x.cross_entropy(y, label_smoothing=0.1), cross_entropy_grad(0.1), [LOGITS.copy(), LABELS]),
  Spec("cross_entropy probabilities", lambda x, y: x.cross_entropy(y), cross_entropy_grad(), [LOGITS.copy(), np.abs(normal(3, 5)) / 4],
       constant=(1,)),
  Spec("sparse_categorical_crossentropy", lambda x, y: x.sparse_categorical_crossentropy(y), cross_entropy_grad(), [LOGITS.copy(), LABELS]),
  Spec("nll_loss", lambda x, y: x.nll_loss(y), affine(lambda x, y: -x[np.arange(len(y)), y].mean()), [LOGITS.copy(), LABELS]),
  Spec("binary_crossentropy", lambda p, y: p.binary_crossentropy(y), lambda w, p, y: [w * (p - y) / (p * (1 - p)) / p.size, None],
       [uniform(0.1, 0.9, 6), uniform(0, 1, 6)], constant=(1,)),
  Spec("binary_crossentropy_logits", lambda x, y: x.binary_crossentropy_logits(y), lambda w, x, y: [w * (sigmoid(x) - y) / x.size, None],
       [normal(6), uniform(0, 1, 6)], [Edge("large", [LARGE.clip(-1e3, 1e3), uniform(0, 1, 6)])], constant=(1,)),
]

GROUPS = {"unary": UNARY, "activations": ACTIVATIONS, "binary": BINARY, "reductions": REDUCTIONS, "movement": MOVEMENT, "linalg": LINALG, "nn": NN}


@pytest.mark.parametrize("group", list(GROUPS))
def test_gradients(group):
  problems = run_gradients(GROUPS[group])
  assert not problems, f"{len(problems)} wrong gradients:\n" + "\n".join(problems)


F64 = dtypes.float64

# name: (function of tensors, input shapes); inputs are kept away from kinks (0 for relu/abs, ties for max)
OPS = {
  "add": (lambda a, b: a + b, [(2, 3), (2, 3)]),
  "sub_broadcast": (lambda a, b: a - b, [(2, 3), (3,)]),
  "mul": (lambda a, b: a * b, [(2, 3), (2, 3)]),
  "div": (lambda a, b: a / (b.abs() + 1), [(2, 3), (2, 3)]),
  "neg": (lambda a: -a, [(4,)]),
  "exp": (lambda a: a.exp(), [(4,)]),
  "log": (lambda a: (a.abs() + 0.5).log(), [(4,)]),
  "exp2_log2": (lambda a: a.exp2() + (a * a + 1).log2(), [(4,)]),
  "sin_cos": (lambda a: a.sin() * a.cos(), [(4,)]),
  "sqrt_rsqrt": (lambda a: (a * a + 1).sqrt() + (a * a + 2).rsqrt(), [(4,)]),
  "reciprocal": (lambda a: (a * a + 1).reciprocal(), [(4,)]),
  "pow": (lambda a, b: (a.abs() + 0.5).pow(b), [(4,), (4,)]),
  "maximum_minimum": (lambda a, b: a.maximum(b) + a.minimum(b * 2), [(5,), (5,)]),
  "relu_sigmoid_tanh": (lambda a: a.relu() + a.sigmoid() + a.tanh(), [(5,)]),
  "gelu_silu_softplus": (lambda a: a.gelu() + a.silu() + a.softplus(), [(5,)]),
  "where": (lambda a, b: (a > b).where(a * 2, b * 3), [(5,), (5,)]),
  "sum_axis": (lambda a: a.sum(axis=1), [(3, 4)]),
  "max_reduce": (lambda a: a.max(axis=0), [(3, 4)]),
  "mean_var": (lambda a: a.mean(axis=1) + a.var(axis=1), [(3, 4)]),
  "softmax": (lambda a: a.softmax(-1), [(2, 5)]),
  "log_softmax": (lambda a: a.log_softmax(-1), [(2, 5)]),
  "logsumexp": (lambda a: a.logsumexp(1), [(2, 5)]),
  "layernorm": (lambda a: a.layernorm(-1), [(2, 5)]),
  "matmul": (lambda a, b: a @ b, [(2, 3), (3, 4)]),
  "reshape_permute": (lambda a: a.reshape(3, 2, 2).permute(2, 0, 1) * Tensor.arange(2, dtype=F64).reshape(2, 1, 1), [(3, 4)]),
  "expand": (lambda a: a.reshape(3, 1).expand(3, 4) * Tensor.arange(12, dtype=F64).reshape(3, 4), [(3,)]),
  "pad_shrink_flip": (lambda a: a.pad(((1, 2), (0, 1))).shrink(((1, 4), (1, 3))).flip(0) * 3, [(3, 4)]),
  "cat_split": (lambda a, b: a.cat(b, dim=1).split(2, dim=1)[1] * 2, [(2, 3), (2, 2)]),
  "cross_entropy": (lambda a: a.sparse_categorical_crossentropy(Tensor([1, 0, 3])), [(3, 4)]),
  "linear": (lambda x, w, b: x.linear(w, b).relu(), [(2, 3), (3, 4), (4,)]),
  "conv2d": (lambda x, w: x.conv2d(w, stride=2, padding=1), [(1, 2, 5, 5), (3, 2, 3, 3)]),
  "conv_transpose2d": (lambda x, w: x.conv_transpose2d(w, stride=2), [(1, 2, 3, 3), (2, 2, 2, 2)]),
  "pools": (lambda x: x.max_pool2d() + x.avg_pool2d(), [(1, 1, 4, 4)]),
  "cumsum": (lambda a: a.cumsum(1), [(2, 4)]),
  "getitem": (lambda a: a[1:, ::-2] * 2 + a[Tensor([2, 0])].sum(), [(3, 4)]),
  "gather": (lambda a: a.gather(1, Tensor([[0, 2], [1, 1]])), [(2, 3)]),
  "einsum": (lambda a, b: Tensor.einsum("ij,kj->ik", a, b), [(2, 3), (4, 3)]),
  "std": (lambda a: a.std(axis=0), [(4, 3)]),
}


def evaluate(fn, arrays, weights) -> float:
  return float((fn(*[Tensor(a) for a in arrays]) * Tensor(weights)).sum().numpy())


@pytest.mark.parametrize("name", OPS)
def test_gradient_matches_finite_differences(name):
  fn, shapes = OPS[name]
  arrays = [rng.uniform(-1.5, 1.5, shape) for shape in shapes]
  arrays = [np.where(np.abs(a) < 0.1, 0.3, a) for a in arrays]
  out_shape = fn(*[Tensor(a) for a in arrays]).shape
  weights = rng.uniform(0.5, 1.5, out_shape)
  tensors = [Tensor(a, requires_grad=True) for a in arrays]
  (fn(*tensors) * Tensor(weights)).sum().backward()
  eps = 1e-6
  for position, (tensor, array) in enumerate(zip(tensors, arrays)):
    numeric = np.zeros_like(array)
    for index in np.ndindex(array.shape):
      plus, minus = array.copy(), array.copy()
      plus[index] += eps
      minus[index] -= eps
      with_plus, with_minus = list(arrays), list(arrays)
      with_plus[position], with_minus[position] = plus, minus
      numeric[index] = (evaluate(fn, with_plus, weights) - evaluate(fn, with_minus, weights)) / (2 * eps)
    np.testing.assert_allclose(tensor.grad.numpy(), numeric, rtol=1e-4, atol=1e-6)


def test_gradients_accumulate_and_detach_cuts_them():
  x = Tensor([1.0, 2.0], requires_grad=True)
  (x * x).sum().backward()
  (x * 3).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), [5.0, 7.0])
  y = Tensor([1.0, 2.0], requires_grad=True)
  (y.detach() * y).sum().backward()
  np.testing.assert_allclose(y.grad.numpy(), [1.0, 2.0])


def test_cast_passes_the_gradient_back_in_the_source_dtype():
  x = Tensor(np.array([0.1, 0.2, 0.3]), requires_grad=True)
  (x.cast(dtypes.float32) * 2).sum().backward()
  assert x.grad.dtype == F64
  np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_backward_errors():
  x = Tensor([1.0, 2.0], requires_grad=True)
  with pytest.raises(ValueError, match=r"needs a scalar, not shape \(2,\)"): (x * 2).backward()
  Tensor.no_grad = True
  try:
    with pytest.raises(RuntimeError, match="no_grad"): (x * 2).sum().backward()
  finally:
    Tensor.no_grad = False


def gradients_of(fn, arrays, weights) -> list[np.ndarray]:
  tensors = [Tensor(a, requires_grad=True) for a in arrays]
  (fn(*tensors) * Tensor(weights)).sum().backward()
  return [t.grad.numpy() for t in tensors]


@pytest.mark.parametrize("name", OPS)
def test_a_replayed_gradient_graph_matches_one_built_afresh(name):
  fn, shapes = OPS[name]
  first, second = ([rng.uniform(-1.5, 1.5, shape) for shape in shapes] for _ in range(2))
  weights = rng.uniform(0.5, 1.5, fn(*[Tensor(a) for a in first]).shape)
  gradient._GRADIENT_GRAPHS.clear()
  gradients_of(fn, first, weights)
  replayed = gradients_of(fn, second, weights)
  gradient._GRADIENT_GRAPHS.clear()
  for ours, fresh in zip(replayed, gradients_of(fn, second, weights)): np.testing.assert_array_equal(ours, fresh)


def test_replayed_gradients_follow_the_wiring_and_the_targets():
  a, b = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
  for _ in range(2):  # the second round replays what the first recorded
    x, y = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    (x * y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), b)
    np.testing.assert_array_equal(y.grad.numpy(), a)
    x = Tensor(a, requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * a)
    x, y = Tensor(a, requires_grad=True), Tensor(b, requires_grad=False)
    (x * y).sum().backward()
    assert y.grad is None
    np.testing.assert_array_equal(x.grad.numpy(), b)
    x, y = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    (x * y).sum().backward(Tensor(2.0, dtype=F64))
    np.testing.assert_array_equal(x.grad.numpy(), 2 * b)
