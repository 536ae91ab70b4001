"""pytc against NumPy (and, when installed, tinygrad on the CPU and torch eager / torch.compile) on the CPU.

Every workload runs in one process, the implementations interleaved round by round; in each round an
implementation gets a short pause (the thread pools another left spinning, like libgomp's after torch, go to
sleep), 10 ms of untimed calls (idle cores wake and clock up) and then the mean of 10 ms of calls; the table
gives medians (ms), each implementation's ratio to NumPy, pytc's kernel count, and pytc's ratio to the physical floor
(compulsory bytes over the measured copy bandwidth, or flops over NumPy's sgemm rate, whichever is larger),
and pytc's first-call time (schedule + compile + run, nothing cached) beside the same with the kernels on disk.
pytc's result is checked against NumPy's first; a mismatch stops the run.

  python bench/run.py [--rounds N] [--quick] [--only NAME] [--json out.json]
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

from timing import SETTLE_S, machine_limits, pytc_first_call, steady  # first: it sets OPENBLAS_THREAD_TIMEOUT before NumPy loads

# isort: split
import numpy as np


@dataclass
class Workload:
  name: str
  inputs: list[tuple[int, ...]]
  numpy: Callable
  tensor: Callable  # written against the tinygrad/pytc Tensor API
  torch: Callable | None
  flops: float
  bytes: float


def np_softmax(x):
  e = np.exp(x - x.max(-1, keepdims=True))
  return e / e.sum(-1, keepdims=True)


def np_layernorm(x):
  c = x - x.mean(-1, keepdims=True)
  return c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5)


def np_log_softmax(x):
  s = x - x.max(-1, keepdims=True)
  return s - np.log(np.exp(s).sum(-1, keepdims=True))


def np_conv(x, w):
  n, c, h, wd = x.shape
  xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
  cols = np.stack([xp[:, :, i:i + h, j:j + wd] for i in range(3) for j in range(3)], 2).reshape(n, c * 9, h * wd)
  return (w.reshape(w.shape[0], -1) @ cols).reshape(n, w.shape[0], h, wd)


def np_attention(q, k, v): return np_softmax(q @ k.transpose(0, 2, 1) / 8.0) @ v


def workloads(quick: bool) -> list[Workload]:
  scale = 4 if quick else 1
  f = 4  # bytes per float
  n4, n16, rows = 4 * 2**20 // scale, 16 * 2**20 // scale, 4096 // scale
  chain = lambda a, b, c: ((a * b + c).relu() * 0.5).exp()
  np_chain = lambda a, b, c: np.exp(np.maximum(a * b + c, 0) * 0.5)
  torch_chain = lambda a, b, c: ((a * b + c).relu() * 0.5).exp()
  mlp = lambda x, w1, b1, w2, b2, w3, b3: ((x @ w1 + b1).relu() @ w2 + b2).relu().__matmul__(w3).add(b3).log_softmax(-1)
  np_mlp = lambda x, w1, b1, w2, b2, w3, b3: np_log_softmax(np.maximum(np.maximum(x @ w1 + b1, 0) @ w2 + b2, 0) @ w3 + b3)
  torch_mlp = lambda x, w1, b1, w2, b2, w3, b3: (((x @ w1 + b1).relu() @ w2 + b2).relu() @ w3 + b3).log_softmax(-1)
  return [
    Workload("chain_4M", [(n4,)] * 3, np_chain, chain, torch_chain, 4 * n4, 4 * n4 * f),
    Workload("chain_16M", [(n16,)] * 3, np_chain, chain, torch_chain, 4 * n16, 4 * n16 * f),
    Workload("mul_sum_4096", [(rows, 4096)] * 2, lambda a, b: (a * b).sum(1), lambda a, b: (a * b).sum(axis=1), lambda a, b: (a * b).sum(1),
             2 * rows * 4096, 2 * rows * 4096 * f),
    Workload("softmax_4096x1024", [(rows, 1024)], np_softmax, lambda x: x.softmax(-1), lambda x: x.softmax(-1), 5 * rows * 1024, 2 * rows * 1024 * f),
    Workload("layernorm_4096x1024", [(rows, 1024)], np_layernorm, lambda x: x.layernorm(-1),
             lambda x: __import__("torch").nn.functional.layer_norm(x, (1024,)), 8 * rows * 1024, 2 * rows * 1024 * f),
    Workload("matmul_512", [(512, 512)] * 2, lambda a, b: a @ b, lambda a, b: a @ b, lambda a, b: a @ b, 2 * 512**3, 3 * 512 * 512 * f),
    Workload("matmul_1024", [(1024, 1024)] * 2, lambda a, b: a @ b, lambda a, b: a @ b, lambda a, b: a @ b, 2 * 1024**3, 3 * 1024 * 1024 * f),
    Workload("mlp_256x784", [(256, 784), (784, 512), (512,), (512, 512), (512,), (512, 10), (10,)], np_mlp, mlp, torch_mlp,
             2 * 256 * (784 * 512 + 512 * 512 + 512 * 10), (256 * 784 + 784 * 512 + 512 * 512 + 512 * 10) * f),
    Workload("conv2d_8x16x32x32", [(8, 16, 32, 32), (32, 16, 3, 3)], np_conv, lambda x, w: x.conv2d(w, padding=1),
             lambda x, w: __import__("torch").nn.functional.conv2d(x, w, padding=1), 2 * 8 * 32 * 32 * 32 * 16 * 9,
             (8 * 16 * 32 * 32 + 32 * 16 * 9 + 8 * 32 * 32 * 32) * f),
    Workload("attention_8x256x64", [(8, 256, 64)] * 3, np_attention, lambda q, k, v: q.scaled_dot_product_attention(k, v),
             lambda q, k, v: __import__("torch").nn.functional.scaled_dot_product_attention(q, k, v), 4 * 8 * 256 * 256 * 64,
             4 * 8 * 256 * 64 * f),
  ]


@functools.cache
def tinygrad_runs() -> bool:
  """tinygrad is a peer when it is installed and can compile for the CPU here (it needs clang)."""
  try:
    import tinygrad
    (tinygrad.Tensor([1.0]) + 1).realize()
  except Exception as e:
    if not isinstance(e, ImportError): print(f"tinygrad left out: it cannot run here ({type(e).__name__}: {e})", file=sys.stderr)
    return False
  return True


def implementations(w: Workload, arrays: list[np.ndarray]) -> dict[str, Callable]:
  from pytc import Tensor
  ours = [Tensor(a) for a in arrays]
  impls = {"numpy": lambda: w.numpy(*arrays), "pytc": lambda: w.tensor(*ours).realize()}
  if tinygrad_runs():
    import tinygrad
    theirs = [tinygrad.Tensor(a).realize() for a in arrays]
    impls["tinygrad"] = lambda: w.tensor(*theirs).realize()
  try:
    import torch
    if w.torch is not None:
      tensors = [torch.from_numpy(a) for a in arrays]
      compiled = torch.compile(w.torch)
      impls["torch"] = lambda: w.torch(*tensors)
      impls["torch.compile"] = lambda: compiled(*tensors)
  except ImportError:
    pass
  return impls


def run(w: Workload, rounds: int, bandwidth: float, sgemm: float) -> dict:
  from pytc import GlobalCounters
  rng = np.random.default_rng(0)
  arrays = [rng.standard_normal(s).astype(np.float32) for s in w.inputs]
  impls = implementations(w, arrays)
  compile_ms = pytc_first_call(impls["pytc"])
  for fn in impls.values(): fn()  # compile and warm up
  GlobalCounters.reset()
  ours, reference = impls["pytc"]().numpy(), w.numpy(*arrays)
  kernels = GlobalCounters.kernel_count
  scale = float(np.abs(reference).max()) or 1.0
  if not np.allclose(ours, reference, rtol=1e-3, atol=1e-4 * scale): raise SystemExit(f"{w.name}: pytc's result differs from NumPy's")
  times: dict[str, list[float]] = {name: [] for name in impls}
  for _ in range(rounds):
    for name, fn in impls.items():
      time.sleep(SETTLE_S)  # the thread pools the previous implementation left spinning go to sleep
      times[name].append(steady(fn))
  medians = {name: statistics.median(t) * 1e3 for name, t in times.items()}
  floor_ms = max(w.bytes / bandwidth, w.flops / sgemm) * 1e3
  return {"medians_ms": medians, "pytc_kernels": kernels, "floor_ms": floor_ms, "pytc_compile_ms": compile_ms}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--rounds", type=int, default=7)
  parser.add_argument("--quick", action="store_true", help="quarter-size arrays")
  parser.add_argument("--only", help="run workloads whose name contains this")
  parser.add_argument("--json", help="write the results here")
  args = parser.parse_args()
  os.environ.setdefault("PYTC_CACHE_DIR", tempfile.mkdtemp(prefix="pytc-bench-"))  # first calls compile for real
  bandwidth, sgemm = machine_limits()
  print(f"copy bandwidth {bandwidth / 1e9:.1f} GB/s, NumPy sgemm {sgemm / 1e9:.1f} GFLOP/s, {os.cpu_count()} cores")
  results = {"bandwidth_GBps": bandwidth / 1e9, "numpy_sgemm_GFLOPs": sgemm / 1e9, "workloads": {}}
  for w in workloads(args.quick):
    if args.only and args.only not in w.name: continue
    r = results["workloads"][w.name] = run(w, args.rounds, bandwidth, sgemm)
    numpy_ms = r["medians_ms"]["numpy"]
    cells = "  ".join(f"{name} {ms:8.2f} ms ({numpy_ms / ms:5.2f}x)" for name, ms in r["medians_ms"].items())
    compile_ms = r["pytc_compile_ms"]
    print(f"{w.name:<22} {cells}  pytc kernels {r['pytc_kernels']}  pytc/floor {r['medians_ms']['pytc'] / r['floor_ms']:.1f}x  "
          f"first call {compile_ms['cold']:.0f} ms (disk cache {compile_ms['disk_cache']:.0f} ms)")
  if args.json:
    with open(args.json, "w") as f: json.dump(results, f, indent=2)


if __name__ == "__main__":
  main()
