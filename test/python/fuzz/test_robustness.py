"""Files from outside: hostile safetensors files, a damaged or unusable kernel cache, a source file that is not UTF-8."""
import ctypes
import hashlib
import json
import struct

import numpy as np
import pytest

from pytc import Tensor, dtypes, kernel_cache, realize
from pytc.cli import main
from pytc.compilers.cpu import CPUCompiler
from pytc.device import Device
from pytc.nn.state import safe_load, safe_save
from pytc.runtime.device import Binary
from pytc.runtime.ops_cpu import elf_problem, load_library
from pytc.runtime.target import host_cpu


def safetensors(header: object, data: bytes = b"") -> bytes:
  text = header if isinstance(header, bytes) else json.dumps(header).encode()
  return struct.pack("<Q", len(text)) + text + data


F32x2 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
HOSTILE = {
  "too short": b"\x01\x02\x03",
  "header length past the end": struct.pack("<Q", 1000) + b"{}",
  "header length 2^64-1": struct.pack("<Q", 2**64 - 1) + b"{}",
  "header not JSON": safetensors(b"{not json"),
  "header not UTF-8": safetensors(b'{"\xff\xfe": 1}'),
  "header a list": safetensors([1, 2]),
  "header nested too deep": safetensors(b'{"a":' * 100000 + b"1" + b"}" * 100000),
  "entry not an object": safetensors({"x": 5}),
  "entry without data_offsets": safetensors({"x": {"dtype": "F32", "shape": [2]}}, bytes(8)),
  "unknown dtype": safetensors({"x": {**F32x2, "dtype": "F8"}}, bytes(8)),
  "dtype not a string": safetensors({"x": {**F32x2, "dtype": ["F32"]}}, bytes(8)),
  "negative shape": safetensors({"x": {**F32x2, "shape": [-1, -2]}}, bytes(8)),
  "fractional shape": safetensors({"x": {**F32x2, "shape": [2.0]}}, bytes(8)),
  "boolean shape": safetensors({"x": {**F32x2, "shape": [True, 2]}}, bytes(8)),
  "shape not a list": safetensors({"x": {**F32x2, "shape": "2"}}, bytes(8)),
  "offsets past the end": safetensors({"x": {**F32x2, "data_offsets": [0, 400]}}, bytes(8)),
  "offsets reversed": safetensors({"x": {**F32x2, "data_offsets": [8, 0]}}, bytes(8)),
  "offsets not a pair": safetensors({"x": {**F32x2, "data_offsets": [0]}}, bytes(8)),
  "offsets NaN": safetensors(b'{"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, NaN]}}', bytes(8)),
  "size does not match the shape": safetensors({"x": {**F32x2, "shape": [3]}}, bytes(8)),
  "overlapping tensors": safetensors({"a": F32x2, "b": {**F32x2, "data_offsets": [4, 12]}}, bytes(12)),
  "a gap between tensors": safetensors({"a": F32x2, "b": {**F32x2, "data_offsets": [12, 20]}}, bytes(20)),
  "bytes after the last tensor": safetensors({"a": F32x2}, bytes(12)),
  "a repeated name": safetensors(b'{"a": ' + json.dumps(F32x2).encode() + b', "a": ' + json.dumps(F32x2).encode() + b"}", bytes(8)),
  "metadata not strings": safetensors({"__metadata__": {"format": 1}, "a": F32x2}, bytes(8)),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_malformed_safetensors_raise_one_value_error(tmp_path, name):
  (path := tmp_path / "model.safetensors").write_bytes(HOSTILE[name])
  with pytest.raises(ValueError, match="is not a safetensors file") as error:
    safe_load(path)
  assert "\n" not in str(error.value)


def test_safetensors_round_trip_keeps_every_dtype_and_special_values(tmp_path):
  special = np.array([np.nan, -np.inf, np.inf, -0.0, 1.5, 3e38], np.float32)
  tensors = {"f32": Tensor(special), "bf16": Tensor(special).cast(dtypes.bfloat16), "f16": Tensor(special[:5]).half(),
             "i64": Tensor(np.array([[-(2**40), 7]], np.int64)), "empty": Tensor(np.zeros((0, 3), np.float32)), "scalar": Tensor(2.5),
             "bool": Tensor(np.array([True, False]))}
  safe_save(tensors, path := tmp_path / "model.safetensors")
  safe_save(safe_load(path), again := tmp_path / "again.safetensors")
  assert again.read_bytes() == path.read_bytes()
  loaded = safe_load(path)
  for name, tensor in tensors.items():
    assert loaded[name].dtype == tensor.dtype and loaded[name].shape == tensor.shape
    np.testing.assert_array_equal(loaded[name].numpy(), tensor.numpy())


def test_compile_of_a_file_that_is_not_utf8_is_a_one_line_error(tmp_path, capsys):
  (path := tmp_path / "latin1.mlir").write_bytes("// caf\xe9\nfunc.func @f() { return }\n".encode("latin-1"))
  assert main(["compile", str(path)]) == 1
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and err.startswith("pytc: error:") and "not UTF-8" in err and "Traceback" not in err


def realize_something_new(seed: int) -> None:
  """A computation no earlier test has compiled (the schedule cache would skip the kernel cache)."""
  values = np.arange(seed % 50 + 3, dtype=np.float32)
  np.testing.assert_allclose((Tensor(values) * seed + 1).sqrt().numpy(), np.sqrt(values * seed + 1), rtol=1e-6)


@pytest.mark.parametrize("blocker", ["file", "under a file"])
def test_an_unusable_cache_folder_only_turns_the_disk_cache_off(tmp_path, monkeypatch, blocker):
  (tmp_path / "blocker").write_text("a file where the cache folder would be")
  folder = tmp_path / "blocker" if blocker == "file" else tmp_path / "blocker" / "cache"
  monkeypatch.setattr(kernel_cache, "cache_dir", lambda: folder)
  realize_something_new(11 if blocker == "file" else 12)
  realize_something_new(13 if blocker == "file" else 14)
  assert folder in kernel_cache._unusable


def cache_entry(folder) -> tuple[str, object]:
  """The key and library of the only entry in the cache folder's index."""
  ((key, digest),) = (line.split(" ") for line in (folder / "index").read_text().splitlines())
  return key, folder / f"{digest}.so"


def truncate_entry(folder) -> tuple[str, object, bytes]:
  """Replace the only entry's library by its first three quarters, indexed under their own digest (the checksum holds)."""
  key, library = cache_entry(folder)
  truncated = library.read_bytes()[:library.stat().st_size * 3 // 4]
  (library := folder / f"{hashlib.sha256(truncated).hexdigest()}.so").write_bytes(truncated)
  (folder / "index").write_text(f"{key} {library.stem}\n")
  return key, library, truncated


@pytest.mark.cpu_only("a CPU shared library in the cache")
def test_a_truncated_library_indexed_with_its_own_digest_is_never_loaded(tmp_path, monkeypatch):
  monkeypatch.setattr(kernel_cache, "cache_dir", lambda: tmp_path)
  realize_something_new(21)
  key, library = cache_entry(tmp_path)
  check = CPUCompiler(host_cpu()).check
  assert kernel_cache.load(key, check) == library.read_bytes()  # the intact entry loads
  key, library, truncated = truncate_entry(tmp_path)

  def refuse(*args, **kwargs): raise AssertionError("an invalid library reached dlopen")
  monkeypatch.setattr(ctypes, "CDLL", refuse)
  with pytest.raises(ValueError, match="not a loadable CPU binary: section headers past the end"): load_library(truncated)
  with pytest.raises(ValueError, match="not a loadable CPU binary"): Device["CPU"].program(Binary(host_cpu().cache_key(), truncated, ()))
  assert kernel_cache.load(key, check) is None and not library.exists()  # the compiler's check drops the entry


@pytest.mark.cpu_only("a CPU shared library in the cache")
def test_a_truncated_library_indexed_with_its_own_digest_is_rebuilt(tmp_path, monkeypatch):
  monkeypatch.setattr(kernel_cache, "cache_dir", lambda: tmp_path)
  realize_something_new(23)
  _, library, _ = truncate_entry(tmp_path)
  monkeypatch.setattr(realize, "_schedules", {})
  realize_something_new(23)  # compiled afresh: the damaged entry neither loads nor stays
  assert not library.exists() and elf_problem(cache_entry(tmp_path)[1].read_bytes()) is None


@pytest.mark.cpu_only("a CPU shared library in the cache")
def test_a_library_that_disagrees_with_its_digest_is_dropped(tmp_path, monkeypatch):
  monkeypatch.setattr(kernel_cache, "cache_dir", lambda: tmp_path)
  realize_something_new(22)
  key, library = cache_entry(tmp_path)
  data = library.read_bytes()
  library.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # same size, one bit flipped
  assert kernel_cache.load(key) is None and not library.exists()
