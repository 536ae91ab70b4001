"""Threads that run the slices of a split kernel launch, one per extra core.

A thread that has gone to sleep costs a wake-up on the next launch, and on a virtual machine waking an idle
vCPU can take longer than a small kernel runs. So a worker that finishes a slice keeps polling for the next
one for `spin_s` (yielding the GIL between polls; kernels run without it) before it blocks, and the thread
that splits a launch runs the first slice itself and polls for the others the same way.
"""
from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable


class Workers:
  def __init__(self, count: int, name: str, spin_s: float = 0.002):
    self.spin_s, self._tasks = spin_s, collections.deque()
    self._ready = threading.Condition()
    for i in range(count): threading.Thread(target=self._serve, name=f"{name}:{i + 1}", daemon=True).start()

  def run(self, calls: list[Callable[[], None]]) -> None:
    """Run every call, the first on this thread and the rest on the workers; returns when all are done.
    The first exception raised by a call is raised here."""
    pending, errors = [len(calls) - 1], []

    def finish(call: Callable[[], None]) -> None:
      try: call()
      except Exception as error: errors.append(error)
      finally:
        with self._ready:
          pending[0] -= 1
          self._ready.notify_all()

    with self._ready:
      self._tasks.extend((finish, call) for call in calls[1:])
      self._ready.notify_all()
    try: calls[0]()
    finally: self._await(lambda: pending[0] == 0)
    if errors: raise errors[0]

  def _await(self, done: Callable[[], bool]) -> None:
    deadline = time.perf_counter() + self.spin_s
    while not done() and time.perf_counter() < deadline: time.sleep(0)
    with self._ready:
      while not done(): self._ready.wait()

  def _take(self) -> tuple[Callable, Callable]:
    deadline = time.perf_counter() + self.spin_s
    while time.perf_counter() < deadline:
      try: return self._tasks.popleft()
      except IndexError: time.sleep(0)
    with self._ready:
      while not self._tasks: self._ready.wait()
      return self._tasks.popleft()

  def _serve(self) -> None:
    while True:
      finish, call = self._take()
      finish(call)
