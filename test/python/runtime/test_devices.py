"""Tensors on several devices: `to()` is a `uop.copy` that the schedule carries as a transfer between the kernels of each
device (a copy within a device, or of a value computed from constants alone, is no transfer). Checked against NumPy on a
second CPU (CPU:1) and on the AMD MOCK GPUs, both ways, for every dtype, edge shapes, views, several outputs together."""
import numpy as np
import pytest

from pytc import Tensor, dtypes

PAIRS = [("CPU", "CPU:1"), ("CPU", "AMD:MOCK"), ("AMD:MOCK", "CPU"), ("AMD:MOCK", "AMD:MOCK:1")]
DTYPES = [dtypes.float32, dtypes.float16, dtypes.bool, dtypes.uint8, dtypes.int64, dtypes.uint32]


def transfers(t: Tensor) -> int: return sum(launch.kernel is None for launch in t.schedule())


def sample(shape: tuple[int, ...], dtype) -> np.ndarray:
  values = np.random.default_rng(len(shape)).integers(0, 200, size=shape)
  return (values % 2 == 1) if dtype is dtypes.bool else values.astype(dtype.numpy)


@pytest.mark.parametrize("source,target", PAIRS)
def test_computed_value_crosses(source, target):
  a = np.arange(12, dtype=np.float32).reshape(3, 4)
  x = Tensor(a, device=source)
  moved = (x * 2 + 1).to(target)
  assert moved.device == target and transfers(moved) == 1
  np.testing.assert_array_equal(moved.numpy(), a * 2 + 1)
  np.testing.assert_allclose(moved.exp2().sum(axis=1).numpy(), np.exp2(a * 2 + 1).sum(axis=1), rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("source,target", PAIRS[:2])
def test_every_dtype(source, target, dtype):
  a = sample((5, 3), dtype)
  np.testing.assert_array_equal(Tensor(a, device=source, dtype=dtype).to(target).numpy(), a)


@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 0, 2), (1, 1), (4097,)])
def test_edge_shapes(shape):
  a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
  back = Tensor(a).to("AMD:MOCK").neg().to("CPU")
  assert back.shape == shape
  np.testing.assert_array_equal(back.numpy(), -a)


def test_special_values_survive():
  a = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, 1e-45], np.float32)
  out = Tensor(a).to("AMD:MOCK").to("CPU:1").numpy()
  np.testing.assert_array_equal(out.view(np.uint32), a.view(np.uint32))


def test_views_are_materialized_before_the_copy():
  a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
  x = Tensor(a)
  for view, expected in ((x[1:, ::-1], a[1:, ::-1]), (x.permute(2, 0, 1), a.transpose(2, 0, 1)), (x.reshape(6, 4)[2:5], a.reshape(6, 4)[2:5])):
    np.testing.assert_array_equal(view.to("AMD:MOCK").numpy(), expected)


def test_round_trip_and_outputs_on_two_devices_together():
  a = np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8)
  x = Tensor(a, device="CPU")
  on_gpu = (x.to("AMD:MOCK") @ x.to("AMD:MOCK")).relu()
  back = on_gpu.to("CPU") + x
  total = on_gpu.sum()
  Tensor.realize(back, total, on_gpu)
  expected = np.maximum(a @ a, 0)
  np.testing.assert_allclose(on_gpu.numpy(), expected, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(back.numpy(), expected + a, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(total.numpy(), expected.sum(), rtol=1e-5)
  assert (on_gpu.device, back.device, total.device) == ("AMD:MOCK", "CPU", "AMD:MOCK")


def test_copies_without_transfers():
  assert transfers(Tensor.ones(3, 4).to("CPU:1")) == 0  # computed where it is read
  assert transfers(Tensor.arange(6).reshape(2, 3).to("AMD:MOCK").to("CPU")) == 0
  np.testing.assert_array_equal(Tensor.arange(6).to("CPU:1").numpy(), np.arange(6))
  x = Tensor([1.0, 2.0], device="CPU")
  y = Tensor([1.0])  # on the default device
  assert x.to("CPU") is x and y.to(None) is y


def test_gradient_flows_back_across_devices():
  a = np.array([1.0, -2.0, 3.0], np.float32)
  x = Tensor(a, requires_grad=True, device="CPU")
  y = x.to("CPU:1")
  (y * y).sum().backward()
  assert x.grad.device == "CPU"
  np.testing.assert_allclose(x.grad.numpy(), 2 * a)


def test_mixing_devices_needs_a_copy():
  with pytest.raises(ValueError, match="different devices"): Tensor([1.0]) + Tensor([1.0], device="CPU:1")
  with pytest.raises(ValueError, match="unknown device"): Tensor([1.0]).to("TPU")


def test_export_refuses_a_copy_between_devices():
  from pytc.export import ExportError, export
  with pytest.raises(ExportError, match="one device"): export(lambda x: (x + 1).to("CPU:1").to("CPU") * 2, Tensor([1.0, 2.0]))


def test_gpus_of_one_driver_copy_peer_to_peer(capsys, monkeypatch):
  from pytc.device import Device
  from pytc.runtime import graph
  monkeypatch.setattr(graph, "DEBUG", 2)
  a = np.arange(3000, dtype=np.float32)
  moved = (Tensor(a, device="AMD:MOCK") * 3).to("AMD:MOCK:1").numpy()
  np.testing.assert_array_equal(moved, a * 3)
  assert "copy 12000 bytes from AMD:MOCK (peer to peer)" in capsys.readouterr().out
  assert Device["AMD:MOCK:1"].gpu.peer_handles  # the source buffer, mapped for the second GPU whose copy queue read it


def test_debug_prints_steps_and_every_command_buffer(tmp_path):
  import os
  import subprocess
  import sys
  code = "from pytc import Tensor; print(((Tensor([1.0, 2.0], device='CPU') * 2).to('AMD:MOCK') + 1).to('CPU').numpy())"
  out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "DEBUG": "5"}, cwd=tmp_path, capture_output=True, text=True,
                       check=True).stdout
  assert out.splitlines()[-1] == "[3. 5.]"
  assert "transfer             on AMD:MOCK: writes temp 1, reads temp 0" in out
  assert "CPU compute command buffer:" in out and " EXEC " in out
  pm4 = out[out.index("AMD:MOCK PM4 command buffer:"):]
  assert "register=pgm_lo" in pm4 and " DISPATCH_DIRECT  x=1 y=1 z=1" in pm4
  assert "AMD:MOCK SDMA command buffer:" in out and " COPY_LINEAR " in out
