"""Numerics of the kernel lowering against NumPy: sin's range reduction, sums of half products, bfloat16 rounding,
and the special values (zeros, infinities, NaN, denormals, huge values) of the transcendental and root ops."""
import warnings

import numpy as np
import pytest
from accuracy import ulps

from pytc import Tensor, dtypes
from pytc.dtype import from_numpy, to_numpy


def bfloat16(values: np.ndarray) -> np.ndarray:
  """`values` rounded to bfloat16 (as float32)."""
  return to_numpy(from_numpy(np.asarray(values, np.float32), dtypes.bfloat16).tobytes(), dtypes.bfloat16, np.shape(values))


def same_special_values(got: np.ndarray, want: np.ndarray) -> bool:
  """NaN where want is NaN, equal infinities, zeros of the same sign."""
  got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
  exact = ~np.isfinite(want) | (want == 0)
  return bool(np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got[exact & ~np.isnan(want)], want[exact & ~np.isnan(want)])
              and np.array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0])))


@pytest.mark.parametrize("magnitude", [1.0, 1e2, 1e4, 1e5, 1e6, 1e7, 2.0**24, 1e9, 1e15, 1e20, 1e30, 3e38])
def test_sin_f32_rounds_correctly_at_any_magnitude(magnitude):
  rng = np.random.default_rng(int(np.log2(magnitude)))
  x = (rng.uniform(-1, 1, 4096) * magnitude).astype(np.float32)
  x[:8] = (np.arange(1, 9) * (np.pi / 32) * magnitude).astype(np.float32)  # near multiples of pi/2 at this scale
  assert ulps(Tensor(x).sin().numpy(), np.sin(x.astype(np.float64)), np.float32).max() <= 0.501


def test_sin_f32_near_multiples_of_pi():
  """The reduction keeps its accuracy where x - k pi cancels to a tiny remainder."""
  k = np.array([1, 2, 3, 355, 103993, 1 << 20, 5419351, 16367173 * 2.0**72 / np.pi])
  x = np.concatenate([np.nextafter((k * np.pi).astype(np.float32), np.float32(d)) for d in (-np.inf, 0, np.inf)]).astype(np.float32)
  x = np.concatenate([x, np.array([16367173 * 2.0**72, -3045577981952.0, 3045577981952.0], np.float32)])
  assert ulps(Tensor(x).sin().numpy(), np.sin(x.astype(np.float64)), np.float32).max() <= 0.501


def test_sin_mixes_huge_and_small_lanes_in_one_vector():
  x = np.tile(np.array([0.5, 3e38, -2.0, 1e10, 7.0, -1e30, 1e-3, 2.0**24 + 2], np.float32), 256)
  assert ulps(Tensor(x).sin().numpy(), np.sin(x.astype(np.float64)), np.float32).max() <= 0.501


def test_sin_cos_tan_special_values():
  x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-40], np.float32)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for op in ("sin", "cos", "tan"):
      assert same_special_values(getattr(Tensor(x), op)().numpy(), getattr(np, op)(x.astype(np.float64))), op
  assert np.signbit(Tensor(np.array([-0.0], np.float32)).sin().numpy()[0])


@pytest.mark.parametrize("op", ["sin", "cos", "tan"])
def test_trig_at_large_arguments_close_to_numpy(op):
  """cos reduces x + pi/2 as a whole (no f32 sum rounded first), so it keeps sin's accuracy at any magnitude."""
  x = np.array([1e1, 1e2, 1e3, 1e4, 1e5, 1e6, -1e1, -1e2, -1e3, -1e4, -1e5, -1e6], np.float32)
  np.testing.assert_allclose(getattr(Tensor(x), op)().numpy(), getattr(np, op)(x.astype(np.float64)), atol=3e-3, rtol=3e-3)


@pytest.mark.parametrize("dtype, tolerance", [(dtypes.float16, 1e-3), (dtypes.bfloat16, 8e-3), (dtypes.float64, 1e-15)])
def test_sin_other_float_types(dtype, tolerance):
  x = np.array([0.5, -2.0, 100.0, 1000.0, 6e4, -6e4, 0.0], np.float64)
  if dtype is dtypes.bfloat16: x = np.concatenate([x, [1e20, 3e38, -1e38]])
  if dtype is dtypes.float64: x = np.concatenate([x, [1e22, 1e300, -1e308]])
  stored = x.astype(np.float16) if dtype is dtypes.float16 else bfloat16(x) if dtype is dtypes.bfloat16 else x
  got = Tensor(stored.astype(np.float32) if dtype is dtypes.bfloat16 else stored).cast(dtype).sin().cast(dtypes.float64).numpy()
  np.testing.assert_allclose(got, np.sin(stored.astype(np.float64)), atol=tolerance, rtol=tolerance)


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16])
def test_narrow_matmul_rounds_once(dtype):
  """Products of f16/bf16 are exact in f32 and accumulate there: the result is the exact sum rounded once to the dtype,
  give or take the f32 summation's own error."""
  rng = np.random.default_rng(7)
  a, b = (rng.standard_normal((64, 64)) * 2).astype(np.float32), (rng.standard_normal((64, 64)) * 2).astype(np.float32)
  a, b = (a.astype(np.float16), b.astype(np.float16)) if dtype is dtypes.float16 else (bfloat16(a), bfloat16(b))
  exact = a.astype(np.float64) @ b.astype(np.float64)
  got = (Tensor(a.astype(np.float32)).cast(dtype) @ Tensor(b.astype(np.float32)).cast(dtype)).cast(dtypes.float64).numpy()
  rounded = exact.astype(np.float16).astype(np.float64) if dtype is dtypes.float16 else bfloat16(exact).astype(np.float64)
  ulp = np.abs(rounded) * (2.0**-10 if dtype is dtypes.float16 else 2.0**-7)
  assert np.all(np.abs(got - rounded) <= ulp + 1e-6 * np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
  assert np.mean(got == rounded) > 0.95


BF16_NASTY_BITS = np.array([0xFFFFFFFF, 0x7FFFFFFF, 0x7F800001, 0xFF800001, 0x7FC00000, 0xFFC00000, 0x7F800000, 0xFF800000, 0x7F7FFFFF,
                            0x7F7F7FFF, 0x7F7F8000, 0x00000001, 0x80000001, 0x00010000, 0x00018000, 0x80018000, 0x3F808000,
                            0x3F818000, 0x00000000, 0x80000000], np.uint32)


def test_bfloat16_from_numpy_keeps_nan_and_inf():
  x = BF16_NASTY_BITS.view(np.float32)
  back = to_numpy(from_numpy(x, dtypes.bfloat16).tobytes(), dtypes.bfloat16, x.shape)
  assert np.array_equal(np.isnan(back), np.isnan(x))
  assert np.array_equal(back[np.isinf(x)], x[np.isinf(x)]) and np.isposinf(back[list(BF16_NASTY_BITS).index(0x7F7FFFFF)])
  assert np.array_equal(np.signbit(back[np.isnan(x)]), np.signbit(x[np.isnan(x)]))
  assert from_numpy(np.array([0x00018000], np.uint32).view(np.float32), dtypes.bfloat16)[0] == 2  # a denormal, ties to even
  everything = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)  # every bf16 survives a round trip through f32
  as_f32 = to_numpy(everything.tobytes(), dtypes.bfloat16, everything.shape)
  again = from_numpy(as_f32, dtypes.bfloat16)
  nan = np.isnan(as_f32)
  assert np.array_equal(again[~nan], everything[~nan]) and np.isnan(to_numpy(again.tobytes(), dtypes.bfloat16, again.shape)[nan]).all()


@pytest.mark.parametrize("kind", ["f2", "f4", "f8", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "?"])
@pytest.mark.parametrize("order", ["<", ">"])
def test_numpy_arrays_of_either_byte_order_keep_their_values(kind, order):
  values = np.array([0, 1, 2, 100, 127] if kind != "?" else [True, False, True, True, False]).astype(order + kind)
  t = Tensor(values)
  assert t.dtype.name == np.dtype(kind).name
  np.testing.assert_array_equal(t.numpy(), values)
  np.testing.assert_array_equal((t + t).numpy(), values + values)


@pytest.mark.parametrize("shape", [(20,), (64, 20)])
def test_bfloat16_cast_in_a_kernel_rounds_like_the_host(shape):
  """NaN stays NaN, overflow rounds to inf, denormals are kept (not flushed), ties go to even, both scalar and vector code."""
  x = np.broadcast_to(BF16_NASTY_BITS.view(np.float32), shape).copy()
  got = Tensor(x).cast(dtypes.bfloat16).bitcast(dtypes.uint16).numpy()
  assert np.array_equal(got, from_numpy(x, dtypes.bfloat16))
  assert np.array_equal(Tensor(x).cast(dtypes.bfloat16).numpy(), to_numpy(from_numpy(x, dtypes.bfloat16).tobytes(), dtypes.bfloat16, shape),
                        equal_nan=True)


def test_bfloat16_from_float64_and_integers_rounds_once():
  """No double rounding through f32 (1 + 2^-8 + 2^-30 is just above a tie), no missing f64 conversion in the JIT."""
  x = np.array([1.0, np.nan, np.inf, -np.inf, 1e-39, 9.2e-41, 1.00390625 + 2**-30, -1.00390625 - 2**-30, 3.5e38, 1e300, -0.0, 1e-50])
  want = [0x3F80, 0x7FC0, 0x7F80, 0xFF80, 0x000B, 0x0001, 0x3F81, 0xBF81, 0x7F80, 0x7F80, 0x8000, 0x0000]
  assert list(from_numpy(x, dtypes.bfloat16)) == want
  assert list(Tensor(x).cast(dtypes.bfloat16).bitcast(dtypes.uint16).numpy()) == want
  assert list(Tensor(np.array([16842753, -16842753, 7], np.int32)).cast(dtypes.bfloat16).bitcast(dtypes.uint16).numpy()) == [0x4B81, 0xCB81, 0x40E0]
  assert list(from_numpy(np.array([16842753, -16842753, 7]), dtypes.bfloat16)) == [0x4B81, 0xCB81, 0x40E0]


def test_float64_to_float16_rounds_once():
  rng = np.random.default_rng(5)
  x = np.concatenate([[1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40), 65520.0 - 2**-20, 65520.0, 1e300, np.nan, -np.inf, 2.9e-8, 3e-8, -0.0],
                      rng.standard_normal(1000) * 10.0 ** rng.uniform(-9, 6, 1000)])
  with np.errstate(over="ignore"): want = x.astype(np.float16).view(np.uint16)
  np.testing.assert_array_equal(Tensor(x).cast(dtypes.float16).bitcast(dtypes.uint16).numpy(), want)


def test_bfloat16_arithmetic_keeps_denormal_results():
  x = bfloat16(np.array([8.5e37, 1e38, 2.0, 4.0], np.float32))
  got = Tensor(x).cast(dtypes.bfloat16).reciprocal().cast(dtypes.float32).numpy()
  np.testing.assert_array_equal(got, bfloat16(1 / x.astype(np.float64)))
  assert got[0] > 0 and got[1] > 0
  tiny = bfloat16(np.array([1e-38, 2e-39], np.float32))
  np.testing.assert_array_equal((Tensor(tiny).cast(dtypes.bfloat16) * 0.5).cast(dtypes.float32).numpy(), bfloat16(tiny.astype(np.float64) * 0.5))


EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, 0.5, 2.0, 1e-45, 1e-40, -1e-40, 1.1754944e-38, 6e-8, 1e-5, 88.7, 89.0, -87.0,
                  -103.0, -150.0, 127.5, 128.0, -149.0, 65504.0, 1e30, 3e38, -3e38], np.float64)
UNARY = {"exp": np.exp, "log": np.log, "exp2": np.exp2, "log2": np.log2, "sqrt": np.sqrt, "rsqrt": lambda a: 1 / np.sqrt(a),
         "reciprocal": lambda a: 1 / a}


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64])
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_edge_values_match_numpy(dtype, op):
  """Special results exactly (exp(-inf) = 0, log(0) = -inf, log(-1) = nan, sqrt(-0) = -0, ...), the rest closely."""
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    if dtype is dtypes.bfloat16:
      x = bfloat16(EDGES)
      got = getattr(Tensor(x).cast(dtypes.bfloat16), op)().cast(dtypes.float32).numpy()
      want = bfloat16(UNARY[op](x.astype(np.float64)))
    else:
      x = EDGES.astype(dtype.numpy)
      got, want = getattr(Tensor(x), op)().numpy(), UNARY[op](x.astype(np.float64)).astype(dtype.numpy)
  assert same_special_values(got, want), (x, got, want)
  finite = np.isfinite(want) & (want != 0)
  rtol = {dtypes.float16: 2e-3, dtypes.bfloat16: 1.6e-2, dtypes.float32: 2e-5, dtypes.float64: 1e-12}[dtype]
  np.testing.assert_allclose(got[finite], want[finite], rtol=rtol)


def random_float32(count: int, seed: int) -> np.ndarray:
  """Random bit patterns as float32: every magnitude, denormals, infinities and NaNs included."""
  return np.random.default_rng(seed).integers(0, 1 << 32, count, dtype=np.uint64).astype(np.uint32).view(np.float32)


def ulps_or_special(got: np.ndarray, want: np.ndarray) -> np.ndarray:
  """ulps in float32, with results that round to inf, 0 or NaN in f32 counted as 0 when got is exactly that and inf otherwise."""
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    rounded = want.astype(np.float32)
    special = ~np.isfinite(rounded) | (rounded == 0)
    exact = (got == rounded) | (np.isnan(got) & np.isnan(rounded))
    return np.where(special, np.where(exact, 0.0, np.inf), ulps(got, want, np.float32))


@pytest.mark.parametrize("op, bound", [("cos", 0.501), ("tan", 2.0)])
def test_cos_tan_f32_any_bits_close_to_numpy(op, bound):
  """cos is correctly rounded but for ties within 2^-10 ulp; tan, the quotient of two such in f64, within 2 ulp."""
  x = np.concatenate([random_float32(1 << 17, 11), np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3e38, -3e38, 2.0**24, 1e7], np.float32)])
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    want = getattr(np, op)(x.astype(np.float64))
  assert ulps_or_special(getattr(Tensor(x), op)().numpy(), want).max() <= bound


def test_cos_f32_near_its_zeros():
  """x next to (k + 1/2) pi, where cos(x) cancels to almost nothing, for k up to the far reduction and beyond."""
  k = np.concatenate([np.arange(0, 3000), [355, 103993, 1 << 20, 5340352, 9e6, 1e12, 3e20, 7e37]])
  centers = ((k + 0.5) * np.pi).astype(np.float32)
  x = np.concatenate([np.nextafter(centers, np.float32(d)) for d in (-np.inf, 0, np.inf)] + [-centers])
  assert ulps(Tensor(x).cos().numpy(), np.cos(x.astype(np.float64)), np.float32).max() <= 0.501


def test_cos_tan_exp_reported_values():
  assert Tensor(np.array([3e38], np.float32)).cos().item() == np.float32(np.cos(np.float64(np.float32(3e38))))
  assert Tensor(np.array([1.5], np.float16)).cos().item() == np.float16(np.cos(1.5))
  assert Tensor(np.array([-128], np.int8)).cos().item() == np.float32(np.cos(-128.0))
  assert Tensor(np.array([7.25], np.float32), dtype=dtypes.bfloat16).exp().item() == 1408.0
  big = Tensor(np.array([88.5], np.float32), dtype=dtypes.bfloat16)
  assert np.isfinite(big.exp().item()) and abs(big.exp().item() / np.exp(88.5) - 1) < 2**-8
  assert np.isfinite(big.sinh().item()) and np.isfinite(big.cosh().item())


def test_exp_f32_within_one_ulp_and_exact_at_the_ends():
  """Dense over the range where exp is finite and nonzero (denormal results too), and inf, 0, NaN exactly."""
  x = np.concatenate([np.linspace(-104, 89, 1 << 18, dtype=np.float32), np.linspace(-1, 1, 1 << 14, dtype=np.float32), random_float32(1 << 15, 12),
                      np.nextafter(np.float32([88.72283, 88.72284, -103.97208, -103.97209, -87.33655]), np.float32(0)),
                      np.float32([88.72283, 88.72284, -103.97208, -103.97209, 0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45])])
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    want = np.exp(x.astype(np.float64))
  assert ulps_or_special(Tensor(x).exp().numpy(), want).max() <= 1.0


def test_log_f32_within_one_ulp():
  x = np.concatenate([np.abs(random_float32(1 << 17, 13)), np.linspace(0.5, 2, 1 << 14, dtype=np.float32),
                      np.float32([0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 1.0, -1.0, 3.4028235e38])])
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    want = np.log(x.astype(np.float64))
  assert ulps_or_special(Tensor(x).log().numpy(), want).max() <= 1.0


def every_half(dtype) -> np.ndarray:
  """All 65536 float16 or bfloat16 values, as float32."""
  bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
  return bits.view(np.float16).astype(np.float32) if dtype is dtypes.float16 else to_numpy(bits.tobytes(), dtypes.bfloat16, bits.shape)


def half_bits(values: np.ndarray, dtype) -> np.ndarray:
  """Sign-magnitude bits of `values` rounded once to dtype, as integers ordered like the values (NaN as a huge number)."""
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    bits = values.astype(np.float16).view(np.uint16) if dtype is dtypes.float16 else from_numpy(values, dtypes.bfloat16)
  ordered = np.where(bits & 0x8000, -(bits & 0x7FFF).astype(np.int64), (bits & 0x7FFF).astype(np.int64))
  return np.where(np.isnan(values), 1 << 20, ordered)


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16])
@pytest.mark.parametrize("op", ["cos", "tan", "sin", "exp", "log", "exp2", "log2"])
def test_half_transcendentals_round_once_for_every_value(dtype, op):
  """Computed in f32 and rounded once: every result the correctly rounded one or its neighbour (f32's own rounding can
  tip a near tie), special values exactly."""
  x = every_half(dtype)
  got = getattr(Tensor(x).cast(dtype), op)().cast(dtypes.float32).numpy()
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    want = getattr(np, op)(x.astype(np.float64))
  distance = np.abs(half_bits(got.astype(np.float64), dtype) - half_bits(want, dtype))
  assert distance.max() <= 1 and np.mean(distance == 0) > 0.999


@pytest.mark.parametrize("op, derivative", [("cos", lambda x: -np.sin(x)), ("sin", np.cos), ("exp", np.exp), ("log", lambda x: 1 / x)])
def test_cos_sin_exp_log_gradients(op, derivative):
  x = np.array([0.3, 1.5, 2.0, 7.25, 1e3, 1e6], np.float32) if op != "exp" else np.array([-3.0, 0.0, 0.5, 7.25, 80.0], np.float32)
  t = Tensor(x, requires_grad=True)
  getattr(t, op)().sum().backward()
  np.testing.assert_allclose(t.grad.numpy(), derivative(x.astype(np.float64)), rtol=2e-6, atol=1e-7)


def test_exp_gradient_stays_zero_where_exp_overflows():
  t = Tensor(np.array([89.0, 1.0], np.float32), requires_grad=True)
  (t.exp() * Tensor(np.array([0.0, 1.0], np.float32))).sum().backward()
  np.testing.assert_allclose(t.grad.numpy(), [0.0, np.e], rtol=1e-6)  # 0 * e^89 = 0 * inf gives 0, not NaN
