// RUN: pytc-opt %s --pass-pipeline='builtin.module(pytc-split-reduce,pytc-rangeify,pytc-fuse,pytc-bufferize,pytc-split-kernels,pytc-schedule,pytc-order-loops,pytc-vectorize,pytc-lower-kernels)' | FileCheck %s
// A whole-pipeline test, on purpose: every pytc pass in order, each reading the previous one's output, so that each
// one meets a function declaration next to a graph in its own input form.

// A function declaration (no body), plain or a kernel's, has no form: every pass leaves it where it is and as it is (no
// attributes added, none dropped), while the graph beside it goes all the way to a lowered kernel and its launch.
// CHECK: func.func private @external(memref<4xf32>){{$}}
// CHECK-NEXT: func.func private @prebuilt(memref<4xf32>, memref<4xf32>) attributes {pytc.kernel}{{$}}
// CHECK-LABEL: func.func @E_4(
// CHECK: scf.parallel
// CHECK-LABEL: func.func @f(
// CHECK: uop.launch @E_4(
func.func private @external(memref<4xf32>)
func.func private @prebuilt(memref<4xf32>, memref<4xf32>) attributes {pytc.kernel}
func.func @f(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}
