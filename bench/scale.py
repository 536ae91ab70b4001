"""How pytc's compile time grows with the size of the graph: every pass of the scheduling and kernel pipelines timed
on its own, on graph families of 100 ... 10 000 ops, with the growth exponent k of time ~ n^k fitted over the sizes
from 1000 on (1 is linear; a quadratic pass shows k near 2).

  chain    single-use elementwise chain: x = f(x) with f cycling through mul, add, exp2, neg
  multi    each step reads the last value twice: x = (x + x) * 0.5
  diamond  each step forks and joins: x = sin(x) + cos(x)
  wide     n/2 distinct inputs summed in a balanced tree (a kernel reading thousands of buffers)
  concat   Tensor.cat of n/2 parts (a deep nest of masked selects)
  kernels  a chain of normalizations x = x - x.mean() (a kernel per reduction: long launch lists)

  python bench/scale.py [--sizes 100,1000,10000] [--families chain,wide] [--llvm] [--json out.json]

`--llvm` also times the CPU lowering and LLVM's JIT compile of the kernels (not pytc's passes).
"""
import argparse
import json
import math
import time

from mlir import ir

from pytc import Tensor
from pytc.compiler import context
from pytc.compilers.cpu import CPUCompiler
from pytc.graph import structure_of, to_mlir
from pytc.passes import split_top_level
from pytc.pipelines import run_pipeline
from pytc.runtime.target import host_cpu


def chain(n: int) -> Tensor:
  x, steps = Tensor.empty(256), [lambda x: x * 1.0001, lambda x: x + 0.5, lambda x: x.exp2(), lambda x: -x]
  for i in range(n): x = steps[i % 4](x)
  return x


def multi(n: int) -> Tensor:
  x = Tensor.empty(256)
  for _ in range(n // 2): x = (x + x) * 0.5
  return x


def diamond(n: int) -> Tensor:
  x = Tensor.empty(256)
  for _ in range(n // 3): x = x.sin() + x.cos()
  return x


def wide(n: int) -> Tensor:
  xs = [Tensor.empty(256) for _ in range(max(2, n // 2))]
  while len(xs) > 1: xs = [a + b for a, b in zip(xs[::2], xs[1::2])] + xs[len(xs) & ~1:]
  return xs[0]


def concat(n: int) -> Tensor:
  x = Tensor.empty(4)
  return Tensor.cat(*[x * i for i in range(max(2, n // 2))])


def kernels(n: int) -> Tensor:
  x = Tensor.empty(16, 64)
  for _ in range(n // 3): x = x - x.mean(axis=-1, keepdim=True)
  return x


FAMILIES = {f.__name__: f for f in (chain, multi, diamond, wide, concat, kernels)}


def steps(pipeline: str) -> list[str]:
  return split_top_level(pipeline.strip()[len("builtin.module("):-1])


def time_graph(family, n: int, llvm: bool) -> dict[str, float]:
  """Seconds spent building the Tensor graph, emitting it as uop IR, in each pass (named pipeline:pass, repeats of a pass
  in one pipeline summed), scheduling in all (emit and the scheduling pipeline) and in total."""
  start = time.perf_counter()
  out = family(n)
  times = {"build": time.perf_counter() - start}
  stages = [s for s in CPUCompiler(host_cpu()).stages() if s.pipeline and (llvm or s.name != "llvm")]
  with context(), ir.Location.unknown():
    start = time.perf_counter()
    pending = [out.lazydata]
    inputs, _ = structure_of(pending)
    module = to_mlir(pending, inputs, "graph")
    times["emit"] = time.perf_counter() - start
    for label, pipeline in ((s.name, s.pipeline) for s in stages):
      if label == "llvm":  # the JIT takes the kernels alone, as pytc's compile driver hands them over
        for op in [op for op in module.body.operations if "pytc.kernel" not in op.attributes]: op.operation.erase()
      for step in steps(pipeline):
        start = time.perf_counter()
        run_pipeline(module, f"builtin.module({step})")
        name = f"{label}:{step.split('{')[0]}"
        times[name] = times.get(name, 0.0) + time.perf_counter() - start
    if llvm:
      from mlir.execution_engine import ExecutionEngine
      start = time.perf_counter()
      ExecutionEngine(module, opt_level=3)
      times["llvm-jit"] = time.perf_counter() - start
  times["total"] = sum(times.values())
  times["schedule"] = times["emit"] + sum(t for k, t in times.items() if k.startswith("schedule:"))
  return times


def exponent(sizes: list[int], seconds: list[float]) -> float:
  """The least-squares slope of log(seconds) over log(size), over the sizes from 1000 on (all of them if fewer than two)."""
  points = [(math.log(n), math.log(max(t, 1e-6))) for n, t in zip(sizes, seconds) if n >= 1000]
  if len(points) < 2: points = [(math.log(n), math.log(max(t, 1e-6))) for n, t in zip(sizes, seconds)]
  if len(points) < 2: return float("nan")
  mx, my = sum(x for x, _ in points) / len(points), sum(y for _, y in points) / len(points)
  return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--sizes", default="100,300,1000,3000,10000", help="graph sizes in ops, comma-separated")
  parser.add_argument("--families", default=",".join(FAMILIES), help=f"graph families, comma-separated ({', '.join(FAMILIES)})")
  parser.add_argument("--llvm", action="store_true", help="also time the CPU lowering and LLVM's JIT compile")
  parser.add_argument("--json", help="write the timings to this file")
  args = parser.parse_args()
  sizes = [int(s) for s in args.sizes.split(",")]
  results = {}
  for name in args.families.split(","):
    if name not in FAMILIES: parser.error(f"unknown family '{name}' (known: {', '.join(FAMILIES)})")
    runs = [time_graph(FAMILIES[name], n, args.llvm) for n in sizes]
    results[name] = {"sizes": sizes, "seconds": runs}
    print(f"\n{name}: seconds per stage at n = {', '.join(map(str, sizes))} ops; k = growth exponent")
    for stage in runs[0]:
      seconds = [run[stage] for run in runs]
      print(f"  {stage:<22}" + "".join(f"{t:9.3f}" for t in seconds) + f"   k = {exponent(sizes, seconds):5.2f}")
  worst = max((max(run["schedule"] for run in r["seconds"]), name) for name, r in results.items())
  print(f"\nslowest schedule: {worst[0]:.2f} s ({worst[1]}, n = {max(sizes)})")
  if args.json:
    with open(args.json, "w") as f: json.dump(results, f, indent=1)


if __name__ == "__main__":
  main()
