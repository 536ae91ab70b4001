"""pytc-gpu-map: every output is computed by exactly one thread (any size, local size, outputs per thread), mapped kernels
compute what NumPy does when their threads run one after another on the CPU, and the kernels pytc's scheduler makes all
map and lower through convert-gpu-to-nvvm."""
import ctypes
import importlib.util
import re

import numpy as np
import pytest
from mlir import ir
from mlir.dialects import arith, func, gpu, scf
from mlir.execution_engine import ExecutionEngine

from pytc import Tensor
from pytc.compiler import context
from pytc.compilers import amdgpu, ptx
from pytc.compilers.cpu import LLVM_PIPELINE
from pytc.passes.common.attributes import GPU
from pytc.passes.gpu.map_kernels import WARP, choose_mapping
from pytc.pipelines import copy_module, run_pipeline
from pytc.realize import schedule
from pytc.runtime import amd_code_object


@pytest.mark.parametrize("local_size", [1, 16, 32, 256, 1024])
@pytest.mark.parametrize("outputs_per_thread", [1, 3, 4])
def test_every_output_once(local_size: int, outputs_per_thread: int):
  for total in (0, 1, 5, 31, 32, 33, 40, 255, 256, 257, 1000, 1024, 4097):
    m = choose_mapping(total, local_size, outputs_per_thread)
    flat = [t * m.outputs + k for t in range(m.grid * m.local) for k in range(m.outputs)]
    assert sorted(f for f in flat if f < total) == list(range(total)), m
    assert m.tail == (len(flat) != total) and (m.grid == 0 or (m.grid - 1) * m.local * m.outputs < total), m  # no idle workgroup
    threads = -(-total // outputs_per_thread)
    assert m.local & (m.local - 1) == 0 and m.local <= local_size
    assert m.local == local_size if threads >= local_size else min(local_size, WARP) <= m.local < max(2 * threads, WARP + 1), m


def thread_function(kernel: gpu.GPUFuncOp, at: ir.InsertionPoint) -> func.FuncOp:
  """`kernel`'s body as func.func (block id, thread id, buffers...)."""
  index, buffers = ir.IndexType.get(), list(ir.FunctionType(kernel.function_type.value).inputs)
  with at: thread = func.FuncOp(f"{kernel.name.value}_thread", ([index, index] + buffers, []))
  entry = thread.add_entry_block()
  with ir.InsertionPoint(entry): ret = func.ReturnOp([])
  for old, new in zip(kernel.entry_block.arguments, entry.arguments[2:]): old.replace_all_uses_with(new)
  for op in list(kernel.entry_block.operations): op.move_before(ret)
  for op in list(entry.operations):
    if isinstance(op, (gpu.BlockIdOp, gpu.ThreadIdOp)): op.result.replace_all_uses_with(entry.arguments[0 if isinstance(op, gpu.BlockIdOp) else 1])
    if isinstance(op, (gpu.BlockIdOp, gpu.ThreadIdOp, gpu.ReturnOp)): op.operation.erase()
  return thread


def emulate(module: ir.Module) -> dict[str, dict[str, int]]:
  """Replace each gpu.module of `module` by a function of the kernel's name running its grid's threads in order; the
  pytc.gpu record of each kernel."""
  records, index = {}, ir.IndexType.get()
  for gpu_module in [op for op in module.body.operations if isinstance(op, gpu.GPUModuleOp)]:
    kernel = gpu_module.bodyRegion.blocks[0].operations[0]
    name, record, buffers = kernel.name.value, GPU.get(kernel), list(ir.FunctionType(kernel.function_type.value).inputs)
    thread = thread_function(kernel, ir.InsertionPoint(module.body))
    with ir.InsertionPoint(module.body): launch = func.FuncOp(name, (buffers, []))
    with ir.InsertionPoint(launch.add_entry_block()):
      zero, one = arith.constant(index, 0), arith.constant(index, 1)
      blocks = scf.ForOp(zero, arith.constant(index, record["grid"]), one)
      with ir.InsertionPoint(blocks.body):
        threads = scf.ForOp(zero, arith.constant(index, record["local"]), one)
        with ir.InsertionPoint(threads.body):
          func.CallOp(thread, [blocks.induction_variable, threads.induction_variable, *launch.entry_block.arguments])
          scf.YieldOp([])
        scf.YieldOp([])
      func.ReturnOp([])
    gpu_module.operation.erase()
    records[name] = record
  return records


def run_mapped(source: str, arrays: dict[str, list[np.ndarray]], options: str = "") -> dict[str, dict[str, int]]:
  """Map the kernels of `source`, run each on its arrays (output first, written in place); their pytc.gpu records."""
  with context(), ir.Location.unknown():
    module = ir.Module.parse(source)
    run_pipeline(module, f"builtin.module(pytc-gpu-map{{{options}}})")
    records = emulate(module)
    run_pipeline(module, LLVM_PIPELINE)
    engine = ExecutionEngine(module, opt_level=0)
    for name, buffers in arrays.items():  # the packed wrapper of a function taking bare pointers: one pointer to each
      pointers = [ctypes.c_void_p(b.ctypes.data) for b in buffers]
      ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup(name))((ctypes.c_void_p * len(pointers))(*map(ctypes.addressof, pointers)))
  return records


KERNELS = """
func.func @broadcast_add(%out: memref<5x7xf32>, %a: memref<5x7xf32>, %b: memref<5x1xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 5 id 0
  %j = uop.range loop 7 id 1
  %x = uop.index %a[%i, %j] : memref<5x7xf32>
  %y = uop.index %b[%i, %c0] : memref<5x1xf32>
  %s = uop.add %x, %y : f32
  %w = uop.store %s, %out[%i, %j] : memref<5x7xf32>
  %e = uop.end %w over(%i, %j) : memref<5x7xf32>
  return
}
func.func @transpose(%out: memref<3x4x5xf32>, %a: memref<5x4x3xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 3 id 0
  %j = uop.range loop 4 id 1
  %k = uop.range loop 5 id 2
  %x = uop.index %a[%k, %j, %i] : memref<5x4x3xf32>
  %w = uop.store %x, %out[%i, %j, %k] : memref<3x4x5xf32>
  %e = uop.end %w over(%i, %j, %k) : memref<3x4x5xf32>
  return
}
func.func @row_max(%out: memref<37x1xf32>, %a: memref<37x9xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 37 id 0
  %k = uop.range reduce 9 id 1
  %x = uop.index %a[%i, %k] : memref<37x9xf32>
  %m = uop.range_reduce max %x over(%k) : f32
  %w = uop.store %m, %out[%i, %c0] : memref<37x1xf32>
  %e = uop.end %w over(%i) : memref<37x1xf32>
  return
}
func.func @neg(%out: memref<1000xf32>, %a: memref<1000xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 1000 id 0
  %x = uop.index %a[%i] : memref<1000xf32>
  %n = uop.neg %x : f32
  %w = uop.store %n, %out[%i] : memref<1000xf32>
  %e = uop.end %w over(%i) : memref<1000xf32>
  return
}
"""


@pytest.mark.parametrize("options", ["", "local_size=64", "local_size=128 outputs_per_thread=3", "local_size=1 outputs_per_thread=7"])
def test_mapped_kernels_compute_numpy(options: str):
  rng = np.random.default_rng(0)
  a, b, t, r, n = (rng.standard_normal(s).astype(np.float32) for s in ((5, 7), (5, 1), (5, 4, 3), (37, 9), (1000,)))
  outs = {name: np.full(shape, np.nan, np.float32) for name, shape in (("broadcast_add", (5, 7)), ("transpose", (3, 4, 5)),
                                                                       ("row_max", (37, 1)), ("neg", (1000,)))}
  records = run_mapped(KERNELS, {"broadcast_add": [outs["broadcast_add"], a, b], "transpose": [outs["transpose"], t],
                                 "row_max": [outs["row_max"], r], "neg": [outs["neg"], n]}, options)
  np.testing.assert_array_equal(outs["broadcast_add"], a + b)
  np.testing.assert_array_equal(outs["transpose"], t.transpose(2, 1, 0))
  np.testing.assert_array_equal(outs["row_max"], r.max(axis=1, keepdims=True))
  np.testing.assert_array_equal(outs["neg"], -n)
  assert {name: rec["total"] for name, rec in records.items()} == {"broadcast_add": 35, "transpose": 60, "row_max": 37, "neg": 1000}


def scheduled_kernels(out: Tensor) -> ir.Module:
  return copy_module(schedule([out.lazydata])[0].kernels)


@pytest.mark.parametrize("build", [
  lambda x, y: (x + y[:1]).relu(),
  lambda x, y: x.softmax(axis=-1),
  lambda x, y: x @ y.T,
  lambda x, y: (x > y).where(x.pad(((0, 0), (0, 0))), 0).sum(axis=0),
  lambda x, y: x.pad(((1, 1), (2, 0))).max(axis=1).cast("int32"),
  lambda x, y: x[:, :0] * 2,
], ids=["broadcast", "softmax", "matmul", "where-sum", "pad-max-cast", "empty"])
def test_pytc_kernels_lower_to_nvvm(build):
  rng = np.random.default_rng(1)
  x, y = Tensor(rng.standard_normal((6, 10)).astype(np.float32)), Tensor(rng.standard_normal((6, 10)).astype(np.float32))
  module = scheduled_kernels(build(x, y))
  with module.context:
    names = [ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations]
    run_pipeline(module, "builtin.module(pytc-gpu-map)")
    kernels = {op.bodyRegion.blocks[0].operations[0].name.value: GPU.get(op.bodyRegion.blocks[0].operations[0]) for op in module.body.operations}
    assert list(kernels) == names and "gpu.container_module" in module.operation.attributes
    assert all(rec["grid"] * rec["local"] * rec["outputs"] >= rec["total"] for rec in kernels.values())
    run_pipeline(module, "builtin.module(convert-scf-to-cf, gpu.module(convert-gpu-to-nvvm{index-bitwidth=64}), reconcile-unrealized-casts)")
  assert str(module).count("nvvm.kernel") == len(names)


def mapped_records(out: Tensor, options: str = "") -> tuple[ir.Module, dict[str, dict[str, int]]]:
  """The scheduled kernels of `out` mapped (with `options`), and each kernel's pytc.gpu record."""
  module = scheduled_kernels(out)
  with module.context:
    run_pipeline(module, f"builtin.module(pytc-gpu-map{{{options}}})")
    return module, {op.bodyRegion.blocks[0].operations[0].name.value: GPU.get(op.bodyRegion.blocks[0].operations[0]) for op in module.body.operations}


@pytest.mark.parametrize("build, grouped", [
  (lambda x: x.softmax(-1), [(2, 6, 256)]),
  (lambda x: x.layernorm(), [(2, 6, 256)]),
  (lambda x: x.argmax(-1), [(2, 6, 256)]),  # the row max inside argmax's index reduction is grouped first
  (lambda x: x.max(-1), [(1, 6, 256)]),
  (lambda x: x.reshape(-1).sum(), [(1, 1, 256)]),  # split into partials: the partials' kernel serial, their sum grouped
  (lambda x: x.T.reshape(64, -1).sum(-1), []),  # 64 rows of 192: 64 * 32 >= 192, a thread per row
  (lambda x: x[:, :4].softmax(-1), []),
  (lambda x: x.reshape(96, 128).softmax(-1), [(2, 96, 128)]),  # many rows, but each row's 128 outputs would redo its reductions
], ids=["softmax", "layernorm", "argmax", "max", "whole-sum", "many-rows", "short-rows", "many-long-rows"])
def test_group_reduce_rule(build, grouped):
  """A kernel is grouped (one row per workgroup of up to 256 threads, the power of two covering the reduction) when
  rows * group_reduce < its longest reduction, or when reductions of at least group_reduce feed several outputs of each
  row; group_reduce=0 never."""
  x = Tensor(np.random.default_rng(2).standard_normal((6, 2048)).astype(np.float32))
  _, records = mapped_records(build(x))
  assert [(rec["group"], rec["grid"], rec["local"]) for rec in records.values() if "group" in rec] == grouped
  for rec in records.values():
    if "group" in rec: assert rec["outputs"] * rec["local"] * rec["grid"] >= rec["total"]
  _, serial = mapped_records(build(x), "group_reduce=0")
  assert not any("group" in rec for rec in serial.values())


def test_grouped_kernels_compile_for_gpus():
  """Workgroup memory and barriers go through convert-gpu-to-nvvm (shared memory and bar.sync in the PTX) and
  convert-gpu-to-rocdl (a group segment in the AMD code object's kernel descriptor)."""
  module, records = mapped_records(Tensor(np.zeros((4, 2048), np.float32)).softmax(-1))
  (name, record), = records.items()
  assert record["group"] == 2
  text = ptx.ptx(module, "sm_80")[f"{name}_module"]
  assert ".shared" in text and "bar.sync" in text and f".entry {name}(" in text
  if any(importlib.util.find_spec(p) is None for p in ("llvmlite", "ziglang")): pytest.skip("AMD code objects need llvmlite and ziglang")
  kernel = amd_code_object.parse(amdgpu.code_object(module, "gfx942")[f"{name}_module"]).kernels[name]
  assert kernel.group_segment_fixed_size >= 2 * 256 * 4 and kernel.max_flat_workgroup_size == 256


@pytest.mark.parametrize("build, tiles", [
  (lambda x, w: x @ w, [3 * 2]),
  (lambda x, w: (x @ w).relu() + w[0], [3 * 2]),  # the epilogue after the sum, its bias load at the output's column
  (lambda x, w: x.reshape(3, 11, 70) @ w.reshape(1, 70, 17).expand(3, 70, 17), [3 * 1 * 2]),  # a batch range
  (lambda x, w: x.T.T @ w.T.T, [3 * 2]),
  (lambda x, w: x[:1] @ w, []),  # one row: its 17 outputs' reductions of 70 go grouped or serial, not tiled
  (lambda x, w: x.half() @ w.half(), [3 * 2]),  # f16 factors, summed widened to f32
  (lambda x, w: x.cast("bfloat16") @ w.cast("bfloat16"), [3 * 2]),
  (lambda x, w: x.cast("float64") @ w.cast("float64"), []),  # f32 sums only
  (lambda x, w: (x * w[:33, :1]).sum(-1), []),  # no product of two operands varying with different output ranges
], ids=["matmul", "relu-bias", "batched", "transposed-twice", "vector", "half", "bfloat16", "double", "row-sum"])
def test_matmul_tile_rule(build, tiles):
  """A matmul-shaped kernel summing in f32 maps onto 16x16 output tiles of 256 threads (tile=0 or a local size under 256 keeps the
  thread-per-output mapping), one workgroup per tile of each batch."""
  rng = np.random.default_rng(4)
  x, w = Tensor(rng.standard_normal((33, 70)).astype(np.float32)), Tensor(rng.standard_normal((70, 17)).astype(np.float32))
  _, records = mapped_records(build(x, w))
  assert [rec["grid"] for rec in records.values() if "tile" in rec] == tiles
  assert all(rec["tile"] == 16 and rec["local"] == 256 and rec["outputs"] == 1 for rec in records.values() if "tile" in rec)
  for options in ("tile=0", "local_size=128"): assert not any("tile" in rec for rec in mapped_records(build(x, w), options)[1].values())


def test_tiled_matmul_compiles_for_gpus():
  """The A and B tiles and the accumulators in workgroup memory, and the barriers, go through convert-gpu-to-nvvm and rocdl."""
  module, records = mapped_records(Tensor(np.zeros((40, 50), np.float32)) @ Tensor(np.zeros((50, 30), np.float32)))
  (name, record), = records.items()
  assert record == {"local": 256, "grid": 6, "outputs": 1, "total": 1200, "tile": 16}
  tiles = r"memref<16x16xf32, #gpu.address_space<workgroup>>"
  assert re.search(rf"workgroup\(%\w+ : {tiles}, %\w+ : {tiles}, %\w+ : memref<256xf32", str(module)) and str(module).count("gpu.barrier") == 2
  text = ptx.ptx(module, "sm_80")[f"{name}_module"]
  assert ".shared" in text and "bar.sync" in text and f".entry {name}(" in text
  if any(importlib.util.find_spec(p) is None for p in ("llvmlite", "ziglang")): pytest.skip("AMD code objects need llvmlite and ziglang")
  kernel = amd_code_object.parse(amdgpu.code_object(module, "gfx942")[f"{name}_module"]).kernels[name]
  assert kernel.group_segment_fixed_size >= (2 * 16 * 16 + 256) * 4 and kernel.max_flat_workgroup_size == 256


@pytest.mark.parametrize("local_size", [32, 256])
@pytest.mark.parametrize("outputs_per_thread", [1, 3])
@pytest.mark.parametrize("lanes", [2, 4, 8])
def test_every_vector_output_once(local_size: int, outputs_per_thread: int, lanes: int):
  """With outputs of `lanes` (totals a multiple of them), thread t's k-th output covers flat (t * outputs + k) * lanes + lane."""
  for total in (0, lanes, 32 * lanes, 255 * lanes, 256 * lanes, 257 * lanes, 1000 * lanes, 4097 * lanes):
    m = choose_mapping(total, local_size, outputs_per_thread, lanes)
    assert m.vector == (lanes if total // (lanes * outputs_per_thread) >= local_size else 1), m
    flat = [(t * m.outputs + k) * m.vector + lane for t in range(m.grid * m.local) for k in range(m.outputs) for lane in range(m.vector)]
    assert sorted(f for f in flat if f < total) == list(range(total)), m
    assert m.tail == (len(flat) != total) and (m.grid == 0 or (m.grid - 1) * m.local * m.per_thread < total), m


@pytest.mark.parametrize("build, lanes", [
  (lambda x: (x * 2).exp(), 4),  # f32: 16 bytes
  (lambda x: x.half() * 2, 4),  # reads f32, writes f16: the widest element, f32, sets 4 lanes
  (lambda x: x.half().realize() * 2, 8),  # f16 in and out: 8 lanes
  (lambda x: x.cast("float64") + 1, 2),
  (lambda x: x > 0, 4),  # bytes written, f32 read
  (lambda x: x.cast("int8").realize() + 1, 16),
  (lambda x: x.sum(axis=0), 1),  # a reduction varying along the innermost output range stays scalar
  (lambda x: x[:, :10] + 1, 1),  # 10 outputs per row: not a multiple of 4
  (lambda x: x[:2, :8] + 1, 1),  # 16 outputs: too few to fill a workgroup as vectors
  (lambda x: x[:, :16].softmax(-1), 4),  # rows too short to group: each thread's row reductions serial, its outputs vectors
], ids=["f32", "f32-to-f16", "f16", "f64", "compare", "int8", "column-sum", "odd-rows", "small", "softmax"])
def test_vector_lanes_rule(build, lanes):
  """Outputs become vectors of as many lanes as the widest element read or written fits in 16 bytes, along the innermost output
  range when its size is a multiple of the lanes, no reduction varies along it, and the vectors still fill a workgroup;
  vector_bytes=0 never."""
  x = Tensor(np.random.default_rng(5).standard_normal((512, 64)).astype(np.float32))
  _, records = mapped_records(build(x))
  assert records[list(records)[-1]].get("vector", 1) == lanes, records
  assert not any("vector" in rec for rec in mapped_records(build(x), "vector_bytes=0")[1].values())
