"""The NV device (runtime/ops_nv.py) against a fake libcuda: fake_cuda.c, compiled here and loaded through PYTC_LIBCUDA, which
implements the driver entry points NV calls over host memory. The fake runs no kernel code, so these tests check what reaches
the driver (allocations, copies, modules, each launch with its grid, block and parameters, stream memory operations, events),
never the values kernels compute. TestRealGPU runs graphs on a real GPU, when libcuda.so.1 loads, and compares them with NumPy."""
import ctypes
import gc
import struct
import subprocess
import threading
import time

import numpy as np
import pytest

from pytc import Device, Tensor, TinyJit
from pytc.cli import main
from pytc.compiler import compile_kernels, context
from pytc.compilers.gpu import gpu_compiler
from pytc.pipelines import copy_module
from pytc.realize import _schedules, schedule
from pytc.runtime import DeviceError, Signal, SignalTimeout, backends
from pytc.runtime.cuda import CUDAError
from pytc.runtime.device import Binary, KernelInfo
from pytc.runtime.ops_nv import NVBuffer, NVDevice, NVSignal

RNG = np.random.default_rng(3)


class Launch(ctypes.Structure):
  _fields_ = [("name", ctypes.c_char * 64), ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("params", ctypes.c_int),
              ("values", ctypes.c_ulonglong * 16)]


class Fake:
  """The fake driver's own view: the launches it was given, its live device allocations and modules."""
  def __init__(self, path: str): self.library = ctypes.CDLL(path)

  def launches(self) -> list[tuple[str, tuple[int, ...], tuple[int, ...], list[int]]]:
    launches = (Launch * (count := self.library.fake_launches(None, 0)))()
    self.library.fake_launches(launches, count)
    return [(launch.name.decode(), tuple(launch.grid), tuple(launch.block), list(launch.values[:launch.params])) for launch in launches]

  def allocations(self) -> int: return self.library.fake_live_allocations()
  def modules(self) -> int: return self.library.fake_live_modules()


def close_nv() -> None:
  """Forget the opened NV devices and the programs loaded on them (the next test opens its own, maybe on another driver)."""
  for name in [n for n in Device._opened if n.split(":")[0] == "NV"]: del Device._opened[name]
  for key in list(_schedules):
    if (kept := _schedules.get(key)) is not None:
      for name in [n for n in kept.schedule.executables if n.split(":")[0] == "NV"]: del kept.schedule.executables[name]


@pytest.fixture(scope="module")
def fake_library(tmp_path_factory) -> str:
  path = tmp_path_factory.mktemp("fake_cuda") / "libcuda_fake.so"
  subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(path), str(__file__).replace("test_nv.py", "fake_cuda.c")], check=True)
  return str(path)


@pytest.fixture
def fake(fake_library, monkeypatch):
  monkeypatch.setenv("PYTC_LIBCUDA", fake_library)
  driver = Fake(fake_library)
  driver.library.fake_reset()
  yield driver
  close_nv()
  driver.library.fake_reset()


_binaries: dict[str, Binary] = {}


def two_kernel_graph(x: Tensor, y: Tensor) -> Tensor:
  """Two kernels: a full reduction into a temporary (of fewer terms than pytc-split-reduce splits), and a kernel that reads it."""
  return (x.sum(0) + y).exp() * x.sum()


def binary_for(chip: str) -> Binary:
  """The PTX of two_kernel_graph's schedule for `chip`, as PTXCompiler builds it (compiled once per chip)."""
  if chip not in _binaries:
    scheduled = schedule([two_kernel_graph(Tensor(np.ones((32, 300), np.float32)), Tensor(np.ones(300, np.float32))).lazydata])[0]
    with context(): _binaries[chip] = gpu_compiler(chip).compile(copy_module(scheduled.kernels), "nv_test", cached=False)[0]
  return _binaries[chip]


def test_without_a_driver_nv_does_not_open_but_is_listed(monkeypatch, tmp_path, capsys):
  monkeypatch.setenv("PYTC_LIBCUDA", str(tmp_path / "libcuda.so.1"))
  for open_nv in (lambda: NVDevice("NV"), lambda: Device["NV"], lambda: Tensor([1.0, 2.0], device="NV")):
    with pytest.raises(RuntimeError) as raised: open_nv()
    assert str(raised.value).startswith("no NVIDIA driver (libcuda.so not found)")
  assert "NV" not in Device._opened and "NV" in backends() and Device.canonicalize("nv:1") == "NV:1"
  assert main(["devices"]) == 0 and "NV" in capsys.readouterr().out.split()


@pytest.mark.parametrize("capability, arch", [("9.0", "sm_90"), ("8.6", "sm_80"), ("8.0", "sm_80"), ("8.9", "sm_80"), ("10.0", "sm_90")])
def test_the_target_is_the_known_chip_at_or_below_the_gpu(fake, monkeypatch, capability, arch):
  monkeypatch.setenv("FAKE_CUDA_CC", capability)
  device = NVDevice("NV")
  assert device.target.arch == arch and device.compute_capability == tuple(int(v) for v in capability.split("."))
  assert type(device.compiler).__name__ == "PTXCompiler" and device.compiler.target is device.target


def test_a_gpu_older_than_every_target_does_not_open(fake, monkeypatch):
  monkeypatch.setenv("FAKE_CUDA_CC", "7.5")
  with pytest.raises(RuntimeError, match=r"compute capability 7\.5 \(sm_75\) is older than every target .*sm_80"): NVDevice("NV")


def test_driver_errors_name_the_call_and_the_error(fake, monkeypatch):
  with pytest.raises(CUDAError, match=r"opening NV:1: cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE \(101\): invalid device ordinal"):
    NVDevice("NV:1")
  monkeypatch.setenv("FAKE_CUDA_DEVICES", "2")
  device = Device["NV:1"]
  program = device.program(binary_for("sm_90"))  # kept alive: its module is unloaded once it is collected
  kernel = next(iter(program.kernels.values()))
  args = kernel.args([device.allocator.alloc(4) for _ in range(kernel.buffers)])
  args.local_size = (2048, 1, 1)  # past the kernel's .maxntid
  with pytest.raises(CUDAError, match=r"packet 0 \(EXEC\) of a command buffer: cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE"):
    device.queue().exec(kernel, args).signal(device.timeline, device.next_timeline_value()).submit(device)
  device.synchronize(timeout=1)  # the buffer's timeline signal was still issued
  assert device.timeline.value == device.timeline_value and fake.launches() == []


@pytest.mark.parametrize("nbytes", [0, 1, 3, 255, 257, 4099])
def test_allocator_round_trips(fake, nbytes):
  device = Device["NV"]
  allocator, data = device.allocator, RNG.integers(0, 256, nbytes, dtype=np.uint8).tobytes()
  live = fake.allocations()
  buffer, other = allocator.alloc(nbytes), allocator.alloc(nbytes)
  assert buffer.nbytes == nbytes and buffer.address % device.target.buffer_alignment == 0 and fake.allocations() == live + 2
  allocator.copyin(buffer, memoryview(data))
  out = bytearray(nbytes)
  allocator.copyout(memoryview(out), buffer)
  assert bytes(out) == data
  allocator.copyin(other, memoryview(bytes(nbytes)))
  allocator.transfer(other, buffer, nbytes // 2)
  allocator.copyout(memoryview(out), other)
  assert bytes(out) == data[:nbytes // 2] + bytes(nbytes - nbytes // 2)
  with pytest.raises(ValueError, match="copyin of"): allocator.copyin(buffer, memoryview(bytes(nbytes + 1)))
  with pytest.raises(ValueError, match="transfer of"): allocator.transfer(other, buffer, nbytes + 1)
  allocator.free(buffer)
  allocator.free(other)
  device.synchronize()  # frees wait for an idle stream
  assert fake.allocations() == live


@pytest.mark.parametrize("dtype, shape", [(np.float32, (3, 5)), (np.int8, (7,)), (np.float16, (1, 9)), (np.bool_, (2, 3))])
def test_tensors_round_trip(fake, dtype, shape):
  array = RNG.standard_normal(shape).astype(dtype) if dtype is not np.bool_ else RNG.random(shape) > 0.5
  np.testing.assert_array_equal(Tensor(array, device="NV").numpy(), array)


def test_out_of_device_memory_is_a_memory_error(fake, monkeypatch):
  monkeypatch.setenv("FAKE_CUDA_MEMORY", "4096")
  with pytest.raises(MemoryError, match="NV has no room for 8192 more bytes"): Device["NV"].allocator.alloc(8192)
  with pytest.raises(MemoryError, match="cannot allocate 8192 bytes on NV"): Tensor.empty(2048, device="NV").realize()


def test_programs_load_their_kernels_and_unload(fake):
  device, binary = Device["NV"], binary_for("sm_90")
  modules = fake.modules()
  program = device.program(binary)
  assert binary.code.decode().count(".entry") == len(binary.kernels) == 2 and fake.modules() == modules + 1
  assert set(program.kernels) == {info.name for info in binary.kernels}
  assert len({kernel.entry for kernel in program.kernels.values()}) == 2 and all(kernel.entry for kernel in program.kernels.values())
  del program
  gc.collect()
  device.synchronize()
  assert fake.modules() == modules


def test_binaries_nv_cannot_load_are_refused(fake):
  device, binary = Device["NV"], binary_for("sm_90")
  with pytest.raises(ValueError, match="not a binary built for nvptx:sm_80"): device.program(binary_for("sm_80"))
  with pytest.raises(ValueError, match="has no kernel missing"): device.program(Binary(binary.target, binary.code, (KernelInfo("missing", 1),)))
  with pytest.raises(ValueError, match="neither PTX text nor a cubin"): device.program(Binary(binary.target, b"\xff\xfe", ()))
  with pytest.raises(CUDAError, match=r"cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX .*ptxas.*not PTX"):
    device.program(Binary(binary.target, b"garbage", ()))


def test_a_cubin_is_loaded_as_it_is(fake):
  names = b"\0k_one\0k_two\0"
  header = bytearray(64)
  header[:4] = b"\x7fELF"
  struct.pack_into("<Q", header, 0x28, 64 + len(names))  # e_shoff, no section headers: the image ends there
  program = Device["NV"].program(Binary(Device["NV"].target.cache_key(), bytes(header) + names, (KernelInfo("k_two", 1, {"grid": 1, "local": 1}),)))
  assert list(program.kernels) == ["k_two"]


@pytest.mark.parametrize("graph", [lambda x, y: (x + y[None]).relu(), two_kernel_graph])
def test_realize_launches_each_kernel_with_its_buffers(fake, graph):
  x, y = Tensor(RNG.standard_normal((32, 300)).astype(np.float32), device="NV"), Tensor(RNG.standard_normal(300).astype(np.float32), device="NV")
  out = graph(x, y)
  scheduled, inputs, _ = schedule([out.lazydata])
  out.realize()
  infos = {info.name: info for info in compile_kernels(scheduled, Device["NV"]).binary.kernels}
  launches = fake.launches()
  assert [name for name, *_ in launches] == [launch.kernel for launch in scheduled.launches]
  addresses = {"input": [n.arg.address for n in inputs], "output": [out.lazydata.arg.address]}
  assert sorted(addresses["input"]) == sorted([x.lazydata.arg.address, y.lazydata.arg.address])
  temporaries: dict[int, int] = {}
  for launch, (_, grid, block, values) in zip(scheduled.launches, launches):
    info = infos[launch.kernel]
    assert grid == (info.sizes["grid"], 1, 1) and block == (info.sizes["local"], 1, 1) and len(values) == info.buffers == len(launch.args)
    for (role, i), value in zip(launch.args, values):
      assert (temporaries.setdefault(i, value) if role == "temp" else addresses[role][i]) == value
  assert set(temporaries.values()).isdisjoint(addresses["input"] + addresses["output"])
  assert len(temporaries) == len(scheduled.temporaries)
  assert Device["NV"].timeline.value == Device["NV"].timeline_value


def test_tinyjit_replays_repoint_the_arguments(fake):
  weight = Tensor(RNG.standard_normal((8, 4)).astype(np.float32), device="NV")
  step = TinyJit(lambda x: (x @ weight).relu())
  inputs = [Tensor(RNG.standard_normal((3, 8)).astype(np.float32), device="NV") for _ in range(4)]
  outputs = [step(x) for x in inputs]
  assert step.calls == 4 and step.graph.devices == [Device["NV"]]
  replays = fake.launches()[-2 * len(step.graph.kernel_args):]
  for x, replay in zip(inputs[2:], (replays[:len(step.graph.kernel_args)], replays[len(step.graph.kernel_args):])):
    values = {value for *_, launch_values in replay for value in launch_values}
    assert x.lazydata.arg.address in values and weight.lazydata.arg.address in values
    assert not values & {other.lazydata.arg.address for other in inputs if other is not x}
  assert outputs[3].lazydata.arg.address == outputs[2].lazydata.arg.address


def test_another_thread_gets_the_context_made_current(fake):
  x, errors = Tensor(np.arange(8, dtype=np.float32), device="NV"), []
  def work() -> None:  # cuCtxSetCurrent is per thread: the fake answers CUDA_ERROR_INVALID_CONTEXT in a thread without one
    try:
      np.testing.assert_array_equal(Tensor(np.ones(8, np.float32), device="NV").numpy(), np.ones(8))
      (x * 2).realize()
    except Exception as error: errors.append(error)
  worker = threading.Thread(target=work)
  worker.start()
  worker.join()
  assert errors == [] and len(fake.launches()) == 1


def test_signal_wait_and_timestamp_packets(fake):
  device = Device["NV"]
  first, second = device.new_signal(), device.new_signal(3)
  assert isinstance(first, NVSignal) and second.value == 3 and first.timestamp_ns == 0
  assert device.device_addresses[first.address] != first.address  # the GPU writes the signal through its mapped address
  device.queue().timestamp(first).signal(first, 5).wait(second, 3).signal(second, 7).memory_barrier().timestamp(second).submit(device)
  assert first.value == 5 and second.value == 7 and 0 < first.timestamp_ns <= second.timestamp_ns
  second.wait(7, timeout=1)
  with pytest.raises(ValueError, match="did not make: use device.new_signal"): device.queue().signal(Signal(), 1).submit(device)


def test_copy_packets_run_in_stream_order(fake):
  device = Device["NV"]
  data = Tensor(np.arange(10, dtype=np.float32), device="NV")
  source, destination = data.lazydata.arg.raw, device.allocator.alloc(40)
  device.queue().copy(destination.address, source.address, 24).copy(destination.address + 24, source.address, 16).submit(device)
  out = np.empty(10, np.float32)
  device.allocator.copyout(memoryview(out).cast("B"), destination)
  np.testing.assert_array_equal(out, [0, 1, 2, 3, 4, 5, 0, 1, 2, 3])


def test_a_wait_that_never_comes_times_out_and_reset_recovers(fake, short_waits):
  device = Device["NV"]
  never, after = device.new_signal(), device.new_signal()
  device.queue().wait(never, 1).signal(after, 1).signal(device.timeline, device.next_timeline_value()).submit(device)
  with pytest.raises(SignalTimeout): device.synchronize(timeout=0.2)
  assert after.value == 0  # dropped behind the wait
  with pytest.raises(SignalTimeout, match="copyout waited"): device.allocator.copyout(memoryview(bytearray(4)), device.allocator.alloc(4))
  assert "abandoned a stream" in device.reset() and device.reset() is None
  x = Tensor(np.arange(6, dtype=np.float32), device="NV")
  np.testing.assert_array_equal(x.numpy(), np.arange(6))
  (x + 1).realize()
  assert device.timeline.value == device.timeline_value


def test_a_faulting_kernel_is_reported_not_waited_for(fake):
  device = Device["NV"]
  program = device.program(binary_for("sm_90"))  # kept alive: its module is unloaded once it is collected
  kernel = next(iter(program.kernels.values()))
  args = kernel.args([NVBuffer(0x1000, 4)] * kernel.buffers)  # not device memory: the kernel faults
  device.queue().exec(kernel, args).signal(device.timeline, device.next_timeline_value()).submit(device)
  start = time.perf_counter()
  with pytest.raises(DeviceError, match="CUDA_ERROR_ILLEGAL_ADDRESS"): device.synchronize(timeout=30)
  assert time.perf_counter() - start < 10  # reported by the fault, not by the timeout
  with pytest.raises(DeviceError, match="cannot be reset"): device.reset()


def test_a_launch_over_an_empty_grid_launches_nothing(fake):
  device = Device["NV"]
  program = device.program(binary_for("sm_90"))  # kept alive: its module is unloaded once it is collected
  kernel = next(iter(program.kernels.values()))
  args = kernel.args([device.allocator.alloc(4) for _ in range(kernel.buffers)])
  args.global_size = (0, 1, 1)
  device.queue().exec(kernel, args).signal(device.timeline, device.next_timeline_value()).submit(device)
  device.synchronize(timeout=1)
  assert fake.launches() == []


def _driver_loads() -> bool:
  try: ctypes.CDLL("libcuda.so.1")
  except OSError: return False
  return True


REAL_CASES = {
  "elementwise": (lambda t: (t[0] * 2 - t[1]).exp().sqrt(), lambda a: np.sqrt(np.exp(a[0] * 2 - a[1])), [(64, 33), (64, 33)]),
  "softmax": (lambda t: t[0].softmax(-1), lambda a: (e := np.exp(a[0] - a[0].max(-1, keepdims=True))) / e.sum(-1, keepdims=True), [(16, 40)]),
  "matmul": (lambda t: t[0] @ t[1], lambda a: a[0] @ a[1], [(33, 70), (70, 17)]),
  "two kernels": (lambda t: two_kernel_graph(t[0], t[1]), lambda a: np.exp(a[0].sum(0) + a[1]) * a[0].sum(), [(32, 300), (300,)]),
}


@pytest.mark.skipif(not _driver_loads(), reason="no NVIDIA driver (libcuda.so not found)")
class TestRealGPU:
  @pytest.fixture(autouse=True)
  def real_driver(self, monkeypatch):
    monkeypatch.delenv("PYTC_LIBCUDA", raising=False)
    close_nv()
    yield
    close_nv()

  @pytest.mark.parametrize("case", REAL_CASES)
  def test_graphs_match_numpy(self, case):
    build, reference, shapes = REAL_CASES[case]
    arrays = [RNG.standard_normal(shape).astype(np.float32) * 0.1 for shape in shapes]
    np.testing.assert_allclose(build([Tensor(a, device="NV") for a in arrays]).numpy(), reference(arrays), rtol=2e-4, atol=2e-5)

  def test_tinyjit_replays(self):
    weight = Tensor(RNG.standard_normal((8, 4)).astype(np.float32), device="NV")
    step = TinyJit(lambda x: (x @ weight).relu())
    for _ in range(4):
      x = RNG.standard_normal((3, 8)).astype(np.float32)
      np.testing.assert_allclose(step(Tensor(x, device="NV")).numpy(), np.maximum(x @ weight.numpy(), 0), rtol=1e-5, atol=1e-6)

  def test_signals_timestamps_and_a_wait_that_never_comes(self):
    device = Device["NV"]
    first, second, never = device.new_signal(), device.new_signal(), device.new_signal()
    device.queue().timestamp(first).signal(first, 5).wait(first, 5).timestamp(second).signal(second, 1).submit(device)
    second.wait(1, timeout=10)
    assert first.value == 5 and 0 < first.timestamp_ns <= second.timestamp_ns
    device.queue().wait(never, 1).signal(device.timeline, device.next_timeline_value()).submit(device)
    with pytest.raises(SignalTimeout): device.synchronize(timeout=0.2)
    assert "abandoned a stream" in device.reset()
    never.value = 1  # lets the abandoned stream finish
    x = Tensor(np.arange(6, dtype=np.float32), device="NV")
    np.testing.assert_array_equal((x + 1).numpy(), np.arange(6) + 1)
