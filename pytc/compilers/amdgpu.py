"""AMD GPU code objects from upstream `gpu.module`s: convert-gpu-to-rocdl, LLVM IR from the MLIR bindings, llvmlite's LLVM
(which has the AMDGPU backend the MLIR wheels lack) for the -O3 pipeline and the object file, and the LLD that ships in the
`ziglang` wheel to link it into an HSACO. Both come with pytc's `gpu` extra.

Transcendentals are pytc's own polynomials by this stage, so no AMD device library is linked: a code object that still
needs one (an `__ocml_*` call) is an error naming it. The two work-item queries the ROCDL lowering leaves as `__ockl_*`
calls (workgroup size, workgroup count without a known size) are defined here from the code object v5 implicit
kernel arguments, which pytc's code objects are built for."""
from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
import tempfile

from mlir import ir
from mlir.dialects import llvm as llvm_dialect

from pytc.pipelines import CompileError, run_pipeline
from pytc.runtime.amd_code_object import gfx_major
from pytc.runtime.amd_code_object import parse as parse_code_object

TRIPLE = "amdgcn-amd-amdhsa"
CODE_OBJECT_VERSION = 5
CHIPS = ("gfx90a", "gfx942", "gfx1100")  # what pytc tests; any gfx processor LLVM knows compiles

# gpu.block_dim / gpu.grid_dim without known sizes: the group size (u16 at 12 + 2*dim) and the group count (u32 at 4*dim)
# from the implicit kernel arguments (hidden_group_size_*, hidden_block_count_*), as code object v5 lays them out
WORK_ITEM_QUERIES = """
define linkonce_odr hidden i64 @__ockl_get_local_size(i32 %dim) alwaysinline {
  %args = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %twice = shl i32 %dim, 1
  %at = add i32 %twice, 12
  %field = getelementptr inbounds i8, ptr addrspace(4) %args, i32 %at
  %size = load i16, ptr addrspace(4) %field, align 2, !invariant.load !0
  %wide = zext i16 %size to i64
  ret i64 %wide
}
define linkonce_odr hidden i64 @__ockl_get_num_groups(i32 %dim) alwaysinline {
  %args = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %at = shl i32 %dim, 2
  %field = getelementptr inbounds i8, ptr addrspace(4) %args, i32 %at
  %count = load i32, ptr addrspace(4) %field, align 4, !invariant.load !0
  %wide = zext i32 %count to i64
  ret i64 %wide
}
declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
!0 = !{}
"""


# Rounding the AMDGPU backend does in one instruction (v_floor, v_ceil), which convert-gpu-to-rocdl would make device-library
# calls (__ocml_floor_f32, ...): pytc's exp and sin polynomials round with floor. They become calls of the LLVM intrinsics,
# which the lowering leaves alone (it would turn llvm.intr.floor into the library call too)
NATIVE_MATH = {"math.floor": "llvm.floor", "math.ceil": "llvm.ceil"}


class ToolchainMissing(RuntimeError):
  """A package the AMD toolchain needs is not installed."""


class AMDGPUCompileError(RuntimeError):
  """The kernels did not lower, compile or link into a loadable code object."""


def wave_size(chip: str) -> int:
  """Threads of a wavefront pytc compiles for: 64 on gfx9 (CDNA), 32 from gfx10 on (RDNA)."""
  return 64 if gfx_major(chip) < 10 else 32


def native_math(module: ir.Module) -> None:
  """NATIVE_MATH's ops -> their LLVM intrinsics, before convert-gpu-to-rocdl turns them into device-library calls."""
  found: list[ir.Operation] = []
  def visit(op: ir.Operation) -> ir.WalkResult:
    if op.name in NATIVE_MATH: found.append(op)
    return ir.WalkResult.ADVANCE
  module.operation.walk(visit)
  for op in found:
    with ir.InsertionPoint(op), op.location:
      native = llvm_dialect.call_intrinsic(op.results[0].type, NATIVE_MATH[op.name], list(op.operands), [], [])
    op.results[0].replace_all_uses_with(native)
    op.erase()


def lowering_pipeline(chip: str) -> str:
  """The upstream lowering of the gpu.module to the LLVM dialect. bf16 arithmetic computes in f32 (the AMDGPU backend
  selects no bf16 max, min, ...), and its conversions become integer operations, which LLVM's optimizer cannot narrow back
  into bf16 arithmetic."""
  return (f"builtin.module(gpu.module(arith-emulate-unsupported-floats{{source-types=bf16 target-type=f32}}, "
          f"arith-expand{{include-bf16=true}}, expand-strided-metadata, "
          f"lower-affine, convert-scf-to-cf, "
          f"convert-gpu-to-rocdl{{chipset={chip} index-bitwidth=64 use-bare-ptr-memref-call-conv=1}}), reconcile-unrealized-casts)")


@functools.cache
def _llvm():
  for package in ("llvmlite", "ziglang"):
    if importlib.util.find_spec(package) is None:
      raise ToolchainMissing(f"AMD code objects need the {package} package (pip install 'pytc[gpu]'), which is not installed")
  import llvmlite.binding as llvm
  llvm.initialize_all_targets()
  llvm.initialize_all_asmprinters()
  return llvm


def llvm_ir(module: ir.Module, chip: str) -> dict[str, str]:
  """LLVM IR text of each `gpu.module` in `module` (left unchanged) lowered for `chip`."""
  gfx_major(chip)
  with module.context, ir.Location.unknown():
    lowered = ir.Module.parse(str(module))
    native_math(lowered)
    try: run_pipeline(lowered, lowering_pipeline(chip))
    except CompileError as e: raise AMDGPUCompileError(f"convert-gpu-to-rocdl for {chip} failed: {e}") from None
    return translate(lowered)


def translate(lowered: ir.Module) -> dict[str, str]:
  """LLVM IR text of each `gpu.module` of `lowered` (after the lowering pipeline), by the module's name."""
  out = {}
  with lowered.context, ir.Location.unknown():
    for gpu_module in [op.operation for op in lowered.body.operations if op.operation.name == "gpu.module"]:
      kernels = ir.Module.create()
      kernels.operation.attributes["llvm.data_layout"] = gpu_module.attributes["llvm.data_layout"]
      kernels.operation.attributes["llvm.target_triple"] = ir.StringAttr.get(TRIPLE)
      with ir.InsertionPoint(kernels.body):
        for op in gpu_module.regions[0].blocks[0].operations: op.clone()
      out[ir.StringAttr(gpu_module.attributes["sym_name"]).value] = str(llvm_dialect.translate_module_to_llvmir(kernels.operation))
  return out


def link(obj: bytes, name: str) -> bytes:
  """An HSACO from one relocatable object, by the LLD of the ziglang wheel (in its own process)."""
  with tempfile.TemporaryDirectory() as scratch:
    src, dst = os.path.join(scratch, "kernels.o"), os.path.join(scratch, "kernels.hsaco")
    with open(src, "wb") as f: f.write(obj)
    linked = subprocess.run([sys.executable, "-m", "ziglang", "ld.lld", "-shared", src, "-o", dst], capture_output=True, text=True)
    if linked.returncode != 0: raise AMDGPUCompileError(f"ld.lld could not link {name}: {linked.stderr.strip()[:500]}")
    with open(dst, "rb") as f: return f.read()


def optimized(text: str, chip: str, name: str = "kernels"):
  """LLVM IR text parsed afresh (one parse serves one emit), the work-item queries linked in, -O3: (module, target machine)."""
  llvm = _llvm()
  try:
    module = llvm.parse_assembly(text)
    header = f'target datalayout = "{module.data_layout}"\ntarget triple = "{TRIPLE}"\n'
    flag = f'!llvm.module.flags = !{{!1}}\n!1 = !{{i32 1, !"amdhsa_code_object_version", i32 {CODE_OBJECT_VERSION * 100}}}\n'
    module.link_in(llvm.parse_assembly(header + WORK_ITEM_QUERIES + flag))
    module.verify()
  except RuntimeError as e: raise AMDGPUCompileError(f"LLVM rejected the IR of {name}: {e}") from None
  machine = llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=chip, features=f"+wavefrontsize{wave_size(chip)}", opt=3, reloc="pic")
  builder = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=3))
  builder.getModulePassManager().run(module, builder)
  return module, machine


def compile_llvm_ir(text: str, chip: str, name: str = "kernels") -> bytes:
  """An HSACO from LLVM IR text: optimized, emitted as object code, linked."""
  module, machine = optimized(text, chip, name)
  code = link(machine.emit_object(module), name)
  try: code_object = parse_code_object(code)
  except ValueError as e: raise AMDGPUCompileError(f"the linked code object of {name} is unreadable: {e}") from None
  if code_object.undefined:
    raise AMDGPUCompileError(f"the code object of {name} for {chip} has undefined symbols: {', '.join(code_object.undefined)}")
  return code


def assembly(text: str, chip: str, name: str = "kernels") -> str:
  """LLVM's assembly text for the same LLVM IR, as `compile_llvm_ir` would build it (for checking a disassembly)."""
  module, machine = optimized(text, chip, name)
  return machine.emit_assembly(module)


def code_object(module: ir.Module, chip: str) -> dict[str, bytes]:
  """An HSACO for `chip` (gfx90a, gfx942, gfx1100, ...) per `gpu.module` of `module`, by the module's name."""
  _llvm()
  return {name: compile_llvm_ir(text, chip, name) for name, text in llvm_ir(module, chip).items()}
