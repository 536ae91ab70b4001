"""Compile here, run anywhere: a function's graph compiled for a target and written as one file that the runtime loads and
runs alone, with no compiler and no MLIR (`pytc.runtime.exported.load`; the format is documented there and in docs/export.md).

  data = export(model, Tensor.empty(1, 784), target="cpu")   # or "emu", "nvptx:sm_90", "amdgpu:gfx942"
  Path("model.pytc").write_bytes(data)
  outputs = load("model.pytc")(np_input)                      # a list of arrays, one per returned tensor

The function is called once on the example inputs (their shapes and dtypes are the file's signature; their values do not
matter) and must build its result lazily: a function that realizes tensors on the way (`.numpy()`, `.realize()`, a
TinyJit inside) cannot be exported, since what it computed would be baked in. Tensors it reads besides its inputs
(weights) are stored in the file with their current values; random numbers drawn inside it are the same on every call.
A TinyJit-wrapped function exports its plain function.
"""
from __future__ import annotations

from collections.abc import Callable

from pytc.compiler import COMPILE_LOCK, DTYPE_OF_MLIR, compile_kernels, context
from pytc.compilers import Compiler
from pytc.compilers.gpu import gpu_compiler
from pytc.device import Device
from pytc.graph import LazyOp, is_view
from pytc.helpers import GlobalCounters, pytc_version
from pytc.jit import TinyJit
from pytc.pipelines import copy_module
from pytc.realize import schedule
from pytc.runtime.device import Binary, Compiled
from pytc.runtime.exported import BufferSpec, Graph, encode
from pytc.tensor import Tensor

GPU_DEVICES = {"nvptx": "NV", "amdgpu": "AMD"}  # the backend that runs each GPU target's code


class ExportError(ValueError):
  """A function, its inputs or a target that cannot be exported."""


def _returned(value: object) -> list[Tensor]:
  if isinstance(value, Tensor): return [value]
  if isinstance(value, list | tuple) and value and all(isinstance(t, Tensor) for t in value): return list(value)
  raise ExportError(f"an exported function must return a Tensor or a non-empty list/tuple of Tensors, not {type(value).__name__}")


def _computed(t: Tensor) -> LazyOp:
  """The node a kernel computes `t` into: a copy when `t` is a buffer or a view (a returned input, a transpose)."""
  node = t.lazydata
  return LazyOp("contiguous", node.dtype, node.shape, node.device, (node,)) if node.is_realized or is_view(node) else node


def _compiler(target: str) -> tuple[str, Compiled | None, Compiler]:
  """The device that runs `target`'s code, the device here compiling it (None for a GPU's, compiled without one) and its
  compiler."""
  if target.lower() == "cpu" or target.lower().startswith("emu"):
    device = Device[target.upper()]
    return device.name, device, device.compiler
  try: compiler = gpu_compiler(target)
  except ValueError as e: raise ExportError(f"cannot export for {target!r}: {e} (or 'cpu', 'emu', 'emu:<chip>')") from None
  return GPU_DEVICES[compiler.target.name], None, compiler


def _binary(scheduled: object, device: Compiled | None, compiler: Compiler) -> Binary:
  """The schedule's kernels compiled by `compiler` (through `device`'s executables when there is one)."""
  if device is not None: return compile_kernels(scheduled, device, "export").binary
  with COMPILE_LOCK, context(): return compiler.compile(copy_module(scheduled.kernels), "export")[0]


def export(fn: Callable[..., object], *inputs: Tensor, target: str = "cpu") -> bytes:
  """The exported file (bytes) of `fn` called on `inputs`, its kernels compiled for `target`."""
  fn = fn.fn if isinstance(fn, TinyJit) else fn
  if not all(isinstance(t, Tensor) for t in inputs): raise ExportError("export's example inputs must be Tensors")
  args = [t.contiguous().realize() for t in inputs]  # a buffer of its own for each input
  before = GlobalCounters.kernel_count
  returned = _returned(fn(*args))
  if GlobalCounters.kernel_count != before:
    raise ExportError("the exported function realized tensors while building its graph (.numpy(), .realize(), TinyJit): its result "
                      "must stay lazy, or those values would be baked into the file")
  nodes = [_computed(t) for t in returned]
  device, compiling, compiler = _compiler(target)
  scheduled, graph_inputs, pending = schedule(nodes, stage=compiler.schedule_stage)
  if len({n.device for n in nodes}) > 1 or any(launch.kernel is None for launch in scheduled.launches):
    raise ExportError("an exported function runs on one device: it may not copy between devices")
  binary = _binary(scheduled, compiling, compiler)
  position = {id(t.lazydata.arg): i for i, t in enumerate(args)}
  buffers, index = [], {}
  for i, node in enumerate(graph_inputs):
    kind = "input" if id(node.arg) in position else "constant"
    index["input", i] = len(buffers)
    buffers.append(BufferSpec(kind, node.dtype, node.shape, node.arg.as_bytes() if kind == "constant" else None))
  slot_of = {id(n): slot for n, slot in zip(pending, scheduled.outputs)}
  for slot in range(len(set(scheduled.outputs))):
    first = next(n for n in pending if slot_of[id(n)] == slot)
    index["output", slot] = len(buffers)
    buffers.append(BufferSpec("output", first.dtype, first.shape))
  for i, temporary in enumerate(scheduled.temporaries):
    index["temp", i] = len(buffers)
    buffers.append(BufferSpec("temp", DTYPE_OF_MLIR[temporary.element], temporary.shape))
  used = {id(node.arg): index["input", i] for i, node in enumerate(graph_inputs) if id(node.arg) in position}
  call_inputs = []
  for t in args:  # an input the graph does not read still takes its place in the call
    if (found := used.get(id(t.lazydata.arg))) is None:
      found = len(buffers)
      buffers.append(BufferSpec("input", t.dtype, t.shape))
    call_inputs.append(found)
  graph = Graph(device, binary.target, binary.code, binary.kernels, tuple(buffers), tuple(call_inputs),
                tuple(index["output", slot_of[id(n)]] for n in nodes),
                tuple((launch.kernel, tuple(index[arg] for arg in launch.args)) for launch in scheduled.launches))
  return encode(graph, f"pytc {pytc_version()}")
