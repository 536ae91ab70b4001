"""TinyJit: capture the kernel launches and transfers of a function once, then replay them with new inputs.

The first call runs the function as usual; the second runs it again while recording every step (kernel or transfer, and
its buffers); later calls skip the Python, the graph building and the scheduling: they patch the input buffers' addresses
into the recorded kernel arguments (a transfer of an input is encoded again), write the next random words, and run one
prebuilt command graph (runtime/graph.py: every queue of every device the function used). As in tinygrad, inputs are
the Tensor arguments (positional, keyword, or directly inside a list, tuple or dict argument), of the same shapes, dtypes
and views on every call; the function must do the same thing every call; state it changes lives in buffers it assigns
to (`x.assign(...)`, `x += ...`, an optimizer's step), which the replay writes again; the returned tensors live in the
same buffers from call to call. `JIT=0` in the environment (read on each call until one captures) runs the function plainly on
every call.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from pytc.device import Buffer
from pytc.graph import VIEW_OPS, LazyOp
from pytc.helpers import DEBUG, JIT, GlobalCounters
from pytc.realize import CAPTURES, JitError, realize
from pytc.runtime._immediate import Immediate, Replay
from pytc.runtime.graph import CommandGraph, Step
from pytc.symbolic import Variable
from pytc.tensor import Tensor


def _input_tensors(args: tuple, kwargs: dict) -> tuple[list[int | str], list[Tensor]]:
  """The Tensor arguments with their positions or keywords (keywords sorted), then the Tensors directly inside list, tuple
  and dict arguments (not deeper: a model's weights stay implicit inputs)."""
  if not kwargs and all(isinstance(a, Tensor) for a in args): return list(range(len(args))), list(args)
  named = [(i, a) for i, a in enumerate(args) if isinstance(a, Tensor)] + sorted(((k, v) for k, v in kwargs.items() if isinstance(v, Tensor)),
                                                                               key=lambda kv: kv[0])
  names, tensors = [name for name, _ in named], [t for _, t in named]
  for arg in (*args, *kwargs.values()):
    items = arg if isinstance(arg, list | tuple) else arg.values() if isinstance(arg, dict) else ()
    tensors += [t for t in items if isinstance(t, Tensor) and not any(t is seen for seen in tensors)]
  return names, tensors


def _variables(args: tuple, kwargs: dict) -> list[tuple[int | str, Variable]]:
  """The bound Variable arguments, with their positions or keywords."""
  return [(i, a) for i, a in enumerate(args) if isinstance(a, Variable)] + sorted((k, v) for k, v in kwargs.items() if isinstance(v, Variable))


def _base(node: LazyOp) -> tuple[LazyOp, list[LazyOp]]:
  """The node under a chain of views, and the views from the outermost in (what a kernel reading them bakes in)."""
  views = []
  while node.op in VIEW_OPS:
    views.append(node)
    node = node.srcs[0]
  return node, views


def _prepare_inputs(tensors: list[Tensor]) -> tuple[list[Buffer], list[tuple]]:
  """Realize the input tensors; returns their buffers and what a capture depends on (view chain, shape, dtype, device). A
  constant (Tensor.ones(4)) has no buffer for a replay to replace: it is realized into one first, as tinygrad does."""
  bases = [_base(t.lazydata) for t in tensors]
  if not all(base.is_realized for base, _ in bases):
    for t, (base, _) in zip(tensors, bases):
      if base.op == "const": t.lazydata = t.contiguous().lazydata
    Tensor.realize(*tensors)
    bases = [_base(t.lazydata) for t in tensors]
  buffers = [base.arg for base, _ in bases]
  if len({id(b) for b in buffers}) != len(buffers): raise JitError("TinyJit got the same tensor (or buffer) twice among its inputs")
  return buffers, [(tuple((v.op, v.shape, v.arg) for v in views), base.shape, base.dtype, base.device) for base, views in bases]


def _same_nodes(args: tuple, nodes: list[LazyOp] | None) -> bool:
  """Whether the arguments are Tensors whose nodes are `nodes`, in order: the last replay's inputs, unchanged."""
  if nodes is None or len(args) != len(nodes): return False
  for arg, node in zip(args, nodes):
    if not isinstance(arg, Tensor) or arg.lazydata is not node: return False
  return True


def _describe(info: tuple) -> str:
  views, shape, dtype, device = info
  return f"a {shape} {dtype} buffer on {device}" + (f" seen through {', '.join(f'{op}{arg}' for op, _, arg in views)}" if views else "")


def _tensors_in(value: Any) -> list[Tensor]:
  if isinstance(value, Tensor): return [value]
  if isinstance(value, list | tuple | dict): return [t for item in (value.values() if isinstance(value, dict) else value) for t in _tensors_in(item)]
  return []


def _check_returns(value: Any) -> None:
  if value is None or isinstance(value, Tensor): return
  if not isinstance(value, list | tuple | dict):
    raise JitError(f"a jitted function may return only Tensors (in lists, tuples, dicts), not {type(value).__name__}: replays return it unchanged")
  for item in value.values() if isinstance(value, dict) else value: _check_returns(item)


def _substitute(value: Any, replacements: dict[int, Tensor]) -> Any:
  if isinstance(value, Tensor): return replacements.get(id(value), value)
  if isinstance(value, dict): return {k: _substitute(v, replacements) for k, v in value.items()}
  if isinstance(value, list | tuple): return type(value)(_substitute(v, replacements) for v in value)
  return value


class TinyJit(Replay):
  """`@TinyJit` or `TinyJit(fn)`; with `prune=True` (`@TinyJit(prune=True)`) the replays leave out the kernels that depend on no
  input, which ran once when captured (say, weights prepared inside the function). A call goes to `_call` (the base's fallback), except a replay
  whose inputs are the last replay's tensors and whose work is one CPU command buffer run on the calling thread, which the
  base class (runtime/immediate.c) does without Python once `_arm` armed it."""
  def __new__(cls, fn: Callable | None = None, prune: bool = False):
    return functools.partial(cls, prune=prune) if fn is None else super().__new__(cls)

  def __init__(self, fn: Callable, prune: bool = False):
    super().__init__(self._call)
    self.fn, self.prune = fn, prune
    self.reset()

  def reset(self) -> None:
    """Forget the capture: the next call runs plainly, the one after captures again."""
    self.calls, self.result, self.graph, self.steps, self.programs, self.variables, self.draws = 0, None, None, [], [], [], []
    self.replayed_nodes: list[LazyOp] | None = None  # the nodes of the last replay's input tensors (held: they stay alive)
    self.disarm()

  def __get__(self, obj, objtype=None): return self if obj is None else functools.partial(self.__call__, obj)

  def _call(self, *args, **kwargs):
    if CAPTURES.jits and self.calls >= 1:
      raise RuntimeError("having TinyJit inside another TinyJit is not supported: the outer capture would miss its kernels")
    if self.graph is not None and not kwargs and _same_nodes(args, self.replayed_nodes): result = self.replay(list(args), None)
    else:
      names, tensors = _input_tensors(args, kwargs)
      buffers, info = _prepare_inputs(tensors)
      if self.graph is None and (self.calls == 0 or JIT.value == 0): result = self.run(args, kwargs)
      elif self.graph is None: result = self.capture(args, kwargs, names, tensors, buffers, info)
      else:
        if names != self.names: raise JitError(f"jitted function called with tensor arguments {names}, captured with {self.names}")
        if info != self.info:
          i = next(i for i, (now, then) in enumerate(zip(info, self.info)) if now != then)
          raise JitError(f"jitted function's input {i} is {_describe(info[i])}, captured as {_describe(self.info[i])}")
        if self.variables: self._write_variables(args, kwargs)
        result = self.replay(tensors, buffers)
    self.calls += 1
    return result

  def run(self, args: tuple, kwargs: dict) -> Any:
    result = self.fn(*args, **kwargs)
    if returned := _tensors_in(result): Tensor.realize(*returned)
    return result

  def capture(self, args: tuple, kwargs: dict, names: list[int | str], tensors: list[Tensor], buffers: list[Buffer], info: list[tuple]) -> Any:
    recorded, draws = [], []
    CAPTURES.launches.append(recorded)
    CAPTURES.draws.append(draws)
    CAPTURES.jits.append(self)
    try: result = self.run(args, kwargs)
    finally:
      CAPTURES.launches.remove(recorded)
      CAPTURES.draws.remove(draws)
      CAPTURES.jits.remove(self)
    if not any(steps for steps, _ in recorded): raise JitError("the jitted function realized nothing: there is no kernel to replay")
    _check_returns(result)
    self.programs = [program for _, programs in recorded for program in programs]  # their code stays loaded while the capture replays
    self.names, self.info, self.result, self.draws = names, info, result, draws
    self.variables = [(name, [(leaf, list(leaf.buffers.values())) for leaf, _ in variable.terms]) for name, variable in _variables(args, kwargs)]
    returned = {id(r) for r in _tensors_in(result)}
    self.returned_inputs = {id(t): i for i, t in enumerate(tensors) if id(t) in returned}
    self.inputs, position = list(buffers), {id(b): i for i, b in enumerate(buffers)}
    needed = set(position)  # with prune: the buffers that depend on an input
    self.steps = []  # (step, its buffers)
    for steps, _ in recorded:
      for step, step_buffers in steps:
        if self.prune and needed.isdisjoint(id(b) for b in step_buffers): continue
        needed.update(id(b) for b in step_buffers)
        self.steps.append((step, step_buffers))
    self.held = {id(b): b for _, step_buffers in self.steps for b in step_buffers if id(b) not in position}  # the other buffers
    # patches: (kernel number, argument position, input index); a transfer reading or writing an input is re-encoded instead
    kernels = [(step, step_buffers) for step, step_buffers in self.steps if step.kernel is not None]
    self.patches = [(k, i, position[id(b)]) for k, (_, step_buffers) in enumerate(kernels) for i, b in enumerate(step_buffers) if id(b) in position]
    self.transfer_inputs = any(step.kernel is None and any(id(b) in position for b in step_buffers) for step, step_buffers in self.steps)
    self.graph = CommandGraph([step for step, _ in self.steps])
    if DEBUG >= 3:
      devices = ", ".join(device.name for device in self.graph.devices)
      print(f"TinyJit: {len(kernels)} launches and {len(self.steps) - len(kernels)} transfers on {devices}; each replay patches "
            f"{len(self.patches)} buffer pointers: " + ", ".join(f"launch {k} argument {i} <- input {index}" for k, i, index in self.patches))
    return result

  def replay(self, tensors: list[Tensor], buffers: list[Buffer] | None) -> Any:
    """Run the capture over `buffers`, the inputs' (None: the last replay's, the tensors' nodes being the same)."""
    if buffers is not None: self._rebind(tensors, buffers)
    for buffer, device, count in self.draws: buffer.copyin(Tensor._draw_words(device, count))
    self.graph.run()
    GlobalCounters.add(self.graph.counts)
    if not self.returned_inputs: return self.result
    return _substitute(self.result, {tensor_id: tensors[i] for tensor_id, i in self.returned_inputs.items()})

  def _write_variables(self, args: tuple, kwargs: dict) -> None:
    """Write the values the Variable arguments are bound to into the buffers the captured kernels read them from."""
    given = _variables(args, kwargs)
    if (now := [name for name, _ in given]) != (then := [name for name, _ in self.variables]):
      raise JitError(f"jitted function called with Variable arguments {now}, captured with {then}")
    def ranges(leaves) -> list: return [(leaf.name, leaf.lo, leaf.hi) for leaf, _ in leaves]
    for (name, variable), (_, captured) in zip(given, self.variables):
      if ranges(variable.terms) != ranges(captured):
        raise JitError(f"jitted function's Variable argument {name} is {variable!r} of {ranges(variable.terms)}, captured as {ranges(captured)}")
      for (leaf, _), (_, buffers) in zip(variable.terms, captured):
        for buffer in buffers: buffer.copyin(np.array(leaf.value, np.int32))

  def _rebind(self, tensors: list[Tensor], buffers: list[Buffer]) -> None:
    """Point the graph's kernels at `buffers`. When none is one the replay writes and the inputs are the positional
    arguments, the next call of positional Tensors with the same nodes skips the inputs' checks and this."""
    copied = False
    for i, buffer in enumerate(buffers):
      if id(buffer) in self.held:  # say an earlier output fed back: the replay may write that buffer, so its kernels read a copy
        buffers[i] = realize([LazyOp("contiguous", buffer.dtype, buffer.shape, buffer.device, (_base(tensors[i].lazydata)[0],))])[0].arg
        copied = True
    if self.transfer_inputs: self.graph = CommandGraph(self._rebound(buffers))
    for kernel, position, index in self.patches: self.graph.kernel_args[kernel].set(position, buffers[index].raw)
    self.replayed_nodes = None if copied or self.names != list(range(len(tensors))) else [t.lazydata for t in tensors]
    self._arm()

  def _arm(self) -> None:
    """Let calls with the last replay's tensors replay in C when running the graph is all a replay does: one CPU buffer on
    the calling thread (graph.alone), no random words to write, no input returned, no kernel timing (DEBUG>=2)."""
    graph, nodes = self.graph, self.replayed_nodes
    plain = nodes is not None and isinstance(graph.alone, Immediate) and not (self.draws or self.returned_inputs or DEBUG >= 2)
    if not plain: return self.disarm()
    self.arm(run=graph.alone, result=self.result, input_type=Tensor, input_attribute="lazydata", inputs=tuple(nodes), captures=CAPTURES,
             captures_attribute="jits", counters=GlobalCounters, counts=graph.counts)

  def _rebound(self, buffers: list[Buffer]) -> list[Step]:
    """The captured steps over this call's input buffers."""
    now = {id(old): new for old, new in zip(self.inputs, buffers)}
    return [replace(step, buffers=tuple(now.get(id(b), b).raw for b in step_buffers)) for step, step_buffers in self.steps]
