"""Fixtures shared by the tests, and the device they run on: PYTC_DEVICE=EMU (or AMD:MOCK) runs them on that device, except
the tests in CPU_ONLY, which check what only the CPU device has. Every pytc pass checks the forms of its input in the
tests (PYTC_CHECK_FORMS=1, inherited by the processes they start): what each pass leaves is checked by the next."""
import os

import pytest

from pytc import Device

os.environ.setdefault("PYTC_CHECK_FORMS", "1")

CPU_ONLY = {  # test file, or file::test -> what it checks that only the CPU device has
  "test_kernel_cache.py": "the kernel cache's files, the CPU's shared libraries",
  "test_robustness.py::test_a_truncated_library_indexed_with_its_own_digest_is_never_loaded": "a CPU shared library in the cache",
  "test_robustness.py::test_a_truncated_library_indexed_with_its_own_digest_is_rebuilt": "a CPU shared library in the cache",
  "test_robustness.py::test_a_library_that_disagrees_with_its_digest_is_dropped": "a CPU shared library in the cache",
  "test_resources.py::test_timed_out_wait_is_reported_then_the_next_realize_works": "the CPU queue's host packets",
  "test_resources.py::test_unreported_stop_fails_the_next_realize_once": "the CPU queue's host packets",
  "test_resources.py::test_explicit_reset_recovers_the_device": "the CPU queue's host packets",
  "test_resources.py::test_malformed_command_buffer_then_realize": "the CPU queue's host packets",
  "test_resources.py::test_program_loaded_from_the_disk_cache_is_unmapped_when_dropped": "a CPU shared library's mapping",
  "test_resources.py::test_from_blob_refuses_unmapped_addresses": "from_blob: tensors in host memory",
  "test_resources.py::test_from_blob_refuses_a_range_past_the_mappings": "from_blob: tensors in host memory",
  "test_resources.py::test_memory_stays_bounded_over_many_distinct_graphs": "the process's memory over many CPU graphs",
  "test_tensor.py::test_device_default_is_cpu": "the default device",
  "test_tensor.py::test_debug2_shows_the_kernel_launched_through_the_cpu_queue": "the CPU queue's DEBUG output",
  "test_tensor.py::test_pytc_dump_writes_the_ir_after_every_pass": "the CPU pipeline's stages",
  "test_tensor.py::test_from_blob_uses_host_memory_in_place": "from_blob: tensors in host memory",
  "test_tensor.py::test_from_blob_at_any_address_reads_and_refuses_unaligned_writes": "from_blob: tensors in host memory",
}


def pytest_collection_modifyitems(config, items):
  if Device.DEFAULT.startswith("CPU"): return
  for item in items:
    name = item.nodeid.split("/")[-1].split("[")[0]
    if (why := CPU_ONLY.get(name) or CPU_ONLY.get(name.split("::")[0])) is not None:
      item.add_marker(pytest.mark.skip(reason=f"checks {why}; PYTC_DEVICE={Device.DEFAULT}"))


def flags(monkeypatch, **values: str):
  """Set pytc's environment flags (read live, pytc.flags) for the length of a test."""
  for name, value in values.items(): monkeypatch.setenv(name, value)
  yield
  monkeypatch.undo()


@pytest.fixture
def training():
  """Training mode (Tensor.training, TRAINING=1), which optimizers need to step."""
  from pytc.helpers import Context
  with Context(TRAINING=1): yield


@pytest.fixture
def short_waits(monkeypatch):
  """PYTC_WAIT_TIMEOUT of 0.05 s for the queue's WAIT packets; host waits in the tests pass their own, longer timeout."""
  yield from flags(monkeypatch, PYTC_WAIT_TIMEOUT="0.05")


@pytest.fixture
def split_everything(monkeypatch):
  """PYTC_SPLIT_BYTES=0: every launch's arguments spread it over the cores."""
  yield from flags(monkeypatch, PYTC_SPLIT_BYTES="0")
