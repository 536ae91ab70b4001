"""Exported graphs: one file holding a graph's compiled kernels, its launch list and its buffer plan, run by the runtime
alone (numpy, ctypes and the device's driver; no compiler, no MLIR), on the process's one instance of its device (the
one Tensors use too). `pytc.export` writes them.

File layout (little-endian):

  bytes 0-7    magic b"PYTCGRPH"
  bytes 8-11   u32 format version (FORMAT)
  bytes 12-15  u32 header length H
  bytes 16-    the header, H bytes of UTF-8 JSON
  then         blobs (the code, constants' data), each at an offset the header gives, 64-byte aligned

The header:

  {"format": 1, "producer": "pytc 0.1.0",
   "device": "CPU",                              the device that runs it (CPU, EMU:<chip>, NV, AMD)
   "target": "...",                              the target's cache key: a device refuses any other
   "code": {"offset": o, "nbytes": n},           the binary (shared object, PTX or cubin, AMD code object)
   "kernels": [{"name": "E_4", "buffers": 3, "sizes": {"grid": 1, "local": 32}}, ...],
   "buffers": [{"kind": "input" | "constant" | "output" | "temp", "dtype": "float32", "shape": [4],
                "data": {"offset": o, "nbytes": n}  (constants only)}, ...],
   "inputs": [buffer index, ...], "outputs": [buffer index, ...],   the call's arguments and results, in order
   "launches": [{"kernel": "E_4", "buffers": [buffer index, ...]}, ...]}

Every field is checked on load (ExportFormatError, a ValueError, names what is wrong); a file of a newer format, or
for another target than the device's, is refused. The code is machine code the device runs: load only files you trust,
as you would a shared library. Arrays go in and out as `Tensor.numpy()` gives them (bfloat16 as float32, fp8 as its
bytes).
"""

from __future__ import annotations

import json
import math
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pytc.device import Device
from pytc.dtype import DType, from_numpy, to_dtype, to_numpy
from pytc.runtime.device import Binary, KernelInfo
from pytc.runtime.hcq import SUBMIT_LOCK, HWQueue

MAGIC, FORMAT = b"PYTCGRPH", 1
PREAMBLE = struct.Struct("<8sII")
ALIGN = 64
KINDS = ("input", "constant", "output", "temp")


class ExportFormatError(ValueError):
  """An exported file that is malformed, of a newer format, or for another target."""


@dataclass(frozen=True)
class BufferSpec:
  kind: str
  dtype: DType
  shape: tuple[int, ...]
  data: bytes | None = None  # a constant's contents

  @property
  def nbytes(self) -> int:
    return math.prod(self.shape) * self.dtype.itemsize


@dataclass(frozen=True)
class Graph:
  """What an exported file describes."""

  device: str
  target: str
  code: bytes
  kernels: tuple[KernelInfo, ...]
  buffers: tuple[BufferSpec, ...]
  inputs: tuple[int, ...]
  outputs: tuple[int, ...]
  launches: tuple[tuple[str, tuple[int, ...]], ...]


def _aligned(n: int) -> int:
  return -(-n // ALIGN) * ALIGN


def encode(graph: Graph, producer: str) -> bytes:
  """The file's bytes for `graph`."""
  blobs: list[bytes] = [graph.code] + [b.data for b in graph.buffers if b.data is not None]

  def header(offsets: list[int]) -> bytes:
    places = iter({"offset": o, "nbytes": len(b)} for o, b in zip(offsets, blobs))
    code = next(places)
    buffers = [
      {"kind": b.kind, "dtype": b.dtype.name, "shape": list(b.shape)}
      | ({"data": next(places)} if b.data is not None else {})
      for b in graph.buffers
    ]
    return json.dumps(
      {
        "format": FORMAT,
        "producer": producer,
        "device": graph.device,
        "target": graph.target,
        "code": code,
        "kernels": [{"name": k.name, "buffers": k.buffers, "sizes": k.sizes} for k in graph.kernels],
        "buffers": buffers,
        "inputs": list(graph.inputs),
        "outputs": list(graph.outputs),
        "launches": [{"kernel": name, "buffers": list(args)} for name, args in graph.launches],
      }
    ).encode()

  offsets: list[int] = []
  while True:  # place the blobs after the header, until the header naming their offsets keeps its length
    text = header(offsets or [0] * len(blobs))
    placed, position = [], _aligned(PREAMBLE.size + len(text))
    for blob in blobs:
      placed, position = placed + [position], _aligned(position + len(blob))
    if placed == offsets:
      break
    offsets = placed
  out = bytearray(position)
  out[: PREAMBLE.size + len(text)] = PREAMBLE.pack(MAGIC, FORMAT, len(text)) + text
  for offset, blob in zip(offsets, blobs):
    out[offset : offset + len(blob)] = blob
  return bytes(out)


def _field(table: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
  if not isinstance(table, dict) or key not in table:
    raise ExportFormatError(f"exported graph: {where} has no '{key}'")
  value = table[key]
  if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
    raise ExportFormatError(
      f"exported graph: {where}.{key} is {type(value).__name__}, not {getattr(kind, '__name__', kind)}"
    )
  return value


def _count(value: Any, where: str) -> int:
  if not isinstance(value, int) or isinstance(value, bool) or value < 0:
    raise ExportFormatError(f"exported graph: {where} is not a count: {value!r}")
  return value


def _blob(data: bytes, place: Any, where: str) -> bytes:
  """The bytes `place` names, which lie after the header and within the file."""
  offset, nbytes = (
    _count(_field(place, "offset", int, where), f"{where}.offset"),
    _count(_field(place, "nbytes", int, where), f"{where}.nbytes"),
  )
  if offset < PREAMBLE.size + PREAMBLE.unpack_from(data)[2] or offset + nbytes > len(data):
    raise ExportFormatError(
      f"exported graph: {where} spans bytes {offset}..{offset + nbytes}, outside the blobs after the header "
      f"(the file has {len(data)})"
    )
  return data[offset : offset + nbytes]


def _buffer(data: bytes, spec: Any, where: str) -> BufferSpec:
  kind = _field(spec, "kind", str, where)
  if kind not in KINDS:
    raise ExportFormatError(f"exported graph: {where}.kind is {kind!r}, not one of {', '.join(KINDS)}")
  try:
    dtype = to_dtype(_field(spec, "dtype", str, where))
  except (AttributeError, TypeError, ValueError):
    raise ExportFormatError(f"exported graph: {where}.dtype {spec['dtype']!r} is not a dtype") from None
  shape = tuple(_count(n, f"{where}.shape") for n in _field(spec, "shape", list, where))
  buffer = BufferSpec(kind, dtype, shape, _blob(data, spec["data"], f"{where}.data") if kind == "constant" else None)
  if buffer.data is not None and len(buffer.data) != buffer.nbytes:
    raise ExportFormatError(
      f"exported graph: {where} holds {len(buffer.data)} bytes for {shape} {dtype.name} ({buffer.nbytes} bytes)"
    )
  return buffer


def decode(data: bytes) -> Graph:
  """The graph an exported file describes; ExportFormatError naming what is malformed."""
  if len(data) < PREAMBLE.size or data[:8] != MAGIC:
    raise ExportFormatError("not an exported pytc graph (no PYTCGRPH magic)")
  _, version, length = PREAMBLE.unpack_from(data)
  if version > FORMAT:
    raise ExportFormatError(f"exported graph of format {version}, newer than this runtime's {FORMAT}: update pytc")
  if version < 1 or PREAMBLE.size + length > len(data):
    raise ExportFormatError(f"exported graph: bad format {version} or header length {length}")
  try:
    header = json.loads(data[PREAMBLE.size : PREAMBLE.size + length].decode())
  except (UnicodeDecodeError, json.JSONDecodeError) as e:
    raise ExportFormatError(f"exported graph: the header is not JSON ({e})") from None
  kernels = tuple(
    KernelInfo(
      _field(k, "name", str, f"kernel {i}"),
      _count(_field(k, "buffers", int, f"kernel {i}"), f"kernel {i}.buffers"),
      {s: _count(v, f"kernel {i}.sizes.{s}") for s, v in _field(k, "sizes", dict, f"kernel {i}").items()},
    )
    for i, k in enumerate(_field(header, "kernels", list, "the header"))
  )
  buffers = tuple(_buffer(data, b, f"buffer {i}") for i, b in enumerate(_field(header, "buffers", list, "the header")))

  def index(value: Any, where: str, kinds: tuple[str, ...] = KINDS) -> int:
    if _count(value, where) >= len(buffers) or buffers[value].kind not in kinds:
      raise ExportFormatError(
        f"exported graph: {where} names buffer {value}, not one of the {len(buffers)} buffers of kind {'/'.join(kinds)}"
      )
    return value

  inputs = tuple(index(b, f"input {i}", ("input",)) for i, b in enumerate(_field(header, "inputs", list, "the header")))
  outputs = tuple(
    index(b, f"output {i}", ("output",)) for i, b in enumerate(_field(header, "outputs", list, "the header"))
  )
  by_name = {k.name: k for k in kernels}
  launches = []
  for i, launch in enumerate(_field(header, "launches", list, "the header")):
    name, args = _field(launch, "kernel", str, f"launch {i}"), _field(launch, "buffers", list, f"launch {i}")
    if (kernel := by_name.get(name)) is None:
      raise ExportFormatError(f"exported graph: launch {i} runs kernel {name!r}, not in the code")
    if len(args) != kernel.buffers:
      raise ExportFormatError(f"exported graph: launch {i} gives {name} {len(args)} buffers, it takes {kernel.buffers}")
    launches.append((name, tuple(index(b, f"launch {i} argument {j}") for j, b in enumerate(args))))
  return Graph(
    _field(header, "device", str, "the header"),
    _field(header, "target", str, "the header"),
    _blob(data, header.get("code"), "code"),
    kernels,
    buffers,
    inputs,
    outputs,
    tuple(launches),
  )


class ExportedGraph:
  """An exported graph loaded on its device: call it with one array per input; it returns one array per output."""

  def __init__(self, graph: Graph, device: str | None = None):
    if device is not None and device.split(":")[0].upper() != graph.device.split(":")[0]:
      raise ExportFormatError(f"exported graph runs on {graph.device}, not {device}")
    self.graph, self.device = graph, Device[device or graph.device]  # the process's one instance of that device
    if graph.target != self.device.target.cache_key():
      raise ExportFormatError(
        f"exported graph was compiled for {graph.target.split(' ')[0]!r} ({graph.target}); {self.device.name} runs "
        f"{self.device.target.cache_key()}"
      )
    self.program = self.device.program(Binary(graph.target, graph.code, graph.kernels))
    allocator = self.device.allocator
    self.memory = [allocator.alloc(b.nbytes) for b in graph.buffers]
    for raw, spec in zip(self.memory, graph.buffers):
      if spec.data:
        allocator.copyin(raw, memoryview(spec.data))
    queue, self.kernargs = HWQueue(), []  # the launches' arguments live as long as the command buffer pointing at them
    for name, buffers in graph.launches:
      kernel = self.program.kernels[name]
      self.kernargs.append(args := kernel.args([self.memory[b] for b in buffers]))
      queue.exec(kernel, args)
    self.command_buffer, self.lock = queue.bytes(), threading.Lock()

  @property
  def inputs(self) -> list[tuple[tuple[int, ...], DType]]:
    """Each input's shape and dtype, in call order."""
    return [(self.graph.buffers[i].shape, self.graph.buffers[i].dtype) for i in self.graph.inputs]

  @property
  def outputs(self) -> list[tuple[tuple[int, ...], DType]]:
    """Each output's shape and dtype, in return order."""
    return [(self.graph.buffers[i].shape, self.graph.buffers[i].dtype) for i in self.graph.outputs]

  def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
    with self.lock:
      self.write_inputs(*arrays)
      self.launch()
      return [self._read(index) for index in self.graph.outputs]

  def write_inputs(self, *arrays: np.ndarray) -> None:
    """Copy one array per input into the graph's input buffers (what a call does before it launches)."""
    if len(arrays) != len(self.graph.inputs):
      raise TypeError(f"exported graph takes {len(self.graph.inputs)} inputs, got {len(arrays)}")
    for i, (array, index) in enumerate(zip(arrays, self.graph.inputs)):
      spec, array = self.graph.buffers[index], np.asarray(array)
      if array.shape != spec.shape:
        raise ValueError(f"exported graph input {i} has shape {spec.shape}, got {array.shape}")
      self.device.allocator.copyin(
        self.memory[index], memoryview(from_numpy(array, spec.dtype).reshape(-1).view(np.uint8))
      )

  def launch(self, timed: bool = False) -> float | None:
    """Run the launches on the inputs already written and wait for them; with `timed`, the seconds between the device's
    timestamps before the first launch and after the last."""
    began, ended = (self.device.new_signal(), self.device.new_signal()) if timed else (None, None)
    with SUBMIT_LOCK:
      start, done = HWQueue(), HWQueue()
      if timed:
        start.timestamp(began), done.timestamp(ended)
      done.signal(self.device.timeline, self.device.next_timeline_value())
      self.device.submit(start.bytes() + self.command_buffer + done.bytes())
    self.device.synchronize()
    return (ended.timestamp_ns - began.timestamp_ns) * 1e-9 if timed else None

  def _read(self, index: int) -> np.ndarray:
    spec = self.graph.buffers[index]
    host = np.empty(spec.nbytes, np.uint8)
    self.device.allocator.copyout(memoryview(host), self.memory[index])
    return to_numpy(host, spec.dtype, spec.shape)

  def __del__(self) -> None:
    for raw in getattr(self, "memory", []):
      self.device.allocator.free(raw)


def load(source: str | Path | bytes, device: str | None = None) -> ExportedGraph:
  """Load an exported graph (a path or the file's bytes) on its device (or `device`, another instance of that
  backend)."""
  return ExportedGraph(decode(source if isinstance(source, bytes) else Path(source).read_bytes()), device)
