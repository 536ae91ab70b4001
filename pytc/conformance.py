"""Run tinygrad's own test files, or its model files (--models, see pytc.conformance_models), against pytc.

    python -m pytc.conformance --tinygrad-src PATH test/backend/test_ops.py [-k EXPR] [--json FILE]
    python -m pytc.conformance --tinygrad-src PATH --models [--only gpt2 llama] [--reference-device PYTHON]

The test files are copied out of the tinygrad checkout into a scratch folder beside a generated `tinygrad`
package that only maps names onto pytc (`Tensor`, `dtypes`, `TinyJit`, `GlobalCounters`, `nn`, ...); the
test files' own bookkeeping (environment flags, `Context`, device capability checks) gets inert stand-ins.
Nothing of tinygrad's own code is imported. pytest runs the copies and every test is reported as passed,
skipped, failed with an exception, or failed with a wrong value (an assertion on the values pytc computed).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SHIM: dict[str, str] = {
  "tinygrad/__init__.py": """
from pytc import Device, GlobalCounters, Tensor, TinyJit, Variable, dtypes, function, nn
from tinygrad.helpers import Context
from tinygrad.device import Device
""",
  "tinygrad/tensor.py": """
from typing import cast
from pytc import Tensor
from tinygrad.dtype import _to_np_dtype
""",
  "tinygrad/uop/__init__.py": "",
  "tinygrad/uop/ops.py": "from pytc.symbolic import Variable as UOp  # a bound Variable is what tinygrad's code checks for\n",
  "tinygrad/llm/__init__.py": "",
  "tinygrad/llm/gguf.py": "from pytc.nn.gguf import gguf_load  # noqa\n",
  "tinygrad/dtype.py": """
import numpy as np
from pytc.dtype import DType, dtypes
def _to_np_dtype(dtype): return np.dtype(dtype.numpy).type if dtype is not dtypes.bfloat16 else None
""",
  "tinygrad/device.py": """
from pytc import dtypes
from pytc.device import Device as _Device
class _Renderer:
  def supported_dtypes(self): return list(dtypes.all)
class _Opened:
  renderer = _Renderer()
class _DeviceNames:
  @property
  def DEFAULT(self): return _Device.DEFAULT
  def canonicalize(self, name): return _Device.canonicalize(name)
  def __getitem__(self, name): return _Opened()
Device = _DeviceNames()
""",
  "tinygrad/helpers.py": """
import os
from pytc.helpers import DEBUG, JIT, ContextVar, GlobalCounters, Timing, colored, fetch, get_child, getenv, tqdm, trange
from pytc.helpers import Context as _Context
class _Dev:
  device, renderer, interface, arch = "CPU", "", "", ""
DEV = _Dev()
IMAGE, CI, OSX, WINDOWS = 0, bool(os.environ.get("CI")), False, False
class Context(_Context):  # the modes pytc has (TRAINING) are set; tinygrad's compiler flags mean nothing here
  def __init__(self, **flags): super().__init__(**{k: v for k, v in flags.items() if k in ContextVar._registry})
""",
  "tinygrad/renderer/__init__.py": "class Renderer: pass\n",
  "tinygrad/renderer/nir.py": "class NIRRenderer: pass\n",
  "tinygrad/renderer/ptx.py": "class PTXRenderer: pass\n",
  "tinygrad/nn/__init__.py": "from pytc.nn import *  # noqa\nfrom pytc.nn import datasets, optim, state  # noqa\n",
  "tinygrad/nn/datasets.py": "from pytc.nn.datasets import *  # noqa\n",
  "tinygrad/nn/optim.py": "from pytc.nn.optim import *  # noqa\n",
  "tinygrad/nn/state.py": "from pytc.nn.state import *  # noqa\n",
  "tinygrad/engine/__init__.py": "",
  "tinygrad/engine/jit.py": "from pytc.jit import *  # noqa\n",
}

PLUGIN = """
import json, pytest
RESULTS = {}
VALUE_ERRORS = ("Not equal to tolerance", "Arrays are not equal", "Mismatched elements", "dtype mismatch", "shape mismatch")
def _kind(report):
  text = str(report.longrepr)
  if report.skipped: return "skipped"
  if report.passed: return "passed"
  return "wrong value" if any(marker in text for marker in VALUE_ERRORS) else "error"
def _last_line(report):
  lines = [line for line in str(report.longrepr).splitlines() if line and not line.startswith(" ")]
  return lines[-1].strip()[:300] if lines else ""
@pytest.hookimpl
def pytest_runtest_logreport(report):
  if report.when == "call" or report.outcome != "passed":
    previous = RESULTS.get(report.nodeid)
    if previous is None or previous["outcome"] == "passed": RESULTS[report.nodeid] = {"outcome": _kind(report), "message": _last_line(report)}
@pytest.hookimpl
def pytest_collectreport(report):
  if report.failed: RESULTS[report.nodeid + "::<collection>"] = {"outcome": "error", "message": "collection failed: " + _last_line(report)}
def pytest_sessionfinish(session):
  with open(session.config.getoption("--conformance-json"), "w") as f: json.dump(RESULTS, f, indent=1)
def pytest_addoption(parser): parser.addoption("--conformance-json")
"""


def write_shim(root: Path) -> None:
  """The `tinygrad` name-mapping package and the result-collecting pytest plugin, under `root`."""
  for relative, text in SHIM.items():
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.lstrip())
  (root / "conformance_plugin.py").write_text(PLUGIN.lstrip())
  (root / "pytest.ini").write_text("[pytest]\n")


def run(tinygrad_src: Path, test_files: list[str], keyword: str | None, timeout: int) -> dict[str, dict[str, str]]:
  """Copy the test files next to the shim, run them under pytest and return {test id: {outcome, message}}."""
  with tempfile.TemporaryDirectory(prefix="pytc-conformance-") as scratch:
    root = Path(scratch)
    write_shim(root)
    copies = []
    for name in test_files:
      source = tinygrad_src / name
      if not source.is_file(): raise SystemExit(f"pytc.conformance: no test file {source}")
      copies.append(root / source.name)
      shutil.copyfile(source, copies[-1])
    results_path = root / "results.json"
    command = [sys.executable, "-m", "pytest", "-q", "--tb=native", "-p", "conformance_plugin", "-p", "no:cacheprovider", "--noconftest",
               "--import-mode=importlib", "--rootdir", str(root), "-c", str(root / "pytest.ini"), f"--timeout={timeout}" if _has_timeout() else "",
               "--conformance-json", str(results_path), *(["-k", keyword] if keyword else []), *map(str, copies)]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    output = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
    with subprocess.Popen([part for part in command if part], cwd=root, env=environment, **output) as pytest:
      for line in pytest.stdout: sys.stderr.write(line)
    if not results_path.exists(): raise SystemExit("pytc.conformance: the test run ended before reporting (did the interpreter crash?)")
    results = json.loads(results_path.read_text())
    for copy in copies:
      if not any(test_id.startswith(copy.name) for test_id in results):
        results[f"{copy.name}::<collection>"] = {"outcome": "error", "message": "no tests collected"}
    return results


def _has_timeout() -> bool: return importlib.util.find_spec("pytest_timeout") is not None


def summarize(results: dict[str, dict[str, str]]) -> str:
  counts = {outcome: sum(r["outcome"] == outcome for r in results.values()) for outcome in ("passed", "skipped", "wrong value", "error")}
  def name(test_id: str) -> str: return test_id if test_id.endswith("<collection>") else test_id.split("::", 1)[-1]
  failed = [f"  {outcome:<11} {name(test_id)}: {r['message']}" for outcome in ("wrong value", "error")
            for test_id, r in sorted(results.items()) if r["outcome"] == outcome]
  summary = ", ".join(f"{n} {outcome}" for outcome, n in counts.items())
  return "\n".join([*failed, f"{len(results)} tests: {summary}"])


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(prog="python -m pytc.conformance", description=__doc__.split("\n\n")[1])
  parser.add_argument("--tinygrad-src", type=Path, required=True, help="a tinygrad source checkout")
  parser.add_argument("tests", nargs="*", help="test files, relative to the checkout (e.g. test/backend/test_ops.py)")
  parser.add_argument("--models", action="store_true", help="run the model files instead (see pytc.conformance_models)")
  parser.add_argument("--only", nargs="+", help="with --models: these cases only")
  parser.add_argument("--reference-device", help="with --models: the device tinygrad runs on (its DEV), e.g. PYTHON")
  parser.add_argument("-k", dest="keyword", help="only tests matching this pytest -k expression")
  parser.add_argument("--json", type=Path, help="also write {test id: {outcome, message}} here")
  parser.add_argument("--timeout", type=int, default=300, help="seconds per test when pytest-timeout is installed")
  args = parser.parse_args(argv)
  if args.models:
    from pytc.conformance_models import CASES, run_models
    results = run_models(args.tinygrad_src, args.only or list(CASES), args.reference_device, args.timeout * 4, write_shim)
    if args.json: args.json.write_text(json.dumps(results, indent=1))
    print("\n".join(f"  {r['outcome']:<11} {case}: {r['message']}" for case, r in results.items()))
    return 0 if all(r["outcome"] in ("matched", "ran") for r in results.values()) else 1
  if not args.tests: parser.error("name test files, or --models")
  results = run(args.tinygrad_src, args.tests, args.keyword, args.timeout)
  if args.json: args.json.write_text(json.dumps(results, indent=1))
  print(summarize(results))
  return 0 if all(r["outcome"] in ("passed", "skipped") for r in results.values()) else 1


if __name__ == "__main__":
  sys.exit(main())
