"""Elementwise math and its gradients at the edges: saturation, zeros, infinities, NaN, integer widths and wrapping.
References are NumPy, closed forms in float64 and central finite differences."""
import math

import numpy as np
import pytest
from accuracy import ulps

from pytc import Tensor, dtypes

F64 = dtypes.float64
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def grad_of(fn, values, dtype=dtypes.float32) -> np.ndarray:
  x = Tensor(np.array(values, dtype=np.dtype(dtype.numpy)))
  return fn(x).sum().gradient(x)[0].numpy()


def finite_difference(fn, values: np.ndarray, eps: float = 1e-6) -> np.ndarray:
  numeric = np.zeros_like(values)
  for index in np.ndindex(values.shape):
    plus, minus = values.copy(), values.copy()
    plus[index] += eps
    minus[index] -= eps
    numeric[index] = (fn(Tensor(plus)).sum().item() - fn(Tensor(minus)).sum().item()) / (2 * eps)
  return numeric


# *** gradients that used to be NaN ***

def test_saturating_activations_have_finite_gradients():
  x = np.array([-400.0, -300.0, -30.0, 0.5, 30.0, 300.0, 400.0])
  s = 1 / (1 + np.exp(-x))
  np.testing.assert_allclose(grad_of(Tensor.sigmoid, x), s * (1 - s), atol=1e-7)
  np.testing.assert_allclose(grad_of(Tensor.tanh, x), 1 - np.tanh(x) ** 2, atol=1e-6)
  q = 1 / (1 + np.exp(-1.702 * x))
  np.testing.assert_allclose(grad_of(Tensor.quick_gelu, x), q + 1.702 * x * q * (1 - q), atol=1e-5)
  for approximate in ("tanh", "none"):
    assert np.all(np.isfinite(grad_of(lambda t, approximate=approximate: t.gelu(approximate=approximate), x)))


def test_exp_over_one_plus_exp_has_zero_gradient_where_exp_overflows():
  assert grad_of(lambda t: t.exp() / (1 + t.exp()), [300.0, -300.0]).tolist() == [0.0, 0.0]


def test_pow_gradients_at_zero_bases_and_exponents():
  b, e = Tensor([0.0, 0.0, 0.0, 0.0, -math.inf, math.inf, 2.0]), Tensor([0.0, 2.0, 0.3, -1.0, 0.0, 0.0, 3.0])
  db, de = (b ** e).sum().gradient(b, e)
  # d/db: e * b**(e-1), 0 where e == 0; d/de: b**e * ln(b), 0 at b == 0 for e >= 0 and -inf for e < 0
  np.testing.assert_array_equal(db.numpy(), [0.0, 0.0, math.inf, -math.inf, 0.0, 0.0, 12.0])
  np.testing.assert_allclose(de.numpy(), [0.0, 0.0, 0.0, -math.inf, math.nan, math.inf, 8 * math.log(2)], rtol=1e-6)
  for c, expected in ((-1.0, -math.inf), (0.0, 0.0), (0.3, math.inf), (1.0, 1.0), (2.0, 0.0)):
    assert grad_of(lambda t, c=c: t ** c, [0.0]).tolist() == [expected]


def test_rsqrt_at_zero():
  assert Tensor([0.0]).rsqrt().tolist() == [math.inf]
  assert grad_of(Tensor.rsqrt, [0.0]).tolist() == [-math.inf]


def test_relu_gradient_at_zero_and_clip_gradient_at_its_bounds():
  assert grad_of(Tensor.relu, [-1.0, 0.0, 1.0]).tolist() == [0.0, 0.0, 1.0]
  np.testing.assert_array_equal(Tensor([-math.inf, -0.0, 2.0, math.nan]).relu().numpy(), [0.0, 0.0, 2.0, math.nan])
  assert grad_of(lambda t: t.clip(-2.5, 1.5), [-3.0, -2.5, 0.0, 1.5, 2.0]).tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
  x = Tensor([-1.0, 1.0, 5.0])
  assert x.clip(3, 0).tolist() == [0.0, 0.0, 0.0] and x.clip(None, 0).tolist() == [-1.0, 0.0, 0.0]
  with pytest.raises(RuntimeError, match="clip needs"): x.clip()


def test_max_gradient_splits_ties_and_passes_none_through_nan():
  a, b = Tensor([1.0, 2.0, 3.0, math.nan]), Tensor([2.0, 2.0, 1.0, 1.0])
  da, db = a.maximum(b).sum().gradient(a, b)
  assert da.tolist() == [0.0, 0.5, 1.0, 0.0] and db.tolist() == [1.0, 0.5, 0.0, 0.0]


def test_gradients_of_comparisons_sign_and_copysign():
  x = np.array([-1.5, -0.5, 0.0, 0.5, 2.0])
  np.testing.assert_array_equal(grad_of(lambda t: t * (t < 0), x), x < 0)
  np.testing.assert_array_equal(grad_of(lambda t: t * (t != 0), x), x != 0)
  np.testing.assert_array_equal(grad_of(Tensor.sign, x), np.zeros(5))
  a, b = Tensor([-2.0, 3.0, 1.5, -1.0]), Tensor([1.0, -0.0, -4.0, 0.0])
  da, db = a.copysign(b).sum().gradient(a, b)
  assert da.tolist() == [-1.0, -1.0, -1.0, -1.0] and db.tolist() == [0.0, 0.0, 0.0, 0.0]


def test_sign_and_copysign_values():
  x = np.array([-2.0, -0.0, 0.0, 3.0, math.inf, -math.inf, math.nan], np.float32)
  np.testing.assert_array_equal(Tensor(x).sign().numpy(), np.sign(x))
  for other in (-1.0, -0.0, 0.0, 2.0, -math.inf):
    np.testing.assert_array_equal(Tensor(x).copysign(other).numpy(), np.copysign(x, np.float32(other)))
  assert Tensor([3, -4, 0]).sign().tolist() == [1, -1, 0]


def test_mul_reduction_gradients_with_zeros():
  assert grad_of(Tensor.prod, [1.0, 2.0, 3.0]).tolist() == [6.0, 3.0, 2.0]
  assert grad_of(Tensor.prod, [0.0, 2.0, 3.0]).tolist() == [6.0, 0.0, 0.0]
  assert grad_of(Tensor.prod, [0.0, 0.0, 3.0]).tolist() == [0.0, 0.0, 0.0]
  x = np.random.default_rng(0).uniform(-2, 2, (3, 4))
  x[1, 2] = x[2, 0] = x[2, 3] = 0.0
  for fn in (lambda t: t.prod(axis=1), lambda t: t.prod(axis=0, keepdim=True) * 2, lambda t: t.cumprod(1)):
    np.testing.assert_allclose(grad_of(fn, x, F64), finite_difference(fn, x), atol=1e-6)


def test_backward_fills_grad_of_tensors_left_at_requires_grad_none():
  x, frozen = Tensor([1.0, -2.0, 3.0]), Tensor([1.0, 1.0, 1.0], requires_grad=False)
  (x * x * frozen).sum().backward()
  assert x.grad.tolist() == [2.0, -4.0, 6.0] and frozen.grad is None
  y = Tensor([1.0, 2.0])
  (y > 1).cast(dtypes.float32).sum().backward()
  assert y.grad.tolist() == [0.0, 0.0]


# *** values ***

def test_isclose_with_infinities_and_nan():
  special = [math.inf, -math.inf, math.nan, 0.0, 1.0]
  a, b = np.array([[p for p in special for _ in special]], np.float32), np.array([special * len(special)], np.float32)
  for equal_nan in (False, True):
    np.testing.assert_array_equal(Tensor(a).isclose(Tensor(b), equal_nan=equal_nan).numpy(), np.isclose(a, b, equal_nan=equal_nan))
  x = np.array([1.0, 1.0 + 1e-7, 2.0, math.inf, math.nan], np.float32)
  np.testing.assert_array_equal(Tensor(x).isclose(1.0).numpy(), np.isclose(x, 1.0))


def test_softplus_does_not_overflow():
  x = np.array([-400.0, -30.0, 0.0, 1.0, 30.0, 400.0])
  for beta in (1.0, 3.0, 1 / 3):
    expected = np.logaddexp(beta * x, 0) / beta
    np.testing.assert_allclose(Tensor(x).softplus(beta).numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad_of(lambda t, beta=beta: t.softplus(beta), x, F64), 0.5 + 0.5 * np.tanh(beta * x / 2), atol=1e-12)


@pytest.mark.parametrize("np_dtype", INT_DTYPES)
def test_integer_maximum_minimum_abs_at_the_extremes(np_dtype):
  info = np.iinfo(np_dtype)
  a = np.array([info.min, info.min, info.max, 0, 9, info.max], np_dtype)
  b = np.array([info.max, 0, info.min, 4, 4, info.max - 1], np_dtype)
  np.testing.assert_array_equal(Tensor(a).maximum(Tensor(b)).numpy(), np.maximum(a, b))
  np.testing.assert_array_equal(Tensor(a).minimum(Tensor(b)).numpy(), np.minimum(a, b))
  np.testing.assert_array_equal(Tensor(a).minimum(4).numpy(), np.minimum(a, np_dtype(4)))
  np.testing.assert_array_equal(Tensor(a).abs().numpy(), np.abs(a))


def test_integer_pow_stays_integer():
  for exponent in (0, 1, 2, 7, 29):
    out = Tensor([-2, 0, 2, 11]) ** exponent
    assert out.dtype == dtypes.int32
    np.testing.assert_array_equal(out.numpy(), np.array([-2, 0, 2, 11], np.int32) ** np.int32(exponent))
  base, exponent = np.array([3, -3, 2, 5, 1, -1, -1, 7], np.int32), np.array([4, 3, 30, 0, -3, -3, -2, -1], np.int32)
  expected = np.where(exponent < 0, np.where(base == 1, 1, np.where(base == -1, np.where(exponent % 2, -1, 1), 0)), base ** np.maximum(exponent, 0))
  np.testing.assert_array_equal((Tensor(base) ** Tensor(exponent)).numpy(), expected)
  np.testing.assert_array_equal((2 ** Tensor(np.array([0, 5, 9], np.uint8))).numpy(), np.array([1, 32, 0], np.uint8))
  with pytest.raises(RuntimeError, match="int exponent >= 0"): Tensor([2]) ** -2
  assert (Tensor([4]) ** 0.5).tolist() == [2.0]


def test_python_ints_take_the_tensor_dtype_and_wrap():
  out = Tensor([3]) + 2 ** 40
  assert out.dtype == dtypes.int32 and out.tolist() == [3]
  assert (Tensor(np.array([250], np.uint8)) + 300).tolist() == [38]
  assert (Tensor(2 ** 64 - 1, dtype=dtypes.uint64) & 0xFFFFFFFF).item() == 0xFFFFFFFF


@pytest.mark.parametrize("np_dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32])
def test_shifts_by_the_width_or_more_are_deterministic(np_dtype):
  bits = 8 * np.dtype(np_dtype).itemsize
  values = np.array([1, 3, 5, np.iinfo(np_dtype).max, np.iinfo(np_dtype).min, 7], np_dtype)
  amounts = np.array([0, bits - 1, bits, bits + 8, bits, 2 * bits], np_dtype)
  wrap = lambda v: np.array(v & ((1 << bits) - 1), np.uint64).astype(np_dtype)
  np.testing.assert_array_equal((Tensor(values) << Tensor(amounts)).numpy(), [wrap(int(v) << int(s)) for v, s in zip(values, amounts)])
  np.testing.assert_array_equal((Tensor(values) >> Tensor(amounts)).numpy(), [int(v) >> int(s) for v, s in zip(values, amounts)])
  np.testing.assert_array_equal((Tensor(values) << bits + 8).numpy(), np.zeros(6, np_dtype))


def test_shifts_and_reflected_bitwise_ops():
  t, data = Tensor([[1, -8, 1], [32, 1, 6]]), np.array([[1, -8, 1], [32, 1, 6]], np.int32)
  np.testing.assert_array_equal((0x1337 & t).numpy(), 0x1337 & data)
  np.testing.assert_array_equal((0x1337 | t).numpy(), 0x1337 | data)
  np.testing.assert_array_equal((0x1337 ^ t).numpy(), 0x1337 ^ data)
  np.testing.assert_array_equal((1 << Tensor([0, 2, 4])).numpy(), [1, 4, 16])
  np.testing.assert_array_equal((64 >> Tensor([0, 2, 4])).numpy(), [64, 16, 4])
  for shift in (lambda: Tensor([1.0]) << 2, lambda: Tensor([4.0]) >> 1, lambda: t << 1.0, lambda: t >> Tensor([1.0])):
    with pytest.raises(RuntimeError, match="needs integer operands"): shift()


def test_div_rounding_modes():
  a, b = np.array([5, 6, 7, 0, -5, -6, -7]), np.array([-3, 2, -2, 3, 3, -2, 2])
  for ta, tb in ((Tensor(a), Tensor(b)), (Tensor(a.astype(np.float32)), Tensor(b.astype(np.float32)))):
    trunc, floor = ta.div(tb, rounding_mode="trunc"), ta.div(tb, rounding_mode="floor")
    assert trunc.dtype == ta.dtype and floor.dtype == ta.dtype and ta.div(tb).dtype == dtypes.float32
    np.testing.assert_array_equal(trunc.numpy(), np.trunc(a / b))
    np.testing.assert_array_equal(floor.numpy(), np.floor_divide(a, b))
  assert Tensor(-5).contiguous().div(2, rounding_mode="trunc").item() == -2
  assert Tensor(2 ** 64 - 1, dtype=dtypes.uint64).div(1, rounding_mode="trunc").item() == 2 ** 64 - 1
  with pytest.raises(RuntimeError, match="rounding_mode"): Tensor([1]).div(2, rounding_mode="round")


def test_gelu_exact_and_tanh_approximations():
  x = np.linspace(-5, 5, 41)
  exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
  tanh = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
  np.testing.assert_allclose(Tensor(x).gelu(approximate="none").numpy(), exact, atol=1e-6)
  np.testing.assert_allclose(Tensor(x).gelu().numpy(), tanh, atol=1e-12)
  with pytest.raises(RuntimeError, match="approximate"): Tensor(x).gelu(approximate="erf")


def test_normalize_p0_and_bce_with_pos_weight():
  x = np.array([[0.0, 2.0, -3.0], [0.0, 0.0, 1.0]])
  np.testing.assert_allclose(Tensor(x).normalize(p=0).numpy(), x / np.count_nonzero(x, axis=1, keepdims=True))
  logits, y, w = np.array([[-3.0, 0.0, 2.5]]), np.array([[0.0, 0.5, 1.0]]), np.array([0.5, 2.0, 3.0])
  p = 1 / (1 + np.exp(-logits))
  expected = -(w * y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
  np.testing.assert_allclose(Tensor(logits).binary_crossentropy_logits(Tensor(y), pos_weight=Tensor(w)).item(), expected, rtol=1e-12)
  np.testing.assert_allclose(Tensor(logits).binary_crossentropy_logits(Tensor(y)).item(), -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


# *** bool arithmetic, integer rounding, NaN comparisons ***

def test_bool_add_is_or_and_mul_is_and():
  a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
  for out, want in (((Tensor(a) + Tensor(b)), a | b), ((Tensor(a) * Tensor(b)), a & b), ((Tensor(a) - Tensor(b)), a | ~b),
                    (Tensor(a) + True, np.ones(4, bool)), (Tensor(a) * False, np.zeros(4, bool))):
    assert out.dtype == dtypes.bool
    np.testing.assert_array_equal(out.numpy(), want)
  assert Tensor([True]).cat(Tensor([False])).tolist() == [True, False]
  np.testing.assert_array_equal(Tensor.stack(Tensor(a), Tensor(b), dim=1).numpy(), np.stack([a, b], 1))
  assert Tensor(a).sum(dtype=dtypes.bool).item() is True and Tensor(a).sum().dtype == dtypes.int32 and Tensor(a).sum().item() == 2
  assert (Tensor(a) + 1).dtype == dtypes.int32


@pytest.mark.parametrize("dtype", [dtypes.int32, dtypes.uint64, dtypes.int8, dtypes.bool])
def test_rounding_an_integer_tensor_returns_it_unchanged(dtype):
  np_dtype = np.dtype(dtype.numpy)
  values = np.array([True, False] if dtype is dtypes.bool else [np.iinfo(np_dtype).max, np.iinfo(np_dtype).min, 3], np_dtype)
  for op in ("floor", "ceil", "trunc", "round"):
    out = getattr(Tensor(values), op)()
    assert out.dtype == dtype, op
    np.testing.assert_array_equal(out.numpy(), values)


def test_less_equal_and_greater_equal_are_false_at_nan():
  a = np.array([1.0, math.nan, 1.0, 2.0, math.nan, -math.inf], np.float32)
  b = np.array([math.nan, 1.0, 1.0, 1.0, math.nan, -math.inf], np.float32)
  np.testing.assert_array_equal((Tensor(a) <= Tensor(b)).numpy(), a <= b)
  np.testing.assert_array_equal((Tensor(a) >= Tensor(b)).numpy(), a >= b)
  np.testing.assert_array_equal((Tensor(a) >= 1.0).numpy(), a >= 1.0)
  np.testing.assert_array_equal((1.0 >= Tensor(a)).numpy(), 1.0 >= a)
  big = np.array([2 ** 62, -(2 ** 63), 5], np.int64)
  np.testing.assert_array_equal((Tensor(big) <= Tensor(big[::-1].copy())).numpy(), big <= big[::-1])


@pytest.mark.parametrize("n", [5, 600])
def test_cumprod_of_bool_stays_bool(n):
  x = np.ones((2, n), bool)
  x[0, n // 2], x[1, -1] = False, False
  out = Tensor(x).cumprod(1)
  assert out.dtype == dtypes.bool and Tensor(x).prod(1).dtype == dtypes.bool
  np.testing.assert_array_equal(out.numpy(), np.logical_and.accumulate(x, 1))


# *** saturating activations, inverse hyperbolic functions ***

def test_hard_activations_are_exact_at_any_magnitude():
  x = np.array([1e8, 3.4e38, math.inf, -3.4e38, -math.inf, 6.0, 0.0, 2.5, -1.0], np.float32)
  np.testing.assert_array_equal(Tensor(x).relu6().numpy(), np.clip(x, 0, 6))
  np.testing.assert_allclose(Tensor(x).hardsigmoid().numpy(), np.clip(x / 6 + 0.5, 0, 1), rtol=2e-7)
  with np.errstate(invalid="ignore"): want = x * np.clip(x / 6 + 0.5, 0, 1)
  np.testing.assert_allclose(Tensor(x).hardswish().numpy(), want, rtol=3e-7)
  # tinygrad's kinks: relu6'(0) = 0 and relu6'(6) = 1; hardswish' = 1 far right, 0 far left
  assert grad_of(Tensor.relu6, [-1.0, 0.0, 3.0, 6.0, 7.0, 1e30]).tolist() == [0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
  assert grad_of(Tensor.hardswish, [1e30, -1e30, 0.0, 3.0, -3.0]).tolist() == [1.0, 0.0, 0.5, 1.5, 0.0]


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
def test_asinh_acosh_are_accurate_across_the_range(np_dtype):
  top = float(np.finfo(np_dtype).max)
  mags = np.append(np.geomspace(float(np.finfo(np_dtype).tiny), top / 2, 600), top)
  x = np.concatenate([-mags, mags]).astype(np_dtype)
  assert ulps(Tensor(x).asinh().numpy(), np.arcsinh(x.astype(np.float64)), np_dtype).max() <= 4
  y = np.concatenate([1 + np.geomspace(1e-7, 1, 200), np.geomspace(1, top / 2, 400), [top]]).astype(np_dtype)
  assert ulps(Tensor(y).acosh().numpy(), np.arccosh(y.astype(np.float64)), np_dtype).max() <= 5
  special = Tensor(np.array([math.inf, -math.inf, math.nan, 0.5, -1.0, -top], np_dtype))
  np.testing.assert_array_equal(special.asinh().numpy()[:3], [math.inf, -math.inf, math.nan])
  assert np.isnan(special.acosh().numpy()[2:]).all() and special.acosh().numpy()[0] == math.inf
  big = np.array([-1e30, 1e30, 1e3, 0.0])
  np.testing.assert_allclose(grad_of(Tensor.asinh, big, F64), 1 / np.sqrt(big * big + 1), rtol=1e-12)
  np.testing.assert_allclose(grad_of(Tensor.acosh, np.array([1e30, 1.5, 1.0 + 1e-9]), F64), 1 / np.sqrt(np.array([1e60, 1.25, 2e-9])), rtol=1e-6)


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16])
def test_asinh_acosh_in_half_precision(dtype):
  x = np.array([-7.25, -65504.0, 6.1e-5, 0.3, 1.0, 2.5, 60000.0], np.float32)
  got = Tensor(x).cast(dtype).asinh().float().numpy()
  rounded = Tensor(x).cast(dtype).float().numpy().astype(np.float64)
  want = Tensor(np.arcsinh(rounded).astype(np.float32)).cast(dtype).float().numpy()
  np.testing.assert_array_equal(got, want)
  y = rounded[rounded >= 1]
  np.testing.assert_array_equal(Tensor(y.astype(np.float32)).cast(dtype).acosh().float().numpy(),
                                Tensor(np.arccosh(y).astype(np.float32)).cast(dtype).float().numpy())


# *** gradients of odd functions at 0 ***

def test_odd_functions_have_their_slope_at_zero():
  x = [0.0, -0.0, 1.0, -1.0]
  np.testing.assert_allclose(grad_of(Tensor.asin, x[:2], F64), [1.0, 1.0], rtol=1e-12)
  np.testing.assert_allclose(grad_of(Tensor.acos, x[:2], F64), [-1.0, -1.0], rtol=1e-12)
  np.testing.assert_allclose(grad_of(Tensor.atan, x, F64), [1.0, 1.0, 0.5, 0.5], rtol=1e-12)
  np.testing.assert_allclose(grad_of(Tensor.erf, x[:2], F64), [2 / math.sqrt(math.pi)] * 2, rtol=1e-12)
  assert Tensor(np.array(x)).asin().tolist()[:2] == [0.0, 0.0] and Tensor(np.array(x)).erf().tolist()[:2] == [0.0, 0.0]
  for name, reference in (("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan)):
    v = np.array([1e-20, -3e-5, 0.3, -0.5, 0.75, -0.999, 1.0, 1e30, -4.0])
    if name != "atan": v = v[np.abs(v) <= 1]
    np.testing.assert_allclose(getattr(Tensor(v), name)().numpy(), reference(v), rtol=1e-14, atol=0)


def test_copysign_gradient_is_nan_at_nan_and_zero_at_zero():
  a, b = Tensor([math.nan, math.nan, 0.0, -2.0, 3.0]), Tensor([1.0, -1.0, -1.0, 1.0, -0.0])
  np.testing.assert_array_equal(a.copysign(b).sum().gradient(a)[0].numpy(), [math.nan, math.nan, 0.0, -1.0, -1.0])


# *** composite activations of half floats ***

def test_half_activations_round_once():
  x = np.array([6.1e-5, 5.96e-8, -7.25, -2.0, 0.5, 3.0], np.float32)
  references = {"erf": np.vectorize(math.erf), "mish": lambda v: v * np.tanh(np.logaddexp(0, v)), "silu": lambda v: v / (1 + np.exp(-v)),
                "softplus": lambda v: np.logaddexp(0, v), "gelu": lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))}
  for name, reference in references.items():
    half = Tensor(x).cast(dtypes.float16)
    got = getattr(half, name)()
    assert got.dtype == dtypes.float16
    want = reference(half.numpy().astype(np.float64))
    assert ulps(got.numpy(), want, np.float16).max() <= 1, name


# *** hyperbolic, error and logistic functions keep their relative precision at tiny and huge inputs ***

def sigmoid_reference(v: np.ndarray) -> np.ndarray:
  e = np.exp(-np.abs(v))
  return np.where(v < 0, e / (1 + e), 1 / (1 + e))


SMOOTH_REFERENCES = {
  "tanh": (np.tanh, 30.0), "sinh": (np.sinh, 80.0), "cosh": (np.cosh, 80.0), "atanh": (np.arctanh, 1.0), "erf": (np.vectorize(math.erf), 30.0),
  "sigmoid": (sigmoid_reference, 80.0), "softplus": (lambda v: np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v))), 80.0),
  "logsigmoid": (lambda v: np.minimum(v, 0) - np.log1p(np.exp(-np.abs(v))), 80.0),
  "elu": (lambda v: np.where(v > 0, v, np.expm1(v)), 80.0), "celu": (lambda v: np.where(v > 0, v, 2 * np.expm1(v / 2)), 80.0)}


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
def test_smooth_functions_are_accurate_at_every_magnitude(np_dtype):
  seams = [0.5, 0.55, 1.0, 4.0, 6.0, 20.0]
  for name, (reference, top) in SMOOTH_REFERENCES.items():
    mags = np.concatenate([np.geomspace(float(np.finfo(np_dtype).tiny), top, 500), [s for s in seams if s < top], np.nextafter(np.array(seams), 0)])
    x = np.concatenate([-mags, mags]).astype(np_dtype)
    if name == "atanh": x = x[np.abs(x) < 1]
    fn = (lambda t: t.celu(2.0)) if name == "celu" else getattr(Tensor, name)
    assert ulps(fn(Tensor(x)).numpy(), reference(x.astype(np.float64)), np_dtype).max() <= 4, name


def test_smooth_functions_at_their_limits():
  for np_dtype, big in ((np.float32, 89.0), (np.float64, 710.0)):  # e^big overflows, sinh and cosh of it do not
    x = np.array([big, -big], np_dtype)
    np.testing.assert_allclose(Tensor(x).sinh().numpy(), np.sinh(x.astype(np.float64)), rtol=4 * np.finfo(np_dtype).eps)
    np.testing.assert_allclose(Tensor(x).cosh().numpy(), np.cosh(x.astype(np.float64)), rtol=4 * np.finfo(np_dtype).eps)
  special = Tensor([math.inf, -math.inf, math.nan, 0.0, -0.0])
  odd = [1.0, -1.0, math.nan, 0.0, -0.0]
  for name, want in (("tanh", odd), ("erf", odd), ("sigmoid", [1.0, 0.0, math.nan, 0.5, 0.5]), ("sinh", [math.inf, -math.inf, math.nan, 0.0, -0.0]),
                     ("softplus", [math.inf, 0.0, math.nan, math.log(2), math.log(2)])):
    got = getattr(special, name)().numpy()
    np.testing.assert_array_equal(got, np.array(want, np.float32), err_msg=name)
    assert list(np.signbit(got[3:])) == list(np.signbit(want[3:])), name
  np.testing.assert_array_equal(Tensor([1.0, -1.0, 2.0, -1.5, math.nan]).atanh().numpy(), [math.inf, -math.inf, math.nan, math.nan, math.nan])


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16])
def test_smooth_functions_of_half_floats_are_rounded_from_float32(dtype):
  x = np.array([-3.0, -0.6, -1e-3, 6e-5, 1e-4, 0.25, 0.54, 0.99, 2.0, 9.0], np.float32)
  half = Tensor(x).cast(dtype)
  rounded = half.float().numpy().astype(np.float64)
  for name in ("tanh", "atanh", "erf", "sigmoid", "sinh", "elu"):
    reference = SMOOTH_REFERENCES[name][0]
    with np.errstate(invalid="ignore"): want = Tensor(reference(rounded).astype(np.float32)).cast(dtype).float().numpy()
    np.testing.assert_allclose(getattr(half, name)().float().numpy(), want, rtol=2 ** -7, err_msg=name)


def test_smooth_function_gradients_near_zero_at_the_seams_and_far_out():
  x = np.array([0.0, -1e-20, 1e-5, -0.3, 0.55, np.nextafter(0.55, 0), 0.9, -1.0, np.nextafter(1.0, 2), 3.9, 4.1, -5.9, 6.1, 19.9, 20.1, -400.0])
  e = np.exp(-2 * np.abs(x))
  np.testing.assert_allclose(grad_of(Tensor.tanh, x, F64), 4 * e / (1 + e) ** 2, rtol=1e-12)  # sech^2
  np.testing.assert_allclose(grad_of(Tensor.erf, x, F64), 2 / math.sqrt(math.pi) * np.exp(-x * x), rtol=1e-10, atol=1e-15)
  np.testing.assert_allclose(grad_of(Tensor.erf, x, dtypes.float32), 2 / math.sqrt(math.pi) * np.exp(-x * x), rtol=1e-5, atol=2e-7)
  np.testing.assert_allclose(grad_of(Tensor.sigmoid, x, F64), sigmoid_reference(x) * sigmoid_reference(-x), rtol=1e-12)
  np.testing.assert_allclose(grad_of(Tensor.sinh, x[:-1], F64), np.cosh(x[:-1]), rtol=1e-12)
  np.testing.assert_allclose(grad_of(Tensor.cosh, x[:-1], F64), np.sinh(x[:-1]), rtol=1e-12, atol=1e-15)
  inside = x[np.abs(x) < 1]
  np.testing.assert_allclose(grad_of(Tensor.atanh, inside, F64), 1 / (1 - inside * inside), rtol=1e-12)
  np.testing.assert_allclose(grad_of(Tensor.elu, x, F64), np.where(x > 0, 1.0, np.where(x < 0, np.exp(x), 0.0)), rtol=1e-12)
  for fn in (Tensor.tanh, Tensor.atanh, Tensor.erf, Tensor.sinh):  # the finite difference of pytc's own forward pass
    v = np.array([1e-3, -0.2, 0.52, 0.58, 0.97, 1.05])
    v = v[np.abs(v) < 1] if fn is Tensor.atanh else v
    np.testing.assert_allclose(grad_of(fn, v, F64), finite_difference(fn, v), rtol=1e-6)


def test_logaddexp_softplus_and_logsumexp_at_the_edges():
  a = Tensor([math.inf, -math.inf, -math.inf, 1e30, 0.0, -20.0])
  b = Tensor([math.inf, -math.inf, 3.0, 1e30, -30.0, 0.0])
  np.testing.assert_allclose(a.logaddexp(b).numpy(), [math.inf, -math.inf, 3.0, 1e30, np.log1p(np.exp(-30.0)), np.log1p(np.exp(-20.0))], rtol=3e-7)
  x = np.array([-20.0, -100.0, 30.0, 1e30])
  np.testing.assert_allclose(Tensor(x).softplus().numpy(), SMOOTH_REFERENCES["softplus"][0](x), rtol=3e-7)
  np.testing.assert_allclose(Tensor(-x).logsigmoid().numpy(), SMOOTH_REFERENCES["logsigmoid"][0](-x), rtol=3e-7)
  ta, tb = Tensor([1.0, 2.0, 5.0]), Tensor([1.0, 2.5, -math.inf])
  da, db = ta.logaddexp(tb).sum().gradient(ta, tb)
  np.testing.assert_allclose(da.numpy(), [0.5, sigmoid_reference(np.array(-0.5)), 1.0], rtol=1e-6)
  np.testing.assert_allclose(db.numpy(), [0.5, sigmoid_reference(np.array(0.5)), 0.0], rtol=1e-6)
  rows = Tensor([[-math.inf, -math.inf], [math.inf, 0.0], [1.0, 1.0]])
  np.testing.assert_allclose(rows.logsumexp(axis=1).numpy(), [-math.inf, math.inf, 1 + math.log(2)], rtol=1e-7)


@pytest.mark.parametrize("size", [3, 1000])  # scalar and vector kernels
def test_bfloat16_maximum_minimum_keep_denormals(size):
  """max/min of bf16 are exact: a denormal result must not be flushed to zero (LLVM's bf16 max did, through its truncation)."""
  tiny = np.float32(9.183549615799121e-41)  # the smallest bf16 denormal, exact in f32
  a = np.resize(np.array([0.0, -0.0, -1.0, 1.0, -tiny], np.float32), size)
  b = np.resize(np.array([tiny, tiny, tiny, -tiny, 2 * tiny], np.float32), size)
  x, y = Tensor(a, dtype=dtypes.bfloat16), Tensor(b, dtype=dtypes.bfloat16)
  np.testing.assert_array_equal(x.maximum(y).cast(dtypes.float32).numpy(), np.maximum(a, b))
  np.testing.assert_array_equal(x.minimum(y).cast(dtypes.float32).numpy(), np.minimum(a, b))


def test_gelu_and_tanh_in_one_kernel_over_special_values():
  """GELU's masks stay inline (one kernel): every lane of the vector code, and the tail, against NumPy at ±0, ±inf, NaN, huge and tiny."""
  special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-30, -1e-30, 0.3, -0.55, 9.0], np.float32)
  x = np.concatenate([special, np.random.default_rng(3).standard_normal(1001).astype(np.float32) * 4])
  with np.errstate(over="ignore", invalid="ignore"):
    gelu = (0.5 * x.astype(np.float64) * (1 + np.tanh(math.sqrt(2 / math.pi) * (x.astype(np.float64) + 0.044715 * x.astype(np.float64) ** 3))))
  np.testing.assert_allclose(Tensor(x).gelu().numpy(), gelu.astype(np.float32), rtol=2e-6, atol=1e-7)
  got = Tensor(x).tanh().numpy()
  np.testing.assert_allclose(got, np.tanh(x), rtol=2e-6, atol=1e-30)
  assert np.array_equal(np.signbit(got[:2]), [False, True])  # tanh keeps the sign of zero
