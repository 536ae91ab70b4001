"""pytc: information about the installation, and compiling a uop graph file to its kernel IR."""
import argparse
import sys
from importlib.metadata import version

from mlir import ir

from pytc.compiler import SCHEDULE_PIPELINE, context, run_pipeline
from pytc.compilers.cpu import LLVM_PIPELINE, kernel_pipeline
from pytc.passes.common.attributes import KERNEL
from pytc.pytc_opt import read_text
from pytc.runtime import backends
from pytc.runtime.target import host_cpu


def compile_file(path: str, stage: str) -> int:
  try:
    text = read_text(path)
  except OSError as error:
    print(f"pytc: error: cannot read '{path}': {error.strerror}", file=sys.stderr)
    return 1
  except UnicodeDecodeError as error:
    source = "standard input" if path == "-" else f"'{path}'"
    print(f"pytc: error: {source} is not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset {error.start})", file=sys.stderr)
    return 1
  with context():
    try:
      module = ir.Module.parse(text)
      run_pipeline(module, SCHEDULE_PIPELINE)
      if stage != "schedule": run_pipeline(module, kernel_pipeline(host_cpu()))
      if stage == "llvm":
        for op in [op for op in module.body.operations if not KERNEL.get(op)]: op.operation.erase()
        run_pipeline(module, LLVM_PIPELINE)
    except ir.MLIRError as error:
      print(f"pytc: error: {error}", file=sys.stderr)
      return 1
    print(module)
  return 0


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(prog="pytc", description="pytc, a tensor compiler on MLIR.")
  parser.add_argument("--version", action="version", version=f"pytc {version('pytc')}")
  commands = parser.add_subparsers(dest="command", required=True)
  commands.add_parser("devices", help="list the devices this build can run on")
  compile_parser = commands.add_parser("compile", help="schedule and compile a uop graph (.mlir) for the CPU, print the result")
  compile_parser.add_argument("input", help="a module with a uop graph function ('-' for stdin)")
  compile_parser.add_argument("--stage", choices=["schedule", "kernels", "llvm"], default="kernels",
                              help="schedule: the launch list and index-level kernels; kernels: scf/memref/arith kernels (default); "
                                   "llvm: the kernels in the LLVM dialect the JIT takes")
  args = parser.parse_args(argv)
  if args.command == "devices":
    print("\n".join(backends()))
    return 0
  return compile_file(args.input, args.stage)


if __name__ == "__main__":
  sys.exit(main())
