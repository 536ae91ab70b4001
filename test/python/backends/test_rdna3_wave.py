"""The RDNA3 wave executor on hand-encoded programs: the initial state a dispatch sets up (user SGPRs, workgroup ids,
packed work-item ids, EXEC of a partial wave), inactive lanes left alone, operand modifiers and 16-bit halves, VOPD
reading before writing, scalar and vector memory of every width with faults naming the instruction, LDS with barriers
across the waves of a workgroup, branches that diverge between waves, and a loud error for an unknown instruction."""
import numpy as np
import pytest

from pytc.runtime.amd.rdna3.decode import encode
from pytc.runtime.amd.rdna3.memory import GlobalMemory, mapped_spans
from pytc.runtime.amd.rdna3.wave import ExecutionFault, Launch, UnsupportedInstruction, run

V, LITERAL, NULL, EXEC, VCC = 256, 255, 124, 126, 106
ENDPGM = encode("SOPP", "s_endpgm")
TGID_X, TGID_Y = 1 << 7, 1 << 8


def user_rsrc2(count: int, ids: int = TGID_X) -> int: return count << 1 | ids


def store_v(register: int, buffer_sgpr: int = 0, offset_vgpr: int = 1) -> bytes:
  """global_store_b32 of v[register] at s[buffer_sgpr:+1] + v[offset_vgpr]."""
  return encode("GLOBAL", "global_store_b32", addr=offset_vgpr, data=register, saddr=buffer_sgpr)


def lane_offsets(vgpr: int = 1) -> bytes:
  """v[vgpr] = (v0 & 0x3ff) * 4: each lane's byte offset by its x id."""
  return encode("VOP2", "v_and_b32", src0=LITERAL, vsrc1=0, vdst=vgpr, literal=0x3FF) + \
    encode("VOP2", "v_lshlrev_b32", src0=130, vsrc1=vgpr, vdst=vgpr)


def execute(code: bytes, buffers: list[np.ndarray], grid=(1, 1, 1), local=(32, 1, 1), lds: int = 0, vgprs: int = 16,
            user: tuple[int, ...] | None = None, rsrc2: int | None = None) -> int:
  """Run `code` with s[2i:2i+1] = the address of buffers[i] (as a kernarg-less kernel's user SGPRs)."""
  if user is None: user = tuple(w for b in buffers for w in (b.ctypes.data & 0xFFFFFFFF, b.ctypes.data >> 32))
  spans = [(b.ctypes.data, b.ctypes.data + b.nbytes) for b in buffers]
  launch = Launch(code, 0x1000_0000, 0, grid, local, user, user_rsrc2(len(user)) if rsrc2 is None else rsrc2, lds, vgprs)
  return run(launch, GlobalMemory(mapped_spans(spans)))


def test_initial_state_and_partial_waves():
  """v0 packs the x/y ids, the workgroup ids follow the user SGPRs, EXEC has only the live lanes of the last wave."""
  out = np.full((2, 6, 8), -1, np.int32)  # grid 2x1, workgroups of 8x6 (48 threads: a full and a partial wave)
  code = (encode("VOP2", "v_and_b32", src0=LITERAL, vsrc1=0, vdst=1, literal=0x3FF)  # x
          + encode("VOP3", "v_bfe_u32", vdst=2, src0=V + 0, src1=128 + 10, src2=128 + 10)  # y
          + encode("VOP3", "v_mad_u32_u24", vdst=3, src0=V + 2, src1=136, src2=V + 1)  # y * 8 + x
          + encode("SOP2", "s_mul_i32", sdst=3, ssrc0=2, ssrc1=LITERAL, literal=48)  # s2 is the workgroup id x
          + encode("VOP2", "v_add_nc_u32", src0=3, vsrc1=3, vdst=3)
          + encode("VOP2", "v_lshlrev_b32", src0=130, vsrc1=3, vdst=4)
          + encode("VOP2", "v_add_nc_u32", src0=2, vsrc1=1, vdst=5)  # value: workgroup + x
          + encode("VOP3", "v_lshl_add_u32", vdst=5, src0=V + 2, src1=132, src2=V + 5)  # + 16 y
          + encode("GLOBAL", "global_store_b32", addr=4, data=5, saddr=0) + ENDPGM)
  execute(code, [out], grid=(2, 1, 1), local=(8, 6, 1))
  g, y, x = np.meshgrid(np.arange(2), np.arange(6), np.arange(8), indexing="ij")
  np.testing.assert_array_equal(out, g + x + 16 * y)


def test_inactive_lanes_keep_their_registers():
  out = np.zeros(32, np.uint32)
  code = (lane_offsets() + encode("VOP1", "v_mov_b32", vdst=2, src0=128 + 7)
          + encode("SOP1", "s_mov_b32", sdst=EXEC, ssrc0=LITERAL, literal=0x0000FFF0)
          + encode("VOP1", "v_mov_b32", vdst=2, src0=128 + 9)
          + encode("SOP1", "s_mov_b32", sdst=EXEC, ssrc0=LITERAL, literal=0xFFFFFFFF) + store_v(2) + ENDPGM)
  execute(code, [out])
  np.testing.assert_array_equal(out, np.where((np.arange(32) >= 4) & (np.arange(32) < 16), 9, 7))


def test_modifiers_halves_and_vopd():
  """VOP3 neg/abs/clamp/omod on floats, a 16-bit op writing the high half only, and a VOPD swap of two registers."""
  out = np.zeros((5, 32), np.float32)
  out_bits = out.view(np.uint32)
  code = (lane_offsets() + encode("VOP1", "v_cvt_f32_u32", vdst=2, src0=V + 1)  # v2 = 4 * lane
          + encode("VOP3", "v_add_f32", vdst=3, src0=V + 2, src1=242, neg=1, abs=0)  # -v2 + 1
          + encode("VOP3", "v_mul_f32", vdst=4, src0=V + 3, src1=240, abs=1, omod=1)  # |v3| * 0.5 * 2
          + encode("VOP3", "v_add_f32", vdst=5, src0=V + 2, src1=243, clamp=1)  # clamp(v2 - 1)
          + encode("VOP1", "v_mov_b32", vdst=6, src0=LITERAL, literal=0x11112222)
          + encode("VOP1", "v_mov_b16", vdst=6 | 0x80, src0=LITERAL, literal=0xABCD)  # v6.h = 0xabcd
          + encode("VOP1", "v_mov_b32", vdst=7, src0=V + 3) + encode("VOP1", "v_mov_b32", vdst=8, src0=V + 4)
          + encode("VOPD", "v_dual_mov_b32::v_dual_mov_b32", srcx0=V + 8, srcy0=V + 7, vdstx=7, vdsty=8)  # swap v7, v8
          + b"".join(encode("GLOBAL", "global_store_b32", addr=1, data=r, saddr=0, offset=128 * n) for n, r in enumerate((3, 4, 5, 6, 7)))
          + ENDPGM)
  execute(code, [out])
  lane = 4.0 * np.arange(32, dtype=np.float32)
  np.testing.assert_array_equal(out[0], 1 - lane)
  np.testing.assert_array_equal(out[1], np.abs(1 - lane))
  np.testing.assert_array_equal(out[2], np.clip(lane - 1, 0, 1))
  assert (out_bits[3] == 0xABCD2222).all()
  np.testing.assert_array_equal(out[4], np.abs(1 - lane))  # v7 took v8's value



def test_integer_clamp_saturates_every_add_and_subtract():
  """VOP3's clamp bit on the integer adds and subtracts saturates (LLVM's max(x - c, 0) is v_subrev_nc_u32 with clamp)."""
  out = np.zeros((3, 32), np.uint32)
  code = (lane_offsets()  # v1 = 4 * lane
          + encode("VOP3", "v_subrev_nc_u32", vdst=2, src0=LITERAL, src1=V + 1, clamp=1, literal=95)  # max(v1 - 95, 0)
          + encode("VOP3", "v_sub_nc_u32", vdst=3, src0=V + 1, src1=LITERAL, clamp=1, literal=95)  # the same, unreversed
          + encode("VOP3", "v_subrev_nc_u32", vdst=4, src0=LITERAL, src1=V + 1, literal=95)  # no clamp: wraps
          + b"".join(encode("GLOBAL", "global_store_b32", addr=1, data=r, saddr=0, offset=128 * n) for n, r in enumerate((2, 3, 4)))
          + ENDPGM)
  execute(code, [out])
  lane = 4 * np.arange(32, dtype=np.int64)
  np.testing.assert_array_equal(out[0], np.maximum(lane - 95, 0))
  np.testing.assert_array_equal(out[1], np.maximum(lane - 95, 0))
  np.testing.assert_array_equal(out[2], (lane - 95) % 2**32)
  unsupported = lane_offsets() + encode("VOP3", "v_mad_u32_u24", vdst=2, src0=V + 1, src1=V + 1, src2=V + 1, clamp=1) + ENDPGM
  with pytest.raises(UnsupportedInstruction, match="v_mad_u32_u24 with the clamp bit"): execute(unsupported, [out])

def test_vector_memory_widths_and_extension():
  source = (np.arange(256) - 128).astype(np.int8)
  out = np.zeros((6, 32), np.uint32)
  code = (lane_offsets()
          + encode("GLOBAL", "global_load_i8", vdst=2, addr=1, saddr=0)  # bytes 0, 4, 8, ...: sign-extended
          + encode("GLOBAL", "global_load_u8", vdst=3, addr=1, saddr=0)
          + encode("GLOBAL", "global_load_i16", vdst=4, addr=1, saddr=0)
          + encode("VOP1", "v_mov_b32", vdst=5, src0=LITERAL, literal=0x12345678)
          + encode("GLOBAL", "global_load_d16_hi_u8", vdst=5, addr=1, saddr=0)
          + encode("GLOBAL", "global_load_b64", vdst=6, addr=1, saddr=0)
          + b"".join(encode("GLOBAL", "global_store_b32", addr=1, data=r, saddr=2, offset=128 * n) for n, r in enumerate((2, 3, 4, 5, 6, 7)))
          + ENDPGM)
  execute(code, [source, out])
  raw = source.view(np.uint8)
  at = 4 * np.arange(32)
  np.testing.assert_array_equal(out[0].view(np.int32), source[at])
  np.testing.assert_array_equal(out[1], raw[at])
  np.testing.assert_array_equal(out[2].view(np.int32), source.view(np.int16)[at // 2])
  np.testing.assert_array_equal(out[3], 0x5678 | raw[at].astype(np.uint32) << 16)
  words = source.view(np.uint32)
  np.testing.assert_array_equal(out[4], words[at // 4])
  np.testing.assert_array_equal(out[5], words[at // 4 + 1])


def test_memory_fault_names_the_instruction_and_address():
  out = np.zeros(32, np.uint32)
  code = lane_offsets() + encode("GLOBAL", "global_store_b32", addr=1, data=1, saddr=0, offset=64) + ENDPGM
  with pytest.raises(ExecutionFault, match=r"global_store_b32 at pc 0x1000000c .*4 bytes at 0x[0-9a-f]+ are not mapped") as fault:
    execute(code, [out])
  assert fault.value.address == out.ctypes.data + 128  # lane 16's store runs past the buffer's end
  assert (out == 0).all()  # the faulting instruction wrote nothing
  shifted = (out.ctypes.data + 8) & 0xFFFFFFFF, (out.ctypes.data + 8) >> 32  # a pointer off by 8
  with pytest.raises(ExecutionFault, match="not mapped"): execute(lane_offsets() + store_v(1) + ENDPGM, [out], user=shifted)


def test_scalar_loads_and_branches_that_diverge_between_waves():
  """Each wave loops (s_cbranch_scc1) as often as its workgroup id says; a masked-off region is skipped (execz)."""
  counts = np.array([3, 0, 5, 1], np.uint32)
  out = np.zeros((4, 32), np.uint32)
  code = (encode("SMEM", "s_load_b32", sdata=5, sbase=0, offset=0, soffset=NULL)  # s5 = counts[0]; then per workgroup:
          + encode("SOP2", "s_lshl_b32", sdst=6, ssrc0=4, ssrc1=130)
          + encode("SMEM", "s_load_b32", sdata=5, sbase=0, offset=0, soffset=6)
          + lane_offsets() + encode("VOP1", "v_mov_b32", vdst=2, src0=128)
          + encode("SOPC", "s_cmp_eq_u32", ssrc0=5, ssrc1=128)
          + encode("SOPP", "s_cbranch_scc1", simm16=4)  # skip the loop when the count is 0
          + encode("VOP2", "v_add_nc_u32", src0=129, vsrc1=2, vdst=2)  # loop: v2 += 1
          + encode("SOP2", "s_sub_u32", sdst=5, ssrc0=5, ssrc1=129)
          + encode("SOPC", "s_cmp_lg_u32", ssrc0=5, ssrc1=128)
          + encode("SOPP", "s_cbranch_scc1", simm16=(-4) & 0xFFFF)
          + encode("SOP2", "s_mul_i32", sdst=7, ssrc0=4, ssrc1=LITERAL, literal=128)
          + encode("VOP2", "v_add_nc_u32", src0=7, vsrc1=1, vdst=1)
          + store_v(2, 2) + ENDPGM)
  execute(code, [counts, out], grid=(4, 1, 1))
  np.testing.assert_array_equal(out, np.repeat(counts[:, None], 32, axis=1))


def test_lds_and_barrier_between_the_waves_of_a_workgroup():
  """64 threads (two waves) write their ids to LDS, wait at s_barrier, and read their neighbour's across the wave boundary."""
  out = np.zeros((3, 64), np.uint32)
  code = (lane_offsets() + encode("DS", "ds_store_b32", addr=1, data0=0)
          + encode("SOPP", "s_barrier")
          + encode("VOP2", "v_xor_b32", src0=LITERAL, vsrc1=1, vdst=2, literal=0x80)  # the lane 32 away
          + encode("DS", "ds_load_b32", vdst=3, addr=2)
          + encode("DS", "ds_load_2addr_b32", vdst=4, addr=1, offset0=0, offset1=1)
          + encode("GLOBAL", "global_store_b32", addr=1, data=3, saddr=0)
          + encode("GLOBAL", "global_store_b32", addr=1, data=4, saddr=0, offset=256)
          + encode("VOP2", "v_mul_u32_u24", src0=132, vsrc1=5, vdst=5)
          + encode("GLOBAL", "global_store_b32", addr=1, data=5, saddr=0, offset=512) + ENDPGM)
  execute(code, [out], local=(64, 1, 1), lds=256 + 4)
  ids = np.arange(64)
  np.testing.assert_array_equal(out[0], ids ^ 32)
  np.testing.assert_array_equal(out[1], ids)
  np.testing.assert_array_equal(out[2], 4 * np.minimum(ids + 1, 64) * (ids < 63))
  with pytest.raises(ExecutionFault, match="outside the workgroup's 64 bytes of LDS"):
    execute(lane_offsets() + encode("DS", "ds_store_b32", addr=1, data0=0) + ENDPGM, [out], local=(64, 1, 1), lds=64)


def test_saveexec_and_execz():
  """s_and_saveexec_b32 masks the lanes a compare selected, s_cbranch_execz skips a region no lane runs, EXEC comes back."""
  out = np.zeros(32, np.uint32)
  code = (lane_offsets() + encode("VOP1", "v_mov_b32", vdst=2, src0=128)
          + encode("VOPC", "v_cmp_gt_u32", src0=128 + 40, vsrc1=1)  # lanes with 4 * id < 40
          + encode("SOP1", "s_and_saveexec_b32", sdst=8, ssrc0=VCC)
          + encode("VOP1", "v_mov_b32", vdst=2, src0=128 + 5)
          + encode("VOPC", "v_cmpx_gt_u32", src0=128, vsrc1=1)  # no lane: exec becomes 0
          + encode("SOPP", "s_cbranch_execz", simm16=1)
          + encode("VOP1", "v_mov_b32", vdst=2, src0=128 + 6)
          + encode("SOP1", "s_mov_b32", sdst=EXEC, ssrc0=8) + store_v(2) + ENDPGM)
  execute(code, [out])
  np.testing.assert_array_equal(out, np.where(np.arange(32) < 10, 5, 0))


def test_unsupported_instruction_is_loud():
  with pytest.raises(UnsupportedInstruction, match="does not implement v_movrels_b32"):
    execute(encode("VOP1", "v_movrels_b32", vdst=1, src0=V) + ENDPGM, [np.zeros(1, np.uint32)])
  with pytest.raises(UnsupportedInstruction, match="s_getpc_b64"):
    execute(encode("SOP1", "s_getpc_b64", sdst=4) + ENDPGM, [np.zeros(1, np.uint32)])


GLOBAL_LOADS = {  # name -> (bytes, extend, half): what lands in the 32-bit register (the other half kept for d16 loads)
  "global_load_u8": (1, "zero", None), "global_load_i8": (1, "sign", None), "global_load_u16": (2, "zero", None),
  "global_load_i16": (2, "sign", None), "global_load_b32": (4, "zero", None), "global_load_d16_b16": (2, "zero", "low"),
  "global_load_d16_u8": (1, "zero", "low"), "global_load_d16_i8": (1, "sign", "low"), "global_load_d16_hi_b16": (2, "zero", "high"),
  "global_load_d16_hi_u8": (1, "zero", "high"), "global_load_d16_hi_i8": (1, "sign", "high")}


def expected_register(raw: np.ndarray, extend: str, half: str | None, old: int) -> np.ndarray:
  value = raw.astype(np.int64)
  if extend == "sign": value = np.where(value >= 1 << 8 * raw.dtype.itemsize - 1, value - (1 << 8 * raw.dtype.itemsize), value)
  if half is None: return (value & 0xFFFFFFFF).astype(np.uint32)
  value &= 0xFFFF
  return ((old & 0xFFFF0000) | value if half == "low" else (old & 0xFFFF) | value << 16).astype(np.uint32)


@pytest.mark.parametrize("name", list(GLOBAL_LOADS))
def test_every_global_load(name):
  """Each lane loads at byte 3 * lane (unaligned where the width allows) into a register holding 0x12345678."""
  size, extend, half = GLOBAL_LOADS[name]
  source = np.random.default_rng(len(name)).integers(0, 256, 256, dtype=np.uint8)
  out = np.zeros(32, np.uint32)
  step = size if size > 1 else 3
  code = (encode("VOP2", "v_mul_u32_u24", src0=128 + step, vsrc1=0, vdst=1) + lane_offsets(3)
          + encode("VOP1", "v_mov_b32", vdst=2, src0=LITERAL, literal=0x12345678)
          + encode("GLOBAL", name, vdst=2, addr=1, saddr=0) + encode("GLOBAL", "global_store_b32", addr=3, data=2, saddr=2) + ENDPGM)
  execute(code, [source, out])
  at = step * np.arange(32)
  raw = source[at] if size == 1 else source.view({2: np.uint16, 4: np.uint32}[size])[at // size]
  np.testing.assert_array_equal(out, expected_register(raw, extend, half, 0x12345678))


@pytest.mark.parametrize("words", [2, 3, 4])
def test_wide_global_loads_and_stores(words):
  source = np.arange(32 * words, dtype=np.uint32) * 7 + 1
  out = np.zeros(32 * words, np.uint32)
  offset = encode("VOP2", "v_mul_u32_u24", src0=128 + 4 * words, vsrc1=0, vdst=1)
  code = (offset + encode("GLOBAL", f"global_load_b{32 * words}", vdst=4, addr=1, saddr=0)
          + encode("GLOBAL", f"global_store_b{32 * words}", addr=1, data=4, saddr=2) + ENDPGM)
  execute(code, [source, out])
  np.testing.assert_array_equal(out, source)


@pytest.mark.parametrize("name, size, high", [("global_store_b8", 1, False), ("global_store_b16", 2, False),
                                              ("global_store_d16_hi_b16", 2, True), ("global_store_d16_hi_b8", 1, True)])
def test_narrow_stores_write_only_their_bytes(name, size, high):
  out = np.full(64 * size, 0xEE, np.uint8)
  code = (encode("VOP2", "v_mul_u32_u24", src0=128 + 2 * size, vsrc1=0, vdst=1)
          + encode("VOP3", "v_mul_lo_u32", vdst=2, src0=LITERAL, src1=V + 0, literal=0x01020304)
          + encode("GLOBAL", name, addr=1, data=2, saddr=0) + ENDPGM)
  execute(code, [out])
  values = (np.arange(32, dtype=np.uint64) * 0x01020304) & 0xFFFFFFFF
  part = (values >> 16 if high else values) & ((1 << 8 * size) - 1)
  want = np.full(64 * size, 0xEE, np.uint8).reshape(32, 2 * size)
  want[:, :size] = part.astype(np.uint64)[:, None] >> (8 * np.arange(size, dtype=np.uint64)) & 0xFF
  np.testing.assert_array_equal(out, want.reshape(-1))


def test_scalar_loads_of_every_width():
  source = np.arange(64, dtype=np.uint32) * 3 + 5
  out = np.zeros(31, np.uint32)
  code = b"".join(encode("SMEM", f"s_load_b{32 * n}", sdata=s, sbase=0, offset=4 * o, soffset=NULL)
                  for n, s, o in ((1, 4, 60), (2, 6, 1), (4, 8, 9), (8, 12, 13), (16, 20, 21)))
  code += encode("VOP1", "v_mov_b32", vdst=1, src0=128) + encode("SOP1", "s_mov_b32", sdst=EXEC, ssrc0=129)  # lane 0 alone
  for i, register in enumerate([4, 6, 7, *range(8, 12), *range(12, 20), *range(20, 36)]):
    code += encode("VOP1", "v_mov_b32", vdst=2, src0=register) + encode("GLOBAL", "global_store_b32", addr=1, data=2, saddr=2, offset=4 * i)
  execute(code + ENDPGM, [source, out])
  np.testing.assert_array_equal(out, source[[60, 1, 2, *range(9, 13), *range(13, 21), *range(21, 37)]])


@pytest.mark.parametrize("name", ["ds_load_b64", "ds_load_b96", "ds_load_b128", "ds_load_2addr_stride64_b32", "ds_load_u8",
                                  "ds_load_u8_d16", "ds_load_u8_d16_hi", "ds_load_u16", "ds_load_i8"])
def test_lds_loads(name):
  """LDS filled with known words by ds_store_2addr_stride64_b32 and ds_store_b8, read back by each load form."""
  lds = 4096
  out = np.zeros((4, 32), np.uint32)
  words = {"ds_load_b64": 2, "ds_load_b96": 3, "ds_load_b128": 4}.get(name, 1)
  code = (encode("VOP2", "v_lshlrev_b32", src0=130, vsrc1=0, vdst=1)  # v1 = 4 * lane
          + encode("VOP2", "v_mul_u32_u24", src0=LITERAL, vsrc1=0, vdst=2, literal=0x9F37A1)  # v2 = lane * 0x9f37a1
          + encode("VOP2", "v_xor_b32", src0=LITERAL, vsrc1=2, vdst=3, literal=0x80808080)
          + encode("DS", "ds_store_2addr_stride64_b32", addr=1, data0=2, data1=3, offset0=0, offset1=1)  # words at 4l and 256 + 4l
          + encode("DS", "ds_store_b8", addr=1, data0=3, offset0=0, offset1=2)  # byte at 512 + 4l
          + encode("VOP2", "v_mul_u32_u24", src0=128 + 4 * words, vsrc1=0, vdst=5)
          + encode("VOP1", "v_mov_b32", vdst=6, src0=LITERAL, literal=0x5555AAAA) + encode("VOP1", "v_mov_b32", vdst=7, src0=128)
          + encode("VOP1", "v_mov_b32", vdst=8, src0=128) + encode("VOP1", "v_mov_b32", vdst=9, src0=128))
  offset = {"ds_load_u8": 512, "ds_load_u8_d16": 512, "ds_load_u8_d16_hi": 512, "ds_load_i8": 512}.get(name, 0)
  address = 5 if words > 1 else 1
  if name == "ds_load_2addr_stride64_b32": code += encode("DS", name, vdst=6, addr=1, offset0=0, offset1=1)
  else: code += encode("DS", name, vdst=6, addr=address, offset0=offset & 0xFF, offset1=offset >> 8)
  code += b"".join(encode("GLOBAL", "global_store_b32", addr=1, data=6 + i, saddr=0, offset=128 * i) for i in range(4)) + ENDPGM
  execute(code, [out], lds=lds)
  memory = np.zeros(lds // 4, np.uint32)
  lane = np.arange(32, dtype=np.uint64)
  memory[:32] = (lane * 0x9F37A1).astype(np.uint32)
  memory[64:96] = memory[:32] ^ 0x80808080
  memory.view(np.uint8)[512 + 4 * np.arange(32)] = (memory[64:96] & 0xFF).astype(np.uint8)
  byte = memory.view(np.uint8)[512 + 4 * np.arange(32)].astype(np.uint32)
  if words > 1: want = [memory[words * np.arange(32) + i] for i in range(words)] + [np.zeros(32, np.uint32)] * (4 - words)
  elif name == "ds_load_2addr_stride64_b32": want = [memory[:32], memory[64:96], np.zeros(32), np.zeros(32)]
  else:
    first = {"ds_load_u8": byte, "ds_load_u8_d16": 0x5555AA00 & 0xFFFF0000 | byte, "ds_load_u8_d16_hi": 0xAAAA | byte << 16,
             "ds_load_u16": memory.view(np.uint16)[256 + 2 * np.arange(32)].astype(np.uint32) * 0 + byte | 0,
             "ds_load_i8": (byte.astype(np.int8).astype(np.int32)).view(np.uint32)}[name]
    want = [first, np.zeros(32), np.zeros(32), np.zeros(32)]
  if name == "ds_load_u16": want[0] = memory.view(np.uint16)[2 * np.arange(32)].astype(np.uint32)
  np.testing.assert_array_equal(out, np.array(want, np.uint32))


def test_vccz_branches_readfirstlane_and_packed_halves():
  out = np.zeros((4, 32), np.uint32)
  code = (lane_offsets() + encode("VOP1", "v_mov_b32", vdst=2, src0=128)
          + encode("VOPC", "v_cmp_eq_u32", src0=128 + 12, vsrc1=1)  # only lane 3
          + encode("SOPP", "s_cbranch_vccz", simm16=1) + encode("VOP1", "v_mov_b32", vdst=2, src0=128 + 1)  # taken by no wave
          + encode("VOPC", "v_cmp_eq_u32", src0=LITERAL, vsrc1=1, literal=999)
          + encode("SOPP", "s_cbranch_vccnz", simm16=1) + encode("VOP1", "v_mov_b32", vdst=3, src0=128 + 2)  # vcc is zero: runs
          + encode("SOP1", "s_mov_b32", sdst=EXEC, ssrc0=LITERAL, literal=0xFFFFFF00)
          + encode("VOP1", "v_readfirstlane_b32", vdst=9, src0=V + 1)  # lane 8's offset: 32
          + encode("SOP1", "s_mov_b32", sdst=EXEC, ssrc0=193)  # all lanes (-1)
          + encode("VOP1", "v_mov_b32", vdst=4, src0=9)
          + encode("VOP1", "v_mov_b32", vdst=5, src0=LITERAL, literal=0x00030002)
          + encode("VOP1", "v_mov_b32", vdst=6, src0=LITERAL, literal=0x0010FFFF)
          + encode("VOP3P", "v_pk_add_u16", vdst=5, src0=V + 5, src1=V + 6, opsel_hi=3)
          + b"".join(encode("GLOBAL", "global_store_b32", addr=1, data=r, saddr=0, offset=128 * i) for i, r in enumerate((2, 3, 4, 5)))
          + ENDPGM)
  execute(code, [out])
  np.testing.assert_array_equal(out[0], 1)  # vccz not taken (lane 3 set vcc): v2 = 1
  np.testing.assert_array_equal(out[1], 2)
  np.testing.assert_array_equal(out[2], 32)
  np.testing.assert_array_equal(out[3], 0x00130001)  # (3 + 0x10) << 16 | (2 + 0xffff) & 0xffff


def test_readlane_and_writelane_pick_one_lane_whatever_exec_holds():
  """v_writelane_b32 writes one lane of a VGPR from an SGPR and v_readlane_b32 reads one into an SGPR (how LLVM spills
  SGPRs to VGPR lanes), the lane from an SGPR or a constant, taken modulo the wave's 32 lanes, with EXEC holding one other
  lane only."""
  out = np.zeros((3, 32), np.uint32)
  code = (lane_offsets() + encode("VOP1", "v_mov_b32", vdst=2, src0=128 + 7)
          + encode("SOP1", "s_mov_b32", sdst=20, ssrc0=LITERAL, literal=0xABCD1234)
          + encode("SOP1", "s_mov_b32", sdst=22, ssrc0=LITERAL, literal=32 + 5)  # lane 5, modulo 32
          + encode("SOP1", "s_mov_b32", sdst=EXEC, ssrc0=LITERAL, literal=1)
          + encode("VOP3", "v_writelane_b32", vdst=2, src0=20, src1=22)
          + encode("VOP3", "v_readlane_b32", vdst=21, src0=V + 1, src1=128 + 9)  # lane 9's offset: 36
          + encode("VOP3", "v_readlane_b32", vdst=23, src0=V + 2, src1=22)
          + encode("SOP1", "s_mov_b32", sdst=EXEC, ssrc0=193)
          + encode("VOP1", "v_mov_b32", vdst=3, src0=21) + encode("VOP1", "v_mov_b32", vdst=4, src0=23)
          + b"".join(encode("GLOBAL", "global_store_b32", addr=1, data=r, saddr=0, offset=128 * i) for i, r in enumerate((2, 3, 4)))
          + ENDPGM)
  execute(code, [out])
  np.testing.assert_array_equal(out[0], np.where(np.arange(32) == 5, 0xABCD1234, 7))
  np.testing.assert_array_equal(out[1], 36)
  np.testing.assert_array_equal(out[2], 0xABCD1234)


def test_hints_change_nothing_and_the_other_branches():
  """Waits, clauses, delays, nops, prefetch hints, cache invalidation and the VGPR-release message leave the state alone;
  s_branch, s_cbranch_scc0 and s_cbranch_execnz jump as their conditions say; s_and_not1_saveexec_b32 masks the others."""
  out = np.zeros((3, 32), np.uint32)
  hints = b"".join(encode("SOPP", name, simm16=value) for name, value in (("s_waitcnt", 0), ("s_clause", 1), ("s_delay_alu", 0x91),
                   ("s_nop", 0), ("s_set_inst_prefetch_distance", 1), ("s_waitcnt_depctr", 0xFFF))) + encode("MUBUF", "buffer_gl0_inv")
  code = (lane_offsets() + hints + encode("VOP1", "v_mov_b32", vdst=2, src0=128 + 1)
          + encode("SOPC", "s_cmp_eq_u32", ssrc0=128, ssrc1=129)  # scc = 0
          + encode("SOPP", "s_cbranch_scc0", simm16=1) + encode("VOP1", "v_mov_b32", vdst=2, src0=128 + 9)  # skipped
          + encode("SOPP", "s_branch", simm16=1) + encode("VOP1", "v_mov_b32", vdst=2, src0=128 + 10)  # skipped
          + encode("VOPC", "v_cmp_gt_u32", src0=128 + 16, vsrc1=1)  # lanes 0-3
          + encode("SOP1", "s_and_not1_saveexec_b32", sdst=8, ssrc0=VCC)  # exec = vcc & ~exec = 0
          + encode("SOPP", "s_cbranch_execnz", simm16=1) + encode("VOP1", "v_mov_b32", vdst=3, src0=128 + 4)  # runs on no lane
          + encode("SOP1", "s_mov_b32", sdst=EXEC, ssrc0=8)
          + encode("VOP1", "v_mov_b32", vdst=4, src0=8)
          + b"".join(encode("GLOBAL", "global_store_b32", addr=1, data=r, saddr=0, offset=128 * i) for i, r in enumerate((2, 3, 4)))
          + encode("SOPP", "s_sendmsg", simm16=3) + ENDPGM)
  execute(code, [out])
  np.testing.assert_array_equal(out[0], 1)
  np.testing.assert_array_equal(out[1], 0)
  np.testing.assert_array_equal(out[2], 0xFFFFFFFF)  # the saved exec


@pytest.mark.parametrize("name, reference, dtype", [
  ("v_pk_add_f16", np.add, np.float16), ("v_pk_mul_f16", np.multiply, np.float16), ("v_pk_max_i16", np.maximum, np.int16),
  ("v_pk_max_u16", np.maximum, np.uint16), ("v_pk_mul_lo_u16", np.multiply, np.uint16)])
def test_packed_ops_work_on_both_halves(name, reference, dtype):
  rng = np.random.default_rng(3)
  a, b = (rng.standard_normal(64).astype(dtype) if dtype == np.float16 else rng.integers(-2**15, 2**15, 64).astype(dtype) for _ in range(2))
  out = np.zeros(64, dtype)
  code = (lane_offsets() + encode("GLOBAL", "global_load_b32", vdst=2, addr=1, saddr=0) + encode("GLOBAL", "global_load_b32", vdst=3, addr=1, saddr=2)
          + encode("VOP3P", name, vdst=4, src0=V + 2, src1=V + 3, opsel_hi=3)
          + encode("GLOBAL", "global_store_b32", addr=1, data=4, saddr=4) + ENDPGM)
  execute(code, [a, b, out])
  with np.errstate(over="ignore"): np.testing.assert_array_equal(out, reference(a, b).astype(dtype))


def test_a_float_mode_the_emulator_does_not_model_is_refused():
  with pytest.raises(UnsupportedInstruction, match="float mode 0x0 .*rounds to nearest and keeps denormals"):
    Launch(ENDPGM, 0, 0, (1, 1, 1), (32, 1, 1), (), 0, 0, 1, float_mode=0)  # denormals flushed
