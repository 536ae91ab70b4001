"""SDMA packets for AMD copy queues: SDMA 4.x (gfx9 chips: gfx90a, gfx942) and SDMA 6.0 (gfx11), encoders and a decoder.

Every packet opens with a header dword: OP in bits 7:0, SUB_OP in bits 15:8, flags of that op above. The copy queue's
ring and its read/write pointers count bytes, so `decode` names byte offsets. Packets (dword lengths):
- NOP (1): a zero dword; used as padding.
- COPY LINEAR (7): copy COUNT+1 bytes; COUNT is 22 bits on SDMA 4 (4 MiB per packet) and 30 bits on SDMA 6 (1 GiB).
  Dwords: header, COUNT, PARAMETER (cache policies, 0), source lo/hi, destination lo/hi.
- WRITE untiled (4+n): store the n dwords that follow at an address; dword 3 holds n-1.
- FENCE (4): once earlier packets finish, store a 32-bit value; SDMA 6 marks the store uncached (MTYPE 3 in the header).
- TRAP (2): raise an interrupt carrying a 28-bit context (the KFD event to wake).
- POLL_REGMEM (6): with MEM_POLL (bit 31) re-read a memory dword every INTERVAL until (value & mask) FUNC (bits 30:28)
  reference holds, up to RETRY_COUNT times; dword 5 = INTERVAL | RETRY_COUNT << 16.
- TIMESTAMP GET_GLOBAL (3): store the 64-bit global GPU clock (100 MHz, like PM4's) at an 8-byte aligned address.
Encoders return u32 dwords and raise ValueError for input out of range; `decode` raises only PacketError."""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence

from pytc.runtime.amd import pm4

NOP, COPY, WRITE, FENCE, TRAP, POLL_REGMEM, TIMESTAMP = 0, 1, 2, 5, 6, 8, 13
NAMES = {
  NOP: "NOP",
  COPY: "COPY_LINEAR",
  WRITE: "WRITE",
  FENCE: "FENCE",
  TRAP: "TRAP",
  POLL_REGMEM: "POLL_REGMEM",
  TIMESTAMP: "TIMESTAMP",
}
LENGTHS = {NOP: 1, COPY: 7, FENCE: 4, TRAP: 2, POLL_REGMEM: 6, TIMESTAMP: 3}  # WRITE: 4 + its dword count
# TIMESTAMP reads only GET_GLOBAL; every other op only sub-op 0 (COPY: LINEAR, POLL_REGMEM: plain poll)
SUB_OPS = {TIMESTAMP: 2}
COUNT_BITS = {4: 22, 6: 30}
FENCE_MTYPE_UC = 3 << 16
MEM_POLL = 1 << 31
GEQ, EQ = pm4.GEQ, pm4.EQ


def sdma_version(arch: str) -> int:
  """The SDMA IP major version of a processor: gfx9 -> 4, gfx11 -> 6."""
  return {pm4.GFX9: 4, pm4.GFX11: 6}[pm4.family(arch)]


def _version(version: int) -> int:
  if version not in COUNT_BITS:
    raise ValueError(f"SDMA version must be 4 or 6, not {version!r}")
  return version


def _check(name: str, value: int, bits: int) -> int:
  if not 0 <= (value := operator.index(value)) < 1 << bits:
    raise ValueError(f"{name} {value:#x} is outside [0, 2**{bits})")
  return value


def _address(value: int, align: int, name: str = "address", nbytes: int = 0) -> int:
  if (value := _check(name, value, 48)) % align:
    raise ValueError(f"{name} {value:#x} is not {align}-byte aligned")
  if value + nbytes > 1 << 48:
    raise ValueError(f"{name} range {value:#x} + {nbytes:#x} bytes runs past the 48-bit address space")
  return value


def _lohi(value: int) -> list[int]:
  return [value & 0xFFFFFFFF, value >> 32]


def max_copy_bytes(version: int) -> int:
  """The most bytes one COPY LINEAR moves: COUNT (bytes - 1) is 22 bits wide on SDMA 4, 30 bits on SDMA 6."""
  return 1 << COUNT_BITS[_version(version)]


def copy_linear(destination: int, source: int, nbytes: int, version: int) -> list[int]:
  """One COPY LINEAR packet of 1..max_copy_bytes(version) bytes."""
  if not 1 <= (nbytes := operator.index(nbytes)) <= max_copy_bytes(version):
    raise ValueError(f"COPY LINEAR moves 1..{max_copy_bytes(version):#x} bytes on SDMA {version}, not {nbytes:#x}")
  source, destination = _address(source, 1, "source", nbytes), _address(destination, 1, "destination", nbytes)
  return [COPY, nbytes - 1, 0, *_lohi(source), *_lohi(destination)]


def copy(destination: int, source: int, nbytes: int, version: int) -> list[int]:
  """Copy `nbytes` (0 gives no packet) with as many COPY LINEAR packets as the count field needs."""
  step, nbytes = max_copy_bytes(version), _check("copy size", nbytes, 48)
  source, destination = _address(source, 1, "source", nbytes), _address(destination, 1, "destination", nbytes)
  return [
    w
    for done in range(0, nbytes, step)
    for w in copy_linear(destination + done, source + done, min(step, nbytes - done), version)
  ]


def write(address: int, *values: int) -> list[int]:
  """WRITE untiled: store 1..2**20 dwords at the dword-aligned `address`."""
  if not 1 <= len(values) <= 1 << 20:
    raise ValueError(f"WRITE stores 1..2**20 dwords, not {len(values)}")
  return [
    WRITE,
    *_lohi(_address(address, 4, nbytes=4 * len(values))),
    len(values) - 1,
    *(_check("WRITE value", v, 32) for v in values),
  ]


def fence(address: int, value: int, version: int) -> list[int]:
  """FENCE: after earlier packets, store the 32-bit `value` at the dword-aligned `address`."""
  return [
    FENCE | (FENCE_MTYPE_UC if _version(version) == 6 else 0),
    *_lohi(_address(address, 4)),
    _check("FENCE value", value, 32),
  ]


def trap(context: int) -> list[int]:
  """TRAP: interrupt with a 28-bit context."""
  return [TRAP, _check("TRAP context", context, 28)]


def poll_regmem(
  address: int, reference: int, mask: int = 0xFFFFFFFF, function: int = GEQ, interval: int = 4, retries: int = 0xFFF
) -> list[int]:
  """POLL_REGMEM on memory: wait until (the dword at `address` & mask) `function` reference holds."""
  if not 0 <= (function := operator.index(function)) <= 6:
    raise ValueError(f"compare function must be 0..6, not {function}")
  return [
    POLL_REGMEM | function << 28 | MEM_POLL,
    *_lohi(_address(address, 4)),
    _check("reference", reference, 32),
    _check("mask", mask, 32),
    _check("interval", interval, 16) | _check("retries", retries, 12) << 16,
  ]


def timestamp(address: int) -> list[int]:
  """TIMESTAMP GET_GLOBAL: store the 64-bit global clock at the 8-byte aligned `address`."""
  return [TIMESTAMP | SUB_OPS[TIMESTAMP] << 8, *_lohi(_address(address, 8))]


def nop(dwords: int) -> list[int]:
  """`dwords` one-dword NOPs (zero dwords)."""
  if (dwords := operator.index(dwords)) < 0:
    raise ValueError(f"NOP padding cannot be negative ({dwords} dwords)")
  return [0] * dwords


PacketError, Packet = pm4.PacketError, pm4.Packet  # offsets in bytes here


def _word(words: Sequence[int], at: int) -> int:
  try:
    word = operator.index(words[at])
  except TypeError:
    raise PacketError(f"byte {4 * at}: {words[at]!r} is not an integer") from None
  if not 0 <= word < 1 << 32:
    raise PacketError(f"byte {4 * at}: {word:#x} is not a u32")
  return word


def _fields(op: int, header: int, body: list[int], version: int, fail) -> dict:
  if op == COPY:
    if header >> 16:
      raise fail(f"has flags {header >> 16:#x} (tmz, backwards, broadcast, ...) that this decoder does not read")
    if body[0] >> COUNT_BITS[version]:
      raise fail(f"has a bad count {body[0]:#x}: SDMA {version} counts {COUNT_BITS[version]} bits")
    return {"destination": body[4] | body[5] << 32, "source": body[2] | body[3] << 32, "bytes": body[0] + 1}
  if op == WRITE:
    return {"address": body[0] | body[1] << 32, "values": tuple(body[3:])}
  if op == FENCE:
    return {"address": body[0] | body[1] << 32, "value": body[2]}
  if op == TRAP:
    return {"context": body[0] & 0x0FFFFFFF}
  if op == POLL_REGMEM:
    if (function := header >> 28 & 7) == 7:
      raise fail("has the reserved compare function 7")
    return {
      "address": body[0] | body[1] << 32,
      "reference": body[2],
      "mask": body[3],
      "function": function,
      "memory": bool(header & MEM_POLL),
      "interval": body[4] & 0xFFFF,
      "retries": body[4] >> 16 & 0xFFF,
    }
  if op == TIMESTAMP:
    return {"address": body[0] | body[1] << 32}
  if header:
    raise fail(f"header {header:#010x} has a count or flags; only the zero dword is read as NOP")
  return {"dwords": 1}


def decode(words: Sequence[int], version: int) -> Iterator[Packet]:
  """Read a dword stream as SDMA packets of `version`; PacketError (naming the byte offset) on anything malformed."""
  _version(version)
  at = 0
  while at < len(words):
    header = _word(words, at)
    op, sub_op = header & 0xFF, header >> 8 & 0xFF
    if op not in NAMES:
      raise PacketError(f"byte {4 * at}: unknown SDMA op {op} (header {header:#010x})")

    def fail(why: str, at: int = at, op: int = op) -> PacketError:
      return PacketError(f"byte {4 * at}: {NAMES[op]} {why}")

    if sub_op != SUB_OPS.get(op, 0):
      raise fail(f"has an unknown sub-op {sub_op}")
    if op == WRITE:
      if at + 4 > len(words):
        raise fail(f"runs past the end ({len(words) - at} dwords left, its header needs 4)")
      length = 4 + (_word(words, at + 3) & 0xFFFFF) + 1
    else:
      length = LENGTHS[op]
    if at + length > len(words):
      raise fail(f"of {length} dwords runs past the end ({len(words) - at} left)")
    yield Packet(
      NAMES[op], 4 * at, _fields(op, header, [_word(words, i) for i in range(at + 1, at + length)], version, fail)
    )
    at += length
