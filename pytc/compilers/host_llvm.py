"""LLVM for the host through its C API: a module in the LLVM dialect translated to LLVM IR, optimized by a pass pipeline of
pytc's choosing and written as an object file for the host CPU (its name and features as LLVM detects them).

`OPTIMIZATION` is LLVM's -O3 pipeline less the passes that find little in pytc's kernels, which reach LLVM tiled and
vectorized (SKIPPED): the SLP vectorizer (over straight-line vector code), dead-store elimination (each store is written
once), loop idiom recognition and loop-load elimination. They took a fifth of LLVM's time on a ResNet-18 training step's
kernels (6.4 -> 4.9 s on one core), for kernels as fast (3x3 convolutions over 64-256 channels, strided, depthwise,
matmuls plain and transposed, softmax, layernorm, reductions, gelu, exp). What stays matters: without induction-variable
simplification a 3x3 convolution over 64 channels at 56x56 ran 20 % slower, and a pipeline of -O3's passes in its own
order, without the interprocedural ones, jump threading and value-range propagation, gave softmax rows and a strided
convolution 20-25 % slower code. Code generation runs without loop strength reduction (CODEGEN_OPTIONS): a tenth of
LLVM's time on that training step's kernels (four tenths on some convolutions, whose unrolled tiles address many values
from one induction variable), for kernels as fast (the sweep's matmuls and convolutions). Each call makes its own LLVM
context and target machine and holds no lock: calls through ctypes run without the GIL, so threads compile side by side."""
from __future__ import annotations

import ctypes
import os
import platform
import re
import threading

from mlir import _mlir_libs, ir

from pytc.dialects.uop import _capsule_pointer

LLVM_O3 = (  # LLVM 22's -O3 pipeline, as `opt -passes='default<O3>' -print-pipeline-passes` prints it
  "memprof-remove-attributes,annotation2metadata,forceattrs,inferattrs,coro-early,"
  "function<eager-inv>(ee-instrument<>,lower-expect,"
  "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;no-switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,"
  "sroa<modify-cfg>,early-cse<>,callsite-splitting),openmp-opt,ipsccp,called-value-propagation,globalopt,"
  "function<eager-inv>(mem2reg,instcombine<max-iterations=1;no-verify-fixpoint>,"
  "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>),"
  "always-inline,require<globals-aa>,function(invalidate<aa>),require<profile-summary>,cgscc(devirt<4>(inline,"
  "function-attrs<skip-non-recursive-function-attrs>,argpromotion,openmp-opt-cgscc,"
  "function<eager-inv;no-rerun>(sroa<modify-cfg>,early-cse<memssa>,speculative-execution<only-if-divergent-target>,"
  "jump-threading,correlated-propagation,"
  "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,"
  "instcombine<max-iterations=1;no-verify-fixpoint>,aggressive-instcombine,libcalls-shrinkwrap,tailcallelim,"
  "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,"
  "reassociate,constraint-elimination,loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,"
  "loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>,"
  "simple-loop-unswitch<nontrivial;trivial>),"
  "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,"
  "instcombine<max-iterations=1;no-verify-fixpoint>,loop(loop-idiom,indvars,extra-simple-loop-unswitch-passes,"
  "loop-deletion,loop-unroll-full),sroa<modify-cfg>,vector-combine,mldst-motion<no-split-footer-bb>,gvn<>,sccp,bdce,"
  "instcombine<max-iterations=1;no-verify-fixpoint>,jump-threading,correlated-propagation,adce,memcpyopt,dse,"
  "move-auto-init,loop-mssa(licm<allowspeculation>),coro-elide,"
  "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;switch-to-arithmetic;no-switch-to-lookup;keep-loops;hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,"
  "instcombine<max-iterations=1;no-verify-fixpoint>),function-attrs,"
  "function(require<should-not-run-function-passes>),coro-split,coro-annotation-elide)),deadargelim,coro-cleanup,"
  "globalopt,globaldce,elim-avail-extern,rpo-function-attrs,recompute-globalsaa,"
  "function<eager-inv>(drop-unnecessary-assumes,float2int,lower-constant-intrinsics,chr,"
  "loop(loop-rotate<header-duplication;no-prepare-for-lto>,loop-deletion),loop-distribute,inject-tli-mappings,"
  "loop-vectorize<no-interleave-forced-only;no-vectorize-forced-only;>,drop-unnecessary-assumes,infer-alignment,"
  "loop-load-elim,instcombine<max-iterations=1;no-verify-fixpoint>,"
  "simplifycfg<bonus-inst-threshold=1;forward-switch-cond;switch-range-to-icmp;switch-to-arithmetic;switch-to-lookup;no-keep-loops;hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,"
  "slp-vectorizer,vector-combine,instcombine<max-iterations=1;no-verify-fixpoint>,loop-unroll<O3>,transform-warning,"
  "sroa<preserve-cfg>,infer-alignment,instcombine<max-iterations=1;no-verify-fixpoint>,"
  "loop-mssa(licm<allowspeculation>),alignment-from-assumptions,loop-sink,instsimplify,div-rem-pairs,tailcallelim,"
  "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;speculate-unpredictables>),"
  "alloc-token,globaldce,constmerge,cg-profile,rel-lookup-table-converter,function(annotation-remarks)")
SKIPPED = ("slp-vectorizer", "dse", "loop-idiom", "loop-load-elim")


def without(pipeline: str, passes: tuple[str, ...]) -> str:
  """`pipeline` (in LLVM's textual syntax) less each occurrence of the passes `passes`, their options with them (a pass
  alone in its group stays: an empty group is no pipeline)."""
  for name in passes:
    named = rf"{re.escape(name)}(<[^<>]*>)?"
    pipeline = re.sub(rf",{named}(?=[,)])|(?<=\(){named},", "", pipeline)
  return pipeline


OPTIMIZATION = without(LLVM_O3, SKIPPED)
CODEGEN_LEVEL = 3  # LLVMCodeGenOptLevel: aggressive instruction selection, scheduling and register allocation
# LLVM's command-line options for its code generation, set once per process in the libLLVM the MLIR bindings link: its other
# users in the process (MLIR's own translation to PTX) see them too
CODEGEN_OPTIONS = ("-disable-lsr",)
_PIC, _DEFAULT_CODE_MODEL, _OBJECT_FILE = 2, 0, 1  # LLVMRelocMode, LLVMCodeModel, LLVMCodeGenFileType
_ARCHITECTURES = {"x86_64": "X86", "amd64": "X86", "aarch64": "AArch64", "arm64": "AArch64"}


class HostCodeError(RuntimeError):
  """LLVM could not translate, optimize or emit a module for the host."""


class Handle(ctypes.Structure):  # an MLIR C API object (MlirOperation, MlirPassManager): one pointer, by value
  _fields_ = [("ptr", ctypes.c_void_p)]


_P = ctypes.c_void_p
_SIGNATURES = {
  "LLVMContextCreate": ([], _P), "LLVMContextDispose": ([_P], None), "LLVMGetDefaultTargetTriple": ([], _P),
  "LLVMGetTargetFromTriple": ([_P, ctypes.POINTER(_P), ctypes.POINTER(_P)], ctypes.c_int),
  "LLVMGetHostCPUName": ([], _P), "LLVMGetHostCPUFeatures": ([], _P), "LLVMDisposeMessage": ([_P], None),
  "LLVMCreateTargetMachine": ([_P, _P, _P, _P, ctypes.c_int, ctypes.c_int, ctypes.c_int], _P),
  "LLVMDisposeTargetMachine": ([_P], None), "LLVMSetTarget": ([_P, _P], None),
  "LLVMCreateTargetDataLayout": ([_P], _P), "LLVMSetModuleDataLayout": ([_P, _P], None), "LLVMDisposeTargetData": ([_P], None),
  "LLVMCreatePassBuilderOptions": ([], _P), "LLVMDisposePassBuilderOptions": ([_P], None),
  "LLVMRunPasses": ([_P, ctypes.c_char_p, _P, _P], _P), "LLVMGetErrorMessage": ([_P], _P), "LLVMDisposeErrorMessage": ([_P], None),
  "LLVMTargetMachineEmitToFile": ([_P, _P, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_P)], ctypes.c_int),
  "LLVMDisposeModule": ([_P], None), "LLVMParseCommandLineOptions": ([ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.c_char_p], None),
}


def _library() -> ctypes.CDLL:
  """libLLVM, the one the MLIR bindings' C API library itself links (its LLVM IR types are this library's), with
  CODEGEN_OPTIONS set."""
  llvm = ctypes.CDLL(os.path.join(os.path.dirname(_mlir_libs.__file__), os.pardir, os.pardir, "llvm", "lib", "libLLVM.so"))
  for name, (arguments, result) in _SIGNATURES.items():
    function = getattr(llvm, name)
    function.argtypes, function.restype = arguments, result
  arguments = [b"pytc", *(option.encode() for option in CODEGEN_OPTIONS)]
  llvm.LLVMParseCommandLineOptions(len(arguments), (ctypes.c_char_p * len(arguments))(*arguments), None)
  return llvm


_llvm = _library()
mlir_capi = ctypes.CDLL(os.path.join(os.path.dirname(_mlir_libs.__file__), "libMLIRPythonCAPI.so"))  # the bindings' C API
mlir_capi.mlirTranslateModuleToLLVMIR.argtypes, mlir_capi.mlirTranslateModuleToLLVMIR.restype = [Handle, _P], _P


class _Host:
  """The host's target triple, CPU name and features, and LLVM target (its back end initialized once)."""
  _lock, _found = threading.Lock(), None

  def __init__(self):
    if (architecture := _ARCHITECTURES.get(platform.machine().lower())) is None:
      raise HostCodeError(f"pytc's CPU back end has no LLVM target for this host's architecture, {platform.machine()!r}")
    for part in ("TargetInfo", "Target", "TargetMC", "AsmPrinter"): getattr(_llvm, f"LLVMInitialize{architecture}{part}")()
    self.triple, self.cpu, self.features = (_owned(f()) for f in (_llvm.LLVMGetDefaultTargetTriple, _llvm.LLVMGetHostCPUName,
                                                                  _llvm.LLVMGetHostCPUFeatures))
    self.target, error = _P(), _P()
    if _llvm.LLVMGetTargetFromTriple(self.triple, ctypes.byref(self.target), ctypes.byref(error)):
      raise HostCodeError(f"LLVM has no target for the host triple {self.triple.decode()}: {_owned(error.value).decode()}")

  @classmethod
  def get(cls) -> _Host:
    with cls._lock:
      if cls._found is None: cls._found = cls()
    return cls._found


def _owned(message: int | None) -> bytes:
  """The text of a message LLVM allocated, freed."""
  text = ctypes.string_at(message) if message else b""
  if message: _llvm.LLVMDisposeMessage(message)
  return text


def add_packed_entries(module: ir.Module, names: list[str]) -> None:
  """Give each function `names` (in the LLVM dialect, returning nothing) an entry `_mlir_<name>(void **arguments)` that
  loads each argument through its pointer and calls it: the interface the CPU runtime launches kernels through. The
  kernel is not inlined into its entry: LLVM would compile it twice (a fifth more compile time for a training step)."""
  functions = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in module.body.operations if op.operation.name == "llvm.func"}
  with module.context, ir.Location.unknown():
    for name in names:
      if name not in functions: raise HostCodeError(f"kernel {name} is not a function of the LLVM dialect")
      types = [str(argument.type) for argument in functions[name].regions[0].blocks[0].arguments]
      loads = [f"%p{i} = llvm.getelementptr %arguments[{i}] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr\n"
               f"%a{i} = llvm.load %p{i} : !llvm.ptr -> !llvm.ptr\n%v{i} = llvm.load %a{i} : !llvm.ptr -> {t}" for i, t in enumerate(types)]
      call = f"llvm.call @{name}({', '.join(f'%v{i}' for i in range(len(types)))}) : ({', '.join(types)}) -> ()"
      parsed = ir.Module.parse(f"llvm.func @{name}({', '.join(types)})\n"  # declared beside the entry, to verify its call
                               f"llvm.func @_mlir_{name}(%arguments: !llvm.ptr) {{\n" + "\n".join(loads) + f"\n{call}\nllvm.return\n}}")
      parsed.body.operations[1].operation.clone(ip=ir.InsertionPoint(module.body))
      functions[name].attributes["no_inline"] = ir.UnitAttr.get()


def emit_object(module: ir.Module, path: str, optimization: str = OPTIMIZATION) -> None:
  """Write `module` (in the LLVM dialect) as an object file for the host at `path`, its functions optimized by
  `optimization` (a pass pipeline in LLVM's syntax). HostCodeError when LLVM refuses it."""
  host = _Host.get()
  context = _llvm.LLVMContextCreate()
  machine = options = None
  try:
    operation = Handle(_capsule_pointer(module.operation._CAPIPtr, b"mlir.ir.Operation._CAPIPtr"))
    if not (llvm_module := mlir_capi.mlirTranslateModuleToLLVMIR(operation, context)):
      raise HostCodeError("the kernels could not be translated to LLVM IR")
    machine = _llvm.LLVMCreateTargetMachine(host.target, host.triple, host.cpu, host.features, CODEGEN_LEVEL, _PIC, _DEFAULT_CODE_MODEL)
    _llvm.LLVMSetTarget(llvm_module, host.triple)
    layout = _llvm.LLVMCreateTargetDataLayout(machine)
    _llvm.LLVMSetModuleDataLayout(llvm_module, layout)
    _llvm.LLVMDisposeTargetData(layout)
    options = _llvm.LLVMCreatePassBuilderOptions()
    if error := _llvm.LLVMRunPasses(llvm_module, optimization.encode(), machine, options):
      message = _llvm.LLVMGetErrorMessage(error)
      text = ctypes.string_at(message).decode()
      _llvm.LLVMDisposeErrorMessage(message)
      raise HostCodeError(f"LLVM's pass pipeline {optimization!r} failed: {text}")
    message = _P()
    if _llvm.LLVMTargetMachineEmitToFile(machine, llvm_module, path.encode(), _OBJECT_FILE, ctypes.byref(message)):
      raise HostCodeError(f"LLVM could not write an object file at {path}: {_owned(message.value).decode()}")
  finally:
    if options: _llvm.LLVMDisposePassBuilderOptions(options)
    if machine: _llvm.LLVMDisposeTargetMachine(machine)
    _llvm.LLVMContextDispose(context)  # disposes the module it holds
