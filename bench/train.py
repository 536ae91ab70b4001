"""Training steps on the CPU: pytc (plainly and under TinyJit) against torch eager and torch.compile, in one run.

- resnet18_b2_64, resnet18_b8_112: ResNet-18 (BatchNorm in training mode, SGD with momentum 0.9) on a batch of 2 at 64x64 and
  of 8 at 112x112;
- gpt_l4, gpt_l12: a GPT-2-style stack (pre-LN blocks, d 768, 12 heads, causal attention, tanh GELU; a 8192-token vocabulary,
  the head tied to the embedding) of 4 and 12 layers on a batch of 4 x 128 tokens, AdamW;
- mlp: the digits MLP of examples/train_digits.py (64-128-10, Adam) on a batch of 64.
Every implementation starts from the same float32 weights (NumPy, fixed seed) and sees the same batches. First the losses of
--check-steps steps of pytc under TinyJit are compared with torch eager's (relative 1e-4 unless --tolerance; beyond it only
where torch's float32 training has left its float64 one by more, pytc's losses as close to the float64 ones, see check); a
mismatch stops the run. The first of those steps is pytc's first step with nothing cached (graph, schedule, compile; an empty kernel
cache). Then the implementations run interleaved round by round (bench/timing.py): the median ms per step of each, pytc's time
over torch eager's and over the faster peer's, pytc's kernels per step, each peer's first step (torch.compile compiles there).

--convs adds the convolutions of a ResNet-18 at the first ResNet workload's batch and size: the forward and both gradients
(input and weight, from backward(g) of the convolution alone) of each distinct layer, each under TinyJit (the kernels' rate,
not the graph building of a call), as GFLOP/s, and each gradient's rate over the forward's.

  python bench/train.py [--only NAME] [--rounds N] [--check-steps N] [--convs] [--json out.json]
"""
from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from timing import cold_caches, interleaved, peers, timed, torch_available  # first: it sets OPENBLAS_THREAD_TIMEOUT before NumPy loads

# isort: split
import numpy as np


def normal(rng: np.random.Generator, shape: tuple[int, ...], std: float, mean: float = 0.0) -> np.ndarray:
  return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std) + np.float32(mean)).astype(np.float32)


@dataclass(frozen=True)
class Workload:
  params: Callable[[], dict[str, np.ndarray]]
  batches: Callable[[int], list[tuple[np.ndarray, np.ndarray]]]  # count -> (input, int labels) pairs
  pytc_step: Callable  # (weights, jit) -> (step(x, y) -> loss Tensor realized with the update)
  torch_step: Callable  # (weights, compiled) -> step(x, y) -> loss tensor
  rounds_seconds: float = 0.2


def updating(optimizer, loss_of: Callable) -> Callable:
  """A torch training step(x, y) -> loss: gradients zeroed, loss_of(x, y) differentiated, the optimizer stepped."""
  def step(x, y):
    optimizer.zero_grad()
    loss = loss_of(x, y)
    loss.backward()
    optimizer.step()
    return loss
  return step


# ResNet-18: (name, in, out, stride) per convolution; BatchNorm after each

def resnet18_layout() -> list[tuple[str, int, int, int, int]]:
  """(name, in channels, out channels, kernel, stride) of each convolution, in order."""
  convs, cin = [("conv1", 3, 64, 7, 2)], 64
  for stage, cout in enumerate((64, 128, 256, 512)):
    for block in range(2):
      name, stride = f"layer{stage + 1}.{block}", 2 if stage and not block else 1
      convs += [(f"{name}.conv1", cin if block == 0 else cout, cout, 3, stride), (f"{name}.conv2", cout, cout, 3, 1)]
      if stage and not block: convs.append((f"{name}.downsample", cin, cout, 1, stride))
    cin = cout
  return convs


def resnet18_params(seed: int = 0) -> dict[str, np.ndarray]:
  rng, p = np.random.default_rng(seed), {}
  for name, cin, cout, k, _ in resnet18_layout():
    p[f"{name}.weight"] = normal(rng, (cout, cin, k, k), np.sqrt(2 / (cin * k * k)))
    p[f"{name}.bn.weight"], p[f"{name}.bn.bias"] = normal(rng, (cout,), 0.1, 1.0), normal(rng, (cout,), 0.1)
  p["fc.weight"], p["fc.bias"] = normal(rng, (1000, 512), np.sqrt(1 / 512)), normal(rng, (1000,), 0.01)
  return p


def resnet18_forward(x, conv: Callable, bn: Callable, fc: Callable, maxpool: Callable):
  """Logits of images; conv(name, x, stride, padding) and bn(name, x) are the implementation's layers."""
  x = maxpool(bn("conv1", conv("conv1", x, 2, 3)).relu())
  for stage in range(4):
    for block in range(2):
      name, stride = f"layer{stage + 1}.{block}", 2 if stage and not block else 1
      out = bn(f"{name}.conv2", conv(f"{name}.conv2", bn(f"{name}.conv1", conv(f"{name}.conv1", x, stride, 1)).relu(), 1, 1))
      shortcut = bn(f"{name}.downsample", conv(f"{name}.downsample", x, stride, 0)) if stage and not block else x
      x = (out + shortcut).relu()
  return fc(x.mean((2, 3)))


def image_batches(batch: int, size: int) -> Callable[[int], list]:
  def make(count: int, seed: int = 1) -> list:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((batch, 3, size, size), dtype=np.float32), rng.integers(0, 1000, batch).astype(np.int32)) for _ in range(count)]
  return make


def pytc_resnet18(weights: dict[str, np.ndarray], jit: bool) -> Callable:
  from pytc import Tensor, TinyJit
  from pytc.nn import BatchNorm
  from pytc.nn.optim import SGD
  params = {name: Tensor(a, requires_grad=True) for name, a in weights.items()}
  norms = {}
  for name, _, cout, _, _ in resnet18_layout():
    norms[name] = norm = BatchNorm(cout)
    norm.weight, norm.bias = params[f"{name}.bn.weight"], params[f"{name}.bn.bias"]
  # the running statistics too, as tinygrad's get_parameters(model) gives them: an optimizer realizes them with every step
  # (torch updates its own in place); left out, each step's updates would chain onto the last, never computed
  running = [t for norm in norms.values() for t in (norm.running_mean, norm.running_var, norm.num_batches_tracked)]
  optimizer = SGD(list(params.values()) + running, lr=0.001, momentum=0.9)
  conv = lambda name, x, stride, padding: x.conv2d(params[f"{name}.weight"], stride=stride, padding=padding)
  fc = lambda x: x.linear(params["fc.weight"].T, params["fc.bias"])
  def step(x: Tensor, y: Tensor) -> Tensor:
    Tensor.training = True
    logits = resnet18_forward(x, conv, lambda name, t: norms[name](t), fc, lambda t: t.max_pool2d((3, 3), 2, padding=1))
    loss = logits.sparse_categorical_crossentropy(y)
    optimizer.zero_grad()
    loss.backward()
    return loss.realize(*optimizer.schedule_step())
  return TinyJit(step) if jit else step


def torch_resnet18(weights: dict[str, np.ndarray], compiled: bool) -> Callable:
  import torch
  import torch.nn.functional as F
  class Model(torch.nn.Module):
    def __init__(self):
      super().__init__()
      self.convs = torch.nn.ModuleDict({n.replace(".", "_"): torch.nn.Conv2d(i, o, k, s, bias=False) for n, i, o, k, s in resnet18_layout()})
      self.norms = torch.nn.ModuleDict({n.replace(".", "_"): torch.nn.BatchNorm2d(o) for n, _, o, _, _ in resnet18_layout()})
      self.fc = torch.nn.Linear(512, 1000)
    def forward(self, x):
      conv = lambda name, t, stride, padding: F.conv2d(t, self.convs[name.replace(".", "_")].weight, stride=stride, padding=padding)
      return resnet18_forward(x, conv, lambda name, t: self.norms[name.replace(".", "_")](t), self.fc, lambda t: F.max_pool2d(t, 3, 2, 1))
  model = Model()
  with torch.no_grad():
    for name, *_ in resnet18_layout():
      key = name.replace(".", "_")
      model.convs[key].weight.copy_(torch.from_numpy(weights[f"{name}.weight"]))
      model.norms[key].weight.copy_(torch.from_numpy(weights[f"{name}.bn.weight"]))
      model.norms[key].bias.copy_(torch.from_numpy(weights[f"{name}.bn.bias"]))
    model.fc.weight.copy_(torch.from_numpy(weights["fc.weight"]))
    model.fc.bias.copy_(torch.from_numpy(weights["fc.bias"]))
  model.train()
  optimizer, forward = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9), torch.compile(model) if compiled else model
  return updating(optimizer, lambda x, y: F.cross_entropy(forward(x), y))


# a GPT-2-style stack

GPT_DIM, GPT_HEADS, GPT_VOCAB, GPT_SEQ, GPT_BATCH = 768, 12, 8192, 128, 4


def gpt_params(layers: int, seed: int = 0) -> dict[str, np.ndarray]:
  rng, d = np.random.default_rng(seed), GPT_DIM
  p = {"wte": normal(rng, (GPT_VOCAB, d), 0.02), "wpe": normal(rng, (GPT_SEQ, d), 0.01), "ln_f.weight": normal(rng, (d,), 0.1, 1.0),
       "ln_f.bias": normal(rng, (d,), 0.02)}
  for i in range(layers):
    for name, (out, inp) in {"attn": (3 * d, d), "proj": (d, d), "fc": (4 * d, d), "fc_proj": (d, 4 * d)}.items():
      p[f"h{i}.{name}.weight"], p[f"h{i}.{name}.bias"] = normal(rng, (out, inp), 0.02), normal(rng, (out,), 0.02)
    for name in ("ln_1", "ln_2"): p[f"h{i}.{name}.weight"], p[f"h{i}.{name}.bias"] = normal(rng, (d,), 0.1, 1.0), normal(rng, (d,), 0.02)
  return p


def gpt_forward(p: dict, idx, positions, linear: Callable, layernorm: Callable, attention: Callable, gelu: Callable):
  """Logits (batch, seq, vocab) of token ids; the same code runs on pytc and torch tensors."""
  batch, seq = idx.shape
  d, layers = GPT_DIM, sum(1 for name in p if name.endswith(".attn.weight"))
  x = p["wte"][idx] + p["wpe"][positions]
  for i in range(layers):
    q, k, v = linear(layernorm(x, f"h{i}.ln_1"), f"h{i}.attn").split(d, dim=-1)
    q, k, v = (t.reshape(batch, seq, GPT_HEADS, d // GPT_HEADS).transpose(1, 2) for t in (q, k, v))
    x = x + linear(attention(q, k, v).transpose(1, 2).reshape(batch, seq, d), f"h{i}.proj")
    x = x + linear(gelu(linear(layernorm(x, f"h{i}.ln_2"), f"h{i}.fc")), f"h{i}.fc_proj")
  return layernorm(x, "ln_f") @ p["wte"].transpose(0, 1)


def token_batches(count: int, seed: int = 1) -> list:
  rng = np.random.default_rng(seed)
  tokens = (rng.integers(0, GPT_VOCAB, (GPT_BATCH, GPT_SEQ + 1)) for _ in range(count))
  return [(t[:, :-1].astype(np.int32), t[:, 1:].astype(np.int32)) for t in tokens]


def pytc_gpt(weights: dict[str, np.ndarray], jit: bool) -> Callable:
  from pytc import Tensor, TinyJit
  from pytc.nn.optim import AdamW
  p = {name: Tensor(a, requires_grad=True) for name, a in weights.items()}
  optimizer, positions = AdamW(list(p.values()), lr=1e-4, weight_decay=0.01), Tensor.arange(GPT_SEQ)
  linear = lambda x, name: x.linear(p[f"{name}.weight"].T, p[f"{name}.bias"])
  layernorm = lambda x, name: x.layernorm() * p[f"{name}.weight"] + p[f"{name}.bias"]
  attention = lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True)
  def step(x: Tensor, y: Tensor) -> Tensor:
    Tensor.training = True
    loss = gpt_forward(p, x, positions, linear, layernorm, attention, lambda t: t.gelu()).sparse_categorical_crossentropy(y)
    optimizer.zero_grad()
    loss.backward()
    return loss.realize(*optimizer.schedule_step())
  return TinyJit(step) if jit else step


def torch_gpt(weights: dict[str, np.ndarray], compiled: bool) -> Callable:
  import torch
  import torch.nn.functional as F
  p = torch.nn.ParameterDict({name.replace(".", "_"): torch.nn.Parameter(torch.from_numpy(a.copy())) for name, a in weights.items()})
  get = lambda name: p[name.replace(".", "_")]
  positions = torch.arange(GPT_SEQ)
  linear = lambda x, name: F.linear(x, get(f"{name}.weight"), get(f"{name}.bias"))
  layernorm = lambda x, name: F.layer_norm(x, (GPT_DIM,), get(f"{name}.weight"), get(f"{name}.bias"))
  attention = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)
  names = {name: get(name) for name in weights}
  def loss_of(x, y):
    logits = gpt_forward(names, x, positions, linear, layernorm, attention, lambda t: F.gelu(t, approximate="tanh"))
    return F.cross_entropy(logits.reshape(-1, GPT_VOCAB), y.reshape(-1))
  optimizer, loss_fn = torch.optim.AdamW(p.parameters(), lr=1e-4, weight_decay=0.01), torch.compile(loss_of) if compiled else loss_of
  return updating(optimizer, loss_fn)


# the digits MLP

def mlp_params(seed: int = 0) -> dict[str, np.ndarray]:
  rng, p = np.random.default_rng(seed), {}
  for i, (inp, out) in enumerate(((64, 128), (128, 10))):
    bound = 1 / np.sqrt(inp)
    p[f"l{i}.weight"], p[f"l{i}.bias"] = (rng.uniform(-bound, bound, s).astype(np.float32) for s in ((out, inp), (out,)))
  return p


def digit_batches(count: int, seed: int = 1) -> list:
  rng = np.random.default_rng(seed)
  return [(rng.uniform(0, 1, (64, 64)).astype(np.float32), rng.integers(0, 10, 64).astype(np.int32)) for _ in range(count)]


def pytc_mlp(weights: dict[str, np.ndarray], jit: bool) -> Callable:
  from pytc import Tensor, TinyJit
  from pytc.nn.optim import Adam
  p = {name: Tensor(a, requires_grad=True) for name, a in weights.items()}
  optimizer = Adam(list(p.values()), lr=1e-3)
  def step(x: Tensor, y: Tensor) -> Tensor:
    Tensor.training = True  # optimizers step only in training mode
    loss = x.linear(p["l0.weight"].T, p["l0.bias"]).relu().linear(p["l1.weight"].T, p["l1.bias"]).sparse_categorical_crossentropy(y)
    optimizer.zero_grad()
    loss.backward()
    return loss.realize(*optimizer.schedule_step())
  return TinyJit(step) if jit else step


def torch_mlp(weights: dict[str, np.ndarray], compiled: bool) -> Callable:
  import torch
  import torch.nn.functional as F
  p = {name: torch.nn.Parameter(torch.from_numpy(a.copy())) for name, a in weights.items()}
  forward = lambda x: F.linear(F.linear(x, p["l0.weight"], p["l0.bias"]).relu(), p["l1.weight"], p["l1.bias"])
  optimizer, forward = torch.optim.Adam(p.values(), lr=1e-3), torch.compile(forward) if compiled else forward
  return updating(optimizer, lambda x, y: F.cross_entropy(forward(x), y))


WORKLOADS: dict[str, Workload] = {
  "resnet18_b2_64": Workload(resnet18_params, image_batches(2, 64), pytc_resnet18, torch_resnet18),
  "resnet18_b8_112": Workload(resnet18_params, image_batches(8, 112), pytc_resnet18, torch_resnet18),
  "gpt_l4": Workload(lambda: gpt_params(4), token_batches, pytc_gpt, torch_gpt, rounds_seconds=0.5),
  "gpt_l12": Workload(lambda: gpt_params(12), token_batches, pytc_gpt, torch_gpt, rounds_seconds=1.0),
  "mlp": Workload(mlp_params, digit_batches, pytc_mlp, torch_mlp, rounds_seconds=0.05),
}


def feeder(step: Callable, batches: list, convert: Callable) -> Callable:
  """A call of step on the next batch (round-robin), converted for the implementation."""
  data = itertools.cycle([tuple(convert(a) for a in batch) for batch in batches])
  return lambda: step(*next(data))


def pytc_tensor(a: np.ndarray):
  """A batch as data, as torch's tensors from NumPy are: no gradient. (backward() gives one to every float tensor whose
  requires_grad is not False; feeder's tensors serve every fourth step, and their gradients would add up step after
  step, a graph that grows without end.)"""
  from pytc import Tensor
  return Tensor(a, requires_grad=False)


def torch_tensor(a: np.ndarray):
  import torch
  return torch.from_numpy(a.astype(np.int64) if a.dtype == np.int32 else a)


def torch_losses(w: Workload, weights: dict[str, np.ndarray], batches: list, float64: bool = False) -> list[float]:
  import torch
  widen = (lambda a: a.astype(np.float64) if a.dtype == np.float32 else a) if float64 else (lambda a: a)
  previous = torch.get_default_dtype()
  torch.set_default_dtype(torch.float64 if float64 else torch.float32)
  try:
    step = w.torch_step({name: widen(a) for name, a in weights.items()}, False)
    return [float(step(torch_tensor(widen(x)), torch_tensor(y)).item()) for x, y in batches]
  finally: torch.set_default_dtype(previous)


def relative_errors(losses: list[float], reference: list[float]) -> list[float]:
  return [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, reference)]


def check(name: str, w: Workload, steps: int, tolerance: float) -> dict:
  """pytc under TinyJit against torch eager over `steps` steps, and pytc's first step. A loss may differ from torch's by more
  than `tolerance` (relative) only once torch's own float32 training has left its float64 one by more, and only while pytc's
  loss stays within twice that float32 noise (the largest so far: training on small batches amplifies rounding step by step
  and chaotically, so torch's float32 may return close to float64 at one step and leave it again at the next) of the float64
  loss: then no float32 implementation can be closer to torch's, and pytc is as close to the exact training. SystemExit
  otherwise."""
  weights, batches = w.params(), w.batches(steps)
  ours, start, first = w.pytc_step(weights, True), time.perf_counter(), None
  losses = []
  for x, y in batches:
    losses.append(float(ours(pytc_tensor(x), pytc_tensor(y)).item()))
    first = first or time.perf_counter() - start
  result = {"pytc_first_step_ms": first * 1e3, "pytc_losses": losses}
  if not torch_available(): return result
  reference = torch_losses(w, weights, batches)
  errors = relative_errors(losses, reference)
  result.update(torch_losses=reference, largest_relative_loss_error=max(errors))
  if max(errors) <= tolerance: return result
  exact = torch_losses(w, weights, batches, float64=True)
  noise = relative_errors(reference, exact)
  from_exact = relative_errors(losses, exact)
  envelope = list(itertools.accumulate(noise, max))
  result.update(torch_float32_noise=noise, pytc_float64_error=from_exact)
  if bad := [i for i, e in enumerate(errors) if e > tolerance and (envelope[i] < tolerance or from_exact[i] > 2 * envelope[i])]:
    i = bad[0]
    raise SystemExit(f"{name}: pytc's loss at step {i} differs from torch's by {errors[i]:.2e} and from torch's float64 loss by "
                     f"{from_exact[i]:.2e} (relative), torch's float32 from its float64 by up to {envelope[i]:.2e} so far: pytc {losses}, "
                     f"torch {reference}, torch float64 {exact}")
  return result


def run(name: str, w: Workload, rounds: int, check_steps: int, tolerance: float) -> dict:
  from pytc import GlobalCounters
  result = check(name, w, check_steps, tolerance)
  weights, batches = w.params(), w.batches(4)
  impls = {"pytc": feeder(w.pytc_step(weights, False), batches, pytc_tensor),
           "pytc+TinyJit": feeder(w.pytc_step(weights, True), batches, pytc_tensor)}
  kernels = {}
  for impl, fn in impls.items():
    fn(), fn()  # a TinyJit captures on its second call
    GlobalCounters.reset()
    fn()
    kernels[impl] = GlobalCounters.kernel_count
  result["pytc_kernels"] = kernels
  peers = {}
  if torch_available():
    for impl, compiled in (("torch", False), ("torch.compile", True)):
      peers[impl] = feeder(w.torch_step(weights, compiled), batches, torch_tensor)
      result.setdefault("peer_first_step_ms", {})[impl] = timed(peers[impl]) * 1e3
  medians = result["medians_ms"] = {impl: s * 1e3 for impl, s in interleaved({**impls, **peers}, rounds, w.rounds_seconds).items()}
  if peers:
    best = min(medians[impl] for impl in peers)
    result["pytc_over_torch"] = {impl: medians[impl] / medians["torch"] for impl in impls}
    result["pytc_over_best_peer"] = {impl: medians[impl] / best for impl in impls}
  return result


def report(name: str, r: dict) -> None:
  print(f"{name:<16} " + "  ".join(f"{impl} {ms:9.2f} ms" for impl, ms in r["medians_ms"].items()))
  for impl, kernels in r["pytc_kernels"].items():
    ratios = f"  /torch {r['pytc_over_torch'][impl]:.2f}x  /best peer {r['pytc_over_best_peer'][impl]:.2f}x" if "pytc_over_torch" in r else ""
    print(f"{'':<16} {impl}:{ratios}  kernels {kernels}")
  line = f"{'':<16} pytc first step {r['pytc_first_step_ms']:.0f} ms"
  if "largest_relative_loss_error" in r:
    line += f"  losses over {len(r['pytc_losses'])} steps within {r['largest_relative_loss_error']:.1e} of torch's"
  if "torch_float32_noise" in r:
    line += (f" (torch float32 from float64: up to {max(r['torch_float32_noise']):.1e}; pytc from torch float64: up to "
             f"{max(r['pytc_float64_error']):.1e})")
  if peer_first := r.get("peer_first_step_ms"): line += "  " + "  ".join(f"{impl} first step {ms:.0f} ms" for impl, ms in peer_first.items())
  print(line)


def conv_inputs(size: int) -> dict[str, int]:
  """The input size of each ResNet-18 convolution on images of `size`."""
  sizes, spatial = {"conv1": size}, ((size + 6 - 7) // 2 + 1 + 2 - 3) // 2 + 1  # after conv1 and the max pool
  for name, _, _, _, stride in resnet18_layout()[1:]:
    block = name.rsplit(".", 1)[0]
    sizes[name] = sizes[f"{block}.conv1"] if name.endswith("downsample") else spatial
    if name.endswith("conv1"): spatial = (spatial + 2 - 3) // stride + 1
  return sizes


def conv_rates(batch: int, size: int, rounds: int) -> dict:
  """GFLOP/s of the forward, input gradient and weight gradient of each distinct ResNet-18 convolution at this batch and size,
  each under TinyJit: the kernels' rate, without the graph building and scheduling of each call."""
  from pytc import Tensor, TinyJit
  rng, rates, inputs = np.random.default_rng(0), {}, conv_inputs(size)
  for name, cin, cout, k, stride in resnet18_layout():
    spatial, padding = inputs[name], k // 2
    out, label = (spatial + 2 * padding - k) // stride + 1, f"{cin}->{cout} {k}x{k}/{stride} at {spatial}"
    if label in rates: continue
    x = Tensor(rng.standard_normal((batch, cin, spatial, spatial), dtype=np.float32), requires_grad=True)
    weight = Tensor(normal(rng, (cout, cin, k, k), 0.1), requires_grad=True)
    g = Tensor(rng.standard_normal((batch, cout, out, out), dtype=np.float32))
    conv = lambda x=x, weight=weight, stride=stride, padding=padding: x.conv2d(weight, stride=stride, padding=padding)
    def gradient(of: Tensor, conv=conv, g=g, x=x, weight=weight) -> Callable:
      def call():
        x.grad = weight.grad = None
        conv().backward(g)
        return of.grad.realize()
      return call
    calls = {"forward": TinyJit(lambda conv=conv: conv().realize()), "input_grad": TinyJit(gradient(x)), "weight_grad": TinyJit(gradient(weight))}
    flops = 2 * batch * cin * cout * out * out * k * k
    rate = {kind: flops / (s * 1e9) for kind, s in interleaved(calls, rounds, 0.02).items()}
    rates[label] = {"gflops": rate, "input_grad_over_forward": rate["input_grad"] / rate["forward"],
                    "weight_grad_over_forward": rate["weight_grad"] / rate["forward"]}
    over = rates[label]
    print(f"  {label:<24} forward {rate['forward']:6.1f}  input grad {rate['input_grad']:6.1f} ({over['input_grad_over_forward']:.2f}x)"
          f"  weight grad {rate['weight_grad']:6.1f} ({over['weight_grad_over_forward']:.2f}x) GFLOP/s")
  return rates


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--only", help="run workloads whose name contains this")
  parser.add_argument("--check-steps", type=int, default=20)
  parser.add_argument("--tolerance", type=float, default=1e-4, help="largest relative difference of a loss from torch's")
  parser.add_argument("--convs", action="store_true", help="also the GFLOP/s of ResNet-18's convolutions and their gradients")
  parser.add_argument("--json", help="write the results here")
  args = parser.parse_args()
  with cold_caches("pytc-train-"):
    results: dict = {**peers(), "workloads": {}}
    for name, workload in WORKLOADS.items():
      if args.only and args.only not in name: continue
      report(name, r := run(name, workload, args.rounds, args.check_steps, args.tolerance))
      results["workloads"][name] = r
    if args.convs:
      print("ResNet-18 convolutions, batch 2 at 64x64 (input gradient of the 7x7 stem: not part of a training step):")
      results["convs"] = conv_rates(2, 64, args.rounds)
  if args.json:
    with open(args.json, "w") as f: json.dump(results, f, indent=2)


if __name__ == "__main__":
  main()
