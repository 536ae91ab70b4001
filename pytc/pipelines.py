"""Running pass pipelines: the named stages of a compile path, one function that runs any pipeline (with PYTC_DUMP's
dumps and the verifier), and the errors they raise. The compile driver (compiler.py), the target compilers (compilers/),
the kernel search and the command-line tools all run pipelines through here; a compiler's `stages()` is its target's
table of them."""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from pytc.helpers import dump_folder
from pytc.passes import checking_every_pass, pass_manager


@dataclass(frozen=True)
class Stage:
  """A named step of a target's compile path: its pass pipeline (empty for the last step, the target's code emission)
  and what the module holds after it. With PYTC_DUMP=dir, a graph's IR after each pass of the stage goes under
  dir/<graph>/<number>-<name>."""
  number: int
  name: str
  pipeline: str
  result: str

  def folder(self, dump_name: str) -> str: return f"{dump_name}/{self.number}-{self.name}"

  def run(self, module: ir.Module, dump_name: str = "") -> None:
    """Run the stage's pipeline on `module` (in place)."""
    run_pipeline(module, self.pipeline, self.folder(dump_name))


class InvalidGraphError(ValueError):
  """A graph the uop verifier rejects: an op given shapes, dtypes or axes it does not take."""


class CompileError(RuntimeError):
  """The passes could not schedule or compile a graph; the message is MLIR's first error."""


def first_error(error: ir.MLIRError) -> str:
  return error.error_diagnostics[0].message if error.error_diagnostics else str(error).splitlines()[0]


def verify(module: ir.Module) -> None:
  """Raise InvalidGraphError unless `module` verifies: passes, upstream ones above all, assume valid input."""
  try: module.operation.verify()
  except ir.MLIRError as error: raise InvalidGraphError(f"invalid graph: {first_error(error)}") from None


def run_pipeline(module: ir.Module, pipeline: str, dump_name: str = "") -> None:
  """Run `pipeline` on `module`; with PYTC_DUMP=dir the IR after every pass goes under dir/dump_name. The result is verified
  once; the IR after every pass too with PYTC_CHECK_FORMS=1 (tests, the fuzzer, pytc-opt) or a dump, so that a pass that
  breaks it is named (a tenth of the scheduling and kernel pipelines' time otherwise)."""
  pm = pass_manager(pipeline, module.context)
  folder = dump_folder(dump_name)
  pm.enable_verifier(every := checking_every_pass() or bool(folder))
  if folder: pm.enable_ir_printing(print_after_all=True, tree_printing_dir_path=folder)
  try:
    pm.run(module.operation)
    if not every: module.operation.verify()
  except ir.MLIRError as error: raise CompileError(first_error(error)) from None


def copy_module(module: ir.Module, kernels: frozenset[str] | None = None) -> ir.Module:
  """A copy of `module` to compile, with only the functions named in `kernels` when given (the schedule keeps its kernels
  as scheduled, for other targets)."""
  with module.context, ir.Location.unknown():
    copy = ir.Module.create()
    for op in module.body.operations:
      if kernels is None or "sym_name" not in op.attributes or ir.StringAttr(op.attributes["sym_name"]).value in kernels:
        op.operation.clone(ip=ir.InsertionPoint(copy.body))
  return copy
