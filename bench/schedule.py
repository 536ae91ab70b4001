"""Scheduling time of a GPT-2-small-sized transformer forward graph (12 layers, d_model 768, 12 heads,
MLP 3072, vocab 50257, sequence 128, batch 1), in pytc and, when it is installed, in tinygrad.

  cold:   the first schedule of the graph (all of pytc's scheduling passes run)
  cached: a new graph with the same structure on new buffers (the structural cache answers)

pytc's input is the embedded sequence (token + position embeddings) and an additive causal mask;
tinygrad's graph is built the same way from the same tensors' shapes.

  python bench/schedule.py [--layers N] [--repeat N] [--json out.json]
"""
import argparse
import json
import math
import time


def gpt2_forward(Tensor, layers: int, d: int = 768, heads: int = 12, seq: int = 128, vocab: int = 50257):
  """The forward graph over uninitialized weights (`Tensor.empty`): the schedule depends only on shapes."""
  def w(*shape): return Tensor.empty(*shape)
  def norm(x): return x.layernorm() * w(d) + w(d)
  x, mask = w(1, seq, d), w(1, 1, seq, seq)
  for _ in range(layers):
    qkv = norm(x) @ w(d, 3 * d) + w(3 * d)
    q, k, v = [qkv.shrink((None, None, (i * d, (i + 1) * d))).reshape(1, seq, heads, d // heads).permute(0, 2, 1, 3) for i in range(3)]
    attention = ((q @ k.transpose(-2, -1)) * (1 / math.sqrt(d // heads)) + mask).softmax(-1) @ v
    x = x + attention.permute(0, 2, 1, 3).reshape(1, seq, d) @ w(d, d) + w(d)
    x = x + (norm(x) @ w(d, 4 * d) + w(4 * d)).gelu() @ w(4 * d, d) + w(d)
  return norm(x) @ w(d, vocab)


def time_pytc(layers: int) -> dict:
  from pytc import Tensor
  start = time.perf_counter()
  kernels = len(gpt2_forward(Tensor, layers).schedule())
  cold = time.perf_counter() - start
  out = gpt2_forward(Tensor, layers)
  start = time.perf_counter()
  assert len(out.schedule()) == kernels
  cached = time.perf_counter() - start
  return {"cold_ms": cold * 1e3, "cached_ms": cached * 1e3, "kernels": kernels}


def time_tinygrad(layers: int) -> dict | None:
  try:
    import tinygrad
    from tinygrad import Device, Tensor
    Device.DEFAULT  # noqa: B018 - raises where tinygrad finds no usable device (say, no C compiler for its CPU device)
  except (ImportError, RuntimeError):
    return None
  def schedule(out):
    return (out.schedule_linear() if hasattr(out, "schedule_linear") else out.schedule())
  out = gpt2_forward(Tensor, layers)
  start = time.perf_counter()
  scheduled = schedule(out)
  cold = time.perf_counter() - start
  out = gpt2_forward(Tensor, layers)
  start = time.perf_counter()
  schedule(out)
  cached = time.perf_counter() - start
  kernels = len(scheduled.src) if hasattr(scheduled, "src") else len(scheduled)
  return {"cold_ms": cold * 1e3, "cached_ms": cached * 1e3, "kernels": kernels, "version": getattr(tinygrad, "__version__", "?")}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--layers", type=int, default=12)
  parser.add_argument("--json", help="write the results here")
  args = parser.parse_args()
  results = {"pytc": time_pytc(args.layers), "tinygrad": time_tinygrad(args.layers), "layers": args.layers}
  for name in ("pytc", "tinygrad"):
    r = results[name]
    if r is None: print(f"{name:<9} not installed, or without a usable device")
    else: print(f"{name:<9} cold {r['cold_ms']:9.1f} ms   cached {r['cached_ms']:8.3f} ms   kernels {r['kernels']}")
  if results["tinygrad"]:
    print(f"cold ratio pytc/tinygrad: {results['pytc']['cold_ms'] / results['tinygrad']['cold_ms']:.2f}")
  if args.json:
    with open(args.json, "w") as f: json.dump(results, f, indent=2)


if __name__ == "__main__":
  main()
