"""Tensor.assign and the in-place operators store into the tensor's own buffer when realized: the buffer stays the same
object, readers of it see the new data, and kernels realized with the assign still read the data from before it."""
import operator

import numpy as np
import pytest

from pytc import Tensor, dtypes

rng = np.random.default_rng(0)


def buffer_of(t: Tensor) -> object: return t.lazydata.arg


def test_assign_writes_into_the_same_buffer_and_lazy_readers_see_it():
  a = Tensor(x := rng.standard_normal((3, 4)).astype(np.float32))
  before, doubled, view = buffer_of(a), a * 2, a.reshape(4, 3)
  a.assign(a + 1).realize()
  assert buffer_of(a) is before
  np.testing.assert_allclose(a.numpy(), x + 1)
  np.testing.assert_allclose(doubled.numpy(), (x + 1) * 2)
  np.testing.assert_allclose(view.numpy(), (x + 1).reshape(4, 3))


@pytest.mark.parametrize("update, reference", [
  (lambda a, w: a.flip(0), lambda a, w: a[::-1]),
  (lambda a, w: a.T, lambda a, w: a.T),
  (lambda a, w: a @ w, lambda a, w: a @ w),
  (lambda a, w: a - a.sum(axis=1, keepdim=True), lambda a, w: a - a.sum(1, keepdims=True)),
  (lambda a, w: (a * 2).contiguous()[1:].pad(((0, 1), (0, 0))), lambda a, w: np.concatenate([a[1:] * 2, np.zeros((1, 5), np.float32)])),
], ids=["flip", "transpose", "matmul", "minus_row_sum", "shifted"])
def test_assign_of_a_value_that_reads_the_target_elsewhere(update, reference):
  a, w = rng.standard_normal((5, 5)).astype(np.float32), rng.standard_normal((5, 5)).astype(np.float32)
  target = Tensor(a)
  target.assign(update(target, Tensor(w))).realize()
  np.testing.assert_allclose(target.numpy(), reference(a, w), rtol=1e-5, atol=1e-5)


def test_assigns_realized_together_read_the_values_from_before():
  a, b = Tensor([1.0, 2.0]), Tensor([10.0, 20.0])
  total = a + b
  a.assign(b)
  b.assign(a * 0 + 5)  # a is now the assign: read before it was realized, its value (b)
  Tensor.realize(total, a, b)
  np.testing.assert_array_equal(total.numpy(), [11.0, 22.0])
  np.testing.assert_array_equal(a.numpy(), [10.0, 20.0])
  np.testing.assert_array_equal(b.numpy(), [5.0, 5.0])


def test_assign_accepts_scalars_lists_broadcasts_and_chains():
  a = Tensor([1, 2, 3])
  np.testing.assert_array_equal(a.assign(7).numpy(), [7, 7, 7])
  np.testing.assert_array_equal(a.assign([4, 5, 6]).numpy(), [4, 5, 6])
  np.testing.assert_array_equal(a.assign(Tensor([9])).numpy(), [9, 9, 9])
  a.assign(a + 1)
  a.assign(a * 2)
  assert (a * 10).tolist() == [200, 200, 200]  # a read while pending: its value
  assert a.tolist() == [20, 20, 20]
  lazy = Tensor([1.0]) + 1
  lazy.assign(Tensor([5.0]))  # no buffer of its own: takes the value's graph
  assert lazy.item() == 5.0


def test_assign_rejects_other_dtypes_and_shapes():
  a = Tensor([1.0, 2.0])
  with pytest.raises(RuntimeError, match="assign of dtypes.int32"): a.assign(Tensor([1, 2]))
  with pytest.raises(ValueError): a.assign(Tensor([1.0, 2.0, 3.0]))


INPLACE = [("__iadd__", operator.add), ("__isub__", operator.sub), ("__imul__", operator.mul), ("__ifloordiv__", operator.floordiv),
           ("__imod__", operator.mod), ("__iand__", operator.and_), ("__ior__", operator.or_), ("__ixor__", operator.xor),
           ("__ilshift__", operator.lshift), ("__irshift__", operator.rshift)]


@pytest.mark.parametrize("method, op", INPLACE, ids=[m for m, _ in INPLACE])
def test_inplace_integer_operators(method, op):
  a, b = rng.integers(1, 50, (3, 4)).astype(np.int32), rng.integers(1, 5, (3, 4)).astype(np.int32)
  t = Tensor(a)
  before = buffer_of(t)
  result = getattr(t, method)(Tensor(b))
  assert result is t and t.realize().lazydata.arg is before
  np.testing.assert_array_equal(t.numpy(), op(a, b))


def test_inplace_float_operators():
  a, w = rng.uniform(1, 2, (3, 3)).astype(np.float32), rng.uniform(1, 2, (3, 3)).astype(np.float32)
  t = Tensor(a)
  t /= 2
  t **= 2
  t @= Tensor(w)
  t -= 1
  np.testing.assert_allclose(t.numpy(), ((a / 2) ** 2) @ w - 1, rtol=1e-5)
  half = Tensor(np.zeros(4, np.float16))
  half += 1.5
  assert half.dtype == dtypes.float16 and half.tolist() == [1.5] * 4


def test_gradient_flows_through_a_pending_assign():
  x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
  y = Tensor([0.0, 0.0, 0.0])
  y.assign(x * x)
  y.sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])


def in_place_decisions(*assigned: Tensor) -> list[bool]:
  """Per assign, whether its schedule lets the value be computed into the target's buffer (no copy after)."""
  from pytc.realize import schedule, stored_value
  nodes = [t.lazydata for t in assigned]
  values = [stored_value(n) for n in nodes]
  scheduled, inputs, pending = schedule(values, {id(v): n.srcs[0].arg for n, v in zip(nodes, values)})
  position = {id(n.arg): i for i, n in enumerate(inputs)}
  slots = dict(zip(map(id, pending), scheduled.outputs))
  return [(slots[id(v)], position[id(n.srcs[0].arg)]) in scheduled.in_place for n, v in zip(nodes, values)]


def test_assigns_read_only_where_they_write_are_computed_in_place():
  """An elementwise update of the target (an optimizer's moments) writes the target directly; one whose kernel reads the
  target elsewhere (a transpose, a row sum) is computed aside and copied; an assign next to one reading the old value
  transposed still gets it."""
  x, w = rng.standard_normal((4, 4)).astype(np.float32), rng.standard_normal((4, 4)).astype(np.float32)
  a, b = Tensor(x), Tensor(w)
  assert in_place_decisions(a.assign(a * 0.9 + b * 0.1)) == [True]
  a, b = Tensor(x), Tensor(w)
  assert in_place_decisions(a.assign(a.T + b)) == [False]
  a, b = Tensor(x), Tensor(w)
  assert in_place_decisions(a.assign(a - a.sum(axis=1, keepdim=True))) == [False]
  a, b = Tensor(x), Tensor(w)
  old_a = a.T * 2
  decisions = in_place_decisions(a.assign(a + 1), b.assign(old_a + b))  # b's kernel reads the old a transposed
  assert decisions[1], decisions
  Tensor.realize(a, b)
  np.testing.assert_allclose(a.numpy(), x + 1)
  np.testing.assert_allclose(b.numpy(), x.T * 2 + w, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
def test_in_place_assigns_realized_with_readers_of_the_old_values(dtype):
  """Several assigns and plain outputs in one schedule, each output and target against NumPy: moments updated in place
  next to a parameter reading them, a swap, and sums of the targets' old values, over every dtype an update takes."""
  def draw(shape: tuple[int, ...]) -> np.ndarray:
    if dtype is np.bool_: return rng.standard_normal(shape) > 0
    return rng.standard_normal(shape) if dtype is np.float32 else rng.integers(0, 50, shape)
  m0, v0, p0, g = (np.asarray(draw((3, 5))).astype(dtype) for _ in range(4))
  m, v, p, grad = Tensor(m0), Tensor(v0), Tensor(p0), Tensor(g)
  if dtype is np.bool_:
    m_new, v_new, ref_m, ref_v = m | grad, v ^ grad, m0 | g, v0 ^ g
    p_new = m_new & v_new
    ref_p = ref_m & ref_v
  else:
    m_new, v_new = m * 2 + grad, v + grad * grad
    p_new, ref_m, ref_v = p + m_new - v_new, m0 * 2 + g, v0 + g * g
    ref_p = p0 + ref_m - ref_v
  old_sum = (m.cast(dtypes.int32) + v.cast(dtypes.int32)).sum(axis=0)
  m.assign(m_new)
  v.assign(v_new)
  p.assign(p_new)
  Tensor.realize(old_sum, m, v, p)
  np.testing.assert_array_equal(old_sum.numpy(), (m0.astype(np.int32) + v0.astype(np.int32)).sum(0))
  for tensor, reference in ((m, ref_m), (v, ref_v), (p, ref_p)): np.testing.assert_allclose(tensor.numpy(), reference.astype(dtype), rtol=1e-6)


def test_in_place_swap_and_empty_and_zero_d_targets():
  a, b = Tensor([1.0, 2.0, 3.0]), Tensor([4.0, 5.0, 6.0])
  a.assign(b + 0)
  b.assign(a * 1)
  Tensor.realize(a, b)
  np.testing.assert_array_equal(a.numpy(), [4.0, 5.0, 6.0])
  np.testing.assert_array_equal(b.numpy(), [4.0, 5.0, 6.0])  # b reads a's assign: its new value
  for shape in ((), (0,), (1,), (2, 0, 3)):
    t = Tensor(np.full(shape, 2.0, np.float32))
    t.assign(t * 3 + 1).realize()
    np.testing.assert_array_equal(t.numpy(), np.full(shape, 7.0, np.float32))


@pytest.mark.parametrize("shape", [(10,), (17,), (37,), (100,), (1027,), (5, 37), (33, 17), (3, 130)])
def test_in_place_update_of_sizes_not_a_multiple_of_the_vector_block(shape):
  """Vector code moves a partial last block back over its neighbour, computing some outputs twice: harmless for a fresh
  output, wrong for one computed in place (its second computation reads the first's result). Such kernels write once."""
  x = rng.standard_normal(shape).astype(np.float32)
  t = Tensor(x)
  for _ in range(3): t.assign(t * 0.5 + t * t).realize()
  want = x
  for _ in range(3): want = want * np.float32(0.5) + want * want
  np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)
