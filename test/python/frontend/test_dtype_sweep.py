"""Every elementwise, reduction, cumulative and movement op over every dtype it accepts, against NumPy, at each dtype's edge
values (min, max, -1, 0, 1; +-0, +-inf, NaN, huge, tiny, denormal, rounding ties) and at edge shapes (0-d, empty, size 1).

Reference semantics are NumPy's except where tinygrad's differ on purpose: its promotion lattice, sums accumulating in a
wider dtype (int8 -> int32, uint8 -> uint32, float16 -> float32 and back), prod/max/min keeping the dtype, `/` always
true division (int -> float32), `//` and `%` rounding toward -inf, unary math of ints in float32, ties resolved to the
first index, empty max/min reducing to the dtype's lowest/highest value. bfloat16 values travel as float32 and every
reference result is rounded to bfloat16 (nearest even). The outputs of one dtype are realized together in a few schedules;
an output that is wrong in the batch is computed again alone, so the report tells a wrong op from a wrong multi-output realize.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from pytc import Tensor, dtypes

SINTS = [dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64]
UINTS = [dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64]
FLOATS = [dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]
INTS = SINTS + UINTS
ALL = [dtypes.bool] + INTS + FLOATS
NP = {dtypes.bool: np.bool_, dtypes.int8: np.int8, dtypes.int16: np.int16, dtypes.int32: np.int32, dtypes.int64: np.int64, dtypes.uint8: np.uint8,
      dtypes.uint16: np.uint16, dtypes.uint32: np.uint32, dtypes.uint64: np.uint64, dtypes.float16: np.float16, dtypes.bfloat16: np.float32,
      dtypes.float32: np.float32, dtypes.float64: np.float64}
# (largest finite, smallest normal, smallest denormal)
FLOAT_LIMITS = {dtypes.float16: (65504.0, 2.0 ** -14, 2.0 ** -24), dtypes.bfloat16: ((2 - 2 ** -7) * 2.0 ** 127, 2.0 ** -126, 2.0 ** -133),
                dtypes.float32: (float(np.finfo(np.float32).max), 2.0 ** -126, 2.0 ** -149),
                dtypes.float64: (float(np.finfo(np.float64).max), 2.0 ** -1022, 2.0 ** -1074)}
# relative error allowed for one rounding (exact ops are compared exactly) and for transcendental functions
EPS = {dtypes.float16: 2.0 ** -11, dtypes.bfloat16: 2.0 ** -8, dtypes.float32: 2.0 ** -24, dtypes.float64: 2.0 ** -53}
MATH_TOL = {dtypes.float16: (2e-3, 1e-4), dtypes.bfloat16: (1.6e-2, 1e-4), dtypes.float32: (3e-6, 1e-6), dtypes.float64: (1e-12, 1e-12)}
SHAPES = [(), (0,), (3, 0), (1,), (1, 1), (2, 3, 4)]


def name(dt) -> str: return dt.name
def is_float(dt) -> bool: return dt in FLOATS
def is_int(dt) -> bool: return dt in INTS
def lowest(dt): return False if dt is dtypes.bool else -math.inf if is_float(dt) else int(np.iinfo(NP[dt]).min)
def highest(dt): return True if dt is dtypes.bool else math.inf if is_float(dt) else int(np.iinfo(NP[dt]).max)
def float_of(dt):
  """The float dtype unary math of `dt` computes in: ints and bool in float32."""
  return dt if is_float(dt) else dtypes.float32


def bf16_round(x) -> np.ndarray:
  x = np.asarray(x, dtype=np.float32)
  bits = x.view(np.uint32).astype(np.uint64)
  rounded = (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
  return np.where(np.isnan(x), np.float32(np.nan), rounded)


def fit(values, dt) -> np.ndarray:
  """`values` stored in `dt`: floats rounded to nearest even (bfloat16 as float32 holding bfloat16 values), ints wrapped."""
  array = np.asarray(values)
  with np.errstate(all="ignore"):
    if dt is dtypes.bfloat16: return bf16_round(array.astype(np.float32))
    if is_int(dt) and array.dtype.kind == "f": raise AssertionError("fit() takes exact integers for integer dtypes")
    if is_int(dt) and array.dtype == object: return np.array([int(v) % (1 << (8 * NP[dt]().itemsize)) for v in array.ravel()],
                                                             dtype=np.uint64).astype(NP[dt]).reshape(array.shape)
    return array.astype(NP[dt])


def tensor(values, dt) -> Tensor:
  return Tensor(np.ascontiguousarray(fit(values, dt)), dtype=dt)


def edge_values(dt) -> np.ndarray:
  if dt is dtypes.bool: return np.array([False, True])
  if dt in SINTS:
    lo, hi = lowest(dt), highest(dt)
    return fit(np.array([0, 1, -1, 2, -2, 7, -7, 3, lo, hi, lo + 1, hi - 1], dtype=object), dt)
  if dt in UINTS:
    hi = highest(dt)
    return fit(np.array([0, 1, 2, 3, 7, hi, hi - 1, hi // 2 + 1], dtype=object), dt)
  big, tiny, denormal = FLOAT_LIMITS[dt]
  return fit([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3.0, -7.25, big, -big, tiny, denormal, math.inf, -math.inf, math.nan, 7.25, 10.75], dt)


def values_for_shape(dt, shape) -> np.ndarray:
  edges = edge_values(dt)
  return np.resize(edges, math.prod(shape)).reshape(shape)


# *** comparing ***

@dataclass
class Case:
  """One output: how to build it, its expected dtype and values. `alts` are other acceptable results (e.g. a*(1/b) for a/b),
  `ignore` masks positions whose value is undefined, `operands` are printed beside a wrong element."""
  name: str
  build: Callable[[], Tensor]
  dtype: object
  want: np.ndarray
  tol: tuple[float, float] = (0.0, 0.0)
  alts: tuple[np.ndarray, ...] = ()
  ignore: np.ndarray | None = None
  operands: tuple[np.ndarray, ...] = ()


def wrong_elements(got: np.ndarray, want: np.ndarray, tol: tuple[float, float]) -> np.ndarray:
  if got.dtype.kind == "f" or want.dtype.kind == "f":
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(all="ignore"):
      return ~((np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= tol[1] + tol[0] * np.abs(w)))
  return got.astype(object) != want.astype(object)


def problem(case: Case, got: Tensor) -> str | None:
  out, want = got.numpy(), np.asarray(case.want)
  if out.shape != want.shape: return f"shape {out.shape} != {want.shape}"
  bad = wrong_elements(out, want, case.tol)
  for alt in case.alts: bad &= wrong_elements(out, np.broadcast_to(alt, want.shape), case.tol)
  if case.ignore is not None: bad &= ~np.broadcast_to(case.ignore, want.shape)
  messages = [] if got.dtype == case.dtype else [f"dtype {got.dtype} != {case.dtype}"]
  if bad.any():
    where = list(zip(*np.nonzero(bad))) if want.ndim else [()]
    shown = []
    for index in where[:4]:
      operands = ", ".join(repr(np.broadcast_to(o, want.shape)[index].item()) for o in case.operands)
      shown.append(f"{'at ' + str(tuple(int(i) for i in index)) + ' ' if want.ndim else ''}{'(' + operands + ') ' if operands else ''}"
                   f"got {out[index].item()!r} want {want[index].item()!r}")
    messages.append(f"{int(bad.sum())}/{bad.size} wrong: " + "; ".join(shown))
  return ", ".join(messages) or None


def first_line(e: Exception) -> str: return f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:300]}"


def run(cases: list[Case]) -> list[str]:
  """Build every case, realize all of them in one schedule, compare; return a line per wrong case. A case that is wrong
  (or a batch that raises) is computed again alone."""
  problems, built = [], []
  for case in cases:
    try: built.append((case, case.build().contiguous()))
    except Exception as e: problems.append(f"{case.name}: building raised {first_line(e)}")
  batch_error = None
  try: Tensor.realize(*[t for _, t in built])
  except Exception as e: batch_error = first_line(e)
  alone_problems = 0
  for case, t in built:
    if batch_error is None:
      try: found = problem(case, t)
      except Exception as e: found = f"reading raised {first_line(e)}"
      if found is None: continue
    try: alone = problem(case, case.build().contiguous().realize())
    except Exception as e: alone = f"raised {first_line(e)}"
    if alone is not None: problems.append(f"{case.name}: {alone}")
    elif batch_error is None: problems.append(f"{case.name}: wrong only when realized together with {len(built) - 1} other outputs: {found}")
    alone_problems += alone is not None
  if batch_error is not None and not alone_problems:
    problems.append(f"realizing {len(built)} outputs together raised {batch_error}; each one alone is right")
  return problems


def check(cases: list[Case]) -> None:
  problems = run(cases)
  assert not problems, f"{len(problems)} of {len(cases)} outputs wrong:\n" + "\n".join(problems)


# *** elementwise: unary ***

FLOAT_MATH = [("exp", Tensor.exp, np.exp), ("exp2", Tensor.exp2, np.exp2), ("log", Tensor.log, np.log), ("log2", Tensor.log2, np.log2),
              ("sqrt", Tensor.sqrt, np.sqrt), ("rsqrt", Tensor.rsqrt, lambda x: 1 / np.sqrt(x)), ("sin", Tensor.sin, np.sin),
              ("cos", Tensor.cos, np.cos), ("tan", Tensor.tan, np.tan), ("reciprocal", Tensor.reciprocal, lambda x: 1 / x),
              ("sigmoid", Tensor.sigmoid, lambda x: 1 / (1 + np.exp(-x))), ("tanh", Tensor.tanh, np.tanh)]


def _erf(x: np.ndarray) -> np.ndarray: return np.vectorize(math.erf, otypes=[np.float64])(x)


def _gelu(x: np.ndarray) -> np.ndarray: return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


# activations and hyperbolic functions of float tensors: (name, method, float64 reference, piecewise). A piecewise function's
# value at NaN is not checked (as relu's); no smooth one is checked at +-inf, where a formula may give NaN for a limit.
ACTIVATIONS = [("relu6", Tensor.relu6, lambda x: np.clip(x, 0, 6), True), ("hardtanh", Tensor.hardtanh, lambda x: np.clip(x, -1, 1), True),
               ("hardsigmoid", Tensor.hardsigmoid, lambda x: np.clip(x / 6 + 0.5, 0, 1), True),
               ("hardswish", Tensor.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, True),
               ("leaky_relu", Tensor.leaky_relu, lambda x: np.where(x < 0, 0.01 * x, x), True),
               ("elu", Tensor.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))), True),
               ("selu", Tensor.selu, lambda x: 1.0507 * np.where(x >= 0, x, 1.67326 * np.expm1(np.minimum(x, 0))), True),
               ("softplus", Tensor.softplus, lambda x: np.logaddexp(0, x), False),
               ("logsigmoid", Tensor.logsigmoid, lambda x: -np.logaddexp(0, -x), False),
               ("silu", Tensor.silu, lambda x: x / (1 + np.exp(-x)), False), ("gelu", Tensor.gelu, _gelu, False),
               ("mish", Tensor.mish, lambda x: x * np.tanh(np.logaddexp(0, x)), False),
               ("softsign", Tensor.softsign, lambda x: x / (1 + np.abs(x)), False),
               ("sinh", Tensor.sinh, np.sinh, False), ("cosh", Tensor.cosh, np.cosh, False), ("asinh", Tensor.asinh, np.arcsinh, False),
               ("acosh", Tensor.acosh, np.arccosh, False), ("atanh", Tensor.atanh, np.arctanh, False), ("log10", Tensor.log10, np.log10, False),
               ("erf", Tensor.erf, _erf, False)]
# a composition evaluated step by step in a half dtype rounds at every step: its error may reach one ulp of 1.0
ACTIVATION_TOL = {dtypes.float16: (2e-3, 2.0 ** -10), dtypes.bfloat16: (1.6e-2, 2.0 ** -7), dtypes.float32: MATH_TOL[dtypes.float32],
                  dtypes.float64: MATH_TOL[dtypes.float64]}


def unary_cases(dt) -> list[Case]:
  x = edge_values(dt)
  cases = []
  fdt = float_of(dt)
  source = x.astype(np.float32) if not is_float(dt) else x  # ints and bools reach float math through a float32 cast
  with np.errstate(all="ignore"):
    for op, method, reference in FLOAT_MATH:
      cases.append(Case(f"{op}({name(dt)})", lambda method=method: method(tensor(x, dt)), fdt, fit(reference(source.astype(np.float64)), fdt),
                        MATH_TOL[fdt], operands=(x,)))
    # relu and sign of NaN differ between NumPy, torch and tinygrad: not checked
    nan = np.isnan(x.astype(np.float64)) if is_float(dt) else None
    exact = [("neg", Tensor.neg, np.logical_not(x) if dt is dtypes.bool else fit(np.negative(x), dt), None)]
    if dt is not dtypes.bool:
      exact += [("abs", Tensor.abs, fit(np.abs(x), dt), None), ("relu", Tensor.relu, fit(np.maximum(x, 0), dt), nan),
                ("sign", Tensor.sign, fit(np.sign(x), dt), nan),
                ("square", Tensor.square, fit(x.astype(np.float64) ** 2, dt) if is_float(dt) else x * x, None)]
      for op in ("floor", "ceil", "trunc"): exact.append((op, getattr(Tensor, op), fit(getattr(np, op)(x), dt) if is_float(dt) else x, None))
    if is_float(dt):
      exact += [("round", Tensor.round, fit(np.round(x), dt), None), ("isnan", Tensor.isnan, np.isnan(x), None),
                ("isinf", Tensor.isinf, np.isinf(x), None), ("isfinite", Tensor.isfinite, np.isfinite(x), None)]
    else: exact.append(("bitwise_not", lambda t: ~t, np.invert(x), None))
    exact.append(("logical_not", Tensor.logical_not, np.logical_not(x), None))
    for op, method, want, ignore in exact:
      want_dt = dtypes.bool if want.dtype == np.bool_ else dt
      cases.append(Case(f"{op}({name(dt)})", lambda method=method: method(tensor(x, dt)), want_dt, want, ignore=ignore, operands=(x,)))
    if is_float(dt):
      f = x.astype(np.float64)
      # tinygrad's erf is Abramowitz-Stegun 7.1.26, absolute error 1.5e-7
      for op, method, reference, piecewise in ACTIVATIONS:
        tol = (ACTIVATION_TOL[dt][0], max(ACTIVATION_TOL[dt][1], 3e-7)) if op == "erf" else ACTIVATION_TOL[dt]
        cases.append(Case(f"{op}({name(dt)})", lambda method=method: method(tensor(x, dt)), dt, fit(reference(f), dt), tol,
                          ignore=np.isnan(f) if piecewise else np.isinf(f), operands=(x,)))
    for shape in SHAPES[:-1]:
      v = values_for_shape(dt, shape)
      cases.append(Case(f"x+x({name(dt)}{shape})", lambda v=v, shape=shape: (lambda t: t + t)(tensor(v, dt).reshape(shape)), dt,
                        np.logical_or(v, v) if dt is dtypes.bool else fit(v + v, dt)))
      cases.append(Case(f"exp({name(dt)}{shape})", lambda v=v, shape=shape: tensor(v, dt).reshape(shape).exp(), fdt,
                        fit(np.exp((v.astype(np.float32) if not is_float(dt) else v).astype(np.float64)), fdt), MATH_TOL[fdt]))
  return cases


@pytest.mark.parametrize("dt", ALL, ids=name)
def test_unary(dt):
  check(unary_cases(dt))


# *** elementwise: binary ***

def grid(dt) -> tuple[np.ndarray, np.ndarray]:
  x = edge_values(dt)
  return x.reshape(-1, 1), x.reshape(1, -1)


def pair(a, b, dt) -> tuple[Tensor, Tensor]: return tensor(a, dt), tensor(b, dt)


def divisions(a, b, dt) -> tuple[np.ndarray, np.ndarray]:
  """a / b in the result dtype, correctly rounded and as tinygrad computes it, a * (1 / b)."""
  out = float_of(dt) if dt is not dtypes.bool else dtypes.float32
  fa, fb = fit(a.astype(np.float64), out).astype(np.float64), fit(b.astype(np.float64), out).astype(np.float64)
  with np.errstate(all="ignore"):
    return fit(fa / fb, out), fit(fa * fit(1 / fb, out).astype(np.float64), out)


def binary_cases(dt) -> list[Case]:
  a, b = grid(dt)
  ops = (a, b)
  fa, fb = a.astype(np.float64), b.astype(np.float64)
  cases = []

  def add(op, fn, want, want_dt=dt, **kw):
    cases.append(Case(f"{op}({name(dt)})", lambda: fn(*pair(a, b, dt)), want_dt, want, operands=ops, **kw))

  with np.errstate(all="ignore"):
    if dt is dtypes.bool:
      add("add", lambda x, y: x + y, a | b)
      add("mul", lambda x, y: x * y, a & b)
    elif is_float(dt):
      add("add", lambda x, y: x + y, fit(fa + fb, dt))
      add("sub", lambda x, y: x - y, fit(fa - fb, dt))
      add("mul", lambda x, y: x * y, fit(fa * fb, dt))
    else:
      add("add", lambda x, y: x + y, a + b)
      add("sub", lambda x, y: x - y, a - b)
      add("mul", lambda x, y: x * y, a * b)
    div_dt = float_of(dt)
    correctly_rounded, reciprocal_times = divisions(a, b, dt)
    add("div", lambda x, y: x / y, correctly_rounded, div_dt, tol=(2 * EPS[div_dt], 0.0), alts=(reciprocal_times,))
    add("maximum", lambda x, y: x.maximum(y), np.maximum(a, b))
    add("minimum", lambda x, y: x.minimum(y), np.minimum(a, b))
    for op, fn, ref in [("lt", lambda x, y: x < y, np.less), ("le", lambda x, y: x <= y, np.less_equal),
                        ("gt", lambda x, y: x > y, np.greater), ("ge", lambda x, y: x >= y, np.greater_equal),
                        ("eq", lambda x, y: x == y, np.equal), ("ne", lambda x, y: x != y, np.not_equal)]:
      add(op, fn, ref(a, b), dtypes.bool)
    condition = (np.add.outer(np.arange(a.shape[0]), np.arange(b.shape[1])) % 3 == 0)
    cases.append(Case(f"where({name(dt)})", lambda: Tensor(condition).where(*pair(a, b, dt)), dt, np.where(condition, a, b),
                      operands=(condition, a, b)))
    if dt is dtypes.bool or is_int(dt):
      add("and", lambda x, y: x & y, a & b)
      add("or", lambda x, y: x | y, a | b)
      add("xor", lambda x, y: x ^ y, a ^ b)
    if is_int(dt):
      undefined = b == 0
      safe_b = np.where(undefined, 1, b).astype(NP[dt])
      add("floordiv", lambda x, y: x // y, np.floor_divide(a, safe_b), ignore=undefined)
      add("mod", lambda x, y: x % y, np.mod(a, safe_b), ignore=undefined)
      bits = 8 * NP[dt]().itemsize
      shifts = np.array([0, 1, 3, bits - 1], dtype=NP[dt]).reshape(1, -1)
      for op, fn, ref in [("lshift", lambda x, y: x << y, np.left_shift), ("rshift", lambda x, y: x >> y, np.right_shift)]:
        cases.append(Case(f"{op}({name(dt)})", lambda fn=fn: fn(tensor(a, dt), tensor(shifts, dt)), dt, ref(a, shifts), operands=(a, shifts)))
      cases.append(Case(f"lshift 1({name(dt)})", lambda: tensor(a, dt) << 1, dt, np.left_shift(a, NP[dt](1)), operands=(a,)))
      cases.append(Case(f"rshift 2({name(dt)})", lambda: tensor(a, dt) >> 2, dt, np.right_shift(a, NP[dt](2)), operands=(a,)))
      small = np.array([-3, -2, -1, 0, 1, 2, 3] if dt in SINTS else [0, 1, 2, 3], dtype=NP[dt])
      for k in range(4):
        cases.append(Case(f"pow {k}({name(dt)})", lambda k=k: tensor(small, dt) ** k, dt, np.power(small, NP[dt](k)), operands=(small,)))
    if is_float(dt):
      # NumPy's exact floor quotient and remainder, or tinygrad's floor(a / b) and a - floor(a / b) * b rounded in the dtype
      floors = [fit(np.floor(q.astype(np.float64)), dt) for q in (correctly_rounded, reciprocal_times)]
      infinite_divisor = np.isinf(fb) & np.ones_like(fa, bool)
      add("floordiv", lambda x, y: x // y, fit(np.floor_divide(fa, fb), dt), alts=tuple(floors), ignore=infinite_divisor)
      remainders = tuple(fit(fa - fit(q.astype(np.float64) * fb, dt).astype(np.float64), dt) for q in floors)
      add("mod", lambda x, y: x % y, fit(np.mod(fa, fb), dt), alts=remainders, ignore=infinite_divisor)
      exponents = fit([0.0, -0.0, 1.0, 2.0, 3.0, -1.0, 0.5, -2.5, math.inf, -math.inf, math.nan], dt).reshape(1, -1)
      cases.append(Case(f"pow({name(dt)})", lambda: tensor(a, dt) ** tensor(exponents, dt), dt, fit(np.power(fa, exponents.astype(np.float64)), dt),
                        MATH_TOL[dt], operands=(a, exponents)))
    # a Python scalar operand: an int keeps an int or float tensor's dtype, a float makes ints float32, bool tensors promote
    scalar_int_dt = dtypes.int32 if dt is dtypes.bool else dt
    as_int = a.astype(np.int32) if dt is dtypes.bool else a
    cases.append(Case(f"x+3({name(dt)})", lambda: tensor(a, dt) + 3, scalar_int_dt,
                      fit(fa + 3, dt) if is_float(dt) else as_int + NP[scalar_int_dt](3), operands=(a,)))
    if dt is not dtypes.bool:
      cases.append(Case(f"1-x({name(dt)})", lambda: 1 - tensor(a, dt), dt, fit(1 - fa, dt) if is_float(dt) else NP[dt](1) - a, operands=(a,)))
    fdt = float_of(dt)
    cases.append(Case(f"x*2.5({name(dt)})", lambda: tensor(a, dt) * 2.5, fdt, fit(fit(a.astype(np.float64), fdt).astype(np.float64) * 2.5, fdt),
                      operands=(a,)))
    cases.append(Case(f"x<2({name(dt)})", lambda: tensor(a, dt) < 2, dtypes.bool, a < 2, operands=(a,)))
    cases.append(Case(f"maximum(x,1)({name(dt)})", lambda: tensor(a, dt).maximum(1), scalar_int_dt, np.maximum(as_int, 1).astype(NP[scalar_int_dt]),
                      operands=(a,)))
    if dt is not dtypes.bool:
      cases.append(Case(f"where(c,x,0)({name(dt)})", lambda: Tensor(condition[:, :1]).where(tensor(a, dt), 0), dt,
                        np.where(condition[:, :1], a, 0).astype(a.dtype), operands=(a,)))
  return cases


@pytest.mark.parametrize("dt", ALL, ids=name)
def test_binary(dt):
  check(binary_cases(dt))


# *** dtype promotion ***

# tinygrad's promotion lattice over the dtypes pytc has: each dtype and the dtypes it promotes to directly
LATTICE = {dtypes.bool: [dtypes.int8, dtypes.uint8], dtypes.int8: [dtypes.int16], dtypes.int16: [dtypes.int32], dtypes.int32: [dtypes.int64],
           dtypes.int64: [dtypes.float16, dtypes.bfloat16], dtypes.uint8: [dtypes.int16, dtypes.uint16], dtypes.uint16: [dtypes.int32, dtypes.uint32],
           dtypes.uint32: [dtypes.int64, dtypes.uint64], dtypes.uint64: [dtypes.float16, dtypes.bfloat16], dtypes.float16: [dtypes.float32],
           dtypes.bfloat16: [dtypes.float32], dtypes.float32: [dtypes.float64], dtypes.float64: []}


def upper_set(dt) -> set:
  return {dt}.union(*(upper_set(up) for up in LATTICE[dt]))


PRIORITY = [dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64,
            dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]


def promoted(a, b):
  return min(upper_set(a) & upper_set(b), key=PRIORITY.index)


@pytest.mark.parametrize("dt", ALL, ids=name)
def test_promotion(dt):
  # int64 with uint64 promotes to tinygrad's weak float, which no strong dtype stands for
  others = [o for o in ALL if {dt, o} != {dtypes.int64, dtypes.uint64}]
  x = np.array([0, 1, 1]) if dt is dtypes.bool else np.array([0, 1, 2])
  cases = []
  for other in others:
    out = promoted(dt, other)
    yo = np.array([1, 1, 0]) if other is dtypes.bool else np.array([1, 2, 5])
    want = (x.astype(bool) | yo.astype(bool)) if out is dtypes.bool else fit(x + yo, out)
    cases.append(Case(f"{name(dt)}+{name(other)}", lambda other=other, yo=yo: tensor(x.astype(NP[dt]), dt) + tensor(yo.astype(NP[other]), other),
                      out, want))
  check(cases)


# *** casts ***

def cast_want(x: np.ndarray, src, dst) -> tuple[np.ndarray, np.ndarray | None]:
  """The value of each element of `x` (held in `src`) cast to `dst`, and the mask of elements whose cast is undefined."""
  with np.errstate(all="ignore"):
    if dst is dtypes.bool: return x.astype(np.float64) != 0 if is_float(src) else x != 0, None
    if is_float(dst):
      if is_int(src): return fit(np.array([float(int(v)) for v in x.ravel()]).reshape(x.shape), dst), None
      return fit(x.astype(np.float64), dst), None
    if is_float(src):
      f = x.astype(np.float64)
      truncated = np.trunc(np.where(np.isfinite(f), f, 0))
      undefined = ~np.isfinite(f) | (truncated < lowest(dst)) | (truncated > highest(dst))
      return fit(np.array([int(v) for v in np.where(undefined, 0, truncated).ravel()], dtype=object).reshape(x.shape), dst), undefined
    return fit(np.array([int(v) for v in x.ravel()], dtype=object).reshape(x.shape), dst), None


@pytest.mark.parametrize("src", ALL, ids=name)
def test_cast(src):
  x = edge_values(src)
  if is_float(src): x = np.concatenate([x, fit([2.75, -2.75, 100.0, -100.0, 255.0, 200.5], src)])
  cases = []
  for dst in ALL:
    want, undefined = cast_want(x, src, dst)
    cases.append(Case(f"cast {name(src)}->{name(dst)}", lambda dst=dst: tensor(x, src).cast(dst), dst, want, ignore=undefined, operands=(x,)))
  check(cases)


# *** reductions ***

def reduction_data(dt) -> list[np.ndarray]:
  """Two (2, 3, 4) inputs for one compiled schedule: small exact values with ties, and the dtype's edge values."""
  if dt is dtypes.bool:
    clean = np.array([1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0], dtype=bool)
    return [clean.reshape(2, 3, 4), (~clean).reshape(2, 3, 4)]
  if dt in SINTS:
    lo, hi = lowest(dt), highest(dt)
    clean = [3, -1, 3, 0, 5, -4, 2, -4, 1, 1, 1, 1, -2, 6, 6, -3, 0, 2, -1, 2, 4, -4, 4, 0]
    edge = [lo, hi, 0, -1, hi, hi, 1, 2, lo, lo, -1, 0, hi, lo, hi, lo, 1, -1, 1, -1, 7, 7, 7, 7]
  elif dt in UINTS:
    hi = highest(dt)
    clean = [3, 1, 3, 0, 5, 4, 2, 4, 1, 1, 1, 1, 2, 6, 6, 3, 0, 2, 1, 2, 4, 0, 4, 0]
    edge = [0, hi, hi, 1, hi, 0, 2, hi, hi, hi, hi, hi, 1, 2, 3, 0, hi, 1, 0, 1, 7, 7, 7, 7]
  else:
    big = FLOAT_LIMITS[dt][0]
    clean = [1.5, -2.25, 0.5, 3.0, -1.0, 2.0, 3.0, -0.5, 0.25, 3.0, -4.0, 1.0, 0.0, -0.0, 2.5, -3.0, 3.0, 1.25, -1.75, 0.75, -4.0, 2.0, 0.5, -1.0]
    edge = [math.nan, 1.0, 2.0, 3.0, math.inf, 1.0, -1.0, 0.0, -math.inf, -math.inf, 2.0, 0.0,
            -0.0, 0.0, -0.0, -1.0, big, big, 1.0, 0.5, 1.0, math.nan, -2.0, math.nan]
    return [fit(clean, dt).reshape(2, 3, 4), fit(edge, dt).reshape(2, 3, 4)]
  return [fit(np.array(v, dtype=object), dt).reshape(2, 3, 4) for v in (clean, edge)]


def sum_dtype(dt):
  """tinygrad's sum accumulator: ints widen to 32 bits, unsigned stay unsigned, half floats accumulate in float32."""
  if dt is dtypes.bool: return dtypes.int32
  if dt in (dtypes.int8, dtypes.int16): return dtypes.int32
  if dt in (dtypes.uint8, dtypes.uint16): return dtypes.uint32
  return dt


def reduce_axes(x: np.ndarray, axis) -> tuple[int, ...]:
  if axis is None or x.ndim == 0: return tuple(range(x.ndim))
  return tuple(a % x.ndim for a in axis) if isinstance(axis, tuple) else (axis % x.ndim,)


def np_reduce(op: str, x: np.ndarray, dt, axis, keepdim: bool):
  """(expected dtype, expected values, tolerance) of `op` over `axis` of `x`, as tinygrad defines them."""
  axes = reduce_axes(x, axis)
  count = math.prod(x.shape[a] for a in axes)
  with np.errstate(all="ignore"):
    if op == "sum":
      acc = sum_dtype(dt)
      if is_float(dt): return dt, fit(np.sum(x.astype(np.float64), axis=axes, keepdims=keepdim), dt), (EPS[dt], 0.0)
      return acc, np.sum(x.astype(NP[acc]), axis=axes, keepdims=keepdim, dtype=NP[acc]), (0.0, 0.0)
    if op == "prod":
      if dt is dtypes.bool: return dt, np.all(x, axis=axes, keepdims=keepdim), (0.0, 0.0)
      if is_float(dt): return dt, fit(np.prod(x.astype(np.float64), axis=axes, keepdims=keepdim), dt), (4 * max(count, 1) * EPS[dt], 0.0)
      return dt, np.prod(x, axis=axes, keepdims=keepdim, dtype=NP[dt]), (0.0, 0.0)
    if op in ("max", "min"):
      identity = lowest(dt) if op == "max" else highest(dt)
      fn = np.max if op == "max" else np.min
      if count == 0: return dt, np.full(tuple(1 if i in axes else n for i, n in enumerate(x.shape)) if keepdim else
                                        tuple(n for i, n in enumerate(x.shape) if i not in axes), identity).astype(NP[dt]), (0.0, 0.0)
      return dt, fn(x, axis=axes, keepdims=keepdim), (0.0, 0.0)
    if op == "mean":
      out = dt if is_float(dt) else dtypes.float32
      if is_float(dt):  # the sum's accumulator (float32 for half floats) can overflow before the division
        acc = dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt
        total = fit(np.sum(x.astype(np.float64), axis=axes, keepdims=keepdim), acc).astype(np.float64)
      else: total = np.sum(x.astype(NP[sum_dtype(dt)]), axis=axes, keepdims=keepdim, dtype=NP[sum_dtype(dt)]).astype(np.float64)
      return out, fit(total / count if count else total * math.nan, out), (2 * EPS[out], 0.0)
    if op in ("argmax", "argmin"):
      flat = x.reshape(-1) if axis is None else x
      result = (np.argmax if op == "argmax" else np.argmin)(flat, axis=None if axis is None else axes[0], keepdims=keepdim)
      if axis is None and keepdim: result = np.asarray(result).reshape(())
      return dtypes.int32, np.asarray(result).astype(np.int32), (0.0, 0.0)
    if op in ("any", "all"):
      return dtypes.bool, (np.any if op == "any" else np.all)(x != 0, axis=axes, keepdims=keepdim), (0.0, 0.0)
  raise AssertionError(op)


REDUCTIONS = ["sum", "prod", "max", "min", "mean", "argmax", "argmin", "any", "all"]


def reduction_cases(dt, x: np.ndarray, variants) -> list[Case]:
  cases = []
  for op, axis, keepdim in variants:
    if op in ("argmax", "argmin") and (x.size == 0 or (x.ndim == 0 and axis is not None)): continue
    want_dt, want, tol = np_reduce(op, x, dt, axis, keepdim)
    cases.append(Case(f"{op}({name(dt)}{x.shape}, axis={axis}, keepdim={keepdim})",
                      lambda op=op, axis=axis, keepdim=keepdim: getattr(tensor(x, dt).reshape(x.shape), op)(axis, keepdim=keepdim),
                      want_dt, np.asarray(want), tol))
  return cases


@pytest.mark.parametrize("dt", ALL, ids=name)
def test_reductions(dt):
  variants = [(op, axis, False) for op in REDUCTIONS for axis in (None, 0, -1)] + [(op, 1, True) for op in REDUCTIONS]
  variants += [(op, (0, 2), False) for op in REDUCTIONS if not op.startswith("arg")]
  problems = []
  for data in reduction_data(dt): problems += run(reduction_cases(dt, data, variants))
  assert not problems, "\n".join(problems)


@pytest.mark.parametrize("dt", ALL, ids=name)
def test_reductions_edge_shapes(dt):
  cases = []
  for shape in SHAPES[:-1]:
    x = values_for_shape(dt, shape)
    if is_float(dt): x = np.where(np.isnan(x.astype(np.float64)), 0, x).astype(x.dtype)  # NaN is covered above
    axes = [None] + ([0, -1] if len(shape) != 1 else [0])
    cases += reduction_cases(dt, x, [(op, axis, keepdim) for op in REDUCTIONS for axis in axes for keepdim in ((False, True) if axis == -1 or
                                                                                                                len(shape) == 1 else (False,))])
  check(cases)


# *** cumulative ***

def cumulative_want(op: str, x: np.ndarray, dt, axis: int):
  with np.errstate(all="ignore"):
    if op == "cumsum":
      acc = sum_dtype(dt)
      if x.ndim == 0: return acc, fit(x.astype(np.float64), acc) if is_float(dt) else x.astype(NP[acc]), (0.0, 0.0)
      if is_float(dt): return acc, fit(np.cumsum(x.astype(np.float64), axis=axis), acc), (EPS[dt], 0.0)
      return acc, np.cumsum(x.astype(NP[acc]), axis=axis, dtype=NP[acc]), (0.0, 0.0)
    if op == "cumprod":
      if x.ndim == 0: return dt, x, (0.0, 0.0)
      if dt is dtypes.bool: return dt, np.logical_and.accumulate(x, axis=axis), (0.0, 0.0)
      if is_float(dt): return dt, fit(np.cumprod(x.astype(np.float64), axis=axis), dt), (4 * x.shape[axis] * EPS[dt], 0.0)
      return dt, np.cumprod(x, axis=axis, dtype=NP[dt]), (0.0, 0.0)
    if x.ndim == 0: return dt, x, (0.0, 0.0)
    return dt, (np.logical_or if dt is dtypes.bool else np.maximum).accumulate(x, axis=axis), (0.0, 0.0)


def first_max_index(x: np.ndarray, axis: int) -> np.ndarray:
  """cummax's indices: where along `axis` the running maximum was first reached (ties keep the earliest index)."""
  moved = np.moveaxis(x, axis, -1)
  out = np.zeros(moved.shape, np.int32)
  for index in np.ndindex(moved.shape[:-1]):
    best = 0
    for i in range(moved.shape[-1]):
      if moved[index + (i,)] > moved[index + (best,)]: best = i
      out[index + (i,)] = best
  return np.moveaxis(out, -1, axis)


def cumulative_cases(dt, x: np.ndarray, op: str, axis: int) -> list[Case]:
  label = f"{op}({name(dt)}{x.shape}, axis={axis})"
  want_dt, want, tol = cumulative_want(op, x, dt, axis)
  if op != "cummax": return [Case(label, lambda: getattr(tensor(x, dt).reshape(x.shape), op)(axis), want_dt, want, tol)]
  cases = [Case(label + " values", lambda: tensor(x, dt).reshape(x.shape).cummax(axis)[0], want_dt, want)]
  if x.ndim and not (is_float(dt) and np.isnan(x.astype(np.float64)).any()):
    cases.append(Case(label + " indices", lambda: tensor(x, dt).reshape(x.shape).cummax(axis)[1], dtypes.int32, first_max_index(x, axis)))
  return cases


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax"])
@pytest.mark.parametrize("dt", ALL, ids=name)
def test_cumulative(dt, op):
  problems = []
  for data in reduction_data(dt): problems += run([c for axis in (0, -1) for c in cumulative_cases(dt, data, op, axis)])
  cases = []
  for shape in SHAPES[:-1]:
    x = values_for_shape(dt, shape)
    for axis in ([0] if len(shape) < 2 else [0, 1]): cases += cumulative_cases(dt, x, op, axis)
  problems += run(cases)
  assert not problems, "\n".join(problems)


# *** shapes that reach vector code and multi-core launches ***

def small_ints(dt, shape, seed: int) -> np.ndarray:
  """Values whose products are exact in every dtype and whose sums are exact in the accumulator: ints in [-8, 8] ([0, 15]
  unsigned), eighths in [-2, 2] for floats (a float16 matmul is right only if it accumulates in float32)."""
  r = np.random.default_rng(seed)
  if dt is dtypes.bool: return r.random(shape) < 0.5
  if dt in UINTS: return r.integers(0, 16, shape).astype(NP[dt])
  if dt in SINTS: return r.integers(-8, 9, shape).astype(NP[dt])
  return fit(r.integers(-16, 17, shape) / 8, dt)


def wide_cases(dt, shape) -> list[Case]:
  """Rows of 37 (vector bodies and a ragged tail) and a 640x520 tensor (over the split threshold, so spread over cores)."""
  a, b, c = small_ints(dt, shape, 1), small_ints(dt, shape, 2), small_ints(dtypes.bool, shape, 3)
  w = small_ints(dt, (shape[-1], 24), 4)
  label = f"({name(dt)}{shape})"
  cases = [Case("maximum" + label, lambda: tensor(a, dt).maximum(tensor(b, dt)), dt, np.maximum(a, b)),
           Case("where" + label, lambda: Tensor(c).where(tensor(a, dt), tensor(b, dt)), dt, np.where(c, a, b)),
           Case("lt" + label, lambda: tensor(a, dt) < tensor(b, dt), dtypes.bool, a < b),
           Case("max(-1)" + label, lambda: tensor(a, dt).max(-1), dt, a.max(-1)), Case("min(0)" + label, lambda: tensor(a, dt).min(0), dt, a.min(0)),
           Case("argmax(-1)" + label, lambda: tensor(a, dt).argmax(-1), dtypes.int32, a.argmax(-1).astype(np.int32)),
           Case("any(-1)" + label, lambda: tensor(a, dt).any(-1), dtypes.bool, (a != 0).any(-1))]
  if dt is dtypes.bool: return cases
  exact = a.astype(np.float64) if is_float(dt) else a.astype(object)
  wide = (lambda v: fit(v, dt)) if is_float(dt) else (lambda v: fit(np.asarray(v, dtype=object), dt))
  acc = sum_dtype(dt)
  summed = (lambda v: fit(v, acc)) if is_float(dt) else (lambda v: fit(np.asarray(v, dtype=object), acc))
  cases += [Case("add" + label, lambda: tensor(a, dt) + tensor(b, dt), dt, wide(exact + b.astype(exact.dtype))),
            Case("mul" + label, lambda: tensor(a, dt) * tensor(b, dt), dt, wide(exact * b.astype(exact.dtype))),
            Case("cast" + label, lambda: tensor(a, dt).cast(dtypes.float32 if not is_float(dt) else dtypes.int32),
                 dtypes.float32 if not is_float(dt) else dtypes.int32, a.astype(np.float32) if not is_float(dt) else np.trunc(a).astype(np.int32)),
            Case("sum(-1)" + label, lambda: tensor(a, dt).sum(-1), acc, summed(exact.sum(-1))),
            Case("sum(0)" + label, lambda: tensor(a, dt).sum(0), acc, summed(exact.sum(0))),
            Case("matmul" + label, lambda: tensor(a, dt) @ tensor(w, dt), dt, wide(exact.dot(w.astype(exact.dtype))))]
  if shape[-1] < 100: cases.append(Case("cumsum(-1)" + label, lambda: tensor(a, dt).cumsum(-1), acc, summed(exact.cumsum(-1))))
  return cases


@pytest.mark.parametrize("dt", ALL, ids=name)
def test_wide(dt):
  check(wide_cases(dt, (3, 37)) + wide_cases(dt, (640, 520)))


# *** movement ***

def movement_cases(dt) -> list[Case]:
  x = reduction_data(dt)[1]
  pad_value = True if dt is dtypes.bool else 5 if is_int(dt) else -1.5
  cases = []

  def add(label, fn, ref, source=x):
    cases.append(Case(f"{label}({name(dt)}{source.shape})", lambda: fn(tensor(source, dt).reshape(source.shape)), dt, np.asarray(ref)))

  add("reshape(4,6)", lambda t: t.reshape(4, 6), x.reshape(4, 6))
  add("reshape(-1)", lambda t: t.reshape(-1), x.reshape(-1))
  add("permute(2,0,1)", lambda t: t.permute(2, 0, 1), x.transpose(2, 0, 1))
  add("transpose(0,1)", lambda t: t.transpose(0, 1), x.transpose(1, 0, 2))
  add("expand", lambda t: t.reshape(2, 3, 4, 1).expand(2, 3, 4, 2), np.broadcast_to(x.reshape(2, 3, 4, 1), (2, 3, 4, 2)))
  add("expand row", lambda t: t[:, :1].expand(2, 3, 4), np.broadcast_to(x[:, :1], (2, 3, 4)))
  add("pad", lambda t: t.pad(((1, 0), (0, 2), (1, 1))), np.pad(x, ((1, 0), (0, 2), (1, 1))))
  pad_fill = fit([pad_value], dt)[0]
  add("pad value", lambda t: t.pad(((0, 1), None, (2, 0)), value=pad_value), np.pad(x, ((0, 1), (0, 0), (2, 0)), constant_values=pad_fill))
  add("pad negative", lambda t: t.pad(((0, 0), (-1, 1), (1, -2))), np.pad(x[:, 1:, :2], ((0, 0), (0, 1), (1, 0))))
  add("shrink", lambda t: t.shrink(((0, 1), (1, 3), (1, 4))), x[0:1, 1:3, 1:4])
  add("flip(0)", lambda t: t.flip(0), x[::-1])
  add("flip(0,2)", lambda t: t.flip((0, 2)), x[::-1, :, ::-1])
  add("cat(0)", lambda t: t.cat(t.flip(0), dim=0), np.concatenate([x, x[::-1]], 0))
  add("cat(-1)", lambda t: t.cat(t[..., :1], t[..., 1:3], dim=-1), np.concatenate([x, x[..., :1], x[..., 1:3]], -1))
  add("stack(0)", lambda t: Tensor.stack(t, t.flip(1)), np.stack([x, x[:, ::-1]]))
  add("stack(-1)", lambda t: Tensor.stack(t, t.flip(0), dim=-1), np.stack([x, x[::-1]], -1))
  add("getitem int", lambda t: t[1], x[1])
  add("getitem step", lambda t: t[:, ::2, 1::2], x[:, ::2, 1::2])
  add("getitem negative step", lambda t: t[::-1, 1:, ::-3], x[::-1, 1:, ::-3])
  add("getitem none ellipsis", lambda t: t[None, ..., -1], x[None, ..., -1])
  add("getitem empty", lambda t: t[:, 1:1], x[:, 1:1])
  add("getitem tensor", lambda t: t[Tensor([1, 0, 1])], x[[1, 0, 1]])
  add("getitem tensor dim 1", lambda t: t[:, Tensor([2, -1, 0])], x[:, [2, -1, 0]])
  add("getitem tensor 2d", lambda t: t[Tensor([[0, 1], [1, 1]]), 2], x[[[0, 1], [1, 1]], 2])
  add("gather", lambda t: t.gather(2, Tensor(np.array([[[3, 0], [1, 1], [2, 0]]] * 2, np.int32))),
      np.take_along_axis(x, np.array([[[3, 0], [1, 1], [2, 0]]] * 2), 2))
  for shape in SHAPES[:-1]:
    v = values_for_shape(dt, shape)
    add("reshape(1,1,-1)", lambda t: t.reshape(1, 1, -1), v.reshape(1, 1, -1), v)
    add("expand(3,...)", lambda t: t.reshape((1,) + t.shape).expand((3,) + t.shape), np.broadcast_to(v[None], (3,) + v.shape), v)
    if v.ndim:
      add("flip(-1)", lambda t: t.flip(-1), np.flip(v, -1), v)
      add("pad(1,2)", lambda t: t.pad(((0, 0),) * (t.ndim - 1) + ((1, 2),), value=pad_value),
          np.pad(v, ((0, 0),) * (v.ndim - 1) + ((1, 2),), constant_values=pad_fill), v)
      add("cat self", lambda t: t.cat(t, dim=-1), np.concatenate([v, v], -1), v)
      add("stack self", lambda t: Tensor.stack(t, t, dim=0), np.stack([v, v]), v)
      add("permute reversed", lambda t: t.permute(*reversed(range(t.ndim))), v.transpose(), v)
  return cases


@pytest.mark.parametrize("dt", ALL, ids=name)
def test_movement(dt):
  check(movement_cases(dt))
