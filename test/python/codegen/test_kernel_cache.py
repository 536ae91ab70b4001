"""The on-disk kernel cache: reuse across processes, the off switch, and no way to make pytc load a library it did not write
(replaced, planted or symlinked entries, untrusted folders, truncated files), concurrent writers and the bound on entries."""
import ctypes
import dataclasses
import hashlib
import os
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

from pytc import Tensor, kernel_cache, realize
from pytc.compilers.cpu import CPUCompiler
from pytc.device import Device
from pytc.runtime.device import Binary
from pytc.runtime.target import host_cpu

pytestmark = pytest.mark.cpu_only("the kernel cache's files, the CPU's shared libraries")

PROGRAM = """
import numpy as np
from pytc import Tensor, realize
x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
out = (x.exp() * 2).sum(1).numpy()
assert np.allclose(out, (np.exp(np.arange(6).reshape(2, 3)) * 2).sum(1), rtol=1e-5), out
executables = [e for s in realize._schedules.values() for e in s.schedule.executables.values()]
print("from_disk", bool(executables) and all(e.from_disk for e in executables))
"""


def run(tmp_path, **env) -> str:
  environment = {**os.environ, "PYTC_CACHE_DIR": str(tmp_path / "cache"), **env}
  return subprocess.run([sys.executable, "-c", PROGRAM], env=environment, cwd=tmp_path, check=True, capture_output=True, text=True).stdout


def test_second_process_loads_compiled_kernels(tmp_path):
  assert "from_disk False" in run(tmp_path)
  assert len(list((tmp_path / "cache").glob("*.so"))) == 1
  assert "from_disk True" in run(tmp_path)


def test_corrupt_entry_is_rebuilt(tmp_path):
  run(tmp_path)
  (library,) = (tmp_path / "cache").glob("*.so")
  library.write_bytes(b"not a library")
  assert "from_disk False" in run(tmp_path)
  assert "from_disk True" in run(tmp_path)


def test_cache_can_be_turned_off(tmp_path):
  assert "from_disk False" in run(tmp_path, PYTC_CACHE="0")
  assert not (tmp_path / "cache").exists()


def test_the_key_depends_on_the_host_cpu():
  """A library JIT-compiled for one CPU's features is never loaded on another (it could hold instructions it lacks): its cache
  key differs, and a device refuses a binary built for another target."""
  other = dataclasses.replace(host_cpu(), features=("Some Other CPU", "sse2"))
  assert CPUCompiler(other).cache_key("kernel ir") != CPUCompiler(host_cpu()).cache_key("kernel ir")
  with pytest.raises(ValueError, match="not a binary built for"): Device["CPU"].program(Binary(other.cache_key(), b"", ()))


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
  """A fresh cache folder (not created yet), with no folder refused and no index remembered from earlier tests."""
  monkeypatch.setenv("PYTC_CACHE_DIR", str(folder := tmp_path / "cache"))
  monkeypatch.delenv("PYTC_CACHE", raising=False)
  monkeypatch.setattr(kernel_cache, "_unusable", set())
  monkeypatch.setattr(kernel_cache, "_memos", {})
  return folder


def compute(monkeypatch, columns: int) -> bool:
  """Realize a small expression with no schedule cached in memory (its kernels come from the disk cache or a fresh
  compile), check it against NumPy, and say whether its kernels came from disk."""
  monkeypatch.setattr(realize, "_schedules", {})
  x = np.linspace(-1, 1, 2 * columns, dtype=np.float32).reshape(2, columns)
  np.testing.assert_allclose((Tensor(x).exp() * 2).sum(1).numpy(), (np.exp(x) * 2).sum(1), rtol=1e-5)
  executables = [e for s in realize._schedules.values() for e in s.schedule.executables.values()]
  return bool(executables) and all(e.from_disk for e in executables)


def index(folder: Path) -> dict[str, str]:
  return dict(line.split(" ") for line in (folder / "index").read_text().splitlines())


def sha256_of(data: bytes) -> str: return hashlib.sha256(data).hexdigest()


def sha256(path: Path) -> str: return sha256_of(path.read_bytes())


def assert_intact(folder: Path) -> None:
  """Every index entry names a private regular library with its digest."""
  for digest in index(folder).values():
    library = folder / f"{digest}.so"
    assert not library.is_symlink() and sha256(library) == digest and library.stat().st_mode & 0o777 == 0o600


@pytest.fixture
def planted(tmp_path) -> tuple[Path, Path]:
  """A library whose constructor writes a marker file, and the marker (which exists only if the library was loaded)."""
  if shutil.which("cc") is None: pytest.skip("needs a C compiler driver")
  marker, source, library = tmp_path / "marker", tmp_path / "planted.c", tmp_path / "planted.so"
  source.write_text(f'#include <stdio.h>\n__attribute__((constructor)) static void planted(void) {{ FILE *f = fopen("{marker}", "w"); '
                    'if (f) fclose(f); }\n')
  subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
  ctypes.CDLL(str(library))  # the marker does tell whether it was loaded
  assert marker.exists()
  marker.unlink()
  return library, marker


def plant(folder: Path, key: str, library: Path) -> None:
  """What someone able to write the folder would do: the library under its digest, indexed for the key."""
  folder.mkdir(mode=0o700, exist_ok=True)
  shutil.copy(library, folder / f"{sha256(library)}.so")
  (folder / "index").write_text(f"{key} {sha256(library)}\n")


def key_of(monkeypatch, tmp_path: Path, columns: int) -> str:
  """The cache key of `compute(columns)`, found by computing it once in a scratch cache folder."""
  monkeypatch.setenv("PYTC_CACHE_DIR", str(scratch := tmp_path / f"scratch{columns}"))
  compute(monkeypatch, columns)
  monkeypatch.setenv("PYTC_CACHE_DIR", str(tmp_path / "cache"))
  ((key, _),) = index(scratch).items()
  return key


def test_the_folder_and_its_files_are_private_whatever_the_umask(cache, monkeypatch):
  previous = os.umask(0o002)
  try:
    assert not compute(monkeypatch, 4)
    assert compute(monkeypatch, 4)
  finally: os.umask(previous)
  assert cache.stat().st_mode & 0o777 == 0o700 and (cache / "index").stat().st_mode & 0o777 == 0o600
  assert len(index(cache)) == 1 and not list(cache.glob("*.sha256"))
  assert_intact(cache)


def test_a_library_replaced_in_place_is_not_loaded_and_is_rebuilt(cache, monkeypatch, planted):
  assert not compute(monkeypatch, 5)
  ((key, digest),) = index(cache).items()
  (cache / f"{digest}.so").write_bytes(planted[0].read_bytes())
  assert not compute(monkeypatch, 5) and not planted[1].exists()
  assert list(index(cache)) == [key]
  assert_intact(cache)
  assert compute(monkeypatch, 5)


@pytest.mark.parametrize("indexed", ["no index", "the index names the real library"])
def test_a_planted_library_the_index_does_not_name_is_never_loaded(cache, monkeypatch, tmp_path, planted, indexed):
  key = key_of(monkeypatch, tmp_path, 6)
  if indexed == "no index": cache.mkdir(mode=0o700)
  else:
    assert not compute(monkeypatch, 6)
    (cache / f"{index(cache)[key]}.so").unlink()
  data = planted[0].read_bytes()
  for name in (f"{key}.so", f"{sha256(planted[0])}.so"): (cache / name).write_bytes(data)
  (cache / f"{key}.sha256").write_text(f"{len(data)} {sha256(planted[0])}\n")  # the record the former layout trusted
  assert not compute(monkeypatch, 6) and not planted[1].exists()
  assert_intact(cache)


@pytest.mark.parametrize("attack", ["library -> planted", "library -> copy of itself", "index -> copy of itself", "library group-writable",
                                    "index world-writable", "library owned by another user"])
def test_an_entry_that_is_not_a_private_regular_file_is_refused(cache, monkeypatch, tmp_path, planted, attack):
  assert not compute(monkeypatch, 7)
  ((key, digest),) = index(cache).items()
  target = cache / ("index" if attack.startswith("index") else f"{digest}.so")
  if "->" in attack:
    source = planted[0] if attack.endswith("planted") else shutil.copy(target, tmp_path / "copy")
    target.unlink()
    target.symlink_to(source)
  elif "owned" in attack:
    if os.geteuid() != 0: pytest.skip("giving a file to another user needs root")
    os.chown(target, os.geteuid() + 1000, -1)
  else: target.chmod(0o666 if "world" in attack else 0o660)
  assert not compute(monkeypatch, 7) and not planted[1].exists()
  assert list(index(cache)) == [key] and not (cache / "index").is_symlink()
  assert_intact(cache)
  assert compute(monkeypatch, 7)


def computes_without_the_folder(monkeypatch, folder: Path, columns: int, reason: str) -> None:
  """Two computations run from fresh compiles, with exactly one RuntimeWarning naming the folder and `reason`."""
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert not compute(monkeypatch, columns)
    assert not compute(monkeypatch, columns)
  (warning,) = [w for w in caught if issubclass(w.category, RuntimeWarning)]
  assert str(folder) in str(warning.message) and reason in str(warning.message)


def test_a_symlinked_cache_folder_is_refused(cache, monkeypatch, tmp_path, planted):
  plant(real := tmp_path / "elsewhere", key_of(monkeypatch, tmp_path, 8), planted[0])
  cache.symlink_to(real)
  computes_without_the_folder(monkeypatch, cache, 8, "symbolic link")
  assert not planted[1].exists() and len(index(real)) == 1


@pytest.mark.parametrize("mode", [0o770, 0o777, 0o703])
def test_a_folder_others_can_write_is_refused(cache, monkeypatch, tmp_path, planted, mode):
  plant(cache, key_of(monkeypatch, tmp_path, 9), planted[0])
  cache.chmod(mode)
  computes_without_the_folder(monkeypatch, cache, 9, "writable by others")
  assert not planted[1].exists() and len(index(cache)) == 1


def test_a_folder_owned_by_another_user_is_refused(cache, monkeypatch, tmp_path, planted):
  plant(cache, key_of(monkeypatch, tmp_path, 10), planted[0])
  other = os.geteuid() + 1000
  monkeypatch.setattr(os, "geteuid", lambda: other)
  computes_without_the_folder(monkeypatch, cache, 10, "owned by uid")
  assert not planted[1].exists()


def test_a_truncated_library_is_not_loaded_and_is_rebuilt(cache, monkeypatch):
  assert not compute(monkeypatch, 11)
  (library,) = cache.glob("*.so")
  library.write_bytes(library.read_bytes()[:library.stat().st_size * 3 // 4])
  assert not compute(monkeypatch, 11)
  assert_intact(cache)
  assert compute(monkeypatch, 11)


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_a_cache_folder_path_that_is_a_file_means_no_disk_cache(tmp_path, cache, monkeypatch, where):
  (blocker := tmp_path / "blocker").write_text("not a folder")
  monkeypatch.setenv("PYTC_CACHE_DIR", str(folder := blocker if where == "a file" else blocker / "cache"))
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert not compute(monkeypatch, 12)
    assert not compute(monkeypatch, 12)
  assert not [w for w in caught if str(blocker) in str(w.message)]
  assert folder in kernel_cache._unusable and blocker.read_text() == "not a folder"


def key(name: str) -> str: return hashlib.sha256(name.encode()).hexdigest()


def test_concurrent_writers_leave_a_whole_index(cache):
  def writer(w: int) -> None:
    for i in range(40): kernel_cache.store(key(f"{w}.{i}"), f"library {i % 5}".encode())
  threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
  for thread in threads: thread.start()
  for thread in threads: thread.join()
  assert sorted(index(cache)) == sorted(key(f"{w}.{i}") for w in range(4) for i in range(40))  # no writer lost another's entry
  assert_intact(cache)
  assert len(list(cache.glob("*.so"))) == 5 and not list(cache.glob(".*"))


def test_the_bound_on_entries_drops_the_oldest_and_their_unused_libraries(cache, monkeypatch):
  monkeypatch.setenv("PYTC_CACHE_ENTRIES", "3")
  for name, library in [("k0", b"a"), ("k1", b"b"), ("k2", b"c"), ("k3", b"a"), ("k4", b"d")]: kernel_cache.store(key(name), library)
  assert index(cache) == {key("k2"): sha256_of(b"c"), key("k3"): sha256_of(b"a"), key("k4"): sha256_of(b"d")}
  assert list(index(cache)) == [key("k2"), key("k3"), key("k4")]  # oldest first
  assert sorted(path.name for path in cache.glob("*.so")) == sorted(f"{sha256_of(data)}.so" for data in (b"a", b"c", b"d"))


def test_an_entry_whose_library_lacks_the_kernels_is_rebuilt(cache, monkeypatch):
  """A cached library with the right digest that still does not load for this schedule (another schedule's kernels under
  this key, as a stale entry could be) is replaced by a fresh compile, and the result is right."""
  assert not compute(monkeypatch, 5)
  first = index(cache)
  assert not compute(monkeypatch, 7)
  (key,), other = first.keys(), next(d for k, d in index(cache).items() if k not in first)
  (cache / "index").write_text(f"{key} {other}\n")
  monkeypatch.setattr(kernel_cache, "_memos", {})
  assert not compute(monkeypatch, 5)  # rebuilt, not loaded
  assert index(cache)[key] == first[key] and compute(monkeypatch, 5)
