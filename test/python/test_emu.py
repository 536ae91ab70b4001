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
