"""User mistakes raise a typed one-line error naming the op and the bad argument: TypeError for a wrong type, ValueError
for a wrong value, IndexError for an axis or index out of range; never an AttributeError, ZeroDivisionError or the like
from inside pytc."""
import math

import numpy as np
import pytest

from pytc import Tensor, dtypes


def images() -> Tensor: return Tensor.ones(1, 1, 4, 4)
def cube() -> Tensor: return Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))


# (what is wrong, the call, the error type, a piece of the message: the op and the argument)
MISTAKES = [
  ("device that is not a name", lambda: Tensor([1.0], device=5), TypeError, "device"),
  ("unknown device", lambda: Tensor([1.0], device="NOPE"), ValueError, "unknown device 'NOPE'"),
  ("device of a creation op", lambda: Tensor.zeros(2, device=3.5), TypeError, "device"),
  ("matmul by an int", lambda: Tensor([1.0, 2.0]) @ 3, TypeError, "matmul: the other operand must be a Tensor"),
  ("int matmul by a tensor", lambda: 3 @ Tensor([1.0, 2.0]), TypeError, "the other operand must be a Tensor"),
  ("dot with a list", lambda: Tensor([1.0, 2.0]).dot([1.0, 2.0]), TypeError, "dot: the other operand must be a Tensor"),
  ("linear with a float weight", lambda: Tensor([1.0, 2.0]).linear(2.0), TypeError, "linear: weight must be a Tensor"),
  ("conv2d stride 0", lambda: images().conv2d(Tensor.ones(1, 1, 2, 2), stride=0), ValueError, "conv2d: stride must be at least 1"),
  ("conv2d dilation 0", lambda: images().conv2d(Tensor.ones(1, 1, 2, 2), dilation=0), ValueError, "conv2d: dilation must be at least 1"),
  ("conv2d groups 0", lambda: images().conv2d(Tensor.ones(1, 1, 2, 2), groups=0), ValueError, "conv2d: groups must be at least 1"),
  ("conv2d stride of 3 values", lambda: images().conv2d(Tensor.ones(1, 1, 2, 2), stride=(1, 1, 1)), ValueError, "conv2d: stride"),
  ("conv2d float stride", lambda: images().conv2d(Tensor.ones(1, 1, 2, 2), stride=1.5), TypeError, "conv2d: stride must be an int"),
  ("conv2d weight not a tensor", lambda: images().conv2d([[1.0]]), TypeError, "conv2d: weight must be a Tensor"),
  ("conv2d bias not a tensor", lambda: images().conv2d(Tensor.ones(1, 1, 2, 2), bias=1.0), TypeError, "conv2d: bias must be a Tensor"),
  ("conv_transpose2d stride 0", lambda: images().conv_transpose2d(Tensor.ones(1, 1, 2, 2), stride=0), ValueError, "conv_transpose2d: stride"),
  ("max_pool2d stride 0", lambda: images().max_pool2d(2, stride=0), ValueError, "max_pool2d: stride must be at least 1"),
  ("avg_pool2d stride 0", lambda: images().avg_pool2d(2, stride=0), ValueError, "avg_pool2d: stride must be at least 1"),
  ("max_pool2d kernel 0", lambda: images().max_pool2d(0), ValueError, "max_pool2d: kernel_size must be at least 1"),
  ("max_pool2d string kernel", lambda: images().max_pool2d("2"), TypeError, "max_pool2d: kernel_size"),
  ("avg_pool2d float padding", lambda: images().avg_pool2d(2, padding=0.5), TypeError, "avg_pool2d: padding"),
  ("unfold step 0", lambda: Tensor.ones(8).unfold(0, 2, 0), RuntimeError, "unfold needs size >= 0 and step > 0"),
  ("float axis of a reduction", lambda: cube().sum(axis=1.5), TypeError, "sum: an axis must be an int"),
  ("float axis of softmax", lambda: cube().softmax(0.5), TypeError, "softmax: an axis must be an int"),
  ("float dim of transpose", lambda: cube().transpose(0.5, 1), TypeError, "transpose: an axis must be an int"),
  ("float dim of cat", lambda: cube().cat(cube(), dim=1.0), TypeError, "cat: an axis must be an int"),
  ("float dim of sort", lambda: cube().sort(dim=0.0), TypeError, "sort: an axis must be an int"),
  ("axis out of range", lambda: cube().sum(axis=3), IndexError, "axis 3 is out of range"),
  ("string shape", lambda: cube().reshape("abc"), TypeError, "reshape: a shape holds ints"),
  ("negative shape", lambda: cube().reshape(-4, -6), ValueError, "cannot reshape"),
  ("float padding", lambda: cube().pad(1.5), TypeError, "pad needs a sequence"),
  ("padding of floats", lambda: cube().pad(((0, 1.5), None, None)), TypeError, "pad needs None or a (before, after) pair"),
  ("float split size", lambda: cube().split(1.5), TypeError, "split sizes"),
  ("zero chunks", lambda: cube().chunk(0), ValueError, "chunk: chunks must be at least 1"),
  ("float shift", lambda: cube().roll(1.5, 0), TypeError, "roll shifts"),
  ("string diagonal offset", lambda: cube().diagonal("1"), TypeError, "diagonal: offset must be an int"),
  ("negative repeats", lambda: cube().repeat_interleave(-1), ValueError, "repeat_interleave: repeats must be at least 0"),
  ("float unflatten sizes", lambda: cube().unflatten(0, 2.0), TypeError, "unflatten sizes"),
  ("gather by a list", lambda: cube().gather(0, [[0]]), TypeError, "gather: index must be a Tensor"),
  ("scatter a list", lambda: cube().scatter(0, Tensor.zeros(1, 1, 1, dtype=dtypes.int32), [1.0]), TypeError, "scatter: src must be a bool"),
  ("masked_fill by a list", lambda: cube().masked_fill([True], 0.0), TypeError, "masked_fill: mask must be a Tensor"),
  ("masked_select by a bool", lambda: cube().masked_select(True), TypeError, "masked_select: mask must be a Tensor"),
  ("cat of a float", lambda: cube().cat(1.0), TypeError, "cat: each tensor must be a Tensor"),
  ("meshgrid of a list", lambda: Tensor([1, 2]).meshgrid([3]), TypeError, "meshgrid: each tensor must be a Tensor"),
  ("cross_entropy of a list", lambda: Tensor.ones(2, 3).cross_entropy([0, 1]), TypeError, "cross_entropy: Y must be a Tensor"),
  ("attention with a float key", lambda: Tensor.ones(1, 2, 4).scaled_dot_product_attention(1.0, Tensor.ones(1, 2, 4)), TypeError,
   "scaled_dot_product_attention: key must be a Tensor"),
  ("batchnorm with a list mean", lambda: cube().batchnorm(None, None, [0.0], Tensor.ones(3)), TypeError, "batchnorm: mean must be a Tensor"),
  ("einsum of a list formula", lambda: Tensor.einsum(["ij"], Tensor.ones(2, 2)), TypeError, "einsum needs a formula string"),
  ("rearrange of an int formula", lambda: cube().rearrange(3), TypeError, "rearrange needs a formula string"),
  ("newton_schulz string steps", lambda: Tensor.ones(2, 2).newton_schulz("5", (2.0, -1.5, 0.5)), TypeError, "newton_schulz: steps must be an int"),
  ("full of a tuple", lambda: Tensor.full((2,), (1, 2)), TypeError, "full: fill_value must be a bool, int or float"),
  ("full_like of a string", lambda: cube().full_like("x"), TypeError, "full_like: fill_value"),
  ("arange of a string", lambda: Tensor.arange("5"), TypeError, "arange: stop must be a bool, int or float"),
  ("arange to NaN", lambda: Tensor.arange(0, math.nan), ValueError, "arange needs finite bounds"),
  ("eye of -1 rows", lambda: Tensor.eye(-1), ValueError, "eye: n must be at least 0"),
  ("linspace of 1.5 steps", lambda: Tensor.linspace(0, 1, 1.5), TypeError, "linspace: steps must be an int"),
  ("NaN into an int tensor", lambda: Tensor([1.0, math.nan], dtype=dtypes.int32), ValueError, "cannot convert nan to dtypes.int32"),
  ("strings into a tensor", lambda: Tensor(["a"]), TypeError, "cannot make a Tensor"),
  ("pad_to a string", lambda: cube().pad_to("abc"), TypeError, "pad_to needs a shape"),
  ("from_bytes of a list", lambda: Tensor.from_bytes([1, 2], dtypes.uint8), TypeError, "from_bytes needs a NumPy array"),
]


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_user_mistakes_raise_a_typed_one_line_error(mistake):
  _, call, error, message = mistake
  with pytest.raises(error) as info: call()
  assert type(info.value) in (TypeError, ValueError, IndexError, RuntimeError), type(info.value)
  assert message in str(info.value) and "\n" not in str(info.value).strip(), str(info.value)


def test_correct_calls_still_work():
  x = images()
  assert x.conv2d(Tensor.ones(1, 1, 2, 2), stride=(2, 1), dilation=np.int64(1)).shape == (1, 1, 2, 3)
  assert x.max_pool2d((2, 2), stride=np.int32(2)).shape == x.avg_pool2d(2, padding=(1, 0)).shape[:2] + (2, 2)
  assert cube().sum(axis=np.int64(1)).shape == (2, 4) and cube().roll((1, 2), (0, 1)).shape == (2, 3, 4)
  assert Tensor.full((2,), np.float32(1.5)).tolist() == [1.5, 1.5] and Tensor.arange(np.int64(3)).tolist() == [0, 1, 2]
  assert (Tensor([1.0, 2.0]) @ Tensor([3.0, 4.0])).item() == 11.0
