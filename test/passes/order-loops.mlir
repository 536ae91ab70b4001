// RUN: pytc-opt %s --split-input-file -pytc-order-loops | FileCheck %s
// RUN: pytc-opt %s --split-input-file -pytc-order-loops='max_accumulators=4' | FileCheck %s --check-prefix=CAP

// A matmul reads b[k, j]: the last index moves with the innermost output range j, an earlier one with the reduce
// range k, so looping k innermost strides through b. The kernel is marked reduce-outer (pytc-lower-kernels then
// keeps one accumulator per j). With max_accumulators=4, fewer than j's 6 accumulators, the order stays.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: pytc.loop_order = "reduce-outer"
// CAP-LABEL: func.func @matmul(
// CAP-NOT: pytc.loop_order
// CAP: return
func.func @matmul(%out: memref<4x6xf32>, %a: memref<4x32xf32>, %b: memref<32x6xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 6 id 1
  %k = uop.range reduce 32 id 2
  %x = uop.index %a[%i, %k] : memref<4x32xf32>
  %y = uop.index %b[%k, %j] : memref<32x6xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<4x6xf32>
  %e = uop.end %w over(%i, %j) : memref<4x6xf32>
  return
}

// -----

// A row sum reads x[i, k]: the reduced axis is already the contiguous one, so the order stays.
// CHECK-LABEL: func.func @row_sum(
// CHECK-NOT: pytc.loop_order
// CHECK: return
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

// A convolution-like read x[k, j + k]: the last index moves with the innermost output range j (shifted by the
// reduce range), an earlier one with k: reduce-outer as well.
// CHECK-LABEL: func.func @shifted(
// CHECK-SAME: pytc.loop_order = "reduce-outer"
func.func @shifted(%out: memref<4x6xf32>, %x: memref<24x32xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 6 id 1
  %k = uop.range reduce 24 id 2
  %jk = arith.addi %j, %k : index
  %v = uop.index %x[%k, %jk] : memref<24x32xf32>
  %s = uop.range_reduce add %v over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<4x6xf32>
  %e = uop.end %w over(%i, %j) : memref<4x6xf32>
  return
}

// -----

// The same read over a window of 3 × 3 steps (a depthwise convolution's): a reduction of at most 16 steps stays innermost,
// where LLVM unrolls it and vectorizes the loop over j around it.
// CHECK-LABEL: func.func @window(
// CHECK-NOT: pytc.loop_order
// CHECK: return
func.func @window(%out: memref<4x6xf32>, %x: memref<3x3x8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 6 id 1
  %ky = uop.range reduce 3 id 2
  %kx = uop.range reduce 3 id 3
  %jk = arith.addi %j, %kx : index
  %v = uop.index %x[%ky, %kx, %jk] : memref<3x3x8xf32>
  %s = uop.range_reduce add %v over(%ky, %kx) : f32
  %w = uop.store %s, %out[%i, %j] : memref<4x6xf32>
  %e = uop.end %w over(%i, %j) : memref<4x6xf32>
  return
}

// -----

// Column reductions (a sum of ui32, a max of booleans) read x[k, j]: reduce-outer, whatever the element type.
// CHECK-LABEL: func.func @column_sum(
// CHECK-SAME: pytc.loop_order = "reduce-outer"
// CHECK-LABEL: func.func @column_any(
// CHECK-SAME: pytc.loop_order = "reduce-outer"
func.func @column_sum(%out: memref<1x6xui32>, %x: memref<32x6xui32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %j = uop.range loop 6 id 0
  %k = uop.range reduce 32 id 1
  %v = uop.index %x[%k, %j] : memref<32x6xui32>
  %s = uop.range_reduce add %v over(%k) : ui32
  %w = uop.store %s, %out[%c0, %j] : memref<1x6xui32>
  %e = uop.end %w over(%j) : memref<1x6xui32>
  return
}
func.func @column_any(%out: memref<1x6xi1>, %x: memref<32x6xi1>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %j = uop.range loop 6 id 0
  %k = uop.range reduce 32 id 1
  %v = uop.index %x[%k, %j] : memref<32x6xi1>
  %m = uop.range_reduce max %v over(%k) : i1
  %w = uop.store %m, %out[%c0, %j] : memref<1x6xi1>
  %e = uop.end %w over(%j) : memref<1x6xi1>
  return
}

// -----

// A reduction over a reduction (the sum over k of a row max over m, each read b[m, j]) nests: the order stays.
// CHECK-LABEL: func.func @nested(
// CHECK-NOT: pytc.loop_order
// CHECK: return
func.func @nested(%out: memref<4x6xf32>, %b: memref<5x6xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 6 id 1
  %k = uop.range reduce 3 id 2
  %m = uop.range reduce 5 id 3
  %v = uop.index %b[%m, %j] : memref<5x6xf32>
  %inner = uop.range_reduce max %v over(%m) : f32
  %s = uop.range_reduce add %inner over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<4x6xf32>
  %e = uop.end %w over(%i, %j) : memref<4x6xf32>
  return
}
