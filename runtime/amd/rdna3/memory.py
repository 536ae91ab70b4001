"""Memory as an emulated RDNA3 wave sees it: global memory is host memory at the addresses mapped for the GPU (the
MOCK's ranges), read and written lane-wise with NumPy gathers and scatters over views of those ranges; LDS is one
zeroed byte array per workgroup. An access that leaves mapped memory (or a workgroup's LDS) is a `MemoryFault` naming
the address, the instruction and its program counter; nothing is read or written by a faulting instruction."""

from __future__ import annotations

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
    self.spans, self.views, self.bounds = spans, {}, ((), np.zeros(0, np.uint64), np.zeros(0, np.uint64))

  def ranges(self) -> tuple[tuple[tuple[int, int], ...], np.ndarray, np.ndarray]:
    """The mapped ranges with their starts and ends as arrays, made again only when the ranges changed (a new tuple)."""
    spans = self.spans()
    if spans is not self.bounds[0]:
      self.bounds = (
        spans,
        np.fromiter((s for s, _ in spans), np.uint64, len(spans)),
        np.fromiter((e for _, e in spans), np.uint64, len(spans)),
      )
    return self.bounds

  def view(self, span: tuple[int, int]) -> np.ndarray:
    if (view := self.views.get(span)) is None:
      view = self.views[span] = np.ctypeslib.as_array((ctypes.c_uint8 * (span[1] - span[0])).from_address(span[0]))
    return view

  def locate(
    self, addresses: np.ndarray, nbytes: int, where: str
  ) -> list[tuple[np.ndarray, np.ndarray | slice, np.ndarray]]:
    """(view, lane positions, byte offsets into the view) per mapped range the lanes' accesses fall in; MemoryFault for
    the first lane whose `nbytes` at its address are not all mapped."""
    spans, starts, ends = self.ranges()
    if not spans:
      raise MemoryFault(
        int(addresses[0]), f"{where}: {nbytes} bytes at {int(addresses[0]):#x} are not mapped to the GPU"
      )
    index = np.maximum(np.searchsorted(starts, addresses, side="right").astype(np.int64) - 1, 0)
    inside = (addresses >= starts[index]) & (addresses + np.uint64(nbytes) <= ends[index])
    if not inside.all():
      bad = int(addresses[np.argmin(inside)])
      raise MemoryFault(bad, f"{where}: {nbytes} bytes at {bad:#x} are not mapped to the GPU")
    first, last = int(index.min()), int(index.max())
    regions = [first] if first == last else [int(r) for r in np.unique(index)]
    out = []
    for region in regions:
      lanes = slice(None) if first == last else np.nonzero(index == region)[0]
      out.append((self.view(spans[region]), lanes, (addresses[lanes] - np.uint64(spans[region][0])).astype(np.int64)))
    return out

  def load(self, addresses: np.ndarray, nbytes: int, where: str) -> np.ndarray:
    """`nbytes` at each address: a (lanes, nbytes) uint8 array."""
    out = np.empty((len(addresses), nbytes), np.uint8)
    for view, lanes, offsets in self.locate(addresses, nbytes, where):
      out[lanes] = gather(view, offsets, nbytes)
    return out

  def store(self, addresses: np.ndarray, data: np.ndarray, where: str) -> None:
    """Each row of `data` (lanes, nbytes) to its lane's address; lanes store in order, so the last of two to one
    address wins, as one wave's lanes do."""
    for view, lanes, offsets in self.locate(addresses, data.shape[1], where):
      scatter(view, offsets, data[lanes])


def aligned(view: np.ndarray, offsets: np.ndarray, nbytes: int) -> bool:
  return nbytes % 4 == 0 and view.size % 4 == 0 and view.ctypes.data % 4 == 0 and not (offsets & 3).any()


def gather(view: np.ndarray, offsets: np.ndarray, nbytes: int) -> np.ndarray:
  """(lanes, nbytes) bytes of a byte view at each offset: whole dwords where the accesses are dword-aligned."""
  if aligned(view, offsets, nbytes):
    words = view.view(np.uint32)[(offsets >> 2)[:, None] + np.arange(nbytes // 4)]
    return words.view(np.uint8).reshape(len(offsets), nbytes)
  return view[offsets[:, None] + np.arange(nbytes)]


def scatter(view: np.ndarray, offsets: np.ndarray, data: np.ndarray) -> None:
  nbytes = data.shape[1]
  if aligned(view, offsets, nbytes):
    view.view(np.uint32)[(offsets >> 2)[:, None] + np.arange(nbytes // 4)] = np.ascontiguousarray(data).view(np.uint32)
  else:
    view[offsets[:, None] + np.arange(nbytes)] = data


def mapped_spans(spans: list[tuple[int, int]]) -> Callable[[], tuple[tuple[int, int], ...]]:
  """A fixed set of ranges (for memory outside the MOCK: tests, tools)."""
  ordered = tuple(sorted(spans))
  return lambda: ordered
