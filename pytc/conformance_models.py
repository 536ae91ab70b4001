"""The conformance runner's models mode: tinygrad's own model files and examples, run with generated weights on pytc
(through the name-mapping shim) and, when tinygrad runs here, on tinygrad, and their outputs compared.

    python -m pytc.conformance --tinygrad-src PATH --models [--only gpt2 llama ...] [--reference-device PYTHON]

Each case is a small program over the `tinygrad` names: it builds a small configuration of the model, fills every
tensor of its state from one seeded NumPy generator, runs a forward pass (and training steps, or greedy decoding with a
KV cache and a Variable under TinyJit for the language models) and saves what it computed. The same program runs in
two processes: with the shim first on the path (pytc), and with the checkout alone (tinygrad, on --reference-device or
its default device); tinygrad's side is skipped, and said so, where it cannot run."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

PRELUDE = """
import sys
import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.nn.state import get_state_dict
OUT = {}
def fill(model, seed=0, scale=0.1):
  rng = np.random.default_rng(seed)
  for name, t in sorted(get_state_dict(model).items()):
    values = rng.standard_normal(t.shape) * scale
    if "running_var" in name or name.endswith("norm.weight") or ".ln" in name and name.endswith("weight"): values = 1 + np.abs(values)
    t.assign(Tensor(np.asarray(values, dtype=np.float32)).cast(t.dtype)).realize()
def data(*shape, seed=1): return Tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))
"""

CASES: dict[str, str] = {
  "resnet": """
from extra.models.resnet import ResNet
model = ResNet(18, num_classes=10)
fill(model)
OUT["forward"] = model(data(2, 3, 32, 32)).numpy()
from tinygrad import nn
from tinygrad.helpers import Context
opt = nn.optim.SGD(nn.state.get_parameters(model), lr=0.01, momentum=0.9)
with Context(TRAINING=1):  # batch statistics over 4 x 2 x 2 values at the last stage: fewer make the comparison ill-conditioned
  for step in range(2):
    opt.zero_grad()
    loss = model(data(4, 3, 64, 64, seed=step + 2)).sparse_categorical_crossentropy(Tensor([1, 7, 3, 0])).backward()
    opt.step()
    OUT[f"loss{step}"] = loss.numpy()
""",
  "efficientnet": """
from extra.models.efficientnet import EfficientNet
model = EfficientNet(0, classes=10)
fill(model)
OUT["forward"] = model.forward(data(1, 3, 64, 64)).numpy()
""",
  "vit": """
from extra.models.vit import ViT
model = ViT(layers=2, embed_dim=32, num_heads=2)
for block in model.tbs: block.dropout = 0.0
fill(model)
OUT["forward"] = model.forward(data(1, 3, 224, 224)).numpy()
from tinygrad import nn
from tinygrad.helpers import Context
opt = nn.optim.Adam(nn.state.get_parameters(model), lr=1e-3)
with Context(TRAINING=1):
  opt.zero_grad()
  loss = model.forward(data(1, 3, 224, 224, seed=3)).sparse_categorical_crossentropy(Tensor([4])).backward()
  opt.step()
  OUT["loss"] = loss.numpy()
OUT["after"] = model.forward(data(1, 3, 224, 224)).numpy()
""",
  "bert": """
from extra.models.bert import BertForQuestionAnswering
model = BertForQuestionAnswering(hidden_size=32, intermediate_size=64, max_position_embeddings=16, num_attention_heads=2,
                                 num_hidden_layers=2, vocab_size=50)
fill(model)
ids = Tensor(np.random.default_rng(4).integers(0, 50, (2, 8)).astype(np.int32))
OUT["forward"] = model(ids, Tensor.ones(2, 8), Tensor.zeros(2, 8, dtype=dtypes.int32)).numpy()
""",
  "convnext": """
from extra.models.convnext import ConvNeXt
model = ConvNeXt(depths=[1, 1, 1, 1], dims=[8, 16, 32, 64], num_classes=10)
fill(model)
OUT["forward"] = model(data(1, 3, 64, 64)).numpy()
""",
  "transformer": """
from extra.models.transformer import Transformer
from tinygrad import nn
model = Transformer(syms=10, maxlen=6, layers=2, embed_dim=16, num_heads=2, ff_dim=32)
for block in model.tbs: block.dropout = 0.0  # training steps compare only without random masks
fill(model)
x = Tensor(np.random.default_rng(5).integers(0, 10, (3, 6)).astype(np.float32))
OUT["forward"] = model.forward(x).numpy()
opt = nn.optim.Adam(nn.state.get_parameters(model), lr=1e-3)
from tinygrad.helpers import Context
with Context(TRAINING=1):
  for step in range(2):
    opt.zero_grad()
    loss = model.forward(x).sparse_categorical_crossentropy(Tensor(np.arange(18).reshape(3, 6) % 10)).backward()
    opt.step()
    OUT[f"loss{step}"] = loss.numpy()
""",
  "llama": """
from extra.models.llama import Transformer
from tinygrad import Variable
model = Transformer(dim=32, hidden_dim=64, n_heads=4, n_layers=2, norm_eps=1e-5, vocab_size=61, max_context=32, jit=True)
fill(model, scale=0.3)
tokens, position = [3, 14, 15], 0
for _ in range(8):
  nxt = model(Tensor([tokens[position:]]), position, 0.0).item()
  position = len(tokens)
  tokens.append(int(nxt))
OUT["tokens"] = np.array(tokens)
""",
  "unet": """
from extra.models.unet import UNetModel
model = UNetModel(adm_in_ch=None, in_ch=4, out_ch=4, model_ch=32, attention_resolutions=[2], num_res_blocks=1, channel_mult=[1, 2],
                  transformer_depth=[1, 1], ctx_dim=16, n_heads=2, num_groups=8)
fill(model, scale=0.05)
OUT["forward"] = model(data(1, 4, 8, 8), Tensor([10.0]), data(1, 3, 16, seed=2)).numpy()
""",
  "gpt2": """
sys.argv = ["gpt2"]
from examples.gpt2 import Transformer
from tinygrad import Variable
model = Transformer(dim=32, n_heads=2, n_layers=2, norm_eps=1e-5, vocab_size=67, max_seq_len=64)
fill(model, scale=0.3)
tokens = [5, 9, 11]
start = 0
for _ in range(8):
  if len(tokens) - start == 1: step = Variable("tokens", 0, 66).bind(tokens[start])
  else: step = Tensor([tokens[start:]])
  nxt = model(step, Variable("start_pos", 1 if start else 0, 127).bind(start), 0.0).tolist()
  start = len(tokens)
  tokens.append(int(nxt[0]))
OUT["tokens"] = np.array(tokens)
""",
  "beautiful_mnist": """
sys.argv = ["beautiful_mnist"]
import examples.beautiful_mnist as mnist
from tinygrad import nn
model = mnist.Model()
fill(model)
mnist.opt = nn.optim.SGD(nn.state.get_parameters(model), lr=0.01)  # Adam's first step is the gradients' signs: noise decides tiny ones
x = Tensor(np.random.default_rng(6).random((64, 1, 28, 28)).astype(np.float32))  # pixels in [0, 1): batch statistics well conditioned
y = Tensor(np.random.default_rng(7).integers(0, 10, 64).astype(np.int32))
OUT["forward"] = model(x).numpy()
from tinygrad.helpers import Context
from tinygrad import Tensor as T
T.manual_seed(0)
with Context(TRAINING=1):
  mnist.opt.zero_grad()
  loss = model(x[:32]).sparse_categorical_crossentropy(y[:32]).backward()
  mnist.opt.step()
OUT["loss"] = loss.numpy()
OUT["after"] = model(x).numpy()
""",
}
TOLERANCE = {"rtol": 2e-3, "atol": 2e-4}


def program(case: str, output: Path) -> str:
  return PRELUDE + CASES[case] + f"\nnp.savez({str(output)!r}, **{{k: np.asarray(v) for k, v in OUT.items()}})\n"


def run_case(case: str, scratch: Path, path: list[str], device: str | None, timeout: int) -> tuple[dict | None, str]:
  """The case's outputs from a process whose import path starts with `path` (None and the error's last lines if it failed)."""
  output = scratch / f"{case}-{abs(hash(tuple(path)))}.npz"
  (script := scratch / f"{case}.py").write_text(program(case, output))
  environment = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, os.environ.get("PYTHONPATH", "")])}
  if device: environment["DEV"] = device
  try: done = subprocess.run([sys.executable, str(script)], cwd=path[-1], env=environment, capture_output=True, text=True, timeout=timeout)
  except subprocess.TimeoutExpired: return None, f"timed out after {timeout} s"
  if done.returncode != 0 or not output.exists(): return None, ((done.stderr or done.stdout).strip().splitlines() or ["no output"])[-1][:300]
  with np.load(output) as loaded: return {k: loaded[k] for k in loaded.files}, ""


def compare(ours: dict, theirs: dict) -> str:
  """'' when every output matches (tokens exactly, values within TOLERANCE), else what differs."""
  problems = []
  for name in sorted(set(ours) | set(theirs)):
    if name not in ours or name not in theirs: problems.append(f"{name} only on one side")
    elif ours[name].shape != theirs[name].shape: problems.append(f"{name}: shape {ours[name].shape} vs {theirs[name].shape}")
    elif ours[name].dtype.kind in "iu":
      if not np.array_equal(ours[name], theirs[name]): problems.append(f"{name}: {ours[name].tolist()} vs {theirs[name].tolist()}")
    elif not np.allclose(ours[name], theirs[name], **TOLERANCE):
      problems.append(f"{name}: max difference {np.abs(ours[name] - theirs[name]).max():.3g}")
  return "; ".join(problems)


def run_models(tinygrad_src: Path, cases: list[str], reference_device: str | None, timeout: int, write_shim) -> dict[str, dict[str, str]]:
  """{case: {outcome, message}}: outcome "matched", "ran" (pytc only: tinygrad could not run it), or "error" / "wrong value"."""
  unknown = sorted(set(cases) - set(CASES))
  if unknown: raise SystemExit(f"pytc.conformance: no model case {unknown}; the cases are {sorted(CASES)}")
  results = {}
  with tempfile.TemporaryDirectory(prefix="pytc-models-") as folder:
    scratch = Path(folder)
    write_shim(shim := scratch / "shim")
    for case in cases:
      ours, error = run_case(case, scratch, [str(shim), str(tinygrad_src)], None, timeout)
      if ours is None:
        results[case] = {"outcome": "error", "message": f"on pytc: {error}"}
        continue
      theirs, why = run_case(case, scratch, [str(tinygrad_src)], reference_device, timeout)
      if theirs is None: results[case] = {"outcome": "ran", "message": f"tinygrad could not run it here ({why})"}
      elif problem := compare(ours, theirs): results[case] = {"outcome": "wrong value", "message": problem}
      else: results[case] = {"outcome": "matched", "message": ", ".join(sorted(ours))}
      print(f"{case}: {results[case]['outcome']} {results[case]['message']}", file=sys.stderr)
  return results
