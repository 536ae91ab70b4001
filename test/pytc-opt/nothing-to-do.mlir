// A module with nothing for a pass to do is no error: an empty input, or functions that are neither graphs
// nor kernels (no uop ops), pass through every pytc pass unchanged (exit 0).
// RUN: printf "" | pytc-opt - -pytc-rangeify -pytc-lower-kernels | FileCheck %s --check-prefix=EMPTY
// RUN: pytc-opt %s --pass-pipeline='builtin.module(pytc-split-reduce,pytc-rangeify,pytc-fuse,pytc-bufferize,pytc-split-kernels,pytc-schedule,pytc-order-loops,pytc-vectorize,pytc-lower-kernels)' | FileCheck %s
// RUN: pytc-opt %s --pass-pipeline='builtin.module()' | FileCheck %s

// EMPTY: module {
// EMPTY-NEXT: }

// CHECK-LABEL: func.func private @external(memref<4xf32>)
// CHECK-LABEL: func.func @identity
// CHECK-NEXT: return
func.func private @external(memref<4xf32>)
func.func @identity(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
