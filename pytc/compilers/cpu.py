"""The CPU compiler: kernels through pytc's CPU code generation (loop order, register-blocked vectors sized by the target,
scf loops whose outermost range the runtime splits across cores), upstream lowering to LLVM, LLVM for the host (host_llvm),
and a shared library linked with the C compiler driver (`cc`), which the CPU runtime loads."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from mlir import ir

from pytc import kernel_cache
from pytc.compilers import Compiler, host_llvm, signature
from pytc.compilers.host_objects import Builder, chunks, compile_threads, object_files
from pytc.helpers import dump_folder, package_file
from pytc.passes.common.attributes import EXTENT, TUNE, WORK
from pytc.runtime.device import Binary, KernelInfo
from pytc.runtime.ops_cpu import elf_problem
from pytc.runtime.target import Target

CHUNKS_PER_THREAD = 4  # the kernel pipeline takes a schedule's kernels in about this many chunks per compile thread
L2_UNKNOWN = 1 << 20  # the L2 of a core taken where the host does not report it
LLVM_PIPELINE = ("builtin.module(convert-scf-to-cf, convert-vector-to-llvm, convert-math-to-llvm, expand-strided-metadata, "
                 "finalize-memref-to-llvm, convert-arith-to-llvm, convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}, "
                 "convert-cf-to-llvm, reconcile-unrealized-casts)")


class LinkError(RuntimeError):
  """The kernels' object code could not be linked into a shared library."""


def kernel_pipeline(target: Target) -> str:
  """pytc's CPU code generation for `target`: a register block of rows x the target's tile vectors of accumulators must
  fit the vector registers beside a row of operand vectors and one broadcast, up to 8 rows (the kernel search's choice
  where 32 registers allow more; 16 registers and 2 vectors: 6 rows, 10-25 % faster matmuls on AVX2 than 4 from 512 to
  1000 rows, a ResNet-18 step's kernels at batch 8 10 % faster); the blocks keep work for every
  core, and up to 64 of them share one packed panel (the kernel search's choice on square and transposed matmuls from 1024: 1.03-1.5x). CSE
  last: a value every vector of a tile row reads (a convolution's gated input) is emitted once per tile, and the IR LLVM
  gets is a fifth smaller (first calls of GPT-2-small and ResNet-18 10-15 % faster). The L2 bounds how many of a matmul's
  rows one group of blocks takes before the cores split its columns (see pytc-vectorize's column_chunks). First, a range
  only divided and used whole splits in two (pytc-split-ranges: a grouped convolution's channels) and ranges that every
  access reads as one dimension merge (pytc-merge-ranges), so divisions and small trailing dimensions do not keep a kernel
  from vectors."""
  rows = max(1, min(8, (target.vector_registers - target.tile_vectors - 1) // target.tile_vectors))
  return ("builtin.module(pytc-split-ranges, pytc-merge-ranges, pytc-order-loops, "
          f"pytc-vectorize{{lanes={target.vector_lanes} rows={rows} vectors={target.tile_vectors} group=64 "
          f"cores={target.cores} l2={target.l2_bytes or L2_UNKNOWN}}}, "
          "pytc-lower-kernels, canonicalize{top-down=false}, cse)")


class CPUCompiler(Compiler):
  lowering_pipeline = LLVM_PIPELINE
  kernels_result = "scf/memref/arith/vector loops"
  binary_result = "the shared library"
  searchable = True

  def kernel_pipeline(self) -> str: return kernel_pipeline(self.target)
  def check(self, code: bytes) -> str | None: return elf_problem(code)

  def cache_key(self, kernel_ir: str) -> str:
    """As Compiler.cache_key, with LLVM's optimization pipeline and code generation level and options."""
    codegen = " ".join((str(host_llvm.CODEGEN_LEVEL), *host_llvm.CODEGEN_OPTIONS))
    return super().cache_key(f"llvm {host_llvm.OPTIMIZATION} codegen {codegen}\n{kernel_ir}")

  def kernel_info(self, function: ir.Operation) -> KernelInfo:
    name, arguments = signature(function)
    cores = {"cores": tune["cores"]} if "cores" in (tune := TUNE.get(function, {})) else {}
    return KernelInfo(name, arguments - 2, {"extent": EXTENT.get(function), "work": WORK.get(function, 0), **cores})  # the buffers, then [begin, end)

  def compile(self, kernels: ir.Module, dump_name: str = "", cached: bool = True) -> tuple[Binary, str, bool]:
    """As Compiler.compile, in chunks of the kernels (unless the IR is dumped, or there are fewer than two): worker threads
    lower and compile each chunk's object code while the kernel pipeline, which holds the interpreter, runs on the next. A
    binary from the disk cache abandons what they started."""
    threads = compile_threads()
    parts = [] if dump_folder(dump_name) else chunks(kernels, CHUNKS_PER_THREAD * threads)
    if len(parts) < 2: return super().compile(kernels, dump_name, cached)
    builder, texts, infos = Builder(self.lowering_pipeline, threads), [], []
    try:
      for part in parts:
        texts.append(self.generate(part))
        infos += [self.kernel_info(function) for function in self.kernel_functions(part)]
        self.prepare(part)
        builder.submit(part)
      key = self.cache_key(kernel_ir := "\n".join(texts))
      code = kernel_cache.load(key, self.check) if cached else None
    except BaseException:
      builder.abandon()
      raise
    if code is not None:
      builder.abandon()
      return Binary(self.target.cache_key(), code, tuple(infos)), kernel_ir, True
    try: code = self.link(builder.finish())
    finally: builder.close()
    kernel_cache.store(key, code)
    return Binary(self.target.cache_key(), code, tuple(infos)), kernel_ir, False

  def lower(self, kernels: ir.Module, dump_name: str = "") -> bytes:
    """LLVM's object code for the host, linked into a shared library. Shares of the kernels are lowered and compiled on
    several cores (host_objects), each through a pass manager of its own rather than `run_pipeline`."""
    with tempfile.TemporaryDirectory() as scratch:
      dump = dump_folder(self.stage("llvm").folder(dump_name))
      return self.link(object_files(kernels, scratch, self.lowering_pipeline, dump=dump))

  def link(self, objects: list[str]) -> bytes:
    """The object files linked into a shared library (in a private scratch folder), as bytes."""
    if (driver := shutil.which("cc") or shutil.which("gcc")) is None:
      raise LinkError("the CPU compiler links kernels with a C compiler driver, and neither cc nor gcc is on PATH")
    with tempfile.TemporaryDirectory() as scratch:
      library = os.path.join(scratch, "kernels.so")
      linking = [driver, "-shared", "-o", library, *objects, package_file("pytc.runtime", "builtins.o"), "-lm"]
      if (linked := subprocess.run(linking, capture_output=True, text=True)).returncode != 0:
        raise LinkError(f"{driver} could not link the kernels: {linked.stderr.strip()[:500]}")
      return Path(library).read_bytes()
