"""Memory as an emulated RDNA3 wave sees it: global memory is host memory at the addresses mapped for the GPU (the
MOCK's ranges), read and written lane-wise with NumPy gathers and scatters over views of those ranges; LDS is one
zeroed byte array per workgroup. An access that leaves mapped memory (or a workgroup's LDS) is a `MemoryFault` naming
the address, the instruction and its program counter; nothing is read or written by a faulting instruction."""
from __future__ import annotations

import bisect
import ctypes
from collections.abc import Callable

import numpy as np


class MemoryFault(Exception):
  """An instruction reached memory outside what is mapped for the GPU."""
  def __init__(self, address: int, message: str):
    super().__init__(message)
    self.address = address


class GlobalMemory:
  """The host memory of the ranges `spans()` gives ((start, end) pairs, sorted and disjoint), lane by lane."""
  def __init__(self, spans: Callable[[], tuple[tuple[int, int], ...]]):
    self.spans, self.views = spans, {}

  def view(self, span: tuple[int, int]) -> np.ndarray:
    if (view := self.views.get(span)) is None:
      view = self.views[span] = np.ctypeslib.as_array((ctypes.c_uint8 * (span[1] - span[0])).from_address(span[0]))
    return view

  def locate(self, addresses: np.ndarray, nbytes: int, where: str) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(view, lane positions, byte offsets into the view) per mapped range the lanes' accesses fall in; MemoryFault for
    the first lane whose `nbytes` at its address are not all mapped."""
    spans = self.spans()
    starts = np.array([s for s, _ in spans], np.uint64)
    ends = np.array([e for _, e in spans], np.uint64)
    index = np.searchsorted(starts, addresses, side="right").astype(np.int64) - 1
    inside = index >= 0
    safe = np.maximum(index, 0)
    inside &= (addresses >= starts[safe]) & (addresses + np.uint64(nbytes) <= ends[safe]) if len(spans) else np.zeros_like(inside)
    if not inside.all():
      bad = int(addresses[np.argmin(inside)])
      raise MemoryFault(bad, f"{where}: {nbytes} bytes at {bad:#x} are not mapped to the GPU")
    out = []
    for region in np.unique(index):
      lanes = np.nonzero(index == region)[0]
      span = spans[int(region)]
      out.append((self.view(span), lanes, (addresses[lanes] - np.uint64(span[0])).astype(np.int64)))
    return out

  def load(self, addresses: np.ndarray, nbytes: int, where: str) -> np.ndarray:
    """`nbytes` at each address: a (lanes, nbytes) uint8 array."""
    out = np.empty((len(addresses), nbytes), np.uint8)
    for view, lanes, offsets in self.locate(addresses, nbytes, where):
      out[lanes] = view[offsets[:, None] + np.arange(nbytes)]
    return out

  def store(self, addresses: np.ndarray, data: np.ndarray, where: str) -> None:
    """Each row of `data` (lanes, nbytes) to its lane's address; lanes store in order, so the last of two to one
    address wins, as one wave's lanes do."""
    for view, lanes, offsets in self.locate(addresses, data.shape[1], where):
      view[offsets[:, None] + np.arange(data.shape[1])] = data[lanes]


def mapped_spans(spans: list[tuple[int, int]]) -> Callable[[], tuple[tuple[int, int], ...]]:
  """A fixed set of ranges (for memory outside the MOCK: tests, tools)."""
  ordered = tuple(sorted(spans))
  return lambda: ordered


def covering(spans: tuple[tuple[int, int], ...], address: int, nbytes: int) -> bool:
  i = bisect.bisect_right(spans, address, key=lambda span: span[0]) - 1
  return i >= 0 and spans[i][0] <= address and address + nbytes <= spans[i][1]
