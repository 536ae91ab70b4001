"""pytc-opt: run pytc and upstream MLIR passes over textual IR, mlir-opt style."""
import argparse
import re
import sys
from dataclasses import dataclass

from mlir import ir

from pytc.compilers.targets import compiler_for, stage_table
from pytc.dialects import uop
from pytc.passes import PASSES, PipelineError, pass_manager

SPLIT_MARKER = re.compile(r"^// -----.*$", re.M)
EXPECTED = re.compile(r"expected-(error|warning|note|remark)\s*(?:@([+-]\d+|above|below))?\s*\{\{(.*?)\}\}")
LOCATION = re.compile(r'loc\("[^"]*":(\d+):(\d+)\)')


@dataclass
class Diagnostic:
  severity: str
  line: int
  column: int
  message: str

  def render(self, filename: str) -> str:
    return f"{filename}:{self.line}:{self.column}: {self.severity}: {self.message}"


def _severity(diag: ir.Diagnostic) -> str:
  return str(diag.severity).rsplit(".", 1)[-1].lower()


def _collect(diag: ir.Diagnostic, sink: list[Diagnostic]) -> None:
  match = LOCATION.search(str(diag.location))
  line, column = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
  sink.append(Diagnostic(_severity(diag), line, column, diag.message))
  for note in diag.notes: _collect(note, sink)


def expected_diagnostics(text: str) -> list[Diagnostic]:
  expected = []
  for number, line in enumerate(text.splitlines(), 1):
    for match in EXPECTED.finditer(line):
      offset = match.group(2) or "+0"
      target = number - 1 if offset == "above" else number + 1 if offset == "below" else number + int(offset)
      expected.append(Diagnostic(match.group(1), target, 0, match.group(3)))
  return expected


def check_diagnostics(got: list[Diagnostic], expected: list[Diagnostic], filename: str) -> list[str]:
  """mlir-opt's -verify-diagnostics: every diagnostic expected and every expectation met."""
  problems, unmatched = [], list(expected)
  # As in mlir-opt, the "see current operation" note is not part of what is verified.
  got = [d for d in got if not (d.severity == "note" and d.message.startswith("see current operation:"))]
  for diag in got:
    hit = next((e for e in unmatched if e.severity == diag.severity and e.line == diag.line and e.message in diag.message), None)
    if hit is None: problems.append(f"{filename}:{diag.line}:{diag.column}: error: unexpected {diag.severity}: {diag.message}")
    else: unmatched.remove(hit)
  problems += [f'{filename}:{e.line}: error: expected {e.severity} "{e.message}" was not produced' for e in unmatched]
  return problems


def run_chunk(text: str, args: argparse.Namespace, pipeline: str) -> tuple[str | None, list[Diagnostic]]:
  """Parse, verify and transform one input; returns the printed result (None on failure) and the diagnostics."""
  context = uop.context()
  diagnostics: list[Diagnostic] = []
  context.emit_error_diagnostics = True
  context.attach_diagnostic_handler(lambda diag: _collect(diag, diagnostics) or True)
  try:
    module = ir.Module.parse(text, context)
    if pipeline:
      pm = pass_manager(pipeline, context, debug=args.debug or None, check_every=True)  # hand-written IR: checked before every pass
      if args.mlir_print_ir_after_all: pm.enable_ir_printing(print_after_all=True)
      pm.run(module.operation)
    return str(module), diagnostics
  except ir.MLIRError as error:
    diagnostics += [Diagnostic("error", 0, 0, d.message) for d in error.error_diagnostics if not diagnostics]
    if not diagnostics: diagnostics.append(Diagnostic("error", 0, 0, str(error)))
    return None, diagnostics


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
    prog="pytc-opt", description="Run pytc and upstream MLIR passes over .mlir input (mlir-opt style).",
    epilog="Any other '-<pass>' or '--<pass>[=options]' argument adds that pass (pytc or upstream) in order, "
           "e.g. 'pytc-opt x.mlir -canonicalize -cse'. Exit status 1 on a parse, verifier or pass error.")
  parser.add_argument("input", nargs="?", default="-", help="input .mlir file ('-' or nothing: stdin)")
  parser.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
  parser.add_argument("--pass-pipeline", default="", help="e.g. 'builtin.module(pytc-rangeify,canonicalize)'")
  parser.add_argument("--split-input-file", action="store_true", help="process each '// -----' chunk on its own")
  parser.add_argument("--verify-diagnostics", action="store_true", help="check diagnostics against expected-* comments")
  parser.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass (stderr)")
  parser.add_argument("--list-passes", action="store_true", help="list pytc's passes and exit")
  parser.add_argument("--stage", help="run the pipeline of this stage of the target's compile path (see --list-stages)")
  parser.add_argument("--target", default="cpu", help="the target of --stage and --list-stages: cpu (this machine, default) "
                      "or a GPU target (amdgpu:gfx942, sm_90, ...)")
  parser.add_argument("--list-stages", action="store_true", help="list the target's stages with their pipelines and exit")
  parser.add_argument("--debug", action="store_true", help="print the Python traceback of an internal error in a pytc pass (as DEBUG=1 does)")
  return parser


def shorthand_pipeline(flags: list[str]) -> str:
  passes = []
  for flag in flags:
    if not flag.startswith("-") or flag in ("-", "--"): raise PipelineError(f"unexpected argument '{flag}'")
    name, _, options = flag.lstrip("-").partition("=")
    passes.append(f"{name}{{{options.strip(chr(39))}}}" if options else name)
  return ",".join(passes)


def list_passes() -> str:
  lines = ["pytc passes: {options and their defaults}"]
  for info in sorted(PASSES.values(), key=lambda p: p.argument):
    options = " ".join(str(option) for option in info.options().values())
    lines.append(f"  {info.argument:<26} {info.description}" + (f" {{{options}}}" if options else ""))
  lines.append("Upstream MLIR passes (canonicalize, cse, convert-*-to-llvm, ...) are accepted by their mlir-opt names.")
  return "\n".join(lines)


def read_text(path: str) -> str:
  """The file at `path` (stdin for "-") decoded as UTF-8, whatever the locale: a stray byte raises UnicodeDecodeError
  rather than passing on as a surrogate that MLIR's parser cannot take."""
  if path != "-":
    with open(path, "rb") as f: return f.read().decode("utf-8")
  stream = getattr(sys.stdin, "buffer", None)  # a text stream that stands in for stdin may have no bytes underneath
  return stream.read().decode("utf-8") if stream is not None else sys.stdin.read()


def stage_pipeline(name: str, target: str) -> str:
  """The pipeline of stage `name` in `target`'s table (pytc.pipelines.Stage)."""
  try: stage = compiler_for(target).stage(name)
  except ValueError as error: raise PipelineError(str(error)) from None
  if not stage.pipeline: raise PipelineError(f"stage '{name}' emits code, it runs no passes: pytc compile --stage {name} writes it")
  return stage.pipeline


def main(argv: list[str] | None = None) -> int:
  parser = build_parser()
  args, rest = parser.parse_known_args(argv)
  try:
    if args.list_passes:
      print(list_passes())
      return 0
    if args.list_stages:
      try: print(stage_table(compiler_for(args.target)))
      except ValueError as error: raise PipelineError(str(error)) from None
      return 0
    shorthand = shorthand_pipeline(rest)
    given = [p for p in (args.pass_pipeline, shorthand, args.stage) if p]
    if len(given) > 1: raise PipelineError("use one of --pass-pipeline, --stage or -<pass> flags")
    pipeline = stage_pipeline(args.stage, args.target) if args.stage else args.pass_pipeline or shorthand
    if pipeline: pass_manager(pipeline, uop.context())  # every pass and option checked before any input is read
  except PipelineError as error:
    print(f"pytc-opt: error: {error}", file=sys.stderr)
    return 1
  filename = "<stdin>" if args.input == "-" else args.input
  try:
    source = read_text(args.input)
  except OSError as error:
    print(f"pytc-opt: error: cannot read '{filename}': {error.strerror}", file=sys.stderr)
    return 1
  except UnicodeDecodeError as error:
    print(f"pytc-opt: error: '{filename}' is not UTF-8 text (byte {error.start})", file=sys.stderr)
    return 1
  chunks, failed, outputs = _split(source) if args.split_input_file else [(0, source)], False, []
  for first_line, chunk in chunks:
    text = "\n" * first_line + chunk  # keep the input's line numbers in diagnostics
    try:
      result, diagnostics = run_chunk(text, args, pipeline)
    except PipelineError as error:
      print(f"pytc-opt: error: {error}", file=sys.stderr)
      return 1
    if args.verify_diagnostics:
      problems = check_diagnostics(diagnostics, expected_diagnostics(text), filename)
      for problem in problems: print(problem, file=sys.stderr)
      failed |= bool(problems)
    else:
      for diag in diagnostics: print(diag.render(filename), file=sys.stderr)
      failed |= result is None
    if result is not None: outputs.append(result)
  output = "// -----\n".join(outputs)
  if args.output == "-": sys.stdout.write(output)
  else:
    try:
      with open(args.output, "w") as f: f.write(output)
    except OSError as error:
      print(f"pytc-opt: error: cannot write '{args.output}': {error.strerror}", file=sys.stderr)
      return 1
  return 1 if failed else 0


def _split(source: str) -> list[tuple[int, str]]:
  chunks, start = [], 0
  for marker in SPLIT_MARKER.finditer(source):
    chunks.append((source.count("\n", 0, start), source[start:marker.start()]))
    start = marker.end()
  chunks.append((source.count("\n", 0, start), source[start:]))
  return chunks


if __name__ == "__main__":
  sys.exit(main())
