"""Kernel search: choose each kernel's code-generation choices by timing candidates on the machine that runs them.

The choices are those of pytc's CPU passes (a kernel's `pytc.tune`, see passes/common/attributes.py): whether and how
wide to vectorize (lanes), the register block (vectors side by side, rows of the upcast range), how many blocks share
one packed panel (group) and whether to pack at all, the loop order of reductions (reduce_outer), how many cores
a launch is split across, and into how many runs the cores split each group's columns (chunks). Starting from the
passes' defaults, the search changes one choice at a time and keeps a change that makes the kernel faster, in rounds,
until a round finds nothing or the time budget is spent (coordinate descent). Each candidate is compiled alone, run on
buffers of the kernel's shapes (floats filled with random values, integers with zeros so no read can leave its buffer),
checked against the default choice's output, and timed (the best of several launches). Candidates whose code comes out
the same as one already timed are not compiled again.

The winner is stored in the kernel cache's folder (record file `tuned`) under a hash of the kernel's IR (its structure
and shapes, not its name), the target with its CPU features, and pytc's version; every compile uses a stored winner
(`PYTC_SEARCH=0` or not). With `PYTC_SEARCH=1`, a kernel without one is searched when it is first compiled
(`PYTC_SEARCH_BUDGET` seconds each, default 20; `DEBUG=1` prints each search). A stored value that is not a well-formed
choice is ignored.
"""
from __future__ import annotations

import hashlib
import json
import re
import time

import numpy as np
from mlir import ir

from pytc import flags, kernel_cache
from pytc.helpers import DEBUG, pytc_version
from pytc.passes.common.attributes import KERNEL, TUNE, VECTOR
from pytc.pipelines import copy_module
from pytc.runtime.device import Compiled
from pytc.runtime.hcq import SUBMIT_LOCK

RECORDS = "tuned"
MIN_SECONDS = 20e-6  # a kernel faster than this with the defaults is not searched: launching it costs more than any choice saves
TUNE_TEXT = re.compile(r"pytc\.tune = \{[^}]*\},? ?")
Choice = dict[str, int]


def structure_key(kernel: ir.Operation, device: Compiled) -> str:
  """What a winner depends on: the kernel's IR under a fixed name, the target (with its CPU features), pytc's version."""
  name = ir.StringAttr(kernel.attributes["sym_name"]).value
  text = kernel.get_asm(assume_verified=True).replace(f"@{name}(", "@kernel(", 1)
  return hashlib.sha256(f"pytc {pytc_version()}\n{device.target.cache_key()}\n{text}".encode()).hexdigest()


def stored_winner(key: str) -> Choice | None:
  """The winner stored under `key`, or None (none stored, or a value that is not a well-formed choice)."""
  if (text := kernel_cache.load_record(RECORDS, key)) is None: return None
  try: choice = json.loads(text)
  except ValueError as error: problem = f"not JSON: {error}"
  else:
    if (problem := choice_problem(choice)) is None: return choice
  if DEBUG >= 1: print(f"search: ignoring the stored winner {key[:12]}: {problem}")
  return None


def choice_problem(choice: object) -> str | None:
  """Why `choice` is not a well-formed `pytc.tune` (known keys, integers within their ranges), or None."""
  if not isinstance(choice, dict): return "not an object"
  allowed = TUNE.kind.optional
  for key, value in choice.items():
    if key not in allowed: return f"unknown choice {key!r}"
    if type(value) is not int or value not in allowed[key]: return f"{key}: {value!r} is not {allowed[key]}"
  return None


def dimensions(device: Compiled) -> dict[str, list[int]]:
  """The values tried for each choice on `device`'s target, the passes' defaults aside."""
  lanes = device.target.vector_lanes
  return {"vectorize": [0], "lanes": sorted({lanes, max(4, lanes // 2)}), "vectors": [1, 2, 3, 4], "rows": [1, 2, 4, 6, 8, 12],
          "group": [1, 4, 16, 64], "pack": [0, 1], "reduce_outer": [0, 1], "cores": sorted({1, getattr(device, "cores", 1)}), "chunks": [1, 2, 4, 8]}


class Trial:
  """One kernel's candidates compiled and timed on one set of buffers."""
  def __init__(self, kernels: ir.Module, name: str, device: Compiled):
    self.kernels, self.name, self.device = kernels, name, device
    self.seen: dict[str, float | None] = {}  # the code a candidate generates -> its seconds (None: failed or wrong)
    self.runnable: dict[str, tuple] = {}  # the code a candidate generates -> (program, kernel, arguments), to time it again
    self.signatures: dict[str, str] = {}  # a choice (as JSON) -> the code it generates
    self.buffers, self.reference = self.allocate(), None

  def allocate(self) -> list:
    kernel = next(op for op in self.kernels.body.operations if KERNEL.get(op))
    rng, buffers = np.random.default_rng(0), []
    self.element = ir.MemRefType(kernel.regions[0].blocks[0].arguments[0].type).element_type  # of the buffer it writes
    for argument in kernel.regions[0].blocks[0].arguments:
      memref = ir.MemRefType(argument.type)
      data = np.zeros(max(1, int(np.prod(memref.shape))), element_dtype(memref.element_type))
      if data.dtype.kind == "f": data[:] = rng.standard_normal(data.size) * 0.5
      buffer = self.device.allocator.alloc(data.nbytes)
      self.device.allocator.copyin(buffer, memoryview(data).cast("B"))
      buffers.append(buffer)
    return buffers

  def output(self) -> bytes:
    data = bytearray(self.buffers[0].nbytes)
    self.device.allocator.copyout(memoryview(data), self.buffers[0])
    return bytes(data)

  def seconds(self, choice: Choice, budget_end: float) -> float | None:
    """The best time of the kernel compiled with `choice` (None: it failed, or computed something else than the default)."""
    module = copy_module(self.kernels)
    kernel = next(op for op in module.body.operations if KERNEL.get(op))
    TUNE.set(kernel, choice)
    compiler = self.device.compiler
    try: code = compiler.generate(module)
    except RuntimeError: return None
    signature = f"{TUNE_TEXT.sub('', code)}\ncores {choice.get('cores')}"  # candidates that differ only in choices without effect
    self.signatures[json.dumps(choice, sort_keys=True)] = signature
    if signature in self.seen: return self.seen[signature]
    self.seen[signature] = None
    try:
      program = self.device.program(compiler.build(module))
      launch = program.kernels[self.name]
      args = launch.args(self.buffers)
      self.launch(launch, args)
    except (RuntimeError, OSError, ValueError) as error:
      if DEBUG >= 2: print(f"search: {self.name} {choice}: {type(error).__name__}: {error}")
      return None
    result = self.output()
    if self.reference is None: self.reference = result
    elif not same_values(result, self.reference, self.element):
      if DEBUG >= 1: print(f"search: {self.name} {choice}: rejected, its output differs from the default's")
      return None
    self.runnable[signature] = (program, launch, args)
    self.seen[signature] = best = self.best_of(signature, budget_end)
    return best

  def best_of(self, signature: str, budget_end: float, seconds: float = 0.05) -> float:
    """The shortest of several launches of a compiled candidate (at least 3, then for up to `seconds`)."""
    _, launch, args = self.runnable[signature]
    best, runs, start = float("inf"), 0, time.perf_counter()
    while runs < 3 or (runs < 50 and time.perf_counter() - start < seconds and time.perf_counter() < budget_end):
      best, runs = min(best, self.launch(launch, args)), runs + 1
    return best

  def confirms(self, choice: Choice, budget_end: float) -> bool:
    """Whether `choice` still beats the defaults by 3% timed again beside them, in turns (a busy machine can make one
    candidate look fast once)."""
    winner, default = (self.signatures[json.dumps(c, sort_keys=True)] for c in (choice, {}))
    times = {winner: float("inf"), default: float("inf")}
    for _ in range(3):
      for signature in times: times[signature] = min(times[signature], self.best_of(signature, budget_end, 0.02))
    return times[winner] < 0.97 * times[default]

  def launch(self, kernel, args) -> float:
    device = self.device
    start = time.perf_counter()
    with SUBMIT_LOCK: device.queue().exec(kernel, args).signal(device.timeline, device.next_timeline_value()).submit(device)
    device.synchronize()
    return time.perf_counter() - start

  def release(self) -> None:
    self.runnable.clear()
    for buffer in self.buffers: self.device.allocator.free(buffer)


def element_dtype(element: ir.Type) -> np.dtype:
  """The NumPy dtype of a buffer's element as the kernel stores it (bf16 and other exotic floats as raw integers)."""
  text = str(element)
  if text in ("f32", "f64", "f16"): return np.dtype({"f32": np.float32, "f64": np.float64, "f16": np.float16}[text])
  width = ir.IntegerType(element).width if isinstance(element, ir.IntegerType) else 16 if text == "bf16" else 8
  return np.dtype(f"u{max(1, width // 8)}")


def same_values(a: bytes, b: bytes, element: ir.Type) -> bool:
  """Whether two outputs agree: floats to a relative 1e-4 of the output's scale (candidates may sum in another order)."""
  dtype = element_dtype(element)
  if dtype.kind != "f": return a == b
  x, y = np.frombuffer(a, dtype).astype(np.float64), np.frombuffer(b, dtype).astype(np.float64)
  scale = float(np.nanmax(np.abs(y[np.isfinite(y)]))) if np.isfinite(y).any() else 1.0
  return bool(np.allclose(x, y, rtol=1e-4, atol=1e-5 * max(scale, 1e-30), equal_nan=True))


def search(kernels: ir.Module, name: str, device: Compiled, budget: float) -> Choice:
  """The fastest choice found for the one kernel in `kernels` within `budget` seconds ({} when the defaults are fastest)."""
  start = time.perf_counter()
  trial = Trial(kernels, name, device)
  try:
    end = start + budget
    best_choice: Choice = {}
    if (best := trial.seconds({}, end)) is None: return {}
    default, improved = best, best >= MIN_SECONDS
    while improved and time.perf_counter() < end:
      improved = False
      for key, values in dimensions(device).items():
        for value in values:
          if time.perf_counter() >= end or best_choice.get(key) == value: continue
          candidate = {**best_choice, key: value}
          if (seconds := trial.seconds(candidate, end)) is not None and seconds < 0.97 * best:
            best, best_choice, improved = seconds, candidate, True
    if best_choice and not trial.confirms(best_choice, end + budget / 4): best_choice, best = {}, default
  finally: trial.release()
  if DEBUG >= 1:
    print(f"search: {name}: {len(trial.seen)} candidates in {time.perf_counter() - start:.1f} s, default {default * 1e3:.3f} ms, "
          f"best {best * 1e3:.3f} ms with {best_choice or 'the defaults'}")
  return best_choice


def tune(kernels: ir.Module, device: Compiled) -> None:
  """Give each kernel of `kernels` (index level) its stored winner; with PYTC_SEARCH=1, search the kernels without one. With
  no winner stored and no search, the kernels' structure keys (their IR printed) are not computed."""
  searching = flags.SEARCH.value >= 1
  if not searching and not kernel_cache.has_records(RECORDS): return
  with kernels.context, ir.Location.unknown():
    for kernel in [op for op in kernels.body.operations if KERNEL.get(op) and not VECTOR.has(op)]:
      key = structure_key(kernel.operation, device)
      if (choice := stored_winner(key)) is None and searching:
        name = ir.StringAttr(kernel.attributes["sym_name"]).value
        choice = search(copy_module(kernels, frozenset({name})), name, device, flags.SEARCH_BUDGET.value)
        kernel_cache.store_record(RECORDS, key, json.dumps(choice, separators=(",", ":")))
      if choice: TUNE.set(kernel, choice)
