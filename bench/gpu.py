"""pytc's GPU kernels checked and timed on a GPU machine that cannot install pytc's compiler: graphs are compiled and
exported here (pytc.export), copied there, and run by the runtime alone.

  python bench/gpu.py compile [--out DIR] [--target nvptx:sm_90] [--quick]      # where pytc is installed
  python bench/gpu.py run DIR [--device NV] [--rounds N] [--json out.json] [--checks-only]   # on the GPU machine

`compile` writes DIR/<case>.pytc for each case, and DIR/<case>.npz with the inputs and NumPy's results for the numerics
cases (small graphs of the numerics tests' kinds). `run` needs only this checkout's `pytc/` and `runtime/` folders,
numpy and the device's driver: it checks every numerics case against NumPy, then times each benchmark case (inputs made
from a seed there, so the files stay small: weights are call inputs) against torch eager and torch.compile on the same
device, interleaved, and prints the median times, the ratios (pytc / peer, lower is better) and the achieved bandwidth
or FLOP/s against the device's peak (H100 SXM: ~3.35 TB/s HBM3, ~990 dense f16/bf16 TFLOP/s, ~67 f32 TFLOP/s). pytc's
time is the device's timestamps around its launches; torch's, CUDA events around the call.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PEAK = {"bandwidth": 3.35e12, "float32": 67e12, "float16": 990e12, "bfloat16": 990e12}  # H100 SXM, dense tensor-core rates


@dataclass(frozen=True)
class Bench:
  """A timed case: `tensor(*inputs)` in pytc's Tensor API, `torch(*inputs)` the same in torch; `bytes` and `flops` it must
  move and compute."""
  name: str
  inputs: list[tuple[tuple[int, ...], str]]
  tensor: Callable
  torch: Callable
  bytes: float
  flops: float = 0.0
  dtype: str = "float32"


def torch_layernorm(x, w, b):
  import torch
  return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)


def gpt2_layer(t, x, ln1w, ln1b, wqkv, bqkv, wo, bo, ln2w, ln2b, wfc, bfc, wproj, bproj, heads: int = 12):
  """One GPT-2 block written once for both Tensor APIs (`t` is pytc's Tensor or torch's functions)."""
  B, T, C = x.shape
  def layernorm(v, w, b):
    mean = v.mean(-1, keepdim=True)
    var = ((v - mean) * (v - mean)).mean(-1, keepdim=True)
    return (v - mean) / (var + 1e-5).sqrt() * w + b
  qkv = layernorm(x, ln1w, ln1b) @ wqkv + bqkv
  q, k, v = (qkv[:, :, i * C:(i + 1) * C].reshape(B, T, heads, C // heads).permute(0, 2, 1, 3) for i in range(3))
  scores = q @ k.transpose(-1, -2) / math.sqrt(C // heads) + t.causal(T)
  attn = (scores - scores.max(-1, keepdim=True)[0] if t.torch else scores - scores.max(-1, keepdim=True)).exp()
  attn = attn / attn.sum(-1, keepdim=True)
  x = x + (attn @ v).permute(0, 2, 1, 3).reshape(B, T, C) @ wo + bo
  h = layernorm(x, ln2w, ln2b) @ wfc + bfc
  h = 0.5 * h * (1 + (0.7978845608 * (h + 0.044715 * h * h * h)).tanh())
  return x + h @ wproj + bproj


def gpt2_shapes(C: int = 768) -> list[tuple[int, ...]]:
  return [(C,), (C,), (C, 3 * C), (3 * C,), (C, C), (C,), (C,), (C,), (C, 4 * C), (4 * C,), (4 * C, C), (C,)]


def benches(quick: bool) -> list[Bench]:
  n, m, layers, seq = (1 << 20, 512, 2, 64) if quick else (1 << 24, 4096, 12, 128)
  out = [
    Bench(f"chain_{n >> 20}M", [((n,), "float32")], lambda x: (x.sigmoid() * x.abs() + x.abs().sqrt()) * 0.5,
          lambda x: (x.sigmoid() * x.abs() + x.abs().sqrt()) * 0.5, 8 * n),
    Bench(f"sum_rows_{m}", [((m, m), "float32")], lambda x: x.sum(-1), lambda x: x.sum(-1), 4 * m * m),
    Bench(f"sum_cols_{m}", [((m, m), "float32")], lambda x: x.sum(0), lambda x: x.sum(0), 4 * m * m),
    Bench(f"softmax_{m}", [((m, m), "float32")], lambda x: x.softmax(-1), lambda x: x.softmax(-1), 8 * m * m),
    Bench(f"layernorm_{2 * m}x768", [((2 * m, 768), "float32"), ((768,), "float32"), ((768,), "float32")],
          lambda x, w, b: x.layernorm() * w + b, torch_layernorm, 8 * 2 * m * 768),
  ]
  for dtype in ("float32", "float16", "bfloat16"):
    out.append(Bench(f"matmul_{m}_{dtype}", [((m, m), dtype), ((m, m), dtype)], lambda a, b: a @ b, lambda a, b: a @ b,
                     3 * m * m * {"float32": 4}.get(dtype, 2), 2 * m ** 3, dtype))
  heads, T = 12, 4 * seq
  out.append(Bench(f"attention_{heads}x{T}x64", [((1, heads, T, 64), "float32")] * 3,
                   lambda q, k, v: (q @ k.transpose(-1, -2) / 8).softmax(-1) @ v,
                   lambda q, k, v: (q @ k.transpose(-1, -2) / 8).softmax(-1) @ v, 4 * 4 * heads * T * 64, 4 * heads * T * T * 64))
  layer = [((1, seq, 768), "float32")] + [(s, "float32") for s in gpt2_shapes()] * layers
  params = sum(math.prod(s) for s in gpt2_shapes()) * layers
  out.append(Bench(f"gpt2_{layers}layers_seq{seq}", layer, lambda x, *w: gpt2(TensorAPI, x, w), lambda x, *w: gpt2(TorchAPI, x, w),
                   4 * params, 2 * params * seq))
  return out


def gpt2(api, x, weights):
  for i in range(0, len(weights), 12): x = gpt2_layer(api, x, *weights[i:i + 12])
  return x


class TensorAPI:
  torch = False
  @staticmethod
  def causal(T: int):
    from pytc import Tensor
    return Tensor.ones(T, T).tril().log()  # 0 on and below the diagonal, -inf above


class TorchAPI:
  torch = True
  @staticmethod
  def causal(T: int):
    import torch
    return torch.ones(T, T, device="cuda" if torch.cuda.is_available() else "cpu").tril().log()


@dataclass(frozen=True)
class Check:
  """A numerics case: `tensor(*inputs)` against `numpy(*inputs)`."""
  name: str
  inputs: list[tuple[tuple[int, ...], str]]
  tensor: Callable
  numpy: Callable
  rtol: float = 1e-5


def softmax(a: np.ndarray) -> np.ndarray: return (e := np.exp(a - a.max(-1, keepdims=True))) / e.sum(-1, keepdims=True)


CHECKS = [
  Check("elementwise", [((1000,), "float32"), ((1000,), "float32")], lambda x, y: (x * y + x.exp()).maximum(y),
        lambda x, y: np.maximum(x * y + np.exp(x), y)),
  Check("broadcast_where", [((33, 70), "float32"), ((70,), "float32")], lambda x, y: (x > y).where(x, -y), lambda x, y: np.where(x > y, x, -y)),
  Check("vectors_f16", [((64, 256), "float16")], lambda x: x * 2 + 1, lambda x: x * np.float16(2) + np.float16(1), 1e-3),
  Check("sum_rows", [((37, 513), "float32")], lambda x: x.sum(-1), lambda x: x.sum(-1, dtype=np.float64).astype(np.float32), 1e-4),
  Check("sum_cols", [((513, 37), "float32")], lambda x: x.sum(0), lambda x: x.sum(0, dtype=np.float64).astype(np.float32), 1e-4),
  Check("whole_max", [((100_000,), "float32")], lambda x: x.max(), lambda x: x.max()),
  Check("argmax", [((6, 2048), "float32")], lambda x: x.argmax(-1), lambda x: x.argmax(-1).astype(np.int32)),
  Check("softmax_rows", [((6, 2048), "float32")], lambda x: x.softmax(-1), softmax),
  Check("softmax_many", [((300, 70), "float32")], lambda x: x.softmax(-1), softmax),
  Check("layernorm", [((40, 768), "float32")], lambda x: x.layernorm(),
        lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5), 1e-4),
  Check("matmul", [((33, 70), "float32"), ((70, 17), "float32")], lambda a, b: a @ b, lambda a, b: a @ b, 1e-4),
  Check("matmul_batched", [((4, 33, 20), "float32"), ((4, 20, 9), "float32")], lambda a, b: a @ b, lambda a, b: a @ b, 1e-4),
  Check("matmul_f16", [((64, 64), "float16"), ((64, 64), "float16")], lambda a, b: a @ b,
        lambda a, b: (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16), 2e-3),
  Check("int_ops", [((1000,), "int32"), ((1000,), "int32")], lambda x, y: (x * 3 - y).maximum(x & y), lambda x, y: np.maximum(x * 3 - y, x & y), 0),
]


def data(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
  if dtype.startswith("int"): return rng.integers(-1000, 1000, shape).astype(dtype)
  return (rng.standard_normal(shape) * 0.5).astype(np.float32 if dtype == "bfloat16" else dtype)


def compile_cases(out: Path, target: str, quick: bool) -> None:
  from pytc import Tensor
  from pytc.export import export
  out.mkdir(parents=True, exist_ok=True)
  rng = np.random.default_rng(0)
  for check in CHECKS:
    arrays = [data(shape, dtype, rng) for shape, dtype in check.inputs]
    start = time.perf_counter()
    (out / f"{check.name}.pytc").write_bytes(export(check.tensor, *[Tensor(a) for a in arrays], target=target))
    np.savez(out / f"{check.name}.npz", *arrays, expected=check.numpy(*arrays), rtol=check.rtol)
    print(f"{check.name:<24} numerics   {(time.perf_counter() - start) * 1e3:8.1f} ms")
  for bench in benches(quick):
    start = time.perf_counter()
    inputs = [Tensor.empty(*shape, dtype=dtype) for shape, dtype in bench.inputs]
    (out / f"{bench.name}.pytc").write_bytes(export(bench.tensor, *inputs, target=target))
    print(f"{bench.name:<24} benchmark  {(time.perf_counter() - start) * 1e3:8.1f} ms")
  (out / "benches.json").write_text(json.dumps({"quick": quick, "target": target}))


def runtime_only() -> None:
  """Make this checkout's runtime importable as pytc.runtime where pytc is not installed (its `runtime/` beside `pytc/`)."""
  sys.path.insert(0, str(ROOT))
  import pytc
  if str(ROOT) not in pytc.__path__: pytc.__path__.append(str(ROOT))


def median_time(fn: Callable[[], float], rounds: int) -> float:
  for _ in range(3): fn()
  return statistics.median(fn() for _ in range(rounds))


def torch_timer(torch, fn: Callable, args: list) -> Callable[[], float]:
  def timed() -> float:
    if not torch.cuda.is_available():
      start = time.perf_counter()
      fn(*args)
      return time.perf_counter() - start
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    fn(*args)
    end.record()
    end.synchronize()
    return begin.elapsed_time(end) * 1e-3
  return timed


def check_numerics(folder: Path, device: str | None, load: Callable) -> int:
  """Run every numerics case against NumPy's results; the number of mismatches."""
  failures = 0
  for check in CHECKS:
    stored = np.load(folder / f"{check.name}.npz")
    arrays, rtol = [stored[f"arr_{i}"] for i in range(len(check.inputs))], float(stored["rtol"])
    got = load(folder / f"{check.name}.pytc", device)(*arrays)[0]
    try:
      np.testing.assert_allclose(got.astype(np.float64), stored["expected"].astype(np.float64), rtol=rtol, atol=rtol)
      print(f"{check.name:<24} ok")
    except AssertionError as e:
      failures += 1
      print(f"{check.name:<24} MISMATCH {' '.join(str(e).split())[:200]}")
  return failures


def time_bench(bench: Bench, folder: Path, device: str | None, rounds: int, load: Callable, torch: object | None) -> dict[str, float | str]:
  """pytc's median time on the bench (and torch eager's and torch.compile's), the rates it reached and its share of the peak."""
  rng = np.random.default_rng(1)
  arrays = [data(shape, dtype, rng) for shape, dtype in bench.inputs]
  graph = load(folder / f"{bench.name}.pytc", device)
  graph.write_inputs(*arrays)
  ours = median_time(lambda: graph.launch(timed=True), rounds)
  row: dict[str, float | str] = {"name": bench.name, "pytc": ours}
  if torch is not None:
    where = "cuda" if torch.cuda.is_available() else "cpu"
    args = [torch.from_numpy(a).to(where, getattr(torch, dtype)) for a, (_, dtype) in zip(arrays, bench.inputs)]
    row["eager"] = median_time(torch_timer(torch, bench.torch, args), rounds)
    try: row["compile"] = median_time(torch_timer(torch, torch.compile(bench.torch), args), rounds)
    except Exception as e: print(f"  torch.compile failed on {bench.name}: {type(e).__name__}")
  rate, peak = (bench.flops, PEAK[bench.dtype]) if bench.flops else (bench.bytes, PEAK["bandwidth"])
  return row | {"gbps": bench.bytes / ours / 1e9, "tflops": bench.flops / ours / 1e12, "peak": rate / ours / peak}


def format_row(row: dict) -> str:
  times = "".join(f"{row[k] * 1e3:>11.3f}" if k in row else f"{'-':>11}" for k in ("pytc", "eager", "compile"))
  ratios = "".join(f"{row['pytc'] / row[k]:>9.2f}" if k in row else f"{'-':>9}" for k in ("eager", "compile"))
  return f"{row['name']:<26}{times}{ratios}{row['gbps']:>8.0f}{row['tflops']:>9.1f}{row['peak'] * 100:>7.1f}%"


def run_cases(folder: Path, device: str | None, rounds: int, json_out: str | None, checks_only: bool = False) -> int:
  if importlib.util.find_spec("pytc.runtime") is None: runtime_only()
  from pytc.runtime.exported import load
  failures = check_numerics(folder, device, load)
  if checks_only: return failures
  torch = importlib.import_module("torch") if importlib.util.find_spec("torch") else None
  quick = json.loads((folder / "benches.json").read_text())["quick"]
  print(f"\n{'workload':<26}{'pytc ms':>11}{'eager ms':>11}{'compile ms':>11}{'/eager':>9}{'/compile':>9}{'GB/s':>8}{'TFLOP/s':>9}{'peak':>8}")
  rows = []
  for bench in benches(quick):
    rows.append(time_bench(bench, folder, device, rounds, load, torch))
    print(format_row(rows[-1]))
  if json_out: Path(json_out).write_text(json.dumps({"failures": failures, "rows": rows}, indent=1))
  return failures


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  commands = parser.add_subparsers(dest="command", required=True)
  build = commands.add_parser("compile", help="export every case for a target (needs pytc installed)")
  build.add_argument("--out", default="gpu_cases")
  build.add_argument("--target", default="nvptx:sm_90")
  build.add_argument("--quick", action="store_true", help="small benchmark sizes (a test of the tool, not a measurement)")
  run = commands.add_parser("run", help="check and time the exported cases (needs only the runtime and the device's driver)")
  run.add_argument("folder")
  run.add_argument("--device", default=None, help="the device to run on (default: the one the files name)")
  run.add_argument("--rounds", type=int, default=20)
  run.add_argument("--json", default=None)
  run.add_argument("--checks-only", action="store_true", help="only the numerics cases")
  args = parser.parse_args()
  if args.command == "compile": compile_cases(Path(args.out), args.target, args.quick)
  else: sys.exit(1 if run_cases(Path(args.folder), args.device, args.rounds, args.json, args.checks_only) else 0)


if __name__ == "__main__":
  main()
