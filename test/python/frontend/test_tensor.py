"""The Tensor frontend: creation, elementwise math, cumulative and shape helpers against NumPy, realize and errors."""
import copy
import gc
import math
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from pytc import Context, Device, GlobalCounters, Tensor, dtypes, realize
from pytc.dtype import is_weak, least_upper_dtype

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 5)).astype(np.float32)
B = rng.standard_normal((3, 5)).astype(np.float32) + 3


def test_from_list_and_ndarray():
  assert Tensor([1.0, 2.0]).dtype == dtypes.float32 and Tensor([1, 2]).dtype == dtypes.int32
  assert Tensor([True, False]).dtype == dtypes.bool
  assert Tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
  assert Tensor(np.arange(6, dtype=np.int16).reshape(2, 3)).dtype == dtypes.int16
  np.testing.assert_array_equal(Tensor(A).numpy(), A)
  assert Tensor(2.5).item() == 2.5 and Tensor(3).shape == ()
  assert Tensor([]).dtype == dtypes.float32 and Tensor([]).shape == (0,)


@pytest.mark.parametrize("name, fn", [
  ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b), ("div", lambda a, b: a / b),
  ("neg", lambda a, b: -a), ("maximum", lambda a, b: a.maximum(b) if isinstance(a, Tensor) else np.maximum(a, b)),
  ("minimum", lambda a, b: a.minimum(b) if isinstance(a, Tensor) else np.minimum(a, b)),
  ("scalar_rhs", lambda a, b: a * 2 + 1), ("scalar_lhs", lambda a, b: 2 - a), ("rdiv", lambda a, b: 1 / b),
  ("chain", lambda a, b: (a * b + a) * 0.5 - b),
])
def test_elementwise_matches_numpy(name, fn):
  np.testing.assert_allclose(fn(Tensor(A), Tensor(B)).numpy(), fn(A, B), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name, ours, theirs", [
  ("exp2", Tensor.exp2, np.exp2), ("log2", Tensor.log2, np.log2), ("sqrt", Tensor.sqrt, np.sqrt), ("sin", Tensor.sin, np.sin),
  ("exp", Tensor.exp, np.exp), ("log", Tensor.log, np.log), ("reciprocal", Tensor.reciprocal, np.reciprocal),
  ("relu", Tensor.relu, lambda x: np.maximum(x, 0)), ("sigmoid", Tensor.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
  ("abs", Tensor.abs, np.abs), ("trunc", Tensor.trunc, np.trunc), ("cos", Tensor.cos, np.cos),
])
def test_unary_matches_numpy(name, ours, theirs):
  x = np.abs(B) if name in ("log2", "log", "sqrt") else A
  np.testing.assert_allclose(ours(Tensor(x)).numpy(), theirs(x), rtol=1e-5, atol=1e-6)


def test_comparisons_and_where():
  a, b = Tensor(A), Tensor(B - 3)
  np.testing.assert_array_equal((a < b).numpy(), A < B - 3)
  np.testing.assert_array_equal((a > b).numpy(), A > B - 3)
  np.testing.assert_array_equal((a == a).numpy(), np.ones_like(A, dtype=bool))
  np.testing.assert_array_equal((a != b).numpy(), A != B - 3)
  np.testing.assert_array_equal((a >= 0).numpy(), A >= 0)
  np.testing.assert_allclose((a < b).where(a, b).numpy(), np.where(A < B - 3, A, B - 3))


@pytest.mark.parametrize("dtype", [dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint32,
                                   dtypes.float16, dtypes.float64])
def test_dtypes_round_trip_and_add(dtype):
  values = np.array([[1, 2, 3], [4, 5, 100]], dtype=dtype.numpy)
  t = Tensor(values, dtype=dtype)
  assert t.dtype == dtype
  np.testing.assert_array_equal((t + t).numpy(), values + values)


def test_integer_and_unsigned_semantics():
  u = Tensor(np.array([250, 3], dtype=np.uint8))
  np.testing.assert_array_equal((u + 10).numpy(), np.array([4, 13], dtype=np.uint8))  # wraps like uint8
  assert (u > 100).tolist() == [True, False]  # unsigned comparison
  assert (Tensor([-7, 7]) * 3).tolist() == [-21, 21]


def test_casts():
  x = Tensor([-1.7, 0.0, 2.9])
  assert x.cast(dtypes.int32).tolist() == [-1, 0, 2]
  assert x.cast(dtypes.bool).tolist() == [True, False, True]
  assert Tensor([1, 0]).cast(dtypes.float32).tolist() == [1.0, 0.0]
  assert Tensor([1.0]).bitcast(dtypes.int32).tolist() == [0x3F800000]


def test_bfloat16_arithmetic():
  x = Tensor([1.5, -2.25, 3.0], dtype=dtypes.bfloat16)
  assert (x * 2).numpy().tolist() == [3.0, -4.5, 6.0]


def test_realize_runs_one_kernel_and_caches_the_program():
  x, y = Tensor(A), Tensor(B)
  GlobalCounters.reset()
  first = ((x + y) * y).realize()
  schedules = len(realize._schedules)
  x2, y2 = Tensor(B), Tensor(A)  # new buffers, same structure: no new compile
  second = ((x2 + y2) * y2).realize()
  assert GlobalCounters.kernel_count == 2 and len(realize._schedules) == schedules
  np.testing.assert_allclose(first.numpy(), (A + B) * B, rtol=1e-6)
  np.testing.assert_allclose(second.numpy(), (B + A) * A, rtol=1e-6)


def test_realize_several_outputs_in_one_schedule():
  x = Tensor(A)
  s, p = x + 1, x * 2
  GlobalCounters.reset()
  s.realize(p)
  assert GlobalCounters.kernel_count == 1  # both read x at the element they write: one kernel of two stores (tinygrad: two)
  np.testing.assert_allclose(s.numpy(), A + 1)
  np.testing.assert_allclose(p.numpy(), A * 2)


def test_errors_are_clear():
  with pytest.raises(ValueError, match=r"cannot broadcast shapes \(2,\) and \(3,\)"): Tensor([1.0, 2.0]) + Tensor([1.0, 2.0, 3.0])
  with pytest.raises(ValueError, match=r"cannot reshape \(2,\) \(2 elements\) to \(3,\)"): Tensor([1.0, 2.0]).reshape(3)
  with pytest.raises(IndexError, match=r"axis 2 is out of range for shape \(2,\)"): Tensor([1.0, 2.0]).sum(axis=2)
  with pytest.raises(ValueError, match=r"shrink \(\(0, 5\),\) is out of bounds for shape \(2,\)"): Tensor([1.0, 2.0]).shrink(((0, 5),))
  with pytest.raises(ValueError, match=r"cannot expand \(2,\) to \(3,\)"): Tensor([1.0, 2.0]).expand(3)
  with pytest.raises(RuntimeError, match=r"permute order \(0, 0\) is not a permutation"): Tensor([[1.0]]).permute(0, 0)
  with pytest.raises(RuntimeError, match=r"cannot matmul \(2, 3\) by \(2, 3\)"): Tensor(np.ones((2, 3))) @ Tensor(np.ones((2, 3)))
  with pytest.raises(ValueError, match="unknown device 'TPU'"): Tensor([1.0], device="TPU")
  with pytest.raises(TypeError, match="cannot make a Tensor from str"): Tensor("abc")
  with pytest.raises(TypeError, match="NumPy dtype <U1"): Tensor(["a", "b"])
  with pytest.raises(ValueError, match="one element"): Tensor([1.0, 2.0]).item()


@pytest.mark.cpu_only("the default device")
def test_device_default_is_cpu():
  assert Device.DEFAULT == "CPU" and Tensor([1.0]).device == "CPU"


@pytest.mark.cpu_only("the CPU queue's DEBUG output")
def test_debug2_shows_the_kernel_launched_through_the_cpu_queue(tmp_path):
  code = "from pytc import Tensor; print((Tensor([1.,2.])+Tensor([3.,4.])).numpy())"
  out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "DEBUG": "2"}, cwd=tmp_path, capture_output=True, text=True, check=True)
  assert out.stdout.splitlines()[-1] == "[4. 6.]"
  assert out.stdout.startswith("*** CPU") and "E_2" in out.stdout and "realize: 1 kernels" in out.stdout


@pytest.mark.cpu_only("the CPU pipeline's stages")
def test_pytc_dump_writes_the_ir_after_every_pass(tmp_path):
  code = "from pytc import Tensor; Tensor([1.0, 2.0]).exp2().realize()"
  env = {**os.environ, "PYTC_DUMP": str(tmp_path / "ir"), "PYTC_CACHE": "0"}  # compile for real: no disk cache
  subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, check=True)
  dumped = sorted(p.name for p in (tmp_path / "ir" / "graph").rglob("*.mlir"))
  assert "2_pytc-rangeify.mlir" in dumped and any("convert-func-to-llvm" in name for name in dumped)
  lowered = next((tmp_path / "ir" / "graph").rglob("*_pytc-lower-kernels.mlir")).read_text()
  assert "scf.parallel" in lowered and "math.exp2" not in lowered and "arith.bitcast" in lowered  # exp2 as arithmetic


def test_empty_tensors():
  assert (Tensor([]) + 1).numpy().shape == (0,)
  np.testing.assert_array_equal(Tensor(np.ones((0, 3), np.float32)).sum(0).numpy(), np.zeros(3, np.float32))
  np.testing.assert_array_equal(Tensor(np.ones((2, 0), np.float32)).max(1).numpy(), np.full(2, -np.inf, np.float32))
  assert (Tensor(np.ones((2, 0), np.float32)).permute(1, 0) * 2).numpy().shape == (0, 2)


def test_creation():
  assert Tensor.zeros(2, 3).numpy().tolist() == [[0.0] * 3] * 2 and Tensor.ones((2,)).dtype == dtypes.float32
  assert Tensor.full((2, 2), 7).numpy().tolist() == [[7, 7], [7, 7]] and Tensor.full((2,), 7).dtype == dtypes.int32
  assert Tensor.ones(3).zeros_like().tolist() == [0.0] * 3 and Tensor([1, 2]).full_like(5).tolist() == [5, 5]
  np.testing.assert_array_equal(Tensor.arange(2, 11, 3).numpy(), np.arange(2, 11, 3))
  np.testing.assert_allclose(Tensor.arange(0, 1, 0.25).numpy(), np.arange(0, 1, 0.25))
  np.testing.assert_allclose(Tensor.linspace(-1, 1, 5).numpy(), np.linspace(-1, 1, 5))
  np.testing.assert_array_equal(Tensor.eye(2, 3).numpy(), np.eye(2, 3))
  with pytest.raises(ValueError, match="step cannot be 0"): Tensor.arange(0, 5, 0)


def test_random_is_reproducible_and_distributed():
  Tensor.manual_seed(42)
  first = Tensor.rand(4000).numpy()
  Tensor.manual_seed(42)
  again = Tensor.rand(4000).numpy()
  np.testing.assert_array_equal(first, again)
  assert 0 <= first.min() and first.max() < 1 and abs(first.mean() - 0.5) < 0.02
  normal = Tensor.randn(20000).numpy()
  assert abs(normal.mean()) < 0.03 and abs(normal.std() - 1) < 0.03
  ints = Tensor.randint(2000, low=3, high=7).numpy()
  assert set(np.unique(ints)) == {3, 4, 5, 6}
  assert not np.array_equal(Tensor.rand(8).numpy(), Tensor.rand(8).numpy())


@pytest.mark.parametrize("name, ours, theirs", [
  ("floor", Tensor.floor, np.floor), ("ceil", Tensor.ceil, np.ceil), ("round", Tensor.round, np.round), ("sign", Tensor.sign, np.sign),
  ("tan", Tensor.tan, np.tan), ("leaky_relu", Tensor.leaky_relu, lambda x: np.where(x < 0, 0.01 * x, x)),
  ("silu", Tensor.silu, lambda x: x / (1 + np.exp(-x))), ("elu", Tensor.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1)),
  ("softplus", Tensor.softplus, lambda x: np.log1p(np.exp(x))), ("mish", Tensor.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
  ("clip", lambda t: t.clip(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5)), ("square", Tensor.square, np.square),
  ("tanh", Tensor.tanh, np.tanh),
])
def test_more_unary_ops(name, ours, theirs):
  x = np.array([-2.5, -1.5, -0.7, -0.5, 0.0, 0.3, 0.5, 1.5, 2.5], np.float32)
  np.testing.assert_allclose(ours(Tensor(x)).numpy(), theirs(x), rtol=1e-5, atol=1e-6)


def test_more_reductions_and_movement():
  a = np.array([[1, 5, 3, 5], [7, 2, 7, 0]], np.float32)
  t = Tensor(a)
  np.testing.assert_allclose(t.var(1).numpy(), a.var(1, ddof=1), rtol=1e-6)
  np.testing.assert_allclose(t.std().numpy(), a.std(ddof=1), rtol=1e-6)
  assert t.argmax(1).tolist() == [1, 0] and t.argmin(0).tolist() == [0, 1, 0, 1] and t.argmax().item() == 4
  assert t.any().item() and not (t > 6).all().item() and (t >= 0).all().item()
  np.testing.assert_allclose(t.logsumexp(0).numpy(), np.log(np.exp(a).sum(0)), rtol=1e-6)
  np.testing.assert_array_equal(t.cat(t * 2, dim=0).numpy(), np.concatenate([a, a * 2]))
  np.testing.assert_array_equal(Tensor.stack(t, t, dim=1).numpy(), np.stack([a, a], 1))
  assert [s.shape for s in t.split([1, 3], dim=1)] == [(2, 1), (2, 3)] and len(t.chunk(3, 1)) == 2
  np.testing.assert_array_equal(t.repeat(2, 1).numpy(), np.tile(a, (2, 1)))
  assert t.unflatten(1, (2, 2)).shape == (2, 2, 2) and t.view(-1).shape == (8,)
  np.testing.assert_array_equal(Tensor([1, 0, 2]).one_hot(3).numpy(), np.eye(3, dtype=np.int32)[[1, 0, 2]])
  with pytest.raises(ValueError, match="cat along dim 0"): t.cat(Tensor.ones(2, 3))


@pytest.mark.parametrize("index", [1, -1, (0, 2), (slice(None), 1), (Ellipsis, 1), (None, 0), (slice(None, None, -1),),
                                   (0, slice(None, None, 2)), (0, slice(3, 0, -2)), (1, Ellipsis, slice(1, None, 3)), (Ellipsis, None),
                                   (slice(-1, None), slice(0, 2), -2)], ids=repr)
def test_getitem_matches_numpy(index):
  a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  np.testing.assert_array_equal(Tensor(a)[index].numpy(), a[index])


def test_tensor_indices_gather_scatter_and_setitem():
  a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  t = Tensor(a)
  np.testing.assert_array_equal(t[:, Tensor([2, 0, -1])].numpy(), a[:, [2, 0, -1]])
  np.testing.assert_array_equal(t[Tensor([1, 0]), Tensor([2, 1])].numpy(), a[[1, 0], [2, 1]])
  x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
  index = np.array([[0, 0], [1, 0]])
  np.testing.assert_array_equal(Tensor(x).gather(1, Tensor(index)).numpy(), np.take_along_axis(x, index, 1))
  scattered = Tensor.zeros(3, 4).scatter(0, Tensor([[1, 2, 0, 1]]), 5.0).numpy()
  expected = np.zeros((3, 4), np.float32)
  expected[[1, 2, 0, 1], [0, 1, 2, 3]] = 5
  np.testing.assert_array_equal(scattered, expected)
  np.testing.assert_array_equal(Tensor(x).masked_fill(Tensor(x > 2), -1.0).numpy(), np.where(x > 2, -1, x))
  z = Tensor.zeros(3, 4)
  z[1:3, 2] = 7.0
  z[0] = Tensor([1.0, 2.0, 3.0, 4.0])
  expected = np.zeros((3, 4), np.float32)
  expected[1:3, 2], expected[0] = 7, [1, 2, 3, 4]
  np.testing.assert_array_equal(z.numpy(), expected)
  with pytest.raises(IndexError, match="index 3 is out of bounds for dim 0 with size 2"): t[3]
  with pytest.raises(IndexError, match="too many indices"): t[0, 0, 0, 0]
  z[::2, ::-3] = -1.0
  expected[::2, ::-3] = -1
  np.testing.assert_array_equal(z.numpy(), expected)
  with pytest.raises(IndexError, match="assignment needs ints, slices"): z[Tensor([0, 1])] = 1.0


ALL_DTYPES = [dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64,
              dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_end_to_end(dtype):
  values = np.array([0, 1, 3, 7, 60, 1, 0, 5]) if dtype is not dtypes.bool else np.array([0, 1, 1, 0, 1, 0, 0, 1])
  t = Tensor(values.astype(np.float32)).cast(dtype)
  assert t.dtype == dtype
  np.testing.assert_array_equal(t.cast(dtypes.float32).numpy(), values.astype(bool) if dtype is dtypes.bool else values)
  doubled = (t + t) if dtype is not dtypes.bool else (t | t)
  expected = values * 2 if dtype is not dtypes.bool else values.astype(bool)
  np.testing.assert_array_equal(doubled.cast(dtypes.float64).numpy(), expected.astype(np.float64))
  assert (t.max().cast(dtypes.float32).item() == values.max())
  if dtype is not dtypes.bfloat16: assert t.numpy().dtype == np.dtype(dtype.numpy)


def test_half_precision_arithmetic():
  a = np.array([0.1, 1.5, -2.25, 1000.0], np.float16)
  np.testing.assert_array_equal((Tensor(a) * 3 + 1).numpy(), (a * np.float16(3) + np.float16(1)))
  b = Tensor([1.0, 3.0, 256.0, -0.5], dtype=dtypes.bfloat16)
  assert (b * b).numpy().tolist() == [1.0, 9.0, 65536.0, 0.25]
  assert (b / 3).dtype == dtypes.bfloat16


@pytest.mark.parametrize("a, b, result", [(dtypes.int8, dtypes.uint8, dtypes.int16), (dtypes.uint32, dtypes.int32, dtypes.int64),
                                          (dtypes.int64, dtypes.uint64, dtypes.float16), (dtypes.float16, dtypes.bfloat16, dtypes.float32),
                                          (dtypes.bool, dtypes.int32, dtypes.int32), (dtypes.int32, dtypes.float16, dtypes.float16)], ids=str)
def test_dtype_promotion_follows_tinygrads_lattice(a, b, result):
  assert (Tensor([1, 2], dtype=a) + Tensor([3, 4], dtype=b)).dtype == result


def test_dtypes_copied_or_pickled_stay_equal_and_keep_their_hash():
  for dtype in dtypes.all:
    for twin in (copy.deepcopy(dtype), pickle.loads(pickle.dumps(dtype))):
      assert twin == dtype and hash(twin) == hash(dtype) and twin in {dtype} and twin in dtypes.all
      assert Tensor([1, 0], dtype=dtype).cast(twin).dtype == dtype and Tensor([1, 0], dtype=twin).tolist() == Tensor([1, 0], dtype=dtype).tolist()
  assert dtypes.float32 != dtypes.int32 and dtypes.float32 != "float32" and dtypes.uint8 != dtypes.fp8e4m3
  assert [t for t in dtypes.all if t.is_fp8] == list(dtypes.fp8s)


def test_scalar_promotion():
  assert (Tensor([1, 2]) * 2.5).dtype == dtypes.float32 and (Tensor([1.0], dtype=dtypes.float16) * 2).dtype == dtypes.float16
  assert (Tensor([1, 2], dtype=dtypes.uint8) + 1).dtype == dtypes.uint8 and (Tensor([True]) + 1).dtype == dtypes.int32


STRONG = [t for t in dtypes.all if not t.is_fp8]


@pytest.mark.parametrize("dtype", STRONG, ids=str)
def test_a_scalar_tensor_is_weak_and_yields_like_a_python_scalar(dtype):
  t = Tensor([1, 0], dtype=dtype)
  for scalar in (3, 2.5):
    weak = Tensor(scalar)
    assert weak.dtype == (dtypes.weakint if isinstance(scalar, int) else dtypes.weakfloat)
    assert (weak * t).dtype == (t * scalar).dtype == (t * weak).dtype == least_upper_dtype(dtype, weak.dtype)
    expected = (t * scalar).numpy()
    np.testing.assert_array_equal((weak * t).numpy(), expected)
    np.testing.assert_array_equal((t * weak).numpy(), expected)
  assert (Tensor(3) + Tensor([1], dtype=dtypes.int8)).dtype is dtypes.int8 and (Tensor(2.5) * Tensor([1.0], dtype=dtypes.half)).dtype is dtypes.half


def test_weak_tensors_together_stay_weak_and_read_back_at_the_defaults():
  assert repr(Tensor(2).dtype) == "dtypes.weakint" and repr(Tensor(2.0).dtype) == repr(Tensor(None).dtype) == "dtypes.weakfloat"
  assert Tensor(True).dtype is dtypes.bool and Tensor([1]).dtype is dtypes.int32 and Tensor(np.float32(2)).dtype is dtypes.float32
  assert (Tensor(2) + 1).dtype == dtypes.weakint and is_weak((Tensor(2) + 1).dtype)
  assert all(is_weak(t.dtype) and t.dtype.is_float for t in (Tensor(2) + 1.5, Tensor(2) * Tensor(0.5), Tensor(2).sqrt(), Tensor(2.0).exp()))
  assert not is_weak(Tensor(2).cast(dtypes.int32).dtype) and not is_weak(Tensor(2).float().dtype) and not is_weak((Tensor(2) + Tensor([1])).dtype)
  assert Tensor(2).item() == 2 and Tensor(None).item() == 0.0 and Tensor(2).numpy().dtype == np.int32
  for value in (float("inf"), float("-inf"), -0.0, 1e30):
    assert Tensor(value).numpy() == np.float32(value) and np.signbit(Tensor(value).numpy()) == np.signbit(value)
  assert np.isnan(Tensor(float("nan")).numpy())
  with Context(DEFAULT_INT="int16", DEFAULT_FLOAT="float16"):
    assert Tensor(2).dtype == dtypes.weakint == dtypes.int16 and Tensor(2).numpy().dtype == np.int16
    assert Tensor(2.5).numpy().dtype == np.float16 and (Tensor(70000) + Tensor([1], dtype=dtypes.int32)).item() == 70001
  assert Tensor(300).cast(dtypes.int8).item() == np.int64(300).astype(np.int8)  # the value, not its stored int32, is cast


def test_a_list_of_numpy_scalars_needs_a_dtype():
  with pytest.raises(RuntimeError, match="NumPy scalars"): Tensor([np.int32(1), np.int32(2)])
  with pytest.raises(RuntimeError, match="NumPy scalars"): Tensor([[np.float16(1)]])
  assert Tensor([np.int32(1)], dtype=dtypes.int32).tolist() == [1] and Tensor([np.float32(0.5)], dtype="float32").tolist() == [0.5]


def test_gradients_pass_through_weak_tensors():
  w, x = Tensor(2.0, requires_grad=True), Tensor([1.0, 3.0], requires_grad=True)
  (w * x + w.exp() * x).sum().backward()
  np.testing.assert_allclose(w.grad.numpy(), 4 + np.exp(2) * 4, rtol=1e-6)
  np.testing.assert_allclose(x.grad.numpy(), [2 + np.exp(2)] * 2, rtol=1e-6)


def test_least_upper_dtype_with_weak_types():
  wi, wf = dtypes.weakint, dtypes.weakfloat
  assert least_upper_dtype(wi, wi) == wi and is_weak(least_upper_dtype(wi, wi)) and is_weak(least_upper_dtype(wi, wf))
  assert least_upper_dtype(wi, wf).is_float and least_upper_dtype(dtypes.bool, wi) is dtypes.int32
  assert least_upper_dtype(dtypes.uint8, wi) is dtypes.uint8 and least_upper_dtype(dtypes.int64, wf) is dtypes.float32
  assert least_upper_dtype(dtypes.int8, dtypes.uint8, wi) is dtypes.int16 and least_upper_dtype(dtypes.bfloat16, wf) is dtypes.bfloat16
  assert least_upper_dtype(dtypes.int32) is dtypes.int32  # strong types as before, the cache telling weak from strong
  assert least_upper_dtype(wi) == wi and is_weak(least_upper_dtype(wi))


@pytest.mark.cpu_only("from_blob: tensors in host memory")
def test_from_blob_uses_host_memory_in_place():
  source = np.arange(6, dtype=np.float32)
  t = Tensor.from_blob(source.ctypes.data, (2, 3), dtype=dtypes.float32, owner=source)
  np.testing.assert_array_equal((t * 2).numpy(), source.reshape(2, 3) * 2)
  source[0] = 100.0
  assert (t + 0).numpy()[0, 0] == 100.0  # no copy was made
  with pytest.raises(ValueError, match="non-null"): Tensor.from_blob(0, (1,))


@pytest.mark.cpu_only("from_blob: tensors in host memory")
def test_from_blob_at_any_address_reads_and_refuses_unaligned_writes():
  base = np.arange(64 * 64 + 16, dtype=np.float32)
  for offset in (0, 1, 3):  # 0: 64-byte aligned or not, as NumPy placed it; 1, 3: 4 and 12 bytes further
    view = base[offset:offset + 64 * 64]
    t = Tensor.from_blob(view.ctypes.data, (64, 64), dtype=dtypes.float32, owner=base)
    np.testing.assert_allclose((t @ t).numpy(), view.reshape(64, 64) @ view.reshape(64, 64), rtol=1e-5)
    if view.ctypes.data % 64:
      with pytest.raises(ValueError, match="aligned to 64 bytes"): t.assign(t + 1).realize()
      np.testing.assert_array_equal(view, np.arange(offset, offset + 64 * 64, dtype=np.float32))  # nothing was written


def test_cast_rejects_what_is_not_a_dtype():
  with pytest.raises(TypeError, match="cast needs a pytc dtype"): Tensor([1.0]).cast(np.float32)


def test_floor_division_and_modulo_follow_python():
  a, b = np.array([7, -7, 7, -7, 6, 0], np.int32), np.array([2, 2, -2, -2, 3, 5], np.int32)
  np.testing.assert_array_equal((Tensor(a) // Tensor(b)).numpy(), a // b)
  np.testing.assert_array_equal((Tensor(a) % Tensor(b)).numpy(), a % b)
  np.testing.assert_array_equal((Tensor(a) // 3).numpy(), a // 3)
  np.testing.assert_array_equal((17 % Tensor(b)).numpy(), 17 % b)
  np.testing.assert_array_equal(Tensor(a).idiv(Tensor(b)).numpy(), np.trunc(a / b).astype(np.int32))
  x, y = np.array([7.5, -7.5, 2.0], np.float32), np.array([2.0, 2.0, -0.75], np.float32)
  np.testing.assert_allclose((Tensor(x) // Tensor(y)).numpy(), x // y)
  np.testing.assert_allclose((Tensor(x) % Tensor(y)).numpy(), x % y, rtol=1e-6)
  assert (Tensor([1.0, 2.0]) / Tensor([2, 4])).dtype == dtypes.float32


def test_integer_division_never_traps():
  a = Tensor(np.array([7, -2147483648, 5], np.int32))
  b = Tensor(np.array([0, -1, 0], np.int32))
  assert a.idiv(b).tolist() == [0, -2147483648, 0] and a._binary("mod", b).tolist() == [0, 0, 0]


def test_max_reduction_propagates_nan_and_infinities() -> None:
  a = np.random.default_rng(3).random((5, 100)).astype(np.float32)
  a[2, 37], a[4, :], a[0, 99] = np.nan, -np.inf, np.inf
  np.testing.assert_array_equal(Tensor(a).max(-1).numpy(), a.max(-1))
  np.testing.assert_array_equal(Tensor(a).max(0).numpy(), a.max(0))
  assert np.isnan(Tensor(a).max().numpy())


def test_a_dropped_result_returns_its_buffer_at_once() -> None:
  """Realized nodes hold no reference cycle: the next realize of the same size reuses the memory without a GC pass."""
  x = Tensor(np.arange(1000, dtype=np.float32))
  gc.disable()
  try:
    first = (x + 1).realize()
    address = first.lazydata.arg.address
    del first
    assert (x + 2).realize().lazydata.arg.address == address
  finally:
    gc.enable()


X = np.array([-2.0, -0.5, 0.0, 0.3, 1.5, 4.0, 7.0], np.float32)
CASES = {
  "sinh": (lambda t: t.sinh(), np.sinh), "cosh": (lambda t: t.cosh(), np.cosh), "asinh": (lambda t: t.asinh(), np.arcsinh),
  "acosh": (lambda t: (t.abs() + 1).acosh(), lambda x: np.arccosh(np.abs(x) + 1)),
  "atanh": (lambda t: (t * 0.1).atanh(), lambda x: np.arctanh(x * 0.1)),
  "log10": (lambda t: (t.abs() + 1).log10(), lambda x: np.log10(np.abs(x) + 1)),
  "erf": (lambda t: t.erf(), lambda x: np.array([math.erf(v) for v in x])),
  "relu6": (lambda t: t.relu6(), lambda x: np.clip(x, 0, 6)), "hardtanh": (lambda t: t.hardtanh(), lambda x: np.clip(x, -1, 1)),
  "hardsigmoid": (lambda t: t.hardsigmoid(), lambda x: np.clip(x / 6 + 0.5, 0, 1)),
  "hardswish": (lambda t: t.hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
  "softsign": (lambda t: t.softsign(), lambda x: x / (1 + np.abs(x))), "logsigmoid": (lambda t: t.logsigmoid(), lambda x: -np.log1p(np.exp(-x))),
  "selu": (lambda t: t.selu(), lambda x: 1.0507 * np.where(x >= 0, x, 1.67326 * (np.exp(x) - 1))),
  "celu": (lambda t: t.celu(), lambda x: np.maximum(x, 0) + np.minimum(0, np.exp(x) - 1)),
  "quick_gelu": (lambda t: t.quick_gelu(), lambda x: x / (1 + np.exp(-1.702 * x))),
  "lerp": (lambda t: t.lerp(t * 2, 0.25), lambda x: x + x * 0.25),
  "logaddexp": (lambda t: t.logaddexp(t.flip(0)), lambda x: np.logaddexp(x, x[::-1])),
  "copysign": (lambda t: t.copysign(-1.0), lambda x: -np.abs(x)), "fmod": (lambda t: t.fmod(1.5), lambda x: np.fmod(x, 1.5)),
  "cummax": (lambda t: t.cummax(0)[0], np.maximum.accumulate), "cummin": (lambda t: t.cummin(0)[0], np.minimum.accumulate),
  "logcumsumexp": (lambda t: t.logcumsumexp(0), np.logaddexp.accumulate),
  "roll": (lambda t: t.roll(2, 0), lambda x: np.roll(x, 2)), "repeat_interleave": (lambda t: t.repeat_interleave(2), lambda x: np.repeat(x, 2)),
  "softmin": (lambda t: t.softmin(0), lambda x: np.exp(-x) / np.exp(-x).sum()),
  "normalize": (lambda t: t.reshape(1, -1).normalize(), lambda x: (x / np.linalg.norm(x)).reshape(1, -1)),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_numpy(name):
  ours, theirs = CASES[name]
  np.testing.assert_allclose(ours(Tensor(X)).numpy(), theirs(X), rtol=1e-5, atol=1e-6)


def test_matrix_and_grid_helpers():
  m = np.arange(9, dtype=np.float32).reshape(3, 3)
  np.testing.assert_array_equal(Tensor(m).diagonal().numpy(), np.diag(m))
  np.testing.assert_array_equal(Tensor(np.diag(m)).diag().numpy(), np.diag(np.diag(m)))
  for indexing in ("ij", "xy"):
    ours, theirs = Tensor.meshgrid(Tensor([1, 2, 3]), Tensor([4, 5]), indexing=indexing), np.meshgrid([1, 2, 3], [4, 5], indexing=indexing)
    for a, b in zip(ours, theirs): np.testing.assert_array_equal(a.numpy(), b)
  assert Tensor([1, 2]).pad_to(4).tolist() == [1, 2, 0, 0] and Tensor([1, 2, 3]).shrink_to(2).tolist() == [1, 2]


def test_predicates_and_losses():
  values = Tensor([1.0, float("nan"), float("inf"), -float("inf")])
  assert values.isnan().tolist() == [False, True, False, False] and values.isinf().tolist() == [False, False, True, True]
  assert values.isfinite().tolist() == [True, False, False, False] and values.isinf(detect_negative=False).tolist() == [False, False, True, False]
  assert Tensor(X).allclose(Tensor(X * (1 + 1e-7))) and not Tensor(X).allclose(Tensor(X + 0.01))
  log_probs = np.log(np.array([[0.2, 0.8], [0.6, 0.4]], np.float32))
  np.testing.assert_allclose(Tensor(log_probs).nll_loss(Tensor([1, 0])).numpy(), -(log_probs[0, 1] + log_probs[1, 0]) / 2, rtol=1e-6)
  var, mean = Tensor(X).var_mean()
  np.testing.assert_allclose([var.item(), mean.item()], [X.var(ddof=1), X.mean()], rtol=1e-5)


def test_conversions_and_sizes():
  t = Tensor([1.5, 2.5])
  assert t.half().dtype == dtypes.float16 and t.double().dtype == dtypes.float64 and t.long().dtype == dtypes.int64
  assert t.short().dtype == dtypes.int16 and t.bfloat16().dtype == dtypes.bfloat16 and t.is_floating_point()
  assert t.element_size() == 4 and t.nbytes() == 8 and t.size() == (2,) and t.size(0) == 2
  assert t.clone().tolist() == [1.5, 2.5] and t.empty_like().shape == (2,)
  Tensor.manual_seed(3)
  assert t.rand_like().shape == (2,) and Tensor.glorot_uniform(4, 5).shape == (4, 5) and Tensor.kaiming_normal(3, 4).shape == (3, 4)


def test_gradient_unfold_sequential():
  x = Tensor([1.0, 2.0, 3.0])
  (dx,) = (x * x).sum().gradient(x)
  assert dx.tolist() == [2.0, 4.0, 6.0] and x.grad is None
  assert (x * 2).sum().gradient(Tensor([1.0]))[0].tolist() == [0.0]
  a = np.arange(10, dtype=np.float32).reshape(2, 5)
  np.testing.assert_array_equal(Tensor(a).unfold(1, 2, 2).numpy(), np.stack([a[:, 0:2], a[:, 2:4]], 1))
  assert Tensor([1.0, -1.0]).sequential([Tensor.relu, lambda t: t * 3]).tolist() == [3.0, 0.0]
