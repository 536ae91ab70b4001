"""The names tinygrad's model files and examples import beside Tensor: function, Context and TRAINING, is_param_,
contiguous_backward, nn.datasets, Tensor(pathlib.Path), fetch's offline error and the helpers."""
import gzip
import pathlib
import struct

import numpy as np
import pytest

from pytc import Context, Tensor, function, nn
from pytc.helpers import TRAINING, FetchError, Timing, colored, fetch, get_child, tqdm, trange


def test_context_sets_training_for_a_block_and_a_call():
  assert not Tensor.training and not TRAINING
  with Context(TRAINING=1):
    assert Tensor.training and TRAINING == 1
    with Context(TRAINING=0): assert not Tensor.training
    assert Tensor.training
  assert not Tensor.training
  @Context(TRAINING=1)
  def dropped(x: Tensor) -> Tensor: return x.dropout(0.5)
  assert (dropped(Tensor.ones(1000)).numpy() == 0).any() and not Tensor.training
  with pytest.raises(KeyError, match="TRAINING"): Context(NOT_A_MODE=1)


def test_context_sets_the_default_dtypes():
  from pytc import dtypes
  with Context(DEFAULT_FLOAT=dtypes.float16, DEFAULT_INT="int16"):
    assert dtypes.default_float is dtypes.float16 and dtypes.default_int is dtypes.int16
    assert Tensor([1.5]).dtype is dtypes.float16 and Tensor([1]).dtype is dtypes.int16 and Tensor.rand(2).dtype is dtypes.float16
  assert dtypes.default_float is dtypes.float32 and dtypes.default_int is dtypes.int32
  with pytest.raises(TypeError, match="DEFAULT_INT"), Context(DEFAULT_INT=dtypes.float32): pass
  assert dtypes.default_int is dtypes.int32


def test_errors_tinygrad_code_catches_by_its_types():
  from pytc import dtypes
  with pytest.raises(AttributeError): Tensor([3], dtype=(dtypes.int32,))
  with pytest.raises(TypeError): Tensor([3], dtype=(dtypes.int32,))
  for bad in (lambda: Tensor(2.0).multinomial(1), lambda: Tensor([1.0, 9.0]).multinomial(0), lambda: Tensor([1.0]).multinomial(2)):
    with pytest.raises(AssertionError): bad()
    with pytest.raises(ValueError): bad()
  with pytest.raises(ValueError, match="one size per dim"): Tensor([1, 2]).pad_to(2, 3)
  with pytest.raises(RuntimeError, match="whole"): Tensor([1, 2, 3], dtype=dtypes.int8).bitcast(dtypes.int16)


def test_clones_and_copies_keep_the_gradient():
  a = Tensor([[1.0, 2.0], [3.0, 4.0]])
  (a * 5.0 + 5.0).mean().backward()
  b, c = a.clone(), a.to("CPU")
  assert b.grad is not a.grad and b.grad.tolist() == a.grad.tolist() == [[1.25, 1.25], [1.25, 1.25]] and c.grad is a.grad
  assert Tensor([1.0]).clone().grad is None


def test_context_jit_0_runs_a_jitted_function_plainly():
  from pytc import TinyJit
  calls = []
  @TinyJit
  def double(x: Tensor) -> Tensor:
    calls.append(1)
    return (x * 2).realize()
  with Context(JIT=0):
    for _ in range(3): double(Tensor([1.0]))
  assert len(calls) == 3 and double.graph is None
  for _ in range(3): double(Tensor([1.0]))
  assert len(calls) == 4 and double.graph is not None  # the capture, then replays


class Model:
  def __init__(self):
    self.layers = [nn.Linear(4, 8), Tensor.relu, nn.Linear(8, 3)]
    self.calls = 0

  @function
  def __call__(self, x: Tensor) -> Tensor:
    self.calls += 1
    return x.sequential(self.layers)


def test_function_traces_once_per_signature_and_differentiates():
  model, rng = Model(), np.random.default_rng(0)
  x = rng.standard_normal((5, 4)).astype(np.float32)
  first = model(Tensor(x)).numpy()
  for _ in range(3): np.testing.assert_allclose(model(Tensor(x)).numpy(), first, rtol=1e-6)
  assert model.calls == 1  # replayed, not traced again
  model(Tensor(x[:2]))
  assert model.calls == 2  # a new shape is a new signature
  w1, b1, w2, b2 = (t.numpy() for t in (model.layers[0].weight, model.layers[0].bias, model.layers[2].weight, model.layers[2].bias))
  np.testing.assert_allclose(first, np.maximum(x @ w1.T + b1, 0) @ w2.T + b2, rtol=1e-5, atol=1e-6)
  model.layers[2].weight.requires_grad = True
  model(Tensor(x)).sum().backward()
  np.testing.assert_allclose(model.layers[2].weight.grad.numpy(), np.tile(np.maximum(x @ w1.T + b1, 0).sum(0), (3, 1)), rtol=1e-5)


def test_function_refuses_implicit_buffers_unless_allowed():
  hidden = Tensor([1.0, 2.0]).realize()
  @function
  def reads_hidden(x: Tensor) -> Tensor: return x + hidden
  with pytest.raises(RuntimeError, match="allow_implicit"): reads_hidden(Tensor([1.0, 1.0]))
  @function(allow_implicit=True)
  def allowed(x: Tensor) -> Tensor: return x + hidden
  np.testing.assert_array_equal(allowed(Tensor([1.0, 1.0])).numpy(), [2, 3])
  with pytest.raises(RuntimeError, match="must return a Tensor"): function(lambda x: 3)(Tensor([1.0]))


def test_is_param_and_contiguous_backward():
  stats = Tensor.zeros(3).is_param_(False)
  weight = Tensor.ones(3)
  assert not stats.is_param and weight.is_param and stats.requires_grad is False
  with pytest.raises(ValueError): nn.optim.SGD([stats])
  x = Tensor([1.0, -2.0, 3.0], requires_grad=True)
  (x * 2).contiguous_backward().sum().backward()
  np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])


def idx(array: np.ndarray) -> bytes:
  return bytes([0, 0, 8, array.ndim]) + b"".join(struct.pack(">I", n) for n in array.shape) + array.astype(np.uint8).tobytes()


def test_mnist_from_a_local_folder(tmp_path):
  rng = np.random.default_rng(0)
  images, labels = rng.integers(0, 256, (6, 28, 28)), rng.integers(0, 10, 6)
  for prefix in ("train", "t10k"):
    (tmp_path / f"{prefix}-images-idx3-ubyte.gz").write_bytes(gzip.compress(idx(images)))
    (tmp_path / f"{prefix}-labels-idx1-ubyte").write_bytes(idx(labels))
  x_train, y_train, x_test, y_test = nn.datasets.mnist(path=tmp_path)
  assert x_train.shape == (6, 1, 28, 28) and x_train.dtype.name == "uint8" and y_test.shape == (6,)
  np.testing.assert_array_equal(x_train.numpy()[:, 0], images)
  np.testing.assert_array_equal(y_train.numpy(), labels)
  (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(idx(labels)[:-2])
  with pytest.raises(nn.datasets.DatasetError, match="header says"): nn.datasets.mnist(path=tmp_path)


def test_a_path_becomes_its_bytes_and_fetch_names_the_local_copy(tmp_path, monkeypatch):
  (path := tmp_path / "blob.bin").write_bytes(bytes(range(7)))
  np.testing.assert_array_equal(Tensor(path).numpy(), np.arange(7))
  with pytest.raises(FileNotFoundError): Tensor(tmp_path / "missing.bin")
  monkeypatch.setenv("PYTC_CACHE_DIR", str(tmp_path / "cache"))
  with pytest.raises(FetchError, match=r"https://invalid\.invalid/w\.bin.*put a copy of it at .*cache"):
    fetch("https://invalid.invalid/w.bin", name="w.bin")
  (copy := tmp_path / "cache" / "downloads" / "w.bin").write_bytes(b"local")
  assert fetch("https://invalid.invalid/w.bin", name="w.bin") == copy
  assert fetch(str(path)) == pathlib.Path(path)
  np.testing.assert_array_equal(Tensor.from_url(str(path)).numpy(), np.arange(7))


def test_small_helpers(capsys):
  model = Model()
  assert get_child(model, "layers.0.weight") is model.layers[0].weight
  assert colored("x", "red") == "\x1b[31mx\x1b[0m" and colored("x", None) == "x"
  with pytest.raises(ValueError): colored("x", "pink")
  with Timing("step "): pass
  assert capsys.readouterr().out.startswith("step ")
  assert list(trange(3, disable=True)) == [0, 1, 2]
  with tqdm(total=4, desc="items") as bar:
    for _ in range(4): bar.update()
  assert "4/4" in capsys.readouterr().err
