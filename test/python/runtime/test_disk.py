"""DISK:path tensors: the file's bytes, mapped. `.to("DISK:...")` and assigns write the file at once, slices and bitcasts of it
read only what they show, kernels over DISK tensors leave the file alone, and a file the process cannot write is read-only."""
import pathlib

import numpy as np
import pytest

from pytc import Device, Tensor, dtypes
from pytc.runtime import ops_disk

DTYPES = [dtypes.bool, dtypes.uint8, dtypes.int8, dtypes.uint16, dtypes.int16, dtypes.uint32, dtypes.int32, dtypes.uint64,
          dtypes.int64, dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]


def disk(path: pathlib.Path) -> str: return f"disk:{path}"


def stored_bytes(values: np.ndarray, dtype) -> np.ndarray:
  """The bytes of `values` as `dtype` stores them (bfloat16 reads back as float32: its upper halves)."""
  if dtype is dtypes.bfloat16: values = (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
  return np.ascontiguousarray(values).reshape(-1).view(np.uint8)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 5)])
def test_to_disk_writes_the_file_and_reads_back(tmp_path, dtype, shape):
  values = (np.arange(int(np.prod(shape))).reshape(shape) * 7 - 5)
  source = Tensor(values.astype(np.float32)).cast(dtype)
  on_disk = source.to(disk(tmp_path / "t.bin"))
  assert on_disk.device == f"DISK:{tmp_path / 't.bin'}" and on_disk.shape == shape and on_disk.dtype is dtype
  expected = source.numpy()
  written = np.frombuffer((tmp_path / "t.bin").read_bytes(), np.uint8)
  np.testing.assert_array_equal(written, stored_bytes(expected, dtype))
  np.testing.assert_array_equal(on_disk.numpy(), expected)
  np.testing.assert_array_equal(on_disk.to(Device.DEFAULT).numpy(), expected)


def test_a_slice_of_a_disk_tensor_moves_to_the_default_device(tmp_path):
  t = Tensor.randn(30).to(disk(tmp_path / "r.bin"))
  part = t[10:20]
  moved = part.to(Device.DEFAULT)
  assert moved.device == Device.DEFAULT
  np.testing.assert_array_equal(part.numpy(), moved.numpy())
  np.testing.assert_array_equal(moved.numpy(), np.fromfile(tmp_path / "r.bin", np.float32)[10:20])


def test_kernels_over_disk_tensors_leave_the_file_alone(tmp_path):
  data = np.linspace(-2, 2, 12, dtype=np.float32)
  t = Tensor(data).to(disk(tmp_path / "k.bin"))
  np.testing.assert_allclose((t.reshape(3, 4) * 2 + 1).sum(axis=1).numpy(), (data.reshape(3, 4) * 2 + 1).sum(1), rtol=1e-6)
  np.testing.assert_array_equal(np.fromfile(tmp_path / "k.bin", np.float32), data)


def test_a_path_is_a_disk_tensor_of_its_elements(tmp_path):
  (path := tmp_path / "blob.bin").write_bytes(np.arange(5, dtype=np.int32).tobytes() + b"\x01\x02")  # 2 bytes left over
  raw = Tensor(path)
  assert raw.device == f"DISK:{path.resolve()}" and raw.dtype is dtypes.uint8 and raw.shape == (22,)
  np.testing.assert_array_equal(raw[:20].bitcast(dtypes.int32).numpy(), np.arange(5))
  words = Tensor(path, dtype=dtypes.int32)
  assert words.shape == (5,)
  np.testing.assert_array_equal(words.numpy(), np.arange(5))
  on_cpu = Tensor(path, device="CPU", dtype=dtypes.int16)
  assert on_cpu.device == "CPU" and on_cpu.shape == (11,)
  np.testing.assert_array_equal(on_cpu.numpy()[:2], [0, 0])
  (empty := tmp_path / "empty.bin").write_bytes(b"")
  assert Tensor(empty).shape == (0,) and Tensor(empty).numpy().size == 0
  with pytest.raises(FileNotFoundError): Tensor(tmp_path / "missing.bin")
  with pytest.raises(TypeError, match="bitcast"): Tensor(path, dtype=dtypes.bool)


def test_assigns_write_through_views_and_keep_the_rest(tmp_path):
  (path := tmp_path / "w.bin").write_bytes(np.full(6, 9, np.int32).tobytes())
  w = Tensor.empty(4, dtype=dtypes.int32, device=disk(path))  # the file's first 16 bytes: nothing is truncated
  w[1:3].assign(Tensor([7, 8], dtype=dtypes.int32))
  np.testing.assert_array_equal(np.fromfile(path, np.int32), [9, 7, 8, 9, 9, 9])
  w.assign(Tensor([1, 2, 3, 4], dtype=dtypes.int32))
  np.testing.assert_array_equal(np.fromfile(path, np.int32), [1, 2, 3, 4, 9, 9])
  grown = Tensor.empty(8, dtype=dtypes.int32, device=disk(path))  # the file grows with zeros
  np.testing.assert_array_equal(grown.numpy(), [1, 2, 3, 4, 9, 9, 0, 0])
  with pytest.raises(RuntimeError, match="dtype"): w.assign(Tensor([1.0, 2, 3, 4]))


def test_a_file_this_process_cannot_write_is_read_only(tmp_path, monkeypatch):
  (path := tmp_path / "ro.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
  monkeypatch.setattr(ops_disk, "writable", lambda _: False)
  name = f"DISK:{tmp_path / 'ro.bin'}"
  t = Tensor.empty(4, device=name)
  np.testing.assert_array_equal((t + 1).numpy(), [1, 2, 3, 4])
  with pytest.raises(PermissionError, match="not writable"): t.assign(Tensor.zeros(4))
  with pytest.raises(ValueError, match="fewer than"): Tensor.empty(8, device=name)
  np.testing.assert_array_equal(np.fromfile(path, np.float32), np.arange(4))


def test_bad_disk_names(tmp_path):
  with pytest.raises(ValueError, match="names no file"): Tensor.empty(2, device="DISK")
  with pytest.raises(IsADirectoryError): Tensor.empty(2, device=f"DISK:{tmp_path}")


def test_disk_to_a_gpu_device_and_back(tmp_path):
  data = np.arange(10, dtype=np.float32)
  t = Tensor(data).to(disk(tmp_path / "g.bin"))
  on_gpu = t[2:8].to("AMD:MOCK")
  np.testing.assert_array_equal((on_gpu * 2).numpy(), data[2:8] * 2)
  (on_gpu * 3).to(disk(tmp_path / "h.bin"))
  np.testing.assert_array_equal(np.fromfile(tmp_path / "h.bin", np.float32), data[2:8] * 3)
