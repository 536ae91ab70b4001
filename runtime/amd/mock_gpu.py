"""The MOCK GPU's engines: one thread per hardware queue that reads its ring from the read to the write pointer, decodes
every packet (runtime/amd/pm4.py, sdma.py: an unknown or malformed one stops the queue with a fault) and does what the
hardware would:

- PM4: SET_SH_REG fills a register file; DISPATCH_DIRECT runs the kernel whose code address COMPUTE_PGM_LO/HI hold, over
  the grid in the packet and the workgroup size in COMPUTE_NUM_THREAD_X/Y/Z, with the kernarg pointer of the user-data
  registers. On gfx11 the MOCK executes the code object's own machine code from GPU memory (the RDNA3 emulator of
  runtime/amd/rdna3: the initial SGPRs and VGPRs as the registers and RSRC2 set them up, memory through this GPU's
  mapped ranges, a fault naming the instruction; an instruction it cannot execute traps: KFD's hardware-exception
  event); `PYTC_AMD_MOCK=emulation` (and gfx9, whose ISA is not emulated) runs the
  kernel's CPU emulation instead (the `EMU` lowering of the same mapped kernel, compiled with the grid as arguments),
  called with the buffer addresses read from those kernarg bytes. The registers are checked against the kernel's
  descriptor (RSRC1/2/3, LDS, wave size, user SGPRs) and the workgroup size against its mapping. RELEASE_MEM writes
  32/64-bit values or the 100 MHz clock and raises interrupts; WAIT_REG_MEM stalls the queue until memory compares true
  (polled: the host writes signals without ringing a doorbell); INDIRECT_BUFFER runs another buffer of packets.
- SDMA: COPY_LINEAR moves bytes, FENCE writes 32 bits, TRAP raises an interrupt, POLL_REGMEM stalls like WAIT_REG_MEM,
  TIMESTAMP writes the clock.

Every address a packet or a kernel argument names must lie in memory mapped to this GPU; one that does not is a memory
fault reported with its address (KFD's memory event), and the queue stops, as the hardware's would."""

from __future__ import annotations

import ctypes
import dataclasses
import struct
import threading
import time
import weakref
from typing import Any

from pytc import flags
from pytc.runtime.amd import pm4, sdma
from pytc.runtime.amd.rdna3 import wave
from pytc.runtime.amd.rdna3.memory import GlobalMemory
from pytc.runtime.amd_code_object import parse as parse_code_object
from pytc.runtime.device import KernelInfo
from pytc.runtime.ops_cpu import KERNEL_ABI, Kernargs, load_library

COMPUTE, SDMA = 0, 1
LDS_FIELD = 0x1FF << 15  # COMPUTE_PGM_RSRC2.LDS_SIZE, which the runtime sets
PRIV = 1 << 20  # COMPUTE_PGM_RSRC1.PRIV, which the runtime sets on gfx11
COMPARE = {
  0: lambda v, r: True,
  1: lambda v, r: v < r,
  2: lambda v, r: v <= r,
  3: lambda v, r: v == r,
  4: lambda v, r: v != r,
  5: lambda v, r: v >= r,
  6: lambda v, r: v > r,
}


class Fault(Exception):
  """A packet named memory the GPU cannot reach, or could not be executed: the queue stops."""

  def __init__(self, address: int, reason: str):
    super().__init__(f"{reason} (address {address:#x})")
    self.address, self.reason = address, reason


class Trap(Exception):
  """A wave hit an instruction (or a setup) the MOCK cannot execute: a hardware exception, and the queue stops."""


@dataclasses.dataclass(frozen=True)
class Emulation:
  """What the MOCK runs for a dispatch of the code at one address: the kernel's CPU entry and what its code object
  says."""

  name: str
  entry: int
  descriptor: Any
  local: int
  pointers: tuple[int, ...]  # kernarg offsets of the buffer pointers
  buffer_bytes: tuple[int, ...]  # each buffer's size
  kernarg_size: int
  image_base: int  # the loaded code object, which the ISA executor reads from GPU memory at each dispatch
  image_size: int


def executes_isa(family: int) -> bool:
  """Whether dispatches run the code object's machine code (gfx11 unless PYTC_AMD_MOCK=emulation) or its CPU
  emulation."""
  mode = flags.AMD_MOCK.value.strip().lower()
  if mode not in ("isa", "emulation"):
    raise ValueError(f"PYTC_AMD_MOCK={mode!r}: the MOCK executes 'isa' (the default) or 'emulation'")
  return family == pm4.GFX11 and mode == "isa"


class Emulations:
  """A program's kernels registered with a MOCK GPU by code address, while the program lives."""

  def __init__(self, gpu: Any, code: bytes, base: int, library: bytes, infos: tuple[KernelInfo, ...]):
    (self.library, _), code_object = load_library(library), parse_code_object(code)
    self.gpu, self.addresses, image_size = gpu, [], len(code_object.image())
    for info in infos:
      kernel = code_object.kernels[info.name]
      entry = ctypes.cast(self.library[f"_mlir_{info.name}"], ctypes.c_void_p).value
      buffer_bytes = tuple(info.sizes[f"buffer{i}"] for i in range(info.buffers))
      pointers = tuple(a.offset for a in kernel.args if a.value_kind == "global_buffer")
      self.addresses.append(address := base + kernel.code_address)
      gpu.emulations[address] = Emulation(
        info.name,
        entry,
        kernel.descriptor,
        info.sizes["local"],
        pointers,
        buffer_bytes,
        kernel.kernarg_segment_size,
        base,
        image_size,
      )
    weakref.finalize(self, Emulations.unregister, gpu, list(self.addresses)).atexit = False

  @staticmethod
  def unregister(gpu: Any, addresses: list[int]) -> None:
    for address in addresses:
      gpu.emulations.pop(address, None)


class Engine:
  """Executes one hardware queue on its own thread, woken by its doorbell."""

  def __init__(self, queue: Any):
    self.queue, self.gpu, self.kind = queue, queue.gpu, queue.kind
    self.unit = 4 if self.kind == COMPUTE else 1  # the pointers count dwords (PM4) or bytes (SDMA)
    self.capacity = queue.ring_size // self.unit
    self.read = ctypes.c_uint64.from_address(queue.read_pointer)
    self.write = ctypes.c_uint64.from_address(queue.write_pointer)
    self.family, self.version = pm4.family(self.gpu.arch), sdma.sdma_version(self.gpu.arch)
    self.registers: dict[int, int] = {}
    self.isa_memory = GlobalMemory(lambda: self.gpu.ranges.spans)
    self.wake, self.stopped, self.halted = threading.Event(), False, False
    threading.Thread(
      target=self.run, name=f"mock-{self.gpu.arch}-{'pm4' if self.kind == COMPUTE else 'sdma'}", daemon=True
    ).start()

  def kick(self) -> None:
    self.wake.set()

  def stop(self) -> None:
    self.stopped = True
    self.wake.set()

  def run(self) -> None:
    while not self.stopped:
      self.wake.wait()
      self.wake.clear()
      if self.halted:
        continue
      try:
        self.drain()
      except Fault as fault:
        self.halted = True
        self.gpu.memory_fault(fault.address, fault.reason)
      except Trap as trap:
        self.halted = True
        self.gpu.hardware_exception(str(trap))

  # ***** memory as the GPU sees it *****

  def check(self, address: int, nbytes: int, what: str) -> None:
    if not self.gpu.mapped(address, max(nbytes, 1)):
      raise Fault(address, f"{what}: {nbytes} bytes not mapped to the GPU")

  def load(self, address: int, fmt: str, what: str) -> int:
    self.check(address, struct.calcsize(fmt), what)
    return struct.unpack(fmt, ctypes.string_at(address, struct.calcsize(fmt)))[0]

  def store(self, address: int, fmt: str, value: int, what: str) -> None:
    self.check(address, struct.calcsize(fmt), what)
    ctypes.memmove(address, struct.pack(fmt, value & (1 << 8 * struct.calcsize(fmt)) - 1), struct.calcsize(fmt))

  def ring_words(self, start: int, count: int) -> list[int]:
    """`count` dwords of the ring from unit position `start`, wrapping at its end."""
    base, size = self.queue.ring, self.queue.ring_size
    offset = start % self.capacity * self.unit
    first = min(count * 4, size - offset)
    data = ctypes.string_at(base + offset, first) + ctypes.string_at(base, count * 4 - first)
    return list(struct.unpack(f"<{count}I", data))

  def stall(self, ready: Any) -> bool:
    """Poll `ready()` until it holds (True) or the queue is stopped (False); the host writes signals without a
    doorbell."""
    delay = 0.00002
    while not ready():
      if self.stopped:
        return False
      if self.wake.wait(delay):
        self.wake.clear()  # a doorbell meanwhile: the ring is read again after this packet anyway
      delay = min(delay * 2, 0.001)
    return True

  # ***** the rings *****

  def drain(self) -> None:
    while not self.stopped and self.read.value < self.write.value:
      available = self.write.value - self.read.value
      if self.kind == COMPUTE:
        header = self.ring_words(self.read.value, 1)[0]
        size = ((header >> 16) & 0x3FFF) + 2 if header >> 30 == 3 else 1
        if size > available:
          return  # the rest of the packet is not written yet
        packets = list(self.decode_pm4(self.ring_words(self.read.value, size), self.read.value * 4))
        if not self.execute_pm4(packets[0]):
          return
        self.read.value += size
      else:
        # whole packets: the host rings the doorbell after each
        words = self.ring_words(self.read.value, available // 4)
        packets = self.decode_sdma(words, self.read.value)
        ends = [p.offset for p in packets[1:]] + [4 * len(words)]
        for packet, end in zip(packets, ends):
          if not self.execute_sdma(packet):
            return
          self.read.value += end - packet.offset

  def decode_pm4(self, words: list[int], at: int) -> Any:
    try:
      return list(pm4.decode(words, self.family))
    except pm4.PacketError as error:
      raise Fault(self.queue.ring + at % self.queue.ring_size, f"malformed PM4: {error}") from None

  def decode_sdma(self, words: list[int], at: int) -> Any:
    try:
      return list(sdma.decode(words, self.version))
    except sdma.PacketError as error:
      raise Fault(self.queue.ring + at % self.queue.ring_size, f"malformed SDMA: {error}") from None

  def execute_pm4(self, packet: Any) -> bool:
    """Run one PM4 packet; False when it stalls on a wait and the queue was stopped meanwhile."""
    f, name = packet.fields, packet.name
    if name in ("SET_SH_REG", "SET_UCONFIG_REG"):
      for i, value in enumerate(f["values"]):
        self.registers[f["register"] + i] = value
    elif name == "RELEASE_MEM":
      self.release(f)
    elif name == "WAIT_REG_MEM":
      if f["memory"]:
        address, test = f["address"], COMPARE[f["function"]]
        return self.stall(lambda: test(self.load(address, "<I", "WAIT_REG_MEM") & f["mask"], f["reference"]))
      registers = pm4.registers(self.family)
      if (f["reg1"], f["reg2"]) != (registers.hdp_flush_req, registers.hdp_flush_done):
        raise Fault(0, f"WAIT_REG_MEM on registers {f['reg1']:#x}/{f['reg2']:#x}, which the MOCK does not model")
    elif name == "DISPATCH_DIRECT":
      self.dispatch(f["x"], f["y"], f["z"], f["initiator"])
    elif name == "INDIRECT_BUFFER":
      self.check(f["address"], 4 * f["dwords"], "INDIRECT_BUFFER")
      words = list(struct.unpack(f"<{f['dwords']}I", ctypes.string_at(f["address"], 4 * f["dwords"])))
      for inner in self.decode_pm4(words, 0):
        if not self.execute_pm4(inner):
          return False
    elif name == "EVENT_WRITE" and (f["event"], f["index"]) != (pm4.CS_PARTIAL_FLUSH, 4):
      raise Fault(0, f"EVENT_WRITE of event {f['event']} index {f['index']}, which the MOCK does not model")
    return True  # ACQUIRE_MEM, NOP, CS_PARTIAL_FLUSH: the MOCK has no caches and runs one dispatch at a time

  def release(self, f: dict) -> None:
    data = f["data"]
    if data == "value32":
      self.store(f["address"], "<I", f["value"], "RELEASE_MEM")
    elif data == "value64":
      self.store(f["address"], "<Q", f["value"], "RELEASE_MEM")
    elif data == "timestamp":
      self.store(f["address"], "<Q", time.perf_counter_ns() // 10, "RELEASE_MEM timestamp")
    elif data != "none":
      raise Fault(f["address"], f"RELEASE_MEM with data selection {data}, which the MOCK does not model")
    if f["interrupt"]:
      self.gpu.signal_event(f["ctxid"] or f["value"])  # gfx9 passes no context id: the mailbox value names it

  def execute_sdma(self, packet: Any) -> bool:
    f, name = packet.fields, packet.name
    if name == "COPY_LINEAR":
      self.check(f["source"], f["bytes"], "SDMA copy source")
      self.check(f["destination"], f["bytes"], "SDMA copy destination")
      ctypes.memmove(f["destination"], f["source"], f["bytes"])
    elif name == "FENCE":
      self.store(f["address"], "<I", f["value"], "SDMA FENCE")
    elif name == "TRAP":
      self.gpu.signal_event(f["context"])
    elif name == "TIMESTAMP":
      self.store(f["address"], "<Q", time.perf_counter_ns() // 10, "SDMA TIMESTAMP")
    elif name == "POLL_REGMEM":
      address, test = f["address"], COMPARE[f["function"]]
      return self.stall(lambda: test(self.load(address, "<I", "SDMA POLL_REGMEM") & f["mask"], f["reference"]))
    return True

  def dispatch(self, x: int, y: int, z: int, initiator: int) -> None:
    """Run the kernel the registers name over an x*y*z grid of workgroups, as the registers set it up."""
    r, regs = pm4.registers(self.family), self.registers
    code = (regs.get(r.pgm_lo, 0) | regs.get(r.pgm_hi, 0) << 32) << 8
    if (kernel := self.gpu.emulations.get(code)) is None:
      raise Fault(code, "DISPATCH_DIRECT of code where no kernel is loaded")
    d, rsrc1, rsrc2, rsrc3 = kernel.descriptor, regs.get(r.rsrc1, 0), regs.get(r.rsrc2, 0), regs.get(r.rsrc3, 0)
    expected1, lds = d.compute_pgm_rsrc1 | (PRIV if self.family == pm4.GFX11 else 0), (rsrc2 & LDS_FIELD) >> 15 << 9
    local = tuple(regs.get(a, 0) for a in (r.num_thread_x, r.num_thread_y, r.num_thread_z))
    checks = [
      (rsrc1 == expected1, f"RSRC1 {rsrc1:#x}, not {expected1:#x}"),
      (
        rsrc2 & ~LDS_FIELD == d.compute_pgm_rsrc2 & ~LDS_FIELD,
        f"RSRC2 {rsrc2:#x}, not the descriptor's {d.compute_pgm_rsrc2:#x}",
      ),
      (rsrc3 == d.compute_pgm_rsrc3, f"RSRC3 {rsrc3:#x}, not {d.compute_pgm_rsrc3:#x}"),
      (lds >= d.group_segment_fixed_size, f"{lds} bytes of LDS for a kernel using {d.group_segment_fixed_size}"),
      (local == (kernel.local, 1, 1), f"workgroups of {local}, not the kernel's ({kernel.local}, 1, 1)"),
      (
        self.family != pm4.GFX11 or bool(initiator & pm4.INITIATOR_CS_W32_EN) == d.wave32,
        "the initiator's wave size is not the kernel's",
      ),
    ]
    problems = [message for ok, message in checks if not ok]
    if problems:
      raise Fault(code, f"dispatch of {kernel.name}: {'; '.join(problems)}")
    try:
      isa = executes_isa(self.family)  # read at each dispatch: a bad value faults the queue, naming it
    except ValueError as error:
      raise Trap(str(error)) from None
    if isa:
      return self.execute(kernel, code, (x, y, z), local, lds)
    kernarg = regs.get(r.user_data_0, 0) | regs.get(r.user_data_0 + 1, 0) << 32
    self.check(kernarg, kernel.kernarg_size, f"kernel {kernel.name}'s kernarg segment")
    pointers = [self.load(kernarg + offset, "<Q", "kernarg") for offset in kernel.pointers]
    for i, (pointer, nbytes) in enumerate(zip(pointers, kernel.buffer_bytes)):
      self.check(pointer, nbytes, f"kernel {kernel.name}'s buffer argument {i}")
    args = Kernargs([*pointers, x, y, z])
    KERNEL_ABI(kernel.entry)(args.address + 8)

  def execute(
    self, kernel: Emulation, code: int, grid: tuple[int, int, int], local: tuple[int, int, int], lds: int
  ) -> None:
    """Run the machine code at `code` over the grid: the user SGPRs are the COMPUTE_USER_DATA registers RSRC2 counts."""
    r, regs = pm4.registers(self.family), self.registers
    rsrc2 = regs.get(r.rsrc2, 0)
    self.check(kernel.image_base, kernel.image_size, f"kernel {kernel.name}'s code")
    user = tuple(regs.get(r.user_data_0 + i, 0) for i in range(rsrc2 >> 1 & 0x1F))
    try:
      launch = wave.Launch(
        ctypes.string_at(kernel.image_base, kernel.image_size),
        kernel.image_base,
        code - kernel.image_base,
        grid,
        local,
        user,
        rsrc2,
        lds,
        kernel.descriptor.vgpr_count(self.gpu.arch),
        kernel.name,
        regs.get(r.rsrc1, 0) >> 12 & 0xFF,
      )
      wave.run(launch, self.isa_memory)
    except wave.ExecutionFault as fault:
      raise Fault(fault.address, str(fault)) from None
    except wave.UnsupportedInstruction as error:
      raise Trap(str(error)) from None


def engine(queue: Any) -> Engine:
  """The engine executing a MOCK hardware queue (the MOCK driver's factory)."""
  return Engine(queue)
