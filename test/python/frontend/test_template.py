"""Graph templates replayed over new inputs make the same nodes as building them afresh: each node's structure number and
leaves, whether it was keyed (first replays) or taken from a plan (later replays over inputs of the same signature)."""
import numpy as np
import pytest

from pytc import Tensor
from pytc.graph import LazyOp, toposort
from pytc.nn.optim import lamb_update

rng = np.random.default_rng(4)


def data(*shape: int) -> Tensor: return Tensor(rng.standard_normal(shape).astype(np.float32))


def assert_keyed_alike(outputs: list[Tensor]) -> None:
  """Every node keyed again from its sources gets the structure number and leaves it has."""
  for node in toposort([t.lazydata for t in outputs]):
    if node.op == "buffer": continue
    fresh = LazyOp(node.op, node.dtype, node.shape, node.device, node.srcs, node.arg)
    assert fresh.structure == node.structure, node
    assert len(fresh.leaves) == len(node.leaves) and all(a is b for a, b in zip(fresh.leaves, node.leaves)), node


def lazy(*shape: int) -> Tensor: return data(*shape) * data(*shape) + data(*shape)  # several leaves


CASES = {
  "conv2d": lambda: [lazy(1, 3, 6, 6).conv2d(data(4, 3, 3, 3), data(4), padding=1)],
  "conv2d_weight_from_input": lambda: [(x := lazy(1, 2, 5, 5)).conv2d(x[:, :, :3, :3].reshape(1, 2, 3, 3).expand(2, 2, 3, 3))],
  "batchnorm_shared": lambda: [lazy(2, 3, 4, 4).batchnorm(w := data(3), w, (m := data(3)), m * 2)],
  "relu_of_a_buffer": lambda: [data(5, 7).relu()],
  "layernorm_softmax": lambda: [lazy(4, 8).layernorm().softmax()],
  "linear_cross_entropy": lambda: [lazy(6, 5).linear(data(5, 3), data(3)).sparse_categorical_crossentropy(Tensor([0, 2, 1, 1, 0, 2]))],
  "lamb_update": lambda: list(lamb_update(*(lazy(3, 4) for _ in range(4)), (t := data(1)), t, 0.01, 0.9, 0.99, 1e-8, 0.0, False)),
}


@pytest.mark.parametrize("name", CASES)
def test_replayed_templates_key_their_nodes_as_building_them_would(name):
  for _ in range(4):  # recorded, interpreted, keyed while a plan is made, then planned
    outputs = CASES[name]()
    assert_keyed_alike(outputs)


@pytest.mark.parametrize("with_bias", [False, True])
def test_replays_tell_inputs_sharing_leaves_from_inputs_that_do_not(with_bias):
  """The weight (one leaf, found by a scan) and the bias (eleven, found through a table) are among the activation's leaves
  or not, in every combination: the same shapes and structures, so only how the leaves lie tells the plans apart."""
  for weight_shared, bias_shared in ((0, 0), (1, 0), (0, 1), (1, 1)) * 3:  # recorded, interpreted, then planned
    parts = [data(4, 5) for _ in range(12)]
    x = sum(parts[1:], parts[0])
    weight = (parts[5] if weight_shared else data(4, 5)).T[:, :3]
    bias = sum(parts[2:], parts[0] if bias_shared else data(4, 5)).sum(0)[:3] if with_bias else None
    out = x.linear(weight, bias)
    assert_keyed_alike([out])
    np.testing.assert_allclose(out.numpy(), x.numpy() @ weight.numpy() + (bias.numpy() if with_bias else 0), rtol=1e-5, atol=1e-5)


def test_replayed_templates_compute_what_they_recorded():
  for _ in range(3):
    a, b = rng.standard_normal((2, 3, 5, 5)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    x = Tensor(a) * 2
    got = x.conv2d(Tensor(b), padding=1).relu().numpy()
    padded = np.pad(a * 2, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # (2, 3, 5, 5, 3, 3)
    np.testing.assert_allclose(got, np.maximum(np.einsum("ncyxij,ocij->noyx", windows, b), 0), rtol=1e-4, atol=1e-5)


def test_replayed_gradients_key_their_nodes_as_building_them_would():
  for _ in range(4):
    x, b = data(8, 5), Tensor(np.zeros(3, np.float32), requires_grad=True)
    w = Tensor(rng.standard_normal((5, 3)).astype(np.float32), requires_grad=True)
    loss = x.linear(w, b).relu().sum() * 0.5
    loss.backward()
    assert_keyed_alike([w.grad, b.grad])
    np.testing.assert_allclose(b.grad.numpy(), 0.5 * ((x.numpy() @ w.numpy()) > 0).sum(0), rtol=1e-6)


def test_a_template_over_inputs_of_other_structures_keys_its_nodes_afresh():
  makers = [lambda: data(4, 6), lambda: data(4, 6).exp(), lambda: lazy(4, 6), lambda: (x := data(4, 6)) * x]
  seen = set()
  for _ in range(3):
    for make in makers:  # one signature (shape, dtype, device), inputs of four structures
      out = make().softmax()
      assert_keyed_alike([out])
      seen.add(out.lazydata.structure)
  assert len(seen) == len(makers)


def test_a_reshape_of_a_reshape_is_one_node():
  a = rng.standard_normal((3, 4)).astype(np.float32)
  x = Tensor(a) * 2
  y = x.reshape(2, 6).reshape(4, 3)
  assert y.lazydata.op == "reshape" and y.lazydata.srcs[0] is x.lazydata
  assert x.reshape(12).reshape(3, 4).lazydata is x.lazydata
  np.testing.assert_array_equal(y.numpy(), (a * 2).reshape(4, 3))
  w = Tensor(a, requires_grad=True)
  (w.reshape(12).reshape(6, 2) * Tensor(np.arange(12, dtype=np.float32).reshape(6, 2))).sum().backward()
  np.testing.assert_array_equal(w.grad.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4))


@pytest.mark.parametrize("shape", [(1, 4), (2, 4), (3, 5), (4, 4), (1, 1)])
def test_a_replay_over_an_input_that_is_a_reshape_reads_that_input(shape):
  """x.reshape(...) of an input x that is itself a reshape reads x's source; a recording that kept the reshape of that source
  rebuilt, over the next inputs, the first call's input (A @ (A @ G) was computed as (AG)(AG)^T @ AG)."""
  g = rng.standard_normal(shape).astype(np.float32)
  a = g @ g.T
  t = Tensor(g)
  gram = t @ t.T
  np.testing.assert_allclose((gram @ (gram @ t)).numpy(), a @ (a @ g), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose((gram @ ((gram @ t) * 2)).numpy(), a @ (a @ g * 2), rtol=1e-5, atol=1e-5)
  for steps in range(4):
    expected = g / (np.sqrt((g * g).sum()) + 1e-7)
    if shape[0] > shape[1]: expected = expected.T
    for _ in range(steps):
      square = expected @ expected.T
      expected = 3.4445 * expected - 4.775 * square @ expected + 2.0315 * square @ square @ expected
    np.testing.assert_allclose(Tensor(g).newton_schulz(steps, (3.4445, -4.775, 2.0315)).numpy(),
                               expected.T if shape[0] > shape[1] else expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.int8])
@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 0), (1, 1), (5,)])
def test_replayed_relu_over_edge_shapes_and_values(dtype, shape):
  special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, np.finfo(dtype).max, -np.finfo(dtype).tiny], dtype) \
    if np.issubdtype(dtype, np.floating) else np.array([0, 1, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype)
  for round_ in range(3):  # recorded, keyed with a plan made, planned
    a = np.resize(np.roll(special, round_), shape).astype(dtype) if np.prod(shape) else np.zeros(shape, dtype)
    got = Tensor(a).relu()
    assert_keyed_alike([got])
    want = np.where((a < 0) | (a == 0), np.zeros((), dtype), a)
    np.testing.assert_array_equal(got.numpy(), want)
    if np.issubdtype(dtype, np.floating): assert not np.signbit(got.numpy()[a == 0]).any()


def test_gradient_replays_from_several_threads_at_once():
  import threading
  errors = []
  def work(seed: int) -> None:
    try:
      local = np.random.default_rng(seed)
      for _ in range(5):
        a, b = local.standard_normal((4, 3)).astype(np.float32), local.standard_normal((3, 2)).astype(np.float32)
        x, w = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
        (x.linear(w).relu() * 2).sum().backward()
        mask = (a @ b > 0).astype(np.float32) * 2
        np.testing.assert_allclose(w.grad.numpy(), a.T @ mask, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), mask @ b.T, rtol=1e-5, atol=1e-6)
    except Exception as error:  # noqa: BLE001  (reported on the main thread)
      errors.append(error)
  threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
  for t in threads: t.start()
  for t in threads: t.join()
  assert not errors, errors[0]


def test_replays_share_their_constant_nodes_and_compute_apart():
  """A step reading no buffer (a constant, a view of one) is made once, by the first replay with a plan, and shared by
  the later ones (nodes never change); graphs sharing it, realized together or apart, each compute their own result."""
  labels = np.array([1, 0, 2, 2], np.int32)
  xs = [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(4)]
  losses = [Tensor(x).sparse_categorical_crossentropy(Tensor(labels)) for x in xs]  # record, key, plan, share
  constants = [{id(n) for n in toposort([loss.lazydata]) if n._leaves == ()} for loss in losses]
  assert constants[2] and constants[2] == constants[3]
  assert_keyed_alike(losses)
  def reference(x: np.ndarray) -> float:
    shifted = x - x.max(1, keepdims=True)
    return float(-(shifted - np.log(np.exp(shifted).sum(1, keepdims=True)))[np.arange(4), labels].mean())
  Tensor.realize(losses[2], losses[3])
  for x, loss in zip(xs, losses): np.testing.assert_allclose(loss.item(), reference(x), rtol=1e-5)
