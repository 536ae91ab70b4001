"""Launches split across the CPU queue's threads compute the same results (the first test splits every launch), and which
launches split."""
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import flags

from pytc import Device, Tensor
from pytc.compiler import compile_kernels
from pytc.realize import schedule

PROGRAM = """
import numpy as np
from pytc import Tensor
rng = np.random.default_rng(0)
a, b = rng.standard_normal((37, 23)).astype(np.float32), rng.standard_normal((23, 19)).astype(np.float32)
x, w = rng.standard_normal((2, 3, 9, 9)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
assert np.allclose((Tensor(a) @ Tensor(b)).numpy(), a @ b, atol=1e-4)
e = np.exp(a - a.max(1, keepdims=True))
assert np.allclose(Tensor(a).softmax(1).numpy(), e / e.sum(1, keepdims=True), atol=1e-6)
ours = Tensor(x).conv2d(Tensor(w), padding=1).numpy()
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
ref = sum(np.einsum("nchw,oc->nohw", xp[:, :, i:i + 9, j:j + 9], w[:, :, i, j]) for i in range(3) for j in range(3))
assert np.allclose(ours, ref, atol=1e-4)
assert np.array_equal((Tensor(np.arange(1000, dtype=np.int32)) * 3).numpy(), np.arange(1000) * 3)
# reduce-outer kernels whose only output range is split across the cores (x @ W for one x, column sums), reduce ranges of
# sizes that do and do not divide by their unrolling
for k in (1, 6, 7, 64):
  v, m = rng.standard_normal((1, k)).astype(np.float32), rng.standard_normal((k, 301)).astype(np.float32)
  assert np.allclose((Tensor(v) @ Tensor(m)).numpy(), v @ m, atol=1e-4)
  assert np.allclose(Tensor(m).sum(0).numpy(), m.sum(0), atol=1e-4)
  assert np.allclose(Tensor(m).max(0).numpy(), m.max(0))
  ints = rng.integers(-9, 9, (k, 301)).astype(np.int32)
  assert np.array_equal(Tensor(ints).sum(0).numpy(), ints.sum(0)) and np.array_equal(Tensor(ints > 0).any(0).numpy(), (ints > 0).any(0))
  special = m.copy()
  special[:, :4] = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)  # whole columns: NaN and infinities survive the unrolled steps
  special[-1, 4] = np.nan  # and a NaN in a column's last step
  with np.errstate(invalid="ignore"): expected_sum = special.sum(0)
  np.testing.assert_allclose(Tensor(special).sum(0).numpy(), expected_sum, atol=1e-4)
  np.testing.assert_array_equal(Tensor(special).max(0).numpy(), special.max(0))
  np.testing.assert_allclose((Tensor(np.ones((1, k), np.float32)) @ Tensor(special)).numpy(), np.ones((1, k), np.float32) @ special, atol=1e-4)
assert Tensor(np.zeros((0, 301), np.float32)).sum(0).tolist() == [0.0] * 301 and Tensor(np.zeros((7, 0), np.float32)).sum(0).shape == (0,)
print("ok")
"""


def test_split_launches_match_numpy(tmp_path):
  env = {**os.environ, "PYTC_SPLIT_BYTES": "0", "PYTC_CACHE": "0"}
  out = subprocess.run([sys.executable, "-c", PROGRAM], env=env, cwd=tmp_path, capture_output=True, text=True)
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.strip() == "ok"



def launch_slices(t: Tensor) -> list[tuple[int, int, int]]:
  """Per kernel of `t`'s schedule: its steps, the extent of its outermost parallel range and how many slices a launch of
  it over fresh buffers runs in."""
  device = Device["CPU"]
  kernels = compile_kernels(schedule([t.lazydata])[0], device).program.kernels.values()
  return [(k.work, k.extent, k.args([device.allocator.alloc(4) for _ in range(3)]).global_size[0]) for k in kernels]


@pytest.fixture(params=["", "1000000000"])
def split_work(request, monkeypatch):
  """PYTC_SPLIT_WORK unset (the default), or more steps than any kernel here takes."""
  yield from flags(monkeypatch, **({"PYTC_SPLIT_WORK": request.param} if request.param else {}))


def test_launches_of_many_steps_split_however_few_bytes(split_work):
  """A 64x64x64 matmul touches 48 KiB but takes 262144 multiply-adds: it runs on every core unless PYTC_SPLIT_WORK asks
  for more steps, where 1K additions run on one; the results stay NumPy's."""
  a, b = np.random.default_rng(1).standard_normal((2, 64, 64)).astype(np.float32)
  matmul, added = Tensor(a) @ Tensor(b), Tensor(a).reshape(-1)[:1024] + 1
  [(work, extent, slices)] = launch_slices(matmul)
  assert work == 64 ** 3 and slices == (1 if os.environ.get("PYTC_SPLIT_WORK") else min(Device["CPU"].cores, extent))
  assert [(work, slices) for work, _, slices in launch_slices(added)] == [(1024, 1)]
  np.testing.assert_allclose(matmul.numpy(), a @ b, rtol=1e-4, atol=1e-4)
