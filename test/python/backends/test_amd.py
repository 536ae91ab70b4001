"""The AMD device on the MOCK driver (runtime/ops_amd.py, runtime/amd/): bring-up, memory through staging and SDMA, code
objects loaded and launched with PM4 written by pytc, the timeline across the compute and copy rings, TinyJit replays that
patch kernargs, faults and stuck waits reported, never hung on. Results are compared with NumPy; the packets a launch
writes are decoded and checked against the code object's descriptor and the kernel's mapping."""
import ctypes
import os
import threading

import numpy as np
import pytest

from pytc import Device, Tensor, TinyJit, dtypes
from pytc.compiler import compile_kernels
from pytc.realize import schedule
from pytc.runtime.amd import pm4, sdma
from pytc.runtime.amd.rdna3.wave import COUNTERS
from pytc.runtime.amd_code_object import parse as parse_code_object
from pytc.runtime.hcq import SUBMIT_LOCK, DeviceError, SignalTimeout
from pytc.runtime.ops_amd import STAGING_BYTES, split_mock_binary

CHIPS = {"AMD:MOCK": "gfx1100", "AMD:MOCK:1": "gfx942"}


@pytest.fixture(params=list(CHIPS), ids=list(CHIPS.values()))
def amd(request): return request.param


def test_devices_open_as_the_mock_topology_says():
  for name, chip in CHIPS.items():
    device = Device[name]
    assert device.target.arch == chip and device.gpu.arch == chip and device.mock
    assert device.family == pm4.family(chip) and device.sdma_version == sdma.sdma_version(chip)


def test_bad_names_and_a_machine_without_the_driver():
  with pytest.raises(ValueError, match="bad AMD device name"): Device["AMD:MOCK:x"]
  with pytest.raises(RuntimeError, match="no AMD GPU 7: KFD lists 2"): Device["AMD:MOCK:7"]
  if not os.path.exists("/dev/kfd"):
    with pytest.raises(RuntimeError, match="no AMD GPU driver here"): Device["AMD"]


def test_numerics_on_both_chips(amd):
  rng = np.random.default_rng(0)
  x, w = rng.standard_normal((70, 50)).astype(np.float32), rng.standard_normal((50, 33)).astype(np.float32)
  a, b = Tensor(x, device=amd), Tensor(w, device=amd)
  np.testing.assert_allclose((a @ b).numpy(), x @ w, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(a.softmax(1).numpy(), np.exp(x) / np.exp(x).sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
  np.testing.assert_allclose(a.sum().numpy(), x.sum(), rtol=1e-5)
  np.testing.assert_array_equal(a.argmax(0).numpy(), x.argmax(0))
  assert Tensor(3.5, device=amd).numpy() == np.float32(3.5) and (Tensor(2, device=amd) * 3).numpy() == 6
  assert (Tensor(np.zeros((3, 0), np.float32), device=amd) + 1).numpy().shape == (3, 0)


@pytest.mark.parametrize("dtype", [dtypes.bool, dtypes.uint8, dtypes.int64, dtypes.float16, dtypes.bfloat16, dtypes.uint32])
def test_dtypes(dtype):
  data = np.arange(-20, 44).reshape(8, 8) % (2 if dtype == dtypes.bool else 97)
  t = Tensor(data.astype(np.float32), device="AMD:MOCK").cast(dtype)
  expected = Tensor(data.astype(np.float32)).cast(dtype)
  np.testing.assert_array_equal((t.max(1)).numpy(), expected.max(1).numpy())
  np.testing.assert_array_equal((t == t.flip(0)).numpy(), (expected == expected.flip(0)).numpy())


def test_several_outputs_realized_together_and_from_threads(amd):
  x = np.linspace(-3, 3, 4096, dtype=np.float32)
  a = Tensor(x, device=amd)
  s, e, m = a.sum(), a.exp(), a.maximum(0)
  Tensor.realize(s, e, m)
  np.testing.assert_allclose(s.numpy(), x.sum(), atol=1e-3)
  np.testing.assert_allclose(e.numpy(), np.exp(x), rtol=1e-6)
  np.testing.assert_array_equal(m.numpy(), np.maximum(x, 0))
  results, errors = {}, []
  def work(i: int) -> None:
    try: results[i] = (Tensor(x + i, device=amd) * 2).sum().numpy()
    except Exception as error: errors.append(error)
  threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
  for t in threads: t.start()
  for t in threads: t.join()
  assert not errors and all(abs(results[i] - ((x + i) * 2).sum()) < 1e-1 for i in range(4))


def test_copies_larger_than_the_staging_buffers(amd):
  data = np.random.default_rng(1).integers(0, 255, 2 * STAGING_BYTES + 12345, dtype=np.uint8)
  t = Tensor(data, device=amd)
  np.testing.assert_array_equal(t.numpy(), data)
  device = Device[amd]
  copy = device.allocator.alloc(len(data))
  device.allocator.transfer(copy, t.lazydata.arg.raw, len(data))
  out = np.empty_like(data)
  device.allocator.copyout(memoryview(out), copy)
  np.testing.assert_array_equal(out, data)
  with pytest.raises(ValueError, match="copyin of 3 bytes"): device.allocator.copyin(copy, memoryview(b"abc"))


def test_tinyjit_replays_patch_the_kernargs(amd):
  step = TinyJit(lambda t: (t * 3 + 1).sum(1))
  x = np.random.default_rng(2).standard_normal((16, 40)).astype(np.float32)
  for i in range(5): np.testing.assert_allclose(step(Tensor(x + i, device=amd)).numpy(), ((x + i) * 3 + 1).sum(1), rtol=1e-5, atol=1e-4)


def launch_packets(amd: str):
  """The decoded PM4 of realizing one elementwise kernel, the kernel and its code object."""
  device = Device[amd]
  out = Tensor(np.ones(1000, np.float32), device=amd) * 2 + 1
  scheduled, _, _ = schedule([out.lazydata])
  executable = compile_kernels(scheduled, device)
  kernel = executable.program.kernels[scheduled.launches[0].kernel]
  args = kernel.args([device.allocator.alloc(4000) for _ in kernel.pointers])
  queue = device.queue().exec(kernel, args).signal(device.timeline, device.next_timeline_value())
  words = list(np.frombuffer(queue.bytes(), np.uint32))
  code_object = parse_code_object(split_mock_binary(executable.binary.code)[0])
  base = executable.program.buffer.address
  return device, kernel, args, list(pm4.decode(words, device.family)), (base, code_object.kernels[kernel.name]), queue


def test_a_launch_writes_the_registers_the_code_object_asks_for(amd):
  device, kernel, args, packets, (base, code), queue = launch_packets(amd)
  names = [p.name for p in packets]
  assert names[:1] == ["ACQUIRE_MEM"] and names[-3:] == ["EVENT_WRITE", "RELEASE_MEM", "RELEASE_MEM"]
  registers = {}
  for p in packets:
    if p.name == "SET_SH_REG": registers.update({p.fields["register"] + i: v for i, v in enumerate(p.fields["values"])})
  r, d = pm4.registers(device.family), code.descriptor
  assert (registers[r.pgm_lo] | registers[r.pgm_hi] << 32) << 8 == kernel.code_address == base + code.code_address
  assert registers[r.rsrc1] & ~(1 << 20) == d.compute_pgm_rsrc1 and registers[r.rsrc2] == d.compute_pgm_rsrc2
  assert registers[r.rsrc3] == d.compute_pgm_rsrc3 and r.rsrc3 == (0x2E2D if device.family == pm4.GFX9 else 0x2E28)
  assert registers[r.user_data_0] | registers[r.user_data_0 + 1] << 32 == args.address
  assert [registers[a] for a in (r.num_thread_x, r.num_thread_y, r.num_thread_z)] == [kernel.local, 1, 1]
  dispatch = next(p for p in packets if p.name == "DISPATCH_DIRECT").fields
  assert (dispatch["x"], dispatch["y"], dispatch["z"]) == (kernel.grid, 1, 1)
  assert bool(dispatch["initiator"] & pm4.INITIATOR_CS_W32_EN) == (device.family == pm4.GFX11)
  signal, interrupt = packets[-2].fields, packets[-1].fields
  assert (signal["address"], signal["value"], signal["data"]) == (device.timeline.address, device.timeline_value, "value64")
  assert (interrupt["address"], interrupt["value"], interrupt["interrupt"]) == (device.interrupt.mailbox, device.interrupt.event_id, 2)
  assert all(ctypes.c_uint64.from_address(args.address + offset).value for offset in kernel.pointers)
  queue.submit(device)
  device.synchronize(timeout=10)


def test_an_out_of_bounds_kernarg_pointer_is_a_fault_naming_the_address(amd):
  device, kernel, args, _, _, queue = launch_packets(amd)
  ctypes.c_uint64.from_address(args.address + kernel.pointers[0]).value = 0xDEAD0000
  queue.submit(device)
  with pytest.raises(DeviceError, match="0xdead0000"): device.synchronize(timeout=10)
  with pytest.raises(DeviceError, match="0xdead0000"): device.queue().submit(device)
  assert "0xdead0000" in device.reset()
  np.testing.assert_array_equal((Tensor(np.arange(5, dtype=np.int32), device=amd) + 1).numpy(), np.arange(1, 6))


def with_register(queue, register: int, value: int) -> bytes:
  """The queue's PM4 with the SET_SH_REG that writes `register` writing `value` there instead."""
  words, at = list(np.frombuffer(queue.bytes(), np.uint32)), 0
  while at < len(words):
    header = int(words[at])
    body = ((header >> 16) & 0x3FFF) + 1
    if header >> 8 & 0xFF == pm4.SET_SH_REG and pm4.SH_BASE + words[at + 1] <= register < pm4.SH_BASE + words[at + 1] + body - 1:
      words[at + 2 + register - pm4.SH_BASE - words[at + 1]] = value
      return np.array(words, np.uint32).tobytes()
    at += 1 + body
  raise AssertionError(f"no SET_SH_REG of {register:#x}")


def test_a_kernarg_pointer_off_by_8_faults_naming_the_address(amd):
  """The kernel reads its buffer pointers from 8 bytes too far: the last one is no GPU address, and the instruction that
  uses it (on gfx1100: the machine code's own load or store) faults naming that address, rather than writing somewhere."""
  device, kernel, args, _, _, queue = launch_packets(amd)
  r = pm4.registers(device.family)
  device.submit(with_register(queue, r.user_data_0, (args.address + 8) & 0xFFFFFFFF))
  with pytest.raises(DeviceError, match="memory fault .*not mapped" if device.family == pm4.GFX11 else "memory fault") as fault:
    device.synchronize(timeout=10)
  if device.family == pm4.GFX11: assert "global_" in str(fault.value) and "at pc 0x" in str(fault.value)
  device.reset()


def test_a_wrong_user_sgpr_count_is_a_fault_not_a_wrong_answer(amd):
  """RSRC2 asking for one user SGPR less than the descriptor: the workgroup id would land where the kernel does not read it."""
  device, kernel, args, _, _, queue = launch_packets(amd)
  r = pm4.registers(device.family)
  count = kernel.rsrc2 >> 1 & 0x1F
  device.submit(with_register(queue, r.rsrc2, kernel.rsrc2 & ~(0x1F << 1) | (count - 1) << 1))
  with pytest.raises(DeviceError, match="RSRC2 .* not the descriptor's"): device.synchronize(timeout=10)
  device.reset()
  np.testing.assert_array_equal((Tensor(np.arange(3, dtype=np.int32), device=amd) * 2).numpy(), [0, 2, 4])


def test_the_mock_execution_mode(monkeypatch):
  """PYTC_AMD_MOCK picks what a gfx1100 dispatch runs: the machine code (isa, the default) or the CPU emulation; another
  value faults the queue naming it."""
  x = np.arange(40, dtype=np.float32)
  for mode in ("isa", "emulation"):
    monkeypatch.setenv("PYTC_AMD_MOCK", mode)
    before = COUNTERS.dispatches
    np.testing.assert_array_equal((Tensor(x, device="AMD:MOCK") * 3 - 1).numpy(), x * 3 - 1)
    assert (COUNTERS.dispatches > before) == (mode == "isa")
  monkeypatch.setenv("PYTC_AMD_MOCK", "hardware")
  with pytest.raises(DeviceError, match="hardware exception .*PYTC_AMD_MOCK='hardware'"): (Tensor(x, device="AMD:MOCK") + 2).numpy()
  monkeypatch.setenv("PYTC_AMD_MOCK", "isa")
  Device["AMD:MOCK"].reset()


def test_an_instruction_the_emulator_lacks_is_a_hardware_exception_naming_it():
  """The gfx1100's first instruction overwritten in GPU memory by one the emulator has no semantics for: the wave traps."""
  from pytc.runtime.amd.rdna3.decode import encode
  device, kernel, args, _, _, queue = launch_packets("AMD:MOCK")
  instruction = encode("VOP1", "v_movrels_b32", vdst=1, src0=256)
  device.timeline.wait(device.timeline_value - 1, 10)  # the code object's copy into VRAM has landed (the launch is not submitted)
  ctypes.memmove(kernel.code_address, instruction, len(instruction))
  queue.submit(device)
  with pytest.raises(DeviceError, match="hardware exception .*does not implement v_movrels_b32 at offset 0x0"): device.synchronize(timeout=10)
  device.reset()


def test_a_wait_that_never_comes_times_out_and_reset_recovers(amd):
  device = Device[amd]
  gate = device.new_signal()
  device.queue().wait(gate, 1).signal(device.timeline, device.next_timeline_value()).submit(device)
  with pytest.raises(SignalTimeout): device.synchronize(timeout=0.2)
  gate.value = 1
  device.synchronize(timeout=10)
  device.queue().wait(gate, 2).signal(device.timeline, device.next_timeline_value()).submit(device)
  with pytest.raises(SignalTimeout): device.synchronize(timeout=0.2)
  assert "did not finish" in device.reset()
  assert device.reset() is None
  np.testing.assert_array_equal((Tensor([1.0, 2.0], device=amd) * 4).numpy(), [4.0, 8.0])


def test_malformed_pm4_stops_the_queue_with_a_fault(amd):
  device = Device[amd]
  with pytest.raises(ValueError, match="whole dwords"): device.submit(b"\x01\x02\x03")
  signal = device.queue().signal(device.timeline, device.next_timeline_value()).bytes()
  device.submit(np.array([0x80000000 | 0x7F << 8, 0, 0], np.uint32).tobytes() + signal)
  with pytest.raises(DeviceError, match="memory fault"): device.synchronize(timeout=10)
  device.reset()
  assert (Tensor([3], device=amd) + 1).numpy().tolist() == [4]


def test_kernarg_blocks_are_reused_only_after_the_timeline_passed_them(amd):
  device = Device[amd]
  arena, gate = device.kernargs, device.new_signal()
  device.queue().wait(gate, 1).signal(device.timeline, device.next_timeline_value()).submit(device)
  first = arena.alloc(4096)
  arena.release(first, 4096)
  assert arena.alloc(4096) != first  # the submission before the release has not finished
  gate.value = 1
  device.synchronize(timeout=10)
  assert arena.alloc(4096) == first


def test_copy_queue_packets_and_timestamps(amd):
  device = Device[amd]
  queue = device.copy_queue().copy(0x10000, 0x20000, sdma.max_copy_bytes(device.sdma_version) + 8).signal(device.timeline, 5)
  names = [p.name for packet in queue.packets for p in sdma.decode(packet, device.sdma_version)]
  assert names == ["COPY_LINEAR", "COPY_LINEAR", "FENCE", "FENCE", "TRAP"]
  start, end = device.new_signal(), device.new_signal()
  x = Tensor(np.ones(1 << 16, np.float32), device=amd)
  x.realize()
  with SUBMIT_LOCK:
    device.queue().timestamp(start).timestamp(end).signal(device.timeline, device.next_timeline_value()).submit(device)
  device.synchronize(timeout=10)
  assert 0 < start.timestamp_ns <= end.timestamp_ns
