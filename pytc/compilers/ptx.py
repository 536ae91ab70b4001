"""NVIDIA PTX from upstream `gpu.module`s, in process: nvvm-attach-target, convert-gpu-to-nvvm and gpu-module-to-binary,
which links the libdevice bitcode embedded in the MLIR bindings (no CUDA install needed), then `ptxas` for a cubin when
one is on PATH.

math.sqrt becomes the IEEE `sqrt.rn` instruction: libdevice's `__nv_sqrtf`, which the NVVM lowering would call, is the
approximate `sqrt.approx` as the bindings configure it, and NumPy's sqrt is correctly rounded."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

from mlir import ir
from mlir.dialects import gpu
from mlir.dialects import llvm as llvm_dialect

from pytc.pipelines import CompileError, run_pipeline

CHIPS = ("sm_80", "sm_90")
ROUNDED_SQRT = {"f32": "llvm.nvvm.sqrt.rn.f", "f64": "llvm.nvvm.sqrt.rn.d"}
TO_PTX = "gpu-module-to-binary{format=isa}"  # lowered gpu.modules to gpu.binary ops holding their PTX


class PTXError(RuntimeError):
  """The kernels did not lower to PTX, or ptxas rejected it."""


def nvvm_passes(chip: str) -> str:
  """The passes taking `gpu.module`s to the LLVM dialect (NVVM) for `chip`, with the target attached."""
  return (f"nvvm-attach-target{{chip={chip} O=3}}, gpu.module(expand-strided-metadata, lower-affine, convert-scf-to-cf, "
          "convert-gpu-to-nvvm{index-bitwidth=64 use-bare-ptr-memref-call-conv=1}), reconcile-unrealized-casts")


def lowering_pipeline(chip: str) -> str: return f"builtin.module({nvvm_passes(chip)}, {TO_PTX})"


def rounded_sqrt(module: ir.Module) -> None:
  """math.sqrt of f32/f64 -> the correctly rounded NVVM intrinsic, before convert-gpu-to-nvvm turns it into a libdevice call."""
  found: list[ir.Operation] = []
  def visit(op: ir.Operation) -> ir.WalkResult:
    if op.name == "math.sqrt" and str(op.results[0].type) in ROUNDED_SQRT: found.append(op)
    return ir.WalkResult.ADVANCE
  module.operation.walk(visit)
  for op in found:
    with ir.InsertionPoint(op), op.location:
      rounded = llvm_dialect.call_intrinsic(op.results[0].type, ROUNDED_SQRT[str(op.results[0].type)], list(op.operands), [], [])
    op.results[0].replace_all_uses_with(rounded)
    op.erase()


def ptx(module: ir.Module, chip: str = "sm_90") -> dict[str, str]:
  """PTX for `chip` of each `gpu.module` in `module` (left unchanged), by the module's name."""
  if not re.fullmatch(r"sm_\d+[af]?", chip): raise ValueError(f"{chip!r} is not an NVIDIA chip name (sm_80, sm_90, ...)")
  with module.context, ir.Location.unknown():
    lowered = ir.Module.parse(str(module))
    lowered.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
    rounded_sqrt(lowered)
    try: run_pipeline(lowered, lowering_pipeline(chip))
    except CompileError as e: raise PTXError(f"lowering to PTX for {chip} failed: {e}") from None
    return texts(lowered, chip)


def texts(lowered: ir.Module, chip: str) -> dict[str, str]:
  """The PTX of each `gpu.binary` of `lowered` (after the lowering pipeline), by name; PTXError when one calls a function it
  does not define."""
  out = {}
  for binary in [op.operation for op in lowered.body.operations if op.operation.name == "gpu.binary"]:
    name = ir.StringAttr(binary.attributes["sym_name"]).value
    text = gpu.ObjectAttr(ir.ArrayAttr(binary.attributes["objects"])[0]).object.decode()
    if unresolved := sorted(set(re.findall(r"\.extern\s+\.func[^;]*?\b(\w+)\s*\(", text))):
      raise PTXError(f"the PTX of {name} for {chip} calls functions it does not define: {', '.join(unresolved)}")
    out[name] = text
  return out


def cubin(ptx_text: str, chip: str = "sm_90") -> bytes | None:
  """The cubin ptxas assembles from `ptx_text` for `chip`, or None when no ptxas is on PATH."""
  if (ptxas := shutil.which("ptxas")) is None: return None
  with tempfile.TemporaryDirectory() as scratch:
    src, dst = os.path.join(scratch, "kernels.ptx"), os.path.join(scratch, "kernels.cubin")
    with open(src, "w") as f: f.write(ptx_text)
    done = subprocess.run([ptxas, f"-arch={chip}", "-O3", src, "-o", dst], capture_output=True, text=True)
    if done.returncode != 0: raise PTXError(f"ptxas -arch={chip} rejected the PTX: {done.stderr.strip()[:500]}")
    with open(dst, "rb") as f: return f.read()
