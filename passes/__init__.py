"""pytc's MLIR passes and the pipeline parser that mixes them with upstream passes.

Every module in this package registers its pass with `@register("pytc-...", "...")`; the
registered function takes the module operation (and the pass options as keyword strings) and
rewrites it in place, raising `PassError` on input it cannot handle.
"""
import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir
from mlir.passmanager import PassManager


class PassError(Exception):
  """A pass rejects its input; reported as an error diagnostic at `location`."""
  def __init__(self, location: ir.Location, message: str):
    super().__init__(message)
    self.location = location


class PipelineError(ValueError):
  """A pass pipeline names an unknown pass or is malformed."""


@dataclass(frozen=True)
class PassInfo:
  argument: str
  description: str
  run: Callable[..., None]


PASSES: dict[str, PassInfo] = {}


def register(argument: str, description: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
  """Register `fn(module_op, **options)` as the pass `argument`."""
  def wrap(fn: Callable[..., None]) -> Callable[..., None]:
    assert argument not in PASSES, f"pass {argument} registered twice"
    PASSES[argument] = PassInfo(argument, description, fn)
    return fn
  return wrap


def functions_with(module: ir.Operation, op_name: str) -> list[ir.OpView]:
  """The functions of `module` with a body that holds an `op_name` op."""
  return [op for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func" and len(op.regions[0].blocks)
          and any(o.operation.name == op_name for o in op.regions[0].blocks[0].operations)]


def range_size(r: ir.Value) -> int:
  """The size of the loop a `uop.range` value names."""
  return ir.IntegerAttr(r.owner.attributes["size"]).value


def _as_mlir_pass(info: PassInfo, options: dict[str, str]) -> Callable:
  def run(op: ir.Operation, pass_) -> None:
    try:
      with op.context, op.location: info.run(op, **options)
    except PassError as error:
      error.location.emit_error(str(error))
      pass_.signal_pass_failure()
    except Exception as error:  # a bug in the pass: report it against the pass, not as a crash
      op.location.emit_error(f"{info.argument} failed: {type(error).__name__}: {error}")
      pass_.signal_pass_failure()
  return run


def split_top_level(text: str) -> list[str]:
  """Split a pipeline on the commas that are not inside (), {} or []."""
  parts, depth, start = [], 0, 0
  for i, char in enumerate(text):
    depth += char in "({[" and 1 or char in ")}]" and -1 or 0
    if depth < 0: raise PipelineError(f"unbalanced ')' in pass pipeline '{text}'")
    if char == "," and depth == 0:
      parts.append(text[start:i].strip())
      start = i + 1
  if depth != 0: raise PipelineError(f"unbalanced '(' in pass pipeline '{text}'")
  return [part for part in [*parts, text[start:].strip()] if part]


def parse_options(text: str, info: PassInfo) -> dict[str, str]:
  """`key=value key2=value2` checked against the keyword parameters of the pass function."""
  known = list(inspect.signature(info.run).parameters)[1:]
  options = {}
  for item in text.split():
    key, eq, value = item.partition("=")
    if not eq: raise PipelineError(f"option '{item}' of {info.argument} is not key=value")
    if (key := key.replace("-", "_")) not in known:
      raise PipelineError(f"{info.argument} has no option '{key}' (options: {', '.join(known) or 'none'})")
    options[key] = value
  return options


def add_pipeline(pm: PassManager, pipeline: str) -> None:
  """Add `builtin.module(a, b{opt=1}, func.func(c))` (or the bare list) to `pm`."""
  pipeline = pipeline.strip()
  if (wrapped := re.fullmatch(r"builtin\.module\((.*)\)", pipeline, re.S)): pipeline = wrapped.group(1)
  for element in split_top_level(pipeline):
    name = re.match(r"[\w.\-]*", element).group(0)
    if (info := PASSES.get(name)) is not None:
      options = re.fullmatch(re.escape(name) + r"(?:\{(.*)\})?", element, re.S)
      if options is None: raise PipelineError(f"malformed pass '{element}'")
      pm.add(_as_mlir_pass(info, parse_options(options.group(1) or "", info)), name=name, argument=name,
             description=info.description)
      continue
    if nested := [p for p in PASSES if re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", element)]:
      raise PipelineError(f"{nested[0]} runs on the whole module: list it at the top level, not inside '{name}(...)'")
    try:
      pm.add(element)
    except ValueError:
      raise PipelineError(f"unknown pass or malformed pipeline element '{element}' (see pytc-opt --list-passes)") from None


def pass_manager(pipeline: str, context: ir.Context) -> PassManager:
  pm = PassManager("builtin.module", context)
  add_pipeline(pm, pipeline)
  return pm


for _module in pkgutil.iter_modules(__path__):
  importlib.import_module(f"{__name__}.{_module.name}")
