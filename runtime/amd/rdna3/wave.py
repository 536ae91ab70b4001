"""The RDNA3 wave executor: a kernel's machine code run over a dispatch's grid, every wave of 32 lanes held as NumPy
arrays (VGPRs per lane, SGPRs, EXEC, VCC, SCC, M0 and the program counter per wave).

All waves of a batch of workgroups step together: each step runs the instruction at the lowest program counter among
the waves that can run, for the waves that are there (uniform code keeps every wave on one counter, so a step is one
set of array operations over the batch). `s_barrier` holds a wave until every unfinished wave of its workgroup reached
it; memory instructions complete before the next step, so `s_waitcnt` only orders and is a no-op, as are the scheduling
hints (`s_delay_alu`, `s_clause`, `s_nop`). An instruction without semantics here is `UnsupportedInstruction` naming it.

The initial state is what the hardware sets up from the dispatch: the user SGPRs from COMPUTE_USER_DATA_*, then the
workgroup ids COMPUTE_PGM_RSRC2 enables (x, y, z), the work-item ids packed into v0 (x | y << 10 | z << 20), EXEC the
wave's live lanes. Floating point rounds to nearest even and keeps denormals (the mode pytc's kernels are built for)."""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from pytc.runtime.amd.rdna3.decode import (
  BRANCHES,
  LITERAL,
  Instruction,
  branch_target,
  decode_one,
  sixteen_bit,
  vop3_sources,
)
from pytc.runtime.amd.rdna3.memory import GlobalMemory, MemoryFault, gather, scatter
from pytc.runtime.amd.rdna3.operands import dwords, signature
from pytc.runtime.amd.rdna3.salu import SALU
from pytc.runtime.amd.rdna3.valu import VALU

LANES = 32
VCC, NULL, M0, EXEC = 106, 124, 125, 126
LANE_BITS = np.arange(LANES, dtype=np.uint32)
BATCH_BYTES = 256 << 20  # the VGPR file of the waves run together
DTYPES = {
  "f16": np.float16,
  "f32": np.float32,
  "f64": np.float64,
  "b16": np.uint16,
  "u16": np.uint16,
  "i16": np.int16,
  "b32": np.uint32,
  "u32": np.uint32,
  "u24": np.uint32,
  "i32": np.int32,
  "i24": np.int32,
  "b64": np.uint64,
  "u64": np.uint64,
  "i64": np.int64,
  "i8": np.int32,
  "u8": np.uint32,
  "b8": np.uint32,
  "mask": np.bool_,
}
FLOAT_BITS = {  # inline constants 240-248 (0.5, -0.5, 1, -1, 2, -2, 4, -4, 1/(2 pi)) by operand width
  16: (0x3800, 0xB800, 0x3C00, 0xBC00, 0x4000, 0xC000, 0x4400, 0xC400, 0x3118),
  32: (0x3F000000, 0xBF000000, 0x3F800000, 0xBF800000, 0x40000000, 0xC0000000, 0x40800000, 0xC0800000, 0x3E22F983),
  64: (
    0x3FE0000000000000,
    0xBFE0000000000000,
    0x3FF0000000000000,
    0xBFF0000000000000,
    0x4000000000000000,
    0xC000000000000000,
    0x4010000000000000,
    0xC010000000000000,
    0x3FC45F306DC9C882,
  ),
}
NO_OPS = {
  "s_waitcnt",
  "s_waitcnt_vscnt",
  "s_waitcnt_vmcnt",
  "s_waitcnt_expcnt",
  "s_waitcnt_lgkmcnt",
  "s_waitcnt_depctr",
  "s_delay_alu",
  "s_clause",
  "s_nop",
  "s_set_inst_prefetch_distance",
  "s_icache_inv",
  "s_sleep",
  "s_setprio",
  "s_code_end",
}
CACHE_CONTROL = {"buffer_gl0_inv", "buffer_gl1_inv", "s_gl1_inv", "s_dcache_inv"}
MSG_DEALLOC_VGPRS = 3
IEEE_FLOAT_MODE = 0xF0  # round to nearest even for f32 and f16/f64, denormals kept for both
PACKED = {
  "v_pk_add_f16": "v_add_f16",
  "v_pk_mul_f16": "v_mul_f16",
  "v_pk_fma_f16": "v_fma_f16",
  "v_pk_add_u16": "v_add_nc_u16",
  "v_pk_sub_u16": "v_sub_nc_u16",
  "v_pk_add_i16": "v_add_nc_u16",
  "v_pk_sub_i16": "v_sub_nc_u16",
  "v_pk_mul_lo_u16": "v_mul_lo_u16",
  "v_pk_max_i16": "v_max_i16",
  "v_pk_min_i16": "v_min_i16",
  "v_pk_max_u16": "v_max_u16",
  "v_pk_min_u16": "v_min_u16",
  "v_pk_max_f16": "v_max_f16",
  "v_pk_min_f16": "v_min_f16",
  "v_pk_lshlrev_b16": "v_lshlrev_b16",
  "v_pk_lshrrev_b16": "v_lshrrev_b16",
  "v_pk_ashrrev_i16": "v_ashrrev_i16",
  "v_pk_mad_u16": "v_mad_u16",
}
SAVEEXEC = {
  "and": lambda s, e: s & e,
  "or": lambda s, e: s | e,
  "xor": lambda s, e: s ^ e,
  "nand": lambda s, e: ~(s & e),
  "nor": lambda s, e: ~(s | e),
  "xnor": lambda s, e: ~(s ^ e),
  "and_not0": lambda s, e: ~s & e,
  "or_not0": lambda s, e: ~s | e,
  "and_not1": lambda s, e: s & ~e,
  "or_not1": lambda s, e: s | ~e,
}
# the integer adds and subtracts whose VOP3 clamp bit saturates the exact result to the destination's range
SATURATING = {
  "v_add_nc_u32": np.add,
  "v_sub_nc_u32": np.subtract,
  "v_subrev_nc_u32": lambda a, b: b - a,
  "v_add_nc_u16": np.add,
  "v_sub_nc_u16": np.subtract,
  "v_add_nc_i32": np.add,
  "v_sub_nc_i32": np.subtract,
  "v_add_nc_i16": np.add,
  "v_sub_nc_i16": np.subtract,
}


class UnsupportedInstruction(RuntimeError):
  """The code holds an instruction (or a form of one) the emulator has no semantics for."""


class ExecutionFault(RuntimeError):
  """A wave faulted: a memory access outside mapped memory, or a state the hardware would hang or trap in."""

  def __init__(self, address: int, message: str):
    super().__init__(message)
    self.address = address


@dataclass(frozen=True)
class Launch:
  """One dispatch: the kernel's code (`image`, loaded at GPU address `base`, its first instruction at byte `entry`),
  the grid of workgroups and their size, and the hardware state the dispatch packet and registers set up."""

  image: bytes
  base: int
  entry: int
  grid: tuple[int, int, int]
  local: tuple[int, int, int]
  user_sgprs: tuple[int, ...]
  rsrc2: int
  lds_bytes: int
  vgprs: int
  name: str = "kernel"
  float_mode: int = IEEE_FLOAT_MODE  # COMPUTE_PGM_RSRC1.FLOAT_MODE: rounding and denormal modes

  def __post_init__(self):
    if self.float_mode != IEEE_FLOAT_MODE:
      raise UnsupportedInstruction(
        f"float mode {self.float_mode:#x} of {self.name} (the emulator rounds to nearest and keeps denormals: "
        f"{IEEE_FLOAT_MODE:#x})"
      )

  @property
  def workgroup_ids(self) -> tuple[bool, bool, bool]:
    return tuple(bool(self.rsrc2 >> b & 1) for b in (7, 8, 9))


class Program:
  """The decoded instructions of one code image, each decoded once, on first execution."""

  def __init__(self, image: bytes):
    self.image, self.instructions = image, {}

  def at(self, pc: int) -> Instruction:
    if (ins := self.instructions.get(pc)) is None:
      ins = self.instructions[pc] = decode_one(self.image, pc)
    return ins


@functools.lru_cache(maxsize=64)
def program(image: bytes) -> Program:
  return Program(image)


@functools.cache
def arity(name: str) -> int:
  """How many sources the VOP3 form of `name` reads."""
  return 3 if name in ("v_cndmask_b32", "v_cndmask_b16") else vop3_sources(name)


def lanes_of(bits: np.ndarray) -> np.ndarray:
  """Lane masks (waves,) uint32 -> (waves, 32) bool."""
  return (bits[:, None] >> LANE_BITS & 1).astype(bool)


def bits_of(lanes: np.ndarray) -> np.ndarray:
  """(waves, 32) bool -> lane masks (waves,) uint32."""
  return np.packbits(lanes, axis=1, bitorder="little").view("<u4").reshape(len(lanes))


@functools.cache
def width(kind: str) -> int:
  if kind == "mask":
    return 32
  return 16 if sixteen_bit(kind) else 32 * dwords(kind)


def typed(raw: np.ndarray, kind: str) -> np.ndarray:
  """Register bits (uint16/32/64 by the kind's width) as the kind's NumPy type."""
  bits = width(kind)
  unsigned = raw.astype({16: np.uint16, 32: np.uint32, 64: np.uint64}.get(bits, np.uint64), copy=False)
  return unsigned.view(DTYPES.get(kind, unsigned.dtype)) if kind != "mask" else unsigned.astype(bool)


def raw_of(value: np.ndarray, kind: str) -> np.ndarray:
  """A typed result back to its register bits."""
  bits = width(kind)
  target = {16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
  value = np.asarray(value)
  if value.dtype.itemsize * 8 == bits:
    return value.view(target)
  return value.astype({16: np.int16, 32: np.int32, 64: np.int64}[bits] if value.dtype.kind == "i" else target).view(
    target
  )


class Waves:
  """The state of a batch of waves (several workgroups) and the step loop that runs them to s_endpgm."""

  def __init__(self, launch: Launch, memory: GlobalMemory, groups: list[tuple[int, int, int]]):
    self.launch, self.memory, self.program = launch, memory, program(launch.image)
    threads = launch.local[0] * launch.local[1] * launch.local[2]
    self.per_group = -(-threads // LANES)
    n = self.per_group * len(groups)
    self.v = np.zeros((max(launch.vgprs, 1), n, LANES), np.uint32)
    self.s = np.zeros((128, n), np.uint32)
    self.scc, self.pc = np.zeros(n, bool), np.full(n, launch.entry, np.int64)
    self.done, self.waiting = np.zeros(n, bool), np.zeros(n, bool)
    self.group = np.repeat(np.arange(len(groups)), self.per_group)
    self.lds = np.zeros((len(groups), -(-max(launch.lds_bytes, 4) // 4) * 4), np.uint8)
    thread = np.arange(self.per_group * LANES).reshape(self.per_group, LANES)
    x, y, z = (
      thread % launch.local[0],
      thread // launch.local[0] % launch.local[1],
      thread // (launch.local[0] * launch.local[1]),
    )
    self.v[0] = np.tile((x | y << 10 | z << 20).astype(np.uint32), (len(groups), 1))
    live = bits_of(np.tile(thread < threads, (len(groups), 1)))
    self.s[EXEC] = live
    self.exec_bits, self.exec_lanes, self.exec_full = None, None, False
    for i, value in enumerate(launch.user_sgprs):
      self.s[i] = value & 0xFFFFFFFF
    at = len(launch.user_sgprs)
    for dim, enabled in enumerate(launch.workgroup_ids):
      if enabled:
        self.s[at] = np.repeat(np.array([g[dim] for g in groups], np.uint32), self.per_group)
        at += 1

  # ***** running *****

  def run(self) -> tuple[int, int]:
    """Step until every wave ended: (steps, wave-instructions) executed, a step running one instruction for many
    waves."""
    steps = executed = 0
    with np.errstate(all="ignore"):
      while True:
        # every wave at one instruction
        if not (self.done.any() or self.waiting.any()) and (self.pc == self.pc[0]).all():
          self.execute(self.program.at(int(self.pc[0])), slice(None))
          steps, executed = steps + 1, executed + len(self.pc)
          continue
        if self.done.all():
          break
        runnable = ~self.done & ~self.waiting
        if not runnable.any():
          raise ExecutionFault(0, f"{self.launch.name}: every live wave waits at a barrier no wave can reach")
        pc = int(self.pc[runnable].min())
        here = runnable & (self.pc == pc)
        waves = slice(None) if here.all() else np.nonzero(here)[0]
        self.execute(self.program.at(pc), waves)
        steps, executed = steps + 1, executed + int(here.sum())
    return steps, executed

  def fault(self, ins: Instruction, message: str, address: int = 0) -> ExecutionFault:
    where = (
      f"{ins.name} at pc {self.launch.base + ins.pc:#x} (offset {ins.pc - self.launch.entry:#x} in {self.launch.name})"
    )
    return ExecutionFault(address, f"{where}: {message}")

  def execute(self, ins: Instruction, waves) -> None:
    e = ins.encoding
    self.pc[waves] += ins.size
    try:
      if e == "SOPP":
        self.sopp(ins, waves)
      elif e in ("SOP1", "SOP2", "SOPC", "SOPK"):
        self.salu(ins, waves)
      elif e == "SMEM":
        self.smem(ins, waves)
      elif e in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD", "VOP3P"):
        self.valu(ins, waves)
      elif e == "VOPD":
        self.vopd(ins, waves)
      elif e == "GLOBAL":
        self.global_memory(ins, waves)
      elif e == "DS":
        self.ds(ins, waves)
      elif e == "MUBUF" and ins.name in CACHE_CONTROL:
        pass
      else:
        raise UnsupportedInstruction(f"{ins.name} ({e})")
    except MemoryFault as error:
      raise self.fault(ins, str(error), error.address) from None
    except UnsupportedInstruction as error:
      raise UnsupportedInstruction(
        f"{self.launch.name}: the emulator does not implement {error} at offset {ins.pc - self.launch.entry:#x}"
      ) from None

  # ***** operands *****

  def constant(self, code: int, kind: str, literal: int | None) -> int | None:
    """The value of an inline constant or literal source, as register bits of the kind's width; None for a register."""
    bits = width(kind)
    if 128 <= code <= 208:
      value = code - 128 if code <= 192 else 192 - code
      return value & (1 << bits) - 1
    if 240 <= code <= 248:
      return FLOAT_BITS[bits if bits in FLOAT_BITS else 32][code - 240]
    if code == LITERAL:
      if kind == "f64":
        return literal << 32
      return literal & (1 << bits) - 1
    if code in (251, 252, 253):
      raise UnsupportedInstruction(f"source register {code} (vccz/execz/scc)")
    return None

  def scalar(self, code: int, kind: str, waves, literal: int | None) -> np.ndarray:
    """A scalar source per wave, as register bits (uint32, or uint64 for 64-bit kinds)."""
    count = len(self.scc[waves])
    if (value := self.constant(code, kind, literal)) is not None:
      return np.full(count, value, np.uint64 if width(kind) == 64 else np.uint32)
    if code >= 256:
      raise UnsupportedInstruction(f"a VGPR as a scalar source ({code - 256})")
    if code == NULL:
      return np.zeros(count, np.uint64 if width(kind) == 64 else np.uint32)
    low = self.s[code, waves]
    if width(kind) == 64:
      return low.astype(np.uint64) | self.s[code + 1, waves].astype(np.uint64) << np.uint64(32)
    return low.copy()

  def set_scalar(self, code: int, kind: str, waves, value: np.ndarray) -> None:
    if code == NULL:
      return
    value = np.asarray(value)
    if width(kind) == 64:
      value = value.astype(np.uint64, copy=False)
      self.s[code, waves] = (value & np.uint64(0xFFFFFFFF)).astype(np.uint32)
      self.s[code + 1, waves] = (value >> np.uint64(32)).astype(np.uint32)
    else:
      self.s[code, waves] = value.astype(np.uint32, copy=False) if value.dtype.kind != "b" else value

  def vector(self, code: int, kind: str, waves, literal: int | None, high: bool = False) -> np.ndarray:
    """A vector source per lane, (waves, 32) register bits: a VGPR, or a scalar or constant broadcast to the lanes.
    16-bit kinds read the low or (`high`) high half."""
    if code < 256:
      constant = self.constant(code, kind, literal) is not None
      values = self.scalar(code, kind if width(kind) != 16 or constant else "b32", waves, literal)
      values = np.broadcast_to(values[:, None], (len(values), LANES))
      if width(kind) == 16:
        return ((values >> 16) if high and not constant else values).astype(np.uint16)
      return values
    register = code - 256
    low = self.v[register, waves]
    if width(kind) == 64:
      return low.astype(np.uint64) | self.v[register + 1, waves].astype(np.uint64) << np.uint64(32)
    if width(kind) == 16:
      return ((low >> 16) if high else low).astype(np.uint16)
    if dwords(kind) > 1:
      raise UnsupportedInstruction(f"a {kind} vector operand")
    return low

  def set_vector(
    self, register: int, kind: str, waves, value: np.ndarray, active: np.ndarray, high: bool = False
  ) -> None:
    bits = width(kind)
    value = raw_of(value, kind).reshape(active.shape)
    if bits == 32 and self.whole(waves, active):
      self.v[register] = value
    elif bits == 64 and self.whole(waves, active):
      self.v[register] = (value & np.uint64(0xFFFFFFFF)).astype(np.uint32)
      self.v[register + 1] = (value >> np.uint64(32)).astype(np.uint32)
    elif bits == 64:
      self.v[register, waves] = np.where(
        active, (value & np.uint64(0xFFFFFFFF)).astype(np.uint32), self.v[register, waves]
      )
      self.v[register + 1, waves] = np.where(
        active, (value >> np.uint64(32)).astype(np.uint32), self.v[register + 1, waves]
      )
    elif bits == 16:
      old, shift = self.v[register, waves], 16 if high else 0
      merged = old & np.uint32(~(0xFFFF << shift) & 0xFFFFFFFF) | value.astype(np.uint32) << np.uint32(shift)
      self.v[register, waves] = np.where(active, merged, old)
    else:
      self.v[register, waves] = np.where(active, value, self.v[register, waves])

  def active(self, waves) -> np.ndarray:
    """The lanes EXEC enables, per wave (unpacked again only after EXEC changed)."""
    bits = self.s[EXEC]
    if not np.array_equal(bits, self.exec_bits):
      self.exec_bits, self.exec_lanes, self.exec_full = bits.copy(), lanes_of(bits), bool((bits == 0xFFFFFFFF).all())
    return self.exec_lanes[waves]

  def whole(self, waves, active: np.ndarray) -> bool:
    """Whether a write under `active` reaches every lane of every wave (no merge with the old values is needed)."""
    return isinstance(waves, slice) and self.exec_full and active.shape[0] == self.exec_lanes.shape[0]

  # ***** scalar instructions *****

  def sopp(self, ins: Instruction, waves) -> None:
    name = ins.name
    if name in NO_OPS:
      return
    if name == "s_endpgm":
      self.done[waves] = True
    elif name == "s_barrier":
      self.barrier(waves)
    elif name in BRANCHES:
      condition = {
        "s_branch": None,
        "s_cbranch_scc0": lambda w: ~self.scc[w],
        "s_cbranch_scc1": lambda w: self.scc[w],
        "s_cbranch_vccz": lambda w: self.s[VCC, w] == 0,
        "s_cbranch_vccnz": lambda w: self.s[VCC, w] != 0,
        "s_cbranch_execz": lambda w: self.s[EXEC, w] == 0,
        "s_cbranch_execnz": lambda w: self.s[EXEC, w] != 0,
      }[name]
      taken = np.ones(self.pc[waves].shape, bool) if condition is None else condition(waves)
      self.pc[waves] = np.where(taken, branch_target(ins), self.pc[waves])
    elif name == "s_sendmsg" and ins["simm16"] == MSG_DEALLOC_VGPRS:
      return
    else:
      raise UnsupportedInstruction(name)

  def barrier(self, waves) -> None:
    """Hold the waves at the barrier; release every workgroup whose unfinished waves all reached it."""
    self.waiting[waves] = True
    arrived = (self.waiting | self.done).reshape(-1, self.per_group).all(axis=1)
    self.waiting &= ~np.repeat(arrived, self.per_group)

  def salu(self, ins: Instruction, waves) -> None:
    f, name, s = ins.fields, ins.name, signature(ins.name)
    if "_saveexec_" in name:
      return self.saveexec(ins, waves)
    if (semantics := SALU.get(name)) is None:
      raise UnsupportedInstruction(name)
    scc = self.scc[waves]
    if ins.encoding == "SOPK":
      current = typed(self.scalar(f["sdst"], s.destination, waves, None), s.destination)
      result, new_scc = semantics(current, np.full(len(scc), f["simm16"], np.uint32), scc)
    elif ins.encoding == "SOPC":
      sources = [
        typed(self.scalar(f[k], s.sources[n], waves, ins.literal), s.sources[n])
        for n, k in enumerate(("ssrc0", "ssrc1"))
      ]
      result, new_scc = semantics(*sources, scc)
    else:
      keys = ("ssrc0",) if ins.encoding == "SOP1" else ("ssrc0", "ssrc1")
      sources = [typed(self.scalar(f[k], s.sources[n], waves, ins.literal), s.sources[n]) for n, k in enumerate(keys)]
      if name.startswith(("s_bitset", "s_cmov_")):
        sources.append(typed(self.scalar(f["sdst"], s.destination, waves, None), s.destination))
      result, new_scc = semantics(*sources, scc)
    if result is not None:
      self.set_scalar(f["sdst"], s.destination, waves, raw_of(result, s.destination))
    if new_scc is not None:
      self.scc[waves] = new_scc

  def saveexec(self, ins: Instruction, waves) -> None:
    operation = ins.name[2:].rsplit("_saveexec", 1)[0]
    if operation not in SAVEEXEC or not ins.name.endswith("_b32"):
      raise UnsupportedInstruction(ins.name)
    source, old = self.scalar(ins["ssrc0"], "b32", waves, ins.literal), self.s[EXEC, waves].copy()
    self.set_scalar(ins["sdst"], "b32", waves, old)
    self.s[EXEC, waves] = SAVEEXEC[operation](source, old)
    self.scc[waves] = self.s[EXEC, waves] != 0

  def smem(self, ins: Instruction, waves) -> None:
    f, name = ins.fields, ins.name
    if not name.startswith("s_load_b"):
      raise UnsupportedInstruction(name)
    count = int(name[len("s_load_b") :]) // 32
    offset = f["offset"] - (1 << 21 if f["offset"] >> 20 else 0)
    base = self.scalar(f["sbase"] * 2, "b64", waves, None).astype(np.int64) + offset
    if f["soffset"] != NULL:
      base += self.s[f["soffset"], waves].astype(np.int64)
    data = self.memory.load(base.astype(np.uint64), 4 * count, name).view("<u4")
    for i in range(count):
      self.s[f["sdata"] + i, waves] = data[:, i]

  # ***** vector ALU *****

  def valu(self, ins: Instruction, waves) -> None:
    name = ins.name
    if name == "v_readfirstlane_b32":
      return self.readfirstlane(ins, waves)
    if name in ("v_readlane_b32", "v_writelane_b32"):
      return self.one_lane(ins, waves)
    if name in PACKED:
      return self.packed(ins, waves)
    if name.startswith("v_fma_mix"):
      return self.mixed(ins, waves)
    if (semantics := VALU.get(name)) is None:
      raise UnsupportedInstruction(name)
    f, e, s = ins.fields, ins.encoding, signature(name)
    active = self.active(waves)
    sources = [typed(raw, s.sources[n]) for n, raw in enumerate(self.valu_sources(ins, waves, s))]
    if e in ("VOP3", "VOP3SD"):
      sources = [
        self.modify(x, s.sources[n], f["neg"] >> n & 1, f.get("abs", 0) >> n & 1) for n, x in enumerate(sources)
      ]
    if name in ("v_div_fmas_f32", "v_div_fmas_f64"):
      sources.append(lanes_of(self.s[VCC, waves]).reshape(-1))
    flat = [x.reshape(-1) for x in sources]
    result = semantics(*flat)
    carry = None
    if isinstance(result, tuple):
      result, carry = result
    if e in ("VOP3", "VOP3SD") and f["clamp"] and name in SATURATING:
      result = self.saturate(name, flat, s)
    elif e in ("VOP3", "VOP3SD") and f["clamp"] and s.destination[0] in "biu":
      raise UnsupportedInstruction(f"{name} with the clamp bit (integer saturation of this instruction)")
    if e in ("VOP3", "VOP3SD"):
      result = self.output_modifiers(result, s.destination, f["omod"], f["clamp"] and name not in SATURATING)
    self.write_valu(ins, waves, s, result, carry, active)

  def valu_sources(self, ins: Instruction, waves, s) -> list[np.ndarray]:
    f, e, name = ins.fields, ins.encoding, ins.name
    if e == "VOP1":
      return [self.vop32_source(f["src0"], s.sources[0], waves, ins.literal)]
    if e in ("VOP2", "VOPC"):
      first = self.vop32_source(f["src0"], s.sources[0], waves, ins.literal)
      second = self.vop32_source(256 + f["vsrc1"], s.sources[1], waves, None)
      if name.startswith("v_fmaak"):
        return [first, second, np.full(first.shape, ins.literal, np.uint32)]
      if name.startswith("v_fmamk"):
        return [first, np.full(first.shape, ins.literal, np.uint32), second]
      if name in ("v_fmac_f32", "v_fmac_f16"):
        return [first, second, self.vop32_source(256 + f["vdst"], s.sources[0], waves, None)]
      if name in ("v_cndmask_b32", "v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32"):
        return [first, second, lanes_of(self.s[VCC, waves])]
      return [first, second]
    count = arity(name)
    opsel = f.get("opsel", 0)
    out = []
    for n in range(count):
      kind = s.sources[n]
      if kind == "mask":
        out.append(lanes_of(self.scalar(f[f"src{n}"], "b32", waves, ins.literal)))
      else:
        out.append(self.vector(f[f"src{n}"], kind, waves, ins.literal, bool(opsel >> n & 1)))
    if name in ("v_fmac_f32", "v_fmac_f16"):
      out[2] = self.vector(256 + f["vdst"], s.sources[0], waves, None, bool(opsel >> 3 & 1))
    return out

  def vop32_source(self, code: int, kind: str, waves, literal: int | None) -> np.ndarray:
    """A source of a 32-bit encoding: 16-bit VGPR operands name their half in the register number's top bit."""
    if width(kind) == 16 and code >= 256:
      return self.vector(256 + (code - 256 & 0x7F), kind, waves, literal, bool(code - 256 & 0x80))
    return self.vector(code, kind, waves, literal)

  @staticmethod
  def modify(x: np.ndarray, kind: str, negate: int, absolute: int) -> np.ndarray:
    """The neg/abs source modifiers: on a float, and on the sign bit of an untyped (bNN) operand; integers ignore
    them."""
    if not (negate or absolute) or kind[0] not in "fb":
      return x
    if kind[0] == "b":
      sign = x.dtype.type(1 << 8 * x.dtype.itemsize - 1)
      if absolute:
        x = x & ~sign
      return x ^ sign if negate else x
    if absolute:
      x = np.abs(x)
    return -x if negate else x

  @staticmethod
  def output_modifiers(result: np.ndarray, kind: str, omod: int, clamp: int) -> np.ndarray:
    if kind[0] != "f" or not (omod or clamp):
      return result
    result = result * result.dtype.type({0: 1.0, 1: 2.0, 2: 4.0, 3: 0.5}[omod])
    return (
      np.where(np.isnan(result), result.dtype.type(0), np.clip(result, 0, 1)).astype(result.dtype) if clamp else result
    )

  @staticmethod
  def saturate(name: str, sources: list[np.ndarray], s) -> np.ndarray:
    exact = SATURATING[name](sources[0].astype(np.int64), sources[1].astype(np.int64))
    info = np.iinfo(DTYPES[s.destination])
    return np.clip(exact, info.min, info.max).astype(DTYPES[s.destination])

  def write_valu(self, ins: Instruction, waves, s, result, carry, active: np.ndarray) -> None:
    f, e, name = ins.fields, ins.encoding, ins.name
    if s.destination == "mask":
      bits = bits_of(np.asarray(result).reshape(active.shape) & active)
      if name.startswith("v_cmpx"):
        self.s[EXEC, waves] = bits
      else:
        self.s[VCC if e == "VOPC" else f["vdst"], waves] = bits
      return
    if e in ("VOP1", "VOP2") and sixteen_bit(s.destination):
      register, high = f["vdst"] & 0x7F, bool(f["vdst"] & 0x80)
    else:
      register, high = f["vdst"], bool(f.get("opsel", 0) >> 3 & 1)
    self.set_vector(register, s.destination, waves, result, active, high)
    if carry is not None:
      bits = bits_of(np.asarray(carry).reshape(active.shape) & active)
      destination = f["sdst"] if e == "VOP3SD" else VCC
      if destination != NULL:
        self.s[destination, waves] = bits

  def readfirstlane(self, ins: Instruction, waves) -> None:
    values = (
      self.vop32_source(ins["src0"], "b32", waves, ins.literal)
      if ins.encoding == "VOP1"
      else self.vector(ins["src0"], "b32", waves, ins.literal)
    )
    exec_bits = self.s[EXEC, waves]
    lane = np.where(exec_bits == 0, 0, np.argmax(lanes_of(exec_bits), axis=1))
    self.s[ins["vdst"], waves] = np.asarray(values)[np.arange(len(lane)), lane]

  def one_lane(self, ins: Instruction, waves) -> None:
    """v_readlane_b32 (an SGPR gets one lane of a VGPR) and v_writelane_b32 (one lane of a VGPR gets a scalar), the lane
    chosen by a scalar source, its low bits as the wave's lanes count; EXEC plays no part (LLVM spills SGPRs this
    way)."""
    lane = (self.scalar(ins["src1"], "b32", waves, ins.literal) % LANES).astype(np.int64)
    each = np.arange(len(lane))
    if ins.name == "v_readlane_b32":
      self.s[ins["vdst"], waves] = np.asarray(self.vector(ins["src0"], "b32", waves, ins.literal))[each, lane]
      return
    rows = self.v[ins["vdst"], waves].copy()
    rows[each, lane] = self.scalar(ins["src0"], "b32", waves, ins.literal)
    self.v[ins["vdst"], waves] = rows

  def packed(self, ins: Instruction, waves) -> None:
    """A packed 16-bit instruction as its 16-bit operation on each half, the halves chosen by op_sel / op_sel_hi."""
    f, inner = ins.fields, PACKED[ins.name]
    s, semantics = signature(inner), VALU[inner]
    count = 3 if "fma" in inner or "mad" in inner else 2
    active = self.active(waves)
    halves = []
    for half, select in ((0, f["opsel"]), (1, f["opsel_hi"] | f["opsel_hi2"] << 2)):
      sources = []
      for n in range(count):
        kind = s.sources[n]
        x = typed(self.vector(f[f"src{n}"], kind, waves, ins.literal, bool(select >> n & 1)), kind)
        negate = (f["neg"] if half == 0 else f["neg_hi"]) >> n & 1
        sources.append(self.modify(x, kind, negate, 0).reshape(-1))
      halves.append(raw_of(semantics(*sources), s.destination).astype(np.uint32))
    packed = halves[0] | halves[1] << np.uint32(16)
    self.set_vector(f["vdst"], "b32", waves, packed, active)

  def mixed(self, ins: Instruction, waves) -> None:
    """v_fma_mix*: each source an f32 or (op_sel_hi) an f16 half that op_sel picks; the result f32 or an f16 half."""
    f, name = ins.fields, ins.name
    if (semantics := VALU.get(name)) is None:
      raise UnsupportedInstruction(name)
    active, sources = self.active(waves), []
    select_hi = f["opsel_hi"] | f["opsel_hi2"] << 2
    for n in range(3):
      if select_hi >> n & 1:
        x = typed(self.vector(f[f"src{n}"], "f16", waves, ins.literal, bool(f["opsel"] >> n & 1)), "f16").astype(
          np.float32
        )
      else:
        x = typed(self.vector(f[f"src{n}"], "f32", waves, ins.literal), "f32")
      if f["neg_hi"] >> n & 1:
        x = np.abs(x)  # in the mix instructions neg_hi is the abs modifier
      if f["neg"] >> n & 1:
        x = -x
      sources.append(x.reshape(-1))
    result = semantics(*sources)
    if f["clamp"]:
      result = np.where(np.isnan(result), result.dtype.type(0), np.clip(result, 0, 1)).astype(result.dtype)
    if name == "v_fma_mix_f32":
      self.set_vector(f["vdst"], "f32", waves, result, active)
    else:
      self.set_vector(f["vdst"], "f16", waves, result, active, name == "v_fma_mixhi_f16")

  def vopd(self, ins: Instruction, waves) -> None:
    """Two VALU operations issued together: every source is read before either destination is written."""
    f, active = ins.fields, self.active(waves)
    results = []
    for half, side in zip(ins.name.split("::"), "xy"):
      name = "v_" + half[len("v_dual_") :]
      semantics = VALU.get(name)
      if semantics is None:
        raise UnsupportedInstruction(half)
      first = self.vector(f[f"src{side}0"], "f32", waves, ins.literal)
      second = self.v[f[f"vsrc{side}1"], waves]
      literal = np.full(first.shape, ins.literal or 0, np.uint32)
      kind = signature(name).sources[0]
      if name == "v_mov_b32":
        raw = [first]
      elif name == "v_fmaak_f32":
        raw = [first, second, literal]
      elif name == "v_fmamk_f32":
        raw = [first, literal, second]
      elif name == "v_fmac_f32":
        raw = [first, second, self.v[f[f"vdst{side}"], waves]]
      elif name == "v_cndmask_b32":
        raw = [first, second, lanes_of(self.s[VCC, waves])]
      else:
        raw = [first, second]
      sources = [typed(x, "mask" if x.dtype == bool else kind).reshape(-1) for x in raw]
      results.append((f[f"vdst{side}"], signature(name).destination, semantics(*sources)))
    for register, kind, value in results:
      self.set_vector(register, kind, waves, value, active)

  # ***** vector memory *****

  def lane_addresses(self, ins: Instruction, waves, active: np.ndarray) -> np.ndarray:
    f = ins.fields
    offset = f["offset"] - (1 << 13 if f["offset"] >> 12 else 0)
    if f["saddr"] in (NULL, 0x7F):
      address = self.vector(256 + f["addr"], "b64", waves, None).astype(np.int64)
    else:
      base = self.scalar(f["saddr"], "b64", waves, None).astype(np.int64)
      address = base[:, None] + self.v[f["addr"], waves].astype(np.int64)
    return (address + offset)[active].astype(np.uint64)

  def global_memory(self, ins: Instruction, waves) -> None:
    name, f = ins.name, ins.fields
    active = self.active(waves)
    if not active.any():
      return
    access = Access.of(name)
    addresses = self.lane_addresses(ins, waves, active)
    if access.store:
      return self.memory.store(addresses, self.store_bytes(f["data"], waves, active, access), name)
    self.write_loaded(access, self.memory.load(addresses, access.size, name), f["vdst"], waves, active)

  def store_bytes(self, register: int, waves, active: np.ndarray, access: Access) -> np.ndarray:
    """(lanes, size) bytes a store takes from the active lanes' registers (a d16_hi store: the high half)."""
    words = self.v[register : register + max(1, access.size // 4), waves][:, active].T.astype("<u4")
    raw = words.view(np.uint8).reshape(words.shape[0], -1)
    start = 2 if access.high else 0
    return np.ascontiguousarray(raw[:, start : start + access.size])

  def write_loaded(self, access: Access, loaded: np.ndarray, vdst: int, waves, active: np.ndarray) -> None:
    """Loaded bytes (lanes, size) into the destination VGPRs of the active lanes, extended or merged into a half."""
    if access.size >= 4:
      words = loaded.view("<u4")
      for i in range(access.size // 4):
        column = self.v[vdst + i, waves]
        column[active] = words[:, i]
        self.v[vdst + i, waves] = column
      return
    value = loaded.view({1: "<u1", 2: "<u2"}[access.size])[:, 0].astype(np.uint32)
    if access.element in ("i8", "i16"):
      value = value.astype({"i8": np.int8, "i16": np.int16}[access.element]).astype(np.int32).view(np.uint32)
    column = self.v[vdst, waves]
    if access.d16:
      value &= np.uint32(0xFFFF)
      keep = np.uint32(0x0000FFFF if access.high else 0xFFFF0000)
      column[active] = column[active] & keep | (value << np.uint32(16) if access.high else value)
    else:
      column[active] = value
    self.v[vdst, waves] = column

  def ds(self, ins: Instruction, waves) -> None:
    f, name = ins.fields, ins.name
    active = self.active(waves)
    if name == "ds_nop" or not active.any():
      return
    if not name.startswith(("ds_load", "ds_store")) or "rtn" in name:
      raise UnsupportedInstruction(name)
    access = Access.of(name)
    groups = np.broadcast_to(self.group[waves][:, None], active.shape)[active].astype(np.int64)
    base = self.v[f["addr"], waves][active].astype(np.int64)
    if "2addr" in name:
      scale = access.size * (64 if "stride64" in name else 1)
      offsets = [f["offset0"] * scale, f["offset1"] * scale]
    else:
      offsets = [f["offset0"] | f["offset1"] << 8]
    lds = self.lds

    def place(offset: int) -> np.ndarray:
      address = base + offset
      bad = (address < 0) | (address + access.size > self.launch.lds_bytes)
      if bad.any():
        first = int(address[np.argmax(bad)])
        raise MemoryFault(
          first,
          f"{access.size} bytes at LDS address {first:#x} are outside the workgroup's {self.launch.lds_bytes} bytes of "
          "LDS",
        )
      return groups * lds.shape[1] + address

    flat, registers = lds.reshape(-1), max(1, access.size // 4)
    if access.store:
      for n, offset in enumerate(offsets):
        scatter(flat, place(offset), self.store_bytes(f["data0" if n == 0 else "data1"], waves, active, access))
      return
    for n, offset in enumerate(offsets):
      self.write_loaded(access, gather(flat, place(offset), access.size), f["vdst"] + n * registers, waves, active)


@dataclass(frozen=True)
class Access:
  """What a memory instruction's name says: a load or store, its element (u8, i16, b32, b128, ...) and size in bytes,
  and whether it moves a 16-bit half (d16; `high`: the upper one)."""

  store: bool
  element: str
  size: int
  d16: bool
  high: bool

  @staticmethod
  @functools.cache
  def of(name: str) -> Access:
    words = name.split("_")[1:]
    element = next((w for w in words if w[0] in "bui" and w[1:].isdigit()), None)
    if element is None:
      raise UnsupportedInstruction(name)
    return Access("store" in words, element, int(element[1:]) // 8, "d16" in words, "hi" in words)


def implemented(name: str) -> bool:
  """Whether the executor has semantics for the instruction `name` (a VOPD pair as "x::y")."""
  if "::" in name:
    return all(implemented("v_" + half[len("v_dual_") :]) for half in name.split("::"))
  if name in VALU or name in SALU or name in NO_OPS or name in CACHE_CONTROL or name in BRANCHES:
    return True
  if name in PACKED:
    return PACKED[name] in VALU
  if "_saveexec_" in name:
    return name.endswith("_b32") and name[2:].rsplit("_saveexec", 1)[0] in SAVEEXEC
  memory = (
    name.startswith(("global_load_", "global_store_", "ds_load_", "ds_store_"))
    and "rtn" not in name
    and "addtid" not in name
  )
  lanes = ("v_readfirstlane_b32", "v_readlane_b32", "v_writelane_b32")
  return memory or name in ("s_endpgm", "s_barrier", "s_sendmsg", "ds_nop", *lanes) or (name.startswith("s_load_b"))


def split_groups(launch: Launch) -> list[list[tuple[int, int, int]]]:
  """The grid's workgroups in batches whose register files fit BATCH_BYTES together."""
  gx, gy, gz = launch.grid
  groups = [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
  waves = -(-(launch.local[0] * launch.local[1] * launch.local[2]) // LANES)
  per_batch = max(1, BATCH_BYTES // max(1, waves * LANES * 4 * max(launch.vgprs, 1)))
  return [groups[i : i + per_batch] for i in range(0, len(groups), per_batch)]


@dataclass
class Counters:
  """What the executor ran in this process: dispatches, steps, wave-instructions and the seconds they took."""

  dispatches: int = 0
  steps: int = 0
  wave_instructions: int = 0
  seconds: float = 0.0


COUNTERS = Counters()


def run(launch: Launch, memory: GlobalMemory) -> int:
  """Execute a dispatch to its end; the number of wave-instructions run. ExecutionFault or UnsupportedInstruction stop
  it."""
  start, total = time.perf_counter(), 0
  for batch in split_groups(launch):
    steps, executed = Waves(launch, memory, batch).run()
    COUNTERS.steps, total = COUNTERS.steps + steps, total + executed
  COUNTERS.dispatches, COUNTERS.wave_instructions = COUNTERS.dispatches + 1, COUNTERS.wave_instructions + total
  COUNTERS.seconds += time.perf_counter() - start
  return total
