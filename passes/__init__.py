"""pytc's MLIR passes and the pipeline parser that mixes them with upstream passes.

Every module in this package registers its pass with `@register("pytc-...", "...", takes=(forms...))`; the
registered function takes the module operation (and the pass options as keyword arguments, typed and checked by
their annotations: `lanes: Annotated[int, Within(1, 64, power_of_two=True)] = 8`) and rewrites it in place, raising
`PassError` on input it cannot handle. The first pytc pass of a pipeline checks that every function of the module is in
a form it takes (forms.py); with PYTC_CHECK_FORMS=1 (the tests and the fuzzer set it, pytc-opt always does) every pytc
pass checks its input, the output of the pass before it included. Those checks are a tenth of a big compile (a training
step's), and what pytc's own passes produce is checked at every pass whenever the tests run.
"""

import importlib
import inspect
import os
import pkgutil
import re
import sys
import traceback
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from mlir import ir
from mlir.passmanager import PassManager

from pytc import flags, helpers


class PassError(Exception):
  """A pass rejects its input; reported as an error diagnostic at `location`."""

  def __init__(self, location: ir.Location, message: str):
    super().__init__(message)
    self.location = location


class PipelineError(ValueError):
  """A pass pipeline names an unknown pass or is malformed."""


@dataclass(frozen=True)
class Within:
  """The values an integer option takes: from `low` to `high` (no limit for None), only powers of two if
  `power_of_two`."""

  low: int
  high: int | None = None
  power_of_two: bool = False

  def __contains__(self, value: int) -> bool:
    return (
      self.low <= value
      and (self.high is None or value <= self.high)
      and (not self.power_of_two or value & (value - 1) == 0)
    )

  def __str__(self) -> str:
    kind = "a power of two" if self.power_of_two else "an integer"
    return f"{kind} from {self.low} to {self.high}" if self.high is not None else f"{kind} >= {self.low}"


Limit = Annotated[int, Within(0)]  # a cap: 0 turns off what it caps
Count = Annotated[int, Within(1)]


@dataclass(frozen=True)
class Option:
  name: str
  kind: type  # int, bool or str
  within: Within | None
  default: object

  def __str__(self) -> str:
    return f"{self.name}={str(self.default).lower() if self.kind is bool else self.default}"


@dataclass(frozen=True)
class PassInfo:
  argument: str
  description: str
  run: Callable[..., None]
  takes: tuple[str, ...] = ()  # the forms (forms.py) of the functions it runs on

  def options(self) -> dict[str, Option]:
    """The keyword parameters of `run`, with the type and the range of values their annotations declare."""
    hints, options = typing.get_type_hints(self.run, include_extras=True), {}
    for name, parameter in list(inspect.signature(self.run).parameters.items())[1:]:
      hint = hints.get(name, type(parameter.default))
      within = next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Within)), None)
      options[name] = Option(name, getattr(hint, "__origin__", hint), within, parameter.default)
    return options


PASSES: dict[str, PassInfo] = {}


def register(
  argument: str, description: str, takes: tuple[str, ...] = ()
) -> Callable[[Callable[..., None]], Callable[..., None]]:
  """Register `fn(module_op, **options)` as the pass `argument`, run on modules whose functions are in the forms
  `takes`."""

  def wrap(fn: Callable[..., None]) -> Callable[..., None]:
    from pytc.passes.common.forms import FORMS

    assert argument not in PASSES, f"pass {argument} registered twice"
    assert all(key in FORMS for key in takes), f"pass {argument} takes an unknown form: {takes}"
    info = PassInfo(argument, description, fn, takes)
    for option in info.options().values():
      assert option.kind in (int, bool, str), (
        f"pass {argument}: option {option.name} is a {option.kind}, not an int, bool or str"
      )
      assert option.kind is not int or option.within is not None, (
        f"pass {argument}: int option {option.name} needs a range (Within, Limit, Count)"
      )
    PASSES[argument] = info
    return fn

  return wrap


def functions_with(module: ir.Operation, *op_names: str) -> list[ir.OpView]:
  """The functions of `module` with a body that holds an op of one of `op_names`."""
  return [
    op
    for op in module.regions[0].blocks[0].operations
    if op.operation.name == "func.func"
    and len(op.regions[0].blocks)
    and any(o.operation.name in op_names for o in op.regions[0].blocks[0].operations)
  ]


def range_size(r: ir.Value) -> int:
  """The size of the loop a `uop.range` value names."""
  return ir.IntegerAttr(r.owner.attributes["size"]).value


def checking_every_pass() -> bool:
  """Whether every pytc pass checks the form of its input (PYTC_CHECK_FORMS=1, read live), not only a pipeline's
  first."""
  return flags.CHECK_FORMS.value == 1


def _as_mlir_pass(info: PassInfo, options: dict[str, object], debug: bool, check: bool) -> Callable:
  def run(op: ir.Operation, pass_) -> None:
    from pytc.passes.common.forms import check_input

    try:
      with op.context, op.location:
        if check:
          check_input(op, info.argument, info.takes)
        info.run(op, **options)
    except PassError as error:
      error.location.emit_error(str(error))
      pass_.signal_pass_failure()
    except Exception as error:  # a bug in the pass: report it against the pass and the op it was at, not as a crash
      report_internal_error(info, op, error, debug)
      pass_.signal_pass_failure()

  return run


def report_internal_error(info: PassInfo, module: ir.Operation, error: Exception, debug: bool) -> None:
  """An error diagnostic naming the pass, the exception and the innermost frame of its traceback (and the innermost
  frame of the pass's own code, where that is not it), at the op the pass's code was working on; with `debug`, the
  whole traceback on stderr too."""
  tb = error.__traceback__.tb_next or error.__traceback__  # below the wrapper that ran the pass
  frames, pass_files = traceback.extract_tb(tb), {os.path.abspath(inspect.getfile(info.run))}
  own = [f for f in frames if _is_pass_code(f.filename, pass_files)]
  where = _frame(frames[-1]) if frames else "?"
  if own and own[-1] is not frames[-1]:
    where += f", called from {_frame(own[-1])}"
  message = (str(error).splitlines() or [""])[0]
  hint = "" if debug else "; DEBUG=1 (pytc-opt --debug) prints the traceback"
  _failing_op_location(module, tb, pass_files).emit_error(
    f"{info.argument} failed with an internal error: {type(error).__name__}{': ' + message if message else ''} (at "
    f"{where}){hint}"
  )
  if debug:
    traceback.print_exception(error, file=sys.stderr)


def _is_pass_code(filename: str, pass_files: set[str]) -> bool:
  path = os.path.abspath(filename)
  return path in pass_files or path.startswith(os.path.dirname(os.path.abspath(__file__)) + os.sep)


def _frame(frame: traceback.FrameSummary) -> str:
  path = os.path.abspath(frame.filename)
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  shown = os.path.relpath(path, root) if path.startswith(root + os.sep) else os.path.join(*path.split(os.sep)[-2:])
  return f"{shown}:{frame.lineno} in {frame.name}"


def _failing_op_location(module: ir.Operation, tb: types.TracebackType | None, pass_files: set[str]) -> ir.Location:
  """The location of an op (still in `module`) that the innermost frame of the pass's code holding one was working on;
  the module's where there is none."""
  live: set[ir.Operation] = set()
  module.walk(lambda op: live.add(op) or ir.WalkResult.ADVANCE)
  live.discard(module)
  frames = []
  while tb is not None:
    if _is_pass_code(tb.tb_frame.f_code.co_filename, pass_files):
      frames.append(tb.tb_frame)
    tb = tb.tb_next
  for frame in reversed(frames):
    for value in frame.f_locals.values():
      if isinstance(value, ir.OpResult):
        value = value.owner
      if not isinstance(value, (ir.Operation, ir.OpView)):
        continue
      try:
        if value.operation in live and str(location := value.operation.location) != "loc(unknown)":
          return location
      except RuntimeError:
        continue  # an op the pass erased
  return module.location


def split_top_level(text: str) -> list[str]:
  """Split a pipeline on the commas that are not inside (), {} or []."""
  parts, depth, start = [], 0, 0
  for i, char in enumerate(text):
    depth += char in "({[" and 1 or char in ")}]" and -1 or 0
    if depth < 0:
      raise PipelineError(f"unbalanced ')' in pass pipeline '{text}'")
    if char == "," and depth == 0:
      parts.append(text[start:i].strip())
      start = i + 1
  if depth != 0:
    raise PipelineError(f"unbalanced '(' in pass pipeline '{text}'")
  parts.append(text[start:].strip())
  if parts == [""]:
    return []
  if "" in parts:
    raise PipelineError(f"empty pass name in pass pipeline '{text}' (a ',' too many?)")
  return parts


def parse_options(text: str, info: PassInfo) -> dict[str, object]:
  """`key=value key2=value2` (a bool option alone means true) checked against the keyword parameters of the pass
  function: each a known option, given once, a value of its type within its range."""
  known, options = info.options(), {}
  for item in text.split():
    key, eq, value = item.partition("=")
    if (key := key.replace("-", "_")) not in known:
      raise PipelineError(f"{info.argument} has no option '{key}' (options: {', '.join(known) or 'none'})")
    if key in options:
      raise PipelineError(f"{info.argument}: option {key} is given twice")
    option = known[key]
    if not eq and option.kind is not bool:
      raise PipelineError(f"option '{item}' of {info.argument} is not key=value")
    options[key] = parse_value(info.argument, option, value if eq else "true")
  return options


def parse_value(argument: str, option: Option, text: str) -> object:
  got = f"got '{text}'" + (" (options are separated by spaces)" if "," in text else "")
  if option.kind is bool:
    if text.lower() not in ("true", "false", "1", "0"):
      raise PipelineError(f"{argument}: option {option.name} expects true, false, 1 or 0, {got}")
    return text.lower() in ("true", "1")
  if option.kind is not int:
    return text
  if not re.fullmatch(r"[+-]?\d+", text):
    raise PipelineError(f"{argument}: option {option.name} expects an integer, {got}")
  if option.within is not None and int(text) not in option.within:
    raise PipelineError(f"{argument}: option {option.name} expects {option.within}, got {int(text)}")
  return int(text)


def add_pipeline(pm: PassManager, pipeline: str, debug: bool = False, check_every: bool | None = None) -> None:
  """Add `builtin.module(a, b{opt=1}, func.func(c))` (or the bare list) to `pm`: its first pytc pass checks the forms of
  its input, the others too with `check_every` (default: checking_every_pass())."""
  check_every = checking_every_pass() if check_every is None else check_every
  checked = False
  pipeline = pipeline.strip()
  if wrapped := re.fullmatch(r"builtin\.module\((.*)\)", pipeline, re.S):
    pipeline = wrapped.group(1)
  for element in split_top_level(pipeline):
    name = re.match(r"[\w.\-]*", element).group(0)
    if (info := PASSES.get(name)) is not None:
      options = re.fullmatch(re.escape(name) + r"(?:\{([^{}]*)\})?", element, re.S)
      if options is None:
        raise PipelineError(f"malformed pass '{element}'")
      pm.add(
        _as_mlir_pass(info, parse_options(options.group(1) or "", info), debug, check_every or not checked),
        name=name,
        argument=name,
        description=info.description,
      )
      checked = True
      continue
    if nested := [p for p in PASSES if re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", element)]:
      raise PipelineError(f"{nested[0]} runs on the whole module: list it at the top level, not inside '{name}(...)'")
    try:
      pm.add(element)
    except ValueError:
      raise PipelineError(
        f"unknown pass or malformed pipeline element '{element}' (see pytc-opt --list-passes)"
      ) from None


def pass_manager(
  pipeline: str, context: ir.Context, debug: bool | None = None, check_every: bool | None = None
) -> PassManager:
  """A pass manager for `pipeline`; `debug` (default: DEBUG >= 1) prints the traceback of a pass's internal error,
  `check_every` (default: checking_every_pass()) has every pytc pass check the forms of its input."""
  pm = PassManager("builtin.module", context)
  add_pipeline(pm, pipeline, helpers.DEBUG >= 1 if debug is None else debug, check_every)
  return pm


for _module in pkgutil.walk_packages(__path__, f"{__name__}."):
  importlib.import_module(_module.name)
