"""TinyJit: capture the kernel launches of a function once, then replay them with new inputs.

The first call runs the function as usual; the second runs it again while recording every launch (kernel
and buffers); later calls skip the Python graph building and scheduling entirely: they patch the input
buffers' addresses into the recorded kernel arguments and submit one prebuilt command buffer. As in
tinygrad, inputs are the Tensor arguments (same shapes and dtypes on every call), the function must do
the same thing every call, and the returned tensors live in the same buffers from call to call.
"""
from __future__ import annotations

from collections.abc import Callable

from pytc.helpers import GlobalCounters
from pytc.realize import RECORDERS, slices_for
from pytc.runtime.ops_cpu import Kernargs
from pytc.tensor import Tensor


class JitError(RuntimeError):
  """A jitted function was called in a way its capture cannot replay."""


class TinyJit:
  def __init__(self, fn: Callable):
    self.fn, self.calls = fn, 0
    self.signature: list[tuple] = []
    self.result = None

  def __call__(self, *args, **kwargs):
    inputs = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    if inputs: Tensor.realize(*inputs)
    signature = [(t.shape, t.dtype) for t in inputs]
    self.calls += 1
    if self.calls == 1: return self.fn(*args, **kwargs)
    if self.calls == 2: return self.capture(inputs, signature, args, kwargs)
    if signature != self.signature: raise JitError(f"jitted function called with {signature}, captured with {self.signature}")
    return self.replay(inputs)

  def capture(self, inputs: list[Tensor], signature: list[tuple], args, kwargs):
    recorded: list = []
    RECORDERS.append(recorded)
    try:
      self.result = self.fn(*args, **kwargs)
      outputs = self.result if isinstance(self.result, tuple | list) else [self.result]
      if results := [t for t in outputs if isinstance(t, Tensor)]: Tensor.realize(*results)
    finally:
      RECORDERS.remove(recorded)
    self.signature = signature
    input_buffers = [t.lazydata.arg for t in inputs]
    self.launches, self.patches = [], []  # patches: (kernargs, argument position, input index)
    devices = {id(device): device for device, _ in recorded}
    if len(devices) > 1: raise JitError("a jitted function must run on one device")
    self.device = next(iter(devices.values())) if devices else None
    for _, launches in recorded:
      for entry, buffers, extent in launches:
        kernargs = Kernargs([b.address for b in buffers] + [0, extent])
        self.launches.append((entry, kernargs, slices_for(self.device, extent, buffers), buffers))
        self.patches += [(kernargs, position, input_buffers.index(b)) for position, b in enumerate(buffers) if b in input_buffers]
    if self.device is not None:
      queue = self.device.queue()
      for entry, kernargs, slices, _ in self.launches: queue.exec(entry, kernargs.address, (slices, 1, 1))
      self.command_buffer = queue.bytes()
    return self.result

  def replay(self, inputs: list[Tensor]):
    if self.device is None: return self.result
    for kernargs, position, index in self.patches: kernargs.set(position, inputs[index].lazydata.arg.address)
    self.device.compute.submit(self.command_buffer + self.device.queue().signal(self.device.timeline, self.device.next_timeline_value()).bytes())
    self.device.synchronize()
    GlobalCounters.kernel_count += len(self.launches)
    return self.result
