"""The CPU HCQ queue: packet encoding, ordering through signals, asynchrony and timeouts."""
import ctypes
import threading
import time

import numpy as np
import pytest
from mlir import ir

from pytc.compiler import compile_kernels, context, schedule_graph
from pytc.dtype import dtypes
from pytc.graph import LazyOp, to_mlir
from pytc.runtime import DeviceError, HWQueue, Signal, SignalTimeout
from pytc.runtime.hcq import Op, decode
from pytc.runtime.ops_cpu import CPUBuffer, CPUDevice, Kernargs

_programs = {}  # the JIT'd code lives as long as its program


def add_one_kernel(n: int) -> int:
  """The entry of a compiled `out = x + 1` over n float32; its arguments are (out, x, 0, extent(n))."""
  if n not in _programs:
    x = LazyOp("buffer", dtypes.float32, (n,), "CPU")
    graph = LazyOp("add", dtypes.float32, (n,), "CPU", (x, LazyOp("const", dtypes.float32, (n,), "CPU", arg=1.0)))
    with context(), ir.Location.unknown():
      scheduled = schedule_graph(to_mlir([graph], (x,), f"add_one_{n}"), f"add_one_{n}", 1)
      _programs[n] = (compile_kernels(scheduled), scheduled.launches[0].kernel)
  program, kernel = _programs[n]
  return program.entries[kernel]


def extent(n: int) -> int:
  """The full range of the add-one kernel over n elements (its last two arguments run over [0, extent))."""
  program, kernel = _programs[n]
  return program.extents[kernel]


def float_buffer(values) -> CPUBuffer:
  array = np.asarray(values, dtype=np.float32)
  buffer = CPUBuffer(array.nbytes)
  buffer.copyin(array.tobytes())
  return buffer


def read(buffer: CPUBuffer) -> np.ndarray: return np.frombuffer(buffer.copyout(), dtype=np.float32)


def test_packets_round_trip():
  signal = Signal()
  q = HWQueue().timestamp(signal).exec(0x1000, 0x2000, (4, 1, 1), (1, 1, 1)).memory_barrier().wait(signal, 3).signal(signal, 7)
  packets = list(decode(q.bytes()))
  assert [p.op for p in packets] == [Op.TIMESTAMP, Op.EXEC, Op.BARRIER, Op.WAIT, Op.SIGNAL]
  assert packets[1].fields == (0x1000, 0x2000, 4, 1, 1, 1, 1, 1)
  assert packets[3].fields == (signal.address, 3) and packets[4].fields == (signal.address, 7)


@pytest.mark.parametrize("corrupt, message", [(lambda b: b[:-3], "bad size"), (lambda b: b"\x63" + b[1:], "unknown opcode"),
                                              (lambda b: b[:5], "truncated")])
def test_malformed_command_buffer_is_rejected(corrupt, message):
  with pytest.raises(ValueError, match=message): list(decode(corrupt(HWQueue().signal(Signal(), 1).bytes())))


def test_exec_signal_and_timestamps():
  device, entry = CPUDevice(), add_one_kernel(4)
  x, out = float_buffer([1, 2, 3, 4]), CPUBuffer(16)
  args, began, ended, done = Kernargs([out.address, x.address, 0, extent(4)]), device.new_signal(), device.new_signal(), device.new_signal()
  device.queue().timestamp(began).exec(entry, args.address).timestamp(ended).signal(done, 1).submit(device.compute)
  done.wait(1, timeout=10)
  assert read(out).tolist() == [2, 3, 4, 5]
  assert 0 < began.timestamp_ns <= ended.timestamp_ns


def test_two_command_buffers_ordered_by_wait_and_signal():
  """The first-submitted buffer waits for a signal that the second one sets, so it runs second."""
  producer, consumer = CPUDevice(), CPUDevice()
  entry = add_one_kernel(4)
  x, y, z = float_buffer([0, 0, 0, 0]), CPUBuffer(16), CPUBuffer(16)
  ready, done = producer.new_signal(), consumer.new_signal()
  consume, produce = Kernargs([z.address, y.address, 0, extent(4)]), Kernargs([y.address, x.address, 0, extent(4)])
  consumer.queue().wait(ready, 1).exec(entry, consume.address).signal(done, 1).submit(consumer.compute)
  time.sleep(0.05)
  assert done.value == 0  # still waiting: y is not produced yet
  producer.queue().exec(entry, produce.address).signal(ready, 1).submit(producer.compute)
  done.wait(1, timeout=10)
  assert read(z).tolist() == [2, 2, 2, 2]  # z = (x + 1) + 1: the consumer saw the producer's result


def test_host_keeps_running_while_the_queue_executes():
  device = CPUDevice()
  gate, done = Signal(), device.new_signal()
  device.queue().wait(gate, 1).signal(done, 1).submit(device.compute)
  host_work = sum(range(10000))  # the host is free while the queue is blocked on `gate`
  assert done.value == 0 and host_work == 49995000
  threading.Timer(0.02, lambda: setattr(gate, "value", 1)).start()
  done.wait(1, timeout=10)
  assert done.value == 1


def test_idle_queue_runs_a_buffer_at_once_and_a_busy_one_keeps_order():
  device, entry = CPUDevice(), add_one_kernel(4)
  x, y, z = float_buffer([0, 0, 0, 0]), CPUBuffer(16), CPUBuffer(16)
  first, second, gate = device.new_signal(), device.new_signal(), device.new_signal()
  produce, consume = Kernargs([y.address, x.address, 0, extent(4)]), Kernargs([z.address, y.address, 0, extent(4)])
  device.queue().exec(entry, produce.address).signal(first, 1).submit(device.compute)
  assert first.value == 1 and read(y).tolist() == [1, 1, 1, 1]  # idle queue, no WAIT: done on return
  device.queue().wait(gate, 1).signal(first, 2).submit(device.compute)
  device.queue().exec(entry, consume.address).signal(second, 1).submit(device.compute)
  time.sleep(0.05)
  assert first.value == 1 and second.value == 0  # queued behind the WAIT, not run on the host
  gate.value = 1
  second.wait(1, timeout=10)
  assert first.value == 2 and read(z).tolist() == [2, 2, 2, 2]


def test_host_wait_times_out_with_a_clear_error():
  signal = Signal()
  with pytest.raises(SignalTimeout, match="still 0 after 0.05 s waiting for 1"): signal.wait(1, timeout=0.05)


def test_queue_wait_timeout_stops_the_device(monkeypatch):
  monkeypatch.setenv("PYTC_WAIT_TIMEOUT", "0.05")
  from pytc.helpers import getenv
  getenv.cache_clear()
  try:
    device = CPUDevice()
    never, done = Signal(), device.new_signal()
    device.queue().wait(never, 1).signal(done, 1).submit(device.compute)
    with pytest.raises(DeviceError, match="WAIT on signal .* timed out"): done.wait(1, timeout=10)
  finally:
    monkeypatch.undo()
    getenv.cache_clear()


def test_kernargs_layout():
  args = Kernargs([0xAA, 0xBB])
  words = (ctypes.c_uint64 * 5).from_address(args.address)
  assert words[0] == 2 and words[3:] == [0xAA, 0xBB]
  assert words[1] == args.address + 24 and words[2] == args.address + 32
  args.set(1, 0xCC)
  assert Kernargs.values_at(args.address) == [0xAA, 0xCC]


def test_a_launch_split_across_cores_computes_every_slice():
  device, entry = CPUDevice(), add_one_kernel(4096)
  x, out = float_buffer(np.arange(4096)), CPUBuffer(4096 * 4)
  args, done = Kernargs([out.address, x.address, 0, extent(4096)]), device.new_signal()
  device.queue().exec(entry, args.address, (3, 1, 1)).signal(done, 1).submit(device.compute)
  done.wait(1, timeout=10)
  assert read(out).tolist() == list(np.arange(4096) + 1.0)


def test_freed_buffers_are_reused_by_size():
  device = CPUDevice()
  first = device.alloc(4096)
  device.free(first)
  assert device.alloc(4096) is first and device.alloc(4096) is not first
  assert device.alloc(64) is not first


def test_split_launches_from_two_threads_take_turns_on_the_core_threads():
  device, entry = CPUDevice(), add_one_kernel(4096)
  buffers = [(float_buffer(np.arange(4096) * k), CPUBuffer(4096 * 4)) for k in range(2)]
  args = [Kernargs([out.address, x.address, 0, extent(4096)]) for x, out in buffers]

  def launch(arg: Kernargs) -> None:
    for _ in range(50): device.compute._split(entry, arg.address, 7)

  threads = [threading.Thread(target=launch, args=(arg,)) for arg in args]
  for thread in threads: thread.start()
  for thread in threads: thread.join()
  for k, (_, out) in enumerate(buffers): assert read(out).tolist() == list(np.arange(4096) * k + 1.0)


def test_reset_drops_queued_buffers_and_moves_the_timeline(short_waits):
  device = CPUDevice()
  later, after = device.new_signal(), device.new_signal()
  device.queue().wait(Signal(), 1).signal(device.timeline, device.next_timeline_value()).submit(device.compute)
  device.queue().signal(later, 1).signal(device.timeline, device.next_timeline_value()).submit(device.compute)
  with pytest.raises(DeviceError, match=r"packet 0 \(WAIT\)"): device.synchronize(timeout=10)
  assert "timed out" in device.reset() and device.error is None
  assert later.value == 0 and device.timeline.value == device.timeline_value  # dropped, and counted as finished
  device.synchronize(timeout=10)
  device.queue().signal(after, 1).signal(device.timeline, device.next_timeline_value()).submit(device.compute)
  device.synchronize(timeout=10)
  assert after.value == 1 and later.value == 0


def test_submit_to_a_stopped_queue_raises_the_unreported_error_once():
  device = CPUDevice()
  done = device.new_signal()
  device.compute.submit(b"\x63" + bytes(7))
  with pytest.raises(DeviceError, match="unknown opcode 99"): device.queue().signal(done, 1).submit(device.compute)
  assert done.value == 0 and device.error is None
  device.queue().signal(done, 2).submit(device.compute)
  assert done.value == 2


def test_work_dropped_by_a_stop_is_reported_to_its_thread_after_another_thread_reset():
  device = CPUDevice()
  gate, submitted, reset_done, outcome = Signal(), threading.Event(), threading.Event(), []
  stops = HWQueue().wait(gate, 1).signal(device.timeline, device.next_timeline_value()).bytes() + b"\x63" + bytes(7)
  device.compute.submit(stops)

  def other_thread() -> None:
    device.queue().signal(device.timeline, device.next_timeline_value()).submit(device.compute)  # queued behind `stops`
    submitted.set()
    reset_done.wait(10)
    try: device.synchronize(timeout=10)
    except DeviceError as error: outcome.append(error)

  thread = threading.Thread(target=other_thread)
  thread.start()
  submitted.wait(10)
  gate.value = 1
  with pytest.raises(DeviceError, match="unknown opcode"): device.new_signal().wait(1, timeout=10)
  device.queue().signal(device.timeline, device.next_timeline_value()).submit(device.compute)  # resets: the error was raised
  device.synchronize(timeout=10)
  reset_done.set()
  thread.join()
  assert len(outcome) == 1 and "unknown opcode" in str(outcome[0])
