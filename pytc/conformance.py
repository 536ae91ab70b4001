"""Run tinygrad's own test files, or its model files (--models, see pytc.conformance_models), against pytc.

    python -m pytc.conformance --tinygrad-src PATH test/backend/test_ops.py [-k EXPR] [--json FILE]
    python -m pytc.conformance --tinygrad-src PATH --models [--only gpt2 llama] [--reference-device PYTHON]

The test files, with the test modules they import and the repository's test support (`extra/gradcheck.py`), are
copied out of the tinygrad checkout into a scratch folder beside a generated `tinygrad` package that only maps
names onto pytc (pytc.conformance_shim). Nothing of tinygrad's library is imported. pytest runs the copies and
every test is reported as passed, skipped (with the reason: the shim skips tests that inspect tinygrad's
internals), failed with an exception, or failed with a wrong value (an assertion on the values pytc computed).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from pytc.conformance_shim import DESELECTED, SHIM, SUPPORT_FILES

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
  if report.skipped and isinstance(report.longrepr, tuple): return str(report.longrepr[2]).removeprefix("Skipped: ")[:300]
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
@pytest.hookimpl
def pytest_collection_modifyitems(config, items):
  names = set(json.loads(config.getoption("--conformance-deselect")))
  config.hook.pytest_deselected(items=[item for item in items if item.originalname in names])
  items[:] = [item for item in items if item.originalname not in names]
def pytest_sessionfinish(session):
  with open(session.config.getoption("--conformance-json"), "w") as f: json.dump(RESULTS, f, indent=1)
def pytest_addoption(parser):
  parser.addoption("--conformance-json")
  parser.addoption("--conformance-deselect", default="[]")
"""


def write_shim(root: Path) -> None:
  """The `tinygrad` name-mapping package and the result-collecting pytest plugin, under `root`."""
  for relative, text in SHIM.items():
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.lstrip())
  (root / "conformance_plugin.py").write_text(PLUGIN.lstrip())
  (root / "pytest.ini").write_text("[pytest]\n")


def test_modules(tinygrad_src: Path, test_files: list[str]) -> list[str]:
  """`test_files` and the test modules they import (`from test.unit.test_jit import ...`), relative to the checkout."""
  found, pending = [], list(test_files)
  while pending:
    name = pending.pop()
    if name in found: continue
    if not (tinygrad_src / name).is_file(): raise SystemExit(f"pytc.conformance: no test file {tinygrad_src / name}")
    found.append(name)
    imported = re.findall(r"^from (test(?:\.\w+)+) import", (tinygrad_src / name).read_text(), re.MULTILINE)
    pending += [path for module in imported if (path := module.replace(".", "/") + ".py") not in SHIM]
  return found


def run(tinygrad_src: Path, test_files: list[str], keyword: str | None, timeout: int) -> dict[str, dict[str, str]]:
  """Copy the test files (at their paths in the checkout) next to the shim, run them under pytest and return
  {test id: {outcome, message}}. The tests DESELECTED names are left out."""
  with tempfile.TemporaryDirectory(prefix="pytc-conformance-") as scratch:
    root = Path(scratch)
    write_shim(root)
    for name in [*test_modules(tinygrad_src, test_files), *(f for f in SUPPORT_FILES if (tinygrad_src / f).is_file())]:
      (root / name).parent.mkdir(parents=True, exist_ok=True)
      shutil.copyfile(tinygrad_src / name, root / name)
    results_path = root / "results.json"
    command = [sys.executable, "-m", "pytest", "-q", "--tb=native", "-p", "conformance_plugin", "-p", "no:cacheprovider", "--noconftest",
               "--import-mode=importlib", "--rootdir", str(root), "-c", str(root / "pytest.ini"), f"--timeout={timeout}" if _has_timeout() else "",
               "--conformance-json", str(results_path), "--conformance-deselect", json.dumps(list(DESELECTED)),
               *(["-k", keyword] if keyword else []), *test_files]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    output = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
    with subprocess.Popen([part for part in command if part], cwd=root, env=environment, **output) as pytest:
      for line in pytest.stdout: sys.stderr.write(line)
    if not results_path.exists(): raise SystemExit("pytc.conformance: the test run ended before reporting (did the interpreter crash?)")
    results = json.loads(results_path.read_text())
    for name in test_files:
      if not any(test_id.startswith(name) for test_id in results):
        results[f"{name}::<collection>"] = {"outcome": "error", "message": "no tests collected"}
    return results


def _has_timeout() -> bool: return importlib.util.find_spec("pytest_timeout") is not None


def summarize(results: dict[str, dict[str, str]]) -> str:
  counts = {outcome: sum(r["outcome"] == outcome for r in results.values()) for outcome in ("passed", "skipped", "wrong value", "error")}
  def name(test_id: str) -> str: return test_id if test_id.endswith("<collection>") else test_id.split("::", 1)[-1]
  failed = [f"  {outcome:<11} {name(test_id)}: {r['message']}" for outcome in ("wrong value", "error")
            for test_id, r in sorted(results.items()) if r["outcome"] == outcome]
  reasons: dict[str, int] = {}
  for r in results.values():
    if r["outcome"] == "skipped": reasons[r["message"]] = reasons.get(r["message"], 0) + 1
  skipped = [f"  skipped {n:>4}x {reason}" for reason, n in sorted(reasons.items(), key=lambda item: -item[1])]
  summary = ", ".join(f"{n} {outcome}" for outcome, n in counts.items())
  deselected = [f"  deselected  {name}: {reason}" for name, reason in DESELECTED.items()]
  return "\n".join([*skipped, *deselected, *failed, f"{len(results)} tests: {summary}"])


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
