"""A second backend added through the device contract alone (runtime/device.py): SERIAL, a single-threaded host device
defined here, with its own allocator, program loader, argument layout and queue executor (every command buffer runs
on the submitting thread, no worker threads, no multi-core slices). As an HCQDevice it implements only its packets and
its memory: signals, the timeline, waits and resets are the base class's. It shares only the CPU's compiler and target,
by name. Realize and TinyJit must run on it unchanged and give NumPy's results."""
import ctypes
import sys
import tempfile
import time
import types
from dataclasses import replace

import numpy as np
import pytest

from pytc import Device, Tensor, TinyJit, dtypes
from pytc.compiler import compile_kernels
from pytc.compilers.cpu import CPUCompiler
from pytc.realize import schedule
from pytc.runtime.device import Allocator, Binary, Compiled, HCQDevice, Kernel, KernelInfo, LaunchArgs, Program
from pytc.runtime.hcq import Op, Signal, decode
from pytc.runtime.target import host_cpu


class SerialBuffer:
  """Host memory at the alignment the target's kernels assume."""
  def __init__(self, nbytes: int):
    alignment = host_cpu().buffer_alignment
    self.nbytes, self.memory = nbytes, (ctypes.c_uint8 * (nbytes + alignment))()
    self.address = -(-ctypes.addressof(self.memory) // alignment) * alignment


class SerialAllocator(Allocator):
  def __init__(self): self.allocated = 0
  def alloc(self, nbytes: int) -> SerialBuffer:
    self.allocated += 1
    return SerialBuffer(nbytes)
  def free(self, buffer: SerialBuffer) -> None: self.allocated -= 1
  def copyin(self, buffer: SerialBuffer, data: memoryview) -> None: ctypes.memmove(buffer.address, bytes(data), len(data))
  def copyout(self, destination: memoryview, buffer: SerialBuffer) -> None: destination[:] = ctypes.string_at(buffer.address, buffer.nbytes)
  def transfer(self, destination: SerialBuffer, source: SerialBuffer, nbytes: int) -> None:
    ctypes.memmove(destination.address, source.address, nbytes)


class SerialArgs(LaunchArgs):
  """The CPU kernel ABI (void **args: each buffer, then the [begin, end) range), laid out by this backend itself: the whole
  range in one call."""
  def __init__(self, addresses: list[int], extent: int):
    self.values = (ctypes.c_uint64 * (len(addresses) + 2))(*addresses, 0, extent)
    self.pointers = (ctypes.c_void_p * len(self.values))(*(ctypes.addressof(self.values) + 8 * i for i in range(len(self.values))))
    self.address = ctypes.addressof(self.pointers)
  def set(self, position: int, buffer: SerialBuffer) -> None: self.values[position] = buffer.address


class SerialKernel(Kernel):
  def __init__(self, info: KernelInfo, entry: int): self.name, self.entry, self.extent = info.name, entry, info.sizes["extent"]
  def args(self, buffers: list[SerialBuffer]) -> SerialArgs: return SerialArgs([b.address for b in buffers], self.extent)


class SerialProgram(Program):
  def __init__(self, device: Compiled, binary: Binary):
    super().__init__(device, binary)
    descriptor, path = tempfile.mkstemp(suffix=".so", dir=device.scratch)  # a new name: the loader reuses a loaded library by name
    with open(descriptor, "wb") as file: file.write(binary.code)
    library = ctypes.CDLL(path)
    device.loaded.append(library)
    self.kernels = {info.name: SerialKernel(info, ctypes.cast(library[f"_mlir_{info.name}"], ctypes.c_void_p).value) for info in binary.kernels}


class SERIALDevice(HCQDevice):
  scratch = None  # a folder for the libraries it loads (set by the fixture)

  def __init__(self, name: str):
    super().__init__(name, SerialAllocator(), host_cpu(), "pytc.compilers.cpu:CPUCompiler", SerialProgram)
    self.loaded, self.executed = [], []

  def submit(self, command_buffer: bytes) -> None:
    self.admit()
    for packet in decode(command_buffer):
      if packet.op is Op.EXEC:
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(packet.fields[0])(packet.fields[1])
        self.executed.append(packet.fields[0])
      elif packet.op is Op.SIGNAL: Signal.memory_at(packet.fields[0]).value = packet.fields[1]
      elif packet.op is Op.TIMESTAMP: Signal.memory_at(packet.fields[0]).timestamp_ns = time.perf_counter_ns()
      elif packet.op is Op.COPY: ctypes.memmove(*packet.fields)
      elif packet.op is Op.WAIT and Signal.memory_at(packet.fields[0]).value < packet.fields[1]:
        raise RuntimeError("SERIAL runs in order: a wait on a signal not yet written can never be met")


@pytest.fixture
def serial(monkeypatch, tmp_path):
  """The SERIAL backend, registered as the module pytc.runtime.ops_serial for this test."""
  module = types.ModuleType("pytc.runtime.ops_serial")
  module.SERIALDevice = SERIALDevice
  monkeypatch.setattr(SERIALDevice, "scratch", tmp_path)
  monkeypatch.setitem(sys.modules, "pytc.runtime.ops_serial", module)
  yield "SERIAL"
  for name in [n for n in Device._opened if n.startswith("SERIAL")]: del Device._opened[name]


def test_the_backend_is_found_by_name(serial):
  assert Device.canonicalize("serial:1") == "SERIAL:1"
  device = Device[serial]
  assert isinstance(device, SERIALDevice) and device.target == Device["CPU"].target
  with pytest.raises(ValueError, match="unknown device 'NOPE'.*SERIAL"): Device.canonicalize("NOPE")


RNG = np.random.default_rng(7)
CASES = {
  "elementwise": (lambda t: (t[0] * 2 - t[1]).exp().sqrt(), lambda a: np.sqrt(np.exp(a[0] * 2 - a[1])), [(64, 33), (64, 33)]),
  "broadcast where": (lambda t: (t[0] > 0).where(t[0], t[1][0]), lambda a: np.where(a[0] > 0, a[0], a[1][0]), [(8, 5), (1, 5)]),
  "sum axis": (lambda t: t[0].sum(axis=0), lambda a: a[0].sum(axis=0), [(37, 19)]),
  "max keepdim": (lambda t: t[0].max(axis=1, keepdim=True), lambda a: a[0].max(axis=1, keepdims=True), [(6, 70)]),
  "softmax": (lambda t: t[0].softmax(-1), lambda a: (e := np.exp(a[0] - a[0].max(-1, keepdims=True))) / e.sum(-1, keepdims=True), [(16, 40)]),
  "matmul": (lambda t: t[0] @ t[1], lambda a: a[0] @ a[1], [(33, 70), (70, 17)]),
  "layernorm": (lambda t: t[0].layernorm(), lambda a: (a[0] - a[0].mean(-1, keepdims=True)) / np.sqrt(a[0].var(-1, keepdims=True) + 1e-5), [(9, 64)]),
  "permute pad": (lambda t: t[0].permute(1, 0).pad(((1, 2), (0, 1))), lambda a: np.pad(a[0].T, ((1, 2), (0, 1))), [(5, 7)]),
  "large sum": (lambda t: t[0].sum(), lambda a: a[0].sum(dtype=np.float64), [(300_000,)]),
  "0-d and empty": (lambda t: t[0].sum() + t[1].sum(), lambda a: a[0].sum() + a[1].sum(), [(), (0, 3)]),
}


@pytest.mark.parametrize("case", CASES)
def test_numerics_on_the_second_backend(serial, case):
  build, reference, shapes = CASES[case]
  arrays = [RNG.standard_normal(shape).astype(np.float32) for shape in shapes]
  result = build([Tensor(a, device=serial) for a in arrays])
  assert result.device == serial
  np.testing.assert_allclose(result.numpy(), reference(arrays), rtol=2e-5, atol=2e-5)
  assert Device[serial].executed  # SERIAL's own executor ran the kernels


def test_integer_and_bool_dtypes_on_the_second_backend(serial):
  a = np.array([[-7, 3, 0], [2**31 - 1, -2**31, 5]], np.int32)
  t = Tensor(a, device=serial)
  np.testing.assert_array_equal((t // 2).numpy(), a // 2)
  np.testing.assert_array_equal((t.cast(dtypes.uint8) & 0x0F).numpy(), a.astype(np.uint8) & 0x0F)
  np.testing.assert_array_equal((t > 0).numpy(), a > 0)


def test_several_outputs_realized_together_and_assign(serial):
  x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device=serial)
  a, b = x.sum(axis=1), (x * 3).max(axis=0)
  Tensor.realize(a, b)
  np.testing.assert_allclose(a.numpy(), np.arange(12).reshape(3, 4).sum(1))
  np.testing.assert_allclose(b.numpy(), (np.arange(12).reshape(3, 4) * 3).max(0))
  x.assign(x + 1).realize()
  np.testing.assert_allclose(x.numpy(), np.arange(12).reshape(3, 4) + 1)


def test_tinyjit_replays_on_the_second_backend(serial):
  weight = Tensor(RNG.standard_normal((8, 4)).astype(np.float32), device=serial)
  step = TinyJit(lambda x: (x @ weight).relu())
  for _ in range(4):
    x = RNG.standard_normal((3, 8)).astype(np.float32)
    np.testing.assert_allclose(step(Tensor(x, device=serial)).numpy(), np.maximum(x @ weight.numpy(), 0), rtol=1e-5, atol=1e-6)
  assert step.calls == 4 and step.graph.devices == [Device[serial]]


def test_the_same_graph_on_two_backends_shares_its_binary(serial):
  a = RNG.standard_normal((10, 10)).astype(np.float32)
  on_cpu, on_serial = (Tensor(a, device="CPU") @ Tensor(a, device="CPU")).tanh(), (Tensor(a, device=serial) @ Tensor(a, device=serial)).tanh()
  np.testing.assert_allclose(on_cpu.numpy(), on_serial.numpy(), rtol=1e-6)


def test_pipelines_are_built_from_the_target():
  wide = replace(host_cpu(), vector_lanes=16, vector_registers=32, tile_vectors=3, cores=4, l2_bytes=2 << 20)
  narrow = replace(host_cpu(), vector_lanes=8, vector_registers=16, tile_vectors=2, cores=1, l2_bytes=0)
  assert "pytc-vectorize{lanes=16 rows=8 vectors=3 group=64 cores=4 l2=2097152}" in CPUCompiler(wide).kernel_pipeline()
  assert "pytc-vectorize{lanes=8 rows=6 vectors=2 group=64 cores=1 l2=1048576}" in CPUCompiler(narrow).kernel_pipeline()
  wide_amd = replace(wide, tile_vectors=2)  # 16 accumulators, 2 operands and a broadcast fit 32 registers: 8 rows, no more
  assert "pytc-vectorize{lanes=16 rows=8 vectors=2 " in CPUCompiler(wide_amd).kernel_pipeline()
  assert CPUCompiler(wide).cache_key("ir") != CPUCompiler(replace(wide, cores=2)).cache_key("ir")
  other_host = replace(host_cpu(), features=("Another CPU", "sse2"))
  assert CPUCompiler(host_cpu()).cache_key("ir") != CPUCompiler(other_host).cache_key("ir")


@pytest.mark.parametrize("model,flags,lanes,tile_vectors", [("Intel(R) Xeon(R) Platinum", ("avx512f", "fma"), 16, 3),
                                                          ("AMD EPYC 9R14", ("avx512f", "fma"), 16, 2),
                                                          ("Intel(R) Core(TM) i7", ("avx2", "fma"), 8, 2), ("", (), 8, 2)])
def test_the_host_target_reads_the_processor(monkeypatch, model: str, flags: tuple[str, ...], lanes: int, tile_vectors: int):
  """Vector lanes from AVX-512; register tiles three vectors wide only on Intel's AVX-512 cores."""
  import pytc.runtime.target as target
  monkeypatch.setattr(target, "cpu_features", lambda: (model, *flags) if model else ())
  read = target.host_cpu.__wrapped__()
  assert (read.vector_lanes, read.tile_vectors) == (lanes, tile_vectors)


@pytest.mark.parametrize("entries,expected", [({"index0": ("1", "48K"), "index2": ("2", "2048K"), "index3": ("3", "480M")}, 2 << 20),
                                              ({"index1": ("2", "1M")}, 1 << 20), ({"index0": ("2", "524288")}, 1 << 19),
                                              ({"index0": ("1", "32K")}, 0), ({"index0": ("2", "lotsK")}, 0), ({"index0": ("2", "")}, 0), (None, 0)])
def test_the_host_l2_is_read_from_the_cache_folder(tmp_path, entries: dict | None, expected: int):
  """Linux's cache entries (level, size with a K/M/G suffix or none); 0 for no level-2 entry, a malformed size or no folder."""
  from pytc.runtime.target import l2_bytes
  for name, (level, size) in (entries or {}).items():
    (tmp_path / name).mkdir()
    (tmp_path / name / "level").write_text(f"{level}\n")
    (tmp_path / name / "size").write_text(f"{size}\n")
  assert l2_bytes(str(tmp_path if entries is not None else tmp_path / "missing")) == expected


class NARROWDevice(SERIALDevice):
  """SERIAL with a target of 4-lane vectors: the same compiler builds other kernels for it."""
  def __init__(self, name: str):
    super().__init__(name)
    self.target = replace(host_cpu(), vector_lanes=4, vector_registers=16, features=(*host_cpu().features, "narrow"))


def test_a_device_with_another_target_gets_kernels_built_for_it(serial, monkeypatch):
  module = types.ModuleType("pytc.runtime.ops_narrow")
  module.NARROWDevice = NARROWDevice
  monkeypatch.setitem(sys.modules, "pytc.runtime.ops_narrow", module)
  a, b = RNG.standard_normal((24, 40)).astype(np.float32), RNG.standard_normal((40, 32)).astype(np.float32)
  try:
    result = Tensor(a, device="NARROW") @ Tensor(b, device="NARROW")
    scheduled = schedule([result.lazydata])[0]
    np.testing.assert_allclose(result.numpy(), a @ b, rtol=1e-5, atol=1e-5)
    narrow_ir = compile_kernels(scheduled, Device["NARROW"]).kernel_ir
    assert "vector<4xf32>" in narrow_ir and "vector<4xf32>" not in compile_kernels(scheduled, Device[serial]).kernel_ir
  finally: Device._opened.pop("NARROW", None)


def test_a_binary_for_another_target_is_refused():
  with pytest.raises(ValueError, match="not a binary built for gpu:sm_90"): Device["CPU"].program(Binary("gpu:sm_90 x", b"", ()))
  with pytest.raises(ValueError, match="not a loadable CPU binary"): Device["CPU"].program(Binary(host_cpu().cache_key(), b"\x7fELF junk", ()))
