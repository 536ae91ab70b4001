"""Graph templates: the graph a Tensor method builds, recorded on its first call for a signature (input shapes,
dtypes, devices and the other arguments) and rebuilt from new inputs after, without running the method's
Python again (its checks, broadcasting and intermediate Tensors) — a jit for graph building."""
from __future__ import annotations

import functools
from collections.abc import Callable

from pytc import flags
from pytc.dtype import DType
from pytc.graph import VIEW_OPS, LazyOp, arg_key
from pytc.helpers import LRUCache
from pytc.symbolic import Variable

Step = tuple[str, DType, tuple[int, ...], str, tuple[int, ...], object]  # op, dtype, shape, device, sources, arg
Leaves = int | slice | tuple[int, ...]  # a step's leaves: those of node k, or a slice or the positions of the pool's
Plan = tuple[tuple[int, Leaves | LazyOp], ...]  # per step, its structure number and its leaves (or its shared node)
PLANS = 8  # plans kept per recording: the signatures of inputs it is replayed over, most often one


class Recording:
  """The steps of a recorded graph, where each output is among the inputs and steps, and plans: for inputs of known structures
  and leaves, a function making the nodes with each step's structure number and leaves known, without keying them (None
  while a signature has been replayed once)."""
  __slots__ = ("steps", "outputs", "plans")

  def __init__(self, steps: tuple[Step, ...], outputs: tuple[int, ...]):
    self.steps, self.outputs, self.plans = steps, outputs, {}


_TEMPLATES: LRUCache[tuple, tuple[bool, Recording | None]] = LRUCache(flags.TEMPLATE_CACHE)  # the signatures used last
TENSOR = object()  # where a signature has a Tensor argument (None is an argument of its own)


def record(outputs: list[LazyOp], inputs: list[LazyOp]) -> Recording | None:
  """The steps that compute `outputs` from `inputs` (sources are positions: the inputs, then earlier steps) and the
  outputs' positions; None when the graph reads data other than the inputs (a buffer made inside is not rebuilt) or
  reads an input's own views (other inputs need not have them). A reshape of an input's source is a reshape of the
  input: Tensor.reshape makes one reshape of two, reading under an input that is a reshape."""
  position = {id(node): i for i, node in enumerate(inputs)}
  under: dict[int, int] = {}  # the views under each input, by id: to the input
  for i, node in enumerate(inputs):
    while node.op in VIEW_OPS and id(node := node.srcs[0]) not in position: under.setdefault(id(node), i)
  steps: list[Step] = []
  stack = [(output, False) for output in reversed(outputs)]
  while stack:
    node, expanded = stack.pop()
    if id(node) in position: continue
    if id(node) in under: return None
    srcs = node.srcs
    if node.op == "reshape" and (i := under.get(id(srcs[0]))) is not None and inputs[i].op == "reshape" and inputs[i].srcs[0] is srcs[0]:
      srcs = (inputs[i],)
    if not expanded:
      stack.append((node, True))
      stack.extend((src, False) for src in reversed(srcs))
      continue
    if node.op == "buffer": return None
    steps.append((node.op, node.dtype, node.shape, node.device, tuple(position[id(src)] for src in srcs), node.arg))
    position[id(node)] = len(inputs) + len(steps) - 1
  return Recording(tuple(steps), tuple(position[id(output)] for output in outputs))


SMALL_SEARCH = 8  # an input with at most this many leaves finds them in the pool by a scan (in C), not a table of positions


def leaf_pool(inputs: list[LazyOp]) -> tuple[tuple[LazyOp, ...], tuple]:
  """The leaves of all inputs (the first's, then the others' not among them yet) and the signature of how each input's
  leaves are found among them (the first's are the first). (Hot: a model's layer reads a weight or two beside an
  activation that has read every weight before it.)"""
  first = inputs[0].leaves
  pool, index, pattern = list(first), None, [len(first)]
  for node in inputs[1:]:
    if (leaves := node.leaves) is first or not leaves:
      pattern.append(None if leaves else ())
      continue
    spots = []
    for leaf in leaves:
      if len(leaves) <= SMALL_SEARCH and index is None: i = pool.index(leaf) if leaf in pool else len(pool)  # nodes compare by identity
      else:
        if index is None: index = {id(leaf): i for i, leaf in enumerate(pool)}
        i = index.setdefault(id(leaf), len(pool))
      if i == len(pool): pool.append(leaf)
      spots.append(i)
    pattern.append(tuple(spots))
  return tuple(pool), tuple(pattern)


def replay(recording: Recording, inputs: list[LazyOp], leaves: tuple[tuple[LazyOp, ...], object] | None = None) -> list[LazyOp]:
  """The recorded outputs, rebuilt over `inputs`. `leaves`: the inputs' leaf pool and a signature of how the inputs' leaves
  lie in it, when the caller knows them (else leaf_pool's, with the inputs' structures)."""
  pool, signature = leaves or leaf_pool(inputs)
  if leaves is None: signature = (tuple([node.structure for node in inputs]), signature)
  if (build := recording.plans.get(signature)) is not None: return build(inputs, pool)
  nodes = list(inputs)
  for op, dtype, shape, device, sources, arg in recording.steps:
    nodes.append(LazyOp(op, dtype, shape, device, tuple(map(nodes.__getitem__, sources)), arg))
  # the first replay over a signature is interpreted, the second makes its builder: compiling one takes milliseconds (a
  # ResNet-18 training step's 43 first replays: 0.24 s of its first call), which a graph built only once never repays
  if signature in recording.plans: recording.plans[signature] = builder(recording, make_plan(nodes, len(inputs), pool), len(inputs))
  elif len(recording.plans) < PLANS: recording.plans[signature] = None
  return [nodes[i] for i in recording.outputs]


def make_plan(nodes: list[LazyOp], inputs: int, pool: tuple[LazyOp, ...]) -> Plan:
  """Each step's structure number and leaves: those of the first node holding the same tuple, else where they lie in the pool;
  a step that reads no buffer (a constant, or a view of one) is its node itself, which every replay shares (nodes never change)."""
  holder = {id(node.leaves): k for k, node in enumerate(nodes[:inputs]) if node._leaves is not None}
  index = {id(leaf): i for i, leaf in enumerate(pool)}
  plan: list[tuple[int, Leaves | LazyOp]] = []
  for k, node in enumerate(nodes[inputs:], inputs):
    if node._leaves == ():
      plan.append((node.structure, node))
      continue
    if (spec := holder.get(id(node._leaves))) is None:
      spots = tuple(index[id(leaf)] for leaf in node._leaves)
      spec = slice(0, len(spots)) if spots == tuple(range(len(spots))) else spots
      holder[id(node._leaves)] = k
    plan.append((node.structure, spec))
  return tuple(plan)


def builder(recording: Recording, plan: Plan, inputs: int) -> Callable[[list[LazyOp], tuple[LazyOp, ...]], list[LazyOp]]:
  """The plan as straight-line Python (build(inputs, pool) -> outputs): per step, a node made and its fields set, without
  the loop, the unpacking and the dispatch on the kind of leaves that interpreting the plan costs (3-4x faster). Strings,
  shapes (of ints) and structure numbers are literals; dtypes, args and shared nodes are the function's globals: nothing from
  outside the recording is in the text it runs."""
  names: dict[str, object] = {"new": object.__new__, "LazyOp": LazyOp}
  def named(value: object) -> str:
    names[name := f"g{len(names)}"] = value
    return name
  def literal(shape: tuple[int, ...]) -> str: return repr(shape) if all(type(d) is int for d in shape) else named(shape)
  lines = ["def build(inputs, pool):", "  " + "".join(f"n{i}, " for i in range(inputs)) + "= inputs"]
  for k, ((op, dtype, shape, device, sources, arg), (structure, spec)) in enumerate(zip(recording.steps, plan), inputs):
    if type(spec) is LazyOp:
      lines.append(f"  n{k} = {named(spec)}")
      continue
    leaves = f"n{spec}._leaves" if type(spec) is int else f"pool[:{spec.stop}]" if type(spec) is slice else \
      "(" + "".join(f"pool[{i}], " for i in spec) + ")"
    lines += [f"  n{k} = new(LazyOp)", f"  n{k}.op = {op!r}", f"  n{k}.dtype = {named(dtype)}", f"  n{k}.shape = {literal(shape)}",
              f"  n{k}.symbolic = None",
              f"  n{k}.device = {device!r}", f"  n{k}.srcs = (" + "".join(f"n{s}, " for s in sources) + ")", f"  n{k}.arg = {named(arg)}",
              f"  n{k}.structure = {structure!r}", f"  n{k}._leaves = {leaves}"]
  lines.append("  return [" + ", ".join(f"n{i}" for i in recording.outputs) + "]")
  exec("\n".join(lines), names)
  return names["build"]


def templated(method: Callable) -> Callable:
  """Decorate a deterministic Tensor method, returning a Tensor or a tuple of them, whose results depend only on its
  Tensor arguments' graphs and on its other (hashable) arguments: calls with the same signature share one recorded
  graph. Arguments key as graph nodes' do (graph.arg_key): 0.0 and -0.0, and 1, 1.0 and True, are different signatures."""
  @functools.wraps(method)
  def call(self, *args, **kwargs):
    tensor_type = type(self)
    tensors = [self] + [a for a in (*args, *kwargs.values()) if isinstance(a, tensor_type)]
    if any(t.lazydata.symbolic for t in tensors) or any(isinstance(a, Variable) for a in (*args, *kwargs.values())):
      return method(self, *args, **kwargs)  # a recording would keep the bound values' buffers
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
