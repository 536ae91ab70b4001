# ruff: noqa: F821
"""lit configuration for pytc's FileCheck tests; run `lit test -v` from the repository root."""
import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

import lit.formats

config.name = "pytc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = str(Path(__file__).parent)
config.excludes = ["python", "Output"]
if "PYTHONPATH" in os.environ: config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]


def tool(name: str, path: Path | str | None) -> None:
  if path is None or not Path(path).exists():
    lit_config.fatal(f"{name} not found")
  config.substitutions.append((rf"(?<![\w/.-]){re.escape(name)}(?![\w/.-])", str(path)))


local_opt = Path(sys.executable).parent / "pytc-opt"
tool("pytc-opt", local_opt if local_opt.exists() else shutil.which("pytc-opt"))

llvm = importlib.util.find_spec("llvm")
locations = llvm.submodule_search_locations if llvm else []
llvm_bin = next((Path(p) / "bin" for p in locations if (Path(p) / "bin" / "FileCheck").exists()), None)
for name in ("FileCheck", "not"):
  tool(name, llvm_bin / name if llvm_bin else None)
