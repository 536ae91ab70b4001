"""The on-disk kernel cache: reuse across processes, corruption detected and rebuilt, and the off switch."""
import os
import subprocess
import sys

PROGRAM = """
import numpy as np
from pytc import Tensor, realize
x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
out = (x.exp() * 2).sum(1).numpy()
assert np.allclose(out, (np.exp(np.arange(6).reshape(2, 3)) * 2).sum(1), rtol=1e-5), out
print("from_disk", all(s.program.from_disk for s in realize._schedules.values()))
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
  assert library.read_bytes().startswith(b"\x7fELF")
  assert "from_disk True" in run(tmp_path)


def test_cache_can_be_turned_off(tmp_path):
  assert "from_disk False" in run(tmp_path, PYTC_CACHE="0")
  assert not (tmp_path / "cache").exists()


def test_the_key_depends_on_the_host_cpu(monkeypatch):
  """A library JIT-compiled for one CPU's features is never loaded on another (it could hold instructions it lacks)."""
  from pytc import kernel_cache
  here = kernel_cache.cache_key("kernel ir", "lowering")
  monkeypatch.setattr(kernel_cache, "cpu_features", lambda: ("Some Other CPU", "sse2"))
  assert kernel_cache.cache_key("kernel ir", "lowering") != here
