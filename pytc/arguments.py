"""Checks of the arguments users pass to Tensor methods: a wrong type or value raises a one-line TypeError or ValueError
that names the method and the argument, rather than an exception from deep inside pytc or NumPy."""
from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from pytc.helpers import Frontend

if TYPE_CHECKING:
  from pytc.tensor import Tensor


class ArgumentAssertion(ValueError, AssertionError):
  """A bad argument where tinygrad asserts: a ValueError that code catching tinygrad's AssertionError catches too."""


def calling_op() -> str:
  """The Tensor method the user called, for an error message: the outermost public method of Tensor (a dunder such as
  `__matmul__` included, named matmul) on the stack of pytc's own frames, so softmax's error names softmax rather than
  the max it runs."""
  tensor, frame, op = Frontend.tensor, sys._getframe(1), "Tensor"
  while frame is not None and frame.f_globals.get("__name__", "").startswith("pytc"):
    name, owner = frame.f_code.co_name, frame.f_locals.get("self", frame.f_locals.get("cls"))
    tensor_method = isinstance(owner, tensor) or (isinstance(owner, type) and issubclass(owner, tensor))
    if tensor_method and hasattr(tensor, name) and (not name.startswith("_") or (name.startswith("__") and name.endswith("__"))):
      op = "Tensor" if name == "__init__" else name.strip("_")
    frame = frame.f_back
  return op


def argfix(*x) -> tuple:
  """tinygrad's calling convention: f(1, 2) and f((1, 2)) mean the same."""
  return tuple(x[0]) if len(x) == 1 and isinstance(x[0], tuple | list) else tuple(x)


def is_int(value: object) -> bool: return isinstance(value, int | np.integer)


def is_tensor(value: object) -> bool: return isinstance(value, Frontend.tensor)


def int_arg(value: object, name: str, minimum: int | None = None) -> int:
  """`value` as an int, at least `minimum` when given."""
  if not is_int(value): raise TypeError(f"{calling_op()}: {name} must be an int, got {type(value).__name__} {value!r}")
  if minimum is not None and value < minimum: raise ValueError(f"{calling_op()}: {name} must be at least {minimum}, got {value}")
  return int(value)


def ints_arg(value: object, n: int, name: str, minimum: int | None = None) -> tuple[int, ...]:
  """An int for each of n dims: one int for all of them, or a sequence of n ints."""
  if is_int(value): value = (value,) * n
  if not isinstance(value, Sequence) or isinstance(value, str):
    raise TypeError(f"{calling_op()}: {name} must be an int or a sequence of {n} ints, got {type(value).__name__} {value!r}")
  if len(value) != n: raise ValueError(f"{calling_op()}: {name} must be an int or a sequence of {n} ints, got {value!r}")
  return tuple(int_arg(v, name, minimum) for v in value)


def tensor_arg(value: object, name: str) -> Tensor:
  """`value`, which must be a Tensor."""
  if not is_tensor(value): raise TypeError(f"{calling_op()}: {name} must be a Tensor, got {type(value).__name__} {value!r:.60}")
  return value


def scalar_arg(value: object, name: str) -> bool | int | float:
  """`value`, which must be a Python or NumPy bool, int or float."""
  if not isinstance(value, bool | int | float | np.bool_ | np.integer | np.floating):
    raise TypeError(f"{calling_op()}: {name} must be a bool, int or float, got {type(value).__name__} {value!r:.60}")
  return value.item() if isinstance(value, np.generic) else value
