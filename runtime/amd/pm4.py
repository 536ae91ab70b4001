"""PM4 type-3 packets for AMD compute queues, gfx9 (gfx90a, gfx942) and gfx11 (gfx1100): encoders and a checking
decoder.

A packet is a header dword and a body. The header holds the packet type 3 in bits 31:30, COUNT = body dwords - 1 in
bits 29:16 and the opcode in bits 15:8; bit 1 (compute shader type) and bit 0 (predicate) are left clear here.
- SET_SH_REG / SET_UCONFIG_REG: the first register's offset in its window (SH 0x2C00-0x2FFF, UCONFIG 0xC000-0xC3FF),
  then one value per consecutive register.
- ACQUIRE_MEM: write back and invalidate GPU caches over an address range (here: all of memory) before later work reads.
  gfx11 names the caches in a GCR_CNTL dword (7 body dwords); gfx9 in a CP_COHER_CNTL dword (6 body dwords).
- RELEASE_MEM: once all earlier work reaches the end of the pipe, optionally write back/invalidate caches, then store
  nothing, 32 or 64 bits of data or the GPU clock (100 MHz) at an address, and optionally interrupt with a context id.
- WAIT_REG_MEM: stall until (memory dword or register & mask) compares true against a reference. Operation 1 first
  writes register 1 and then waits on register 2: the HDP (host data path) flush handshake.
- DISPATCH_DIRECT: launch X*Y*Z workgroups of the kernel the COMPUTE_* registers describe.
- EVENT_WRITE: post a pipeline event (CS_PARTIAL_FLUSH after a dispatch waits until its waves finish).
- INDIRECT_BUFFER: execute a command buffer held elsewhere in memory, then continue here.
- NOP: skip the body. COUNT 0x3FFF is reserved for the header-only NOP (0xFFFF1000), the one-dword filler.
Encoders return lists of u32 dwords and raise ValueError for input out of range. `decode` reads a dword stream back into
Packets and raises only PacketError, naming the dword offset; it rejects type-0/1/2 headers (this module writes none and
fills single dwords with the header-only NOP), packets it does not know, and encodings the family cannot have."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace

from pytc.runtime.amd_code_object import gfx_major

GFX9, GFX11 = 9, 11
(
  NOP,
  DISPATCH_DIRECT,
  WAIT_REG_MEM,
  INDIRECT_BUFFER,
  EVENT_WRITE,
  RELEASE_MEM,
  ACQUIRE_MEM,
  SET_SH_REG,
  SET_UCONFIG_REG,
) = 0x10, 0x15, 0x3C, 0x3F, 0x46, 0x49, 0x58, 0x76, 0x79
NAMES = {
  NOP: "NOP",
  DISPATCH_DIRECT: "DISPATCH_DIRECT",
  WAIT_REG_MEM: "WAIT_REG_MEM",
  INDIRECT_BUFFER: "INDIRECT_BUFFER",
  EVENT_WRITE: "EVENT_WRITE",
  RELEASE_MEM: "RELEASE_MEM",
  ACQUIRE_MEM: "ACQUIRE_MEM",
  SET_SH_REG: "SET_SH_REG",
  SET_UCONFIG_REG: "SET_UCONFIG_REG",
}
SH_BASE, UCONFIG_BASE, WINDOW = 0x2C00, 0xC000, 0x400  # register windows: [base, base + WINDOW)
NOP_HEADER_ONLY = 0xFFFF1000


def family(arch: str) -> int:
  """The packet family of a processor: gfx9 chips (gfx90a, gfx942) -> GFX9, gfx11 chips (gfx1100, ...) -> GFX11."""
  if (major := gfx_major(arch)) not in (GFX9, GFX11):
    raise ValueError(f"{arch!r}: PM4 packets are encoded for gfx9 and gfx11 only")
  return major


def _family(fam: int) -> int:
  if fam not in (GFX9, GFX11):
    raise ValueError(f"packet family must be GFX9 (9) or GFX11 (11), got {fam!r}")
  return fam


def _check(name: str, value: int, bits: int) -> int:
  if not 0 <= (value := operator.index(value)) < 1 << bits:
    raise ValueError(f"{name} {value:#x} is outside [0, 2**{bits})")
  return value


def _address(value: int, align: int, name: str = "address") -> int:
  if (value := _check(name, value, 48)) % align:
    raise ValueError(f"{name} {value:#x} is not {align}-byte aligned")
  return value


def _lohi(value: int) -> list[int]:
  return [value & 0xFFFFFFFF, value >> 32]


# ***** registers *****


@dataclass(frozen=True)
class Registers:
  """Absolute dword addresses of the registers a compute dispatch writes, for one family."""

  pgm_lo: int
  pgm_hi: int
  rsrc1: int
  rsrc2: int
  rsrc3: int
  tmpring_size: int
  user_data_0: int
  resource_limits: int
  start_x: int
  num_thread_x: int
  num_thread_y: int
  num_thread_z: int
  restart_x: int
  scratch_base_lo: int
  hdp_flush_req: int
  hdp_flush_done: int


_GFX11_REGISTERS = Registers(
  pgm_lo=0x2E0C,
  pgm_hi=0x2E0D,
  rsrc1=0x2E12,
  rsrc2=0x2E13,
  rsrc3=0x2E28,
  tmpring_size=0x2E18,
  user_data_0=0x2E40,
  resource_limits=0x2E15,
  start_x=0x2E04,
  num_thread_x=0x2E07,
  num_thread_y=0x2E08,
  num_thread_z=0x2E09,
  restart_x=0x2E1B,
  scratch_base_lo=0x2E10,
  hdp_flush_req=0xE26,
  hdp_flush_done=0xE27,
)
_REGISTERS = {GFX11: _GFX11_REGISTERS, GFX9: replace(_GFX11_REGISTERS, rsrc3=0x2E2D)}


def registers(fam: int) -> Registers:
  """The compute registers of a family (they differ only in COMPUTE_PGM_RSRC3)."""
  return _REGISTERS[_family(fam)]


# ***** encoders *****


def header(opcode: int, body_dwords: int) -> int:
  """A type-3 header for `body_dwords` (1..0x4000) dwords after it."""
  opcode, body_dwords = _check("opcode", opcode, 8), operator.index(body_dwords)
  if not 1 <= body_dwords <= 0x4000:
    raise ValueError(f"a type-3 packet has 1..0x4000 body dwords, not {body_dwords}")
  return 3 << 30 | (body_dwords - 1) << 16 | opcode << 8


def _set_reg(opcode: int, base: int, register: int, values: tuple[int, ...]) -> list[int]:
  name, register = NAMES[opcode], operator.index(register)
  if not values:
    raise ValueError(f"{name} needs at least one value")
  if not base <= register <= register + len(values) <= base + WINDOW:
    raise ValueError(
      f"{name}: registers {register:#x}..{register + len(values) - 1:#x} leave the window "
      f"{base:#x}..{base + WINDOW - 1:#x}"
    )
  return [header(opcode, 1 + len(values)), register - base, *(_check(f"{name} value", v, 32) for v in values)]


def set_sh_reg(register: int, *values: int) -> list[int]:
  """Write `values` to consecutive SH registers starting at the absolute address `register`."""
  return _set_reg(SET_SH_REG, SH_BASE, register, values)


def set_uconfig_reg(register: int, *values: int) -> list[int]:
  """Write `values` to consecutive UCONFIG registers (0xC000..0xC3FF) starting at `register`."""
  return _set_reg(SET_UCONFIG_REG, UCONFIG_BASE, register, values)


# gfx11 GCR_CNTL: "dispatch" = GLM wb+inv, GLK wb+inv, GLV inv, GL1 inv; "all" adds GLI (I$) inv and GL2 inv+wb.
# gfx9 CP_COHER_CNTL: "dispatch" = TCL1 + SH_KCACHE; "all" adds SH_ICACHE, TC (L2) and TC_WB.
ACQUIRE_CACHES = {GFX11: {"dispatch": 0x03F0, "all": 0xC3F1}, GFX9: {"dispatch": 0x08400000, "all": 0x28C40000}}
ACQUIRE_POLL_GFX9 = 0xA


def acquire_mem(fam: int, *, caches: str) -> list[int]:
  """Invalidate caches over all of memory: "dispatch" (before a kernel: scalar/vector/L1 caches) or "all" (also I$, L2
  written back)."""
  if caches not in ("dispatch", "all"):
    raise ValueError(f"ACQUIRE_MEM caches must be 'dispatch' or 'all', not {caches!r}")
  cntl, everything = ACQUIRE_CACHES[_family(fam)][caches], [0xFFFFFFFF, 0xFFFFFFFF, 0, 0]  # size all ones, base 0
  if fam == GFX11:
    return [header(ACQUIRE_MEM, 7), 0, *everything, 0, cntl]
  return [header(ACQUIRE_MEM, 6), cntl, *everything, ACQUIRE_POLL_GFX9]


CACHE_FLUSH_AND_INV_TS, END_OF_PIPE = 0x14, 5
DATA_SELECT = {"none": 0, "value32": 1, "value64": 2, "timestamp": 3}
# gfx11: GLM wb+inv, GLV inv, GL1 inv, GL2 inv+wb, SEQ; gfx9: EOP_TC_WB + EOP_TC_NC
RELEASE_FLUSH = {GFX11: 0x70F000, GFX9: 0x88000}


def release_mem(
  fam: int, address: int, value: int = 0, *, data: str, interrupt: int = 0, ctxid: int = 0, flush: bool = True
) -> list[int]:
  """At end of pipe: optionally flush caches, store `data` ("none", "value32", "value64", "timestamp") at `address`,
  interrupt (INT_SEL)."""
  if data not in DATA_SELECT:
    raise ValueError(f"RELEASE_MEM data must be one of {', '.join(DATA_SELECT)}, not {data!r}")
  address = _address(address, 8 if data in ("value64", "timestamp") else 4)
  value, interrupt, ctxid = (
    _check("RELEASE_MEM value", value, 32 if data == "value32" else 64),
    operator.index(interrupt),
    _check("ctxid", ctxid, 32),
  )
  if not 0 <= interrupt <= 6:
    raise ValueError(f"RELEASE_MEM interrupt (INT_SEL) must be 0..6, not {interrupt}")
  if _family(fam) == GFX9 and ctxid:
    raise ValueError(f"RELEASE_MEM on gfx9 takes no interrupt context id (ctxid {ctxid:#x} must be 0)")
  event = CACHE_FLUSH_AND_INV_TS | END_OF_PIPE << 8 | (RELEASE_FLUSH[fam] if flush else 0)
  return [
    header(RELEASE_MEM, 7),
    event,
    interrupt << 24 | DATA_SELECT[data] << 29,
    *_lohi(address),
    *_lohi(value),
    ctxid,
  ]


ALWAYS, LESS, LEQ, EQ, NEQ, GEQ, GREATER = 0, 1, 2, 3, 4, 5, 6  # (value & mask) FUNCTION reference
MEMORY_SPACE, WRITE_THEN_WAIT = 1 << 4, 1 << 6


def _function(function: int) -> int:
  if not 0 <= (function := operator.index(function)) <= 6:
    raise ValueError(f"compare function must be 0..6, not {function}")
  return function


def wait_reg_mem(
  address: int, reference: int, mask: int = 0xFFFFFFFF, function: int = GEQ, interval: int = 4
) -> list[int]:
  """Stall until (the dword at `address` & mask) `function` reference holds, polling every `interval`."""
  return [
    header(WAIT_REG_MEM, 6),
    _function(function) | MEMORY_SPACE,
    *_lohi(_address(address, 4)),
    _check("reference", reference, 32),
    _check("mask", mask, 32),
    _check("interval", interval, 16),
  ]


def hdp_flush(fam: int) -> list[int]:
  """Flush the host data path: write HDP_FLUSH_REQ, then wait for HDP_FLUSH_DONE (makes host writes visible to the
  GPU)."""
  regs = registers(fam)
  return [
    header(WAIT_REG_MEM, 6),
    GEQ | WRITE_THEN_WAIT,
    regs.hdp_flush_req,
    regs.hdp_flush_done,
    0xFFFFFFFF,
    0xFFFFFFFF,
    4,
  ]


def dispatch_direct(x: int, y: int, z: int, initiator: int) -> list[int]:
  """Launch an x*y*z grid of workgroups (each count 1..2**32-1) with the COMPUTE_DISPATCH_INITIATOR value
  `initiator`."""
  counts = [operator.index(n) for n in (x, y, z)]
  if not all(1 <= n < 1 << 32 for n in counts):
    raise ValueError(f"DISPATCH_DIRECT workgroup counts must be in [1, 2**32), got {tuple(counts)}")
  return [header(DISPATCH_DIRECT, 4), *counts, _check("dispatch initiator", initiator, 32)]


INITIATOR_COMPUTE_SHADER_EN, INITIATOR_FORCE_START_AT_000, INITIATOR_CS_W32_EN = 1 << 0, 1 << 2, 1 << 15


def dispatch_initiator(fam: int, wave32: bool) -> int:
  """COMPUTE_DISPATCH_INITIATOR for a kernel: enable + start at (0,0,0), and wave32 on gfx11 (gfx9 runs wave64 only)."""
  if _family(fam) == GFX9 and wave32:
    raise ValueError("gfx9 runs wave64 only: a wave32 dispatch needs gfx10 or later")
  return INITIATOR_COMPUTE_SHADER_EN | INITIATOR_FORCE_START_AT_000 | (INITIATOR_CS_W32_EN if wave32 else 0)


CS_PARTIAL_FLUSH, CS_PARTIAL_FLUSH_INDEX = 7, 4


def event_write(event_type: int, event_index: int) -> list[int]:
  """Post a pipeline event: EVENT_TYPE (6 bits), EVENT_INDEX (4 bits)."""
  return [header(EVENT_WRITE, 1), _check("EVENT_TYPE", event_type, 6) | _check("EVENT_INDEX", event_index, 4) << 8]


INDIRECT_BUFFER_VALID = 1 << 23


def indirect_buffer(address: int, dwords: int) -> list[int]:
  """Run the `dwords` (1..2**20-1) command dwords at the dword-aligned `address`, then continue after this packet."""
  if (dwords := operator.index(dwords)) < 1:
    raise ValueError(f"INDIRECT_BUFFER size must be at least 1 dword, not {dwords}")
  return [
    header(INDIRECT_BUFFER, 3),
    *_lohi(_address(address, 4)),
    _check("INDIRECT_BUFFER size", dwords, 20) | INDIRECT_BUFFER_VALID,
  ]


def nop(body_dwords: int) -> list[int]:
  """A NOP filling 1 + body_dwords dwords: body 0 is the header-only NOP, 1..0x3FFF a header with that many zero
  dwords."""
  if not 0 <= (body_dwords := operator.index(body_dwords)) <= 0x3FFF:
    raise ValueError(f"a NOP body has 0..0x3FFF dwords, not {body_dwords}")
  return [NOP_HEADER_ONLY] if body_dwords == 0 else [header(NOP, body_dwords), *[0] * body_dwords]


# ***** decoder *****


class PacketError(ValueError):
  """A dword stream that is not a sequence of packets a decoder here (or in sdma.py) reads; the message names the
  offset."""


@dataclass(frozen=True)
class Packet:
  name: str  # "SET_SH_REG", "RELEASE_MEM", "COPY_LINEAR", ...
  offset: int  # where the header is in the decoded words: a dword index for PM4, a byte offset for SDMA
  fields: dict


FIXED_BODY = {DISPATCH_DIRECT: 4, WAIT_REG_MEM: 6, INDIRECT_BUFFER: 3, EVENT_WRITE: 1, RELEASE_MEM: 7}


def _word(words: Sequence[int], at: int) -> int:
  try:
    word = operator.index(words[at])
  except TypeError:
    raise PacketError(f"dword {at}: {words[at]!r} is not an integer") from None
  if not 0 <= word < 1 << 32:
    raise PacketError(f"dword {at}: {word:#x} is not a u32")
  return word


def _fields(op: int, body: list[int], fam: int, at: int) -> dict:
  def fail(why: str) -> PacketError:
    return PacketError(f"dword {at}: {NAMES[op]} {why}")

  if op in (SET_SH_REG, SET_UCONFIG_REG):
    base = SH_BASE if op == SET_SH_REG else UCONFIG_BASE
    if body[0] >> 16:
      raise fail(f"sets INDEX/VMID_SHIFT bits ({body[0]:#x}), which this decoder does not read")
    if body[0] + len(body) - 1 > WINDOW:
      raise fail(f"registers {base + body[0]:#x}..{base + body[0] + len(body) - 2:#x} leave the window")
    return {"register": base + body[0], "values": tuple(body[1:])}
  if op == ACQUIRE_MEM:
    legacy, cntl = (body[0], body[6]) if fam == GFX11 else (0, body[0])
    caches = next((k for k, v in ACQUIRE_CACHES[fam].items() if v == cntl and legacy == 0), "other")
    return {"caches": caches, "size": body[1] | body[2] << 32, "base": body[3] | body[4] << 32}
  if op == RELEASE_MEM:
    interrupt, data_sel = body[1] >> 24 & 7, body[1] >> 29
    if interrupt == 7:
      raise fail("has the reserved INT_SEL 7")
    if fam == GFX9 and body[6]:
      raise fail(f"has an interrupt context id ({body[6]:#x}), which gfx9 does not take")
    data = next((k for k, v in DATA_SELECT.items() if v == data_sel), "other")
    return {
      "event": body[0] & 0x3F,
      "index": body[0] >> 8 & 0xF,
      "flush": body[0] & RELEASE_FLUSH[fam] == RELEASE_FLUSH[fam],
      "data": data,
      "interrupt": interrupt,
      "address": body[2] | body[3] << 32,
      "value": body[4] | body[5] << 32,
      "ctxid": body[6],
    }
  if op == WAIT_REG_MEM:
    function, space, operation = body[0] & 7, body[0] >> 4 & 3, body[0] >> 6 & 3
    if function == 7:
      raise fail("has the reserved compare function 7")
    if space > 1:
      raise fail(f"has the reserved MEM_SPACE {space}")
    if space == 1 and operation == 1:
      raise fail("writes then waits (operation 1) on memory; that operation takes registers")
    memory = space == 1
    return {
      "function": function,
      "memory": memory,
      "operation": operation,
      "address": body[1] | body[2] << 32 if memory else 0,
      "reg1": 0 if memory else body[1],
      "reg2": 0 if memory else body[2],
      "reference": body[3],
      "mask": body[4],
      "interval": body[5] & 0xFFFF,
    }
  if op == DISPATCH_DIRECT:
    if fam == GFX9 and body[3] & INITIATOR_CS_W32_EN:
      raise fail("asks for wave32 (CS_W32_EN), which gfx9 does not have")
    return dict(zip(("x", "y", "z", "initiator"), body))
  if op == EVENT_WRITE:
    return {"event": body[0] & 0x3F, "index": body[0] >> 8 & 0xF}
  if op == INDIRECT_BUFFER:
    if body[0] & 3:
      raise fail(f"address low dword {body[0]:#x} is not dword aligned")
    return {
      "address": body[0] | body[1] << 32,
      "dwords": body[2] & 0xFFFFF,
      "valid": bool(body[2] & INDIRECT_BUFFER_VALID),
    }
  return {"dwords": len(body)}  # NOP


def decode(words: Sequence[int], fam: int) -> Iterator[Packet]:
  """Read a dword stream as type-3 packets of family `fam`; PacketError (naming the dword offset) on anything
  malformed."""
  _family(fam)
  at = 0
  while at < len(words):
    word = _word(words, at)
    if word >> 30 != 3:
      raise PacketError(f"dword {at}: {word:#010x} is a type-{word >> 30} header; only type-3 packets are read")
    count, op = word >> 16 & 0x3FFF, word >> 8 & 0xFF
    if op not in NAMES:
      raise PacketError(f"dword {at}: unknown PM4 opcode {op:#04x} (header {word:#010x})")
    if word & 0xFD:
      raise PacketError(f"dword {at}: header {word:#010x} sets the predicate or reserved bits 7:2")
    if op == NOP and count == 0x3FFF:
      yield Packet("NOP", at, {"dwords": 0})
      at += 1
      continue
    body_dwords = count + 1
    expected = 7 if op == ACQUIRE_MEM and fam == GFX11 else 6 if op == ACQUIRE_MEM else FIXED_BODY.get(op)
    if expected is not None and body_dwords != expected:
      raise PacketError(f"dword {at}: {NAMES[op]} has COUNT {count}, expected {expected - 1} on gfx{fam}")
    if op in (SET_SH_REG, SET_UCONFIG_REG) and body_dwords < 2:
      raise PacketError(f"dword {at}: {NAMES[op]} with no value (COUNT 0)")
    if at + 1 + body_dwords > len(words):
      raise PacketError(
        f"dword {at}: {NAMES[op]} with {body_dwords} body dwords runs past the end ({len(words) - at - 1} left)"
      )
    yield Packet(NAMES[op], at, _fields(op, [_word(words, i) for i in range(at + 1, at + 1 + body_dwords)], fam, at))
    at += 1 + body_dwords


def with_register_names(packets: Iterable[Packet], fam: int) -> Iterator[Packet]:
  """`packets` with each SET_SH_REG's register by its name in `Registers` where it has one (for printing)."""
  names = {address: name for name, address in asdict(registers(fam)).items()}
  for p in packets:
    yield (
      replace(p, fields={**p.fields, "register": names.get(p.fields["register"], p.fields["register"])})
      if p.name == "SET_SH_REG"
      else p
    )
