"""examples/gpt2.py: a tiny random GPT-2 decodes with its KV cache, a Variable position and TinyJit, and its tokens equal
a NumPy GPT-2 that recomputes the whole sequence each step; the decode step compiles once for every position."""
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from pytc import GlobalCounters, Tensor, Variable

EXAMPLE = pathlib.Path(__file__).resolve().parents[3] / "examples" / "gpt2.py"


@pytest.fixture(scope="module")
def gpt2():
  spec = importlib.util.spec_from_file_location("gpt2_example", EXAMPLE)
  module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def numpy_weights(model) -> dict[str, np.ndarray]:
  from pytc.nn.state import get_state_dict
  return {name: t.numpy().astype(np.float64) for name, t in get_state_dict(model).items() if name not in ("positions",) and "cache" not in name}


def layernorm(x, w, b, eps=1e-5): return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * w + b
def gelu(x): return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def numpy_logits(w: dict, config, tokens: list[int]) -> np.ndarray:
  """The last position's logits, the whole sequence computed afresh."""
  length, heads, dim = len(tokens), config.n_heads, config.dim
  x = w["wte.weight"][tokens] + w["wpe.weight"][:length]
  causal = np.triu(np.full((length, length), -np.inf), 1)
  for i in range(config.n_layers):
    p = f"h.{i}."
    h = layernorm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
    qkv = (h @ w[p + "attn.c_attn.weight"].T + w[p + "attn.c_attn.bias"]).reshape(length, 3, heads, dim // heads).transpose(1, 2, 0, 3)
    scores = qkv[0] @ qkv[1].transpose(0, 2, 1) / np.sqrt(dim // heads) + causal
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    attended = (weights / weights.sum(-1, keepdims=True)) @ qkv[2]
    x = x + attended.transpose(1, 0, 2).reshape(length, dim) @ w[p + "attn.c_proj.weight"].T + w[p + "attn.c_proj.bias"]
    h = layernorm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
    x = x + gelu(h @ w[p + "mlp_fc.weight"].T + w[p + "mlp_fc.bias"]) @ w[p + "mlp_proj.weight"].T + w[p + "mlp_proj.bias"]
  return layernorm(x[-1], w["ln_f.weight"], w["ln_f.bias"]) @ w["lm_head.weight"].T


def test_decoded_tokens_equal_numpy(gpt2):
  Tensor.manual_seed(3)
  config = gpt2.Config(n_layers=2, n_heads=2, dim=32, vocab_size=97, max_context=48)
  model = gpt2.GPT2(config)
  weights = numpy_weights(model)
  tokens, rate = model.generate([5, 17, 42], 20)
  assert len(tokens) == 23 and rate > 0
  for step in range(3, len(tokens)):
    logits = numpy_logits(weights, config, tokens[:step])
    chosen = tokens[step]
    assert logits[chosen] >= logits.max() - 1e-4, f"step {step}: pytc chose {chosen}, NumPy {int(logits.argmax())}"
    if np.sort(logits)[-2] < logits.max() - 1e-4: assert chosen == int(logits.argmax())


def test_a_decode_step_compiles_once_for_a_hundred_positions(gpt2):
  Tensor.manual_seed(4)
  model = gpt2.GPT2(gpt2.Config(n_layers=1, n_heads=2, dim=16, vocab_size=31, max_context=128))
  model.next_token(Tensor([[1, 2]], dtype="int32"), 0)
  def step(position: int) -> int:
    return int(model.decode_step(Tensor([[position % 31]], dtype="int32"), Variable("start_pos", 1, 127).bind(position)).numpy()[0])
  step(2), step(3)  # runs plainly, then captures
  built = GlobalCounters.schedules_built
  chosen = [step(position) for position in range(4, 104)]
  assert GlobalCounters.schedules_built == built
  assert all(0 <= token < 31 for token in chosen)


def test_generate_checks_its_arguments(gpt2):
  model = gpt2.GPT2(gpt2.Config(n_layers=1, n_heads=1, dim=8, vocab_size=11, max_context=8))
  with pytest.raises(ValueError, match="exceed the model's context"): model.generate([1, 2, 3], 6)
  with pytest.raises(ValueError, match="at least one token"): model.generate([], 2)


def hf_state(gpt2, model) -> dict:
  """The model's weights by Hugging Face's GPT-2 names and layouts (Conv1D weights stored (in, out))."""
  from pytc.nn.state import get_state_dict
  state = {}
  for name, tensor in get_state_dict(model).items():
    if name == "positions" or "cache" in name or name == "lm_head.weight": continue
    name = name.replace("mlp_fc.", "mlp.c_fc.").replace("mlp_proj.", "mlp.c_proj.")
    state[name] = tensor.T.contiguous() if name.endswith(gpt2.CONV1D_WEIGHTS) else tensor
  return state


@pytest.mark.parametrize("form", ["safetensors", "torch", "gguf"])
def test_a_checkpoint_decodes_as_the_model_it_came_from(gpt2, tmp_path, form):
  import struct

  from pytc.nn.state import safe_save
  Tensor.manual_seed(5)
  config = gpt2.Config(n_layers=2, n_heads=2, dim=32, vocab_size=67, max_context=32)
  source = gpt2.GPT2(config)
  source.lm_head.weight.assign(source.wte.weight).realize()  # GPT-2 ties them
  expected, _ = source.generate([3, 9], 8)
  state = hf_state(gpt2, source)
  if form == "safetensors": safe_save(state, path := tmp_path / "model.safetensors")
  elif form == "torch":
    torch = pytest.importorskip("torch")
    torch.save({k: torch.from_numpy(v.numpy()) for k, v in state.items()}, path := tmp_path / "pytorch_model.bin")
  else:
    from test_loaders import gguf_bytes
    renamed = {}
    for name, tensor in state.items():
      tensor = tensor.T if name.endswith(gpt2.CONV1D_WEIGHTS) else tensor  # GGUF stores GPT-2's projections as Linear's (out, in)
      for ours, theirs in gpt2.GGUF_NAMES: name = name.replace(theirs, ours)
      renamed[name] = tensor.contiguous().numpy()
    u32 = lambda v: struct.pack("<I", v)  # noqa: E731
    metadata = [("gpt2.block_count", 4, u32(2)), ("gpt2.attention.head_count", 4, u32(2)), ("gpt2.embedding_length", 4, u32(32)),
                ("gpt2.context_length", 4, u32(32)), ("gpt2.attention.layer_norm_epsilon", 6, struct.pack("<f", 1e-5))]
    (path := tmp_path / "model.gguf").write_bytes(gguf_bytes(metadata, [(n, a.shape, 0, a.astype("float32").tobytes()) for n, a in renamed.items()]))
  state, stated = gpt2.read_checkpoint(path)
  loaded = gpt2.GPT2(stated or config)
  gpt2.load(loaded, state)
  assert loaded.generate([3, 9], 8)[0] == expected
