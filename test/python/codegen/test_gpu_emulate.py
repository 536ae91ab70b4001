"""pytc-gpu-emulate: gpu.func kernels (those of test/passes/gpu-emulate.mlir) run on the CPU through pytc's LLVM lowering
and the ExecutionEngine, against NumPy."""
import ctypes
import re
from pathlib import Path

import numpy as np
import pytest
from mlir import ir
from mlir.execution_engine import ExecutionEngine

from pytc.compilers.cpu import LLVM_PIPELINE
from pytc.dialects import uop
from pytc.passes import pass_manager

KERNELS = (Path(__file__).parents[2] / "passes" / "gpu-emulate.mlir").read_text()


def kernel_text(name: str) -> str:
  return next(part for part in re.split(r"^// -----.*$", KERNELS, flags=re.M) if f"gpu.func @{name}(" in part)


def emulated(text: str, name: str):
  """A callable running the kernel `name` of `text`'s module, emulated, on its buffers (and index arguments)."""
  context = uop.context()
  with context:
    module = ir.Module.parse(text)
    pass_manager("builtin.module(pytc-gpu-emulate)", context).run(module.operation)
    pass_manager(LLVM_PIPELINE, context).run(module.operation)
    engine = ExecutionEngine(module, opt_level=2)
  entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup(name))  # the packed wrapper: one pointer per argument

  def run(*args: np.ndarray | int) -> None:
    values = [ctypes.c_void_p(a.ctypes.data) if isinstance(a, np.ndarray) else ctypes.c_int64(a) for a in args]
    entry((ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values]))
  run.engine = engine  # keeps the compiled code alive
  return run


@pytest.fixture
def rng() -> np.random.Generator: return np.random.default_rng(0)


def test_elementwise_with_tail(rng):
  a, b = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
  out = np.full(1000, np.nan, np.float32)
  emulated(kernel_text("add_tail"), "add_tail")(a, b, out)
  np.testing.assert_array_equal(out, a + b)


def tree_row_sum(a: np.ndarray, local: int) -> np.ndarray:
  """The kernel's float32 order: each thread sums its strided elements in turn, then halving steps pair thread t with t + half."""
  partial = np.zeros((a.shape[0], local), np.float32)
  for k in range(a.shape[1] // local): partial = partial + a[:, k * local:(k + 1) * local]
  half = local // 2
  while half:
    partial[:, :half] = partial[:, :half] + partial[:, half:2 * half]
    half //= 2
  return partial[:, 0]


def test_row_sum_tree_reduction(rng):
  a = rng.standard_normal((16, 1024)).astype(np.float32)
  out = np.zeros(16, np.float32)
  emulated(kernel_text("row_sum"), "row_sum")(a, out)
  np.testing.assert_array_equal(out, tree_row_sum(a, 256))
  np.testing.assert_allclose(out, a.astype(np.float64).sum(1), rtol=0, atol=1e-4)


def test_row_sum_without_barriers_differs(rng):
  """The negative control: with its barriers gone the reduction is one phase (each thread reads partial sums others have
  not written yet), and the emulator's answer is wrong."""
  a = rng.standard_normal((16, 1024)).astype(np.float32)
  out = np.zeros(16, np.float32)
  text = kernel_text("row_sum")
  emulated(re.sub(r"^\s*gpu\.barrier\n", "", text, flags=re.M), "row_sum")(a, out)
  assert not np.allclose(out, tree_row_sum(a, 256), atol=1e-3)


def test_value_kept_across_barrier(rng):
  a = rng.standard_normal(512).astype(np.float32)
  out = np.zeros(512, np.float32)
  emulated(kernel_text("mirror"), "mirror")(a, out)
  np.testing.assert_array_equal(out, 2 * a - a.reshape(4, 128)[:, ::-1].reshape(512))


def test_two_dimensional_workgroups_on_a_grid_given_at_the_call(rng):
  a = rng.standard_normal((8, 16)).astype(np.float32)
  out = np.zeros((8, 16), np.float32)
  emulated(kernel_text("flip_tiles"), "flip_tiles")(a, out, 2, 2, 1)
  tiles = a.reshape(2, 4, 2, 8)
  np.testing.assert_array_equal(out, (tiles[:, ::-1, :, ::-1] + tiles).reshape(8, 16))


def test_mapped_kernel_runs_on_the_cpu(rng):
  """pytc-gpu-map's output goes through the emulator unchanged: a row sum of a 2-d input over a tail-guarded grid."""
  text = """
func.func @sum_rows(%out: memref<100x1xf32>, %a: memref<100x7xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 100 id 0
  %k = uop.range reduce 7 id 1
  %x = uop.index %a[%i, %k] : memref<100x7xf32>
  %s = uop.range_reduce add %x over (%k) : f32
  %c0 = arith.constant 0 : index
  %w = uop.store %s, %out[%i, %c0] : memref<100x1xf32>
  %e = uop.end %w over(%i) : memref<100x1xf32>
  return
}"""
  context = uop.context()
  with context:
    module = ir.Module.parse(text)
    pass_manager("builtin.module(pytc-gpu-map)", context).run(module.operation)
    mapped = str(module)
  assert "gpu.func @sum_rows" in mapped
  a, out = rng.standard_normal((100, 7)).astype(np.float32), np.zeros((100, 1), np.float32)
  emulated(mapped, "sum_rows")(out, a)
  np.testing.assert_allclose(out[:, 0], a.astype(np.float64).sum(1), rtol=1e-6, atol=1e-6)
