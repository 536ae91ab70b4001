"""Hardware command queues: signals, and the host packet format of command buffers.

A queue builder appends packets to a command buffer; `submit` hands the bytes to a device, whose queue executor
decodes them (the CPU's; a GPU backend encodes its hardware's packets instead). Every packet starts with a u32 opcode
and a u32 size in bytes (header included); all fields are little-endian.

  EXEC       u64 kernel entry, u64 kernarg address, u32 global[3], u32 local[3]   (the launch arguments' sizes)
  COPY       u64 destination address, u64 source address, u64 bytes
  SIGNAL     u64 signal address, u64 value       the signal's value becomes `value`
  WAIT       u64 signal address, u64 value       stall until the signal's value >= `value`
  TIMESTAMP  u64 signal address                  the signal's timestamp becomes the queue's clock
  BARRIER    (no payload)                        writes before are visible to reads after
"""

from __future__ import annotations

import ctypes
import enum
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytc import flags
from pytc.helpers import DEBUG

if TYPE_CHECKING:
  from pytc.runtime.device import HCQDevice

# Taken around taking a timeline value and submitting its signal: threads must submit timeline values in increasing
# order.
SUBMIT_LOCK = threading.Lock()


class Op(enum.IntEnum):  # the opcodes of runtime/hcq_codes.h
  EXEC = 1
  SIGNAL = 2
  WAIT = 3
  TIMESTAMP = 4
  BARRIER = 5
  COPY = 6


HEADER = struct.Struct("<II")
OPCODES = {op.value: op for op in Op}
PAYLOADS = {
  Op.EXEC: struct.Struct("<QQ3I3I"),
  Op.SIGNAL: struct.Struct("<QQ"),
  Op.WAIT: struct.Struct("<QQ"),
  Op.TIMESTAMP: struct.Struct("<Q"),
  Op.BARRIER: struct.Struct("<"),
  Op.COPY: struct.Struct("<QQQ"),
}
# header and payload
PACKETS = {op: struct.Struct(HEADER.format + payload.format[1:]) for op, payload in PAYLOADS.items()}


class SignalTimeout(TimeoutError):
  """A wait on a signal ran past its timeout."""

  @classmethod
  def waiting(cls, signal: Signal, value: int, timeout: float) -> SignalTimeout:
    """The error of a wait for `signal` to reach `value` that ran `timeout` seconds."""
    return cls(f"signal at {signal.address:#x} still {signal.value} after {timeout:g} s waiting for {value}")


class DeviceError(RuntimeError):
  """The device's queue stopped on an error; the message says which packet and why."""


class _SignalMemory(ctypes.Structure):
  _fields_ = [("value", ctypes.c_uint64), ("timestamp_ns", ctypes.c_uint64)]


class Changes(threading.Condition):
  """A condition a queue notifies whenever it writes a signal, stops or is reset; `waiting` counts the threads in
  wait_for, so a queue writing a signal no one waits for skips the notification (a waiter counts itself before it
  checks, under the lock)."""

  def __init__(self) -> None:
    super().__init__()
    self.waiting = 0

  def wait_for(self, predicate: Callable[[], Any], timeout: float | None = None) -> Any:
    self.waiting += 1
    try:
      return super().wait_for(predicate, timeout)
    finally:
      self.waiting -= 1

  def notify_waiters(self) -> None:
    if self.waiting:
      with self:
        self.notify_all()


class Signal:
  """A timeline semaphore in host-visible memory: a u64 value and a u64 timestamp (ns). `owner`: the device that made
  it, whose waits (HCQDevice.wait) also raise its errors; None for bare host memory. `wakes_host`: the host waits on it
  (a GPU queue raises its interrupt when it writes one, as it does for the timeline)."""

  wakes_host = False

  def __init__(self, value: int = 0, owner: HCQDevice | None = None, address: int | None = None):
    """`address`: the 16 bytes its owner keeps for it (a GPU's signal memory); by default host memory of its own."""
    self._memory = _SignalMemory() if address is None else _SignalMemory.from_address(address)
    self._memory.value, self._memory.timestamp_ns = value, 0
    self.address: int = ctypes.addressof(self._memory)
    self.owner = owner

  @property
  def value(self) -> int:
    return self._memory.value

  @value.setter
  def value(self, value: int) -> None:
    self._memory.value = value

  @property
  def timestamp_ns(self) -> int:
    return self._memory.timestamp_ns

  def wait(self, value: int, timeout: float | None = None) -> None:
    """Block until value >= `value`; SignalTimeout after `timeout` seconds (default PYTC_WAIT_TIMEOUT=30). A device's
    signal is waited on by its owner (HCQDevice.wait: DeviceError once the device stops); bare memory is polled."""
    if self._memory.value >= value:
      return
    if self.owner is not None:
      return self.owner.wait(self, value, timeout)
    timeout = flags.WAIT_TIMEOUT.value if timeout is None else timeout
    deadline, spins = time.perf_counter() + timeout, 0
    while self._memory.value < value:
      if time.perf_counter() > deadline:
        raise SignalTimeout.waiting(self, value, timeout)
      spins += 1
      time.sleep(0 if spins < 1000 else 0.0005)

  @staticmethod
  def memory_at(address: int) -> _SignalMemory:
    return _SignalMemory.from_address(address)


@dataclass(frozen=True)
class Packet:
  op: Op
  fields: tuple[int, ...]


class HWQueue:
  """Builds one command buffer; each method appends a packet and returns the queue for chaining."""

  def __init__(self) -> None:
    self._data = bytearray()

  def _add(self, op: Op, *fields: int) -> HWQueue:
    packet = PACKETS[op]
    self._data += packet.pack(op, packet.size, *fields)
    return self

  def exec(self, kernel: Any, args: Any) -> HWQueue:
    """Launch `kernel` (a loaded program's Kernel) with `args` (its LaunchArgs), at the sizes the arguments carry. The
    packet holds only the arguments' address: the caller keeps `args` (and the program) alive until the launch ran."""
    return self._add(Op.EXEC, kernel.entry, args.address, *args.global_size, *args.local_size)

  def copy(self, destination: int, source: int, nbytes: int) -> HWQueue:
    return self._add(Op.COPY, destination, source, nbytes)

  def signal(self, signal: Signal, value: int) -> HWQueue:
    return self._add(Op.SIGNAL, signal.address, value)

  def wait(self, signal: Signal, value: int) -> HWQueue:
    return self._add(Op.WAIT, signal.address, value)

  def timestamp(self, signal: Signal) -> HWQueue:
    return self._add(Op.TIMESTAMP, signal.address)

  def memory_barrier(self) -> HWQueue:
    return self._add(Op.BARRIER)

  def bytes(self) -> bytes:
    return bytes(self._data)

  def submit(self, device: Any) -> HWQueue:
    device.submit(self.bytes())
    return self


FIELDS = {
  Op.EXEC: ("entry", "kernargs", "grid_x", "grid_y", "grid_z", "local_x", "local_y", "local_z"),
  Op.SIGNAL: ("signal", "value"),
  Op.WAIT: ("signal", "value"),
  Op.TIMESTAMP: ("signal",),
  Op.BARRIER: (),
  Op.COPY: ("destination", "source", "bytes"),
}


def show(device: str, ring: str, packets: Iterable[Any]) -> None:
  """With DEBUG=5, print a command buffer handed to `device`'s `ring`: each packet's offset, name and fields (addresses
  in hex). A packet is anything with `name`, `offset` and a `fields` dict (the AMD decoders' packets; `named` makes them
  of host ones)."""
  if DEBUG < 5:
    return
  print(f"{device} {ring} command buffer:")
  for name, offset, fields in ((p.name, p.offset, p.fields) for p in packets):
    text = " ".join(f"{k}={_value(v)}" for k, v in fields.items())
    print(f"  {offset:5d} {name:<16} {text}")


def _value(v: object) -> str:
  if isinstance(v, tuple):
    return "(" + ", ".join(map(_value, v)) + ")"
  return f"{v:#x}" if isinstance(v, int) and not isinstance(v, bool) and v >= 4096 else str(v)


@dataclass(frozen=True)
class Named:
  name: str
  offset: int
  fields: dict


def named(packets: Iterable[Packet]) -> Iterator[Named]:
  """Host packets with their fields by name and their index as offset, for `show`."""
  for index, packet in enumerate(packets):
    yield Named(packet.op.name, index, dict(zip(FIELDS[packet.op], packet.fields)))


def decode(command_buffer: bytes) -> Iterator[Packet]:
  """The packets of a command buffer; a malformed buffer raises `ValueError` naming the offset."""
  offset = 0
  while offset < len(command_buffer):
    if offset + HEADER.size > len(command_buffer):
      raise ValueError(f"truncated packet header at byte {offset}")
    opcode, size = HEADER.unpack_from(command_buffer, offset)
    if (op := OPCODES.get(opcode)) is None:
      raise ValueError(f"unknown opcode {opcode} at byte {offset}")
    payload = PAYLOADS[op]
    if size != HEADER.size + payload.size or offset + size > len(command_buffer):
      raise ValueError(f"bad size {size} for {op.name} at byte {offset}")
    yield Packet(op, payload.unpack_from(command_buffer, offset + HEADER.size))
    offset += size
