// A verifier error is reported at the op, exits 1 and prints no IR.
// RUN: not pytc-opt %s 2>&1 | FileCheck %s --implicit-check-not=Traceback --implicit-check-not=func.func
// RUN: not pytc-opt %s -canonicalize 2>&1 | FileCheck %s --implicit-check-not=Traceback --implicit-check-not=func.func

// CHECK: {{.*}}verifier-error.mlir:[[@LINE+2]]:8: error: 'uop.reshape' op cannot reshape 4 elements into 3
func.func @f(%x: tensor<4xf32>) -> tensor<3xf32> {
  %0 = uop.reshape %x : tensor<4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
