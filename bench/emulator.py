"""The RDNA3 emulator behind AMD:MOCK: bench/run.py's workloads (at --quick sizes, every dimension above 8 divided by --divide) realized on
the MOCK gfx1100, whose dispatches execute the kernels' machine code, checked against the CPU device. Per workload: the kernels
dispatched, the wave-instructions executed (one instruction for one wave of 32 lanes), the seconds the executor took and
its rate, and the same workload under PYTC_AMD_MOCK=emulation (the kernels' CPU emulation) for comparison.

  python bench/emulator.py [--divide N] [--only NAME] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from run import workloads  # noqa: E402

from pytc import Tensor  # noqa: E402
from pytc.runtime.amd.rdna3.wave import COUNTERS  # noqa: E402


def shrink(shape: tuple[int, ...], divide: int) -> tuple[int, ...]:
  """The shape with every dimension above 8 divided (so that a matmul's or convolution's shapes still agree)."""
  return tuple(d // divide if d > 8 else d for d in shape)


def measure(w, arrays: list[np.ndarray], mode: str) -> dict:
  os.environ["PYTC_AMD_MOCK"] = mode
  before = (COUNTERS.dispatches, COUNTERS.wave_instructions, COUNTERS.seconds)
  w.tensor(*[Tensor(a, device="AMD:MOCK") for a in arrays]).numpy()  # compiles (both compilers run on the MOCK)
  start = time.perf_counter()
  got = w.tensor(*[Tensor(a, device="AMD:MOCK") for a in arrays]).numpy()
  seconds = time.perf_counter() - start
  want = w.tensor(*[Tensor(a, device="CPU") for a in arrays]).numpy()
  error = float(np.max(np.abs(got - want) / (np.abs(want) + 1))) if want.size else 0.0
  dispatches, executed, busy = (now - then for now, then in zip((COUNTERS.dispatches, COUNTERS.wave_instructions, COUNTERS.seconds), before))
  return {"seconds": seconds, "error": error, "dispatches": dispatches // 2, "wave_instructions": executed // 2, "executor_seconds": busy / 2}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--divide", type=int, default=4, help="divide each dimension above 8 (default 4, after --quick)")
  parser.add_argument("--only", help="run only the workload of this name")
  parser.add_argument("--json", help="write the rows as JSON here")
  args = parser.parse_args()
  rows = []
  print(f"{'workload':24s} {'kernels':>7s} {'wave-instr':>11s} {'isa s':>8s} {'instr/s':>10s} {'emulation s':>11s} {'err vs CPU':>11s}")
  for w in workloads(quick=True):
    if args.only and w.name != args.only: continue
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shrink(shape, args.divide), dtype=np.float32) for shape in w.inputs]
    isa, emulation = measure(w, arrays, "isa"), measure(w, arrays, "emulation")
    rate = isa["wave_instructions"] / max(isa["executor_seconds"], 1e-9)
    rows.append({"workload": w.name, "shapes": [a.shape for a in arrays], "isa": isa, "emulation": emulation, "wave_instructions_per_s": rate})
    print(f"{w.name:24s} {isa['dispatches']:7d} {isa['wave_instructions']:11d} {isa['seconds']:8.3f} {rate:10.0f} "
          f"{emulation['seconds']:11.3f} {isa['error']:11.2e}")
  total = sum(r["isa"]["wave_instructions"] for r in rows) / max(sum(r["isa"]["executor_seconds"] for r in rows), 1e-9)
  print(f"overall: {total:.0f} wave-instructions/s ({32 * total:.3g} lane-instructions/s)")
  if args.json:
    with open(args.json, "w") as f: json.dump({"rows": rows, "wave_instructions_per_s": total}, f, indent=1)


if __name__ == "__main__":
  main()
