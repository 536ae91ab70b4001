"""Layers, optimizers, model state and the training example."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from pytc import GlobalCounters, Tensor, dtypes, nn
from pytc.helpers import Context
from pytc.nn.optim import LAMB, SGD, Adam, AdamW
from pytc.nn.state import get_parameters, get_state_dict, load_state_dict, safe_load, safe_save

pytestmark = pytest.mark.usefixtures("training")


class Tiny:
  def __init__(self):
    self.layers = [nn.Linear(3, 4), nn.Linear(4, 2, bias=False)]
    self.norm = nn.LayerNorm(2)

  def __call__(self, x: Tensor) -> Tensor: return self.norm(self.layers[1](self.layers[0](x).relu()))


def test_linear_matches_numpy():
  layer = nn.Linear(3, 2)
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  expected = x @ layer.weight.numpy().T + layer.bias.numpy()
  np.testing.assert_allclose(layer(Tensor(x)).numpy(), expected, rtol=1e-5)
  assert layer.weight.shape == (2, 3) and np.abs(layer.weight.numpy()).max() <= 1 / np.sqrt(3)


def test_state_dict_names_and_safetensors_round_trip(tmp_path):
  model = Tiny()
  names = sorted(get_state_dict(model))
  assert names == ["layers.0.bias", "layers.0.weight", "layers.1.weight", "norm.bias", "norm.weight"]
  assert len(get_parameters(model)) == 5
  safe_save(get_state_dict(model), tmp_path / "model.safetensors")
  loaded = safe_load(tmp_path / "model.safetensors")
  other = Tiny()
  load_state_dict(other, loaded)
  x = Tensor(np.ones((2, 3), np.float32))
  np.testing.assert_array_equal(other(x).numpy(), model(x).numpy())
  with pytest.raises(KeyError, match="norm.bias"): load_state_dict(Tiny(), {k: v for k, v in loaded.items() if k != "norm.bias"})


def test_safetensors_dtypes_and_bad_files(tmp_path):
  tensors = {"i": Tensor(np.array([1, -2], np.int16)), "b": Tensor([True, False]), "h": Tensor(np.array([1.5], np.float16)),
             "bf": Tensor([2.5], dtype=dtypes.bfloat16)}
  safe_save(tensors, tmp_path / "t.safetensors")
  loaded = safe_load(tmp_path / "t.safetensors")
  for name, tensor in tensors.items():
    assert loaded[name].dtype == tensor.dtype
    np.testing.assert_array_equal(loaded[name].numpy(), tensor.numpy())
  (tmp_path / "bad.safetensors").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00nope!")
  with pytest.raises(ValueError, match="not a safetensors file"): safe_load(tmp_path / "bad.safetensors")


def quadratic_descent(optimizer_factory, steps: int) -> float:
  x = Tensor(np.array([3.0, -2.0], np.float32), requires_grad=True)
  optimizer = optimizer_factory([x])
  for _ in range(steps):
    optimizer.zero_grad()
    ((x - 1.0) * (x - 1.0)).sum().backward()
    optimizer.step()
  return float(np.abs(x.numpy() - 1.0).max())


@pytest.mark.parametrize("factory", [lambda p: SGD(p, lr=0.1), lambda p: SGD(p, lr=0.05, momentum=0.9, nesterov=True),
                                     lambda p: Adam(p, lr=0.1), lambda p: AdamW(p, lr=0.1, weight_decay=0.0)],
                         ids=["sgd", "sgd_nesterov", "adam", "adamw"])
def test_optimizers_minimize_a_quadratic(factory):
  assert quadratic_descent(factory, 150) < 1e-2


def test_adam_matches_the_reference_update():
  w0, g = np.array([0.5, -1.0], np.float32), np.array([0.2, -0.4], np.float32)
  w = Tensor(w0.copy(), requires_grad=True)
  optimizer = Adam([w], lr=0.01)
  m = v = np.zeros(2)
  expected = w0.astype(np.float64)
  for t in range(1, 4):
    optimizer.zero_grad()
    (w * Tensor(g)).sum().backward()
    optimizer.step()
    m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
    expected = expected - 0.01 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
  np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5)


def lamb_reference(w: np.ndarray, g: np.ndarray, steps: int, lr: float, b1: float, b2: float, eps: float, wd: float, adam: bool) -> np.ndarray:
  m = v = np.zeros_like(w, np.float64)
  w = w.astype(np.float64)
  for t in range(1, steps + 1):
    m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
    step = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + wd * w
    if not adam:
      w_norm, s_norm = np.linalg.norm(w), np.linalg.norm(step)
      step = step * (w_norm / s_norm if w_norm > 0 and s_norm > 0 else 1.0)
    w = w - lr * step
  return w


def test_optimizers_of_several_settings_stepped_in_turn_each_match_the_reference():
  rng = np.random.default_rng(2)
  settings = [dict(lr=0.01, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, adam=True), dict(lr=0.02, b1=0.8, b2=0.99, eps=1e-6, wd=0.1, adam=True),
              dict(lr=0.01, b1=0.9, b2=0.999, eps=1e-6, wd=0.01, adam=False)]
  cases = []
  for s in settings:
    for shape in [(3,), (2, 4)]:
      w0, g = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32)
      w = Tensor(w0.copy(), requires_grad=True)
      optimizer = LAMB([w], lr=s["lr"], b1=s["b1"], b2=s["b2"], eps=s["eps"], weight_decay=s["wd"], adam=s["adam"])
      cases.append((w, g, optimizer, lamb_reference(w0, g, 4, **s)))
  for _ in range(4):  # each setting and shape is one graph template, replayed from the second step on
    for w, g, optimizer, _ in cases:
      optimizer.zero_grad()
      (w * Tensor(g)).sum().backward()
      optimizer.step()
  for w, _, _, expected in cases: np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16])
@pytest.mark.parametrize("kind", ["adam", "adamw", "lamb", "sgd_momentum"])
def test_half_parameters_keep_float32_state(kind, dtype):
  """A half-precision model's optimizer state is float32 and its update computed in float32, rounded once into the
  parameter: against the float64 reference, rounded to the parameter's dtype, within one of its ulps."""
  rng = np.random.default_rng(3)
  w0, g = rng.standard_normal(6), rng.standard_normal(6) * 1e-3  # g * g underflows float16's normal range
  w = Tensor(w0, dtype=dtype, requires_grad=True)
  half = w.numpy().astype(np.float64)
  grad = Tensor(g, dtype=dtype).numpy().astype(np.float64)  # the gradient as the parameter's dtype holds it
  if kind == "sgd_momentum":
    optimizer, state = SGD([w], lr=0.1, momentum=0.9), "velocity"
    velocity, expected = np.zeros(6), half
    for _ in range(3): velocity = 0.9 * velocity + grad; expected = expected - 0.1 * velocity
  else:
    settings = {"adam": dict(wd=0.0, adam=True), "adamw": dict(wd=0.01, adam=True), "lamb": dict(wd=0.01, adam=False)}[kind]
    optimizer, state = LAMB([w], lr=0.01, b1=0.9, b2=0.999, eps=1e-8, weight_decay=settings["wd"], adam=settings["adam"]), "m"
    expected = lamb_reference(half, grad, 3, 0.01, 0.9, 0.999, 1e-8, **settings)
  for _ in range(3):
    optimizer.zero_grad()
    (w * Tensor(g, dtype=dtype)).sum().backward()
    optimizer.step()
  assert w.dtype == dtype and getattr(optimizer, state)[0].dtype == dtypes.float32
  ulp = np.abs(Tensor(expected, dtype=dtype).numpy().astype(np.float64)) * (2.0 ** -10 if dtype == dtypes.float16 else 2.0 ** -7)
  np.testing.assert_array_less(np.abs(w.numpy().astype(np.float64) - expected), 3 * ulp + 1e-7)


def test_adam_with_a_huge_learning_rate_and_half_defaults():
  """With half the default float, the step count and the update stay float32: lr 1e10 moves a float32 parameter by 1e10,
  not by float16's rounding of it (or inf): within float32's cancellation in 1 - b2 ** t (5e-6 of 0.001), where float16
  moments were 1.2 % off."""
  default = dtypes.default_float
  dtypes.default_float = dtypes.float16
  try:
    w = Tensor(np.array([0.5, -1.0], np.float32), requires_grad=True)
    optimizer = Adam([w], lr=1e10)
    (w * Tensor(np.array([0.2, -0.4], np.float32))).sum().backward()
    optimizer.step()
    assert optimizer.b1_t.dtype == optimizer.b2_t.dtype == dtypes.float32
    np.testing.assert_allclose(w.numpy(), [0.5 - 1e10 * 0.2 / (0.2 + 1e-8), -1.0 + 1e10 * 0.4 / (0.4 + 1e-8)], rtol=2e-5)
  finally: dtypes.default_float = default


def test_optimizer_errors():
  with pytest.raises(ValueError, match="no parameters"): SGD([Tensor([1.0], requires_grad=False)])
  x = Tensor([1.0], requires_grad=True)
  with pytest.raises(RuntimeError, match="before backward"): SGD([x]).step()
  x.sum().backward()
  with Context(TRAINING=0), pytest.raises(RuntimeError, match="training mode"): Adam([x]).step()


def test_mnist_example_trains_and_reuses_its_schedules(capsys):
  spec = importlib.util.spec_from_file_location("mnist_mlp", Path(__file__).parents[3] / "examples" / "mnist_mlp.py")
  example = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(example)
  accuracy = example.main(steps=60)
  lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("step")]
  assert accuracy > 0.95
  assert all(line.endswith("new schedules 0") for line in lines[1:]) and not lines[0].endswith("new schedules 0")
  GlobalCounters.reset()


def test_conv2d_layer_matches_functional():
  layer = nn.Conv2d(3, 4, 3, padding=1)
  x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32))
  np.testing.assert_allclose(layer(x).numpy(), x.conv2d(layer.weight, layer.bias, padding=1).numpy(), rtol=1e-6)
  assert layer(x).shape == (2, 4, 5, 5)


def test_batchnorm_training_and_eval():
  x = np.random.default_rng(1).standard_normal((4, 3, 2, 2)).astype(np.float32) * 3 + 1
  norm = nn.BatchNorm2d(3)
  Tensor.training = True
  try:
    out = norm(Tensor(x)).numpy()
  finally:
    Tensor.training = False
  mean, var = x.mean((0, 2, 3)), x.var((0, 2, 3))
  np.testing.assert_allclose(out, (x - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5), rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(norm.running_mean.numpy(), 0.1 * mean, rtol=1e-5)
  np.testing.assert_allclose(norm.running_var.numpy(), 0.9 + 0.1 * x.var((0, 2, 3), ddof=1), rtol=1e-5)
  eval_out = norm(Tensor(x)).numpy()
  expected = (x - norm.running_mean.numpy().reshape(1, 3, 1, 1)) / np.sqrt(norm.running_var.numpy().reshape(1, 3, 1, 1) + 1e-5)
  np.testing.assert_allclose(eval_out, expected, rtol=1e-5)


def test_embedding_looks_rows_up():
  embedding = nn.Embedding(10, 4)
  rows = embedding(Tensor([[3, 1], [9, 3]])).numpy()
  weight = embedding.weight.numpy()
  np.testing.assert_array_equal(rows, weight[[[3, 1], [9, 3]]])
