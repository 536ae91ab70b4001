"""PM4 and SDMA packet encoders and decoders: golden dwords written by hand from the packet layouts, round trips, errors, fuzzing."""
import random

import pytest

from pytc.runtime.amd import pm4, sdma

GFX9, GFX11 = pm4.GFX9, pm4.GFX11
A8 = 0x7F0012345678  # a 48-bit, 8-byte aligned address: lo 0x12345678, hi 0x7F00
ONES = 0xFFFFFFFF

# ***** golden packets *****

def same(words: list[int]) -> dict: return {GFX9: words, GFX11: words, 4: words, 6: words}


PM4_GOLDEN = [
  ("sh_pgm", lambda f: pm4.set_sh_reg(0x2E0C, 0x12345, 0x7F), same([0xC0027600, 0x20C, 0x12345, 0x7F])),
  ("sh_rsrc3", lambda f: pm4.set_sh_reg(pm4.registers(f).rsrc3, 0x10), {GFX9: [0xC0017600, 0x22D, 0x10], GFX11: [0xC0017600, 0x228, 0x10]}),
  ("uconfig", lambda f: pm4.set_uconfig_reg(0xC200, 0xE0000000), same([0xC0017900, 0x200, 0xE0000000])),
  ("acquire_dispatch", lambda f: pm4.acquire_mem(f, caches="dispatch"),
   {GFX9: [0xC0055800, 0x08400000, ONES, ONES, 0, 0, 0xA], GFX11: [0xC0065800, 0, ONES, ONES, 0, 0, 0, 0x3F0]}),
  ("acquire_all", lambda f: pm4.acquire_mem(f, caches="all"),
   {GFX9: [0xC0055800, 0x28C40000, ONES, ONES, 0, 0, 0xA], GFX11: [0xC0065800, 0, ONES, ONES, 0, 0, 0, 0xC3F1]}),
  ("release_signal", lambda f: pm4.release_mem(f, A8, 42, data="value32"),
   {GFX9: [0xC0064900, 0x88514, 0x20000000, 0x12345678, 0x7F00, 42, 0, 0], GFX11: [0xC0064900, 0x70F514, 0x20000000, 0x12345678, 0x7F00, 42, 0, 0]}),
  ("release_value64", lambda f: pm4.release_mem(f, A8, 0x123456789, data="value64"),
   {GFX9: [0xC0064900, 0x88514, 0x40000000, 0x12345678, 0x7F00, 0x23456789, 1, 0],
    GFX11: [0xC0064900, 0x70F514, 0x40000000, 0x12345678, 0x7F00, 0x23456789, 1, 0]}),
  ("release_timestamp", lambda f: pm4.release_mem(f, A8 + 8, data="timestamp", flush=False),
   same([0xC0064900, 0x514, 0x60000000, 0x12345680, 0x7F00, 0, 0, 0])),
  ("release_drain", lambda f: pm4.release_mem(f, 0, data="none", interrupt=2, flush=False), same([0xC0064900, 0x514, 0x02000000, 0, 0, 0, 0, 0])),
  ("wait_geq", lambda f: pm4.wait_reg_mem(A8, 5), same([0xC0053C00, 0x15, 0x12345678, 0x7F00, 5, ONES, 4])),
  ("wait_eq", lambda f: pm4.wait_reg_mem(0x1000, 1, 1, pm4.EQ), same([0xC0053C00, 0x13, 0x1000, 0, 1, 1, 4])),
  ("hdp_flush", pm4.hdp_flush, same([0xC0053C00, 0x45, 0xE26, 0xE27, ONES, ONES, 4])),
  ("dispatch", lambda f: pm4.dispatch_direct(4, 2, 1, pm4.dispatch_initiator(f, False)), same([0xC0031500, 4, 2, 1, 5])),
  ("partial_flush", lambda f: pm4.event_write(pm4.CS_PARTIAL_FLUSH, 4), same([0xC0004600, 0x407])),
  ("indirect", lambda f: pm4.indirect_buffer(0x7F0000001000, 16), same([0xC0023F00, 0x1000, 0x7F00, 0x800010])),
  ("nop0", lambda f: pm4.nop(0), same([0xFFFF1000])),
  ("nop2", lambda f: pm4.nop(2), same([0xC0011000, 0, 0])),
]


@pytest.mark.parametrize("fam", [GFX9, GFX11])
@pytest.mark.parametrize("name,encode,expected", PM4_GOLDEN, ids=[g[0] for g in PM4_GOLDEN])
def test_pm4_golden(name, encode, expected, fam):
  assert encode(fam) == expected[fam]


def test_pm4_golden_gfx11_only():
  assert pm4.release_mem(GFX11, 0x1000, 7, data="value32", interrupt=2, ctxid=7, flush=False) == [0xC0064900, 0x514, 0x22000000, 0x1000, 0, 7, 0, 7]
  assert pm4.dispatch_direct(8, 1, 1, pm4.dispatch_initiator(GFX11, True)) == [0xC0031500, 8, 1, 1, 0x8005]
  assert [pm4.header(pm4.SET_SH_REG, 2), pm4.header(pm4.SET_SH_REG, 3), pm4.header(pm4.RELEASE_MEM, 7)] == [0xC0017600, 0xC0027600, 0xC0064900]


def test_pm4_registers_and_family():
  for fam in (GFX9, GFX11):
    r = pm4.registers(fam)
    assert (r.pgm_lo, r.pgm_hi, r.rsrc1, r.rsrc2, r.tmpring_size, r.user_data_0) == (0x2E0C, 0x2E0D, 0x2E12, 0x2E13, 0x2E18, 0x2E40)
    assert (r.resource_limits, r.start_x, r.num_thread_x, r.num_thread_y, r.num_thread_z) == (0x2E15, 0x2E04, 0x2E07, 0x2E08, 0x2E09)
    assert (r.restart_x, r.scratch_base_lo) == (0x2E1B, 0x2E10)
    assert (r.hdp_flush_req, r.hdp_flush_done) == (0xE26, 0xE27)
  assert (pm4.registers(GFX9).rsrc3, pm4.registers(GFX11).rsrc3) == (0x2E2D, 0x2E28)
  assert [pm4.family(a) for a in ("gfx90a", "gfx942", "gfx942:sramecc+:xnack-", "gfx1100", "gfx1101")] == [9, 9, 9, 11, 11]
  for arch in ("gfx1030", "gfx1200", "sm_80"):
    with pytest.raises(ValueError, match=arch): pm4.family(arch)
  assert pm4.NAMES[pm4.RELEASE_MEM] == "RELEASE_MEM" and len(pm4.NAMES) == 9


SDMA_GOLDEN = [
  ("copy", lambda v: sdma.copy_linear(0x7F0000002000, 0x1000, 256, v), same([1, 0xFF, 0, 0x1000, 0, 0x2000, 0x7F00])),
  ("copy_max", lambda v: sdma.copy_linear(0, A8, sdma.max_copy_bytes(v), v),
   {4: [1, 0x3FFFFF, 0, 0x12345678, 0x7F00, 0, 0], 6: [1, 0x3FFFFFFF, 0, 0x12345678, 0x7F00, 0, 0]}),
  ("fence", lambda v: sdma.fence(A8 + 4, 9, v), {4: [0x5, 0x1234567C, 0x7F00, 9], 6: [0x00030005, 0x1234567C, 0x7F00, 9]}),
  ("trap", lambda v: sdma.trap(77), same([6, 77])),
  ("poll", lambda v: sdma.poll_regmem(A8, 3), same([0xD0000008, 0x12345678, 0x7F00, 3, ONES, 0x0FFF0004])),
  ("poll_eq", lambda v: sdma.poll_regmem(0x1000, 0, 1, sdma.EQ, 10, 5), same([0xB0000008, 0x1000, 0, 0, 1, 0x5000A])),
  ("timestamp", lambda v: sdma.timestamp(A8), same([0x20D, 0x12345678, 0x7F00])),
  ("write", lambda v: sdma.write(0x1000, 1, 2), same([2, 0x1000, 0, 1, 1, 2])),
  ("nop", lambda v: sdma.nop(2), same([0, 0])),
]


@pytest.mark.parametrize("version", [4, 6])
@pytest.mark.parametrize("name,encode,expected", SDMA_GOLDEN, ids=[g[0] for g in SDMA_GOLDEN])
def test_sdma_golden(name, encode, expected, version):
  assert encode(version) == expected[version]


def test_sdma_version():
  assert [sdma.sdma_version(a) for a in ("gfx90a", "gfx942", "gfx1100")] == [4, 4, 6]
  assert (sdma.max_copy_bytes(4), sdma.max_copy_bytes(6)) == (1 << 22, 1 << 30)
  with pytest.raises(ValueError, match="gfx1030"): sdma.sdma_version("gfx1030")
  with pytest.raises(ValueError): sdma.max_copy_bytes(5)


# ***** round trips *****

def random_pm4(rng: random.Random, fam: int) -> tuple[list[int], str, dict]:
  address = lambda align: rng.choice([0, (1 << 48) - align, rng.randrange(0, 1 << 48, align)])
  u32 = lambda: rng.choice([0, ONES, rng.getrandbits(32)])
  kind = rng.randrange(10)
  if kind == 0:
    n = rng.choice([1, 2, 8, pm4.WINDOW])
    register = rng.randrange(pm4.SH_BASE, pm4.SH_BASE + pm4.WINDOW - n + 1)
    values = tuple(u32() for _ in range(n))
    return pm4.set_sh_reg(register, *values), "SET_SH_REG", {"register": register, "values": values}
  if kind == 1:
    register, value = rng.randrange(pm4.UCONFIG_BASE, pm4.UCONFIG_BASE + pm4.WINDOW), u32()
    return pm4.set_uconfig_reg(register, value), "SET_UCONFIG_REG", {"register": register, "values": (value,)}
  if kind == 2:
    caches = rng.choice(["dispatch", "all"])
    return pm4.acquire_mem(fam, caches=caches), "ACQUIRE_MEM", {"caches": caches, "size": (1 << 64) - 1, "base": 0}
  if kind == 3:
    data, interrupt, flush = rng.choice(list(pm4.DATA_SELECT)), rng.randrange(7), rng.random() < 0.5
    addr, value = address(8 if data in ("value64", "timestamp") else 4), rng.getrandbits(32 if data == "value32" else 64)
    ctxid = 0 if fam == GFX9 else u32()
    return (pm4.release_mem(fam, addr, value, data=data, interrupt=interrupt, ctxid=ctxid, flush=flush), "RELEASE_MEM",
            {"event": 0x14, "index": 5, "flush": flush, "data": data, "interrupt": interrupt, "address": addr, "value": value, "ctxid": ctxid})
  if kind == 4:
    addr, reference, mask, function, interval = address(4), u32(), u32(), rng.randrange(7), rng.randrange(1 << 16)
    return (pm4.wait_reg_mem(addr, reference, mask, function, interval), "WAIT_REG_MEM",
            {"function": function, "memory": True, "operation": 0, "address": addr, "reg1": 0, "reg2": 0, "reference": reference, "mask": mask,
             "interval": interval})
  if kind == 5:
    return (pm4.hdp_flush(fam), "WAIT_REG_MEM",
            {"function": 5, "memory": False, "operation": 1, "address": 0, "reg1": 0xE26, "reg2": 0xE27, "reference": ONES, "mask": ONES,
             "interval": 4})
  if kind == 6:
    x, y, z = (rng.choice([1, ONES, rng.randrange(1, 1 << 32)]) for _ in range(3))
    initiator = pm4.dispatch_initiator(fam, fam == GFX11 and rng.random() < 0.5)
    return pm4.dispatch_direct(x, y, z, initiator), "DISPATCH_DIRECT", {"x": x, "y": y, "z": z, "initiator": initiator}
  if kind == 7:
    event, index = rng.randrange(64), rng.randrange(16)
    return pm4.event_write(event, index), "EVENT_WRITE", {"event": event, "index": index}
  if kind == 8:
    addr, dwords = address(4), rng.choice([1, (1 << 20) - 1, rng.randrange(1, 1 << 20)])
    return pm4.indirect_buffer(addr, dwords), "INDIRECT_BUFFER", {"address": addr, "dwords": dwords, "valid": True}
  n = rng.choice([0, 1, 5, 0x3FFF])
  return pm4.nop(n), "NOP", {"dwords": n}


def random_sdma(rng: random.Random, version: int) -> tuple[list[int], str, dict]:
  address = lambda align: rng.choice([0, (1 << 48) - 8, rng.randrange(0, 1 << 48, align)])
  u32 = lambda: rng.choice([0, ONES, rng.getrandbits(32)])
  kind = rng.randrange(7)
  if kind == 0:
    nbytes = rng.choice([1, sdma.max_copy_bytes(version), rng.randrange(1, sdma.max_copy_bytes(version))])
    dst, src = (rng.choice([0, (1 << 48) - nbytes, rng.randrange(0, (1 << 48) - nbytes)]) for _ in range(2))
    return sdma.copy_linear(dst, src, nbytes, version), "COPY_LINEAR", {"destination": dst, "source": src, "bytes": nbytes}
  if kind == 1:
    addr, value = address(4), u32()
    return sdma.fence(addr, value, version), "FENCE", {"address": addr, "value": value}
  if kind == 2:
    context = rng.choice([0, (1 << 28) - 1, rng.getrandbits(28)])
    return sdma.trap(context), "TRAP", {"context": context}
  if kind == 3:
    addr, reference, mask, function, interval, retries = address(4), u32(), u32(), rng.randrange(7), rng.randrange(1 << 16), rng.randrange(1 << 12)
    return (sdma.poll_regmem(addr, reference, mask, function, interval, retries), "POLL_REGMEM",
            {"address": addr, "reference": reference, "mask": mask, "function": function, "memory": True, "interval": interval, "retries": retries})
  if kind == 4:
    addr = address(8)
    return sdma.timestamp(addr), "TIMESTAMP", {"address": addr}
  if kind == 5:
    values = tuple(u32() for _ in range(rng.randrange(1, 6)))
    addr = rng.randrange(0, (1 << 48) - 4 * len(values), 4)
    return sdma.write(addr, *values), "WRITE", {"address": addr, "values": values}
  return sdma.nop(1), "NOP", {"dwords": 1}


@pytest.mark.parametrize("fam", [GFX9, GFX11])
def test_pm4_round_trip(fam):
  rng, words, expected = random.Random(fam), [], []
  for _ in range(600):
    packet, name, fields = random_pm4(rng, fam)
    expected.append(pm4.Packet(name, len(words), fields))
    words += packet
  assert all(0 <= w <= ONES for w in words)
  assert list(pm4.decode(words, fam)) == expected


@pytest.mark.parametrize("version", [4, 6])
def test_sdma_round_trip(version):
  rng, words, expected = random.Random(version), [], []
  for _ in range(600):
    packet, name, fields = random_sdma(rng, version)
    expected.append(sdma.Packet(name, 4 * len(words), fields))
    words += packet
  assert all(0 <= w <= ONES for w in words)
  assert list(sdma.decode(words, version)) == expected


# ***** copy splitting *****

@pytest.mark.parametrize("version", [4, 6])
def test_copy_splitting(version):
  step = sdma.max_copy_bytes(version)
  assert sdma.copy(0x2000, 0x1000, 0, version) == []
  for nbytes in (1, step - 1, step, step + 1, 2 * step, 3 * step - 7):
    pieces = list(sdma.decode(sdma.copy(A8, 0x1000, nbytes, version), version))
    assert len(pieces) == -(-nbytes // step) and sum(p.fields["bytes"] for p in pieces) == nbytes
    assert all(p.fields["bytes"] == step for p in pieces[:-1])
    assert [(p.fields["destination"], p.fields["source"]) for p in pieces] == [(A8 + i * step, 0x1000 + i * step) for i in range(len(pieces))]
    assert [p.offset for p in pieces] == [28 * i for i in range(len(pieces))]


# ***** encoder errors *****

PM4_BAD = [
  lambda: pm4.set_sh_reg(0x2BFF, 1), lambda: pm4.set_sh_reg(0x3000, 1), lambda: pm4.set_sh_reg(0x2FFF, 1, 2), lambda: pm4.set_sh_reg(0x2E00),
  lambda: pm4.set_sh_reg(0x2E00, 1 << 32), lambda: pm4.set_sh_reg(0x2E00, -1), lambda: pm4.set_uconfig_reg(0x2E00, 1),
  lambda: pm4.header(pm4.NOP, 0), lambda: pm4.header(pm4.NOP, 0x4001), lambda: pm4.header(0x100, 1),
  lambda: pm4.acquire_mem(GFX11, caches="l2"), lambda: pm4.acquire_mem(10, caches="all"), lambda: pm4.registers(12),
  lambda: pm4.release_mem(GFX11, 0x1002, data="value32"), lambda: pm4.release_mem(GFX11, 0x1004, data="value64"),
  lambda: pm4.release_mem(GFX11, 0x1004, data="timestamp"), lambda: pm4.release_mem(GFX11, 1 << 48, data="value32"),
  lambda: pm4.release_mem(GFX11, -8, data="value32"), lambda: pm4.release_mem(GFX11, 0x1000, 1 << 32, data="value32"),
  lambda: pm4.release_mem(GFX11, 0x1000, 1 << 64, data="value64"), lambda: pm4.release_mem(GFX11, 0x1000, data="value16"),
  lambda: pm4.release_mem(GFX11, 0x1000, data="value32", interrupt=7), lambda: pm4.release_mem(GFX9, 0x1000, data="value32", ctxid=3),
  lambda: pm4.release_mem(GFX11, 0x1000, data="value32", ctxid=1 << 32),
  lambda: pm4.wait_reg_mem(0x1001, 0), lambda: pm4.wait_reg_mem(1 << 48, 0), lambda: pm4.wait_reg_mem(0x1000, 1 << 32),
  lambda: pm4.wait_reg_mem(0x1000, 0, function=7), lambda: pm4.wait_reg_mem(0x1000, 0, interval=1 << 16),
  lambda: pm4.wait_reg_mem(0x1000, 0, mask=-1),
  lambda: pm4.dispatch_direct(0, 1, 1, 5), lambda: pm4.dispatch_direct(1, 1 << 32, 1, 5), lambda: pm4.dispatch_direct(1, 1, 1, 1 << 32),
  lambda: pm4.dispatch_initiator(GFX9, True), lambda: pm4.event_write(64, 0), lambda: pm4.event_write(7, 16),
  lambda: pm4.indirect_buffer(0x1002, 4), lambda: pm4.indirect_buffer(0x1000, 0), lambda: pm4.indirect_buffer(0x1000, 1 << 20),
  lambda: pm4.nop(-1), lambda: pm4.nop(0x4000), lambda: pm4.hdp_flush(10),
]
SDMA_BAD = [
  lambda: sdma.copy_linear(0, 0, 0, 6), lambda: sdma.copy_linear(0, 0, (1 << 22) + 1, 4), lambda: sdma.copy_linear(0, 0, (1 << 30) + 1, 6),
  lambda: sdma.copy_linear((1 << 48) - 4, 0, 8, 6), lambda: sdma.copy_linear(0, -1, 8, 6), lambda: sdma.copy_linear(0, 0, 8, 5),
  lambda: sdma.copy(0, 0, -1, 4), lambda: sdma.copy(1 << 48, 0, 0, 4), lambda: sdma.fence(0x1002, 0, 6), lambda: sdma.fence(0x1000, 1 << 32, 6),
  lambda: sdma.fence(0x1000, 0, 5), lambda: sdma.trap(1 << 28), lambda: sdma.trap(-1), lambda: sdma.poll_regmem(0x1001, 0),
  lambda: sdma.poll_regmem(0x1000, 0, function=7), lambda: sdma.poll_regmem(0x1000, 0, interval=1 << 16),
  lambda: sdma.poll_regmem(0x1000, 0, retries=1 << 12),
  lambda: sdma.timestamp(0x1004), lambda: sdma.timestamp(1 << 48), lambda: sdma.nop(-1), lambda: sdma.write(0x1000),
  lambda: sdma.write(0x1002, 1), lambda: sdma.write(0x1000, 1 << 32),
]


@pytest.mark.parametrize("encode", PM4_BAD + SDMA_BAD)
def test_encoder_errors(encode):
  with pytest.raises(ValueError): encode()


# ***** decoder errors *****

SIGNAL = pm4.release_mem(GFX11, 0x1000, 1, data="value32")
PM4_DECODE_BAD = [
  (GFX11, [*pm4.nop(1), 0x80000000], "dword 2: .*type-2"),
  (GFX11, [0x00001000], "dword 0: .*type-0"),
  (GFX11, [0xC0001100, 0], "dword 0: unknown PM4 opcode 0x11"),
  (GFX11, [0xC0001001, 0], "dword 0: .*predicate"),
  (GFX11, pm4.acquire_mem(GFX9, caches="all"), "dword 0: ACQUIRE_MEM has COUNT 5, expected 6"),
  (GFX9, pm4.acquire_mem(GFX11, caches="all"), "dword 0: ACQUIRE_MEM has COUNT 6, expected 5"),
  (GFX11, [pm4.header(pm4.DISPATCH_DIRECT, 3), 1, 1, 1], "DISPATCH_DIRECT has COUNT 2"),
  (GFX11, [*pm4.nop(0), *SIGNAL[:-1]], "dword 1: RELEASE_MEM with 7 body dwords runs past the end"),
  (GFX11, [pm4.header(pm4.SET_SH_REG, 3), 0x3FF, 1, 2], "dword 0: SET_SH_REG registers 0x2fff..0x3000 leave the window"),
  (GFX11, [pm4.header(pm4.SET_SH_REG, 2), 0x10000, 1], "INDEX/VMID_SHIFT"),
  (GFX11, [pm4.header(pm4.SET_SH_REG, 1), 0x200], "no value"),
  (GFX9, pm4.release_mem(GFX11, 0x1000, 7, data="value32", ctxid=7), "gfx9 does not take"),
  (GFX9, pm4.dispatch_direct(1, 1, 1, pm4.dispatch_initiator(GFX11, True)), "wave32"),
  (GFX11, [*SIGNAL[:2], 7 << 24, *SIGNAL[3:]], "INT_SEL 7"),
  (GFX11, [pm4.header(pm4.WAIT_REG_MEM, 6), 0x17, 0, 0, 0, 0, 4], "function 7"),
  (GFX11, [pm4.header(pm4.WAIT_REG_MEM, 6), 0x25, 0, 0, 0, 0, 4], "MEM_SPACE 2"),
  (GFX11, [pm4.header(pm4.WAIT_REG_MEM, 6), 0x55, 0, 0, 0, 0, 4], "operation 1"),
  (GFX11, [pm4.header(pm4.INDIRECT_BUFFER, 3), 0x1002, 0, 4 | 1 << 23], "not dword aligned"),
  (GFX11, [1 << 32], "dword 0: .*not a u32"),
  (GFX11, [-1], "not a u32"),
  (GFX11, [*pm4.nop(0), "x"], "dword 1: .*not an integer"),
]


@pytest.mark.parametrize("fam,words,message", PM4_DECODE_BAD)
def test_pm4_decode_errors(fam, words, message):
  with pytest.raises(pm4.PacketError, match=message): list(pm4.decode(words, fam))


SDMA_DECODE_BAD = [
  ([0, 3], "byte 4: unknown SDMA op 3"),
  ([0x101, *sdma.copy_linear(0, 0, 4, 6)[1:]], "byte 0: COPY_LINEAR has an unknown sub-op 1"),
  ([0x10D, 0, 0], "TIMESTAMP has an unknown sub-op 1"),
  ([0x108, 0, 0, 0, 0, 0], "POLL_REGMEM has an unknown sub-op 1"),
  ([0, *sdma.fence(0x1000, 1, 6)[:3]], "byte 4: FENCE of 4 dwords runs past the end"),
  ([2, 0x1000, 0], "WRITE runs past the end"),
  ([*sdma.write(0x1000, 1, 2)[:-1]], "byte 0: WRITE of 6 dwords runs past the end"),
  ([1, 1 << 22, 0, 0, 0, 0, 0], "bad count"),
  ([1 | 1 << 25, 0, 0, 0, 0, 0, 0], "flags"),
  ([0x70000008, 0, 0, 0, 0, 0], "function 7"),
  ([0x10000], "NOP header"),
  ([0, 0, 1 << 32], "byte 8: .*not a u32"),
]


@pytest.mark.parametrize("words,message", SDMA_DECODE_BAD)
def test_sdma_decode_errors(words, message):
  with pytest.raises(sdma.PacketError, match=message): list(sdma.decode(words, 4))


def test_decode_bad_family():
  with pytest.raises(ValueError): list(pm4.decode([], 10))
  with pytest.raises(ValueError): list(sdma.decode([], 5))
  assert list(sdma.decode([1, (1 << 30) - 1, 0, 0, 0, 0, 0], 6))[0].fields["bytes"] == 1 << 30


# ***** fuzzing: decode either reads packets or raises PacketError, never anything else *****

def fuzz_cases(rng: random.Random, valid: list[int], headers: list[int], n: int):
  for i in range(n):
    kind = i % 4
    if kind == 0: yield [rng.getrandbits(32) for _ in range(rng.randrange(12))]
    elif kind == 1:
      noise = rng.getrandbits(32) & rng.choice([0, 0x3F0000, 0xFFFF00FF, ONES])  # none, a random count, random flags, anything
      yield [rng.choice(headers) | noise, *(rng.getrandbits(32) for _ in range(rng.randrange(9)))]
    elif kind == 2: yield valid[:rng.randrange(len(valid))]
    else:
      flipped = list(valid)
      for _ in range(rng.randrange(1, 4)): flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(32)
      yield flipped


def run_fuzz(decode, error, cases) -> int:
  decoded = 0
  for words in cases:
    try: decoded += len(list(decode(words)))
    except error: pass
  return decoded


@pytest.mark.parametrize("fam", [GFX9, GFX11])
def test_pm4_fuzz(fam):
  rng = random.Random(1000 + fam)
  valid = [w for packet in (random_pm4(rng, fam)[0] for _ in range(40)) if len(packet) < 16 for w in packet]
  headers = [pm4.header(op, 1) & 0xFF00FF00 for op in pm4.NAMES] + [0xC0000000, 0x80000000]
  assert run_fuzz(lambda w: pm4.decode(w, fam), pm4.PacketError, fuzz_cases(rng, valid, headers, 2000)) > 0


@pytest.mark.parametrize("version", [4, 6])
def test_sdma_fuzz(version):
  rng = random.Random(2000 + version)
  valid = [w for _ in range(12) for w in random_sdma(rng, version)[0]]
  headers = [op | sub << 8 for op in sdma.NAMES for sub in (0, 2)] + [0xD0000008, 0x00030005]
  assert run_fuzz(lambda w: sdma.decode(w, version), sdma.PacketError, fuzz_cases(rng, valid, headers, 2000)) > 0
