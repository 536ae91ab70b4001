"""GPT-2 decoding speed: steady milliseconds per token of a decode step (KV cache, the position a bound Variable, under
TinyJit), pytc's examples/gpt2.py against tinygrad's examples/gpt2.py on the same configuration, over a sweep of sizes.

  python bench/decode.py [--tinygrad-src PATH] [--sizes tiny small medium] [--tokens 40] [--json out.json]

Each side builds the model with random weights, prefills 4 tokens, decodes 3 steps to compile and capture, then times
`--tokens` more steps one by one (the step's call to its token read back); the median is reported, with pytc's over
tinygrad's (lower is better). tinygrad runs in its own process from the checkout, on its default device (its CPU device
needs clang on PATH), and is left out when it cannot run."""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
SIZES = {  # n_layers, n_heads, dim, vocab, max_context
  "tiny": (2, 2, 64, 512, 128), "small": (4, 4, 128, 2048, 256), "medium": (6, 8, 256, 8192, 256), "gpt2": (12, 12, 768, 50257, 256)}

TINYGRAD_SIDE = """
import json, statistics, sys, time
sys.argv = ["gpt2"]
from examples.gpt2 import Transformer
from tinygrad import Tensor, Variable
layers, heads, dim, vocab, context, count = {config}
model = Transformer(dim=dim, n_heads=heads, n_layers=layers, norm_eps=1e-5, vocab_size=vocab, max_seq_len=context)
tokens = [1, 2, 3, 4]
model(Tensor([tokens]), Variable("start_pos", 0, context - 1).bind(0), 0.0).tolist()
times = []
for step in range(3 + count):
  position = len(tokens) - 1
  start = time.perf_counter()
  nxt = model(Variable("tokens", 0, vocab - 1).bind(tokens[-1]), Variable("start_pos", 1, context - 1).bind(position), 0.0).tolist()
  times.append(time.perf_counter() - start)
  tokens.append(int(nxt[0]) % vocab)
print(json.dumps(statistics.median(times[3:]) * 1e3))
"""


def pytc_ms_per_token(config: tuple, count: int) -> float:
  sys.path.insert(0, str(ROOT / "examples"))
  import gpt2  # examples/gpt2.py

  from pytc import Tensor, Variable
  layers, heads, dim, vocab, context = config
  model = gpt2.GPT2(gpt2.Config(layers, heads, dim, vocab, context))
  tokens = [1, 2, 3, 4]
  tokens.append(int(model.next_token(Tensor([tokens], dtype="int32"), 0).numpy()[0]))
  times = []
  for _ in range(3 + count):
    position = len(tokens) - 1
    start = time.perf_counter()
    step = model.decode_step(Tensor([[tokens[-1]]], dtype="int32"), Variable("start_pos", 1, context - 1).bind(position))
    tokens.append(int(step.numpy()[0]))
    times.append(time.perf_counter() - start)
  return statistics.median(times[3:]) * 1e3


def tinygrad_ms_per_token(source: pathlib.Path, config: tuple, count: int) -> tuple[float | None, str]:
  environment = {**os.environ, "PYTHONPATH": str(source)}
  script = TINYGRAD_SIDE.format(config=(*config, count))
  try: done = subprocess.run([sys.executable, "-c", script], cwd=source, env=environment, capture_output=True, text=True, timeout=3600)
  except subprocess.TimeoutExpired: return None, "timed out"
  if done.returncode != 0: return None, (done.stderr.strip().splitlines() or ["failed"])[-1][:200]
  return float(done.stdout.strip().splitlines()[-1]), ""


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--tinygrad-src", type=pathlib.Path, help="a tinygrad checkout to compare with")
  parser.add_argument("--sizes", nargs="+", default=["tiny", "small", "medium"], choices=sorted(SIZES))
  parser.add_argument("--tokens", type=int, default=40, help="timed decode steps per size")
  parser.add_argument("--json", type=pathlib.Path)
  args = parser.parse_args()
  rows = []
  for size in args.sizes:
    ours = pytc_ms_per_token(SIZES[size], args.tokens)
    theirs, why = tinygrad_ms_per_token(args.tinygrad_src, SIZES[size], args.tokens) if args.tinygrad_src else (None, "not asked")
    rows.append({"size": size, "config": SIZES[size], "pytc_ms": ours, "tinygrad_ms": theirs, "ratio": ours / theirs if theirs else None})
    peer = f"tinygrad {theirs:8.2f} ms/token  pytc/tinygrad {ours / theirs:5.2f}" if theirs else f"tinygrad: {why}"
    print(f"{size:<7} layers/heads/dim/vocab/context {SIZES[size]}: pytc {ours:8.2f} ms/token  {peer}", flush=True)
  if args.json: args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
  main()
