"""Fixtures shared by the tests, and the device they run on: PYTC_DEVICE=EMU (or AMD:MOCK) runs them on that device, except
the tests marked `cpu_only(why)`, which check what only the CPU device has. Every pytc pass checks the forms of its input in the
tests (PYTC_CHECK_FORMS=1, inherited by the processes they start): what each pass leaves is checked by the next."""
import os

import pytest

from pytc import Device

os.environ.setdefault("PYTC_CHECK_FORMS", "1")


def pytest_configure(config):
  config.addinivalue_line("markers", "cpu_only(why): the test checks what only the CPU device has (why); skipped on another PYTC_DEVICE")


def pytest_collection_modifyitems(config, items):
  if Device.DEFAULT.startswith("CPU"): return
  for item in items:
    if (marker := item.get_closest_marker("cpu_only")) is not None:
      item.add_marker(pytest.mark.skip(reason=f"checks {marker.args[0]}; PYTC_DEVICE={Device.DEFAULT}"))


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
