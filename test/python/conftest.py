"""Fixtures shared by the runtime tests."""
import pytest

from pytc.helpers import getenv


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
