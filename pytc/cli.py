"""pytc: information about the installation, and compiling a uop graph file to its kernel IR."""
import argparse
import os
import sys

from mlir import ir

from pytc.compiler import context
from pytc.compilers import Compiler
from pytc.compilers.targets import TARGETS, compiler_for
from pytc.helpers import pytc_version
from pytc.pytc_opt import read_text
from pytc.runtime import backends

STAGES = ("schedule", "kernels", "gpu", "llvm", "binary")  # a compiler's stages(), and "gpu": a GPU target's kernels


class UsageError(ValueError):
  """A target, stage or output the command cannot serve."""


def compile_stage(text: str, compiler: Compiler, stage: str, name: str) -> str | bytes:
  """The module after `stage` of the compiler's stages(), as text, or the binary's code (bytes; PTX is text). With
  PYTC_DUMP=dir, the IR after every pass is under dir/name."""
  if stage == "gpu":
    if compiler.target.name == "cpu":
      raise UsageError("stage 'gpu' is the mapped gpu.module IR of a GPU target; the cpu target has none")
    stage = "kernels"
  module = ir.Module.parse(text)
  schedule, *steps = compiler.stages()
  schedule.run(module, name)
  if stage == "binary":
    code = compiler.compile(module, name, cached=False)[0].code  # built afresh: every pipeline runs (and dumps)
    return code.decode() if compiler.target.name == "nvptx" else code
  for step in steps if stage != schedule.name else ():
    if step.name == "llvm": compiler.prepare(module)
    step.run(module, name)
    if step.name == stage: break
  return str(module)


def write(result: str | bytes, output: str | None) -> None:
  if output is not None:
    with open(output, "wb" if isinstance(result, bytes) else "w") as f: f.write(result)
  elif isinstance(result, bytes):
    if sys.stdout.isatty(): raise UsageError("the binary is not text: write it to a file with -o FILE (or pipe it)")
    sys.stdout.buffer.write(result)
    sys.stdout.flush()
  else: print(result)


def compile_file(path: str, stage: str, target: str = "cpu", output: str | None = None) -> int:
  try:
    text = read_text(path)
  except OSError as error:
    print(f"pytc: error: cannot read '{path}': {error.strerror}", file=sys.stderr)
    return 1
  except UnicodeDecodeError as error:
    source = "standard input" if path == "-" else f"'{path}'"
    print(f"pytc: error: {source} is not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset {error.start})", file=sys.stderr)
    return 1
  name = "stdin" if path == "-" else os.path.splitext(os.path.basename(path))[0]
  with context():
    try: write(compile_stage(text, compiler_for(target), stage, name), output)
    except (ir.MLIRError, RuntimeError, ValueError) as error:
      print(f"pytc: error: {error}", file=sys.stderr)
      return 1
    except OSError as error:
      print(f"pytc: error: cannot write {repr(output) if output else 'the output'}: {error.strerror}", file=sys.stderr)
      return 1
  return 0


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(prog="pytc", description="pytc, a tensor compiler on MLIR.")
  parser.add_argument("--version", action="version", version=f"pytc {pytc_version()}")
  commands = parser.add_subparsers(dest="command", required=True)
  commands.add_parser("devices", help="list the devices this build can run on")
  compile_parser = commands.add_parser("compile", help="schedule and compile a uop graph (.mlir) for a target, print or write the result")
  compile_parser.add_argument("input", help="a module with a uop graph function ('-' for stdin)")
  compile_parser.add_argument("--target", default="cpu", help=f"cpu (this machine, default) or a GPU target: {', '.join(TARGETS[1:])}")
  compile_parser.add_argument("--stage", choices=STAGES, default="kernels",
                              help="schedule: the launch list and index-level kernels; kernels: the target's kernels (default: scf/memref/"
                                   "arith loops for cpu, the mapped gpu.module IR for a GPU); gpu: the mapped gpu.module IR (GPU targets); "
                                   "llvm: the kernels in the LLVM dialect (ROCDL/NVVM on a GPU); binary: the shared library (cpu), "
                                   "the code object (amdgpu) or the PTX text (nvptx)")
  compile_parser.add_argument("-o", dest="output", help="write the result to this file (binary bytes need it, or a pipe)")
  args = parser.parse_args(argv)
  if args.command == "devices":
    print("\n".join(backends()))
    return 0
  return compile_file(args.input, args.stage, args.target, args.output)


if __name__ == "__main__":
  sys.exit(main())
