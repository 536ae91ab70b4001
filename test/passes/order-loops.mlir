// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,pytc-bufferize,pytc-split-kernels,pytc-order-loops)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,pytc-bufferize,pytc-split-kernels,pytc-order-loops,pytc-lower-kernels,canonicalize,cse)' | FileCheck %s --check-prefix=LOWER

// A matmul reads b[k, j] with the reduce range k outside the innermost output range j: the kernel is
// marked reduce-outer, and lowers to one accumulator per j, the k loop outside a contiguous j loop.
// CHECK-LABEL: func.func @r_4_6_8(
// CHECK-SAME: pytc.loop_order = "reduce-outer"
// LOWER-LABEL: func.func @r_4_6_8(
// LOWER-SAME: %[[OUT:[a-z0-9]+]]: memref<4x6xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %[[B:[a-z0-9]+]]: memref<8x6xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index)
// LOWER: %[[ACC:.*]] = memref.alloca() : memref<6xf32>
// LOWER: scf.parallel (%[[I:.*]]) =
// LOWER: scf.for %[[J0:.*]] = %{{.*}} to %{{.*}} step
// LOWER-NEXT: memref.store %{{.*}}, %[[ACC]][%[[J0]]]
// LOWER: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// LOWER-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// LOWER-DAG: memref.load %[[ACC]][%[[J]]]
// LOWER-DAG: memref.load %[[A]][%[[I]], %[[K]]]
// LOWER-DAG: memref.load %[[B]][%[[K]], %[[J]]]
// LOWER: arith.addf
// LOWER-NEXT: memref.store %{{.*}}, %[[ACC]][%[[J]]]
// LOWER: scf.for %[[J2:.*]] = %{{.*}} to %{{.*}} step
// LOWER-NEXT: %[[V:.*]] = memref.load %[[ACC]][%[[J2]]]
// LOWER-NEXT: memref.store %[[V]], %[[OUT]][%[[I]], %[[J2]]]
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) {
  %x = uop.reshape %a : tensor<4x8xf32> -> tensor<4x1x8xf32>
  %xe = uop.expand %x : tensor<4x1x8xf32> -> tensor<4x6x8xf32>
  %bt = uop.permute %b [1, 0] : tensor<8x6xf32> -> tensor<6x8xf32>
  %y = uop.reshape %bt : tensor<6x8xf32> -> tensor<1x6x8xf32>
  %ye = uop.expand %y : tensor<1x6x8xf32> -> tensor<4x6x8xf32>
  %m = uop.mul %xe, %ye : tensor<4x6x8xf32>
  %s = uop.reduce add %m [2] : tensor<4x6x8xf32> -> tensor<4x6x1xf32>
  %r = uop.reshape %s : tensor<4x6x1xf32> -> tensor<4x6xf32>
  uop.sink %r : tensor<4x6xf32>
  return
}

// -----

// A row sum reads x[i, k]: the reduced axis is already the contiguous one, so the order stays.
// CHECK-LABEL: func.func @r_4_8(
// CHECK-NOT: pytc.loop_order
// CHECK-LABEL: func.func @row_sum(
// LOWER-LABEL: func.func @r_4_8(
// LOWER-NOT: memref.alloca
// LOWER: scf.parallel
// LOWER: scf.for {{.*}} iter_args
func.func @row_sum(%a: tensor<4x8xf32>) {
  %s = uop.reduce add %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  uop.sink %s : tensor<4x1xf32>
  return
}

// -----

// With more accumulators than max_accumulators allows, the order stays.
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,pytc-bufferize,pytc-split-kernels,pytc-order-loops{max_accumulators=4})' | FileCheck %s --check-prefix=CAP
// CAP-LABEL: func.func @r_4_6_8(
// CAP-NOT: pytc.loop_order
// CAP-LABEL: func.func @matmul(
func.func @capped(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) {
  %x = uop.reshape %a : tensor<4x8xf32> -> tensor<4x1x8xf32>
  %xe = uop.expand %x : tensor<4x1x8xf32> -> tensor<4x6x8xf32>
  %bt = uop.permute %b [1, 0] : tensor<8x6xf32> -> tensor<6x8xf32>
  %y = uop.reshape %bt : tensor<6x8xf32> -> tensor<1x6x8xf32>
  %ye = uop.expand %y : tensor<1x6x8xf32> -> tensor<4x6x8xf32>
  %m = uop.mul %xe, %ye : tensor<4x6x8xf32>
  %s = uop.reduce add %m [2] : tensor<4x6x8xf32> -> tensor<4x6x1xf32>
  uop.sink %s : tensor<4x6x1xf32>
  return
}

// -----

// A convolution-like read x[k, j + k]: the last index moves with the innermost output range j (shifted
// by the reduce range), an earlier one with k: reduce-outer as well.
// CHECK-LABEL: func.func @shifted(
// CHECK-SAME: pytc.loop_order = "reduce-outer"
// LOWER-LABEL: func.func @shifted(
// LOWER: memref.alloca() : memref<6xf32>
// LOWER: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// LOWER-NEXT: memref.store
// LOWER: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// LOWER-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
func.func @shifted(%out: memref<4x6xf32>, %x: memref<3x8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 6 id 1
  %k = uop.range reduce 3 id 2
  %jk = arith.addi %j, %k : index
  %v = uop.index %x[%k, %jk] : memref<3x8xf32>
  %s = uop.range_reduce add %v over (%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<4x6xf32>
  %e = uop.end %w over (%i, %j) : memref<4x6xf32>
  return
}

// -----

// Per-element accumulators hold the buffer storage type: unsigned ints signless, booleans as bytes (an i1 memref
// has no LLVM lowering), truncated to i1 around the combine.
// LOWER-LABEL: func.func @r_6_8(
// LOWER: %[[ACC:.*]] = memref.alloca() : memref<6xi32>
// LOWER: arith.addi
// LOWER-NEXT: memref.store %{{.*}}, %[[ACC]]
// LOWER-LABEL: func.func @r_6_8n1(
// LOWER: %[[BACC:.*]] = memref.alloca() : memref<6xi8>
// LOWER: %[[OLD:.*]] = memref.load %[[BACC]]
// LOWER-NEXT: arith.trunci %[[OLD]] : i8 to i1
// LOWER: %[[MAX:.*]] = arith.maxui %{{.*}}, %{{.*}} : i1
// LOWER-NEXT: %[[WIDE:.*]] = arith.extui %[[MAX]] : i1 to i8
// LOWER-NEXT: memref.store %[[WIDE]], %[[BACC]]
func.func @column_reductions(%a: tensor<8x6xui32>, %b: tensor<8x6xi1>) {
  %s = uop.reduce add %a [0] : tensor<8x6xui32> -> tensor<1x6xui32>
  %m = uop.reduce max %b [0] : tensor<8x6xi1> -> tensor<1x6xi1>
  uop.sink %s, %m : tensor<1x6xui32>, tensor<1x6xi1>
  return
}
