"""The EMU device: graphs run through the GPU mapping and the emulation of the mapped kernels, with NumPy's results, for
each GPU target it can emulate. (`PYTC_DEVICE=EMU pytest` runs the whole numerics suite on it.)"""
import numpy as np
import pytest

from pytc import Device, Tensor, TinyJit
from pytc.compiler import compile_kernels
from pytc.realize import schedule

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("device", ["EMU", "EMU:gfx1100", "EMU:sm_90"])
def test_graphs_on_emulated_targets(device):
  a, b = RNG.standard_normal((33, 70)).astype(np.float32), RNG.standard_normal((70, 17)).astype(np.float32)
  x, w = Tensor(a, device=device), Tensor(b, device=device)
  np.testing.assert_allclose((x @ w).relu().numpy(), np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(x.softmax(-1).numpy(), (e := np.exp(a - a.max(-1, keepdims=True))) / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
  np.testing.assert_allclose(x.sum().numpy(), a.sum(dtype=np.float64), rtol=1e-5)
  assert Device[device].target.wave_size == (32 if device != "EMU" else 64)


def test_the_kernels_are_mapped_onto_workgroups_and_threads():
  x = Tensor(RNG.standard_normal(1000).astype(np.float32), device="EMU")
  scheduled = schedule([(x * 2).exp().lazydata])[0]
  kernel_ir = compile_kernels(scheduled, Device["EMU"]).kernel_ir
  assert "pytc.gpu" not in kernel_ir and "scf.for" in kernel_ir  # workgroups and threads as loops: the gpu.func was emulated
  with pytest.raises(ValueError, match="unknown GPU target 'gfx999'"): Device["EMU:gfx999"]


def test_tinyjit_replays_on_emu():
  step = TinyJit(lambda x: (x * x).sum(axis=1))
  for _ in range(4):
    a = RNG.standard_normal((5, 300)).astype(np.float32)
    np.testing.assert_allclose(step(Tensor(a, device="EMU")).numpy(), (a * a).sum(1), rtol=1e-5)


def softmax(a: np.ndarray) -> np.ndarray: return (e := np.exp(a - a.max(-1, keepdims=True))) / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("shape", [(6, 2048), (3, 3000), (96, 128), (70, 50)], ids=["rows-2048", "rows-3000", "96-rows-128", "70-rows-50"])
def test_grouped_row_reductions(shape):
  """Few long rows, or rows whose reductions feed every output: each row's reductions are grouped across a workgroup
  (strided partials, a tree in workgroup memory)."""
  a = RNG.standard_normal(shape).astype(np.float32)
  x = Tensor(a, device="EMU")
  np.testing.assert_allclose(x.softmax(-1).numpy(), softmax(a), rtol=1e-5, atol=1e-8)
  np.testing.assert_allclose(x.log_softmax(-1).numpy(), np.log(softmax(a.astype(np.float64))), rtol=1e-5, atol=1e-5)
  mean = a.mean(-1, keepdims=True, dtype=np.float64)
  normed = (a - mean) / np.sqrt(((a - mean) ** 2).mean(-1, keepdims=True) + 1e-5)
  np.testing.assert_allclose(x.layernorm().numpy(), normed, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(x.sum(-1).numpy(), a.sum(-1, dtype=np.float64), rtol=1e-5, atol=1e-3)


def test_grouped_whole_sum():
  a = RNG.standard_normal(1_000_000).astype(np.float32)
  np.testing.assert_allclose(Tensor(a, device="EMU").sum().numpy(), a.sum(dtype=np.float64), rtol=1e-5)
  np.testing.assert_allclose(Tensor(a, device="EMU").abs().max().numpy(), np.abs(a).max())


def test_grouped_max_nan_and_inf():
  """A NaN anywhere in a row is its max (whichever thread's partial holds it); an all -inf row stays -inf."""
  a = RNG.standard_normal((5, 4096)).astype(np.float32)
  a[1, 2049], a[2, :] = np.nan, -np.inf
  a[3, 4095], a[4, 0] = np.inf, np.nan
  x = Tensor(a, device="EMU")
  np.testing.assert_array_equal(x.max(-1).numpy(), a.max(-1))
  np.testing.assert_array_equal(x.min(-1).numpy(), a.min(-1))
  np.testing.assert_array_equal(x.argmax(-1).numpy(), a.argmax(-1))
  np.testing.assert_array_equal(x.argmin(-1).numpy(), a.argmin(-1))


def test_grouped_integer_and_bool_reductions():
  i = RNG.integers(-1000, 1000, (4, 5000)).astype(np.int32)
  np.testing.assert_array_equal(Tensor(i, device="EMU").sum(-1).numpy(), i.sum(-1))
  np.testing.assert_array_equal(Tensor(i, device="EMU").max(-1).numpy(), i.max(-1))
  np.testing.assert_array_equal(Tensor(i, device="EMU").prod(-1).numpy(), i.prod(-1, dtype=np.int32))
  u = RNG.integers(0, 255, 9000).astype(np.uint8)
  np.testing.assert_array_equal(Tensor(u, device="EMU").max().numpy(), u.max())
  b = np.zeros((3, 4000), bool)
  b[1, 3999] = True
  np.testing.assert_array_equal(Tensor(b, device="EMU").any(-1).numpy(), b.any(-1))
  np.testing.assert_array_equal(Tensor(~b, device="EMU").all(-1).numpy(), (~b).all(-1))
  ties = np.zeros((2, 3000), np.float32)
  ties[1, [5, 700, 2999]] = 1
  np.testing.assert_array_equal(Tensor(ties, device="EMU").argmax(-1).numpy(), ties.argmax(-1))


@pytest.mark.parametrize("shapes", [((33, 70), (70, 17)), ((64, 64), (64, 64)), ((1, 300), (300, 5)), ((4, 33, 20), (4, 20, 9))],
                         ids=["33x70@70x17", "64x64@64x64", "1x300@300x5", "batched-4x33x20@4x20x9"])
def test_tiled_matmul(shapes):
  """Matmuls in 16x16 output tiles through workgroup memory (edge tiles zero-padded), with an epilogue after the sum."""
  a, b = (RNG.standard_normal(s).astype(np.float32) for s in shapes)
  bias = RNG.standard_normal(shapes[1][-1]).astype(np.float32)
  x, w, c = Tensor(a, device="EMU"), Tensor(b, device="EMU"), Tensor(bias, device="EMU")
  np.testing.assert_allclose((x @ w).numpy(), a @ b, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(((x @ w).relu() + c).numpy(), np.maximum(a @ b, 0) + bias, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose((x @ w + c).relu().numpy(), np.maximum(a @ b + bias, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_tiled_half_matmul(dtype):
  """f16 and bf16 matmuls tiled, their factors widened to f32 and summed there: the CPU's results, and NumPy's sum of
  the widened factors."""
  a, b = RNG.standard_normal((40, 70)).astype(np.float32), RNG.standard_normal((70, 33)).astype(np.float32)
  outs = {d: (Tensor(a, device=d).cast(dtype) @ Tensor(b, device=d).cast(dtype)).float().numpy() for d in ("CPU", "EMU")}
  widened = [Tensor(m).cast(dtype).float().numpy() for m in (a, b)]
  expected = Tensor(widened[0] @ widened[1]).cast(dtype).float().numpy()
  np.testing.assert_allclose(outs["EMU"], outs["CPU"], rtol=1e-2, atol=1e-2)
  assert np.mean(outs["EMU"] == expected) > 0.95  # the same f32 sum up to its order, rounded once to the half type


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "uint8", "int32", "int64", "bool"])
def test_vector_outputs(dtype):
  """Outputs in vector lanes (16 bytes of the widest element): contiguous reads as vectors, reversed, broadcast, padded
  (gated) and transposed reads lane by lane, several outputs realized together, against NumPy."""
  a = (RNG.standard_normal((64, 96)) * 50).astype(dtype)
  b = (RNG.standard_normal((96,)) * 50).astype(dtype)
  x, y = Tensor(a, device="EMU"), Tensor(b, device="EMU")
  both = [x + y, x[:, ::-1] * (y if dtype != "bool" else True)]
  Tensor.realize(*both)
  np.testing.assert_array_equal(both[0].numpy(), a + b)
  np.testing.assert_array_equal(both[1].numpy(), a[:, ::-1] * (b if dtype != "bool" else True))
  padded = np.pad(a, ((0, 0), (4, 4)))[:, 2:98]
  np.testing.assert_array_equal(x.pad(((0, 0), (4, 4)))[:, 2:98].numpy(), padded)
  np.testing.assert_array_equal((x.T.contiguous().T + x).numpy(), a + a)
  np.testing.assert_array_equal((x == y).where(x, y).numpy(), np.where(a == b, a, b))


def test_vector_outputs_match_the_cpu():
  """Transcendentals in vector lanes on the emulated GPU give the CPU's results."""
  a = RNG.standard_normal((128, 256)).astype(np.float32)
  outs = {d: ((Tensor(a, device=d) * 3).exp().sigmoid() + Tensor(a, device=d).abs().sqrt()).numpy() for d in ("CPU", "EMU")}
  np.testing.assert_allclose(outs["EMU"], outs["CPU"], rtol=1e-6, atol=0)


def test_vector_outputs_special_values():
  """±0, ±inf, NaN, ties and huge values through vector lanes (maximum, where, division, exp, sqrt) give the CPU's bits."""
  specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, -3.4e38, 1e-45, 0.5, -0.5, 2.5, 1.0], np.float32)
  a = np.resize(specials, (64, 96)).astype(np.float32)
  b = np.resize(specials[::-1], (64, 96)).astype(np.float32)
  def graphs(d: str) -> list[np.ndarray]:
    x, y = Tensor(a, device=d), Tensor(b, device=d)
    outs = [x.maximum(y), (x > y).where(x, y), x / y, x.exp(), x.abs().sqrt(), (x * y).round(), x == y]
    Tensor.realize(*outs)
    return [o.numpy() for o in outs]
  for emu, cpu in zip(graphs("EMU"), graphs("CPU")): np.testing.assert_array_equal(emu.view(np.uint8), cpu.view(np.uint8))
