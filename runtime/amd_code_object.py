"""AMD GPU code objects (HSACO): what a runtime needs to load and launch their kernels, read with `struct` alone.

An HSACO is an ELF64 shared object for EM_AMDGPU. Each kernel has a code symbol `<name>` (FUNC) and a 64-byte kernel
descriptor `<name>.kd` (OBJECT) that the dispatch packet points at; the NT_AMDGPU_METADATA note (MessagePack) lists the
kernels with their kernel arguments and resource use. Layouts follow LLVM's AMDGPUUsage document (code object v4-v6).
Malformed input raises ValueError naming what is wrong."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
CODE_OBJECT_VERSIONS = {2: 4, 3: 5, 4: 6}  # ELF ABI version -> code object version
NT_AMDGPU_METADATA = 32
SHT_SYMTAB, SHT_NOTE, SHT_NOBITS, SHT_DYNSYM, SHT_RELA = 2, 7, 8, 11, 4
STT_OBJECT, STT_FUNC = 1, 2
PT_LOAD = 1
KERNEL_DESCRIPTOR_SIZE = 64
UNIFIED_VGPR_FILE = ("gfx90a", "gfx942", "gfx950")  # VGPRs and AGPRs share one file, allocated in granules of 8


# ***** MessagePack (the metadata note's encoding) *****


def _msgpack(data: bytes, pos: int, depth: int) -> tuple[object, int]:
  def take(n: int) -> bytes:
    if n < 0 or pos + 1 + n > len(data):
      raise ValueError(f"metadata: MessagePack value at byte {pos} runs past the note's end")
    return data[pos + 1 : pos + 1 + n]

  def unpack(fmt: str) -> int | float:
    return struct.unpack(fmt, take(struct.calcsize(fmt)))[0]

  def sequence(count: int, start: int, is_map: bool) -> tuple[object, int]:
    items, at = [], start
    for _ in range(count * (2 if is_map else 1)):
      item, at = _msgpack(data, at, depth + 1)
      items.append(item)
    if not is_map:
      return items, at
    keys = items[0::2]
    if not all(isinstance(k, (str, int, bool, float)) or k is None for k in keys):
      raise ValueError("metadata: a map key is not a scalar")
    return dict(zip(keys, items[1::2])), at

  if depth > 64:
    raise ValueError("metadata: MessagePack nesting deeper than 64")
  if pos >= len(data):
    raise ValueError(f"metadata: MessagePack value expected at byte {pos}, past the note's end")
  b = data[pos]
  if b <= 0x7F:
    return b, pos + 1
  if b >= 0xE0:
    return b - 0x100, pos + 1
  if 0x80 <= b <= 0x8F:
    return sequence(b & 0x0F, pos + 1, True)
  if 0x90 <= b <= 0x9F:
    return sequence(b & 0x0F, pos + 1, False)
  if 0xA0 <= b <= 0xBF:
    return _text(take(b & 0x1F), pos), pos + 1 + (b & 0x1F)
  if b == 0xC0:
    return None, pos + 1
  if b in (0xC2, 0xC3):
    return b == 0xC3, pos + 1
  scalars = {
    0xCA: ">f",
    0xCB: ">d",
    0xCC: ">B",
    0xCD: ">H",
    0xCE: ">I",
    0xCF: ">Q",
    0xD0: ">b",
    0xD1: ">h",
    0xD2: ">i",
    0xD3: ">q",
  }
  if b in scalars:
    return unpack(scalars[b]), pos + 1 + struct.calcsize(scalars[b])
  lengths = {0xC4: ">B", 0xC5: ">H", 0xC6: ">I", 0xD9: ">B", 0xDA: ">H", 0xDB: ">I"}  # bin8/16/32, str8/16/32
  if b in lengths:
    size = struct.calcsize(lengths[b])
    n = int(unpack(lengths[b]))
    start = pos + 1 + size
    if start + n > len(data):
      raise ValueError(f"metadata: MessagePack string at byte {pos} runs past the note's end")
    raw = data[start : start + n]
    return (bytes(raw) if b <= 0xC6 else _text(raw, pos)), start + n
  counts = {0xDC: (">H", False), 0xDD: (">I", False), 0xDE: (">H", True), 0xDF: (">I", True)}
  if b in counts:
    fmt, is_map = counts[b]
    return sequence(int(unpack(fmt)), pos + 1 + struct.calcsize(fmt), is_map)
  raise ValueError(f"metadata: unsupported MessagePack type byte 0x{b:02x} at byte {pos}")


def _text(raw: bytes, pos: int) -> str:
  try:
    return raw.decode()
  except UnicodeDecodeError:
    raise ValueError(f"metadata: MessagePack string at byte {pos} is not UTF-8") from None


def unpack_msgpack(data: bytes) -> object:
  """One MessagePack value (maps, arrays, strings, binary, integers, floats, booleans, nil) that fills `data`."""
  value, end = _msgpack(bytes(data), 0, 0)
  if end != len(data) and any(data[end:]):
    raise ValueError(f"metadata: {len(data) - end} bytes after the MessagePack value")
  return value


# ***** kernel descriptor *****


@dataclass(frozen=True)
class KernelDescriptor:
  """The 64-byte record a dispatch points at: segment sizes, where the code starts, and the hardware setup registers."""

  group_segment_fixed_size: int
  private_segment_fixed_size: int
  kernarg_size: int
  kernel_code_entry_byte_offset: int  # from the descriptor's own address to the kernel's first instruction
  compute_pgm_rsrc3: int
  compute_pgm_rsrc1: int
  compute_pgm_rsrc2: int
  kernel_code_properties: int
  kernarg_preload: int

  @staticmethod
  def parse(raw: bytes) -> KernelDescriptor:
    if len(raw) != KERNEL_DESCRIPTOR_SIZE:
      raise ValueError(f"kernel descriptor: {len(raw)} bytes, expected {KERNEL_DESCRIPTOR_SIZE}")
    group, private, kernarg, _, entry = struct.unpack_from("<IIIIq", raw, 0)
    rsrc3, rsrc1, rsrc2, properties, preload = struct.unpack_from("<IIIHH", raw, 44)
    return KernelDescriptor(group, private, kernarg, entry, rsrc3, rsrc1, rsrc2, properties, preload)

  @property
  def wave32(self) -> bool:
    return bool(self.kernel_code_properties >> 10 & 1)  # ENABLE_WAVEFRONT_SIZE32

  @property
  def uses_dynamic_stack(self) -> bool:
    return bool(self.kernel_code_properties >> 11 & 1)

  @property
  def user_sgpr_count(self) -> int:
    return self.compute_pgm_rsrc2 >> 1 & 0x1F

  @property
  def workgroup_id_enabled(self) -> tuple[bool, bool, bool]:
    return tuple(bool(self.compute_pgm_rsrc2 >> b & 1) for b in (7, 8, 9))

  @property
  def workitem_id_dims(self) -> int:
    """How many work-item id VGPRs the hardware sets up (1: x, 2: x and y, 3: x, y and z)."""
    return (self.compute_pgm_rsrc2 >> 11 & 3) + 1

  def vgpr_count(self, arch: str) -> int:
    """VGPRs the hardware allocates per work-item, from RSRC1's granulated count: granules of 8 on the unified VGPR/AGPR
    file of gfx90a/gfx942/gfx950 and for wave32, else 4."""
    granule = 8 if arch in UNIFIED_VGPR_FILE or self.wave32 else 4
    return ((self.compute_pgm_rsrc1 & 0x3F) + 1) * granule

  def sgpr_count(self, arch: str) -> int | None:
    """SGPRs allocated per wave from RSRC1 (granules of 8) up to gfx9; None from gfx10 on, where the field is reserved
    and every wave gets the whole SGPR file."""
    return ((self.compute_pgm_rsrc1 >> 6 & 0xF) + 1) * 8 if gfx_major(arch) < 10 else None


def gfx_major(arch: str) -> int:
  """The generation of a processor name: gfx90a and gfx942 -> 9, gfx1100 -> 11, gfx10-3-generic -> 10."""
  name = arch.split(":")[0]
  digits = name[3:].split("-")[0] if name.startswith("gfx") else ""
  if "-" in name[3:]:
    digits += "00"
  if len(digits) < 3 or not digits[:-2].isdigit():
    raise ValueError(f"{arch!r} is not an AMD GPU processor name (gfx...)")
  return int(digits[:-2])


# ***** ELF *****


@dataclass(frozen=True)
class Section:
  name: str
  type: int
  address: int
  offset: int
  size: int
  link: int
  entry_size: int


@dataclass(frozen=True)
class Segment:
  """A PT_LOAD program header: `file_size` bytes from `offset` go to `address`, zero-filled up to `memory_size`."""

  offset: int
  address: int
  file_size: int
  memory_size: int
  flags: int


@dataclass(frozen=True)
class Symbol:
  name: str
  type: int
  value: int
  size: int
  section: int  # 0: undefined


@dataclass(frozen=True)
class Relocation:
  offset: int
  type: int
  symbol: str
  addend: int


@dataclass(frozen=True)
class KernelArgument:
  """One kernel argument of the metadata: where it sits in the kernarg segment and what it is (`global_buffer`,
  `by_value`, the runtime-filled `hidden_*` kinds, ...)."""

  offset: int
  size: int
  value_kind: str
  address_space: str | None = None
  name: str | None = None


@dataclass(frozen=True)
class AMDKernel:
  """A kernel of a code object: its metadata and its descriptor. `descriptor_address` and `code_address` are virtual
  addresses inside the loaded image (see `CodeObject.image`)."""

  name: str
  args: tuple[KernelArgument, ...]
  kernarg_segment_size: int
  kernarg_segment_align: int
  group_segment_fixed_size: int
  private_segment_fixed_size: int
  wavefront_size: int
  max_flat_workgroup_size: int
  sgpr_count: int
  vgpr_count: int
  agpr_count: int
  descriptor_address: int
  code_address: int
  code_size: int
  descriptor: KernelDescriptor
  allocated_vgprs: int  # what RSRC1 asks the hardware for (the metadata counts rounded up to its granule)
  allocated_sgprs: int | None
  reqd_workgroup_size: tuple[int, ...] | None = None
  uses_dynamic_stack: bool = False
  metadata: dict = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class CodeObject:
  arch: (
    str  # the processor (gfx942); `target` is the full target id with its features (amdgcn-amd-amdhsa--gfx942:xnack-)
  )
  target: str
  code_object_version: int
  e_flags: int
  kernels: dict[str, AMDKernel]
  segments: tuple[Segment, ...]
  sections: tuple[Section, ...]
  symbols: tuple[Symbol, ...]
  relocations: tuple[Relocation, ...]
  undefined: tuple[str, ...]  # symbols the object uses without defining (a loader cannot resolve them)
  data: bytes = field(repr=False)

  @property
  def mach(self) -> int:
    return self.e_flags & 0xFF  # EF_AMDGPU_MACH

  def image(self) -> bytes:
    """The loaded image: every PT_LOAD segment at its virtual address, zero-filled between and past file contents."""
    out = bytearray(max((s.address + s.memory_size for s in self.segments), default=0))
    for s in self.segments:
      out[s.address : s.address + s.file_size] = self.data[s.offset : s.offset + s.file_size]
    return bytes(out)


def _unpack(fmt: str, data: bytes, offset: int, what: str) -> tuple:
  if offset < 0 or offset + struct.calcsize(fmt) > len(data):
    raise ValueError(
      f"truncated code object: {what} at byte {offset} needs {struct.calcsize(fmt)} bytes, the file has {len(data)}"
    )
  return struct.unpack_from(fmt, data, offset)


def _string(table: bytes, offset: int, what: str) -> str:
  if not 0 <= offset < len(table):
    raise ValueError(f"{what}: string offset {offset} outside its table")
  end = table.find(b"\0", offset)
  if end < 0:
    raise ValueError(f"{what}: unterminated string at offset {offset}")
  try:
    return table[offset:end].decode()
  except UnicodeDecodeError:
    raise ValueError(f"{what}: name at offset {offset} is not UTF-8") from None


def _section_bytes(data: bytes, s: Section) -> bytes:
  if s.type == SHT_NOBITS:
    return b""
  if s.offset + s.size > len(data):
    raise ValueError(
      f"truncated code object: section {s.name or s.type} ends at byte {s.offset + s.size}, the file has {len(data)}"
    )
  return data[s.offset : s.offset + s.size]


def _sections(data: bytes, shoff: int, shentsize: int, shnum: int, shstrndx: int) -> tuple[Section, ...]:
  if shnum and shentsize != 64:
    raise ValueError(f"section header size {shentsize}, expected 64")
  raw = [_unpack("<IIQQQQIIQQ", data, shoff + i * 64, f"section header {i}") for i in range(shnum)]
  if not raw or not 0 < shstrndx < shnum:
    raise ValueError(f"section name table index {shstrndx} outside the {shnum} sections")
  _, _, _, _, stroff, strsize, *_ = raw[shstrndx]
  names = _section_bytes(data, Section("", 0, 0, stroff, strsize, 0, 0))
  return tuple(Section(_string(names, r[0], "section header"), r[1], r[3], r[4], r[5], r[6], r[9]) for r in raw)


def _symbols(data: bytes, sections: tuple[Section, ...]) -> tuple[Symbol, ...]:
  out: dict[tuple[str, int], Symbol] = {}
  for s in sections:
    if s.type not in (SHT_SYMTAB, SHT_DYNSYM):
      continue
    if s.entry_size != 24 or s.size % 24:
      raise ValueError(f"symbol table {s.name}: entry size {s.entry_size}, size {s.size} (expected 24-byte entries)")
    if not 0 < s.link < len(sections):
      raise ValueError(f"symbol table {s.name}: string table index {s.link} outside the sections")
    table, strings = _section_bytes(data, s), _section_bytes(data, sections[s.link])
    for i in range(1, s.size // 24):
      name_at, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", table, i * 24)
      symbol = Symbol(_string(strings, name_at, f"symbol table {s.name}"), info & 0xF, value, size, shndx)
      if symbol.name:
        out.setdefault((symbol.name, symbol.section), symbol)
  return tuple(out.values())


def _relocations(data: bytes, sections: tuple[Section, ...]) -> tuple[Relocation, ...]:
  out = []
  for s in sections:
    if s.type != SHT_RELA:
      continue
    if s.size % 24:
      raise ValueError(f"relocation section {s.name}: size {s.size} is not a multiple of 24")
    table = _section_bytes(data, s)
    symtab = sections[s.link] if 0 < s.link < len(sections) else None
    syms = _section_bytes(data, symtab) if symtab is not None else b""
    strings = (
      _section_bytes(data, sections[symtab.link]) if symtab is not None and 0 < symtab.link < len(sections) else b""
    )
    for i in range(s.size // 24):
      offset, info, addend = struct.unpack_from("<QQq", table, i * 24)
      index, name = info >> 32, ""
      if index:
        if (index + 1) * 24 > len(syms):
          raise ValueError(f"relocation section {s.name}: symbol {index} outside its symbol table")
        name = _string(strings, struct.unpack_from("<I", syms, index * 24)[0], f"relocation section {s.name}")
      out.append(Relocation(offset, info & 0xFFFFFFFF, name, addend))
  return tuple(out)


def _metadata(data: bytes, sections: tuple[Section, ...]) -> dict:
  for s in sections:
    if s.type != SHT_NOTE:
      continue
    notes, at = _section_bytes(data, s), 0
    while at + 12 <= len(notes):
      namesz, descsz, kind = struct.unpack_from("<III", notes, at)
      name_end = at + 12 + namesz
      desc_at = at + 12 + (namesz + 3) // 4 * 4
      if name_end > len(notes) or desc_at + descsz > len(notes):
        raise ValueError(f"note section {s.name}: note at byte {at} runs past the section")
      if kind == NT_AMDGPU_METADATA and notes[at + 12 : name_end].rstrip(b"\0") == b"AMDGPU":
        meta = unpack_msgpack(notes[desc_at : desc_at + descsz])
        if not isinstance(meta, dict):
          raise ValueError("metadata: the AMDGPU note is not a map")
        return meta
      at = desc_at + (descsz + 3) // 4 * 4
  raise ValueError("code object has no NT_AMDGPU_METADATA note")


def _field(meta: dict, key: str, kind: type, where: str, default: object = ...) -> object:
  value = meta.get(key, default)
  if value is ...:
    raise ValueError(f"metadata: {where} has no {key}")
  if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
    raise ValueError(f"metadata: {where} {key} is {value!r}, not {kind.__name__}")
  return value


def _kernel(
  meta: object, symbols: dict[str, Symbol], sections: tuple[Section, ...], data: bytes, arch: str
) -> AMDKernel:
  if not isinstance(meta, dict):
    raise ValueError("metadata: an amdhsa.kernels entry is not a map")
  name = _field(meta, ".name", str, "kernel")
  where = f"kernel {name}"
  args = []
  for i, arg in enumerate(_field(meta, ".args", list, where, [])):
    if not isinstance(arg, dict):
      raise ValueError(f"metadata: {where} argument {i} is not a map")
    args.append(
      KernelArgument(
        _field(arg, ".offset", int, f"{where} argument {i}"),
        _field(arg, ".size", int, f"{where} argument {i}"),
        _field(arg, ".value_kind", str, f"{where} argument {i}"),
        arg.get(".address_space"),
        arg.get(".name"),
      )
    )
  kd_name = _field(meta, ".symbol", str, where, f"{name}.kd")
  if (kd := symbols.get(kd_name)) is None or kd.type != STT_OBJECT:
    raise ValueError(f"{where}: no defined OBJECT symbol {kd_name}")
  if kd.size != KERNEL_DESCRIPTOR_SIZE:
    raise ValueError(f"{where}: descriptor {kd_name} is {kd.size} bytes, expected {KERNEL_DESCRIPTOR_SIZE}")
  home = next(
    (s for s in sections if s.type != SHT_NOBITS and s.address and 0 <= kd.value - s.address <= s.size - kd.size), None
  )
  if home is None:
    raise ValueError(f"{where}: descriptor {kd_name} at address 0x{kd.value:x} lies in no section with contents")
  at = home.offset + kd.value - home.address
  descriptor = KernelDescriptor.parse(
    _section_bytes(data, home)[at - home.offset : at - home.offset + KERNEL_DESCRIPTOR_SIZE]
  )
  code = symbols.get(name)
  code_address = kd.value + descriptor.kernel_code_entry_byte_offset
  if code is not None and (code.type != STT_FUNC or code.value != code_address):
    raise ValueError(
      f"{where}: descriptor's code entry 0x{code_address:x} is not the FUNC symbol {name} (0x{code.value:x})"
    )
  wave = _field(meta, ".wavefront_size", int, where)
  if wave != (32 if descriptor.wave32 else 64):
    raise ValueError(f"{where}: wavefront size {wave} but the descriptor says wave{32 if descriptor.wave32 else 64}")
  group = _field(meta, ".group_segment_fixed_size", int, where)
  if group != descriptor.group_segment_fixed_size:
    raise ValueError(
      f"{where}: group segment {group} bytes in the metadata, {descriptor.group_segment_fixed_size} in the descriptor"
    )
  reqd = meta.get(".reqd_workgroup_size")
  return AMDKernel(
    name,
    tuple(args),
    _field(meta, ".kernarg_segment_size", int, where),
    _field(meta, ".kernarg_segment_align", int, where),
    group,
    _field(meta, ".private_segment_fixed_size", int, where),
    wave,
    _field(meta, ".max_flat_workgroup_size", int, where),
    _field(meta, ".sgpr_count", int, where),
    _field(meta, ".vgpr_count", int, where),
    _field(meta, ".agpr_count", int, where, 0),
    kd.value,
    code_address,
    code.size if code is not None else 0,
    descriptor,
    descriptor.vgpr_count(arch),
    descriptor.sgpr_count(arch),
    tuple(reqd) if isinstance(reqd, list) else None,
    bool(meta.get(".uses_dynamic_stack", False)),
    meta,
  )


def parse(data: bytes) -> CodeObject:
  """Reads an AMDGPU code object (the bytes of an .hsaco): ELF header, sections, segments, symbols, relocations, the
  metadata note and each kernel's descriptor. Anything malformed or inconsistent raises ValueError naming it."""
  data = bytes(data)
  if len(data) < 64 or data[:4] != b"\x7fELF":
    raise ValueError("not an ELF file (bad magic or shorter than an ELF header)")
  if data[4] != 2 or data[5] != 1:
    raise ValueError(f"not a little-endian ELF64 file (class {data[4]}, data {data[5]})")
  if data[7] != ELFOSABI_AMDGPU_HSA:
    raise ValueError(f"OS/ABI {data[7]} is not AMDGPU HSA ({ELFOSABI_AMDGPU_HSA})")
  if (version := CODE_OBJECT_VERSIONS.get(data[8])) is None:
    raise ValueError(f"ABI version {data[8]}: unsupported code object version (v4-v6 are ABI 2-4)")
  _, machine, _, _, phoff, shoff, e_flags, _, phentsize, phnum, shentsize, shnum, shstrndx = _unpack(
    "<HHIQQQIHHHHHH", data, 16, "ELF header"
  )
  if machine != EM_AMDGPU:
    raise ValueError(f"ELF machine {machine} is not EM_AMDGPU ({EM_AMDGPU})")
  sections = _sections(data, shoff, shentsize, shnum, shstrndx)
  if phnum and phentsize != 56:
    raise ValueError(f"program header size {phentsize}, expected 56")
  segments = []
  for i in range(phnum):
    kind, flags, offset, address, _, file_size, memory_size, _ = _unpack(
      "<IIQQQQQQ", data, phoff + i * 56, f"program header {i}"
    )
    if kind != PT_LOAD:
      continue
    if offset + file_size > len(data) or file_size > memory_size:
      raise ValueError(
        f"program header {i}: segment of {file_size} bytes at {offset} exceeds the file or its memory size"
      )
    segments.append(Segment(offset, address, file_size, memory_size, flags))
  symbols = _symbols(data, sections)
  defined = {s.name: s for s in symbols if s.section != 0}
  meta = _metadata(data, sections)
  target = _field(meta, "amdhsa.target", str, "code object")
  arch = target.rsplit("-", 1)[-1].split(":")[0]
  gfx_major(arch)
  kernels = [_kernel(k, defined, sections, data, arch) for k in _field(meta, "amdhsa.kernels", list, "code object")]
  undefined = tuple(sorted({s.name for s in symbols if s.section == 0} - set(defined)))
  return CodeObject(
    arch,
    target,
    version,
    e_flags,
    {k.name: k for k in kernels},
    tuple(segments),
    sections,
    symbols,
    _relocations(data, sections),
    undefined,
    data,
  )
