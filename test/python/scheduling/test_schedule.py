"""Kernel counts of whole graphs, each beside tinygrad 0.14's count for the same graph (CPU,
GlobalCounters.kernel_count after realize, inputs realized first), and each checked against NumPy. pytc
never needs more kernels; it needs fewer where a row's reductions (max, sum, mean, variance) run inside
the kernel that consumes them, once per row (softmax, layernorm: 1; attention: 2, the softmax inside the
second matmul)."""
import functools
from dataclasses import replace

import numpy as np
import pytest

from pytc import GlobalCounters, Tensor, realize
from pytc.compilers import scheduling
from pytc.helpers import LRUCache
from pytc.realize import schedule
from pytc.runtime.target import gpu_target, host_cpu


def pool(x: Tensor, k: tuple[int, ...]) -> Tensor:
  """tinygrad's sliding windows (stride 1, dilation 1) from reshape/expand/shrink/permute: (..., out..., k...)."""
  lead, sizes = x.shape[:-len(k)], x.shape[-len(k):]
  outs = [n - kk + 1 for n, kk in zip(sizes, k)]
  repeats = [-(-kk * (n + 1) // n) for kk, n in zip(k, sizes)]
  x = x.reshape(lead + sum(((1, n) for n in sizes), ())).expand(lead + sum(((r, n) for r, n in zip(repeats, sizes)), ()))
  x = x.reshape(lead + tuple(r * n for r, n in zip(repeats, sizes)))
  x = x.shrink((None,) * len(lead) + tuple((0, kk * (n + 1)) for kk, n in zip(k, sizes)))
  x = x.reshape(lead + sum(((kk, n + 1) for kk, n in zip(k, sizes)), ()))
  x = x.shrink((None,) * len(lead) + sum((((0, kk), (0, o)) for kk, o in zip(k, outs)), ()))
  return x.permute(*range(len(lead)), *[len(lead) + 2 * i + 1 for i in range(len(k))], *[len(lead) + 2 * i for i in range(len(k))])


def conv2d(x: Tensor, w: Tensor, padding: int) -> Tensor:
  (n, c, _, _), (o, _, kh, kw) = x.shape, w.shape
  windows = pool(x.pad(((0, 0), (0, 0), (padding, padding), (padding, padding))), (kh, kw))
  oh, ow = windows.shape[2:4]
  return (windows.reshape(n, 1, c, oh, ow, kh, kw) * w.reshape(1, o, c, 1, 1, kh, kw)).sum((2, 5, 6))


def np_conv2d(x, w, padding):
  xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
  (n, _, h, wd), (o, _, kh, kw) = xp.shape, w.shape
  out = np.zeros((n, o, h - kh + 1, wd - kw + 1), np.float32)
  for i in range(kh):
    for j in range(kw): out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h - kh + 1, j:j + wd - kw + 1], w[:, :, i, j])
  return out


def np_softmax(x, axis=-1):
  e = np.exp(x - x.max(axis, keepdims=True))
  return e / e.sum(axis, keepdims=True)


def np_layernorm(x, eps=1e-5):
  c = x - x.mean(-1, keepdims=True)
  return c / np.sqrt((c * c).mean(-1, keepdims=True) + eps)


# (name, input shapes, pytc graph, NumPy reference, pytc kernels, tinygrad 0.14 kernels)
GRAPHS = [
  ("add", [(4, 4), (4, 4)], lambda a, b: a + b, lambda a, b: a + b, 1, 1),
  ("elementwise_chain", [(16, 16), (16, 16)], lambda a, b: (a * b + a).relu(), lambda a, b: np.maximum(a * b + a, 0), 1, 1),
  ("broadcast", [(4, 1), (1, 4)], lambda a, b: a + b, lambda a, b: a + b, 1, 1),
  ("scalar_chain", [(8, 8)], lambda a: ((a + 1.0) * 2).exp2(), lambda a: np.exp2((a + 1) * 2), 1, 1),
  ("permute_contiguous", [(8, 16)], lambda a: a.permute(1, 0).contiguous(), lambda a: a.T, 1, 1),
  ("permute_add", [(8, 16), (16, 8)], lambda a, b: a.permute(1, 0) + b, lambda a, b: a.T + b, 1, 1),
  ("pad_view", [(4, 4)], lambda a: a.pad(((1, 1), (2, 0))), lambda a: np.pad(a, ((1, 1), (2, 0))), 0, 0),
  ("shrink_view", [(4, 4)], lambda a: a.shrink(((1, 3), (0, 2))), lambda a: a[1:3, 0:2], 0, 0),
  ("flip_view", [(4, 4)], lambda a: a.flip(0), lambda a: a[::-1], 0, 0),
  ("pad_shrink_view", [(4, 4)], lambda a: a.pad(((1, 1), (1, 1))).shrink(((1, 5), (1, 5))), lambda a: a, 0, 0),
  ("flip_pad_add", [(4, 4)], lambda a: a.flip(1).pad(((0, 0), (2, 2))) + 1, lambda a: np.pad(a[:, ::-1], ((0, 0), (2, 2))) + 1, 1, 1),
  ("sum_axis", [(8, 16)], lambda a: a.sum(axis=1), lambda a: a.sum(1), 1, 1),
  ("sum_all", [(32, 32)], lambda a: a.sum(), lambda a: a.sum(), 1, 1),
  ("reduce_then_elementwise", [(8, 16)], lambda a: a.sum(axis=1).exp(), lambda a: np.exp(a.sum(1)), 1, 1),
  ("sub_global_max", [(8, 16)], lambda a: a - a.max(), lambda a: a - a.max(), 2, 2),
  ("sub_max", [(8, 16)], lambda a: a - a.max(axis=1, keepdim=True), lambda a: a - a.max(1, keepdims=True), 1, 2),
  ("softmax", [(8, 16)], lambda a: a.softmax(axis=-1), np_softmax, 1, 3),
  ("log_softmax", [(8, 16)], lambda a: a.log_softmax(axis=-1), lambda a: np.log(np_softmax(a)), 1, 3),
  ("layernorm", [(8, 16)], lambda a: a.layernorm(axis=-1), np_layernorm, 1, 3),
  ("matmul", [(16, 32), (32, 8)], lambda a, b: a @ b, lambda a, b: a @ b, 1, 1),
  ("matmul_bias_relu", [(4, 32), (32, 16), (16,)], lambda a, w, b: (a @ w + b).relu(), lambda a, w, b: np.maximum(a @ w + b, 0), 1, 1),
  ("mlp", [(4, 32), (32, 64), (64,), (64, 10), (10,)], lambda x, w1, b1, w2, b2: (x @ w1 + b1).relu() @ w2 + b2,
   lambda x, w1, b1, w2, b2: np.maximum(x @ w1 + b1, 0) @ w2 + b2, 2, 2),
  ("conv2d", [(1, 3, 8, 8), (4, 3, 3, 3)], lambda x, w: conv2d(x, w, 1), lambda x, w: np_conv2d(x, w, 1), 1, 1),
  ("attention", [(1, 2, 8, 16)] * 3, lambda q, k, v: (q @ k.transpose(-2, -1) / 4).softmax(-1) @ v,
   lambda q, k, v: np_softmax(q @ k.swapaxes(-2, -1) / 4) @ v, 2, 4),
  # both outputs read a and b at the element they write: one kernel of two stores (pytc-merge-kernels)
  ("shared_subexpression", [(8, 8), (8, 8)], lambda a, b: ((c := (a * b).exp()) + 1, c * 2),
   lambda a, b: (np.exp(a * b) + 1, np.exp(a * b) * 2), 1, 2),
  ("mean_axis0", [(16, 8)], lambda a: a.mean(axis=0), lambda a: a.mean(0), 1, 1),
  ("reshape_sum", [(16,)], lambda a: a.reshape(4, 4).sum(axis=0), lambda a: a.reshape(4, 4).sum(0), 1, 1),
  ("max_plus_min", [(8, 8), (8, 8)], lambda a, b: a.max(axis=0) + b.min(axis=1), lambda a, b: a.max(0) + b.min(1), 1, 1),
  # the contiguous buffer is still written, by the kernel that multiplies its value at each element
  ("contiguous_then_mul", [(8, 8), (8, 8)], lambda a, b: (a + b).contiguous() * 2, lambda a, b: (a + b) * 2, 1, 2),
  ("gelu", [(64,)], lambda a: a.gelu(), lambda a: 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3))), 1, 1),
  ("sigmoid_of_chain", [(8, 8), (8, 8)], lambda a, b: (a * b + a * a * a).sigmoid() * b,
   lambda a, b: b / (1 + np.exp(-(a * b + a ** 3))), 1, 1),
  ("expand_mul", [(1, 8), (4, 8)], lambda a, b: a.expand(4, 8) * b, lambda a, b: np.broadcast_to(a, (4, 8)) * b, 1, 1),
]


@pytest.mark.parametrize("name, shapes, graph, reference, kernels, tinygrad_kernels", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_kernel_count_and_numerics(name, shapes, graph, reference, kernels, tinygrad_kernels):
  rng = np.random.default_rng(len(name))
  arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
  tensors = [Tensor(array) for array in arrays]
  outputs = graph(*tensors)
  outputs = outputs if isinstance(outputs, tuple) else (outputs,)
  GlobalCounters.reset()
  outputs[0].realize(*outputs[1:])
  assert GlobalCounters.kernel_count == kernels
  assert kernels <= tinygrad_kernels
  expected = reference(*arrays)
  for out, ref in zip(outputs, expected if isinstance(expected, tuple) else (expected,)):
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)


def test_schedule_lists_the_kernels_without_running_them():
  a = Tensor(np.ones((8, 16), np.float32))
  GlobalCounters.reset()
  launches = a.softmax().schedule()
  assert GlobalCounters.kernel_count == 0
  assert [launch.kernel[0] for launch in launches] == ["r"]  # max, sum and the output in one kernel per row
  assert all(role == "output" for role, _ in launches[-1].args[:1])


def test_schedule_is_reused_for_the_same_structure():
  x, w = Tensor(np.ones((4, 8), np.float32)), Tensor(np.ones((8, 2), np.float32))
  (x @ w).realize()
  cached = len(realize._schedules)
  y, v = Tensor(np.full((4, 8), 2, np.float32)), Tensor(np.full((8, 2), 3, np.float32))
  result = (y @ v).numpy()
  assert len(realize._schedules) == cached
  np.testing.assert_allclose(result, np.full((4, 2), 48, np.float32))


def test_structure_tells_shared_inputs_apart():
  x, y = Tensor(np.full((4,), 2, np.float32)), Tensor(np.full((4,), 5, np.float32))
  same, different = (x * x).numpy(), (x * y).numpy()
  np.testing.assert_array_equal(same, np.full((4,), 4, np.float32))
  np.testing.assert_array_equal(different, np.full((4,), 10, np.float32))
  assert (x * x).lazydata.structure != (x * y).lazydata.structure
  assert (x * y).lazydata.structure == (y * x).lazydata.structure


@pytest.mark.parametrize("count", [2, 5, 40])  # leaves found in place, and through the table of positions
def test_structure_tells_apart_which_leaf_a_binary_op_reads_again(count):
  xs = [Tensor(np.full((3,), i + 1, np.float32)) for i in range(count)]
  total = functools.reduce(lambda a, b: a * 2 + b, xs)
  again = [total * x for x in xs]
  assert len({t.lazydata.structure for t in again}) == count
  new = Tensor(np.full((3,), 7, np.float32))
  assert (total * new).lazydata.structure not in {t.lazydata.structure for t in again}
  expected = functools.reduce(lambda a, b: a * 2 + b, [np.float32(i + 1) for i in range(count)])
  for i, t in enumerate(again): np.testing.assert_allclose(t.numpy(), np.full((3,), expected * (i + 1), np.float32), rtol=1e-6)
  np.testing.assert_allclose((total * new).numpy(), np.full((3,), expected * 7, np.float32), rtol=1e-6)
  rebuilt = functools.reduce(lambda a, b: a * 2 + b, [Tensor(np.full((3,), -1, np.float32)) for _ in range(count)])
  assert (rebuilt * new).lazydata.structure == (total * new).lazydata.structure
  swapped = [x - total for x in xs]  # a buffer first, the graph second (an assign's sources)
  assert len({t.lazydata.structure for t in swapped} | {(new - total).lazydata.structure}) == count + 1
  assert (new - rebuilt).lazydata.structure == (new - total).lazydata.structure
  for i, t in enumerate(swapped): np.testing.assert_allclose(t.numpy(), np.full((3,), i + 1 - expected, np.float32), rtol=1e-6)


@pytest.mark.parametrize("columns, kernels", [(256, ["E_16_128", "r_16_256_128"]), (16, ["r_16_16_128"])])
def test_an_elementwise_matmul_operand_is_computed_once_per_element_when_the_columns_would_repeat_it(columns, kernels):
  rng = np.random.default_rng(columns)
  x, w = rng.standard_normal((16, 128)).astype(np.float32), rng.standard_normal((128, columns)).astype(np.float32)
  out = Tensor(x).exp() @ Tensor(w)
  assert [launch.kernel for launch in out.schedule()] == kernels
  np.testing.assert_allclose(out.numpy(), np.exp(x) @ w, rtol=1e-4, atol=1e-3)


TARGETS = {"avx2": dict(vector_lanes=8, vector_registers=16, tile_vectors=2), "avx512": dict(vector_lanes=16, vector_registers=32, tile_vectors=2),
           "intel avx512": dict(vector_lanes=16, vector_registers=32, tile_vectors=3)}


def target_named(name: str):
  """A GPU target by its chip, or this host's CPU target as one of TARGETS' machine kinds would be."""
  return replace(host_cpu(), **TARGETS[name]) if name in TARGETS else gpu_target(name)


@pytest.mark.parametrize("target, lanes, block_columns", [("avx2", 8, 16), ("avx512", 16, 32), ("intel avx512", 16, 48), ("gfx942", 16, 16),
                                                           ("sm_90", 16, 16), ("gfx1100", 16, 16)])
def test_the_schedule_stage_takes_its_options_from_the_target(target, lanes, block_columns):
  pipeline = scheduling(target_named(target)).pipeline
  assert f"pytc-split-reduce{{lanes={lanes}}}" in pipeline and f"pytc-fuse{{block_columns={block_columns}}}" in pipeline


@pytest.mark.parametrize("target, kernels", [("avx2", ["E_16_128", "r_16_64_128"]), ("avx512", ["r_16_64_128"]),
                                             ("intel avx512", ["r_16_64_128"]), ("gfx942", ["E_16_128", "r_16_64_128"])])
def test_fusion_weighs_a_recomputation_by_the_targets_register_block(target, kernels):
  """exp(x) @ w over 64 columns: recomputed once more per 16-column block (AVX2's register block, a GPU's tile), stored
  first; within one 32- or 48-column block, computed where it is read."""
  rng = np.random.default_rng(64)
  x, w = rng.standard_normal((16, 128)).astype(np.float32), rng.standard_normal((128, 64)).astype(np.float32)
  out = Tensor(x).exp() @ Tensor(w)
  assert [launch.kernel for launch in schedule([out.lazydata], stage=scheduling(target_named(target)))[0].launches] == kernels
  np.testing.assert_allclose(out.numpy(), np.exp(x) @ w, rtol=1e-4, atol=1e-3)


def test_a_graph_is_scheduled_once_per_schedule_stage(monkeypatch):
  monkeypatch.setattr(realize, "_schedules", LRUCache(8))
  out = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4)).sum(axis=1)
  wide, narrow = (scheduling(target_named(name)) for name in ("avx512", "avx2"))
  built = GlobalCounters.schedules_built
  first, again, other = (schedule([out.lazydata], stage=stage)[0] for stage in (wide, wide, narrow))
  assert first is again and other is not first and GlobalCounters.schedules_built - built == 2
  np.testing.assert_allclose(out.numpy(), np.arange(12).reshape(3, 4).sum(axis=1))


def test_gelu_between_projections_matches_numpy():
  rng = np.random.default_rng(1)
  x, w1, w2 = (rng.standard_normal(s).astype(np.float32) / 8 for s in [(16, 64), (64, 128), (128, 256)])
  out = ((Tensor(x) @ Tensor(w1)).gelu() @ Tensor(w2)).numpy()
  h = x @ w1
  gelu = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
  np.testing.assert_allclose(out, gelu @ w2, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n,k,m", [(1, 2, 1), (3, 5, 7), (16, 64, 8)])
def test_global_ops_and_mem_of_a_matmul(n, k, m):
  a, b = Tensor(np.ones((n, k), np.float32)).realize(), Tensor(np.ones((k, m), np.float32)).realize()
  GlobalCounters.reset()
  (a @ b).realize()
  assert GlobalCounters.global_ops == 2 * n * k * m  # a multiply and an add per point of (n, m, k)
  assert GlobalCounters.global_mem == 4 * (n * k + k * m + n * m)


def test_global_ops_count_loop_invariant_work_once_and_skip_index_arithmetic():
  x = Tensor(np.ones((6, 10), np.float32)).realize()
  GlobalCounters.reset()
  (x.exp().sum(axis=1) * 3 + x[:, ::2].max(axis=1)).realize()  # exp and sum per element, max per read, two ops per row
  assert GlobalCounters.global_ops == 6 * 10 * 2 + 6 * 5 + 6 * 2
  GlobalCounters.reset()
  Tensor.empty(0, 4).exp().realize()
  assert GlobalCounters.global_ops == 0


def test_global_counters_reset_and_unrealized_schedules_count_nothing():
  x = Tensor(np.ones((4, 4), np.float32)).realize()
  (x + 1).realize()
  assert GlobalCounters.global_ops > 0 and GlobalCounters.global_mem > 0
  GlobalCounters.reset()
  assert (GlobalCounters.kernel_count, GlobalCounters.global_ops, GlobalCounters.global_mem) == (0, 0, 0)
  (x * 2).schedule()
  assert (GlobalCounters.global_ops, GlobalCounters.global_mem) == (0, 0)
