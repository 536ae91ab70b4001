"""Graph templates: the graph a Tensor method builds, recorded on its first call for a signature (input shapes,
dtypes, devices and the other arguments) and rebuilt from new inputs after, without running the method's
Python again (its checks, broadcasting and intermediate Tensors) — a jit for graph building."""
from __future__ import annotations

import functools
from collections.abc import Callable

from pytc.dtype import DType
from pytc.graph import LazyOp, arg_key
from pytc.helpers import LRUCache, getenv

Step = tuple[str, DType, tuple[int, ...], str, tuple[int, ...], object]  # op, dtype, shape, device, sources, arg
Recording = tuple[tuple[Step, ...], tuple[int, ...]]  # the steps, and where each output is among the inputs and steps
_TEMPLATES: LRUCache[tuple, tuple[bool, Recording | None]] = LRUCache(getenv("PYTC_TEMPLATE_CACHE", 4096))  # the signatures used last
TENSOR = object()  # where a signature has a Tensor argument (None is an argument of its own)


def record(outputs: list[LazyOp], inputs: list[LazyOp]) -> Recording | None:
  """The steps that compute `outputs` from `inputs` (sources are positions: the inputs, then earlier steps) and the
  outputs' positions; None when the graph reads data other than the inputs (a buffer made inside is not rebuilt)."""
  position = {id(node): i for i, node in enumerate(inputs)}
  steps: list[Step] = []
  stack = [(output, False) for output in reversed(outputs)]
  while stack:
    node, expanded = stack.pop()
    if id(node) in position: continue
    if not expanded:
      stack.append((node, True))
      stack.extend((src, False) for src in reversed(node.srcs))
      continue
    if node.op == "buffer": return None
    steps.append((node.op, node.dtype, node.shape, node.device, tuple(position[id(src)] for src in node.srcs), node.arg))
    position[id(node)] = len(inputs) + len(steps) - 1
  return tuple(steps), tuple(position[id(output)] for output in outputs)


def replay(recording: Recording, inputs: list[LazyOp]) -> list[LazyOp]:
  """The recorded outputs, rebuilt over `inputs`."""
  steps, outputs = recording
  nodes = list(inputs)
  for op, dtype, shape, device, sources, arg in steps: nodes.append(LazyOp(op, dtype, shape, device, tuple(map(nodes.__getitem__, sources)), arg))
  return [nodes[i] for i in outputs]


def templated(method: Callable) -> Callable:
  """Decorate a deterministic Tensor method, returning a Tensor or a tuple of them, whose results depend only on its
  Tensor arguments' graphs and on its other (hashable) arguments: calls with the same signature share one recorded
  graph. Arguments key as graph nodes' do (graph.arg_key): 0.0 and -0.0, and 1, 1.0 and True, are different signatures."""
  @functools.wraps(method)
  def call(self, *args, **kwargs):
    tensor_type = type(self)
    tensors = [self] + [a for a in (*args, *kwargs.values()) if isinstance(a, tensor_type)]
    try:
      nodes = [id(t.lazydata) for t in tensors]
      aliases = None if len(set(nodes)) == len(nodes) else tuple(map(nodes.index, nodes))  # the recording reads each node once
      key = (method.__qualname__, aliases, tuple((t.shape, t.dtype.name, t.device) for t in tensors),
             tuple(TENSOR if isinstance(a, tensor_type) else arg_key(a) for a in args),
             tuple(sorted((k, TENSOR if isinstance(v, tensor_type) else arg_key(v)) for k, v in kwargs.items())))
      recording = _TEMPLATES.get(key, False)
    except TypeError: return method(self, *args, **kwargs)  # an unhashable argument: no template
    if recording is False:
      result = method(self, *args, **kwargs)
      outputs = result if isinstance(result, tuple) else (result,)
      _TEMPLATES[key] = (isinstance(result, tuple), record([t.lazydata for t in outputs], [t.lazydata for t in tensors]))
      return result
    several, recording = recording
    if recording is None: return method(self, *args, **kwargs)
    outputs = tuple(map(tensor_type, replay(recording, [t.lazydata for t in tensors])))
    return outputs if several else outputs[0]
  return call
