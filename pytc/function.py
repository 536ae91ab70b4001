"""`@function`: a function of Tensors traced once per signature and then called as a unit: its graph is recorded on the
first call with given shapes, dtypes, devices and other arguments, and later calls rebuild that graph over the new
inputs without running the function's Python (pytc.template's recordings, the same machinery Tensor methods use).

The inputs are every Tensor reachable from the arguments (a model passed as `self` brings its weights), as tinygrad
gathers them. A call that assigns to an input (an optimizer step, running statistics in training) or whose graph reads
a buffer that is not an input runs the Python every time (with allow_implicit=False the latter raises, as in tinygrad)."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pytc import flags
from pytc.graph import arg_key
from pytc.helpers import LRUCache
from pytc.nn.state import get_state_dict
from pytc.symbolic import Variable
from pytc.template import record, replay
from pytc.tensor import Tensor


class Function:
  def __init__(self, fxn: Callable, precompile: bool = False, precompile_backward: bool = False, allow_implicit: bool = False,
               grad_fxn: Callable | None = None):
    if grad_fxn is not None: raise NotImplementedError("function(grad_fxn=...): pytc differentiates the traced graph itself")
    self.fxn, self.allow_implicit = fxn, allow_implicit
    self.recordings: LRUCache[tuple, tuple | None] = LRUCache(flags.FUNCTION_CACHE)
    functools.update_wrapper(self, fxn)

  def __get__(self, obj, objtype=None): return self if obj is None else functools.partial(self.__call__, obj)

  def __call__(self, *args, **kwargs) -> Any:
    inputs = list({id(t): t for t in get_state_dict((args, kwargs)).values()}.values())
    try: key = (signature(args, kwargs), tuple((t.shape, t.dtype.name, t.device) for t in inputs), Tensor.training)
    except TypeError: return self.fxn(*args, **kwargs)  # an unhashable argument: traced every call
    if any(t.lazydata.symbolic for t in inputs) or any(isinstance(a, Variable) for a in (*args, *kwargs.values())):
      return self.fxn(*args, **kwargs)  # a recording would keep the bound values' buffers
    if (found := self.recordings.get(key, False)) is not False:
      if found is None: return self.fxn(*args, **kwargs)
      several, recording = found
      outputs = [Tensor(node) for node in replay(recording, [t.lazydata for t in inputs])]
      return tuple(outputs) if several else outputs[0]
    before = [t.lazydata for t in inputs]
    result = self.fxn(*args, **kwargs)
    outputs = result if isinstance(result, tuple) else (result,)
    if not all(isinstance(t, Tensor) for t in outputs):
      raise RuntimeError(f"function {self.fxn.__qualname__} must return a Tensor or a tuple of Tensors, not {type(result).__name__}")
    assigned = any(t.lazydata is not node for t, node in zip(inputs, before))
    recording = None if assigned else record([t.lazydata for t in outputs], before)
    if recording is None and not assigned and not self.allow_implicit:
      raise RuntimeError(f"function {self.fxn.__qualname__} reads buffers that are not among its inputs' tensors: pass them in, "
                         "or decorate with function(allow_implicit=True)")
    self.recordings[key] = None if recording is None else (isinstance(result, tuple), recording)
    return result


def signature(args: tuple, kwargs: dict) -> tuple:
  """The arguments other than the Tensors (which key by shape, dtype and device), as graph arguments key."""
  def part(value: Any) -> object:
    if isinstance(value, Tensor): return Tensor
    if isinstance(value, list | tuple): return (type(value).__name__, tuple(map(part, value)))
    if isinstance(value, dict): return ("dict", tuple(sorted((k, part(v)) for k, v in value.items())))
    if hasattr(value, "__dict__") and not callable(value): return (type(value).__qualname__, id(value))
    hash(value)
    return arg_key(value)
  return tuple(map(part, args)), tuple(sorted((k, part(v)) for k, v in kwargs.items()))


def function(fxn: Callable | None = None, *, precompile: bool = False, precompile_backward: bool = False, allow_implicit: bool = False,
             grad_fxn: Callable | None = None) -> Function | Callable[[Callable], Function]:
  """`@function` or `@function(allow_implicit=True)`. precompile and precompile_backward are accepted for tinygrad's
  signature: pytc compiles a graph when it is realized, and caches it by structure either way."""
  def wrap(f: Callable) -> Function: return Function(f, precompile, precompile_backward, allow_implicit, grad_fxn)
  return wrap if fxn is None else wrap(fxn)
