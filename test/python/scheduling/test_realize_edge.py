"""Edge cases of the realize path, each against NumPy: several outputs realized together, realizes from several
threads, constants the schedule cache must tell apart, invalid graphs, bool and uint8 buffers, impossible sizes,
long lazy chains and empty tensors; kernels thousands of ops deep, integer indexing and gather in every dtype, graph
template signatures, TinyJit captures and device opening on several threads, failed allocations, long chains of
alternating reshapes, and random draws from several threads."""
import threading

import numpy as np
import pytest

from pytc import Device, GlobalCounters, Tensor, dtypes
from pytc.graph import LazyOp, SizeOverflowError
from pytc.pipelines import InvalidGraphError
from pytc.realize import realize

rng = np.random.default_rng(0)


def rand(*shape: int) -> np.ndarray: return rng.standard_normal(shape).astype(np.float32)


# (name, input shapes, outputs from the input tensors, the same from NumPy arrays)
MULTI_OUTPUT = [
  ("const_slices", [], lambda: [(s := Tensor.ones(6, 4))[0:2] + 0, s[2:4] + 0, s[4:6] + 0], lambda: [np.ones((2, 4))] * 3),
  ("input_slices", [(6, 4)], lambda a: [a[0:2] + 0, a[2:4] + 0, a[4:6] + 0], lambda a: [a[0:2], a[2:4], a[4:6]]),
  ("equal_values", [(3, 5)], lambda a: [a * 2, a * 2, a + a], lambda a: [a * 2, a * 2, a + a]),
  ("shared_input", [(4, 8), (4, 8)], lambda a, b: [a + b, a * b, (a - b).exp2()], lambda a, b: [a + b, a * b, np.exp2(a - b)]),
  ("reductions", [(5, 7)], lambda a: [a.sum(0), a.max(1), a.sum(), a.mean(1, keepdim=True)],
   lambda a: [a.sum(0), a.max(1), a.sum(), a.mean(1, keepdims=True)]),
  ("views_of_each_other", [(4, 6)], lambda a: [b := a + 1, b.reshape(6, 4) * 1, b.permute(1, 0) + 0, b[1:3] * 1],
   lambda a: [a + 1, (a + 1).reshape(6, 4), (a + 1).T, (a + 1)[1:3]]),
  ("chained", [(8,)], lambda a: [b := a * 3, c := b + 1, c * b], lambda a: [a * 3, a * 3 + 1, (a * 3 + 1) * (a * 3)]),
  ("softmax_parts", [(3, 9)], lambda a: [m := a.max(1, keepdim=True), e := (a - m).exp(), e / e.sum(1, keepdim=True)],
   lambda a: [m := a.max(1, keepdims=True), e := np.exp(a - m), e / e.sum(1, keepdims=True)]),
  ("mixed_dtypes", [(4, 4)], lambda a: [a > 0, (a * 10).cast(dtypes.int32), a.cast(dtypes.float16) + 1],
   lambda a: [a > 0, (a * 10).astype(np.int32), a.astype(np.float16) + 1]),
]


@pytest.mark.parametrize("name, shapes, build, reference", MULTI_OUTPUT, ids=[case[0] for case in MULTI_OUTPUT])
def test_several_outputs_realized_together(name, shapes, build, reference):
  arrays = [rand(*s) for s in shapes]
  outputs = build(*[Tensor(a) for a in arrays])
  Tensor.realize(*outputs)
  for got, want in zip(outputs, reference(*arrays)): np.testing.assert_allclose(got.numpy(), want, rtol=1e-3, atol=1e-5)


def test_duplicate_outputs():
  a = Tensor(x := rand(3, 4))
  b = a + 1
  Tensor.realize(b, b, a * 2, b)
  np.testing.assert_allclose(b.numpy(), x + 1)
  c, d = a + 1, a + 1  # equal values: computed once, but each its own buffer
  Tensor.realize(c, d)
  assert c.lazydata.arg is not d.lazydata.arg
  c[0] = 7.0
  np.testing.assert_allclose(d.numpy(), x + 1)
  np.testing.assert_allclose(c.numpy()[0], 7.0)


def test_cat_and_stack_gradients():
  xs = [rand(2, 3), rand(4, 3), rand(1, 3)]
  ts = [Tensor(x, requires_grad=True) for x in xs]
  weights = rand(7, 3)
  (ts[0].cat(ts[1], ts[2], dim=0) * Tensor(weights)).sum().backward()
  for t, w in zip(ts, np.split(weights, [2, 6])): np.testing.assert_allclose(t.grad.numpy(), w)
  ts = [Tensor(rand(2, 3), requires_grad=True) for _ in range(3)]
  weights = rand(2, 3, 3)
  (Tensor.stack(*ts, dim=2) * Tensor(weights)).sum().backward()
  for i, t in enumerate(ts): np.testing.assert_allclose(t.grad.numpy(), weights[:, :, i])


def run_threads(work, count: int = 4) -> list:
  results, errors, start = [None] * count, [], threading.Barrier(count)
  def run(i: int) -> None:
    try:
      start.wait()
      results[i] = work(i)
    except Exception as error: errors.append(error)
  threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
  for t in threads: t.start()
  for t in threads: t.join()
  assert not errors, errors
  return results


def test_threads_realize_one_new_graph():
  x, offset = rand(37, 19), float(rng.random())  # a constant no earlier graph has: the graph is new
  built = GlobalCounters.schedules_built
  results = run_threads(lambda i: ((Tensor(x) * 2 + offset).exp2().sum(1) - offset).numpy())
  for got in results: np.testing.assert_allclose(got, np.exp2(x * 2 + offset).sum(1) - offset, rtol=1e-4)
  assert GlobalCounters.schedules_built == built + 1


def test_threads_realize_different_graphs():
  xs = [rand(5 + i, 3 * i + 2) for i in range(4)]
  graphs = [lambda t: (t + 1).max(0), lambda t: t.T @ t, lambda t: (t * t).sum(), lambda t: t.softmax(1)]
  references = [lambda x: (x + 1).max(0), lambda x: x.T @ x, lambda x: (x * x).sum(), lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)]
  for _ in range(3):
    results = run_threads(lambda i: [graphs[i](Tensor(xs[i])).numpy() for _ in range(5)])
    for i, got in enumerate(results):
      for g in got: np.testing.assert_allclose(g, references[i](xs[i]), rtol=1e-4, atol=1e-5)


def test_signed_zero_constants_are_different_graphs():
  a = Tensor([1.0, -2.0])
  np.testing.assert_equal((1 / (a * -0.0)).numpy(), [-np.inf, np.inf])
  np.testing.assert_equal((1 / (a * 0.0)).numpy(), [np.inf, -np.inf])


def test_constant_keys():
  def structure(value, dtype=None) -> int: return (Tensor([1.0, 2.0]) + Tensor.full((2,), value, dtype=dtype or dtypes.float32)).lazydata.structure
  assert structure(0.0) != structure(-0.0)
  assert structure(float("nan")) == structure(float("nan"))  # one schedule for every NaN, though nan != nan
  assert len({structure(1), structure(1.0), structure(True)}) == 3
  x = np.array([1.5, -2.5], np.float32)
  np.testing.assert_equal((Tensor(x) + float("nan")).numpy(), [np.nan, np.nan])
  np.testing.assert_equal((Tensor(x) * float("nan")).numpy(), [np.nan, np.nan])
  np.testing.assert_equal((Tensor([1, 2]) + True).numpy(), [2, 3])
  np.testing.assert_equal((Tensor([1, 2]) + 1.5).numpy(), [2.5, 3.5])


def test_invalid_graph_is_a_typed_error():
  scalar = Tensor(3.0).lazydata
  flipped = LazyOp("flip", scalar.dtype, (), scalar.device, (scalar,), (0,))
  with pytest.raises(InvalidGraphError, match="flip"): realize([LazyOp("contiguous", scalar.dtype, (), scalar.device, (flipped,))])
  with pytest.raises((ValueError, IndexError)): Tensor(3.0).flip(0).numpy()


def test_bool_and_uint8_buffers():
  b, u = rng.random((5, 7)) > 0.5, rng.integers(0, 256, (5, 7)).astype(np.uint8)
  tb, tu = Tensor(b), Tensor(u)
  for axis in (0, 1):
    np.testing.assert_equal(tb.any(axis).numpy(), b.any(axis))
    np.testing.assert_equal(tb.all(axis).numpy(), b.all(axis))
    np.testing.assert_equal(tb.max(axis).numpy(), b.max(axis))
    np.testing.assert_equal(tu.max(axis=axis).numpy(), u.max(axis))
    np.testing.assert_equal(tu.min(axis=axis).numpy(), u.min(axis))
  np.testing.assert_equal(Tensor(np.ones((2, 5, 4), bool)).cumsum(1).numpy(), np.ones((2, 5, 4), bool).cumsum(1))
  np.testing.assert_equal(tu.cumsum(1).numpy(), u.astype(np.uint32).cumsum(1))
  kept = (tb.T.contiguous() & True).T  # a bool temporary between kernels
  both = [kept.where(tu, 0), (tb != kept).any(), tb.flip(0).contiguous()]
  Tensor.realize(*both)
  np.testing.assert_equal(both[0].numpy(), np.where(b, u, 0))
  assert not both[1].numpy()
  np.testing.assert_equal(both[2].numpy(), b[::-1])


def test_impossible_sizes_are_a_typed_error():
  with pytest.raises(SizeOverflowError, match="shape"): (Tensor.ones(2 ** 62, 4) + 1).numpy()
  with pytest.raises(RuntimeError): Tensor.ones(2 ** 31, 2 ** 31, 4)[0, 0].numpy()


@pytest.mark.parametrize("step", ["add", "average", "reduce"])
def test_long_lazy_chains(step):
  def chain(x: Tensor, n: int) -> Tensor:
    for _ in range(n): x = x + 1 if step == "add" else (x + x) * 0.5 if step == "average" else x + x.sum() * 0.001
    return x
  x0 = rand(16)
  assert len(chain(Tensor(x0), 500 if step == "reduce" else 2000).schedule()) >= 1  # no pass recursed over the steps
  want = x0.astype(np.float64)
  for _ in range(150): want = want + 1 if step == "add" else want if step == "average" else want + want.sum() * 0.001
  np.testing.assert_allclose(chain(Tensor(x0), 150).numpy(), want, rtol=1e-4)


EMPTY = [
  ("sum", lambda a: a.sum(0), lambda a: a.sum(0)), ("sum_rows", lambda a: a.sum(1), lambda a: a.sum(1)),
  ("prod", lambda a: a.prod(0), lambda a: a.prod(0)), ("max", lambda a: a.max(0), lambda a: np.full(4, -np.inf, np.float32)),
  ("matmul", lambda a: a @ Tensor(np.ones((4, 5), np.float32)), lambda a: a @ np.ones((4, 5), np.float32)),
  ("inner_matmul", lambda a: a.T @ a, lambda a: a.T @ a), ("pad", lambda a: a.pad(((1, 1), (0, 0))) + 1, lambda a: np.pad(a, ((1, 1), (0, 0))) + 1),
  ("reshape", lambda a: a.reshape(4, 0, 3) * 2, lambda a: a.reshape(4, 0, 3)), ("permute", lambda a: a.permute(1, 0).exp2(), lambda a: a.T),
  ("expand", lambda a: a.reshape(1, 0, 4).expand(3, 0, 4) + 1, lambda a: np.ones((3, 0, 4))), ("flip", lambda a: a.flip(0) + 1, lambda a: a),
  ("cumsum", lambda a: a.cumsum(0), lambda a: a), ("mean", lambda a: a.mean(0), lambda a: np.full(4, np.nan, np.float32)),
  ("cat", lambda a: a.cat(Tensor(np.ones((2, 4), np.float32))) + 0, lambda a: np.ones((2, 4))),
  ("softmax", lambda a: a.T.softmax(1), lambda a: a.T),
  ("several", lambda a: [(b := a.exp2()) + 1, b * 2, b.sum(0), b.sum(1)], lambda a: [a, a, np.zeros(4), np.zeros(0)]),
]


@pytest.mark.parametrize("name, build, reference", EMPTY, ids=[case[0] for case in EMPTY])
def test_empty_tensors(name, build, reference):
  a = np.ones((0, 4), np.float32)
  got, want = build(Tensor(a)), reference(a)
  got, want = (got, want) if isinstance(got, list) else ([got], [want])
  Tensor.realize(*got)
  for g, w in zip(got, want):
    assert g.shape == np.shape(w)
    np.testing.assert_allclose(g.numpy(), w, equal_nan=True)


def test_large_sums_are_accurate():
  assert Tensor.ones(2 ** 14, 2 ** 14).sum().item() == 2 ** 28
  x = (rng.random(1 << 22) + 64).astype(np.float32)  # one accumulator would lose most of each addend's low bits
  np.testing.assert_allclose(Tensor(x).sum().item(), x.astype(np.float64).sum(), rtol=1e-6)
  columns = x.reshape(-1, 8)
  np.testing.assert_allclose(Tensor(columns).sum(0).numpy(), columns.astype(np.float64).sum(0), rtol=1e-6)
  rows = x.reshape(4, -1)
  np.testing.assert_allclose(Tensor(rows).mean(1).numpy(), rows.astype(np.float64).mean(1), rtol=1e-6)


@pytest.mark.parametrize("steps, shape", [(500, (5,)), (500, (1024,)), (3000, (1,)), (3000, (16,))], ids=["500_scalar", "500_vector",
                                                                                                     "3000_scalar", "3000_vector"])
def test_deep_elementwise_chains_realize(steps, shape):
  x0 = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 7
  x = Tensor(x0)
  for _ in range(steps): x = x + 1
  np.testing.assert_equal(x.numpy(), x0 + steps)  # scalar loops under the lanes, vector code from there: both lowered without recursion


def test_deep_chain_into_a_reduction():
  x0 = rand(4, 64)
  x, want = Tensor(x0), x0.astype(np.float64)
  for i in range(500): x, want = (x * 0.999, want * 0.999) if i % 2 else (x + 0.001, want + 0.001)
  np.testing.assert_allclose(x.sum(1).numpy(), want.sum(1), rtol=1e-4)


def test_same_under_compares_deep_computations():
  from mlir import ir

  from pytc.compiler import context
  from pytc.passes.cpu.lower_vector import same_under
  def chain(arg: str, prefix: str, constant: str) -> str:
    return "\n".join(f"%{prefix}{i + 1} = arith.addf %{prefix}{i}, %{constant} : f32" for i in range(3000)).replace(f"%{prefix}0,", f"%{arg},")
  text = (f"func.func @f(%a: f32, %b: f32) {{\n%one = arith.constant 1.0 : f32\n%two = arith.constant 2.0 : f32\n{chain('a', 'x', 'one')}\n"
          f"{chain('b', 'y', 'one')}\n{chain('b', 'z', 'two')}\nreturn\n}}")
  with context(), ir.Location.unknown():
    module = ir.Module.parse(text)
    block = module.body.operations[0].regions[0].blocks[0]
    a, b = block.arguments
    ops = list(block.operations)
    x, y, z = (ops[1 + 3000 * n].results[0] for n in (1, 2, 3))  # the last op of each chain
    assert same_under(x, y, {a: b})
    assert not same_under(x, z, {a: b})
    assert not same_under(x, y, {})


INDEX_DTYPES = {dtypes.bool: np.bool_, dtypes.int8: np.int8, dtypes.int16: np.int16, dtypes.int32: np.int32, dtypes.int64: np.int64,
                dtypes.uint8: np.uint8, dtypes.uint16: np.uint16, dtypes.uint32: np.uint32, dtypes.uint64: np.uint64,
                dtypes.float16: np.float16, dtypes.bfloat16: np.float32, dtypes.float32: np.float32, dtypes.float64: np.float64}


def extreme_values(dtype, shape: tuple[int, ...]) -> np.ndarray:
  """Random values of `dtype` with its extremes first (bfloat16 ones as float32 with the low 16 bits clear)."""
  kind, count = INDEX_DTYPES[dtype], int(np.prod(shape))
  if dtype is dtypes.bool: return (rng.random(count) > 0.5).reshape(shape)
  if np.issubdtype(kind, np.integer):
    limits = np.iinfo(kind)
    values = rng.integers(limits.min, limits.max, count, dtype=kind, endpoint=True)
    values[:2] = limits.min, limits.max
    return values.reshape(shape)
  values = (rng.standard_normal(count) * 100).astype(kind)
  values[:4] = -0.0, np.inf, -np.inf, np.nan
  if dtype is dtypes.bfloat16: values = (values.view(np.uint32) & 0xFFFF0000).view(np.float32)
  return values.reshape(shape)


@pytest.mark.parametrize("dtype", list(INDEX_DTYPES), ids=lambda d: d.name)
def test_integer_indexing_and_gather_every_dtype(dtype):
  cases = []  # (result, expected): narrow rows lower to scalar loops (a gather's columns accumulate side by side), wide ones to vectors
  for shape, index_dtypes in [((3, 2), (dtypes.int32, dtypes.uint8)), ((5, 40), (dtypes.int64,))]:
    a = extreme_values(dtype, shape)
    t = Tensor(a, dtype=dtype)
    for index_dtype in index_dtypes:
      rows = rng.integers(0, shape[0], 7).astype(INDEX_DTYPES[index_dtype])
      columns = rng.integers(0, shape[1], 5)
      down, across = rng.integers(0, shape[0], (4, shape[1])), rng.integers(0, shape[1], (shape[0], 3))
      cases += [(t[Tensor(rows, dtype=index_dtype)], a[rows]), (t[Tensor(rows.reshape(7, 1), dtype=index_dtype)], a[rows.reshape(7, 1)]),
                (t[:, Tensor(columns)], a[:, columns]), (t[Tensor(rows[:5]), Tensor(columns)], a[rows[:5], columns]),
                (t.gather(0, Tensor(down.astype(INDEX_DTYPES[index_dtype]), dtype=index_dtype)), np.take_along_axis(a, down, 0)),
                (t.gather(1, Tensor(across.astype(INDEX_DTYPES[index_dtype]), dtype=index_dtype)), np.take_along_axis(a, across, 1))]
    cases.append((t[Tensor([1, 0, -1])], a[[1, 0, -1]]))
  Tensor.realize(*(got for got, _ in cases))
  for got, want in cases:
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.numpy(), want)


def test_template_signatures_tell_constants_apart():
  from pytc.template import _TEMPLATES, templated

  @templated
  def plus(x: Tensor, c) -> Tensor: return x + c

  @templated
  def weighted(x: Tensor, a: Tensor | None = None, b: Tensor | None = None) -> Tensor:
    return x + (0 if a is None else a * 2) + (0 if b is None else b * 3)
  ints = Tensor([1, 2])
  for c, want in [(1, np.array([2, 3], np.int32)), (1.0, np.array([2.0, 3.0], np.float32)), (True, np.array([2, 3], np.int32))] * 2:
    got = plus(ints, c).numpy()
    assert got.dtype == want.dtype, (c, got.dtype)
    np.testing.assert_equal(got, want)
  np.testing.assert_equal((1 / plus(Tensor([-0.0]), -0.0)).numpy(), [-np.inf])
  np.testing.assert_equal((1 / plus(Tensor([-0.0]), 0.0)).numpy(), [np.inf])
  before = len(_TEMPLATES)
  for _ in range(3): np.testing.assert_equal(plus(Tensor([1.0]), float("nan")).numpy(), [np.nan])  # equal bits: one signature
  assert len(_TEMPLATES) == before + 1
  x, t = Tensor([1.0, 2.0]), Tensor([10.0, 20.0])
  np.testing.assert_equal(weighted(x, t).numpy(), [21.0, 42.0])
  np.testing.assert_equal(weighted(x, None, t).numpy(), [31.0, 62.0])


def test_threads_each_capture_and_replay_their_own_tinyjit():
  from pytc import TinyJit
  weights, capturing = [rand(24, 8 + i) for i in range(4)], threading.Barrier(4, timeout=60)
  def make(i: int) -> TinyJit:
    w, runs = Tensor(weights[i]), []
    def step(x: Tensor) -> Tensor:
      hidden = ((x @ w).relu() + i).realize()
      runs.append(x)
      if len(runs) == 2: capturing.wait()  # every thread is inside its capture, between its two realizes
      return (hidden * hidden).sum(1) - hidden.max(1)
    return TinyJit(step)
  jits = [make(i) for i in range(4)]
  def work(i: int) -> list[tuple[np.ndarray, np.ndarray]]:
    runs = []
    for call in range(20):
      x = rand(5, 24) + call
      runs.append((x, jits[i](Tensor(x)).numpy()))
    return runs
  for i, runs in enumerate(run_threads(work)):
    for x, got in runs:
      hidden = np.maximum(x @ weights[i], 0) + i
      np.testing.assert_allclose(got, (hidden * hidden).sum(1) - hidden.max(1), rtol=1e-4, atol=1e-3)
  assert all(len(jit.steps) == 2 for jit in jits)  # each capture holds its own two kernels, none of another thread's


def test_threads_opening_a_device_get_one(monkeypatch):
  import time

  import pytc.device
  opened = []
  def slow_open(name: str) -> object:  # a slow start widens the window in which a second thread could open it again
    time.sleep(0.05)
    opened.append(device := object())
    return device
  monkeypatch.setattr(pytc.device, "open_device", slow_open)
  devices = pytc.device._Device()
  found = run_threads(lambda i: devices["CPU"])
  assert len(opened) == 1 and all(device is opened[0] for device in found)


def test_failed_allocation_is_a_typed_error_and_prints_nothing(tmp_path):
  import subprocess
  import sys
  code = ("import gc\nfrom pytc import Tensor\ntry: Tensor.empty(2 ** 40).realize()\nexcept MemoryError as error: print(error)\n"
          "gc.collect()\nprint((Tensor([1.0, 2.0]) + 1).numpy())\n")
  done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
  assert done.returncode == 0 and done.stderr == "", done.stderr
  assert "4398046511104 bytes" in done.stdout and "(1099511627776,)" in done.stdout and "[2. 3.]" in done.stdout, done.stdout


@pytest.mark.parametrize("steps", [40, 200])
def test_alternating_reshapes_keep_the_index_small(steps):
  x, expected = Tensor(np.arange(24, dtype=np.float32).reshape(4, 6)), np.arange(24, dtype=np.float32).reshape(4, 6)
  for step in range(steps):  # each reshape splits the index by div/mod: unless the pair merges back, the index doubles
    shape = (6, 4) if step % 2 == 0 else (4, 6)
    x, expected = x.reshape(*shape) + 1, expected.reshape(shape) + 1
  np.testing.assert_array_equal(x.numpy(), expected)


def test_random_draws_from_threads_never_share_words():
  Tensor.manual_seed(4)
  drawn = run_threads(lambda i: [Tensor.rand(8) for _ in range(50)])
  tensors = [t for each in drawn for t in each]
  Tensor.realize(*tensors)
  assert len({t.numpy().tobytes() for t in tensors}) == 200 and Tensor._rng_counters[Device.canonicalize(None)] == 200 * 8


@pytest.mark.parametrize("same_first", [True, False])
def test_template_signatures_tell_one_tensor_twice_from_two(same_first):
  from pytc.template import templated

  @templated
  def mix(x: Tensor, y: Tensor, z: Tensor) -> Tensor: return x * 100 + y * 10 + z
  rng = np.random.default_rng(3)
  x, a, b = (rng.standard_normal((3, 3)).astype(np.float32) for _ in range(3))
  calls = [(x, x), (a, b)] if same_first else [(a, b), (x, x)]
  for left, right in calls * 2:
    lt = Tensor(left)
    rt = lt if right is left else Tensor(right)
    np.testing.assert_allclose(lt.dot(rt).numpy(), left @ right, rtol=1e-5, atol=1e-5)
  p, q = Tensor([1.0]), Tensor([2.0])
  for args, want in [((p, p, q), 112.0), ((p, q, p), 121.0), ((q, p, p), 211.0), ((p, q, q), 122.0), ((p, p, p), 111.0)] * 2:
    np.testing.assert_equal(mix(*args).numpy(), [want])


def _through_temporaries(x: Tensor) -> Tensor:
  """Three kernels through two temporaries: x @ x.T, its largest element, each element against that."""
  y = x @ x.T
  return (y - y.max()).exp() * 2


def _through_temporaries_np(a: np.ndarray) -> np.ndarray:
  y = a @ a.T
  return np.exp(y - y.max()) * 2


def test_small_temporaries_are_reused_across_runs_threads_and_captures():
  """A schedule keeps its last run's small temporaries for the next: runs after each other, eight threads running it at
  once, and a TinyJit capturing it (whose replays write its own) all compute from their own inputs."""
  from pytc import TinyJit
  rng = np.random.default_rng(5)
  arrays = [rng.standard_normal((192, 8)).astype(np.float32) for _ in range(48)]  # y: 144 KB
  for a in arrays[:4]: np.testing.assert_allclose(_through_temporaries(Tensor(a)).numpy(), _through_temporaries_np(a), rtol=1e-5)
  results: dict[int, np.ndarray] = {}
  def work(i: int) -> None:
    for k in range(i, len(arrays), 8): results[k] = _through_temporaries(Tensor(arrays[k])).numpy()
  threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
  for t in threads: t.start()
  for t in threads: t.join()
  for k, a in enumerate(arrays): np.testing.assert_allclose(results[k], _through_temporaries_np(a), rtol=1e-5)
  jitted = TinyJit(lambda x: _through_temporaries(x).realize())
  for k, a in enumerate(arrays[:8]):
    np.testing.assert_allclose(jitted(Tensor(a)).numpy(), _through_temporaries_np(a), rtol=1e-5)
    np.testing.assert_allclose(_through_temporaries(Tensor(arrays[-1 - k])).numpy(), _through_temporaries_np(arrays[-1 - k]), rtol=1e-5)


@pytest.mark.parametrize("shape, transposed", [((96, 64), False), ((64, 96), True), ((200, 4), False), ((8, 12), False)])
def test_cumsum_along_a_long_first_axis(shape, transposed):
  """The padded window sum behind cumsum clamps its row index with an unsigned saturating subtract on AMD GPUs."""
  x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
  t = Tensor(x).T if transposed else Tensor(x)
  np.testing.assert_allclose(t.cumsum(0).numpy(), (x.T if transposed else x).cumsum(0), rtol=1e-4, atol=1e-4)
