"""The compile driver: a `uop` graph module through pytc's pipeline and the CPU target to a JIT'd kernel."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

from mlir import ir
from mlir.execution_engine import ExecutionEngine

from pytc.dialects import uop
from pytc.helpers import DEBUG, getenv
from pytc.passes import pass_manager

GRAPH_PIPELINE = "builtin.module(canonicalize, pytc-lower-elementwise, canonicalize, cse)"
CPU_PIPELINE = ("builtin.module(convert-scf-to-cf, convert-math-to-llvm, expand-strided-metadata, "
                "finalize-memref-to-llvm, convert-arith-to-llvm, convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}, "
                "convert-cf-to-llvm, reconcile-unrealized-casts)")

_context: ir.Context | None = None


def context() -> ir.Context:
  """The MLIR context pytc builds its graphs in (uop loaded)."""
  global _context
  if _context is None: _context = uop.context()
  return _context


@dataclass(frozen=True)
class Program:
  """A compiled kernel: `entry` is the address of its packed `void(void **args)` function."""
  name: str
  entry: int
  kernel_ir: str
  compile_seconds: float
  engine: ExecutionEngine


_programs: dict[str, Program] = {}


def run_pipeline(module: ir.Module, pipeline: str, dump_name: str = "") -> None:
  """Run `pipeline` on `module`; with PYTC_DUMP=dir the IR after every pass goes under dir/dump_name."""
  pm = pass_manager(pipeline, module.context)
  if dump := getenv("PYTC_DUMP", ""):
    os.makedirs(directory := os.path.join(dump, dump_name), exist_ok=True)
    pm.enable_ir_printing(print_after_all=True, tree_printing_dir_path=directory)
  pm.run(module.operation)


def compile_graph(module: ir.Module, name: str) -> Program:
  """Compile a graph module for the CPU; programs are cached by the graph's text (its structure)."""
  key = str(module)
  if (program := _programs.get(key)) is not None: return program
  start = time.perf_counter()
  run_pipeline(module, GRAPH_PIPELINE, f"{name}/1-graph")
  kernel_ir = str(module)
  if DEBUG >= 4: print(kernel_ir)
  run_pipeline(module, CPU_PIPELINE, f"{name}/2-cpu")
  engine = ExecutionEngine(module, opt_level=3)
  entry = engine.raw_lookup(name)
  if not entry: raise RuntimeError(f"compiled module has no kernel '{name}'")
  _programs[key] = program = Program(name, entry, kernel_ir, time.perf_counter() - start, engine)
  return program
