"""bench/gpu.py's two halves on this machine: its numerics cases exported for the emulated GPU target, then checked against
NumPy by the run half (what the GPU machine runs on NV)."""
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "bench" / "gpu.py"


def test_compile_then_check_on_emu(tmp_path: Path):
  subprocess.run([sys.executable, str(BENCH), "compile", "--out", str(tmp_path), "--target", "emu", "--quick"], check=True, capture_output=True)
  assert (tmp_path / "gpt2_2layers_seq64.pytc").stat().st_size < 1 << 20  # the weights are call inputs, not stored
  run = subprocess.run([sys.executable, str(BENCH), "run", str(tmp_path), "--checks-only"], capture_output=True, text=True)
  assert run.returncode == 0, run.stdout + run.stderr
  assert run.stdout.count(" ok") == 14 and "MISMATCH" not in run.stdout
