"""Whole models on the CPU: pytc against torch eager and torch.compile (default options, static shapes), when torch is installed.

- gpt2: GPT-2 small's forward (12 pre-LN layers, 12 heads, d=768, vocab 50257) on 128 token ids, logits through the tied token
  embedding;
- resnet18_b1, resnet18_b32: ResNet-18's forward at 224x224 on a batch of 1 and of 32, BatchNorm on its running statistics;
- train_mlp: one training step of a 64-128-10 MLP on a batch of 64 (forward, cross-entropy, backward, Adam update), pytc plainly
  and under TinyJit (the batch handed over as new Tensors every call).
The forwards run plainly and under TinyJit too (the input handed over as an argument, the weights captured).
Every implementation gets the same float32 weights (NumPy, fixed seed). pytc is checked against torch eager first (the
output; for train_mlp the weights after several steps from the same start on the same batches); a mismatch stops the run.
Then the implementations run interleaved round by round (bench/timing.py). Per model: the median ms of each, pytc's time
over torch eager's and over the fastest peer's, pytc's kernels per call, and (gpt2, resnet18_b1) pytc's first call with
nothing cached (graph, schedule, compile, run) beside the same with the compiled kernels on disk; each peer's first call
(torch.compile's compiles, with an empty cache too).

  python bench/models.py [--rounds N] [--only NAME] [--json out.json]
"""
from __future__ import annotations

import argparse
import gc
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace

from timing import (  # first: it sets OPENBLAS_THREAD_TIMEOUT before NumPy loads
  cold_caches,
  interleaved,
  peers,
  pytc_first_call,
  timed,
  torch_available,
)

# isort: split
import numpy as np


@dataclass(frozen=True)
class GPT2Config:
  vocab: int = 50257
  layers: int = 12
  heads: int = 12
  dim: int = 768
  context: int = 1024
  seq: int = 128


@dataclass
class Bench:
  pytc: dict[str, Callable]  # one call each; pytc's realize what they compute
  peers: dict[str, Callable]  # torch eager and torch.compile
  check: Callable[[], float | None]  # pytc against torch eager: the largest error over the output's scale (None: unchecked); SystemExit if off
  seconds: float = 0.01  # untimed and then timed seconds per implementation and round (at least one call each)
  first_call: bool = False
  notes: list[str] = field(default_factory=list)
  fallbacks: dict[str, tuple[Callable, str]] = field(default_factory=dict)  # a peer whose first call fails: its stand-in, and why


def normal(rng: np.random.Generator, shape: tuple[int, ...], std: float, mean: float = 0.0) -> np.ndarray:
  return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std) + np.float32(mean)).astype(np.float32)


def compare(name: str, ours: np.ndarray, reference: np.ndarray, rtol: float = 1e-3, atol: float = 1e-3) -> float:
  """The largest difference over the reference's scale; SystemExit naming the model when not allclose (atol relative to the scale)."""
  scale = float(np.abs(reference).max()) or 1.0
  error = float(np.abs(ours - reference).max()) / scale
  if ours.shape != reference.shape or not np.allclose(ours, reference, rtol=rtol, atol=atol * scale):
    raise SystemExit(f"{name}: pytc's result differs from torch's (largest difference {error:.2e} of the scale {scale:.3g})")
  return error


def pytc_ops() -> SimpleNamespace:
  return SimpleNamespace(linear=lambda x, w, b=None: x.linear(w.T, b), layernorm=lambda x, w, b: x.layernorm() * w + b,
                         attention=lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True), gelu=lambda x: x.gelu(),
                         conv=lambda x, w, stride, padding: x.conv2d(w, stride=stride, padding=padding),
                         maxpool=lambda x: x.max_pool2d((3, 3), stride=2, padding=1))


def torch_ops() -> SimpleNamespace:
  import torch.nn.functional as F
  return SimpleNamespace(linear=F.linear, layernorm=lambda x, w, b: F.layer_norm(x, w.shape, w, b),
                         attention=lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                         gelu=lambda x: F.gelu(x, approximate="tanh"),
                         conv=lambda x, w, stride, padding: F.conv2d(x, w, stride=stride, padding=padding),
                         maxpool=lambda x: F.max_pool2d(x, 3, 2, 1),
                         bn=lambda x, p, name: F.batch_norm(x, p[f"{name}.running_mean"], p[f"{name}.running_var"], p[f"{name}.weight"],
                                                            p[f"{name}.bias"], training=False, eps=1e-5))


def torch_peers(fn: Callable, *args) -> dict[str, Callable]:
  """torch eager and torch.compile calls of fn(*args) without autograd."""
  import torch
  compiled = torch.compile(fn, dynamic=False)
  def no_grad(f: Callable) -> Callable:
    def call():
      with torch.no_grad(): return f(*args)
    return call
  return {"torch": no_grad(fn), "torch.compile": no_grad(compiled)}


# GPT-2

def gpt2_params(cfg: GPT2Config, seed: int = 0) -> dict[str, np.ndarray]:
  rng, d = np.random.default_rng(seed), cfg.dim
  p = {"wte": normal(rng, (cfg.vocab, d), 0.02), "wpe": normal(rng, (cfg.context, d), 0.01), "ln_f.weight": normal(rng, (d,), 0.1, 1.0),
       "ln_f.bias": normal(rng, (d,), 0.02)}
  for i in range(cfg.layers):
    for name, (out, inp) in {"attn": (3 * d, d), "proj": (d, d), "fc": (4 * d, d), "fc_proj": (d, 4 * d)}.items():
      p[f"h{i}.{name}.weight"], p[f"h{i}.{name}.bias"] = normal(rng, (out, inp), 0.02), normal(rng, (out,), 0.02)
    for name in ("ln_1", "ln_2"): p[f"h{i}.{name}.weight"], p[f"h{i}.{name}.bias"] = normal(rng, (d,), 0.1, 1.0), normal(rng, (d,), 0.02)
  return p


def affine(p: dict, name: str) -> tuple: return p[f"{name}.weight"], p[f"{name}.bias"]


def gpt2_forward(cfg: GPT2Config, p: dict, idx, ops: SimpleNamespace):
  """Logits (batch, seq, vocab) of token ids (batch, seq); the same code runs on pytc and torch tensors through `ops`."""
  batch, seq = idx.shape
  d, heads = cfg.dim, cfg.heads
  x = p["wte"][idx] + p["wpe"][:seq]
  for i in range(cfg.layers):
    q, k, v = ops.linear(ops.layernorm(x, *affine(p, f"h{i}.ln_1")), *affine(p, f"h{i}.attn")).split(d, dim=-1)
    q, k, v = (t.reshape(batch, seq, heads, d // heads).transpose(1, 2) for t in (q, k, v))
    x = x + ops.linear(ops.attention(q, k, v).transpose(1, 2).reshape(batch, seq, d), *affine(p, f"h{i}.proj"))
    x = x + ops.linear(ops.gelu(ops.linear(ops.layernorm(x, *affine(p, f"h{i}.ln_2")), *affine(p, f"h{i}.fc"))), *affine(p, f"h{i}.fc_proj"))
  return ops.linear(ops.layernorm(x, *affine(p, "ln_f")), p["wte"])


def jitted(model: Callable, batch) -> Callable:
  """A call of `model` on `batch` under TinyJit, the batch handed over as an argument (the weights are captured)."""
  from pytc import TinyJit
  step = TinyJit(lambda t: model(t).realize())
  return lambda: step(batch)


def gpt2_bench(cfg: GPT2Config = GPT2Config()) -> Bench:
  from pytc import Tensor
  weights = gpt2_params(cfg)
  tokens = np.random.default_rng(1).integers(0, cfg.vocab, (1, cfg.seq)).astype(np.int32)
  ours = {name: Tensor(a) for name, a in weights.items()}
  Tensor.realize(*ours.values())
  idx, ops = Tensor(tokens), pytc_ops()
  forward = lambda: gpt2_forward(cfg, ours, idx, ops).realize()
  ours_calls = {"pytc": forward, "pytc+TinyJit": jitted(lambda t: gpt2_forward(cfg, ours, t, ops), idx)}
  if not torch_available(): return Bench(ours_calls, {}, lambda: None, first_call=True)
  import torch
  theirs, ids, their_ops = {name: torch.from_numpy(a) for name, a in weights.items()}, torch.from_numpy(tokens.astype(np.int64)), torch_ops()
  peers = torch_peers(lambda t: gpt2_forward(cfg, theirs, t, their_ops), ids)
  return Bench(ours_calls, peers, lambda: compare("gpt2", forward().numpy(), peers["torch"]().numpy()), first_call=True)


# ResNet-18

def resnet18_params(seed: int = 0) -> dict[str, np.ndarray]:
  """He-initialized convolutions; BatchNorm with random weights, biases and running statistics (variance in [0.5, 1.5])."""
  rng, p = np.random.default_rng(seed), {}
  def conv(name: str, cout: int, cin: int, k: int): p[f"{name}.weight"] = normal(rng, (cout, cin, k, k), np.sqrt(2 / (cin * k * k)))
  def bn(name: str, c: int):
    p[f"{name}.weight"], p[f"{name}.bias"] = normal(rng, (c,), 0.1, 1.0), normal(rng, (c,), 0.1)
    p[f"{name}.running_mean"], p[f"{name}.running_var"] = normal(rng, (c,), 0.1), rng.uniform(0.5, 1.5, c).astype(np.float32)
  conv("conv1", 64, 3, 7)
  bn("bn1", 64)
  cin = 64
  for stage, cout in enumerate((64, 128, 256, 512)):
    for block in range(2):
      name = f"layer{stage + 1}.{block}"
      conv(f"{name}.conv1", cout, cin if block == 0 else cout, 3)
      bn(f"{name}.bn1", cout)
      conv(f"{name}.conv2", cout, cout, 3)
      bn(f"{name}.bn2", cout)
      if stage and not block:
        conv(f"{name}.downsample.0", cout, cin, 1)
        bn(f"{name}.downsample.1", cout)
    cin = cout
  p["fc.weight"], p["fc.bias"] = normal(rng, (1000, 512), np.sqrt(1 / 512)), normal(rng, (1000,), 0.01)
  return p


def resnet18_forward(p: dict, x, ops: SimpleNamespace):
  """Logits (batch, 1000) of images (batch, 3, 224, 224); the same code runs on pytc and torch tensors through `ops`."""
  x = ops.maxpool(ops.bn(ops.conv(x, p["conv1.weight"], 2, 3), p, "bn1").relu())
  for stage in range(4):
    for block in range(2):
      name, stride = f"layer{stage + 1}.{block}", 2 if stage and not block else 1
      out = ops.bn(ops.conv(x, p[f"{name}.conv1.weight"], stride, 1), p, f"{name}.bn1").relu()
      out = ops.bn(ops.conv(out, p[f"{name}.conv2.weight"], 1, 1), p, f"{name}.bn2")
      shortcut = ops.bn(ops.conv(x, p[f"{name}.downsample.0.weight"], stride, 0), p, f"{name}.downsample.1") if stride == 2 else x
      x = (out + shortcut).relu()
  return ops.linear(x.mean((2, 3)), p["fc.weight"], p["fc.bias"])


def resnet18_bench(batch: int) -> Bench:
  from pytc import Tensor
  from pytc.nn import BatchNorm
  weights = resnet18_params()
  images = np.random.default_rng(1).standard_normal((batch, 3, 224, 224), dtype=np.float32)
  ours = {name: Tensor(a) for name, a in weights.items()}
  norms: dict[str, BatchNorm] = {}
  for name in {n.rsplit(".", 1)[0] for n in weights if n.endswith("running_var")}:
    norms[name] = norm = BatchNorm(weights[f"{name}.weight"].shape[0])
    norm.weight, norm.bias, norm.running_mean, norm.running_var = (ours[f"{name}.{k}"] for k in ("weight", "bias", "running_mean", "running_var"))
  Tensor.realize(*ours.values())
  ops, x = pytc_ops(), Tensor(images)
  ops.bn = lambda t, p, name: norms[name](t)
  model = f"resnet18_b{batch}"
  forward = lambda: resnet18_forward(ours, x, ops).realize()
  ours_calls = {"pytc": forward, "pytc+TinyJit": jitted(lambda t: resnet18_forward(ours, t, ops), x)}
  if not torch_available(): return Bench(ours_calls, {}, lambda: None, first_call=batch == 1)
  import torch
  theirs, their_ops = {name: torch.from_numpy(a) for name, a in weights.items()}, torch_ops()
  peers = torch_peers(lambda t: resnet18_forward(theirs, t, their_ops), torch.from_numpy(images))
  return Bench(ours_calls, peers, lambda: compare(model, forward().numpy(), peers["torch"]().numpy()), first_call=batch == 1)


# one training step of an MLP

MLP_SIZES = ((64, 128), (128, 10))


def mlp_params(seed: int = 0) -> dict[str, np.ndarray]:
  rng, p = np.random.default_rng(seed), {}
  for i, (inp, out) in enumerate(MLP_SIZES):
    bound = 1 / np.sqrt(inp)
    p[f"l{i}.weight"], p[f"l{i}.bias"] = (rng.uniform(-bound, bound, s).astype(np.float32) for s in ((out, inp), (out,)))
  return p


def mlp_batches(count: int, batch: int = 64, seed: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
  rng = np.random.default_rng(seed)
  return [(rng.standard_normal((batch, 64), dtype=np.float32), rng.integers(0, 10, batch).astype(np.int32)) for _ in range(count)]


def pytc_trainer(weights: dict[str, np.ndarray], jit: bool) -> tuple[Callable, list]:
  """A step(x, y) -> loss (Tensors in, realized with the update) and the parameters, in weights' order."""
  from pytc import Tensor, TinyJit
  from pytc.nn import Linear
  from pytc.nn.optim import Adam
  from pytc.nn.state import get_parameters
  layers = [Linear(inp, out) for inp, out in MLP_SIZES]
  for i, layer in enumerate(layers): layer.weight, layer.bias = Tensor(weights[f"l{i}.weight"]), Tensor(weights[f"l{i}.bias"])
  optimizer = Adam(get_parameters(layers), lr=1e-3)
  def step(x: Tensor, y: Tensor) -> Tensor:
    Tensor.training = True  # optimizers step only in training mode
    loss = layers[1](layers[0](x).relu()).sparse_categorical_crossentropy(y)
    optimizer.zero_grad()
    loss.backward()
    return loss.realize(*optimizer.schedule_step())
  return TinyJit(step) if jit else step, [t for layer in layers for t in (layer.weight, layer.bias)]


def torch_trainer(weights: dict[str, np.ndarray], compile_forward: bool = False) -> tuple[Callable, list]:
  """A step(x, y) -> loss and the parameters; with compile_forward the model's forward goes through torch.compile."""
  import torch
  import torch.nn.functional as F
  model = torch.nn.Sequential(torch.nn.Linear(*MLP_SIZES[0]), torch.nn.ReLU(), torch.nn.Linear(*MLP_SIZES[1]))
  model.load_state_dict({f"{2 * i}.{kind}": torch.tensor(weights[f"l{i}.{kind}"]) for i in range(len(MLP_SIZES)) for kind in ("weight", "bias")})
  optimizer, forward = torch.optim.Adam(model.parameters(), lr=1e-3), torch.compile(model, dynamic=False) if compile_forward else model
  def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    optimizer.zero_grad()
    loss = F.cross_entropy(forward(x), y)
    loss.backward()
    optimizer.step()
    return loss
  return step, list(model.parameters())


def train_mlp_bench(check_steps: int = 6) -> Bench:
  from pytc import Tensor
  weights, batches = mlp_params(), mlp_batches(16)
  def pytc_call(step: Callable) -> Callable:
    data = itertools.cycle(batches)
    def call():
      x, y = next(data)
      return step(Tensor(x), Tensor(y))
    return call
  ours = {"pytc": pytc_call(pytc_trainer(weights, jit=False)[0]), "pytc+TinyJit": pytc_call(pytc_trainer(weights, jit=True)[0])}
  if not torch_available(): return Bench(ours, {}, lambda: None, seconds=0.05)
  import torch
  torch_batches = [(torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))) for x, y in batches]
  def torch_call(step: Callable) -> Callable:
    data = itertools.cycle(torch_batches)
    return lambda: step(*next(data))
  peers = {"torch": torch_call(torch_trainer(weights)[0]), "torch.compile": torch_call(torch.compile(torch_trainer(weights)[0], dynamic=False))}
  forward_only = torch_call(torch_trainer(weights, compile_forward=True)[0])
  fallbacks = {"torch.compile": (forward_only, "of the whole step failed: only the model's forward is compiled")}

  def check() -> float:
    """Weights after check_steps steps from the same start on the same batches: pytc plainly and under TinyJit against torch eager."""
    reference_step, reference = torch_trainer(weights)
    for x, y in torch_batches[:check_steps]: reference_step(x, y)
    expected = [t.detach().numpy() for t in reference]
    error = 0.0
    for jit in (False, True):
      step, params = pytc_trainer(weights, jit)
      for x, y in batches[:check_steps]: step(Tensor(x), Tensor(y))
      for name, ours, theirs in zip(weights, params, expected):
        if not np.allclose(moved := ours.numpy(), theirs, rtol=1e-4, atol=1e-4):
          raise SystemExit(f"train_mlp: {name} after {check_steps} steps differs from torch's{' under TinyJit' if jit else ''} "
                           f"(largest difference {np.abs(moved - theirs).max():.2e})")
        error = max(error, float(np.abs(moved - theirs).max()))
    if all(np.array_equal(t, weights[name]) for name, t in zip(weights, expected)): raise SystemExit("train_mlp: the weights did not move")
    return error
  return Bench(ours, peers, check, seconds=0.05, fallbacks=fallbacks)


BENCHES: dict[str, Callable[[], Bench]] = {"gpt2": gpt2_bench, "resnet18_b1": lambda: resnet18_bench(1), "resnet18_b32": lambda: resnet18_bench(32),
                                           "train_mlp": train_mlp_bench}


def torch_graph_breaks() -> int:
  """The graph breaks torch.compile met so far in this process."""
  if not torch_available(): return 0
  from torch._dynamo.utils import counters
  return sum(counters["graph_break"].values())


def run(bench: Bench, rounds: int) -> dict:
  from pytc import GlobalCounters
  result: dict = {"notes": bench.notes}
  if bench.first_call: result["pytc_first_call_ms"] = pytc_first_call(bench.pytc["pytc"])
  result["max_error"] = bench.check()
  breaks = torch_graph_breaks()
  for impl, fn in list(bench.peers.items()):
    try: result.setdefault("peer_first_call_ms", {})[impl] = timed(fn) * 1e3  # torch.compile compiles here
    except Exception as e:
      why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
      if impl not in bench.fallbacks:
        bench.notes.append(f"{impl} left out ({why})")
        del bench.peers[impl]
        continue
      fn, note = bench.fallbacks[impl]
      bench.peers[impl] = fn
      bench.notes.append(f"{impl} {note} ({why})")
      result["peer_first_call_ms"][impl] = timed(fn) * 1e3
  if "torch.compile" in bench.peers and (breaks := torch_graph_breaks() - breaks): bench.notes.append(f"torch.compile: {breaks} graph breaks")
  kernels = {}
  for impl, fn in bench.pytc.items():
    fn(), fn()  # a TinyJit captures on its second call
    GlobalCounters.reset()
    fn()
    kernels[impl] = GlobalCounters.kernel_count
  result["pytc_kernels"] = kernels
  medians = result["medians_ms"] = {impl: s * 1e3 for impl, s in interleaved({**bench.pytc, **bench.peers}, rounds, bench.seconds).items()}
  if bench.peers:
    best = min(medians[impl] for impl in bench.peers)
    result["pytc_over_torch"] = {impl: medians[impl] / medians["torch"] for impl in bench.pytc}
    result["pytc_over_best_peer"] = {impl: medians[impl] / best for impl in bench.pytc}
  return result


def report(name: str, r: dict) -> None:
  print(f"{name:<13} " + "  ".join(f"{impl} {ms:9.2f} ms" for impl, ms in r["medians_ms"].items()))
  for impl, kernels in r["pytc_kernels"].items():
    ratios = f"  /torch {r['pytc_over_torch'][impl]:.2f}x  /best peer {r['pytc_over_best_peer'][impl]:.2f}x" if "pytc_over_torch" in r else ""
    print(f"{'':<13} {impl}:{ratios}  kernels {kernels}")
  line = f"{'':<13} " + ("not checked: no torch" if r["max_error"] is None else f"largest error {r['max_error']:.1e} of the output's scale")
  if first := r.get("pytc_first_call_ms"): line += f"  pytc first call {first['cold']:.0f} ms (disk cache {first['disk_cache']:.0f} ms)"
  if peer_first := r.get("peer_first_call_ms"): line += "  " + "  ".join(f"{impl} first call {ms:.0f} ms" for impl, ms in peer_first.items())
  print(line)
  for note in r["notes"]: print(f"{'':<13} note: {note}")


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--only", help="run models whose name contains this")
  parser.add_argument("--json", help="write the results here")
  args = parser.parse_args()
  with cold_caches("pytc-models-"):
    results: dict = {**peers(), "models": {}}
    for name, make in BENCHES.items():
      if args.only and args.only not in name: continue
      r = results["models"][name] = run(make(), args.rounds)
      report(name, r)
      gc.collect()
  if args.json:
    with open(args.json, "w") as f: json.dump(results, f, indent=2)


if __name__ == "__main__":
  main()
