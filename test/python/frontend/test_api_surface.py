"""dtypes helpers and fp8 storage types, dtype strings, creation and random methods, Tensor protocol methods, and the nn
layers and optimizers against NumPy, and against torch where it is installed (torch is not a test dependency: those
checks skip without it)."""
import math

import numpy as np
import pytest

from pytc import Tensor, dtypes, nn
from pytc.dtype import DTYPES_DICT, least_upper_dtype, to_dtype
from pytc.helpers import Context

REFERENCES = ["numpy", "torch"]


def import_torch():
  return pytest.importorskip("torch", reason="torch is not a test dependency: install it to compare with it")


# *** dtypes ***


def test_dtype_groups_and_questions():
  assert dtypes.is_int(dtypes.int8) and dtypes.is_int(dtypes.uint64) and not dtypes.is_int(dtypes.float32) and not dtypes.is_int(dtypes.bool)
  assert dtypes.is_unsigned(dtypes.uint16) and not dtypes.is_unsigned(dtypes.int16) and not dtypes.is_unsigned(dtypes.fp8e4m3)
  assert dtypes.is_float(dtypes.bfloat16) and dtypes.is_float(dtypes.fp8e5m2) and not dtypes.is_float(dtypes.int32)
  assert dtypes.is_bool(dtypes.bool) and not dtypes.is_bool(dtypes.uint8)
  assert set(dtypes.all) == set(dtypes.floats) | set(dtypes.ints) | {dtypes.bool} and len(dtypes.all) == 17
  assert dtypes.fp8s == dtypes.fp8_ocp + dtypes.fp8_fnuz and dtypes.ints == dtypes.uints + dtypes.sints
  assert dtypes.finfo(dtypes.float16) == (5, 10) and dtypes.finfo(dtypes.fp8e4m3) == (4, 3)
  with pytest.raises(ValueError): dtypes.finfo(dtypes.int32)
  aliases = (dtypes.long, dtypes.char, dtypes.uchar, dtypes.ushort, dtypes.ulong)
  assert aliases == (dtypes.int64, dtypes.int8, dtypes.uint8, dtypes.uint16, dtypes.uint64)
  assert dtypes.from_py([1, 2.0]) is dtypes.float32 and dtypes.from_py([[True], [False]]) is dtypes.bool and dtypes.from_py(3) is dtypes.int32


def test_dtype_min_max_and_sizes():
  assert (dtypes.int.min, dtypes.int.max) == (-2**31, 2**31 - 1)
  assert (dtypes.uint8.min, dtypes.uint8.max, dtypes.int64.max) == (0, 255, 2**63 - 1)
  assert (dtypes.bool.min, dtypes.bool.max) == (False, True) and dtypes.half.max == math.inf and dtypes.float32.min == -math.inf
  assert dtypes.int16.bitsize == 16 and dtypes.int64.fmt == "q" and dtypes.bfloat16.fmt is None and dtypes.fp8e4m3.itemsize == 1


def test_dtype_names_and_strings():
  assert to_dtype("int32") is dtypes.int32 and to_dtype("half") is dtypes.float16 and to_dtype("FLOAT") is dtypes.float32
  assert DTYPES_DICT["long"] is dtypes.int64 and "default_float" not in DTYPES_DICT
  with pytest.raises(AttributeError): to_dtype("float128")
  assert Tensor([1], dtype="int32").dtype is dtypes.int32 and Tensor([1.5]).cast("uint8").dtype is dtypes.uint8
  assert Tensor.linspace(5, 10, 3, dtype="int32").tolist() == [5, 7, 10]
  assert Tensor.zeros(2, dtype="int64").dtype is dtypes.int64 and Tensor.arange(3, dtype="int16").dtype is dtypes.int16
  assert (Tensor([0], dtype="int") | 0xFFFFFFFF).item() == -1
  assert Tensor([1.0, 2.0]).bitcast("uint32").dtype is dtypes.uint32
  assert dtypes.from_numpy(np.uint8) is dtypes.uint8 and dtypes.from_numpy(np.uint16) is dtypes.uint16


BITCAST_DTYPES = [d for d in dtypes.all if d is not dtypes.bool]


def raw_bytes(t: Tensor) -> bytes:
  """The bytes of `t` (fp8 and bfloat16 through an unsigned type of their size)."""
  return t.bitcast(dtypes.unsigned_of(t.dtype.itemsize)).numpy().tobytes()


@pytest.mark.parametrize("source", BITCAST_DTYPES, ids=str)
def test_bitcast_between_item_sizes_reads_the_same_little_endian_bytes(source):
  rng = np.random.default_rng(source.itemsize)
  for leading in ((2, 3), (1, 1), (0,), ()):
    data = rng.integers(0, 256, size=(*leading, 8), dtype=np.uint8)
    x = Tensor(data).bitcast(source) if source.itemsize == 1 else Tensor(data.view(f"<u{source.itemsize}")).bitcast(source)
    for target in BITCAST_DTYPES:
      y = x.bitcast(target)
      assert y.dtype is target and y.shape == (*leading, 8 // target.itemsize), (source, target)
      assert raw_bytes(y) == data.tobytes(), (source, target, leading)


def test_bitcast_of_bools_and_misfit_shapes():
  assert Tensor([True, False, True, True]).bitcast(dtypes.int32).tolist() == [0x01010001]
  assert Tensor([[-1.0, 2.0]]).bitcast(dtypes.int16).tolist() == [[0, -16512, 0, 16384]]
  with pytest.raises(RuntimeError, match="whole"): Tensor.empty(3, dtype=dtypes.int8).bitcast(dtypes.float16)
  with pytest.raises(RuntimeError, match="whole"): Tensor.empty(2, 6, dtype=dtypes.int16).bitcast(dtypes.int64)
  with pytest.raises(RuntimeError, match="whole"): Tensor(1.5).bitcast(dtypes.int8)
  assert Tensor(1.5).bitcast(dtypes.int32).item() == 0x3FC00000


def test_int_extremes_survive_maximum_and_minimum():
  values = [-1234, 0, 1234, dtypes.int.max, dtypes.int.min]
  for other in (dtypes.int.max, dtypes.int.min):
    np.testing.assert_array_equal(Tensor(values).maximum(other).numpy(), np.maximum(values, other))
    np.testing.assert_array_equal(Tensor(values).minimum(other).numpy(), np.minimum(values, other))


# exponent bits, mantissa bits, exponent bias; the fnuz formats have no -0 and no infinities, and 0x80 is their only NaN
FP8 = {"fp8e4m3": (4, 3, 7), "fp8e5m2": (5, 2, 15), "fp8e4m3fnuz": (4, 3, 8), "fp8e5m2fnuz": (5, 2, 16)}
TORCH_FP8 = {"fp8e4m3": "float8_e4m3fn", "fp8e5m2": "float8_e5m2", "fp8e4m3fnuz": "float8_e4m3fnuz", "fp8e5m2fnuz": "float8_e5m2fnuz"}


def np_fp8_decode(name: str) -> np.ndarray:
  """The value of each of the 256 bit patterns, as float32."""
  exponent_bits, mantissa_bits, bias = FP8[name]
  bits = np.arange(256)
  exponent, mantissa = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1), (bits & ((1 << mantissa_bits) - 1)) / (1 << mantissa_bits)
  values = np.where(bits >> 7, -1.0, 1.0) * np.where(exponent == 0, mantissa * 2.0 ** (1 - bias), (1 + mantissa) * 2.0 ** (exponent - bias))
  top = exponent == (1 << exponent_bits) - 1
  if name.endswith("fnuz"): values[0x80] = math.nan
  elif exponent_bits == 5: values[top] = np.where(mantissa[top] == 0, values[top] * math.inf, math.nan)
  else: values[(bits & 0x7F) == 0x7F] = math.nan
  return values.astype(np.float32)


def np_fp8_largest(name: str) -> float:
  decoded = np_fp8_decode(name)
  return float(decoded[np.isfinite(decoded)].max())


def np_fp8_encode(values: np.ndarray, name: str) -> np.ndarray:
  """The bit patterns of in-range values: the nearest representable magnitude, ties to the even pattern, then the sign
  (a value rounding to zero stays +0 in the fnuz formats)."""
  magnitudes = np_fp8_decode(name)[:0x80].astype(np.float64)
  magnitudes = magnitudes[:np.isfinite(magnitudes).sum()]   # the finite positive patterns come first, increasing
  x = np.abs(values.astype(np.float64))
  above = np.searchsorted(magnitudes, x).clip(0, len(magnitudes) - 1)
  below = (above - 1).clip(0)
  over, under = magnitudes[above] - x, x - magnitudes[below]
  pattern = np.where(over < under, above, np.where(under < over, below, np.where(above % 2 == 0, above, below)))
  negative = np.signbit(values) & ~(name.endswith("fnuz") & (pattern == 0))
  return (pattern | np.where(negative, 0x80, 0)).astype(np.uint8)


def fp8_inputs(largest: float) -> np.ndarray:
  rng = np.random.default_rng(0)
  values = (rng.standard_normal(4000) * 2.0 ** rng.integers(-24, 10, 4000)).astype(np.float32).clip(-largest, largest)
  values[:6] = [0.0, -0.0, largest, -largest, 2.0 ** -9, 3 * 2.0 ** -10]
  return values


def assert_same_floats(got: np.ndarray, want: np.ndarray) -> None:
  np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)]))


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("name", FP8)
def test_fp8_decodes_every_pattern(name, reference):
  decoded = Tensor(np.arange(256, dtype=np.uint8)).bitcast(getattr(dtypes, name)).numpy()
  assert decoded.dtype == np.float32
  if reference == "numpy": assert_same_floats(decoded, np_fp8_decode(name))
  else:
    torch = import_torch()
    assert_same_floats(decoded, torch.arange(256, dtype=torch.uint8).view(getattr(torch, TORCH_FP8[name])).float().numpy())


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("name", FP8)
def test_fp8_encodes_in_range_values(name, reference):
  if reference == "numpy": largest, encode = np_fp8_largest(name), lambda v: np_fp8_encode(v, name)
  else:
    torch = import_torch()
    fp8 = getattr(torch, TORCH_FP8[name])
    largest, encode = float(torch.finfo(fp8).max), lambda v: torch.tensor(v).to(fp8).view(torch.uint8).numpy()
  values = fp8_inputs(largest)
  np.testing.assert_array_equal(Tensor(values, dtype=name).bitcast(dtypes.uint8).numpy(), encode(values))


def test_fp8_saturates_finite_overflow_and_maps_specials():
  big = Tensor([1e9, -1e9, math.inf, -math.inf, math.nan], dtype=dtypes.fp8e4m3).bitcast(dtypes.uint8).tolist()
  assert big == [0x7E, 0xFE, 0x7F, 0xFF, 0x7F]
  assert Tensor([1e9, math.inf, -math.inf], dtype=dtypes.fp8e5m2).bitcast(dtypes.uint8).tolist() == [0x7B, 0x7C, 0xFC]
  assert Tensor([-0.0, math.nan, 1e9], dtype=dtypes.fp8e4m3fnuz).bitcast(dtypes.uint8).tolist() == [0x00, 0x80, 0x7F]


def test_fp8_casts_creation_and_storage_rules():
  t = Tensor([0.5, -1.25, 3.0], dtype=dtypes.fp8e4m3)
  assert t.dtype is dtypes.fp8e4m3 and t.numpy().tolist() == [0.5, -1.25, 3.0]
  assert t.cast(dtypes.int32).tolist() == [0, -1, 3] and t.cast(dtypes.fp8e5m2).float().tolist() == [0.5, -1.25, 3.0]
  assert Tensor.full((2,), 1.5, dtype=dtypes.fp8e5m2).tolist() == [1.5, 1.5] and Tensor(2.0, dtype=dtypes.fp8e4m3fnuz).item() == 2.0
  assert t.reshape(3, 1).flip(0).contiguous().numpy().ravel().tolist() == [3.0, -1.25, 0.5]
  assert least_upper_dtype(dtypes.fp8e4m3, dtypes.fp8e5m2) is dtypes.float16 and least_upper_dtype(dtypes.int64, dtypes.uint64) is dtypes.float16
  assert (t.float() * 2).tolist() == [1.0, -2.5, 6.0]


def test_fp8_gradients_pass_through_their_casts():
  for dtype in dtypes.fp8s:
    for default in (dtypes.float32, dtype):
      with Context(DEFAULT_FLOAT=default):
        a = Tensor([1.0, 2.0, -3.0], dtype=dtype)
        (a * 5).sum().backward()
        assert a.grad.dtype is dtype and a.grad.float().tolist() == [5.0, 5.0, 5.0], (dtype, default)


@pytest.mark.parametrize("name", FP8)
def test_fp8_arithmetic_runs_in_float32_and_rounds_back(name):
  """Each op on fp8 tensors computes in float32 and rounds its result to the fp8 type once (saturating finite values, NaN
  staying NaN), for every pair of patterns: zeros of both signs, subnormals, the largest normals, infinities and NaNs."""
  from pytc.dtype import fp8_to_float, truncate
  dtype = getattr(dtypes, name)
  values = np.array([fp8_to_float(p, dtype) for p in range(256)], np.float32)
  others = values[[0x00, 0x80, 0x01, 0x81, 0x07, 0x38, 0xB8, 0x3C, 0x55, 0xD5, 0x7B, 0xFB, 0x7C, 0x7E, 0x7F, 0xFF, 0x22, 0xA9]]
  a, b = np.repeat(values, len(others)), np.tile(others, 256)  # every pattern against zeros, subnormals, ones, the top, specials
  x, y, u = Tensor(a, dtype=dtype).realize(), Tensor(b, dtype=dtype).realize(), Tensor(values, dtype=dtype).realize()
  def rounded(v: np.ndarray) -> np.ndarray: return np.array([truncate[dtype](float(e)) for e in v], np.float32)
  with np.errstate(all="ignore"):
    for op, reference in [(Tensor.add, np.add), (Tensor.sub, np.subtract), (Tensor.mul, np.multiply), (Tensor.div, np.divide),
                          (Tensor.maximum, np.maximum)]:
      got = op(x, y)
      assert got.dtype is dtype
      np.testing.assert_array_equal(got.float().numpy(), rounded(reference(a, b)), err_msg=f"{name} {op.__name__}")
    np.testing.assert_array_equal((x < y).numpy(), a < b)
    np.testing.assert_array_equal((x == y).numpy(), a == b)
    for op, reference in [(Tensor.neg, np.negative), (Tensor.sqrt, np.sqrt), (Tensor.exp2, np.exp2), (Tensor.log2, np.log2)]:
      got = op(u).float().numpy()
      expected = rounded(reference(values))
      close = np.isclose(got, expected, rtol=0.13, atol=0) | (np.isnan(got) & np.isnan(expected)) | (got == expected)
      assert close.all(), (name, op.__name__, values[~close], got[~close], expected[~close])
  finite = values[np.isfinite(values)][:40]
  assert Tensor(finite, dtype=dtype).sum().dtype is dtype
  assert Tensor(finite, dtype=dtype).sum().float().item() == truncate[dtype](float(finite.sum(dtype=np.float32)))
  assert (Tensor(finite, dtype=dtype) + 0.1).float().tolist() == rounded(finite + np.float32(truncate[dtype](0.1))).tolist()


# *** creation ***


CREATORS = [Tensor.empty, Tensor.rand, Tensor.zeros, Tensor.ones, Tensor.randn, Tensor.randint, Tensor.normal, Tensor.uniform,
            Tensor.scaled_uniform, Tensor.glorot_uniform, Tensor.kaiming_uniform, Tensor.kaiming_normal]


@pytest.mark.parametrize("create", CREATORS, ids=lambda f: f.__name__)
def test_negative_dims_raise(create):
  for shape in ((-3, 2), ((2, -3),), ((2, -3, 0),), ((-3, 3), 3)):
    with pytest.raises(ValueError): create(*shape)


def test_full_eye_linspace_reject_bad_arguments():
  with pytest.raises(ValueError): Tensor.full((2, -3), 4)
  for n, m in ((-1, None), (-3, 3), (3, -3)):
    with pytest.raises(ValueError): Tensor.eye(n, m)
  with pytest.raises(ValueError): Tensor.linspace(1, 2, -1)
  with pytest.raises(ValueError): Tensor.linspace(5, 10, 3, dtype="bool")


def test_arange_dtypes_and_overflow():
  assert Tensor.arange(10).dtype is dtypes.int32 and Tensor.arange(5.5, 10, 2).dtype is dtypes.float32
  assert Tensor.arange(2**31, 2**31 + 3).dtype is dtypes.int64 and Tensor.arange(2**31, 2**31 + 3).tolist() == [2**31, 2**31 + 1, 2**31 + 2]
  np.testing.assert_array_equal(Tensor.arange(-128, 128, dtype=dtypes.int8).numpy(), np.arange(-128, 128, dtype=np.int8))
  np.testing.assert_array_equal(Tensor.arange(127, -129, -1, dtype=dtypes.int8).numpy(), np.arange(127, -129, -1, dtype=np.int8))
  np.testing.assert_allclose(Tensor.arange(-50.3, -380.2, -2.25).numpy(), np.arange(-50.3, -380.2, -2.25), rtol=1e-5)
  assert Tensor.arange(5, 10, 3).tolist() == [5, 8] and Tensor.arange(10, 5, -3).tolist() == [10, 7] and Tensor.arange(5, 5).shape == (0,)
  for args, dtype in (((2**33,), dtypes.int32), ((129,), dtypes.int8), ((-129, 128), dtypes.int8), ((128, 0, -1), dtypes.int8)):
    with pytest.raises(OverflowError): Tensor.arange(*args, dtype=dtype)


def test_full_zeros_ones_dtypes():
  assert Tensor.zeros(2).dtype is dtypes.float32 and Tensor.full((2,), 3).dtype is dtypes.int32 and Tensor.full((2,), True).dtype is dtypes.bool
  assert Tensor.ones(2, 2, dtype=dtypes.int8).tolist() == [[1, 1], [1, 1]] and Tensor.zeros(3).full_like(7, dtype="int16").tolist() == [7, 7, 7]
  assert Tensor.full((2,), 1.5, dtype=dtypes.bfloat16).numpy().tolist() == [1.5, 1.5]
  assert Tensor.ones(3, dtype=dtypes.int32).empty_like(dtype="float16").dtype is dtypes.float16
  np.testing.assert_array_equal(Tensor.eye(2, 3, dtype="int32").numpy(), np.eye(2, 3, dtype=np.int32))


def test_tensor_from_bytes_none_and_numpy_scalars():
  assert Tensor(b"\x01\x02\xff").tolist() == [1, 2, 255] and Tensor(b"\x01\x00\x02\x00", dtype=dtypes.int16).tolist() == [1, 2]
  assert Tensor(bytes(np.array([1.5, -2.0], np.float32).tobytes()), dtype="float32").tolist() == [1.5, -2.0]
  with pytest.raises(ValueError): Tensor(b"\x01\x02\x03", dtype=dtypes.int16)
  assert Tensor(None).shape == () and Tensor(None).item() == 0.0
  assert Tensor(np.float16(1.5)).dtype is dtypes.float16 and Tensor(np.int8(-3)).item() == -3


def test_len_and_bool():
  assert len(Tensor.zeros(3, 2)) == 3 and len(Tensor([])) == 0
  with pytest.raises(TypeError, match="0-d"): len(Tensor(1.0))
  with pytest.raises(TypeError): bool(Tensor([1.0]))
  with pytest.raises(TypeError): bool(Tensor(True))


# *** random ***


def test_uniform_and_randint_with_int_dtypes_cover_the_range():
  Tensor.manual_seed(0)
  values = Tensor.uniform(2000, low=-100, high=100, dtype=dtypes.int32).numpy()
  assert values.dtype == np.int32 and values.min() >= -100 and values.max() <= 99 and len(np.unique(values)) > 150
  ints = Tensor.randint(2000, low=-3, high=4, dtype="int8").numpy()
  assert ints.dtype == np.int8 and set(np.unique(ints).tolist()) == set(range(-3, 4))
  with pytest.raises(TypeError): Tensor.randint(3, dtype=dtypes.float32)
  with pytest.raises(TypeError): Tensor.randint(3, low=0.5, high=2)
  with pytest.raises(ValueError): Tensor.uniform(3, low=1, high=1)
  with pytest.raises(ValueError): Tensor.rand(3, dtype=dtypes.int32)


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.fp8e4m3])
def test_rand_stays_below_one_and_randn_is_finite(dtype):
  Tensor.manual_seed(3)
  u = Tensor.rand(20000, dtype=dtype)
  assert u.dtype is dtype
  values, steps = u.numpy().astype(np.float64), 2.0 ** dtypes.finfo(dtype)[1]  # k / steps for a uniform k below steps
  assert values.min() >= 0 and values.max() < 1 and abs(values.mean() - (steps - 1) / steps / 2) < 0.02
  n = Tensor.randn(20000, dtype=dtype).numpy().astype(np.float64)
  assert np.isfinite(n).all() and abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1


def test_rand_is_reproducible_and_fine_grained():
  Tensor.manual_seed(7)
  a, b = Tensor.rand(1000).numpy(), Tensor.rand(1000).numpy()
  Tensor.manual_seed(7)
  np.testing.assert_array_equal(Tensor.rand(1000).numpy(), a)
  assert not np.array_equal(a, b) and len(np.unique(Tensor.rand(4096, dtype="float64").numpy())) == 4096
  assert Tensor.rand(2, 3, requires_grad=True).requires_grad and Tensor.normal(2, requires_grad=True).requires_grad
  assert Tensor.scaled_uniform(2, 3, requires_grad=True).requires_grad


def numpy_threefry(key: tuple[int, int], low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """Threefry-2x32, 20 rounds (Salmon et al., 2011), on uint32 arrays."""
  def rotate(v, r): return (v << np.uint32(r)) | (v >> np.uint32(32 - r))
  k0, k1 = np.uint32(key[0]), np.uint32(key[1])
  injected = (k1, k0 ^ k1 ^ np.uint32(0x1BD11BDA), k0)
  with np.errstate(over="ignore"):
    a, b = low + k0, high + k1
    for i in range(5):
      for r in ((13, 15, 26, 6), (17, 29, 16, 24))[i % 2]:
        a = a + b
        b = a ^ rotate(b, r)
      a, b = a + injected[i % 3], b + injected[(i + 1) % 3] + np.uint32(i + 1)
  return a, b


def numpy_stream(seed: int, counter: int, words: int) -> np.ndarray:
  """The first device's words of tinygrad's random stream after `counter` words were drawn."""
  import hashlib
  key = (int.from_bytes(hashlib.sha256((0).to_bytes(4, "big")).digest(), "big") & 0xFFFFFFFF, seed)
  draw_key = numpy_threefry(key, np.array([counter & 0xFFFFFFFF], np.uint32), np.array([counter >> 32], np.uint32))
  half = (words + 1) // 2
  low = np.arange(half, dtype=np.uint32)
  a, b = numpy_threefry((int(draw_key[0][0]), int(draw_key[1][0])), low, low + np.uint32(half))
  return np.concatenate([a, b])[:words]


def test_threefry_matches_the_published_vectors():
  from pytc.random_tensors import threefry2x32
  # Threefry-2x32 of the words (i, i + 10) under the key (0, 1337), as jax.extend.random.threefry_2x32 computes them
  published = [2221762175, 1752107825, 653745012, 1967534793, 1395205442, 3840423848, 2159346757, 603508235, 3319473678, 3363866483,
               3544324138, 1436466838, 2169858556, 2570072943, 2387150698, 3678370550, 2911697663, 403244401, 2560861638, 1692360114]
  counts = Tensor.arange(10, dtype=dtypes.uint32)
  key = (Tensor([0], dtype=dtypes.uint32).expand(10), Tensor([1337], dtype=dtypes.uint32).expand(10))
  low, high = threefry2x32(key, (counts, counts + 10))
  assert low.cat(high).tolist() == published
  assert list(numpy_threefry((0, 1337), np.arange(10, dtype=np.uint32), np.arange(10, 20, dtype=np.uint32))[0]) == published[:10]


def test_rand_draws_tinygrads_stream():
  Tensor.manual_seed(1337)  # tinygrad's first draws under this seed (its documented reference values)
  np.testing.assert_array_equal(Tensor.rand(20).numpy()[:4], np.array([0.45735931396484375, 0.6311527490615845, 0.15571284294128418,
                                                                      0.8149417638778687], np.float32))
  np.testing.assert_array_equal(Tensor.rand(20).numpy()[:2], np.array([0.09199333190917969, 0.9130761623382568], np.float32))
  np.testing.assert_array_equal(Tensor.rand(10).numpy()[:2], np.array([0.3198714256286621, 0.7984923124313354], np.float32))
  Tensor.manual_seed(0)
  assert Tensor.randperm(10).tolist() == [8, 9, 4, 3, 6, 1, 7, 5, 2, 0]


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.float64, dtypes.fp8e4m3, dtypes.fp8e5m2fnuz])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 0), (5, 3)])
def test_rand_of_every_float_dtype_is_the_streams_significand_bits(dtype, shape):
  from pytc.dtype import FLOAT_LAYOUTS
  _, significand, bias = FLOAT_LAYOUTS[dtype.name]
  count, size = math.prod(shape), dtype.itemsize
  Tensor.manual_seed(11)
  Tensor.rand(5).realize()  # the draw below starts 5 words in
  expected_bytes = numpy_stream(11, 5, -(-count * size // 4)).view(f"<u{size}")[:count]
  expected = ((expected_bytes >> (8 * size - significand)).astype(np.float64)) / 2.0 ** significand  # k / 2**m, exact
  got = Tensor.rand(*shape, dtype=dtype)
  assert got.dtype is dtype and got.shape == shape and bias > 0
  np.testing.assert_array_equal((got.float() if dtype.is_fp8 else got).numpy().astype(np.float64).reshape(-1), expected)


def test_the_draw_counter_carries_into_its_high_word():
  Tensor.manual_seed(5)
  device = Tensor.rand(1).realize().device
  Tensor._rng_counters[device] = 2 ** 32 - 3
  got = Tensor.rand(6).numpy()
  np.testing.assert_array_equal(got, (numpy_stream(5, 2 ** 32 - 3, 6) >> 9).astype(np.float64) / 2.0 ** 23)
  assert Tensor._rng_counters[device] == 2 ** 32 + 3


def test_dropout_keeps_where_the_stream_is_at_least_p():
  Tensor.manual_seed(9)
  x = Tensor.ones(64)
  with Context(TRAINING=1): dropped = x.dropout(0.25).numpy()
  kept = (numpy_stream(9, 0, 64) >> 9).astype(np.float64) / 2.0 ** 23 >= 0.25
  np.testing.assert_array_equal(dropped, np.where(kept, np.float32(1) / np.float32(0.75), 0).astype(np.float32))


def test_randperm_is_a_permutation():
  Tensor.manual_seed(1)
  perm = Tensor.randperm(50)
  assert perm.dtype is dtypes.int32 and sorted(perm.tolist()) == list(range(50)) and perm.tolist() != list(range(50))
  assert Tensor.randperm(5, dtype="int64").dtype is dtypes.int64


def test_multinomial_with_and_without_replacement():
  Tensor.manual_seed(2)
  weights = Tensor([0.0, 1.0, 3.0, 0.0])
  draws = weights.multinomial(4000, replacement=True).numpy()
  assert draws.dtype == np.int32 and set(np.unique(draws).tolist()) == {1, 2} and abs((draws == 2).mean() - 0.75) < 0.05
  rows = Tensor([[1.0, 0.0, 1.0, 1.0], [0.0, 5.0, 0.0, 1.0]]).multinomial(2).numpy()
  assert rows.shape == (2, 2) and len(set(rows[0])) == 2 and set(rows[0]) <= {0, 2, 3} and set(rows[1]) == {1, 3}
  assert weights.multinomial().shape == (1,)
  with pytest.raises(ValueError): weights.multinomial(5)
  with pytest.raises(ValueError): Tensor.ones(2, 2, 2).multinomial()


# *** nn layers against NumPy and torch ***


def np_conv(x, w, bias=None, stride=1, dilation=1, padding=None, groups=1) -> np.ndarray:
  """An n-d convolution; padding: (before, after) for each spatial dimension."""
  dims = w.ndim - 2
  stride, dilation = np.broadcast_to(stride, dims), np.broadcast_to(dilation, dims)
  x = np.pad(x, [(0, 0), (0, 0), *(padding or [(0, 0)] * dims)])
  size = [(x.shape[2 + d] - dilation[d] * (w.shape[2 + d] - 1) - 1) // stride[d] + 1 for d in range(dims)]
  grouped_x, grouped_w, out = x.reshape(x.shape[0], groups, -1, *x.shape[2:]), w.reshape(groups, -1, *w.shape[1:]), 0.0
  for k in np.ndindex(*w.shape[2:]):
    taps = tuple(slice(k[d] * dilation[d], k[d] * dilation[d] + stride[d] * (size[d] - 1) + 1, stride[d]) for d in range(dims))
    out = out + np.einsum("ngc...,goc->ngo...", grouped_x[(..., *taps)], grouped_w[(..., *k)])
  out = out.reshape(x.shape[0], -1, *size)
  return out if bias is None else out + bias.reshape(-1, *[1] * dims)


def np_conv_transpose(x, w, bias=None, stride=1, padding=0, output_padding=0, groups=1) -> np.ndarray:
  """An n-d transposed convolution: each input element adds its kernel times the weight at stride steps; padding crops
  both ends and output_padding extends the end."""
  dims = w.ndim - 2
  stride = np.broadcast_to(stride, dims)
  size = [(x.shape[2 + d] - 1) * stride[d] + w.shape[2 + d] + output_padding for d in range(dims)]
  grouped_x, grouped_w = x.reshape(x.shape[0], groups, -1, *x.shape[2:]), w.reshape(groups, -1, *w.shape[1:])
  out = np.zeros((x.shape[0], groups, w.shape[1], *size))
  for k in np.ndindex(*w.shape[2:]):
    taps = tuple(slice(k[d], k[d] + stride[d] * (x.shape[2 + d] - 1) + 1, stride[d]) for d in range(dims))
    out[(..., *taps)] += np.einsum("ngc...,gco->ngo...", grouped_x, grouped_w[(..., *k)])
  out = out.reshape(x.shape[0], -1, *size)[(..., *[slice(padding, n - padding) for n in size])]
  return out if bias is None else out + bias.reshape(-1, *[1] * dims)


def np_group_norm(x, groups: int, weight, bias, eps: float = 1e-5) -> np.ndarray:
  grouped = x.reshape(x.shape[0], groups, -1)
  normalized = ((grouped - grouped.mean(-1, keepdims=True)) / np.sqrt(grouped.var(-1, keepdims=True) + eps)).reshape(x.shape)
  return normalized * weight.reshape(-1, *[1] * (x.ndim - 2)) + bias.reshape(-1, *[1] * (x.ndim - 2))


def conv_reference(**kw): return lambda layer, x: np_conv(x, layer.weight.numpy(), layer.bias.numpy(), **kw)
def conv_transpose_reference(**kw): return lambda layer, x: np_conv_transpose(x, layer.weight.numpy(), layer.bias.numpy(), **kw)
def group_norm_reference(groups: int): return lambda layer, x: np_group_norm(x, groups, layer.weight.numpy(), layer.bias.numpy())


# padding="same": the total d * (k - 1), the odd one extra after
LAYERS = [
  (lambda: nn.Conv1d(3, 4, 3, padding=1), conv_reference(padding=[(1, 1)]), lambda torch: torch.nn.Conv1d(3, 4, 3, padding=1), (2, 3, 9)),
  (lambda: nn.Conv1d(2, 4, 4, padding="same", dilation=2, groups=2), conv_reference(dilation=2, padding=[(3, 3)], groups=2),
   lambda torch: torch.nn.Conv1d(2, 4, 4, padding="same", dilation=2, groups=2), (1, 2, 11)),
  (lambda: nn.Conv2d(3, 2, (3, 2), padding="same"), conv_reference(padding=[(1, 1), (0, 1)]),
   lambda torch: torch.nn.Conv2d(3, 2, (3, 2), padding="same"), (2, 3, 6, 5)),
  (lambda: nn.ConvTranspose1d(3, 2, 3, stride=2, padding=1, output_padding=1), conv_transpose_reference(stride=2, padding=1, output_padding=1),
   lambda torch: torch.nn.ConvTranspose1d(3, 2, 3, stride=2, padding=1, output_padding=1), (2, 3, 5)),
  (lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2), conv_transpose_reference(stride=2, groups=2),
   lambda torch: torch.nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2), (1, 4, 4, 5)),
  (lambda: nn.GroupNorm(2, 6), group_norm_reference(2), lambda torch: torch.nn.GroupNorm(2, 6), (3, 6, 4, 2)),
  (lambda: nn.InstanceNorm(3), group_norm_reference(3), lambda torch: torch.nn.InstanceNorm2d(3, affine=True), (2, 3, 5, 4)),
  (lambda: nn.RMSNorm(8), lambda layer, x: x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * layer.weight.numpy(),
   lambda torch: torch.nn.RMSNorm(8, eps=1e-6), (2, 3, 8)),
  (lambda: nn.LayerNorm(5), lambda layer, x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * layer.weight.numpy() +
   layer.bias.numpy(), lambda torch: torch.nn.LayerNorm(5), (4, 5)),
]


def _copy(layer, torch_layer) -> None:
  torch = import_torch()
  with torch.no_grad():
    for name, param in torch_layer.named_parameters(): param.copy_(torch.from_numpy(getattr(layer, name).numpy()))


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("make, np_reference, make_torch, shape", LAYERS)
def test_layers_match_reference(make, np_reference, make_torch, shape, reference):
  Tensor.manual_seed(0)
  layer = make()
  if isinstance(layer, nn.GroupNorm | nn.InstanceNorm): layer.weight, layer.bias = Tensor.randn(*layer.weight.shape), Tensor.randn(*layer.bias.shape)
  x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
  if reference == "numpy": expected = np_reference(layer, x.astype(np.float64))
  else:
    torch = import_torch()
    torch_layer = make_torch(torch)
    _copy(layer, torch_layer)
    expected = torch_layer(torch.from_numpy(x)).detach().numpy()
  np.testing.assert_allclose(layer(Tensor(x)).numpy(), expected, rtol=1e-4, atol=1e-5)


def test_layernorm2d_normalizes_channels():
  layer, x = nn.LayerNorm2d(3), np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
  wide = x.astype(np.float64)
  expected = (wide - wide.mean(1, keepdims=True)) / np.sqrt(wide.var(1, keepdims=True) + 1e-5)
  np.testing.assert_allclose(layer(Tensor(x)).numpy(), expected, rtol=1e-4, atol=1e-5)


def test_conv_padding_strings_on_tensor_conv2d():
  rng = np.random.default_rng(2)
  x, w = rng.standard_normal((1, 2, 7, 6)).astype(np.float32), rng.standard_normal((3, 2, 4, 3)).astype(np.float32)
  # kernel (4, 3) dilated (1, 2): "same" pads 3 and 4 in all, the odd one extra after
  for padding, pairs in (("same", [(1, 2), (2, 2)]), ("valid", None)):
    expected = np_conv(x.astype(np.float64), w.astype(np.float64), padding=pairs, dilation=(1, 2))
    np.testing.assert_allclose(Tensor(x).conv2d(Tensor(w), padding=padding, dilation=(1, 2)).numpy(), expected, rtol=1e-4, atol=1e-5)
  with pytest.raises(ValueError, match="stride 1"): Tensor(x).conv2d(Tensor(w), padding="same", stride=2)
  with pytest.raises(ValueError): nn.Conv2d(2, 3, 3, padding="full")
  assert nn.Conv2d(2, 3, (3, 4), padding="same").padding == (1, 2, 1, 1)


def np_lstm_cell(cell, x, h, c) -> tuple[np.ndarray, np.ndarray]:
  """Gates in the order input, forget, cell, output."""
  gates = x @ cell.weight_ih.numpy().T + cell.bias_ih.numpy() + h @ cell.weight_hh.numpy().T + cell.bias_hh.numpy()
  i, f, g, o = np.split(gates, 4, axis=1)
  def sigmoid(v): return 1 / (1 + np.exp(-v))
  c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
  return sigmoid(o) * np.tanh(c), c


@pytest.mark.parametrize("reference", REFERENCES)
def test_lstm_cell_matches_reference(reference):
  cell = nn.LSTMCell(4, 3)
  cell.bias_ih, cell.bias_hh = Tensor.randn(12), Tensor.randn(12)
  rng = np.random.default_rng(4)
  x, h, c = (rng.standard_normal(s).astype(np.float32) for s in ((2, 4), (2, 3), (2, 3)))
  if reference == "numpy":
    def step(state): return np_lstm_cell(cell, x.astype(np.float64), *(state or (np.zeros((2, 3)),) * 2))
  else:
    torch = import_torch()
    torch_cell = torch.nn.LSTMCell(4, 3)
    _copy(cell, torch_cell)
    def step(state): return [t.detach().numpy() for t in torch_cell(torch.from_numpy(x), state and tuple(map(torch.from_numpy, state)))]
  for state in (None, (h, c)):
    new_h, new_c = cell(Tensor(x), None if state is None else (Tensor(h), Tensor(c)))
    ref_h, ref_c = step(state)
    np.testing.assert_allclose(new_h.numpy(), ref_h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(new_c.numpy(), ref_c, rtol=1e-4, atol=1e-5)


def np_batch_normalized(x: np.ndarray) -> np.ndarray:
  """Normalized with the batch statistics per channel (axis 1), the biased variance, eps 1e-5."""
  axes = (0, *range(2, x.ndim))
  return (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-5)


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("training", [False, True])
def test_batchnorm_without_running_stats_uses_batch_statistics(training, reference):
  x = np.random.default_rng(5).standard_normal((4, 3, 2, 2)).astype(np.float32) * 3 + 1
  norm = nn.BatchNorm2d(3, track_running_stats=False)
  assert not hasattr(norm, "running_mean")
  Tensor.training = training
  try: out = norm(Tensor(x)).numpy()
  finally: Tensor.training = False
  if reference == "numpy": expected = np_batch_normalized(x.astype(np.float64))
  else:
    torch = import_torch()
    expected = torch.nn.BatchNorm2d(3, track_running_stats=False).train(training)(torch.from_numpy(x)).detach().numpy()
  np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("reference", REFERENCES)
def test_batchnorm_tracks_running_statistics(reference):
  x = np.random.default_rng(6).standard_normal((4, 3, 5)).astype(np.float32) * 2 - 1
  norm = nn.BatchNorm(3)
  Tensor.training = True
  try: out = norm(Tensor(x)).numpy()
  finally: Tensor.training = False
  if reference == "numpy":
    wide = x.astype(np.float64)
    # momentum 0.1 from mean 0 and variance 1, the unbiased batch variance
    running_mean, running_var = 0.1 * wide.mean((0, 2)), 0.9 + 0.1 * wide.var((0, 2), ddof=1)
    expected, expected_eval = np_batch_normalized(wide), (wide - running_mean[:, None]) / np.sqrt(running_var[:, None] + 1e-5)
  else:
    torch = import_torch()
    reference_norm = torch.nn.BatchNorm1d(3)
    expected = reference_norm(torch.from_numpy(x)).detach().numpy()
    running_var, expected_eval = reference_norm.running_var.numpy(), reference_norm.eval()(torch.from_numpy(x)).detach().numpy()
  np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(norm.running_var.numpy(), running_var, rtol=1e-5)
  assert norm.num_batches_tracked.dtype is dtypes.int64 and norm.num_batches_tracked.item() == 1
  np.testing.assert_allclose(norm(Tensor(x)).numpy(), expected_eval, rtol=1e-4, atol=1e-4)


def test_embedding_needs_integer_indices():
  table = nn.Embedding(5, 3)
  assert table(Tensor([[0, 4]])).shape == (1, 2, 3) and np.abs(table.weight.numpy()).max() <= math.sqrt(6 / 8)
  with pytest.raises(TypeError): table(Tensor([1.0]))


# *** small methods tinygrad's Tensor has ***


def test_rearrange_splits_reorders_and_merges():
  x = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)
  t = Tensor(x)
  np.testing.assert_array_equal(t.rearrange("b c h w -> b (h w) c").numpy(), x.transpose(0, 2, 3, 1).reshape(2, 20, 3))
  np.testing.assert_array_equal(t.rearrange("b c (h1 h2) w -> b h1 c h2 w", h1=2).numpy(), x.reshape(2, 3, 2, 2, 5).transpose(0, 2, 1, 3, 4))
  np.testing.assert_array_equal(t.rearrange("b ... w -> w (...) b").numpy(), x.transpose(3, 1, 2, 0).reshape(5, 12, 2))
  np.testing.assert_array_equal(t.rearrange("... -> ... 1").numpy(), x[..., None])
  for formula in ("b c h -> b c h", "b c h w -> b c h", "b c (h w) x -> b c h w x", "b c h w -> b c h v", "b b h w -> b h w"):
    with pytest.raises(ValueError): t.rearrange(formula)


def test_newton_schulz_orthogonalizes():
  m = np.random.default_rng(7).standard_normal((3, 5)).astype(np.float32)
  for matrix in (m, m.T):
    out = Tensor(matrix).newton_schulz(steps=20, params=(1.5, -0.5)).numpy()
    u, _, vt = np.linalg.svd(matrix, full_matrices=False)
    np.testing.assert_allclose(out, u @ vt, atol=1e-3)
  with pytest.raises(ValueError): Tensor([1.0, 2.0]).newton_schulz(1, (1.0,))


def test_keyword_arguments_tinygrad_code_passes():
  from pytc import GlobalCounters
  x = Tensor([[1.0, 2.0], [3.0, 4.0]])
  assert x.pad_to(3, 3, value=-1).numpy()[2].tolist() == [-1, -1, -1] and x.clone(device="CPU").tolist() == x.tolist()
  assert Tensor([3]).bitwise_xor(5, reverse=True).tolist() == [6] and x.sequential([lambda t: t + 1, lambda t: t * 2]).tolist() == [[4, 6], [8, 10]]
  half = x.half()
  assert half.linear(half, dtype=dtypes.float32).dtype is dtypes.float32 and half.matmul(x=half).dtype is dtypes.float16
  assert Tensor.ones(1, 1, 3, 3).conv2d(Tensor.ones(1, 1, 2, 2), dtype="float64").dtype is dtypes.float64
  before = GlobalCounters.kernel_count
  (x + 1).realize(do_update_stats=False)
  assert GlobalCounters.kernel_count == before
  (x + 2).realize()
  assert GlobalCounters.kernel_count > before


# *** optimizers against NumPy and torch ***


def _train(make_optimizer, reference, steps: int = 3):
  """Minimizes |x @ w|^2 for `steps` steps; `reference(w0, x, steps)` gives the expected weights."""
  rng = np.random.default_rng(8)
  w0, x = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
  w = Tensor(w0.copy(), requires_grad=True)
  opt = make_optimizer([w])
  for _ in range(steps):
    opt.zero_grad()
    ((Tensor(x) @ w).square().sum()).backward()
    opt.step()
  np.testing.assert_allclose(w.numpy(), reference(w0.copy(), x, steps), rtol=1e-4, atol=1e-5)


def np_sgd(lr: float, momentum: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False):
  """torch's SGD without dampening: the velocity starts at the first gradient."""
  def train(w, x, steps):
    w, x, velocity = w.astype(np.float64), x.astype(np.float64), 0.0
    for _ in range(steps):
      grad = 2 * x.T @ (x @ w) + weight_decay * w
      velocity = momentum * velocity + grad
      w = w - lr * (grad + momentum * velocity if nesterov else velocity)
    return w
  return train


def torch_sgd(**kw):
  def train(w, x, steps):
    torch = import_torch()
    tw = torch.tensor(w, requires_grad=True)
    opt = torch.optim.SGD([tw], **kw)
    for _ in range(steps):
      opt.zero_grad()
      ((torch.from_numpy(x) @ tw).square().sum()).backward()
      opt.step()
    return tw.detach().numpy()
  return train


@pytest.mark.usefixtures("training")
@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_matches_reference(nesterov, reference):
  from pytc.nn.optim import SGD
  settings = {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1, "nesterov": nesterov}
  _train(lambda p: SGD(p, **settings), np_sgd(**settings) if reference == "numpy" else torch_sgd(**settings))


@pytest.mark.usefixtures("training")
def test_classic_sgd_lars_muon_and_groups():
  from pytc.nn.optim import LARS, SGD, AdamW, Muon, OptimizerGroup
  _train(lambda p: SGD(p, lr=0.01, momentum=0.9, classic=True), np_sgd(lr=0.01, momentum=0.9))  # lr is constant
  w0, g0 = np.array([[3.0, 4.0]], np.float32), np.array([[0.6, 0.8]], np.float32)
  w = Tensor(w0.copy(), requires_grad=True)
  opt = LARS([w], lr=0.1, momentum=0.0, weight_decay=0.0, tcoef=0.5)
  w.grad = Tensor(g0)
  opt.step()
  np.testing.assert_allclose(w.numpy(), w0 - 0.1 * 0.5 * 5 / 1 * g0, rtol=1e-6)  # trust ratio tcoef * |w| / |g|
  m = Tensor(np.eye(3, dtype=np.float32) * [1.0, 2.0, 4.0], requires_grad=True)
  muon = Muon([m], lr=0.1, momentum=0.0, weight_decay=0.0, ns_steps=30, ns_coefficients=(1.5, -0.5))
  m.grad = m.detach()
  muon.step()  # the orthogonal factor of a positive diagonal matrix is the identity
  np.testing.assert_allclose(m.numpy(), np.eye(3) * [1.0, 2.0, 4.0] - 0.1 * np.eye(3), atol=1e-3)
  a, b = Tensor.ones(2, requires_grad=True), Tensor.ones(2, requires_grad=True)
  group = OptimizerGroup(SGD([a], lr=1.0), AdamW([b], lr=1.0))
  a.grad, b.grad = Tensor([1.0, 2.0]), Tensor([1.0, -1.0])
  group.step()
  assert a.tolist() == [0.0, -1.0] and group[1].params[0] is b and np.allclose(b.numpy(), [1 - 1.01, 1 + 0.99], atol=1e-4)
  with pytest.raises(ValueError): SGD([Tensor.ones(2, requires_grad=True)], lr=-1)
