"""Math without a math library: f64 exp2/exp/log2/log/sin/cos/tanh and pow of every float type as pytc's own arithmetic
(passes/codegen/transcendental.py), which targets whose code links no math library get (AMD code objects: `math_library`
False, `pytc-gpu-map{math_library=false}`). The EMU device emulates gfx942 and runs exactly that arithmetic on the CPU;
it is checked against NumPy (libm) over dense sweeps, special values, huge arguments of sin and cos, and C99's table of
pow's special cases. The CPU and NVIDIA targets keep their libraries."""
import warnings

import numpy as np
import pytest
from accuracy import ulps

from pytc import Device, Tensor, dtypes
from pytc.compiler import compile_kernels
from pytc.compilers import gpu_map
from pytc.compilers.emu import EMUCompiler
from pytc.realize import schedule
from pytc.runtime.target import GPU_TARGETS, emulated, host_cpu

RNG = np.random.default_rng(11)
EMU = "EMU"  # gfx942: no math library
UNARY = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos}


def emu(op: str, x: np.ndarray) -> np.ndarray: return getattr(Tensor(x, device=EMU), op)().numpy()


def power(x: np.ndarray, y: np.ndarray, dtype=None) -> np.ndarray:
  a, b = Tensor(x, device=EMU), Tensor(y, device=EMU)
  if dtype is not None: a, b = a.cast(dtype), b.cast(dtype)
  result = a ** b
  return (result.cast(dtypes.float32) if dtype is not None else result).numpy()


def test_only_targets_without_a_math_library_get_the_arithmetic():
  assert all(t.math_library is (t.name != "amdgpu") for t in GPU_TARGETS.values()) and host_cpu().math_library
  assert not emulated("gfx942").math_library and not emulated("gfx1100").math_library and emulated("sm_90").math_library
  assert gpu_map(GPU_TARGETS["gfx942"]) == "pytc-gpu-map{local_size=256 tile=16 vector_bytes=16 math_library=false}"
  assert gpu_map(GPU_TARGETS["sm_90"]) == "pytc-gpu-map{local_size=256 tile=16 vector_bytes=16}"
  assert "math_library=false" in EMUCompiler(emulated("gfx942")).kernel_pipeline()
  assert "math_library" not in EMUCompiler(emulated("sm_90")).kernel_pipeline()


@pytest.mark.parametrize("size", [1001, 1002])
def test_emulated_amd_kernels_call_no_math_library(size):
  """EMU (gfx942) kernels, scalar (an odd size) or in vectors of two f64 (an even one), compute f64 sin and pow as
  arithmetic; emulated NVIDIA kernels keep the math ops that libdevice implements."""
  for device, library in (("EMU", False), ("EMU:sm_90", True)):
    x = Tensor(np.ones(size), device=device)
    kernels = compile_kernels(schedule([x.sin().lazydata, (x ** x).lazydata])[0], Device[device]).kernel_ir
    assert ("math.sin" in kernels and "math.powf" in kernels) is library and ("math.fma" in kernels) is not library, device
    assert ("vector<2xf64>" in kernels) is (size % 2 == 0), device


def sweep(op: str) -> np.ndarray:
  """Dense values over the whole domain of `op`, in an odd count (scalar lanes) and an even one (vectors of two)."""
  if op == "exp": x = np.concatenate([np.linspace(-745.2, 709.79, 20001), RNG.uniform(-2, 2, 4000)])
  elif op == "exp2": x = np.concatenate([np.linspace(-1075.5, 1023.99, 20001), RNG.uniform(-2, 2, 4000)])
  elif op in ("log", "log2"):
    bits = RNG.integers(1, 0x7FF0000000000000, 10001, dtype=np.int64).view(np.float64)  # every magnitude, denormals included
    x = np.concatenate([bits, 1 + RNG.uniform(-0.3, 0.45, 4000), 1 + np.linspace(-1e-6, 1e-6, 2000)])
  else:
    huge = np.exp(RNG.uniform(np.log(1e-300), np.log(1.7e308), 6000)) * RNG.choice([-1, 1], 6000)
    multiples = RNG.integers(1, 10**7, 2000) * (np.pi / 2)  # near the zeros of sin and cos
    x = np.concatenate([np.linspace(-100, 100, 10001), huge, multiples, RNG.uniform(2.0**29, 2.0**31, 1000)])
  return x


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_sweeps_within_one_ulp_of_numpy(op):
  """Within one ulp of NumPy everywhere, and mostly equal to it: the arithmetic is within 0.75 ulp of the true value
  (measured against high precision: exp 0.72, exp2 0.73 (both at denormal results), log and log2 0.5, sin 0.59,
  cos 0.61 ulp, huge arguments included), NumPy within about 0.5."""
  x = sweep(op)
  for part in (x[:len(x) // 2 * 2 - 1], x[:len(x) // 2 * 2]):
    with np.errstate(all="ignore"): want = UNARY[op](part)
    distance = ulps(emu(op, part), want)
    assert distance.max() <= 1.0, (op, part[np.argmax(distance)], distance.max())
    assert np.mean(distance == 0) > 0.9, op


def test_tanh_sweep_within_two_ulps_of_the_true_value():
  """tanh's series near 0 and 1 - 2 / (e^(2|x|) + 1) beyond, on exp's arithmetic: within 1.6 ulp of tanh in long double
  over both branches, their seam at 0.55 and the saturation to +-1 (NumPy's is within about 1 ulp), exact at the specials."""
  x = np.concatenate([np.linspace(-25, 25, 20001), RNG.uniform(-0.6, 0.6, 6000), np.nextafter(0.55, [0, 1]),
                      np.geomspace(1e-300, 30, 4000) * RNG.choice([-1, 1], 4000)])
  for part in (x[:len(x) // 2 * 2 - 1], x[:len(x) // 2 * 2]):
    want = np.tanh(part.astype(np.longdouble))
    distance = np.abs(emu("tanh", part) - want) / np.spacing(np.abs(want).astype(np.float64))
    assert distance.max() <= 2.0, (part[np.argmax(distance)], distance.max())
  got = emu("tanh", np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 21.0, -40.0, 1e300, -5e-324]))
  np.testing.assert_array_equal(got, np.tanh(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 21.0, -40.0, 1e300, -5e-324])))
  assert list(np.signbit(got[[0, 1, 8]])) == [False, True, True]


EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, 1e-300, 1e300,
                  1.7976931348623157e308, -1.7976931348623157e308, 709.782712893384, 709.7827128933841, -745.1332191019411, -745.1332191019412,
                  -708.4, 1024.0, 1023.9999999999999, -1074.0, -1075.0, -1022.0, 0.9999999999999999, 1.0000000000000002, 1e22, 2.0**1023,
                  np.pi, np.pi / 2, 2.0**30, 2.0**30 + 1, -2.0**30 - 0.5, 2.0**52 + 1])


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_edge_values(op):
  """The special results exactly (NaN, +-inf, +-0 with its sign, log of negatives and zero, overflow and underflow at the
  thresholds, sin(-0) = -0), the rest within an ulp of NumPy."""
  with np.errstate(all="ignore"): want = UNARY[op](EDGES)
  got = emu(op, EDGES)
  special = ~np.isfinite(want) | (want == 0)
  np.testing.assert_array_equal(got[special], want[special])
  assert np.array_equal(np.signbit(got[special & ~np.isnan(want)]), np.signbit(want[special & ~np.isnan(want)]))
  distance = ulps(got, want)
  assert distance.max() <= 1.0, (op, EDGES[np.argmax(distance)], got[np.argmax(distance)], want[np.argmax(distance)])


# x, and sin(x) and cos(x) correctly rounded (from 3000-bit arithmetic). 6381956970095103 2^797 is the double nearest to an
# odd multiple of pi/2 (2^-61 away): its cosine keeps every bit only if the reduction does (NumPy's is 8 ulp off)
HUGE = [(1e22, -0.8522008497671888, 0.523214785395139), (1e300, -0.8178819121159085, -0.5753861119575491),
        (2.0**1023, 0.563127779850884, -0.826369834614148), (6381956970095103 * 2.0**797, 1.0, -4.687165924254628e-19),
        (-1e22, 0.8522008497671888, 0.523214785395139)]


def test_sin_cos_of_huge_arguments_are_reduced_exactly():
  """The reduction of huge arguments uses 2/pi to about 2^-1166: their sines and cosines come out correctly rounded, and
  near a multiple of pi/2, where the result is tiny, keep their relative precision."""
  x, sines, cosines = map(np.array, zip(*HUGE))
  np.testing.assert_array_equal(emu("sin", x), sines)
  np.testing.assert_array_equal(emu("cos", x), cosines)


POW_X = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 1e300, 0.999, 1.001])
POW_Y = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, 2.5, -2.5, np.inf, -np.inf, np.nan, 1e300, -1e300, 2.0**53 + 2,
                  2.0**53 - 1, 1e-320])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_special_values_are_c99s(dtype):
  """Every pair of the tables: NaN for x < 0 and a non-integer y, the sign of x^y for an integer y by its parity, 1 for
  y = +-0 (NaN x too) and x = 1 (NaN y too), +-0 and +-inf from zeros, infinities and y = +-inf as C99 says, NaN from
  NaN otherwise; what is neither special nor exact within one ulp of NumPy."""
  with np.errstate(over="ignore"): x, y = np.meshgrid(POW_X.astype(dtype), POW_Y.astype(dtype))
  x, y = x.ravel(), y.ravel()
  with np.errstate(all="ignore"), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    want = np.power(x, y)
  got = power(x, y)
  assert got.dtype == want.dtype
  special = ~np.isfinite(want) | (want == 0) | (np.abs(want) == 1)
  bad = [(a, b, g, w) for a, b, g, w in zip(x[special], y[special], got[special], want[special])
         if not (g == w and np.signbit(g) == np.signbit(w) or np.isnan(g) and np.isnan(w))]
  assert not bad, bad[:8]
  assert ulps(got, want).max() <= 1.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_sweep(dtype):
  """Results over the whole range (x^y from 2^-1074 to 2^1024 in f64, every f32 magnitude in f32), bases near 1 with large
  exponents, negative bases with integer exponents: within an ulp of NumPy (f64: 0.68 ulp of the true value at most as
  measured, f32 computed in f64 and rounded once: the correctly rounded f32 every time checked)."""
  top = 1070 if dtype == "float64" else 140
  x = np.concatenate([np.exp(RNG.uniform(-50, 50, 6000)), 1 + RNG.uniform(-1e-3, 1e-3, 2000)])
  y = RNG.uniform(-top, top, len(x)) / np.log2(x)
  x, y = np.concatenate([x, -RNG.integers(1, 30, 1000) * 1.0]), np.concatenate([y, RNG.integers(-40, 40, 1000) * 1.0])
  x, y = x.astype(dtype), y.astype(dtype)
  with np.errstate(all="ignore"): want = np.power(x, y)
  distance = ulps(power(x, y), want)
  assert distance.max() <= 1.0, (x[np.argmax(distance)], y[np.argmax(distance)])
  assert np.mean(distance == 0) > 0.75


def test_pow_exact_results_are_exact():
  """Results that a double holds exactly come out exactly (the error is well under half an ulp)."""
  x = np.array([3.0, -3.0, 10.0, 2.0, 0.5, 7.0, 4.0, 1e-3, -2.0, 9.0, 1.5])
  y = np.array([20.0, 21.0, 22.0, -1074.0, 1074.0, 18.0, 0.5, -2.0, -1.0, 1.5, 3.0])
  np.testing.assert_array_equal(power(x, y), np.power(x, y))


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16])
def test_pow_of_narrow_floats_rounds_once(dtype):
  """f16 and bf16 compute in f64 and round once: NumPy's f64 pow of the same values rounded to the dtype."""
  x = np.abs(RNG.standard_normal(3000) * 4).astype(np.float32)
  y = RNG.uniform(-6, 6, 3000).astype(np.float32)
  x[:8], y[:8] = [0.0, -2.0, 4.0, np.inf, -0.0, np.nan, 1.0, -1.5], [-1.0, 3.0, 0.5, -2.0, 3.0, 0.0, np.nan, 0.5]
  narrow = (lambda v: v.astype(np.float16).astype(np.float32)) if dtype is dtypes.float16 else bfloat16
  with np.errstate(all="ignore"):
    x, y = narrow(x), narrow(y)
    exact = np.power(x.astype(np.float64), y.astype(np.float64))
    want = narrow(exact)
  if dtype is dtypes.bfloat16: assert np.any(want != bfloat16(exact.astype(np.float32)))  # rounding twice (through f32) differs
  got = power(x, y, dtype)
  assert np.array_equal(got, want, equal_nan=True), [(a, b, g, w) for a, b, g, w in zip(x, y, got, want) if g != w][:5]


def bfloat16(x: np.ndarray) -> np.ndarray:
  """x (normal or 0 in bf16, inf or NaN) rounded once to bf16's 8 significant bits (nearest even), held in f32."""
  mantissa, exponent = np.frexp(np.asarray(x, np.float64))
  with np.errstate(invalid="ignore"): return np.ldexp(np.round(mantissa * 256) / 256, exponent).astype(np.float32)


@pytest.mark.parametrize("size", [1001, 1002])
def test_amd_code_objects_link_without_a_device_library(size):
  """On the MOCK AMD GPU the code object for f64 math and pow of f32 and f64 (scalar, or in vectors of two f64) has no
  undefined symbol, and computes what the emulation does."""
  pytest.importorskip("llvmlite")
  pytest.importorskip("ziglang")
  assert not Device["AMD:MOCK"].target.math_library
  x = np.concatenate([[0.0, -0.0, np.inf, np.nan, 1e22, 1e300], sweep("sin")[::16]])[:size]
  a = Tensor(x, device="AMD:MOCK")
  np.testing.assert_array_equal(a.sin().numpy(), emu("sin", x))
  np.testing.assert_array_equal(a.abs().log2().numpy(), emu("log2", np.abs(x)))
  y = RNG.uniform(-3, 3, len(x))
  np.testing.assert_array_equal((a.abs() ** Tensor(y, device="AMD:MOCK")).numpy(), power(np.abs(x), y))
  with np.errstate(over="ignore"): f32 = x.astype(np.float32)
  np.testing.assert_array_equal((Tensor(f32, device="AMD:MOCK") ** 2.5).numpy(), power(f32, np.full_like(f32, 2.5)))
