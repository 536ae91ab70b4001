"""Fixtures shared by the runtime tests."""
import pytest

from pytc.helpers import getenv


@pytest.fixture
def short_waits(monkeypatch):
  """PYTC_WAIT_TIMEOUT of 0.05 s for the queue's WAIT packets; host waits in the tests pass their own, longer timeout."""
  monkeypatch.setenv("PYTC_WAIT_TIMEOUT", "0.05")
  getenv.cache_clear()
  yield
  monkeypatch.undo()
  getenv.cache_clear()
