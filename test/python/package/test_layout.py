"""The checkout is the import tree: Python started in the repository root, or anywhere with the environment `make`
built, imports pytc, its passes and its runtime from the checkout's own folders."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("where", ["root", "elsewhere"])
def test_pytc_imports_from_the_checkout(where, tmp_path):
  code = ("import pytc, pytc.passes, pytc.runtime, pytc.passes.cpu.vectorize as v; "
          "print(pytc.__file__, pytc.passes.__file__, pytc.runtime.__file__, v.__file__)")
  found = subprocess.run([sys.executable, "-c", code], cwd=ROOT if where == "root" else tmp_path, capture_output=True, text=True, check=True)
  assert [Path(p) for p in found.stdout.split()] == [ROOT / "pytc/__init__.py", ROOT / "passes/__init__.py", ROOT / "runtime/__init__.py",
                                                     ROOT / "passes/cpu/vectorize.py"]
