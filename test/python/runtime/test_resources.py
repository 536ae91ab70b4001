"""What a long-running process keeps: the schedule and template caches are bounded (evicted graphs compute again, TinyJit
captures keep their code), programs loaded from the disk cache are unmapped when dropped, the freed-buffer pool is bounded
by bytes, a stopped device recovers, and from_blob refuses addresses that are not mapped."""
import ctypes
import gc
import mmap
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from pytc import Device, GlobalCounters, Tensor, TinyJit, gradient, graph, realize, template
from pytc.helpers import LRUCache
from pytc.runtime import DeviceError, Signal
from pytc.runtime.hcq import SUBMIT_LOCK
from pytc.runtime.ops_cpu import CPUDevice

ROOT = Path(__file__).resolve().parents[3]


NEVER = Signal()  # a signal nobody signals (alive as long as the tests: a queue reads its memory)


def submit_unsatisfiable_wait(device) -> None:
  """A command buffer that waits on a signal nobody signals, then advances the device timeline: its WAIT times out."""
  with SUBMIT_LOCK: device.queue().wait(NEVER, 1).signal(device.timeline, device.next_timeline_value()).submit(device)


def check_realize(n: int = 7) -> None:
  np.testing.assert_allclose((Tensor.arange(n).reshape(n, 1) * Tensor.ones(1, 3) * 2 + 1).numpy(), np.arange(n)[:, None] * np.ones((1, 3)) * 2 + 1)


@pytest.mark.cpu_only("the CPU queue's host packets")
def test_timed_out_wait_is_reported_then_the_next_realize_works(short_waits):
  device = Device[Device.DEFAULT]
  submit_unsatisfiable_wait(device)
  with pytest.raises(DeviceError, match=r"packet 0 \(WAIT\).*SignalTimeout: WAIT on signal .* timed out"): device.synchronize(timeout=10)
  check_realize()
  assert device.error is None
  device.synchronize()


@pytest.mark.cpu_only("the CPU queue's host packets")
def test_unreported_stop_fails_the_next_realize_once(short_waits):
  device = Device[Device.DEFAULT]
  submit_unsatisfiable_wait(device)
  deadline = time.perf_counter() + 10
  while device.error is None and time.perf_counter() < deadline: time.sleep(0.001)  # stopped, and told to nobody yet
  with pytest.raises(DeviceError, match=r"packet 0 \(WAIT\)"): check_realize()
  check_realize()


@pytest.mark.cpu_only("the CPU queue's host packets")
def test_explicit_reset_recovers_the_device(short_waits):
  device = Device[Device.DEFAULT]
  submit_unsatisfiable_wait(device)
  waiters = []

  def wait_on_timeline() -> None:
    try: device.synchronize(timeout=10)
    except Exception as error: waiters.append(error)

  thread = threading.Thread(target=wait_on_timeline)
  thread.start()
  with pytest.raises(DeviceError): device.new_signal().wait(1, timeout=10)
  thread.join()
  assert len(waiters) == 1 and isinstance(waiters[0], DeviceError)  # woken by the stop, long before its own 10 s timeout
  assert "WAIT" in device.reset() and device.error is None and device.reset() is None
  device.synchronize(timeout=10)
  check_realize(5)


@pytest.mark.cpu_only("the CPU queue's host packets")
def test_malformed_command_buffer_then_realize():
  device = Device[Device.DEFAULT]
  device.submit(device.queue().signal(device.new_signal(), 1).bytes()[:-3])
  with pytest.raises(DeviceError, match="malformed.*bad size"): check_realize()
  check_realize()


def test_schedule_cache_evicts_and_evicted_graphs_compute_again(monkeypatch):
  monkeypatch.setattr(realize._schedules, "capacity", 3)
  shapes = [(2, 5 + i) for i in range(6)]
  for shape in shapes: (Tensor.ones(*shape) * 3 - 1).numpy()
  assert len(realize._schedules) == 3
  GlobalCounters.reset()
  np.testing.assert_equal((Tensor.ones(*shapes[0]) * 3 - 1).numpy(), np.full(shapes[0], 2.0))
  assert GlobalCounters.schedules_built == 1  # evicted: scheduled again
  np.testing.assert_equal((Tensor.ones(*shapes[-1]) * 3 - 1).numpy(), np.full(shapes[-1], 2.0))
  assert GlobalCounters.schedules_built == 1  # still cached


def test_template_cache_is_bounded(monkeypatch):
  monkeypatch.setattr(template, "_TEMPLATES", LRUCache(2))
  for n in range(3, 7):
    x = np.arange(n * 2, dtype=np.float32).reshape(2, n)
    np.testing.assert_allclose(Tensor(x).softmax(-1).numpy(), np.exp(x) / np.exp(x).sum(-1, keepdims=True), rtol=1e-5)
  assert len(template._TEMPLATES) == 2


def test_gradient_graph_cache_is_bounded(monkeypatch):
  monkeypatch.setattr(gradient, "_GRADIENT_GRAPHS", LRUCache(2))
  for n in range(3, 7):
    x = Tensor(np.arange(n, dtype=np.float32), requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.arange(n, dtype=np.float32))
  assert len(gradient._GRADIENT_GRAPHS) == 2


def test_jit_capture_replays_after_its_schedule_is_evicted():
  @TinyJit
  def step(x: Tensor) -> Tensor: return (x * 5 + 2).sqrt()
  for k in range(3): step(Tensor(np.full((3, 11), k, np.float32)))
  realize._schedules.clear()
  gc.collect()  # the program's code would be freed here if the capture did not hold it
  for k in range(3, 6): np.testing.assert_allclose(step(Tensor(np.full((3, 11), k, np.float32))).numpy(), np.sqrt(np.full((3, 11), k * 5 + 2.0)))


def test_schedule_cache_shared_by_threads_while_evicting(monkeypatch):
  monkeypatch.setattr(realize._schedules, "capacity", 1)
  errors = []

  def work(offset: int) -> None:
    try:
      for n in [3, 4, 5, 3, 4, 5]: np.testing.assert_equal((Tensor.ones(n, 2) * (offset + 1)).numpy(), np.full((n, 2), offset + 1.0))
    except Exception as error: errors.append(error)

  threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
  for thread in threads: thread.start()
  for thread in threads: thread.join()
  assert not errors and len(realize._schedules) <= 1


def mapped(path: Path | str) -> bool:
  """Whether a file under `path` is mapped in this process (a library loaded from a file since removed included)."""
  return any(str(path) in line for line in Path("/proc/self/maps").read_text().splitlines())


@pytest.mark.skipif(not Path("/proc/self/maps").exists() or shutil.which("cc") is None, reason="needs Linux and a C compiler")
@pytest.mark.cpu_only("a CPU shared library's mapping")
def test_program_loaded_from_the_disk_cache_is_unmapped_when_dropped(tmp_path, monkeypatch):
  monkeypatch.setenv("PYTC_CACHE_DIR", str(tmp_path / "cache"))
  monkeypatch.setenv("PYTC_CACHE", "1")
  compute = lambda: (Tensor.ones(5, 9, 2) * 7).exp2().numpy()  # a graph no other test builds
  compute()
  realize._schedules.clear()
  np.testing.assert_allclose(compute(), np.full((5, 9, 2), 128.0))
  (executable,) = realize._schedules.values()[-1].schedule.executables.values()
  library = executable.program.library._name  # the private copy the program's library was loaded through
  assert executable.from_disk and mapped(library) and not mapped(tmp_path / "cache")  # loaded from the bytes read, not the cache file
  del executable
  realize._schedules.clear()
  gc.collect()
  assert not mapped(library)


def test_free_pool_is_bounded_by_bytes():
  allocator = CPUDevice().allocator
  allocator.pool_bytes = 8192
  first, second, third, big = allocator.alloc(4096), allocator.alloc(4096), allocator.alloc(4096), allocator.alloc(16384)
  for buffer in (first, second, third, big): allocator.free(buffer)
  assert allocator.pooled_bytes() == 8192  # `first`, freed longest ago, went back to the system; `big` was never pooled
  reused = {id(allocator.alloc(4096)) for _ in range(3)}
  assert id(second) in reused and id(third) in reused and id(first) not in reused
  assert allocator.alloc(16384) is not big and allocator.pooled_bytes() == 0


@pytest.mark.cpu_only("from_blob: tensors in host memory")
def test_from_blob_refuses_unmapped_addresses():
  with pytest.raises(ValueError, match="non-null"): Tensor.from_blob(0, (4,))
  with pytest.raises(ValueError, match="0x10 "): Tensor.from_blob(0x10, (4,))
  source = np.arange(6, dtype=np.float32)
  np.testing.assert_equal(Tensor.from_blob(source.ctypes.data, (2, 3), owner=source).numpy(), source.reshape(2, 3))


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads Linux's /proc/self/maps")
@pytest.mark.cpu_only("from_blob: tensors in host memory")
def test_from_blob_refuses_a_range_past_the_mappings():
  ends = [int(line.split("-")[1].split()[0], 16) for line in Path("/proc/self/maps").read_text().splitlines()]
  top = max(end for end in ends if end <= 1 << 47)
  with pytest.raises(ValueError, match=f"{top:#x}"): Tensor.from_blob(top, (4,))
  libc = ctypes.CDLL(None)
  libc.mmap.restype, libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
  libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
  page = mmap.PAGESIZE
  start = libc.mmap(None, 2 * page, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
  try:
    libc.munmap(start + page, page)  # the second page is a hole now
    with pytest.raises(ValueError, match=f"{page + 4} bytes at address {start:#x}"): Tensor.from_blob(start, (page // 4 + 1,))
    np.testing.assert_equal(Tensor.from_blob(start, (page // 4,)).numpy(), np.zeros(page // 4, np.float32))
  finally: libc.munmap(start, page)


RSS_PROGRAM = """
import os
import numpy as np
from pytc import Tensor
def rss_mb(): return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
for i in range(1, {shapes} + 1):
  assert (Tensor.ones(i, 3) * 2 + 1).numpy()[-1, -1] == 3
  if i == {first}: first = rss_mb()
np.testing.assert_equal((Tensor.ones(1, 3) * 2 + 1).numpy(), np.full((1, 3), 3.0))
print(rss_mb() - first)
"""


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads Linux's /proc/self/statm")
@pytest.mark.cpu_only("the process's memory over many CPU graphs")
def test_memory_stays_bounded_over_many_distinct_graphs(tmp_path):
  """2000 graphs of distinct shapes with 16 schedules and templates cached: RSS grows by a few tens of MB at most from the 500th
  to the last (MLIR's context keeps the types it interned; kept unbounded, the schedules alone would add ~1.3 GB: 0.85 MB each)."""
  env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTC_CACHE": "0", "PYTC_SCHEDULE_CACHE": "16", "PYTC_TEMPLATE_CACHE": "16"}
  result = subprocess.run([sys.executable, "-c", RSS_PROGRAM.format(shapes=2000, first=500)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
  assert result.returncode == 0, result.stderr
  assert float(result.stdout.split()[-1]) < 80


def test_the_structure_table_starts_afresh_when_full(monkeypatch):
  """Every distinct constant makes new structure keys; past the limit the table is cleared, and graphs seen before still compute."""
  monkeypatch.setenv("PYTC_STRUCTURE_CACHE", "40")
  x = Tensor(np.array([1.0, -2.0, 3.5], np.float32))
  for scale in range(1, 60):
    np.testing.assert_allclose((x * scale + 1).numpy(), x.numpy() * scale + 1)
    assert len(graph._structures) <= 40
  np.testing.assert_allclose((x * 1 + 1).numpy(), x.numpy() + 1)
