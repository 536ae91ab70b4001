"""An RDNA3 (gfx11) instruction decoder: the bytes of a kernel's code to `Instruction`s (encoding, opcode, name, the
encoding's fields, the literal), and each back to text in LLVM's assembly syntax, so that a decoded kernel can be
compared line by line with the assembly LLVM printed for it. Encodings and field positions follow AMD's RDNA3
instruction-set reference. Bytes that are no instruction raise DecodeError naming the offset and the word."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from pytc.runtime.amd.rdna3 import opcodes
from pytc.runtime.amd.rdna3.operands import dwords, signature


class DecodeError(ValueError):
  """The code holds a word that is no RDNA3 instruction pytc decodes."""


# field name -> (low bit, high bit exclusive) over the instruction's first 64 bits
LAYOUTS: dict[str, dict[str, tuple[int, int]]] = {
  "SOP2": {"ssrc0": (0, 8), "ssrc1": (8, 16), "sdst": (16, 23), "op": (23, 30)},
  "SOPK": {"simm16": (0, 16), "sdst": (16, 23), "op": (23, 28)},
  "SOP1": {"ssrc0": (0, 8), "op": (8, 16), "sdst": (16, 23)},
  "SOPC": {"ssrc0": (0, 8), "ssrc1": (8, 16), "op": (16, 23)},
  "SOPP": {"simm16": (0, 16), "op": (16, 23)},
  "SMEM": {
    "sbase": (0, 6),
    "sdata": (6, 13),
    "dlc": (13, 14),
    "glc": (14, 15),
    "op": (18, 26),
    "offset": (32, 53),
    "soffset": (57, 64),
  },
  "VOP1": {"src0": (0, 9), "op": (9, 17), "vdst": (17, 25)},
  "VOP2": {"src0": (0, 9), "vsrc1": (9, 17), "vdst": (17, 25), "op": (25, 31)},
  "VOPC": {"src0": (0, 9), "vsrc1": (9, 17), "op": (17, 25)},
  "VOP3": {
    "vdst": (0, 8),
    "abs": (8, 11),
    "opsel": (11, 15),
    "clamp": (15, 16),
    "op": (16, 26),
    "src0": (32, 41),
    "src1": (41, 50),
    "src2": (50, 59),
    "omod": (59, 61),
    "neg": (61, 64),
  },
  "VOP3SD": {
    "vdst": (0, 8),
    "sdst": (8, 15),
    "clamp": (15, 16),
    "op": (16, 26),
    "src0": (32, 41),
    "src1": (41, 50),
    "src2": (50, 59),
    "omod": (59, 61),
    "neg": (61, 64),
  },
  "VOP3P": {
    "vdst": (0, 8),
    "neg_hi": (8, 11),
    "opsel": (11, 14),
    "opsel_hi2": (14, 15),
    "clamp": (15, 16),
    "op": (16, 23),
    "src0": (32, 41),
    "src1": (41, 50),
    "src2": (50, 59),
    "opsel_hi": (59, 61),
    "neg": (61, 64),
  },
  "VOPD": {
    "srcx0": (0, 9),
    "vsrcx1": (9, 17),
    "opy": (17, 22),
    "opx": (22, 26),
    "srcy0": (32, 41),
    "vsrcy1": (41, 49),
    "vdsty": (49, 56),
    "vdstx": (56, 64),
  },
  "DS": {
    "offset0": (0, 8),
    "offset1": (8, 16),
    "gds": (17, 18),
    "op": (18, 26),
    "addr": (32, 40),
    "data0": (40, 48),
    "data1": (48, 56),
    "vdst": (56, 64),
  },
  "FLAT": {
    "offset": (0, 13),
    "dlc": (13, 14),
    "glc": (14, 15),
    "slc": (15, 16),
    "seg": (16, 18),
    "op": (18, 25),
    "addr": (32, 40),
    "data": (40, 48),
    "saddr": (48, 55),
    "sve": (55, 56),
    "vdst": (56, 64),
  },
  "MUBUF": {
    "offset": (0, 12),
    "slc": (12, 13),
    "dlc": (13, 14),
    "glc": (14, 15),
    "op": (18, 26),
    "vaddr": (32, 40),
    "vdata": (40, 48),
    "srsrc": (48, 53),
    "offen": (54, 55),
    "idxen": (55, 56),
    "soffset": (56, 64),
  },
}
SIXTY_FOUR_BIT = {"SMEM", "VOP3", "VOP3SD", "VOP3P", "VOPD", "DS", "FLAT", "MUBUF"}
SOURCES = {
  "SOP2": ("ssrc0", "ssrc1"),
  "SOP1": ("ssrc0",),
  "SOPC": ("ssrc0", "ssrc1"),
  "VOP1": ("src0",),
  "VOP2": ("src0",),
  "VOPC": ("src0",),
  "VOP3": ("src0", "src1", "src2"),
  "VOP3SD": ("src0", "src1", "src2"),
  "VOP3P": ("src0", "src1", "src2"),
  "VOPD": ("srcx0", "srcy0"),
}
LITERAL, DPP16, DPP8 = 255, 250, 233
FLAT_SEGMENTS = {0: "FLAT", 1: "SCRATCH", 2: "GLOBAL"}
ALWAYS_LITERAL = {
  "v_fmaak_f32",
  "v_fmamk_f32",
  "v_fmaak_f16",
  "v_fmamk_f16",
  "v_dual_fmaak_f32",
  "v_dual_fmamk_f32",
  "s_setreg_imm32_b32",
}
VOPD_Y_ONLY = {16: "v_dual_add_nc_u32", 17: "v_dual_lshlrev_b32", 18: "v_dual_and_b32"}


@dataclass(frozen=True, eq=False)
class Instruction:
  """One decoded instruction at byte `pc` of the code: its encoding (SOP2, VOP3, GLOBAL, ...), opcode and name, the
  encoding's fields by name, and the 32-bit literal that follows it when it has one."""

  pc: int
  size: int
  encoding: str
  opcode: int
  name: str
  fields: dict[str, int] = field(repr=False)
  literal: int | None = None

  def __getitem__(self, key: str) -> int:
    return self.fields[key]

  @property
  def text(self) -> str:
    return render(self)


def bits(word: int, span: tuple[int, int]) -> int:
  return word >> span[0] & (1 << span[1] - span[0]) - 1


def encoding_of(word: int) -> str:
  """The encoding a first dword announces."""
  if word >> 31 == 0:
    return "VOP2" if word >> 25 != 0x3E and word >> 25 != 0x3F else ("VOPC" if word >> 25 == 0x3E else "VOP1")
  if word >> 30 == 2:
    head = word >> 23
    if head == 0x17D:
      return "SOP1"
    if head == 0x17E:
      return "SOPC"
    if head == 0x17F:
      return "SOPP"
    return "SOPK" if word >> 28 == 0xB else "SOP2"
  return {0x35: "VOP3", 0x32: "VOPD", 0x33: "VOP3P", 0x36: "DS", 0x37: "FLAT", 0x3D: "SMEM", 0x38: "MUBUF"}.get(
    word >> 26, ""
  )


def table(encoding: str) -> dict[int, str]:
  return getattr(opcodes, encoding)


def decode_one(code: bytes, pc: int) -> Instruction:
  """The instruction at byte `pc` of `code`."""
  if pc + 4 > len(code):
    raise DecodeError(f"an instruction at {pc:#x} runs past the code's end")
  word = struct.unpack_from("<I", code, pc)[0]
  encoding = encoding_of(word)
  if encoding == "VOP3P" and word >> 24 != 0xCC:
    encoding = ""
  if not encoding:
    raise DecodeError(f"the word {word:#010x} at {pc:#x} starts no RDNA3 encoding pytc decodes")
  size = 8 if encoding in SIXTY_FOUR_BIT else 4
  if pc + size > len(code):
    raise DecodeError(f"a {encoding} instruction at {pc:#x} runs past the code's end")
  value = int.from_bytes(code[pc : pc + size], "little")
  layout = LAYOUTS["VOP3" if encoding == "VOP3SD" else encoding]
  fields = {name: bits(value, span) for name, span in layout.items()}
  if encoding == "VOP3" and fields["op"] in opcodes.VOP3SD:
    encoding, fields = "VOP3SD", {name: bits(value, span) for name, span in LAYOUTS["VOP3SD"].items()}
  name, opcode = instruction_name(encoding, fields, word, pc)
  if encoding == "FLAT":
    encoding = FLAT_SEGMENTS.get(fields["seg"], "FLAT")
  if encoding == "VOPD":
    fields["vdsty"] = fields["vdsty"] << 1 | (fields["vdstx"] & 1 ^ 1)
  sources = [fields[s] for s in SOURCES.get(encoding, ())]
  if encoding in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD", "VOP3P") and fields.get("src0") in (DPP16, DPP8):
    raise DecodeError(f"{name} at {pc:#x} uses DPP, which pytc's kernels never contain")
  literal = None
  if LITERAL in sources or any(part in ALWAYS_LITERAL for part in name.split("::")):
    if pc + size + 4 > len(code):
      raise DecodeError(f"the literal of {name} at {pc:#x} runs past the code's end")
    literal = struct.unpack_from("<I", code, pc + size)[0]
    size += 4
  return Instruction(pc, size, encoding, opcode, name, fields, literal)


def instruction_name(encoding: str, fields: dict[str, int], word: int, pc: int) -> tuple[str, int]:
  if encoding == "VOPD":
    x, y = opcodes.VOPD.get(fields["opx"]), opcodes.VOPD.get(fields["opy"]) or VOPD_Y_ONLY.get(fields["opy"])
    if x is None or y is None or fields["opx"] >= 16:
      raise DecodeError(f"VOPD word {word:#010x} at {pc:#x} has unknown opcodes")
    return f"{x}::{y}", fields["opx"] << 5 | fields["opy"]
  name = table(FLAT_SEGMENTS.get(fields["seg"], "FLAT") if encoding == "FLAT" else encoding).get(fields["op"])
  if name is None:
    raise DecodeError(f"{encoding} opcode {fields['op']} (word {word:#010x} at {pc:#x}) is no RDNA3 instruction")
  return name, fields["op"]


ENCODING_BITS = {
  "SOP2": (0b10, 30),
  "SOPK": (0b1011, 28),
  "SOP1": (0x17D, 23),
  "SOPC": (0x17E, 23),
  "SOPP": (0x17F, 23),
  "SMEM": (0x3D, 26),
  "VOP1": (0x3F, 25),
  "VOP2": (0, 31),
  "VOPC": (0x3E, 25),
  "VOP3": (0x35, 26),
  "VOP3SD": (0x35, 26),
  "VOP3P": (0xCC, 24),
  "VOPD": (0x32, 26),
  "DS": (0x36, 26),
  "GLOBAL": (0x37, 26),
  "FLAT": (0x37, 26),
  "SCRATCH": (0x37, 26),
  "MUBUF": (0x38, 26),
}


def encode(encoding: str, name: str, literal: int | None = None, **fields: int) -> bytes:
  """The bytes of one instruction (the inverse of `decode_one`, for tests and tools): its encoding, the opcode of
  `name` in that encoding's table, the given fields (the rest zero) and the literal when given."""
  layout = LAYOUTS["FLAT" if encoding in ("GLOBAL", "SCRATCH") else encoding]
  value_bits, shift = ENCODING_BITS[encoding]
  word = value_bits << shift
  if encoding == "VOPD":
    x, y = name.split("::")
    codes = {n: code for code, n in {**opcodes.VOPD, **VOPD_Y_ONLY}.items()}
    vdstx, vdsty = fields.get("vdstx", 0), fields.get("vdsty", 1)
    if vdsty & 1 != (vdstx & 1 ^ 1):
      raise ValueError("VOPD: one destination must be an even VGPR, the other an odd one")
    fields = {**fields, "opx": codes[x], "opy": codes[y], "vdsty": vdsty >> 1}
  else:
    opcode = {n: code for code, n in table(encoding).items()}.get(name)
    if opcode is None:
      raise ValueError(f"{name} is no {encoding} instruction")
    word |= opcode << layout["op"][0]
  if encoding in ("GLOBAL", "SCRATCH"):
    fields.setdefault("seg", 2 if encoding == "GLOBAL" else 1)
  for key, value in fields.items():
    low, high = layout[key]
    word |= (value & (1 << high - low) - 1) << low
  size = 8 if encoding in SIXTY_FOUR_BIT or encoding in ("GLOBAL", "SCRATCH") else 4
  return word.to_bytes(size, "little") + (b"" if literal is None else (literal & 0xFFFFFFFF).to_bytes(4, "little"))


def decode(code: bytes, start: int = 0, end: int | None = None) -> list[Instruction]:
  """Every instruction from byte `start` up to `end` (the code's end), in order."""
  out, pc, end = [], start, len(code) if end is None else end
  while pc < end:
    out.append(decode_one(code, pc))
    pc += out[-1].size
  return out


# ***** LLVM's assembly syntax *****

SPECIAL = {
  106: "vcc_lo",
  107: "vcc_hi",
  124: "null",
  125: "m0",
  126: "exec_lo",
  127: "exec_hi",
  235: "src_shared_base",
  236: "src_shared_limit",
  237: "src_private_base",
  238: "src_private_limit",
  251: "src_vccz",
  252: "src_execz",
  253: "src_scc",
  254: "src_lds_direct",
}
FLOAT_CONSTANTS = {
  240: "0.5",
  241: "-0.5",
  242: "1.0",
  243: "-1.0",
  244: "2.0",
  245: "-2.0",
  246: "4.0",
  247: "-4.0",
  248: "0.15915494",
}
DELAY_IDS = [
  "NO_DEP",
  "VALU_DEP_1",
  "VALU_DEP_2",
  "VALU_DEP_3",
  "VALU_DEP_4",
  "TRANS32_DEP_1",
  "TRANS32_DEP_2",
  "TRANS32_DEP_3",
  "FMA_ACCUM_CYCLE_1",
  "SALU_CYCLE_1",
  "SALU_CYCLE_2",
  "SALU_CYCLE_3",
]
DELAY_SKIPS = ["SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"]
MSG_DEALLOC_VGPRS = 3
UNARY = frozenset(opcodes.VOP1.values())
BRANCHES = {
  "s_branch",
  "s_cbranch_scc0",
  "s_cbranch_scc1",
  "s_cbranch_vccz",
  "s_cbranch_vccnz",
  "s_cbranch_execz",
  "s_cbranch_execnz",
}


def sixteen_bit(kind: str) -> bool:
  return kind[-2:] == "16" and kind[0] in "fbiu"


def scalar_text(code: int, count: int = 1) -> str:
  if code <= 105:
    return f"s{code}" if count == 1 else f"s[{code}:{code + count - 1}]"
  if 108 <= code <= 123:
    return f"ttmp{code - 108}" if count == 1 else f"ttmp[{code - 108}:{code - 108 + count - 1}]"
  if code in (106, 126) and count == 2:
    return SPECIAL[code][:-3]
  return SPECIAL.get(code, f"?{code}")


def vector_text(register: int, count: int = 1, half: str = "") -> str:
  return f"v{register}{half}" if count == 1 else f"v[{register}:{register + count - 1}]"


def source_text(code: int, kind: str, literal: int | None, half: str = "") -> str:
  """A 9-bit source operand: a VGPR (256+), an SGPR or special register, an inline constant or the literal."""
  if code >= 256:
    return vector_text(code - 256, dwords(kind), half)
  if 128 <= code <= 192:
    return str(code - 128)
  if 193 <= code <= 208:
    return str(192 - code)
  if code in FLOAT_CONSTANTS:
    return "0.15915494309189532" if code == 248 and kind == "f64" else FLOAT_CONSTANTS[code]
  if code == LITERAL:
    return f"0x{literal & 0xFFFF if sixteen_bit(kind) else literal:x}"
  return scalar_text(code, dwords(kind))


def modified(text: str, negate: bool, absolute: bool) -> str:
  if absolute:
    text = f"|{text}|"
  return f"-{text}" if negate else text


def render(i: Instruction) -> str:
  f, name = i.fields, i.name
  e = i.encoding
  if e in ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP"):
    return name + scalar_operands(i)
  if e == "SMEM":
    count = dwords(name.split("_")[-1]) if name.startswith(("s_load", "s_buffer_load")) else 1
    offset = f"0x{f['offset']:x}" if f["soffset"] == 124 else f"s{f['soffset']} offset:0x{f['offset']:x}"
    return f"{name} {scalar_text(f['sdata'], count)}, {scalar_text(f['sbase'] * 2, 2)}, {offset}" + flags(
      f, ("glc", "dlc")
    )
  if e in ("GLOBAL", "FLAT", "SCRATCH"):
    return memory_text(i)
  if e == "DS":
    return ds_text(i)
  if e == "MUBUF":
    return name
  if e == "VOPD":
    x, y = name.split("::")
    return f"{vopd_half(i, x, 'x')} :: {vopd_half(i, y, 'y')}"
  return vector_operation(i)


def flags(f: dict[str, int], names: tuple[str, ...]) -> str:
  return "".join(f" {n}" for n in names if f.get(n))


def scalar_operands(i: Instruction) -> str:
  f, s, e = i.fields, signature(i.name), i.encoding
  if e == "SOPP":
    return sopp_text(i)
  if e == "SOPK":
    return f" {scalar_text(f['sdst'], dwords(s.destination))}, 0x{f['simm16']:x}"
  sources = [source_text(f[k], s.sources[n], i.literal) for n, k in enumerate(SOURCES[e])]
  if e == "SOPC":
    return " " + ", ".join(sources)
  return f" {scalar_text(f['sdst'], dwords(s.destination))}, " + ", ".join(sources)


def sopp_text(i: Instruction) -> str:
  value, name = i.fields["simm16"], i.name
  if name == "s_waitcnt":
    vm, exp, lgkm = value >> 10 & 0x3F, value & 7, value >> 4 & 0x3F
    parts = [
      f"vmcnt({vm})" if vm != 0x3F else "",
      f"expcnt({exp})" if exp != 7 else "",
      f"lgkmcnt({lgkm})" if lgkm != 0x3F else "",
    ]
    return " " + (" ".join(p for p in parts if p) or "vmcnt(63) expcnt(7) lgkmcnt(63)")
  if name == "s_delay_alu":
    first, skip, second = value & 0xF, value >> 4 & 7, value >> 7 & 0xF
    parts = [f"instid0({DELAY_IDS[first]})"] if first else []
    if skip:
      parts.append(f"instskip({DELAY_SKIPS[skip]})")
    if second:
      parts.append(f"instid1({DELAY_IDS[second]})")
    return " " + " | ".join(parts)
  if name in BRANCHES:
    return f" pc:{branch_target(i):#x}"
  if name in ("s_endpgm", "s_barrier", "s_code_end", "s_icache_inv", "s_wakeup", "s_ttracedata", "s_endpgm_saved"):
    return ""
  if name == "s_waitcnt_depctr" and value & 0xFFF == 0xF9F:
    return f" depctr_va_vdst({value >> 12})"
  if name == "s_sendmsg" and value == MSG_DEALLOC_VGPRS:
    return " sendmsg(MSG_DEALLOC_VGPRS)"
  return f" {value}" if name == "s_nop" else f" 0x{value:x}"


def branch_target(i: Instruction) -> int:
  offset = i.fields["simm16"] - (1 << 16 if i.fields["simm16"] >> 15 else 0)
  return i.pc + 4 + 4 * offset


def memory_text(i: Instruction) -> str:
  f, name = i.fields, i.name
  size = name.split("_")[-1]
  count = 1 if "d16" in name or size in ("u8", "i8", "u16", "i16", "b8", "b16") else dwords(size)
  global_ = i.encoding == "GLOBAL"
  saddr_off = f["saddr"] in (124, 125, 0x7F)
  if global_ or i.encoding == "FLAT":
    address = vector_text(f["addr"], 2 if saddr_off and global_ else 1)
  else:
    address = vector_text(f["addr"]) if f["sve"] else "off"
  saddr = "off" if saddr_off else scalar_text(f["saddr"], 2 if global_ else 1)
  offset = f["offset"] - (1 << 13 if f["offset"] >> 12 and i.encoding != "FLAT" else 0)
  tail = (f" offset:{offset}" if offset else "") + flags(f, ("glc", "slc", "dlc"))
  operands = [address, vector_text(f["data"], count)] if "store" in name else [vector_text(f["vdst"], count), address]
  if i.encoding == "FLAT":
    return f"{name} " + ", ".join(operands) + tail
  return f"{name} " + ", ".join([*operands, saddr]) + tail


def ds_text(i: Instruction) -> str:
  f, name = i.fields, i.name
  size = name.split("_")[-1]
  count = 1 if size in ("u8", "i8", "u16", "i16", "b8", "b16") or "d16" in name else dwords(size)
  two = "2addr" in name
  if two:
    offsets = (f" offset0:{f['offset0']}" if f["offset0"] else "") + (
      f" offset1:{f['offset1']}" if f["offset1"] else ""
    )
  else:
    offset = f["offset0"] | f["offset1"] << 8
    offsets = f" offset:{offset}" if offset else ""
  if "store" in name and "rtn" not in name:
    data = [vector_text(f["data0"], count)] + ([vector_text(f["data1"], count)] if two else [])
    return f"{name} {vector_text(f['addr'])}, " + ", ".join(data) + offsets
  if "load" in name:
    return f"{name} {vector_text(f['vdst'], count * (2 if two else 1))}, {vector_text(f['addr'])}" + offsets
  return f"{name} {vector_text(f['vdst'], count)}, {vector_text(f['addr'])}, {vector_text(f['data0'], count)}" + offsets


def has_vop3_form(name: str) -> bool:
  return name not in ALWAYS_LITERAL


def vector_operation(i: Instruction) -> str:
  f, name, e, s = i.fields, i.name, i.encoding, signature(i.name)
  compare = name.startswith("v_cmp")
  exec_compare = name.startswith("v_cmpx")
  if e in ("VOP1", "VOP2", "VOPC"):
    suffix = "_e32" if has_vop3_form(name) else ""
    t16 = [sixteen_bit(k) for k in (s.destination, *s.sources)]

    def src0() -> str:
      code = f["src0"]
      if t16[1] and code >= 256:
        return vector_text(code - 256 & 0x7F, 1, ".h" if code & 0x80 else ".l")
      return source_text(code, s.sources[0], i.literal, ".l" if t16[1] else "")

    def vsrc1() -> str:
      code = f["vsrc1"]
      if t16[2]:
        return vector_text(code & 0x7F, 1, ".h" if code & 0x80 else ".l")
      return vector_text(code, dwords(s.sources[1]))

    def vdst() -> str:
      code = f["vdst"]
      if t16[0] and s.destination != "mask":
        return vector_text(code & 0x7F, 1, ".h" if code & 0x80 else ".l")
      return vector_text(code, dwords(s.destination))

    if e == "VOP1":
      if name == "v_nop":
        return name + suffix
      if name == "v_readfirstlane_b32":
        return f"{name} {scalar_text(f['vdst'])}, {src0()}"
      return f"{name}{suffix} {vdst()}, {src0()}"
    if e == "VOPC":
      return f"{name}{suffix} " + ", ".join(([] if exec_compare else ["vcc_lo"]) + [src0(), vsrc1()])
    literal = f"0x{i.literal:x}" if i.literal is not None else ""
    if name.startswith("v_fmaak"):
      return f"{name} {vdst()}, {src0()}, {vsrc1()}, {literal}"
    if name.startswith("v_fmamk"):
      return f"{name} {vdst()}, {src0()}, {literal}, {vsrc1()}"
    operands = [vdst(), src0(), vsrc1()]
    if name in ("v_cndmask_b32",):
      operands.append("vcc_lo")
    if name in ("v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32"):
      operands = [vdst(), "vcc_lo", src0(), vsrc1(), "vcc_lo"]
    return f"{name}{suffix} " + ", ".join(operands)
  return vop3_text(i, compare, exec_compare)


def vop3_sources(name: str) -> int:
  """How many sources a VOP3 instruction reads."""
  if name.startswith("v_cmp"):
    return 2
  base = name[2:]
  three = (
    "fma",
    "mad",
    "med3",
    "min3",
    "max3",
    "bfe",
    "bfi",
    "alignbit",
    "alignbyte",
    "div_fixup",
    "div_fmas",
    "div_scale",
    "lerp",
    "sad",
    "cndmask",
    "add3",
    "lshl_add",
    "add_lshl",
    "lshl_or",
    "and_or",
    "or3",
    "xad",
    "maxmin",
    "minmax",
    "perm",
    "dot2",
    "cubema",
    "cubesc",
    "cubetc",
    "cubeid",
    "msad",
    "qsad",
    "mqsad",
    "add_co_ci",
    "sub_co_ci",
    "subrev_co_ci",
    "permlane",
  )
  if any(base.startswith(t) for t in three) and not base.startswith("mad_u32_u16") or base in ("fmac_f32", "fmac_f16"):
    return 3
  return 1 if name in UNARY else 2


def vop3_text(i: Instruction, compare: bool, exec_compare: bool) -> str:
  f, name, e, s = i.fields, i.name, i.encoding, signature(i.name)
  vop3p = e == "VOP3P"
  count = vop3_sources(name) if not vop3p else (3 if "fma" in name or "mad" in name or "dot" in name else 2)
  if name in ("v_cndmask_b32", "v_cndmask_b16"):
    count = 3
  suffix = "_e64" if not vop3p and i.opcode < 512 and name != "v_cndmask_b16" else ""
  t16 = not vop3p
  opsel = f.get("opsel", 0)
  parts = []
  for n in range(count):
    kind = s.sources[n]
    half = (".h" if opsel >> n & 1 else ".l") if t16 and sixteen_bit(kind) else ""
    text = source_text(f[f"src{n}"], kind, i.literal, half)
    if kind != "mask":
      text = modified(text, bool(f["neg"] >> n & 1), bool(f.get("abs", 0) >> n & 1))
    parts.append(text)
  if e == "VOP3SD":
    destinations = [vector_text(f["vdst"], dwords(s.destination)), scalar_text(f["sdst"])]
  elif compare:
    destinations = [] if exec_compare else [scalar_text(f["vdst"])]
  elif name == "v_readlane_b32" or name == "v_readfirstlane_b32":
    destinations = [scalar_text(f["vdst"])]
  else:
    half = (".h" if opsel >> 3 & 1 else ".l") if t16 and sixteen_bit(s.destination) else ""
    destinations = [vector_text(f["vdst"], dwords(s.destination), half)]
  text = f"{name}{suffix} " + ", ".join(destinations + parts)
  if vop3p:
    sel = [f["opsel"] >> n & 1 for n in range(count)]
    sel_hi = [(f["opsel_hi"] | f["opsel_hi2"] << 2) >> n & 1 for n in range(count)]
    mixed = "mix" in name
    if any(sel):
      text += f" op_sel:[{','.join(map(str, sel))}]"
    if any(sel_hi) if mixed else not all(sel_hi):
      text += f" op_sel_hi:[{','.join(map(str, sel_hi))}]"
    neg_hi = [f["neg_hi"] >> n & 1 for n in range(count)]
    if not mixed and any(neg_hi):
      text += f" neg_hi:[{','.join(map(str, neg_hi))}]"
  if f.get("clamp"):
    text += " clamp"
  if f.get("omod"):
    text += {1: " mul:2", 2: " mul:4", 3: " div:2"}[f["omod"]]
  return text


def vopd_half(i: Instruction, name: str, side: str) -> str:
  f, literal = i.fields, f"0x{i.literal:x}" if i.literal is not None else ""
  dst, src0, src1 = (
    f"v{f['vdst' + side]}",
    source_text(f[f"src{side}0"], "f32", i.literal),
    f"v{f['vsrc' + side + '1']}",
  )
  if name.endswith("mov_b32"):
    return f"{name} {dst}, {src0}"
  if "fmaak" in name:
    return f"{name} {dst}, {src0}, {src1}, {literal}"
  if "fmamk" in name:
    return f"{name} {dst}, {src0}, {literal}, {src1}"
  return f"{name} {dst}, {src0}, {src1}"
