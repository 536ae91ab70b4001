"""The CPU HCQ queue: packet encoding, launches of a loaded program's kernels, copies, ordering through signals, asynchrony
and timeouts; the CPU allocator."""
import ast
import ctypes
import re
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from mlir import ir

from pytc.compiler import compile_kernels, context, schedule_graph
from pytc.dtype import dtypes
from pytc.graph import LazyOp, to_mlir
from pytc.runtime import DeviceError, HWQueue, Signal, SignalTimeout
from pytc.runtime._immediate import ExecutionLock, Immediate
from pytc.runtime.hcq import Op, decode
from pytc.runtime.ops_cpu import CPUBuffer, CPUDevice, CPUKernel, Kernargs

_executables = {}  # the compiled code lives as long as its program


def add_one_kernel(n: int) -> CPUKernel:
  """The loaded kernel of a compiled `out = x + 1` over n float32: its buffers are (out, x), then [0, extent) (its whole range)."""
  if n not in _executables:
    x = LazyOp("buffer", dtypes.float32, (n,), "CPU")
    graph = LazyOp("add", dtypes.float32, (n,), "CPU", (x, LazyOp("const", dtypes.float32, (n,), "CPU", arg=1.0)))
    device = CPUDevice()
    with context(), ir.Location.unknown():
      scheduled = schedule_graph(to_mlir([graph], (x,), f"add_one_{n}"), f"add_one_{n}", 1, device.compiler.schedule_stage)
      _executables[n] = (compile_kernels(scheduled, device), scheduled.launches[0].kernel)
  executable, name = _executables[n]
  return executable.program.kernels[name]


def float_buffer(device: CPUDevice, values) -> CPUBuffer:
  array = np.ascontiguousarray(values, dtype=np.float32)
  device.allocator.copyin(buffer := device.allocator.alloc(array.nbytes), memoryview(array).cast("B"))
  return buffer


def read(device: CPUDevice, buffer: CPUBuffer) -> np.ndarray:
  device.allocator.copyout(memoryview(host := bytearray(buffer.nbytes)), buffer)
  return np.frombuffer(host, dtype=np.float32)


def test_packets_round_trip():
  signal, kernel, args = Signal(), SimpleNamespace(entry=0x1000), SimpleNamespace(address=0x2000, global_size=(4, 1, 1), local_size=(2, 1, 1))
  q = HWQueue().timestamp(signal).exec(kernel, args).memory_barrier().copy(0x3000, 0x4000, 96).wait(signal, 3).signal(signal, 7)
  packets = list(decode(q.bytes()))
  assert [p.op for p in packets] == [Op.TIMESTAMP, Op.EXEC, Op.BARRIER, Op.COPY, Op.WAIT, Op.SIGNAL]
  assert packets[1].fields == (0x1000, 0x2000, 4, 1, 1, 2, 1, 1) and packets[3].fields == (0x3000, 0x4000, 96)
  assert packets[4].fields == (signal.address, 3) and packets[5].fields == (signal.address, 7)


@pytest.mark.parametrize("corrupt, message", [(lambda b: b[:-3], "bad size"), (lambda b: b"\x63" + b[1:], "unknown opcode"),
                                              (lambda b: b[:5], "truncated")])
def test_malformed_command_buffer_is_rejected(corrupt, message):
  with pytest.raises(ValueError, match=message): list(decode(corrupt(HWQueue().signal(Signal(), 1).bytes())))


def test_exec_signal_and_timestamps():
  device, kernel = CPUDevice(), add_one_kernel(4)
  x, out = float_buffer(device, [1, 2, 3, 4]), device.allocator.alloc(16)
  args, began, ended, done = kernel.args([out, x]), device.new_signal(), device.new_signal(), device.new_signal()
  assert Kernargs.values_at(args.address) == [out.address, x.address, 0, kernel.extent] and args.global_size == (1, 1, 1)  # small: not split
  device.queue().timestamp(began).exec(kernel, args).timestamp(ended).signal(done, 1).submit(device)
  done.wait(1, timeout=10)
  assert read(device, out).tolist() == [2, 3, 4, 5]
  assert 0 < began.timestamp_ns <= ended.timestamp_ns


def test_two_command_buffers_ordered_by_wait_and_signal():
  """The first-submitted buffer waits for a signal that the second one sets, so it runs second."""
  producer, consumer = CPUDevice(), CPUDevice()
  kernel = add_one_kernel(4)
  x, y, z = float_buffer(producer, [0, 0, 0, 0]), producer.allocator.alloc(16), consumer.allocator.alloc(16)
  ready, done = producer.new_signal(), consumer.new_signal()
  consume, produce = kernel.args([z, y]), kernel.args([y, x])
  consumer.queue().wait(ready, 1).exec(kernel, consume).signal(done, 1).submit(consumer)
  time.sleep(0.05)
  assert done.value == 0  # still waiting: y is not produced yet
  producer.queue().exec(kernel, produce).signal(ready, 1).submit(producer)
  done.wait(1, timeout=10)
  assert read(consumer, z).tolist() == [2, 2, 2, 2]  # z = (x + 1) + 1: the consumer saw the producer's result


def test_host_keeps_running_while_the_queue_executes():
  device = CPUDevice()
  gate, done = Signal(), device.new_signal()
  device.queue().wait(gate, 1).signal(done, 1).submit(device)
  host_work = sum(range(10000))  # the host is free while the queue is blocked on `gate`
  assert done.value == 0 and host_work == 49995000
  threading.Timer(0.02, lambda: setattr(gate, "value", 1)).start()
  done.wait(1, timeout=10)
  assert done.value == 1


def test_a_signal_in_the_middle_of_a_command_buffer_is_seen_before_the_buffer_ends():
  device = CPUDevice()
  reached, gate, done = device.new_signal(), Signal(), device.new_signal()
  device.queue().signal(reached, 1).wait(gate, 1).copy(gate.address, reached.address, 8).signal(done, 1).submit(device)
  reached.wait(1, timeout=10)
  assert done.value == 0  # the queue is held by the WAIT after the SIGNAL
  gate.value = 1
  done.wait(1, timeout=10)
  assert gate.value == 1 and done.value == 1


def test_idle_queue_runs_a_buffer_at_once_and_a_busy_one_keeps_order():
  device, kernel = CPUDevice(), add_one_kernel(4)
  x, y, z = float_buffer(device, [0, 0, 0, 0]), device.allocator.alloc(16), device.allocator.alloc(16)
  first, second, gate = device.new_signal(), device.new_signal(), device.new_signal()
  produce, consume = kernel.args([y, x]), kernel.args([z, y])
  device.queue().exec(kernel, produce).signal(first, 1).submit(device)
  assert first.value == 1 and read(device, y).tolist() == [1, 1, 1, 1]  # idle queue, no WAIT: done on return
  device.queue().wait(gate, 1).signal(first, 2).submit(device)
  device.queue().exec(kernel, consume).signal(second, 1).submit(device)
  time.sleep(0.05)
  assert first.value == 1 and second.value == 0  # queued behind the WAIT, not run on the host
  gate.value = 1
  second.wait(1, timeout=10)
  assert first.value == 2 and read(device, z).tolist() == [2, 2, 2, 2]


def test_immediate_runs_on_an_idle_queue_and_declines_a_busy_one():
  device, kernel = CPUDevice(), add_one_kernel(4)
  x, y = float_buffer(device, [0, 1, 2, 3]), device.allocator.alloc(16)
  args = kernel.args([y, x])  # held: the buffer points at it
  run = device.immediate(device.queue().exec(kernel, args).bytes())
  submitted = device.timeline_value
  assert run() and read(device, y).tolist() == [1, 2, 3, 4] and device.timeline_value == submitted  # no timeline value taken
  gate, behind = device.new_signal(), device.new_signal()
  device.queue().wait(gate, 1).signal(behind, 1).submit(device)
  device.allocator.copyin(x, memoryview(np.full(4, 10, np.float32)).cast("B"))
  assert not run() and read(device, y).tolist() == [1, 2, 3, 4]  # queued work goes first: nothing ran
  gate.value = 1
  behind.wait(1, timeout=10)
  deadline = time.monotonic() + 10
  while not run(): assert time.monotonic() < deadline  # the worker lets go of the queue just after its last signal
  assert read(device, y).tolist() == [11, 11, 11, 11]


def test_immediate_failure_stops_the_queue_and_raises_once():
  device, done = CPUDevice(), Signal()
  run = device.immediate(HWQueue().signal(done, 1).bytes() + b"\x63" + bytes(7))
  with pytest.raises(DeviceError, match=r"packet 1 \(malformed\).*unknown opcode 99"): run()
  assert done.value == 1 and device.error is not None
  assert not run() and done.value == 1  # a stopped queue declines; the submit that resets it does not raise again
  device.queue().signal(done, 2).signal(device.timeline, device.next_timeline_value()).submit(device)
  device.synchronize(timeout=10)
  assert done.value == 2 and device.error is None


@pytest.mark.parametrize("brief", [False, True])
def test_immediate_wakes_a_host_thread_waiting_on_a_signal_it_writes(brief):
  device = CPUDevice()
  done, finished = device.new_signal(), []
  waiter = threading.Thread(target=lambda: finished.append(done.wait(1, timeout=20)))
  waiter.start()
  deadline = time.monotonic() + 10
  while device.changed.waiting == 0: assert time.monotonic() < deadline  # asleep on the device's condition
  assert device.immediate(device.queue().signal(done, 1).bytes(), brief)()
  waiter.join(timeout=10)
  assert finished == [None] and not waiter.is_alive()


@pytest.mark.parametrize("brief", [False, True])
def test_immediate_runs_kernels_holding_the_gil_or_not(brief):
  device, kernel = CPUDevice(), add_one_kernel(4)
  x, y, z = float_buffer(device, [0, 1, 2, 3]), device.allocator.alloc(16), device.allocator.alloc(16)
  first, second = kernel.args([y, x]), kernel.args([z, y])
  run = device.immediate(device.queue().exec(kernel, first).exec(kernel, second).bytes(), brief)
  assert run() and read(device, z).tolist() == [2, 3, 4, 5]
  device.compute.execution.acquire()
  assert not run()  # the queue is executing elsewhere: declined, nothing ran
  device.compute.execution.release()
  device.allocator.copyin(x, memoryview(np.full(4, 10, np.float32)).cast("B"))
  assert run() and read(device, z).tolist() == [12, 12, 12, 12]


def test_execution_lock_waits_for_a_release_from_any_thread():
  lock, order = ExecutionLock(), []
  assert lock.acquire() and not lock.acquire(blocking=False)
  waiter = threading.Thread(target=lambda: order.append(lock.acquire()))
  waiter.start()
  time.sleep(0.05)
  assert order == []  # blocked, without the GIL (this thread runs)
  lock.release()
  waiter.join(timeout=10)
  assert order == [True] and not waiter.is_alive()
  lock.release()  # taken by the waiter, let go here
  with pytest.raises(RuntimeError, match="not held"): lock.release()
  with pytest.raises(TypeError, match="no arguments"): ExecutionLock(1)


def test_immediate_rejects_misuse():
  device = CPUDevice()
  queue, changed, stopped = device.compute, device.changed, device.compute.stopped_immediately
  with pytest.raises(TypeError, match="ExecutionLock"): Immediate(b"", 1, threading.Lock(), device, changed, stopped)
  with pytest.raises(TypeError): Immediate()
  with pytest.raises(ValueError, match="address of pytc_queue_run"): Immediate(b"", 0, queue.execution, device, changed, stopped)
  with pytest.raises(TypeError, match="callable `stopped`"): Immediate(b"", 1, queue.execution, device, changed, None)
  with pytest.raises(RuntimeError, match="not initialized"): Immediate.__new__(Immediate)()
  with pytest.raises(TypeError, match="takes no arguments"): device.immediate(b"")(1)
  assert device.immediate(b"")()  # an empty buffer: nothing to do, done


def test_host_wait_times_out_with_a_clear_error():
  signal = Signal()
  with pytest.raises(SignalTimeout, match="still 0 after 0.05 s waiting for 1"): signal.wait(1, timeout=0.05)


def test_queue_wait_timeout_stops_the_device(monkeypatch):
  monkeypatch.setenv("PYTC_WAIT_TIMEOUT", "0.05")
  device = CPUDevice()
  never, done = Signal(), device.new_signal()
  device.queue().wait(never, 1).signal(done, 1).submit(device)
  with pytest.raises(DeviceError, match="WAIT on signal .* timed out"): done.wait(1, timeout=10)


def test_kernargs_layout():
  args, buffer = Kernargs([0xAA, 0xBB]), CPUBuffer(8)
  words = (ctypes.c_uint64 * 5).from_address(args.address)
  assert words[0] == 2 and words[3:] == [0xAA, 0xBB]
  assert words[1] == args.address + 24 and words[2] == args.address + 32
  assert args.global_size == (1, 1, 1) and Kernargs([0xAA], 3).global_size == (3, 1, 1)
  args.set(1, buffer)
  assert Kernargs.values_at(args.address) == [0xAA, buffer.address]


def test_a_launch_split_across_cores_computes_every_slice():
  device, kernel = CPUDevice(), add_one_kernel(4096)
  x, out = float_buffer(device, np.arange(4096)), device.allocator.alloc(4096 * 4)
  args, done = Kernargs([out.address, x.address, 0, kernel.extent], 3), device.new_signal()
  device.queue().exec(kernel, args).signal(done, 1).submit(device)
  done.wait(1, timeout=10)
  assert read(device, out).tolist() == list(np.arange(4096) + 1.0)


def test_kernel_args_split_a_launch_past_the_split_bytes(split_everything, monkeypatch):
  device, kernel = CPUDevice(), add_one_kernel(4096)
  monkeypatch.setattr(kernel.device, "cores", 5)  # split in 5 on any machine
  x, out = float_buffer(device, np.arange(4096)), device.allocator.alloc(4096 * 4)
  args, done = kernel.args([out, x]), device.new_signal()
  assert args.global_size == (5, 1, 1) and Kernargs.values_at(args.address) == [out.address, x.address, 0, kernel.extent]
  device.queue().exec(kernel, args).signal(done, 1).submit(device)
  done.wait(1, timeout=10)
  assert read(device, out).tolist() == list(np.arange(4096) + 1.0)


def test_freed_buffers_are_reused_by_size():
  allocator = CPUDevice().allocator
  first = allocator.alloc(4096)
  allocator.free(first)
  assert allocator.alloc(4096) is first and allocator.alloc(4096) is not first
  assert allocator.alloc(64) is not first


def test_copy_packets_move_bytes_between_buffers_in_queue_order():
  device, kernel = CPUDevice(), add_one_kernel(4)
  x, y, z, w = float_buffer(device, [1, 2, 3, 4]), device.allocator.alloc(16), float_buffer(device, [9, 9, 9, 9]), float_buffer(device, [0] * 4)
  gate, done, args = device.new_signal(), device.new_signal(), kernel.args([y, x])  # arguments live until the launch ran
  # behind a WAIT (run by the queue's thread): y = x + 1, then y's bytes to z, then z's middle 8 bytes to w at offset 4
  device.queue().wait(gate, 1).exec(kernel, args).copy(z.address, y.address, 16).copy(w.address + 4, z.address + 4, 8) \
    .signal(done, 1).submit(device)
  assert read(device, z).tolist() == [9, 9, 9, 9]  # not run yet
  gate.value = 1
  done.wait(1, timeout=10)
  assert read(device, z).tolist() == [2, 3, 4, 5] and read(device, w).tolist() == [0, 3, 4, 0]
  device.queue().copy(x.address, w.address, 16).signal(done, 2).submit(device)  # idle queue: done on return
  assert done.value == 2 and read(device, x).tolist() == [0, 3, 4, 0]


def test_allocator_copies_check_sizes():
  allocator = CPUDevice().allocator
  a, b, small = allocator.alloc(16), allocator.alloc(16), allocator.alloc(8)
  allocator.copyin(a, memoryview(np.arange(4, dtype=np.float32)).cast("B"))
  with pytest.raises(ValueError, match="copyin of 15 bytes into a 16-byte buffer"): allocator.copyin(a, memoryview(bytes(15)))
  with pytest.raises(ValueError, match="copyin of 17 bytes into a 16-byte buffer"): allocator.copyin(a, memoryview(bytes(17)))
  with pytest.raises(ValueError, match="copyout of a 16-byte buffer into 12 bytes"): allocator.copyout(memoryview(bytearray(12)), a)
  with pytest.raises(ValueError, match="transfer of 16 bytes from a 16-byte buffer into a 8-byte one"): allocator.transfer(small, a, 16)
  with pytest.raises(ValueError, match="transfer of 12 bytes from a 8-byte buffer into a 16-byte one"): allocator.transfer(b, small, 12)
  allocator.copyin(b, memoryview(bytes(16)))
  allocator.transfer(b, a, 8)  # the first 8 bytes only
  allocator.copyout(memoryview(host := bytearray(16)), b)
  assert np.frombuffer(host, np.float32).tolist() == [0, 1, 0, 0]
  assert np.frombuffer(bytes(a.as_memoryview()), np.float32).tolist() == [0, 1, 2, 3]  # the failed copies wrote nothing


def test_split_launches_from_two_threads_take_turns_on_the_core_threads():
  devices, kernel = [CPUDevice(), CPUDevice()], add_one_kernel(4096)
  buffers = [(float_buffer(device, np.arange(4096) * k), device.allocator.alloc(4096 * 4)) for k, device in enumerate(devices)]
  args = [Kernargs([out.address, x.address, 0, kernel.extent], slices=7) for x, out in buffers]

  def launch(device: CPUDevice, arg: Kernargs) -> None:
    for _ in range(50):
      device.queue().exec(kernel, arg).signal(device.timeline, device.next_timeline_value()).submit(device)
    device.synchronize(timeout=10)

  threads = [threading.Thread(target=launch, args=pair) for pair in zip(devices, args)]
  for thread in threads: thread.start()
  for thread in threads: thread.join()
  for k, (device, (_, out)) in enumerate(zip(devices, buffers)): assert read(device, out).tolist() == list(np.arange(4096) * k + 1.0)


def test_reset_drops_queued_buffers_and_moves_the_timeline(short_waits):
  device = CPUDevice()
  later, after, never = device.new_signal(), device.new_signal(), Signal()
  device.queue().wait(never, 1).signal(device.timeline, device.next_timeline_value()).submit(device)
  device.queue().signal(later, 1).signal(device.timeline, device.next_timeline_value()).submit(device)
  with pytest.raises(DeviceError, match=r"packet 0 \(WAIT\)"): device.synchronize(timeout=10)
  assert "timed out" in device.reset() and device.error is None
  assert later.value == 0 and device.timeline.value == device.timeline_value  # dropped, and counted as finished
  device.synchronize(timeout=10)
  device.queue().signal(after, 1).signal(device.timeline, device.next_timeline_value()).submit(device)
  device.synchronize(timeout=10)
  assert after.value == 1 and later.value == 0


def test_submit_to_a_stopped_queue_raises_the_unreported_error_once():
  device = CPUDevice()
  done = device.new_signal()
  device.submit(b"\x63" + bytes(7))
  with pytest.raises(DeviceError, match="unknown opcode 99"): device.queue().signal(done, 1).submit(device)
  assert done.value == 0 and device.error is None
  device.queue().signal(done, 2).submit(device)
  assert done.value == 2


def test_work_dropped_by_a_stop_is_reported_to_its_thread_after_another_thread_reset():
  device = CPUDevice()
  gate, submitted, reset_done, outcome = Signal(), threading.Event(), threading.Event(), []
  stops = HWQueue().wait(gate, 1).signal(device.timeline, device.next_timeline_value()).bytes() + b"\x63" + bytes(7)
  device.submit(stops)

  def other_thread() -> None:
    device.queue().signal(device.timeline, device.next_timeline_value()).submit(device)  # queued behind `stops`
    submitted.set()
    reset_done.wait(10)
    try: device.synchronize(timeout=10)
    except DeviceError as error: outcome.append(error)

  thread = threading.Thread(target=other_thread)
  thread.start()
  submitted.wait(10)
  gate.value = 1
  with pytest.raises(DeviceError, match="unknown opcode"): device.new_signal().wait(1, timeout=10)
  device.queue().signal(device.timeline, device.next_timeline_value()).submit(device)  # resets: the error was raised
  device.synchronize(timeout=10)
  reset_done.set()
  thread.join()
  assert len(outcome) == 1 and "unknown opcode" in str(outcome[0])


def c_enums(text: str) -> list[dict[str, int]]:
  """Each `enum { A = 1, B, ... }` of C source `text` as names -> values (C's rule: one more than the name before)."""
  enums = []
  for body in re.findall(r"enum\s*\{([^}]*)\}", text):
    values, next_value = {}, 0
    for item in (part.strip() for part in body.split(",") if part.strip()):
      name, _, given = (x.strip() for x in item.partition("="))
      values[name] = next_value = int(given) if given else next_value
      next_value += 1
    enums.append(values)
  return enums


def test_python_spells_the_c_headers_packet_and_status_codes():
  from pytc.runtime import hcq, native
  root = Path(__file__).resolve().parents[3] / "runtime"
  opcodes, statuses = c_enums((root / "hcq_codes.h").read_text())
  assert {op.name: op.value for op in hcq.Op} | {"OPS": len(hcq.Op) + 1} == opcodes
  assert {name: getattr(native, name) for name in statuses} == statuses
  payloads = re.search(r"payload_bytes\[OPS\] = \{([^}]*)\}", (root / "packets.c").read_text())[1]
  assert {op: int(size) for op, size in re.findall(r"\[(\w+)\] = (\d+)", payloads)} == {op.name: hcq.PAYLOADS[op].size for op in hcq.Op}


def private(name: str) -> bool:
  return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def defined_names(tree: ast.Module) -> set[str]:
  """The names a module defines: its functions and classes, the variables and attributes it assigns (of any object)."""
  names = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef): names.add(node.name)
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store): names.add(node.id)
    elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store): names.add(node.attr)
  return names


def private_names_of_others(path: Path) -> list[str]:
  """In a Python module: `x._name` with x not self or cls, getattr/setattr/hasattr of "_name", and `from m import _name`,
  where the module defines no `_name` itself. In C: a string that is a private name (what PyObject_GetAttrString or
  PyUnicode_InternFromString would be given to reach an attribute), unless it names an entry of the module's own tables
  (a member, method or getter of its types)."""
  text = path.read_text()
  if path.suffix == ".c":
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    own = set(re.findall(r'\{\s*"(\w+)"\s*,', code))
    return [f"{path.name}: \"{name}\"" for name in re.findall(r'"(\w+)"', code) if private(name) and name not in own]
  tree, found = ast.parse(text), []
  own = defined_names(tree)
  for node in ast.walk(tree):
    if isinstance(node, ast.Attribute) and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")): named = [node.attr]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr", "delattr"):
      named = [node.args[1].value] if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) else []
    elif isinstance(node, ast.ImportFrom): named = [alias.name for alias in node.names]
    else: named = []
    found += [f"{path.name}:{node.lineno}: {ast.unparse(node)}" for name in named if private(name) and name not in own]
  return found


def test_the_runtime_names_no_private_attribute_of_another_modules_objects():
  """Each module of runtime/ is given what it needs through public names: none reaches into an object defined in another
  module (a ctypes object, another runtime module's class, a frontend class) by a private name."""
  root = Path(__file__).resolve().parents[3] / "runtime"
  assert [found for path in sorted(root.rglob("*.py")) + sorted(root.rglob("*.c")) for found in private_names_of_others(path)] == []


def test_the_private_names_check_finds_what_it_looks_for(tmp_path):
  (module := tmp_path / "module.py").write_text("import ctypes\nfrom m import _hidden\nclass A:\n  def f(self, queue):\n"
                                                "    self._own, queue._count = 1, 2\n"
                                                "    return queue._state, ctypes._CFuncPtr, getattr(queue, '_lock'), self._state, queue.__dict__\n")
  (source := tmp_path / "module.c").write_text('// "_comment"\nPyObject_GetAttrString(queue, "_outstanding"); intern(&s, "__call__");\n'
                                              'static PyMemberDef members[] = {{"_own", T_OBJECT, 0, 0, NULL}, {NULL}};\n')
  assert [line.split(": ", 1)[1] for line in private_names_of_others(module)] == ["from m import _hidden", "queue._state", "ctypes._CFuncPtr",
                                                                                   "getattr(queue, '_lock')"]
  assert private_names_of_others(source) == ['module.c: "_outstanding"']
