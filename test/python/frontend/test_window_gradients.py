"""The gradients of convolutions and pooling, which pytc computes by rules (convolutions of the output gradient, one per
stride phase; a sum over the kernel's taps) rather than through the windows' movement ops: against NumPy references written
tap by tap, in float64, over strides, dilations, groups, depthwise, 1x1, rectangular and 1-D/3-D kernels, asymmetric and
negative padding, strides larger than the kernel, size-1 dims; the second derivative against finite differences; and
contiguous_backward, the rule that materializes a gradient."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from pytc import Tensor, dtypes

rng = np.random.default_rng(0)


def taps(kernel: tuple[int, ...]):
  return itertools.product(*[range(k) for k in kernel])


def window(padded: np.ndarray, tap: tuple[int, ...], out: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...]) -> tuple:
  """The index of the input elements that tap `tap` reads for every output position."""
  return (slice(None), slice(None), *[slice(t * d, t * d + s * (o - 1) + 1, s) for t, o, s, d in zip(tap, out, stride, dilation)])


def np_conv_grads(x, w, g, stride, dilation, pads, groups):
  """d(sum(conv(x, w) * g))/dx and /dw, tap by tap; pads per spatial dim as (before, after), either may be negative."""
  spatial = x.ndim - 2
  padded = np.pad(x, [(0, 0), (0, 0)] + [(max(b, 0), max(a, 0)) for b, a in pads])
  padded = padded[(slice(None), slice(None), *[slice(max(-b, 0), n - max(-a, 0)) for (b, a), n in zip(pads, padded.shape[2:])])]
  out, cig, cog = g.shape[2:], w.shape[1], w.shape[0] // groups
  dpadded, dw = np.zeros_like(padded), np.zeros_like(w)
  for tap in taps(w.shape[2:]):
    at = window(padded, tap, out, stride, dilation)
    xs = padded[at].reshape(x.shape[0], groups, cig, *out)
    gs = g.reshape(g.shape[0], groups, cog, *out)
    wt = w[(slice(None), slice(None), *tap)].reshape(groups, cog, cig)
    dims = "".join("yxz"[:spatial])
    dw[(slice(None), slice(None), *tap)] = np.einsum(f"bgo{dims},bgc{dims}->goc", gs, xs).reshape(-1, cig)
    dpadded[at] += np.einsum(f"bgo{dims},goc->bgc{dims}", gs, wt).reshape(x.shape[0], -1, *out)
  full = np.zeros([n + max(b, 0) + max(a, 0) for n, (b, a) in zip(x.shape[2:], pads)])  # undo the cut, then the padding
  dx_padded = np.zeros(x.shape[:2] + full.shape)
  dx_padded[(slice(None), slice(None), *[slice(max(-b, 0), max(-b, 0) + n) for (b, _), n in zip(pads, dpadded.shape[2:])])] = dpadded
  dx = dx_padded[(slice(None), slice(None), *[slice(max(b, 0), max(b, 0) + n) for (b, _), n in zip(pads, x.shape[2:])])]
  return dx, dw


CONVS = [  # batch, channels, out channels, size, kernel, stride, dilation, padding, groups
  (2, 4, 6, (9, 9), (3, 3), (1, 1), (1, 1), 1, 1),
  (2, 4, 6, (9, 9), (3, 3), (2, 2), (1, 1), 1, 1),
  (1, 4, 6, (8, 8), (1, 1), (2, 2), (1, 1), 0, 1),  # a ResNet downsample: 3 of 4 phases see no tap
  (2, 4, 4, (7, 7), (3, 3), (2, 2), (1, 1), 1, 4),  # depthwise
  (2, 6, 4, (10, 10), (3, 3), (3, 3), (1, 1), 2, 2),
  (1, 3, 5, (11, 11), (3, 3), (2, 2), (2, 2), 2, 1),  # stride and dilation
  (2, 4, 6, (9, 8), (3, 2), (2, 1), (1, 1), (1, 0), 1),  # rectangular
  (1, 2, 3, (7, 7), (2, 2), (3, 3), (1, 1), 0, 1),  # stride over a smaller kernel
  (1, 3, 2, (6, 6), (3, 3), (1, 1), (1, 1), (2, 1, 0, 1), 1),  # asymmetric padding (torch's flat order)
  (1, 2, 3, (9, 9), (7, 7), (2, 2), (1, 1), 3, 1),  # a stem's 7x7/2: the phases start past the padding
  (1, 2, 3, (8, 9), (3, 3), (2, 2), (1, 1), (0, 1, 1, 0), 1),  # strided, asymmetric padding
  (1, 2, 3, (9, 10), (3, 3), (2, 3), (1, 1), (2, -1, -1, 3), 1),  # strided, negative padding: input cut off
  (1, 2, 2, (1, 1), (1, 1), (1, 1), (1, 1), 0, 1),  # size-1 everything
  (1, 2, 2, (5, 1), (3, 1), (2, 1), (1, 1), 0, 1),
  (2, 3, 4, (13,), (5,), (3,), (1,), 2, 1),  # 1-D
  (1, 2, 3, (5, 6, 4), (3, 2, 2), (2, 1, 2), (1, 1, 1), 1, 1),  # 3-D
]


def pads_of(padding, spatial: int) -> list[tuple[int, int]]:
  if isinstance(padding, int): return [(padding, padding)] * spatial
  if len(padding) == spatial: return [(p, p) for p in padding]
  return [(padding[i], padding[i + 1]) for i in range(2 * spatial - 2, -1, -2)]


@pytest.mark.parametrize("case", CONVS, ids=lambda c: f"{c[3]}k{c[4]}s{c[5]}d{c[6]}p{c[7]}g{c[8]}")
def test_conv_gradients_match_numpy(case):
  batch, cin, cout, size, kernel, stride, dilation, padding, groups = case
  x, w = rng.standard_normal((batch, cin, *size)), rng.standard_normal((cout, cin // groups, *kernel))
  tx, tw = Tensor(x, dtype=dtypes.float64, requires_grad=True), Tensor(w, dtype=dtypes.float64, requires_grad=True)
  out = tx.conv2d(tw, stride=stride, dilation=dilation, padding=padding, groups=groups)
  g = rng.standard_normal(out.shape)
  (out * Tensor(g, dtype=dtypes.float64)).sum().backward()
  dx, dw = np_conv_grads(x, w, g, stride, dilation, pads_of(padding, len(size)), groups)
  np.testing.assert_allclose(tx.grad.numpy(), dx, rtol=1e-10, atol=1e-10)
  np.testing.assert_allclose(tw.grad.numpy(), dw, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("groups, kernel, flips", [(1, (3, 3), (2, 3)), (2, (3, 3), (2, 3)), (1, (3, 1), (2,)), (3, (2, 5), (3,))])
def test_flipped_and_regrouped_weights_are_read_without_divisions(groups, kernel, flips):
  """conv_transpose2d (every stride-1 input gradient) reads the weights regrouped (a flatten of channels) and flipped: a
  reshape of a flipped index splits back exactly (its -1 coefficient kept, not taken mod the dim), so with one group the
  kernels index the weights directly, not through a division and a modulo per element (several groups divide the merged
  channel index by its group's size). Values against NumPy."""
  from pytc.compiler import compile_kernels
  from pytc.device import Device
  from pytc.realize import schedule
  w0 = np.arange(6 * 4 * kernel[0] * kernel[1], dtype=np.float32).reshape(6, 4, *kernel)
  w = Tensor(w0).unflatten(0, (groups, -1)).transpose(1, 2).flatten(0, 1).flip(*flips) * 2
  kernel_ir = compile_kernels(schedule([w.lazydata])[0], Device["CPU"]).kernel_ir
  if groups == 1: assert not any(op in kernel_ir for op in ("divui", "remui", "floordivsi", "remsi")), kernel_ir
  expected = np.flip(w0.reshape(groups, 6 // groups, *w0.shape[1:]).swapaxes(1, 2).reshape(4 * groups, 6 // groups, *kernel), flips) * 2
  np.testing.assert_array_equal(w.numpy(), expected)


def test_stem_gradients_past_the_split_threshold():
  """A 7x7/2 stem over 3 channels whose weight gradient folds 8 x 48 x 48 = 18432 terms into each output (pytc-split-reduce
  splits it into partial sums), in float32 against the float64 reference."""
  x, w = rng.standard_normal((8, 3, 96, 96)), rng.standard_normal((16, 3, 7, 7))
  tx, tw = Tensor(x.astype(np.float32), requires_grad=True), Tensor(w.astype(np.float32), requires_grad=True)
  out = tx.conv2d(tw, stride=2, padding=3)
  g = rng.standard_normal(out.shape)
  (out * Tensor(g.astype(np.float32))).sum().backward()
  dx, dw = np_conv_grads(x, w, g, (2, 2), (1, 1), [(3, 3), (3, 3)], 1)
  np.testing.assert_allclose(tw.grad.numpy(), dw, rtol=1e-4, atol=1e-3 * np.abs(dw).max())
  np.testing.assert_allclose(tx.grad.numpy(), dx, rtol=1e-4, atol=1e-4 * np.abs(dx).max())


def test_negative_padding_crops():
  x, w = rng.standard_normal((1, 2, 8, 8)), rng.standard_normal((3, 2, 3, 3))
  tx, tw = Tensor(x, requires_grad=True, dtype=dtypes.float64), Tensor(w, requires_grad=True, dtype=dtypes.float64)
  out = tx.conv2d(tw, padding=(-1, 1, 0, -2))
  g = rng.standard_normal(out.shape)
  (out * Tensor(g, dtype=dtypes.float64)).sum().backward()
  dx, dw = np_conv_grads(x, w, g, (1, 1), (1, 1), pads_of((-1, 1, 0, -2), 2), 1)
  np.testing.assert_allclose(tx.grad.numpy(), dx, rtol=1e-10, atol=1e-10)
  np.testing.assert_allclose(tw.grad.numpy(), dw, rtol=1e-10, atol=1e-10)


def test_float32_and_half_gradients_keep_the_dtypes():
  for dtype, tol in ((dtypes.float32, 1e-4), (dtypes.float16, 3e-2)):
    x, w = rng.standard_normal((2, 4, 6, 6)).astype(np.float32), rng.standard_normal((3, 4, 3, 3)).astype(np.float32)
    tx, tw = Tensor(x, dtype=dtype, requires_grad=True), Tensor(w, dtype=dtype, requires_grad=True)
    out = tx.conv2d(tw, stride=2, padding=1)
    g = rng.standard_normal(out.shape).astype(np.float32)
    (out * Tensor(g, dtype=dtype)).sum().backward()
    assert tx.grad.dtype == dtype and tw.grad.dtype == dtype
    dx, dw = np_conv_grads(x.astype(np.float64), w.astype(np.float64), g.astype(np.float64), (2, 2), (1, 1), pads_of(1, 2), 1)
    np.testing.assert_allclose(tx.grad.numpy().astype(np.float64), dx, rtol=tol, atol=tol * 4)
    np.testing.assert_allclose(tw.grad.numpy().astype(np.float64), dw, rtol=tol, atol=tol * 4)


def test_second_derivative_against_finite_differences():
  """d/dw of sum(d(sum(conv(x, w)^2))/dx * v): the rule's gradients are differentiable graphs themselves."""
  x, w, v = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((2, 2, 3, 3)), rng.standard_normal((1, 2, 5, 5))
  def inner(w_values: np.ndarray) -> tuple[float, Tensor]:
    tx = Tensor(x, dtype=dtypes.float64, requires_grad=True)
    tw = Tensor(w_values, dtype=dtypes.float64, requires_grad=True)
    tx.conv2d(tw, stride=2, padding=1).square().sum().backward()
    return tx, tw
  tx, tw = Tensor(x, dtype=dtypes.float64, requires_grad=True), Tensor(w, dtype=dtypes.float64, requires_grad=True)
  (dx,) = tx.conv2d(tw, stride=2, padding=1).square().sum().gradient(tx)
  (dx * Tensor(v, dtype=dtypes.float64)).sum().backward()
  eps, numeric = 1e-6, np.zeros_like(w)
  for index in np.ndindex(w.shape):
    up, down = w.copy(), w.copy()
    up[index] += eps
    down[index] -= eps
    value = lambda values: float((inner(values)[0].grad.numpy() * v).sum())
    numeric[index] = (value(up) - value(down)) / (2 * eps)
  np.testing.assert_allclose(tw.grad.numpy(), numeric, rtol=1e-5, atol=1e-6)


POOLS = [(3, 2, 1, 1), (2, 2, 0, 1), (3, 1, 1, 1), (3, 3, 0, 2), (1, 2, 0, 1), (4, 3, 1, 1)]  # kernel, stride, padding, dilation


def np_pool_grad(x: np.ndarray, g: np.ndarray, kernel: int, stride: int, padding: int, dilation: int, kind: str) -> np.ndarray:
  """max: each window's gradient to its maxima, shared evenly by ties; avg: spread evenly over the window, padding counted."""
  padded = np.pad(x, [(0, 0), (0, 0), (padding, padding), (padding, padding)], constant_values=-np.inf if kind == "max" else 0.0)
  out, d = g.shape[2:], np.zeros_like(padded)
  windows = np.stack([padded[window(padded, t, out, (stride,) * 2, (dilation,) * 2)] for t in taps((kernel, kernel))], -1)
  share = (windows == windows.max(-1, keepdims=True)) / (windows == windows.max(-1, keepdims=True)).sum(-1, keepdims=True) if kind == "max" \
    else np.full(windows.shape, 1 / kernel ** 2)
  for i, t in enumerate(taps((kernel, kernel))): d[window(padded, t, out, (stride,) * 2, (dilation,) * 2)] += share[..., i] * g
  return d[:, :, padding:padding + x.shape[2], padding:padding + x.shape[3]]


@pytest.mark.parametrize("kernel,stride,padding,dilation", POOLS)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_gradients_match_numpy(kind, kernel, stride, padding, dilation):
  if kind == "avg" and dilation != 1: pytest.skip("avg_pool2d has no dilation")
  x = np.round(rng.standard_normal((2, 3, 9, 10)), 1)  # rounded: ties in the windows
  tx = Tensor(x, dtype=dtypes.float64, requires_grad=True)
  out = tx.max_pool2d(kernel, stride, dilation, padding) if kind == "max" else tx.avg_pool2d(kernel, stride, padding=padding)
  g = rng.standard_normal(out.shape)
  (out * Tensor(g, dtype=dtypes.float64)).sum().backward()
  np.testing.assert_allclose(tx.grad.numpy(), np_pool_grad(x, g, kernel, stride, padding, dilation, kind), rtol=1e-12, atol=1e-12)


def test_pool_gradient_at_inf_and_nan():
  x = np.array([[[[1.0, np.inf, 2.0, 0.0], [np.nan, 1.0, -np.inf, 3.0], [0.0, 0.0, 0.0, 5.0], [0.0, 0.0, 5.0, -1.0]]]])
  tx = Tensor(x, requires_grad=True)
  tx.max_pool2d(2).sum().backward()
  got = tx.grad.numpy()
  assert np.isnan(got[0, 0, :2, :2]).all()  # a NaN makes its window's maximum NaN, which no element equals
  np.testing.assert_array_equal(got[0, 0, :2, 2:], [[0, 0], [0, 1]])  # 3 beats -inf
  np.testing.assert_array_equal(got[0, 0, 2:, :2], 0.25)  # four tied zeros share it
  np.testing.assert_array_equal(got[0, 0, 2:, 2:], [[0, 0.5], [0.5, 0]])


def test_contiguous_backward_keeps_values_and_gradients():
  x = Tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
  np.testing.assert_allclose((x.exp() * 2).contiguous_backward().numpy(), 2 * np.exp(x.numpy()), rtol=1e-6)
  y = (x.exp() * 2).contiguous_backward()
  (y @ y).sum().backward()
  e = 2 * np.exp(x.numpy())
  expected = (np.ones((2, 2)) @ e.T + e.T @ np.ones((2, 2))) * e
  np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5)


def test_empty_batch_gradients():
  x = Tensor(np.zeros((0, 2, 5, 5), np.float32), requires_grad=True)
  w = Tensor(np.ones((3, 2, 3, 3), np.float32), requires_grad=True)
  x.conv2d(w, stride=2, padding=1).sum().backward()
  assert x.grad.shape == (0, 2, 5, 5)
  np.testing.assert_array_equal(w.grad.numpy(), np.zeros((3, 2, 3, 3)))


@pytest.mark.parametrize("kernel,stride,padding,dilation", POOLS)
def test_max_pool_gradient_equals_the_max_reductions_to_the_bit(kernel, stride, padding, dilation):
  """max_pool2d's own rule (each window's share of its gradient a buffer, the phases comparing x with the window's maximum)
  gives the bits the gradient of the windows' max reduction gives, ties, -0.0 and float32 rounding included."""
  x = np.round(rng.standard_normal((2, 3, 9, 10)), 1).astype(np.float32)
  x[0, 0, :2, :2] = -0.0
  g = rng.standard_normal((2, 3, *Tensor(x).max_pool2d(kernel, stride, dilation, padding).shape[2:])).astype(np.float32)
  pooled = Tensor(x, requires_grad=True)
  pooled.max_pool2d(kernel, stride, dilation, padding).backward(Tensor(g))
  reduced = Tensor(x, requires_grad=True)
  windows = reduced._pad_last(((padding, padding),) * 2, dtypes.float32.min)._pool((kernel, kernel), stride, dilation)
  windows.max((-2, -1)).backward(Tensor(g))
  np.testing.assert_array_equal(pooled.grad.numpy(), reduced.grad.numpy())


def test_max_pool_gradient_keeps_no_buffer_of_window_taps():
  """A 3x3 stride-2 pool's gradient keeps one value per window (its share), not the 9 taps of every window."""
  from pytc.compiler import compile_kernels
  from pytc.device import Device
  from pytc.realize import schedule
  tx = Tensor(rng.standard_normal((2, 4, 16, 16)).astype(np.float32), requires_grad=True)
  out = tx.max_pool2d(3, 2, padding=1)
  out.backward(Tensor(rng.standard_normal(out.shape).astype(np.float32)))
  kernel_ir = compile_kernels(schedule([tx.grad.lazydata])[0], Device["CPU"]).kernel_ir
  assert "8x8x3x3xf32" not in kernel_ir and "8x8xf32" in kernel_ir
