"""Fixtures shared by the tests, and the device they run on: PYTC_DEVICE=EMU runs them on the GPU emulator, except the
tests marked `cpu_only` (what they check is the CPU device's own: its name, its passes, its queue's output)."""
import pytest

from pytc import Device
from pytc.helpers import getenv


def pytest_collection_modifyitems(config, items):
  if Device.DEFAULT.startswith("CPU"): return
  skip = pytest.mark.skip(reason=f"checks the CPU device itself; PYTC_DEVICE={Device.DEFAULT}")
  for item in items:
    if "cpu_only" in item.keywords: item.add_marker(skip)


def flags(monkeypatch, **values: str):
  """Set pytc's environment flags (read through the cached getenv) for the length of a test."""
  for name, value in values.items(): monkeypatch.setenv(name, value)
  getenv.cache_clear()
  yield
  monkeypatch.undo()
  getenv.cache_clear()


@pytest.fixture
def short_waits(monkeypatch):
  """PYTC_WAIT_TIMEOUT of 0.05 s for the queue's WAIT packets; host waits in the tests pass their own, longer timeout."""
  yield from flags(monkeypatch, PYTC_WAIT_TIMEOUT="0.05")


@pytest.fixture
def split_everything(monkeypatch):
  """PYTC_SPLIT_BYTES=0: every launch's arguments spread it over the cores."""
  yield from flags(monkeypatch, PYTC_SPLIT_BYTES="0")
