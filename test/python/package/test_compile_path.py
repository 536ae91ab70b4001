"""The realize → schedule → compile → run path reads top-down: traced through one realize (compile included), it is at
most six modules deep and re-enters no module it left, except between a base class and its subclass (a template method
calling the subclass's hooks, a subclass calling the base's)."""
import os
import sys

import numpy as np

import pytc
from pytc import Tensor

ROOT = os.path.dirname(os.path.dirname(pytc.__file__)) + os.sep
LEAVES = ("pytc/helpers.py", "pytc/flags.py", "pytc/dtype.py")  # utilities every stage reads, entering nothing
PASS_MANAGER = "pytc/passes/__init__.py"  # passes run inside MLIR's pass manager, entered here
HIERARCHIES = {frozenset(("pytc/compilers/__init__.py", "pytc/compilers/cpu.py")), frozenset(("pytc/runtime/device.py", "pytc/runtime/ops_cpu.py"))}


def module_of(frame) -> str | None:
  path = frame.f_code.co_filename.replace("/pytc/passes/", "/passes/").replace("/pytc/runtime/", "/runtime/")
  if not path.startswith(ROOT): return None
  relative = os.path.relpath(path, ROOT)
  return "pytc/" + relative if relative.startswith(("passes/", "runtime/")) else relative


def realize_paths(build) -> set[tuple[str, ...]]:
  """Each distinct chain of modules (consecutive frames of one module counted once) from realize.py down to a call."""
  paths = set()

  def profile(frame, event, arg):
    if event != "call": return
    chain, f = [], frame
    while f is not None:
      if (name := module_of(f)) is not None and (not chain or chain[-1] != name): chain.append(name)
      f = f.f_back
    chain.reverse()
    if "pytc/realize.py" not in chain: return
    chain = chain[chain.index("pytc/realize.py"):]
    if PASS_MANAGER in chain: chain = chain[:chain.index(PASS_MANAGER) + 1]
    paths.add(tuple(m for m in chain if m not in LEAVES))

  out = build()
  sys.setprofile(profile)
  try: out.realize()
  finally: sys.setprofile(None)
  return paths


def test_a_realize_is_at_most_six_modules_deep_and_never_bounces(monkeypatch):
  monkeypatch.setenv("PYTC_CACHE", "0")  # compile for real
  a = Tensor(np.random.default_rng(0).random((48, 40), dtype=np.float32)).realize()
  paths = realize_paths(lambda: (a @ a.T).relu().sum(1) + a.max())
  assert any("pytc/compiler.py" in p for p in paths) and any(PASS_MANAGER in p for p in paths)  # it compiled
  deepest = max(paths, key=len)
  assert len(deepest) <= 6, " -> ".join(deepest)
  for path in paths:
    for i, name in enumerate(path):
      if name in path[:i]:
        assert frozenset((path[i - 1], name)) in HIERARCHIES, f"{name} re-entered: {' -> '.join(path)}"
