"""pytc on the CPU across sweeps of shapes, each timed against NumPy, torch eager and torch.compile (when installed) in one
process, interleaved (bench/timing.py).

  matmul       M×K×N from 1 to 4096: square, skinny (vector × matrix, outer products), GPT-2's (128×768×2304,
               128×768×3072, 128×3072×768, 768×768×3072), batched heads (12×128×64 @ 12×64×128, and back),
               transposed operands
  elementwise  sigmoid, gelu, exp, log, tanh, and a sigmoid·sqrt|x| chain, from 1K to 64M elements
  reduce       sums along each axis of rows×cols from 1×N to N×1 (N = 16M; not along an axis of 1: that is a reshape), and a max
  rows         softmax, layernorm (with weight and bias) and logsumexp over rows×cols from 64 to 8192
  conv         conv2d: ResNet-like 3×3 (stride 1 and 2), 1×1, depthwise, the 7×7 stem

For each shape it prints the median ms of every implementation and pytc's ratio to the best peer (lower is better),
then per family and overall the geometric mean and the worst case. pytc is timed two ways: `pytc`, a plain call
(graph building, the schedule cache, one command graph: what an eager loop pays) and `pytc.jit`, the same function under
TinyJit (a replay: what a training or serving loop pays); the ratio uses the faster. pytc's result is checked against
NumPy's first; a mismatch stops the run. Kernels compile into a fresh cache folder unless PYTC_CACHE_DIR is given, so
winners a kernel search (PYTC_SEARCH=1) stored there are used when it is given.

  python bench/sweep.py [--family matmul,rows] [--only SUBSTRING] [--quick] [--rounds N] [--json out.json]
"""
from __future__ import annotations

from timing import interleaved, machine_limits, torch_available  # first: it sets OPENBLAS_THREAD_TIMEOUT before NumPy loads

# isort: split
import argparse
import importlib
import json
import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

torch = importlib.import_module("torch") if torch_available() else None  # a global: torch.compile cannot trace an import

F32 = 4  # bytes per element


@dataclass
class Case:
  family: str
  name: str
  inputs: list[tuple[int, ...]]
  numpy: Callable
  tensor: Callable  # written against the pytc (tinygrad) Tensor API
  torch: Callable | None
  flops: float
  bytes: float
  positive: bool = False  # inputs drawn from (0.5, 2.5) instead of a standard normal


def matmul_cases(quick: bool) -> list[Case]:
  def case(m: int, k: int, n: int, batch: tuple[int, ...] = (), transpose: str = "") -> Case:
    a_shape = (*batch, k, m) if "a" in transpose else (*batch, m, k)
    b_shape = (*batch, n, k) if "b" in transpose else (*batch, k, n)
    swap = lambda x, which: x.swapaxes(-1, -2) if which in transpose else x
    fn = lambda a, b: swap(a, "a") @ swap(b, "b")
    tfn = lambda a, b: (a.transpose(-1, -2) if "a" in transpose else a) @ (b.transpose(-1, -2) if "b" in transpose else b)
    count = math.prod(batch)
    label = "x".join(map(str, batch)) + "x" if batch else ""
    suffix = f" {transpose}T" if transpose else ""
    return Case("matmul", f"{label}{m}x{k}x{n}{suffix}", [a_shape, b_shape], fn, tfn, fn, 2 * count * m * k * n,
                count * (m * k + k * n + m * n) * F32)
  squares = [1, 64, 256, 512, 1024] + ([] if quick else [2048, 4096])
  cases = [case(s, s, s) for s in squares]
  cases += [case(1, 4096, 4096), case(4096, 4096, 1), case(4096, 1, 4096), case(16, 4096, 4096), case(4096, 4096, 16), case(256, 4096, 256)]
  cases += [case(128, 768, 2304), case(128, 768, 3072), case(128, 3072, 768), case(768, 768, 3072)]
  cases += [case(128, 64, 128, (12,)), case(128, 128, 64, (12,))]
  cases += [case(1024, 1024, 1024, transpose="a"), case(1024, 1024, 1024, transpose="b"), case(512, 512, 512, transpose="ab")]
  return cases


def gelu_np(x): return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))


def elementwise_cases(quick: bool) -> list[Case]:
  ops: list[tuple[str, Callable, Callable, Callable, bool]] = [
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), lambda x: x.sigmoid(), lambda x: x.sigmoid(), False),
    ("gelu", gelu_np, lambda x: x.gelu(), lambda x: torch.nn.functional.gelu(x, approximate="tanh"), False),
    ("exp", np.exp, lambda x: x.exp(), lambda x: x.exp(), False),
    ("log", np.log, lambda x: x.log(), lambda x: x.log(), True),
    ("tanh", np.tanh, lambda x: x.tanh(), lambda x: x.tanh(), False),
    ("sigmoid_sqrt_abs", lambda x: np.sqrt(np.abs(x)) / (1 + np.exp(-x)), lambda x: x.sigmoid() * x.abs().sqrt(),
     lambda x: x.sigmoid() * x.abs().sqrt(), False),
  ]
  sizes = [1 << 10, 1 << 16, 1 << 20, 1 << 23] + ([] if quick else [1 << 26])
  label = lambda n: f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K"
  return [Case("elementwise", f"{name} {label(n)}", [(n,)], npf, tf, thf, 20 * n, 2 * n * F32, positive)
          for n in sizes for name, npf, tf, thf, positive in ops]


def reduce_cases(quick: bool) -> list[Case]:
  total = 1 << (22 if quick else 24)
  shapes = [(1, total), (16, total // 16), (256, total // 256), (1 << 12, total >> 12), (total // 256, 256), (total // 16, 16), (total, 1)]
  cases = [Case("reduce", f"sum {r}x{c} axis {axis}", [(r, c)], lambda x, axis=axis: x.sum(axis), lambda x, axis=axis: x.sum(axis),
                lambda x, axis=axis: x.sum(axis), total, total * F32) for r, c in shapes for axis in (0, 1) if (r, c)[axis] > 1]
  side = 1 << 12
  cases += [Case("reduce", f"max {side}x{side} axis {axis}", [(side, side)], lambda x, axis=axis: x.max(axis), lambda x, axis=axis: x.max(axis),
                 lambda x, axis=axis: x.amax(axis), side * side, side * side * F32) for axis in (0, 1)]
  return cases


def softmax_np(x):
  e = np.exp(x - x.max(-1, keepdims=True))
  return e / e.sum(-1, keepdims=True)


def layernorm_np(x, w, b):
  c = x - x.mean(-1, keepdims=True)
  return c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * w + b


def logsumexp_np(x):
  m = x.max(-1, keepdims=True)
  return (m + np.log(np.exp(x - m).sum(-1, keepdims=True)))[..., 0]


def row_cases(quick: bool) -> list[Case]:
  shapes = [(64, 64), (64, 8192), (8192, 64), (1024, 1024), (2048, 2048), (8192, 768)] + ([] if quick else [(8192, 8192)])
  torch_ln = lambda x, w, b: torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)
  cases = []
  for r, c in shapes:
    n = r * c
    cases += [Case("rows", f"softmax {r}x{c}", [(r, c)], softmax_np, lambda x: x.softmax(-1), lambda x: x.softmax(-1), 25 * n, 2 * n * F32),
              Case("rows", f"layernorm {r}x{c}", [(r, c), (c,), (c,)], layernorm_np, lambda x, w, b: x.layernorm(-1) * w + b, torch_ln,
                   8 * n, 2 * n * F32),
              Case("rows", f"logsumexp {r}x{c}", [(r, c)], logsumexp_np, lambda x: x.logsumexp(-1), lambda x: x.logsumexp(-1), 22 * n,
                   n * F32)]
  return cases


def conv_np(x, w, stride: int, padding: int, groups: int):
  """conv2d by windows and one contraction per group (NumPy has no convolution of its own)."""
  n, c, _, _ = x.shape
  o, cg, kh, kw = w.shape
  xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
  windows = sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
  ho, wo = windows.shape[2:4]
  windows = windows.reshape(n, groups, cg, ho, wo, kh, kw)
  return np.einsum("ngchwij,gocij->ngohw", windows, w.reshape(groups, o // groups, cg, kh, kw), optimize=True).reshape(n, o, ho, wo)


def conv_cases(quick: bool) -> list[Case]:
  def case(label: str, n: int, c: int, hw: int, o: int, k: int, stride: int = 1, groups: int = 1) -> Case:
    padding = k // 2
    out = (hw + 2 * padding - k) // stride + 1
    flops = 2 * n * o * out * out * (c // groups) * k * k
    nbytes = (n * c * hw * hw + o * (c // groups) * k * k + n * o * out * out) * F32
    tconv = lambda x, w: x.conv2d(w, stride=stride, padding=padding, groups=groups)
    thconv = lambda x, w: torch.nn.functional.conv2d(x, w, stride=stride, padding=padding, groups=groups)
    return Case("conv", f"{label} {n}x{c}x{hw}x{hw}->{o}", [(n, c, hw, hw), (o, c // groups, k, k)],
                lambda x, w: conv_np(x, w, stride, padding, groups), tconv, thconv, flops, nbytes)
  cases = [case("3x3", 1, 64, 56, 64, 3), case("3x3", 1, 128, 28, 128, 3), case("3x3", 1, 256, 14, 256, 3), case("3x3", 1, 512, 7, 512, 3),
           case("3x3/2", 1, 64, 56, 128, 3, stride=2), case("1x1", 1, 64, 56, 256, 1), case("1x1", 1, 256, 14, 1024, 1),
           case("dw3x3", 1, 128, 56, 128, 3, groups=128), case("dw3x3", 1, 512, 14, 512, 3, groups=512), case("7x7/2", 1, 3, 224, 64, 7, stride=2)]
  if not quick: cases += [case("3x3", 8, 64, 56, 64, 3), case("3x3", 32, 128, 28, 128, 3)]
  return cases


FAMILIES = {"matmul": matmul_cases, "elementwise": elementwise_cases, "reduce": reduce_cases, "rows": row_cases, "conv": conv_cases}
PEERS = ("numpy", "torch", "torch.compile")


def implementations(case: Case, arrays: list[np.ndarray]) -> dict[str, Callable]:
  from pytc import Tensor, TinyJit
  from pytc.jit import JitError
  ours = [Tensor(a).realize() for a in arrays]
  jitted = TinyJit(lambda *xs: case.tensor(*xs).realize())
  impls = {"pytc": lambda: case.tensor(*ours).realize(), "pytc.jit": lambda: jitted(*ours), "numpy": lambda: case.numpy(*arrays)}
  try:
    for _ in range(3): jitted(*ours)  # run, capture, replay
  except JitError: del impls["pytc.jit"]  # nothing to replay: the result is a view of an input
  if torch is not None and case.torch is not None:
    torch._dynamo.reset()  # each case compiles afresh, never against another case's recompile limit
    tensors, compiled = [torch.from_numpy(a) for a in arrays], torch.compile(case.torch)
    impls["torch"] = lambda: case.torch(*tensors)
    impls["torch.compile"] = lambda: compiled(*tensors)
  return impls


def check(case: Case, impls: dict[str, Callable], arrays: list[np.ndarray]) -> None:
  """pytc's plain and jitted results against NumPy's (computed in float64 for reductions over many elements)."""
  reference = np.asarray(case.numpy(*[a.astype(np.float64) for a in arrays]))
  scale = float(np.abs(reference).max()) if reference.size else 1.0
  for name in ("pytc", "pytc.jit"):
    if name not in impls: continue
    ours = impls[name]().numpy()
    if ours.shape != reference.shape or not np.allclose(ours, reference, rtol=2e-3, atol=2e-4 * (scale or 1.0)):
      worst = float(np.abs(ours - reference).max()) if ours.shape == reference.shape else float("nan")
      raise SystemExit(f"{case.family} {case.name}: {name}'s result differs from NumPy's (shape {ours.shape} vs {reference.shape}, "
                       f"largest difference {worst:.3g} at scale {scale:.3g})")


def run_case(case: Case, rounds: int) -> dict:
  rng = np.random.default_rng(0)
  draw = (lambda s: rng.uniform(0.5, 2.5, s)) if case.positive else rng.standard_normal
  arrays = [draw(s).astype(np.float32) for s in case.inputs]
  impls = implementations(case, arrays)
  for fn in impls.values(): fn()  # compile and warm up
  check(case, impls, arrays)
  seconds = max(0.01, min(0.2, 3 * case.bytes / 25e9))  # long enough for several calls of the large cases
  medians = {name: t * 1e3 for name, t in interleaved(impls, rounds, seconds).items()}
  best_peer = min((ms, name) for name, ms in medians.items() if name in PEERS)
  ours = min(ms for name, ms in medians.items() if name.startswith("pytc"))
  return {"family": case.family, "medians_ms": medians, "best_peer": best_peer[1], "ratio": ours / best_peer[0],
          "gflops": case.flops / ours / 1e6, "gbps": case.bytes / ours / 1e6}


def geomean(values: list[float]) -> float: return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def summary(label: str, results: dict[str, dict]) -> str:
  ratios = {name: r["ratio"] for name, r in results.items()}
  worst = max(ratios, key=ratios.get)
  return f"{label:<12} {len(ratios):3d} shapes  geomean {geomean(list(ratios.values())):.2f}  worst {ratios[worst]:.2f} ({worst})"


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--family", help=f"comma-separated families to run (default all: {', '.join(FAMILIES)})")
  parser.add_argument("--only", help="run shapes whose name contains this")
  parser.add_argument("--quick", action="store_true", help="leave out the largest shapes")
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--json", help="write the results here")
  args = parser.parse_args()
  families = args.family.split(",") if args.family else list(FAMILIES)
  if unknown := [f for f in families if f not in FAMILIES]: parser.error(f"unknown family {', '.join(unknown)} (known: {', '.join(FAMILIES)})")
  os.environ.setdefault("PYTC_CACHE_DIR", tempfile.mkdtemp(prefix="pytc-sweep-"))
  bandwidth, sgemm = machine_limits()
  print(f"copy bandwidth {bandwidth / 1e9:.1f} GB/s, NumPy sgemm {sgemm / 1e9:.1f} GFLOP/s, {os.cpu_count()} cores; "
        f"ratio = min(pytc, pytc.jit) / best peer")
  results: dict[str, dict] = {}
  for family in families:
    for case in FAMILIES[family](args.quick):
      if args.only and args.only not in f"{case.family} {case.name}": continue
      r = results[f"{case.family} {case.name}"] = run_case(case, args.rounds)
      cells = "  ".join(f"{name} {ms:9.3f}" for name, ms in r["medians_ms"].items())
      rate = f"{r['gflops']:6.1f} GFLOP/s" if family in ("matmul", "conv") else f"{r['gbps']:6.1f} GB/s"
      print(f"{case.family:<11} {case.name:<28} {cells}  ratio {r['ratio']:5.2f} vs {r['best_peer']:<13} {rate}", flush=True)
  if not results: raise SystemExit("no shape matched")
  print()
  for family in families:
    if chosen := {k: r for k, r in results.items() if r["family"] == family}: print(summary(family, chosen))
  print(summary("all", results))
  if args.json:
    with open(args.json, "w") as f:
      json.dump({"bandwidth_GBps": bandwidth / 1e9, "numpy_sgemm_GFLOPs": sgemm / 1e9, "geomean": geomean([r["ratio"] for r in results.values()]),
                 "worst": max(r["ratio"] for r in results.values()), "shapes": results}, f, indent=2)


if __name__ == "__main__":
  main()
