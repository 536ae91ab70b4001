"""The CPU compiler's object code in shares lowered and compiled on several threads: each kernel lands in exactly one
object file, the declarations it calls are in all of them, the linked library computes what one object would, the
lowering dumps its IR per share, and failures of the lowering or of LLVM are typed errors naming the kernels."""
import ctypes
import os
import platform
import re
import subprocess

import numpy as np
import pytest
from conftest import flags
from mlir import ir

from pytc import Device, Tensor, realize
from pytc.compiler import context
from pytc.compilers import cpu
from pytc.compilers.cpu import LLVM_PIPELINE
from pytc.compilers.host_objects import ObjectCodeError, _shares, compile_threads, object_files
from pytc.runtime.target import usable_cores

pytestmark = pytest.mark.skipif(not Device.DEFAULT.startswith("CPU"), reason="the CPU compiler's object code")


@pytest.fixture
def compile_env(request, monkeypatch):
  """PYTC_COMPILE_THREADS as the test's parameter sets it, and no disk cache: every realize compiles."""
  yield from flags(monkeypatch, PYTC_COMPILE_THREADS=request.param, PYTC_CACHE="0")


def kernel(n: int, rounds: int) -> str:
  """@k<n>(p) stores the sum of 0..rounds-1 plus labs(-1000 n) at p[0]: bigger bodies for bigger `rounds`."""
  adds = "\n".join(f"    %a{i} = llvm.add %a{i - 1}, %c{i} : i64" for i in range(1, rounds))
  constants = "\n".join(f"    %c{i} = llvm.mlir.constant({i} : i64) : i64" for i in range(rounds))
  return f"""  llvm.func @k{n}(%p: !llvm.ptr) {{
{constants}
    %a0 = llvm.add %c0, %c0 : i64
{adds}
    %n = llvm.mlir.constant({-1000 * n} : i64) : i64
    %h = llvm.call @labs(%n) : (i64) -> i64
    %s = llvm.add %a{rounds - 1}, %h : i64
    llvm.store %s, %p : i64, !llvm.ptr
    llvm.return
  }}"""


MODULE = """module {
  llvm.func @labs(i64) -> i64
KERNELS
}"""
ROUNDS = (40, 3, 25, 3, 9, 60, 1)
NO_LOWERING = "builtin.module(reconcile-unrealized-casts)"  # the kernels are in the LLVM dialect already


def expected(n: int) -> int: return sum(range(ROUNDS[n])) + 1000 * n


def build(tmp_path, threads: int) -> tuple[list[str], ctypes.CDLL]:
  with context():
    module = ir.Module.parse(MODULE.replace("KERNELS", "\n".join(kernel(n, r) for n, r in enumerate(ROUNDS))))
    objects = object_files(module, str(tmp_path), NO_LOWERING, threads)
  library = tmp_path / "kernels.so"
  subprocess.run(["cc", "-shared", "-o", str(library), *objects], check=True)
  return objects, ctypes.CDLL(str(library))


def defined_symbols(path: str) -> set[str]:
  listed = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True, check=True).stdout
  return {line.split()[-1] for line in listed.splitlines() if line.split()[1] in "T"}


@pytest.mark.parametrize("threads", [1, 2, 3, 7, 12])
def test_each_kernel_is_in_exactly_one_object_and_the_library_runs_them_all(tmp_path, threads):
  objects, library = build(tmp_path, threads)
  assert len(objects) == min(threads, len(ROUNDS))
  defined = [defined_symbols(path) for path in objects]
  for n in range(len(ROUNDS)): assert sum(f"k{n}" in symbols for symbols in defined) == 1
  kernels = {f"k{n}" for n in range(len(ROUNDS))}
  assert all(symbols == kernels & symbols | {f"_mlir_{k}" for k in symbols & kernels} for symbols in defined)  # labs: declared only
  for n in range(len(ROUNDS)):
    out = ctypes.c_int64(-1)
    getattr(library, f"k{n}")(ctypes.byref(out))
    assert out.value == expected(n)


def test_shares_balance_the_op_counts_largest_first():
  with context():
    module = ir.Module.parse(MODULE.replace("KERNELS", "\n".join(kernel(n, r) for n, r in enumerate(ROUNDS))))
    shares = _shares(module, 3)
    names = [sorted(ir.StringAttr(op.attributes["sym_name"]).value for op in share) for share in shares]
  assert names == [["k5"], ["k0", "k3"], ["k1", "k2", "k4", "k6"]]  # 60+ ops; 40+3; 25+9+3+1 (each plus its fixed ops)


def test_a_module_llvm_cannot_translate_is_a_typed_error(tmp_path):
  with context():
    module = ir.Module.parse("func.func @k(%x: i64) -> i64 { %y = arith.addi %x, %x : i64\n return %y : i64 }")
    with pytest.raises(ObjectCodeError, match="LLVM could not compile kernels k for the host"): object_files(module, str(tmp_path), NO_LOWERING, 1)


def test_a_failing_lowering_is_a_typed_error_naming_the_kernels(tmp_path):
  with context():
    module = ir.Module.parse(MODULE.replace("KERNELS", "\n".join(kernel(n, r) for n, r in enumerate(ROUNDS[:3]))))
    with pytest.raises(ObjectCodeError, match="the lowering to LLVM failed on kernels k0, k1, k2"):
      object_files(module, str(tmp_path), "func.func(canonicalize)", 1)  # anchored on func.func: it cannot run on the module


@pytest.mark.parametrize("threads", [1, 2])
def test_a_pipeline_that_does_not_parse_is_a_typed_error_from_every_thread(tmp_path, threads):
  with context():
    module = ir.Module.parse(MODULE.replace("KERNELS", "\n".join(kernel(n, r) for n, r in enumerate(ROUNDS[:3]))))
    with pytest.raises(ObjectCodeError, match="no-such-pass"): object_files(module, str(tmp_path), "builtin.module(no-such-pass)", threads)


def test_kernel_functions_are_lowered_in_their_shares_with_the_ir_dumped_per_share(tmp_path):
  """func-level kernels through the CPU compiler's LLVM lowering, each share in its own context; every share's passes dump."""
  kernels = "\n".join(f"""func.func @scale{n}(%a: memref<8xf32>) {{
    %c0 = arith.constant 0 : index
    %v = memref.load %a[%c0] : memref<8xf32>
    %k = arith.constant {n + 2}.0 : f32
    %w = arith.mulf %v, %k : f32
    memref.store %w, %a[%c0] : memref<8xf32>
    return
  }}""" for n in range(3))
  with context():
    objects = object_files(ir.Module.parse(kernels), str(tmp_path), LLVM_PIPELINE, 2, dump=str(tmp_path / "ir"))
  library = tmp_path / "kernels.so"
  subprocess.run(["cc", "-shared", "-o", str(library), *objects], check=True)
  loaded = ctypes.CDLL(str(library))
  for n in range(3):
    data = (ctypes.c_float * 8)(*([1.5] * 8))
    getattr(loaded, f"scale{n}")(data)
    assert data[0] == 1.5 * (n + 2) and data[1] == 1.5
  for share in ("share0", "share1"):
    assert any("convert-func-to-llvm" in p.name for p in (tmp_path / "ir" / share).rglob("*.mlir"))


def test_without_the_setting_the_shares_are_the_cores_this_process_may_use(monkeypatch):
  monkeypatch.delenv("PYTC_COMPILE_THREADS", raising=False)
  monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)  # pinned to one core of many
  assert usable_cores() == 1 and compile_threads() == 1
  monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
  assert compile_threads() == 3


@pytest.mark.parametrize("compile_env, shares", [("3", 3), ("0", 1)], indirect=["compile_env"])
def test_compile_threads_comes_from_the_environment(compile_env, shares):
  assert compile_threads() == shares


@pytest.mark.parametrize("compile_env", ["many"], indirect=True)
def test_compile_threads_that_are_not_a_number_are_a_clear_error(compile_env):
  with pytest.raises(ValueError, match="PYTC_COMPILE_THREADS is 'many'"): compile_threads()


@pytest.mark.parametrize("compile_env", ["1", "4"], indirect=True)
def test_many_kernels_realized_together_compile_in_chunks_to_the_same_values(monkeypatch, compile_env):
  """Outputs of several distinct kernels (elementwise, reductions, a matmul) in one realize, its kernels compiled afresh in
  chunks handed to the object builder one by one, each kernel in exactly one."""
  threads = int(os.environ["PYTC_COMPILE_THREADS"])
  monkeypatch.setattr(realize, "_schedules", {})
  submitted: list[list[str]] = []
  submit = cpu.Builder.submit
  def counted(builder, module):
    submitted.append([ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations if "sym_name" in op.attributes])
    submit(builder, module)
  monkeypatch.setattr(cpu.Builder, "submit", counted)
  rng = np.random.default_rng(threads)
  a, b = rng.standard_normal((33, 17), dtype=np.float32), rng.standard_normal((17, 9), dtype=np.float32)
  x, w = Tensor(a), Tensor(b)
  outputs = [x.exp(), x.sum(0), x.max(1), x @ w, (x * 2 + 1).relu(), x.softmax(1), (x @ w).tanh().sum()]
  Tensor.realize(*outputs)
  e = np.exp(a - a.max(1, keepdims=True))
  references = [np.exp(a), a.sum(0), a.max(1), a @ b, np.maximum(a * 2 + 1, 0), e / e.sum(1, keepdims=True), np.tanh(a @ b).sum()]
  for ours, reference in zip(outputs, references): np.testing.assert_allclose(ours.numpy(), reference, rtol=1e-5, atol=1e-5)
  names = [name for chunk in submitted for name in chunk]
  assert 2 <= len(submitted) <= cpu.CHUNKS_PER_THREAD * threads and len(names) == len(set(names)) >= 4


def test_a_chunk_that_fails_to_compile_is_a_typed_error_and_later_compiles_still_work(tmp_path):
  """The builder reports the first chunk LLVM could not compile; one abandoned removes its folder once its workers are done."""
  from pytc.compilers.host_objects import Builder
  with context():
    good = ir.Module.parse(MODULE.replace("KERNELS", kernel(0, 3)))
    builder = Builder(NO_LOWERING, 2)
    builder.submit(good)
    builder.submit(ir.Module.parse(MODULE.replace("KERNELS", kernel(1, 3))))
    paths = builder.finish()
    assert [os.path.basename(p) for p in paths] == ["kernels0.o", "kernels1.o"] and all(os.path.getsize(p) for p in paths)
    builder.close()
    assert not os.path.exists(builder.folder)
    failing = Builder("builtin.module(no-such-pass)", 2)
    failing.submit(good)
    with pytest.raises(ObjectCodeError, match="no-such-pass"): failing.finish()
    failing.close()
    abandoned = Builder(NO_LOWERING, 2)
    abandoned.submit(good)
    abandoned.abandon()
    for worker in abandoned.workers: worker.join()
    assert not os.path.exists(abandoned.folder)


NESTED = """func.func @KERNEL(%p: memref<4x8xf32>) attributes {pytc.kernel, pytc.work = WORK : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      memref.store %one, %p[%i, %j] : memref<4x8xf32>
    }
  }
  return
}"""


def test_loops_of_small_kernels_are_not_unrolled():
  """Each back edge of a kernel of fewer than UNROLL_WORK steps carries llvm.loop.unroll.disable into LLVM IR; a bigger
  kernel's loops are LLVM's to unroll; forward branches carry nothing."""
  from mlir.dialects import llvm as llvm_dialect
  from mlir.passmanager import PassManager

  from pytc.compilers.host_objects import UNROLL_WORK, _without_unrolling
  with context():
    text = "\n".join(NESTED.replace("KERNEL", name).replace("WORK", str(work)) for name, work in (("small", UNROLL_WORK - 1), ("big", UNROLL_WORK)))
    module = ir.Module.parse(f"module {{\n{text}\n}}")
    PassManager.parse(LLVM_PIPELINE).run(module.operation)
    _without_unrolling(module, {"small"})
    annotated = {}
    for function in module.body.operations:
      branches = [block.operations[len(block.operations) - 1].operation for block in function.operation.regions[0].blocks]
      annotated[function.attributes["sym_name"].value] = sum("loop_annotation" in b.attributes for b in branches if b.name == "llvm.br")
    assert annotated == {"small": 2, "big": 0}
    llvm_ir = str(llvm_dialect.translate_module_to_llvmir(module.operation))
  assert llvm_ir.count("llvm.loop.unroll.disable") >= 1 and llvm_ir.count("!llvm.loop") == 2


def test_each_kernel_runs_through_its_packed_entry(tmp_path):
  """_mlir_<kernel>(void **arguments), the entry the CPU runtime calls: each argument loaded through its pointer."""
  _, library = build(tmp_path, 2)
  for n in range(len(ROUNDS)):
    out = ctypes.c_int64(-1)
    pointer = ctypes.c_void_p(ctypes.addressof(out))
    arguments = (ctypes.c_void_p * 1)(ctypes.addressof(pointer))
    getattr(library, f"_mlir_k{n}")(arguments)
    assert out.value == expected(n)


SCALE = """llvm.func @scale(%p: !llvm.ptr, %n: i64) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %three = llvm.mlir.constant(3.0 : f32) : f32
  llvm.br ^head(%zero : i64)
^head(%i: i64):
  %more = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %more, ^body, ^done
^body:
  %at = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %x = llvm.load %at : !llvm.ptr -> f32
  %y = llvm.fmul %x, %three : f32
  llvm.store %y, %at : f32, !llvm.ptr
  %next = llvm.add %i, %one : i64
  llvm.br ^head(%next : i64)
^done:
  llvm.return
}"""


def test_llvm_vectorizes_a_scalar_loop_and_the_result_is_exact(tmp_path):
  """A loop pytc leaves scalar (the lowering of scf puts its header first) is rotated and vectorized by LLVM's pipeline."""
  from pytc.compilers.host_llvm import add_packed_entries, emit_object
  with context():
    module = ir.Module.parse(SCALE)
    add_packed_entries(module, ["scale"])
    emit_object(module, str(tmp_path / "scale.o"))
  subprocess.run(["cc", "-shared", "-o", str(tmp_path / "scale.so"), str(tmp_path / "scale.o")], check=True)
  x = np.linspace(-3, 3, 1001, dtype=np.float32)
  ctypes.CDLL(str(tmp_path / "scale.so")).scale(x.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(1000))
  np.testing.assert_array_equal(x[:1000], np.linspace(-3, 3, 1001, dtype=np.float32)[:1000] * np.float32(3))
  assert x[1000] == np.float32(3)
  if platform.machine().lower() in ("x86_64", "amd64"):
    code = subprocess.run(["objdump", "-d", str(tmp_path / "scale.o")], capture_output=True, text=True, check=True).stdout
    assert "mulps" in code  # packed: four or more floats an instruction


def test_a_pass_pipeline_llvm_rejects_is_a_typed_error(tmp_path):
  from pytc.compilers.host_llvm import HostCodeError, emit_object
  with context():
    module = ir.Module.parse(SCALE)
    with pytest.raises(HostCodeError, match="no-such-llvm-pass"): emit_object(module, str(tmp_path / "x.o"), "function(no-such-llvm-pass)")


def test_an_object_file_llvm_cannot_write_is_a_typed_error(tmp_path):
  from pytc.compilers.host_llvm import HostCodeError, emit_object
  with context():
    module = ir.Module.parse(SCALE)
    with pytest.raises(HostCodeError, match="could not write an object file"): emit_object(module, str(tmp_path / "missing" / "x.o"))


def test_a_kernel_outside_the_llvm_dialect_gets_no_entry(tmp_path):
  from pytc.compilers.host_llvm import HostCodeError, add_packed_entries
  with context():
    module = ir.Module.parse("func.func @k(%x: i64) { return }")
    with pytest.raises(HostCodeError, match="kernel k is not a function of the LLVM dialect"): add_packed_entries(module, ["k"])


def test_the_disk_cache_key_names_llvm_s_pipeline(monkeypatch):
  """A binary built with another LLVM pipeline or code generation level is another cache entry."""
  from pytc.compilers import host_llvm
  compiler = cpu.CPUCompiler(Device[Device.DEFAULT].target)
  keys = {compiler.cache_key("kernels")}
  monkeypatch.setattr(host_llvm, "OPTIMIZATION", "function(instcombine)")
  keys.add(compiler.cache_key("kernels"))
  monkeypatch.setattr(host_llvm, "CODEGEN_LEVEL", 1)
  keys.add(compiler.cache_key("kernels"))
  assert len(keys) == 3


def test_llvm_s_pipeline_is_o3_less_the_skipped_passes():
  from pytc.compilers.host_llvm import LLVM_O3, OPTIMIZATION, SKIPPED, without
  assert without("a,dse,f(dse,b<x>,dse<y;z>),g(c,dse),dse-like", ("dse",)) == "a,f(b<x>),g(c),dse-like"
  passes = set(re.findall(r"[\w-]+(?=[<,()]|$)", OPTIMIZATION))
  assert not passes & set(SKIPPED) and set(SKIPPED) <= set(re.findall(r"[\w-]+(?=[<,()]|$)", LLVM_O3))
  assert {"indvars", "gvn", "ipsccp", "loop-vectorize", "loop-unroll", "licm", "instcombine"} <= passes
