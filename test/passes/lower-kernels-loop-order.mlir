// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-lower-kernels,canonicalize,cse)' | FileCheck %s

// A matmul marked reduce-outer (by pytc-order-loops) lowers to one accumulator per element of the innermost output
// range j, set to the identity, then the k loop outside a contiguous j loop that accumulates, then a j loop that stores.
// The k loop steps 4 at a time (8 is a multiple of 4): each accumulator is loaded and stored once per 4 products.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<4x6xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %[[B:[a-z0-9]+]]: memref<8x6xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index)
// CHECK-SAME: pytc.extent = 4
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<6xf32>
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: scf.for %[[J0:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: memref.store %{{.*}}, %[[ACC]][%[[J0]]]
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %[[C4]]
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-DAG: memref.load %[[ACC]][%[[J]]]
// CHECK-DAG: memref.load %[[A]][%[[I]], %[[K]]]
// CHECK-DAG: memref.load %[[B]][%[[K]], %[[J]]]
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: %[[K3:.*]] = arith.addi %[[K]], %[[C3]] : index
// CHECK: memref.load %[[B]][%[[K3]], %[[J]]]
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK-NEXT: memref.store %[[SUM]], %[[ACC]][%[[J]]]
// CHECK: scf.for %[[J2:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[V:.*]] = memref.load %[[ACC]][%[[J2]]]
// CHECK-NEXT: memref.store %[[V]], %[[OUT]][%[[I]], %[[J2]]]
func.func @matmul(%out: memref<4x6xf32>, %a: memref<4x8xf32>, %b: memref<8x6xf32>) attributes {pytc.kernel, pytc.loop_order = "reduce-outer"} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 6 id 1
  %k = uop.range reduce 8 id 2
  %x = uop.index %a[%i, %k] : memref<4x8xf32>
  %y = uop.index %b[%k, %j] : memref<8x6xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<4x6xf32>
  %e = uop.end %w over(%i, %j) : memref<4x6xf32>
  return
}

// -----

// Unmarked, a row sum keeps its reduction innermost: no accumulator buffer, the sum carried by an scf.for.
// CHECK-LABEL: func.func @row_sum(
// CHECK-NOT: memref.alloca
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} iter_args
func.func @row_sum(%out: memref<4x1xf32>, %x: memref<4x8xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %v = uop.index %x[%i, %k] : memref<4x8xf32>
  %s = uop.range_reduce add %v over(%k) : f32
  %w = uop.store %s, %out[%i, %c0] : memref<4x1xf32>
  %e = uop.end %w over(%i) : memref<4x1xf32>
  return
}

// -----

// A convolution-like read x[k, j + k], marked reduce-outer: the accumulators over j, the k loop outside the j loop.
// CHECK-LABEL: func.func @shifted(
// CHECK: memref.alloca() : memref<6xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-NEXT: memref.store
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[JK:.*]] = arith.addi %[[J]], %[[K]] : index
// CHECK-NEXT: memref.load %{{.*}}[%[[K]], %[[JK]]] : memref<3x8xf32>
func.func @shifted(%out: memref<4x6xf32>, %x: memref<3x8xf32>) attributes {pytc.kernel, pytc.loop_order = "reduce-outer"} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 6 id 1
  %k = uop.range reduce 3 id 2
  %jk = arith.addi %j, %k : index
  %v = uop.index %x[%k, %jk] : memref<3x8xf32>
  %s = uop.range_reduce add %v over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<4x6xf32>
  %e = uop.end %w over(%i, %j) : memref<4x6xf32>
  return
}

// -----

// Per-element accumulators hold the buffer storage type: unsigned ints signless, booleans as bytes (an i1 memref
// has no LLVM lowering), truncated to i1 around the combine. With j its only output range, a column sum loops j over
// its slice [begin, end) (the last two arguments) everywhere: slices of j run on the cores.
// CHECK-LABEL: func.func @column_sum(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<8x6xi32> {llvm.noalias}, %[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index)
// CHECK-SAME: pytc.extent = 6
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<6xi32>
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %[[END]]
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %[[END]]
// CHECK-COUNT-3: arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[TOTAL:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: memref.store %[[TOTAL]], %[[ACC]]
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %[[END]]
// CHECK-LABEL: func.func @column_any(
// CHECK: %[[BACC:.*]] = memref.alloca() : memref<6xi8>
// CHECK: %[[OLD:.*]] = memref.load %[[BACC]]
// CHECK-NEXT: arith.trunci %[[OLD]] : i8 to i1
// CHECK-COUNT-3: arith.maxui %{{.*}}, %{{.*}} : i1
// CHECK: %[[MAX:.*]] = arith.maxui %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[WIDE:.*]] = arith.extui %[[MAX]] : i1 to i8
// CHECK-NEXT: memref.store %[[WIDE]], %[[BACC]]
func.func @column_sum(%out: memref<1x6xui32>, %x: memref<8x6xui32>) attributes {pytc.kernel, pytc.loop_order = "reduce-outer"} {
  %c0 = arith.constant 0 : index
  %j = uop.range loop 6 id 0
  %k = uop.range reduce 8 id 1
  %v = uop.index %x[%k, %j] : memref<8x6xui32>
  %s = uop.range_reduce add %v over(%k) : ui32
  %w = uop.store %s, %out[%c0, %j] : memref<1x6xui32>
  %e = uop.end %w over(%j) : memref<1x6xui32>
  return
}
func.func @column_any(%out: memref<1x6xi1>, %x: memref<8x6xi1>) attributes {pytc.kernel, pytc.loop_order = "reduce-outer"} {
  %c0 = arith.constant 0 : index
  %j = uop.range loop 6 id 0
  %k = uop.range reduce 8 id 1
  %v = uop.index %x[%k, %j] : memref<8x6xi1>
  %m = uop.range_reduce max %v over(%k) : i1
  %w = uop.store %m, %out[%c0, %j] : memref<1x6xi1>
  %e = uop.end %w over(%j) : memref<1x6xi1>
  return
}
