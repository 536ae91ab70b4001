"""The uop dialect from Python: loading into a user's context, generated builders, verifier errors."""
import pytest
from mlir import ir
from mlir.passmanager import PassManager

import pytc
from pytc.dialects import uop


def test_load_dialect_into_a_users_context():
  ctx = ir.Context()
  with pytest.raises(ir.MLIRError): ir.Module.parse("%0 = uop.const 1.0 : tensor<2xf32>", ctx)
  pytc.load_dialect(ctx)
  module = ir.Module.parse("%0 = uop.const 1.0 : tensor<2xf32>", ctx)
  assert "uop.const 1.000000e+00 : tensor<2xf32>" in str(module)


def test_generated_builders_infer_types_and_print():
  with uop.context(), ir.Location.unknown():
    f32 = ir.F32Type.get()
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
      c = uop.ConstOp(ir.RankedTensorType.get([4, 2], f32), ir.FloatAttr.get(f32, 2.0)).result
      total = uop.add(c, c)
      less = uop.cmplt(total, c)
      reduced = uop.reduce(ir.RankedTensorType.get([1, 2], f32), uop.ReduceKind.max, total, [0])
      uop.sink([less, reduced])
    assert module.operation.verify()
    assert str(less.type) == "tensor<4x2xi1>"
    assert "uop.reduce max %1 [0] : tensor<4x2xf32> -> tensor<1x2xf32>" in str(module)


def test_verifier_error_names_the_problem():
  with uop.context():
    with pytest.raises(ir.MLIRError, match="axis 2 is out of range for a rank-2 tensor"):
      ir.Module.parse("func.func @f(%a: tensor<4x2xf32>) {\n"
                      "  %0 = uop.reduce add %a [2] : tensor<4x2xf32> -> tensor<4x2xf32>\n  return\n}")


def test_canonicalize_folds_constants_from_python():
  with uop.context() as ctx:
    module = ir.Module.parse("func.func @f() {\n  %a = uop.const 3.0 : tensor<2xf32>\n  %b = uop.const 4.0 : tensor<2xf32>\n"
                             "  %c = uop.mul %a, %b : tensor<2xf32>\n  uop.sink %c : tensor<2xf32>\n  return\n}")
    PassManager.parse("builtin.module(canonicalize)", ctx).run(module.operation)
    assert "uop.const 1.200000e+01 : tensor<2xf32>" in str(module) and "uop.mul" not in str(module)
