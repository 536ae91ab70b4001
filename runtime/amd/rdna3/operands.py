"""What each RDNA3 instruction's operands hold, from its name: the value type of the destination and of each source
(f32, u64, ...; "mask" for a lane mask, one bit per lane), so that a reader knows how many registers an operand spans
and how to interpret its bits. The rule is the name's type suffixes: one type types every operand, two give the
destination's then the sources'; the exceptions (shift amounts, exponents, class masks, carries) are listed."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

TYPE = re.compile(r"^(f|bf|b|u|i)(8|16|24|32|64|96|128|256|512)$")

# sources typed apart from the rule: (name pattern, source index, type)
SOURCE_TYPES = [
  (r"^v_(lshlrev|lshrrev|ashrrev)_[bi]64$", 0, "u32"),
  (r"^s_(lshl|lshr|ashr)_[bi]64$", 1, "u32"),
  (r"^s_bfe_[ui]64$", 1, "u32"),
  (r"^s_bfm_b64$", 0, "u32"),
  (r"^s_bfm_b64$", 1, "u32"),
  (r"^v_ldexp_f(16|32|64)$", 1, "i32"),
  (r"^v_trig_preop_f64$", 1, "u32"),
  (r"^v_cmpx?_class_f(32|64)$", 1, "u32"),
  (r"^v_cmpx?_class_f16$", 1, "u16"),
  (r"^v_(cndmask|add_co_ci|sub_co_ci|subrev_co_ci)_[bu]32$", 2, "mask"),
  (r"^v_cndmask_b16$", 2, "mask"),
  (r"^v_mad_[ui]64_[ui]32$", 2, "u64"),
  (r"^v_(readlane|writelane)_b32$", 1, "u32"),
  (r"^v_cvt_f32_ubyte[0-3]$", 0, "u32"),
  (r"^v_mad_[ui]32_[ui]16$", 2, "u32"),
  (r"^v_(bfrev|not|ffbh|ffbl|cls)_[biu]32$", 0, "u32"),
  (r"^s_bitset[01]_b64$", 0, "u32"),
  (r"^s_bitcmp[01]_b64$", 1, "u32"),
  (r"^s_pack_[lh][lh]_b32_b16$", 0, "b32"),
  (r"^s_pack_[lh][lh]_b32_b16$", 1, "b32"),
  (r"^s_sext_i32_i(8|16)$", 0, "b32"),
]
DESTINATION_TYPES = [
  (r"^v_cmpx?_", "mask"),
  (r"^s_(bcnt[01]|ctz|clz|cls)_i32_[bi]64$", "i32"),
  (r"^s_bitcmp", "none"),
  (r"^s_cmp", "none"),
  (r"^v_readfirstlane_b32$", "u32"),
  (r"^v_cvt_f32_ubyte[0-3]$", "f32"),
]


@dataclass(frozen=True)
class Signature:
  """The type of an instruction's destination and of its sources (as many as any encoding of it can have)."""

  destination: str
  sources: tuple[str, ...]


def dwords(kind: str) -> int:
  """Registers an operand of `kind` spans: a 64-bit value two, 96 three, 128 four; 16-bit ones one (a half of it)."""
  if kind == "mask":
    return 1  # wave32: one SGPR
  match = TYPE.match(kind)
  return max(1, int(match.group(2)) // 32) if match else 1


@functools.cache
def signature(name: str) -> Signature:
  """The operand types of the instruction `name` (as in the opcode tables: `v_add_f32`, `s_lshl_b64`, ...)."""
  types = [t for t in name.split("_") if TYPE.match(t)]
  if name.startswith("v_cvt_") and len(types) >= 2:
    destination, source = types[0], types[1]
  elif len(types) >= 2:
    destination, source = types[0], types[-1]
  else:
    destination = source = types[0] if types else "b32"
  sources = [source] * 3
  for pattern, index, kind in SOURCE_TYPES:
    if re.search(pattern, name):
      sources[index] = kind
  for pattern, kind in DESTINATION_TYPES:
    if re.search(pattern, name):
      destination = kind
  return Signature(destination, tuple(sources))
