"""Compiling bench/run.py's workloads (at --quick sizes) and examples/demo.py's graphs for real GPU targets, no GPU needed:
per target (gfx90a, gfx942, gfx1100, sm_80, sm_90) the compile time per kernel (mapping, upstream lowering, LLVM/NVPTX
backend, and for AMD the link: nothing cached), and the resources of each kernel: for gfx942 the VGPRs, SGPRs and group
segment (LDS) bytes its code object's descriptor and metadata give, for sm_90 the registers and shared memory `ptxas -v`
reports (when ptxas is on PATH).

  python bench/gpu_compile.py [--only NAME] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from run import workloads  # noqa: E402

from pytc import Tensor  # noqa: E402
from pytc.compiler import Schedule, context  # noqa: E402
from pytc.compilers.gpu import GPUCompiler, gpu_compiler  # noqa: E402
from pytc.pipelines import copy_module  # noqa: E402
from pytc.realize import schedule  # noqa: E402
from pytc.runtime.amd_code_object import parse  # noqa: E402
from pytc.runtime.device import Binary  # noqa: E402

TARGETS = ("gfx90a", "gfx942", "gfx1100", "sm_80", "sm_90")


def data(shape: tuple[int, ...]) -> Tensor:
  """A realized input, as bench/run.py gives its workloads."""
  return Tensor(np.random.default_rng(0).standard_normal(shape, dtype=np.float32))


def demo_graphs() -> dict[str, Tensor]:
  """examples/demo.py's two expressions."""
  a, b = Tensor([1.0, 2.0, 3.0, 4.0]), Tensor([0.5, -1.0, 2.0, 8.0])
  x, y = data((1024, 1024)), data((1024, 1024))
  return {"demo_relu_4": ((a + b) * 2 - a / b).relu(), "demo_exp2_1024x1024": ((x * y + x).maximum(0.0) * 0.5).exp2()}


def graphs() -> dict[str, Schedule]:
  """The schedule of every workload of bench/run.py (--quick sizes, chain_16M left out: chain_4M's kernel at another size) and
  of the demo's graphs, by name."""
  out = {w.name: w.tensor(*[data(shape) for shape in w.inputs]) for w in workloads(quick=True) if w.name != "chain_16M"}
  return {name: schedule([t.lazydata])[0] for name, t in (out | demo_graphs()).items()}


def compile_for(compiler: GPUCompiler, scheduled: Schedule) -> tuple[Binary, float]:
  """The binary of a schedule's kernels (never from the disk cache) and the seconds it took."""
  start = time.perf_counter()
  with context(): binary = compiler.compile(copy_module(scheduled.kernels), "bench", cached=False)[0]
  return binary, time.perf_counter() - start


def ptxas_resources(ptx_text: str, arch: str) -> dict[str, dict[str, int]] | None:
  """Registers and shared memory bytes of each kernel as `ptxas -v` reports them, or None without ptxas."""
  if (ptxas := shutil.which("ptxas")) is None: return None
  with tempfile.TemporaryDirectory() as scratch:
    src = os.path.join(scratch, "kernels.ptx")
    with open(src, "w") as f: f.write(ptx_text)
    done = subprocess.run([ptxas, f"-arch={arch}", "-O3", "-v", src, "-o", os.path.join(scratch, "kernels.cubin")], capture_output=True, text=True)
  if done.returncode != 0: raise RuntimeError(f"ptxas rejected the PTX: {done.stderr.strip()[:500]}")
  out, kernel = {}, None
  for line in done.stderr.splitlines():
    if m := re.search(r"Compiling entry function '(\w+)'", line): kernel = out.setdefault(m[1], {"registers": 0, "shared": 0})
    elif kernel is not None and (m := re.search(r"Used (\d+) registers", line)):
      kernel["registers"] = int(m[1])
      kernel["shared"] = int(s[1]) if (s := re.search(r"(\d+) bytes smem", line)) else 0
  return out


def measure(scheduled: dict[str, Schedule]) -> list[dict]:
  rows = []
  for target in TARGETS:
    compiler = gpu_compiler(target)
    for name, s in scheduled.items():
      binary, seconds = compile_for(compiler, s)
      resources: dict[str, dict] = {}
      if target == "gfx942":
        kernels = parse(binary.code).kernels
        resources = {k: {"vgprs": v.vgpr_count, "sgprs": v.sgpr_count, "lds": v.group_segment_fixed_size} for k, v in kernels.items()}
      elif target == "sm_90": resources = ptxas_resources(binary.code.decode(), target) or {}
      for info in binary.kernels:
        rows.append({"target": target, "workload": name, "kernel": info.name, "kernels": len(binary.kernels), "grid": info.sizes["grid"],
                     "local": info.sizes["local"], "ms_per_kernel": 1e3 * seconds / len(binary.kernels), **resources.get(info.name, {})})
  return rows


def table(rows: list[dict]) -> str:
  workloads_ = list(dict.fromkeys(r["workload"] for r in rows))
  first = {(r["target"], r["workload"]): r for r in rows}
  lines = ["compile time per kernel (ms; one binary per workload holds all its kernels)",
           f"{'workload':<22}{'kernels':>8}" + "".join(f"{t:>10}" for t in TARGETS)]
  for w in workloads_:
    lines.append(f"{w:<22}{first[(TARGETS[0], w)]['kernels']:>8}" + "".join(f"{first[(t, w)]['ms_per_kernel']:>10.1f}" for t in TARGETS))
  lines += ["", "kernel resources: gfx942 (code object) and sm_90 (ptxas -v)",
            f"{'workload':<22}{'kernel':<34}{'grid x local':>14}{'VGPR':>6}{'SGPR':>6}{'LDS':>6}{'regs':>6}{'smem':>6}"]
  by_kernel = {(r["target"], r["workload"], r["kernel"]): r for r in rows}
  for r in (r for r in rows if r["target"] == "gfx942"):
    nv = by_kernel.get(("sm_90", r["workload"], r["kernel"]), {})
    lines.append(f"{r['workload']:<22}{r['kernel'][:33]:<34}{str(r['grid']) + ' x ' + str(r['local']):>14}{r['vgprs']:>6}{r['sgprs']:>6}{r['lds']:>6}"
                 f"{nv.get('registers', '-'):>6}{nv.get('shared', '-'):>6}")
  return "\n".join(lines)


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--only", help="only the workloads whose name contains this")
  parser.add_argument("--json", help="also write the rows to this file")
  args = parser.parse_args()
  scheduled = {name: s for name, s in graphs().items() if not args.only or args.only in name}
  rows = measure(scheduled)
  print(table(rows))
  if args.json:
    with open(args.json, "w") as f: json.dump(rows, f, indent=1)


if __name__ == "__main__":
  main()
