// RUN: pytc-opt %s --pass-pipeline='builtin.module(pytc-rangeify,pytc-fuse,pytc-bufferize,pytc-split-kernels,pytc-schedule,pytc-lower-kernels)' | FileCheck %s

// Function declarations (no body) pass through every scheduling pass untouched.
// CHECK: func.func private @external(memref<4xf32>)
// CHECK-LABEL: func.func @E_4(
// CHECK: scf.parallel
// CHECK-LABEL: func.func @f(
// CHECK: uop.launch @E_4(
func.func private @external(memref<4xf32>)
func.func @f(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}
