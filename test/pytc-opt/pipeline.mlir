// Upstream and pytc passes run in the order given, as --pass-pipeline or as flags.
// RUN: pytc-opt %s --pass-pipeline='builtin.module(canonicalize,cse)' | FileCheck %s
// RUN: pytc-opt %s -canonicalize -cse | FileCheck %s
// RUN: pytc-opt %s --pass-pipeline='builtin.module(func.func(canonicalize),cse)' | FileCheck %s
// RUN: pytc-opt %s -canonicalize | FileCheck %s --check-prefix=CANON
// RUN: pytc-opt %s --pass-pipeline='builtin.module(canonicalize,pytc-rangeify,cse,pytc-bufferize)' | FileCheck %s --check-prefix=LOWER

// canonicalize drops the identity reshape, cse merges the two exp2.
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[E:.*]] = uop.exp2 %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[S:.*]] = uop.add %[[E]], %[[E]] : tensor<4xf32>
// CHECK-NEXT: uop.sink %[[S]] : tensor<4xf32>

// CANON-LABEL: func.func @f
// CANON-NEXT: uop.exp2
// CANON-NEXT: uop.exp2
// CANON-NEXT: uop.add
// CANON-NEXT: uop.sink

// LOWER-LABEL: func.func @f
// LOWER-SAME: (%[[IN:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
// LOWER: %[[I:.*]] = uop.range loop 4
// LOWER-NEXT: %[[V:.*]] = uop.index %[[IN]][%[[I]]]
// LOWER-NEXT: %[[E:.*]] = uop.exp2 %[[V]] : f32
// LOWER-NEXT: %[[S:.*]] = uop.add %[[E]], %[[E]] : f32
// LOWER-NEXT: %[[W:.*]] = uop.store %[[S]], %[[OUT]][%[[I]]]
// LOWER-NEXT: uop.end %[[W]] over(%[[I]])
func.func @f(%x: tensor<4xf32>) {
  %0 = uop.exp2 %x : tensor<4xf32>
  %1 = uop.exp2 %x : tensor<4xf32>
  %2 = uop.add %0, %1 : tensor<4xf32>
  %3 = uop.reshape %2 : tensor<4xf32> -> tensor<4xf32>
  uop.sink %3 : tensor<4xf32>
  return
}
