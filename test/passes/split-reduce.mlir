// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-split-reduce)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-split-reduce,pytc-split-reduce)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-split-reduce{lanes=8})' | FileCheck %s --check-prefix=LANES8

// A long sum along a last axis becomes 16 chunks x 16 lanes of partial sums (the lanes innermost, read as one vector),
// materialized, then summed; running the pass again changes nothing. For a target of 8 lanes (lanes=8): 32 chunks x 8.
// CHECK-LABEL: func.func @row
// CHECK: %[[P:.*]] = uop.reshape %{{.*}} : tensor<65536xf32> -> tensor<16x256x16xf32>
// CHECK: %[[Q:.*]] = uop.permute %[[P]] [1, 0, 2] : tensor<16x256x16xf32> -> tensor<256x16x16xf32>
// CHECK: %[[R:.*]] = uop.reduce add %[[Q]] [0] {pytc.split} : tensor<256x16x16xf32> -> tensor<1x16x16xf32>
// CHECK: %[[C:.*]] = uop.contiguous %[[R]] : tensor<1x16x16xf32>
// CHECK: %[[S:.*]] = uop.reduce add %[[C]] [1, 2] {pytc.split} : tensor<1x16x16xf32> -> tensor<1x1x1xf32>
// CHECK: %[[O:.*]] = uop.reshape %[[S]] : tensor<1x1x1xf32> -> tensor<1xf32>
// CHECK-NEXT: uop.sink %[[O]]
// CHECK-NOT: uop.reduce
// LANES8-LABEL: func.func @row
// LANES8: %[[P:.*]] = uop.reshape %{{.*}} : tensor<65536xf32> -> tensor<32x256x8xf32>
// LANES8: %[[Q:.*]] = uop.permute %[[P]] [1, 0, 2] : tensor<32x256x8xf32> -> tensor<256x32x8xf32>
// LANES8: %[[R:.*]] = uop.reduce add %[[Q]] [0] {pytc.split} : tensor<256x32x8xf32> -> tensor<1x32x8xf32>
// LANES8: uop.reduce add %{{.*}} [1, 2] {pytc.split} : tensor<1x32x8xf32> -> tensor<1x1x1xf32>
func.func @row(%a: tensor<65536xf32>) {
  %r = uop.reduce add %a [0] : tensor<65536xf32> -> tensor<1xf32>
  uop.sink %r : tensor<1xf32>
  return
}

// -----

// A long sum down the columns splits its rows into 256 chunks, put first: each partial still reads whole rows.
// CHECK-LABEL: func.func @columns
// CHECK: %[[P:.*]] = uop.reshape %{{.*}} : tensor<65536x8xf32> -> tensor<256x256x8xf32>
// CHECK-NOT: uop.permute
// CHECK: %[[R:.*]] = uop.reduce add %[[P]] [1] {pytc.split} : tensor<256x256x8xf32> -> tensor<256x1x8xf32>
// CHECK: %[[C:.*]] = uop.contiguous %[[R]] : tensor<256x1x8xf32>
// CHECK: %[[S:.*]] = uop.reduce add %[[C]] [0] {pytc.split} : tensor<256x1x8xf32> -> tensor<1x1x8xf32>
// CHECK: uop.reshape %[[S]] : tensor<1x1x8xf32> -> tensor<1x8xf32>
func.func @columns(%a: tensor<65536x8xf32>) {
  %r = uop.reduce add %a [0] : tensor<65536x8xf32> -> tensor<1x8xf32>
  uop.sink %r : tensor<1x8xf32>
  return
}

// -----

// A long sum down a column of width 1 (and over that axis of 1 too) reads its rows in order: split as a row, its axis of 1
// set aside, 16 chunks x 16 lanes.
// CHECK-LABEL: func.func @unit_columns
// CHECK: %[[P:.*]] = uop.reshape %{{.*}} : tensor<65536x1xf32> -> tensor<16x256x16xf32>
// CHECK: %[[Q:.*]] = uop.permute %[[P]] [1, 0, 2] : tensor<16x256x16xf32> -> tensor<256x16x16xf32>
// CHECK: %[[R:.*]] = uop.reduce add %[[Q]] [0] {pytc.split} : tensor<256x16x16xf32> -> tensor<1x16x16xf32>
// CHECK: %[[S:.*]] = uop.reduce add %{{.*}} [1, 2] {pytc.split} : tensor<1x16x16xf32> -> tensor<1x1x1xf32>
// CHECK: uop.reshape %[[S]] : tensor<1x1x1xf32> -> tensor<1x1xf32>
// CHECK: %[[W:.*]] = uop.reshape %{{.*}} : tensor<65536x1xf32> -> tensor<16x256x16xf32>
// CHECK: uop.reshape %{{.*}} : tensor<1x1x1xf32> -> tensor<1x1xf32>
func.func @unit_columns(%a: tensor<65536x1xf32>) {
  %r = uop.reduce add %a [0] : tensor<65536x1xf32> -> tensor<1x1xf32>
  %w = uop.reduce add %a [0, 1] : tensor<65536x1xf32> -> tensor<1x1xf32>
  uop.sink %r, %w : tensor<1x1xf32>, tensor<1x1xf32>
  return
}

// -----

// Short sums, sums with many outputs, an axis with no divisor from 8 to 256, and maxes stay whole.
// CHECK-LABEL: func.func @whole
// CHECK-NOT: pytc.split
// CHECK-COUNT-4: uop.reduce
// CHECK-NOT: pytc.split
func.func @whole(%a: tensor<64x512xf32>, %b: tensor<8192x4096xf32>, %c: tensor<65537xf32>, %d: tensor<65536xf32>) {
  %r = uop.reduce add %a [1] : tensor<64x512xf32> -> tensor<64x1xf32>
  %s = uop.reduce add %b [1] : tensor<8192x4096xf32> -> tensor<8192x1xf32>
  %t = uop.reduce add %c [0] : tensor<65537xf32> -> tensor<1xf32>
  %u = uop.reduce max %d [0] : tensor<65536xf32> -> tensor<1xf32>
  uop.sink %r, %s, %t, %u : tensor<64x1xf32>, tensor<8192x1xf32>, tensor<1xf32>, tensor<1xf32>
  return
}

// -----

// A one-hot sum over 65536 positions (t[idx]) stays whole: pytc-rangeify makes it one read per output.
// CHECK-LABEL: func.func @one_hot_sum
// CHECK: uop.reduce add %{{.*}} [1] : tensor<4x65536xf32> -> tensor<4x1xf32>
// CHECK-NOT: uop.reduce
func.func @one_hot_sum(%t: tensor<65536xf32>, %idx: tensor<4xi32>) {
  %0 = uop.reshape %idx : tensor<4xi32> -> tensor<4x1xi32>
  %1 = uop.expand %0 : tensor<4x1xi32> -> tensor<4x65536xi32>
  %2 = uop.iota 0 : tensor<65536xi32>
  %3 = uop.reshape %2 : tensor<65536xi32> -> tensor<1x65536xi32>
  %4 = uop.expand %3 : tensor<1x65536xi32> -> tensor<4x65536xi32>
  %5 = uop.cmpeq %1, %4 : tensor<4x65536xi32>
  %8 = uop.reshape %t : tensor<65536xf32> -> tensor<1x65536xf32>
  %9 = uop.expand %8 : tensor<1x65536xf32> -> tensor<4x65536xf32>
  %10 = uop.const 0.000000e+00 : tensor<4x65536xf32>
  %11 = uop.where %5, %9, %10 : tensor<4x65536xf32>
  %12 = uop.reduce add %11 [1] : tensor<4x65536xf32> -> tensor<4x1xf32>
  uop.sink %12 : tensor<4x1xf32>
  return
}

// -----

// A matmul's long reduction reads B down its columns, not in order: its K splits into 8 chunks, put first (each partial a
// matmul over a contiguous eighth of K, its columns still the innermost outputs), as a long sum down columns does.
// CHECK-LABEL: func.func @matmul
// CHECK: %[[P:.*]] = uop.reshape %{{.*}} : tensor<512x768x16384xf32> -> tensor<512x768x8x2048xf32>
// CHECK: %[[Q:.*]] = uop.permute %[[P]] [2, 0, 1, 3] : tensor<512x768x8x2048xf32> -> tensor<8x512x768x2048xf32>
// CHECK: %[[R:.*]] = uop.reduce add %[[Q]] [3] {pytc.split} : tensor<8x512x768x2048xf32> -> tensor<8x512x768x1xf32>
// CHECK: %[[C:.*]] = uop.contiguous %[[R]] : tensor<8x512x768x1xf32>
// CHECK: %[[S:.*]] = uop.reduce add %[[C]] [0] {pytc.split} : tensor<8x512x768x1xf32> -> tensor<1x512x768x1xf32>
// CHECK: uop.reshape %[[S]] : tensor<1x512x768x1xf32> -> tensor<512x768x1xf32>
func.func @matmul(%a: tensor<512x16384xf32>, %b: tensor<16384x768xf32>) {
  %0 = uop.reshape %a : tensor<512x16384xf32> -> tensor<512x1x16384xf32>
  %1 = uop.expand %0 : tensor<512x1x16384xf32> -> tensor<512x768x16384xf32>
  %2 = uop.reshape %b : tensor<16384x768xf32> -> tensor<1x16384x768xf32>
  %3 = uop.permute %2 [0, 2, 1] : tensor<1x16384x768xf32> -> tensor<1x768x16384xf32>
  %4 = uop.expand %3 : tensor<1x768x16384xf32> -> tensor<512x768x16384xf32>
  %5 = uop.mul %1, %4 : tensor<512x768x16384xf32>
  %6 = uop.reduce add %5 [2] : tensor<512x768x16384xf32> -> tensor<512x768x1xf32>
  uop.sink %6 : tensor<512x768x1xf32>
  return
}

// -----

// Row sums of many outputs read in order keep the row form: 8 partials (fewer than 16 lanes) side by side, innermost.
// CHECK-LABEL: func.func @many_rows
// CHECK: uop.reshape %{{.*}} : tensor<524288x16384xf32> -> tensor<524288x1x2048x8xf32>
// CHECK: uop.reduce add %{{.*}} [1] {pytc.split} : tensor<524288x2048x1x8xf32> -> tensor<524288x1x1x8xf32>
func.func @many_rows(%a: tensor<524288x16384xf32>) {
  %r = uop.reduce add %a [1] : tensor<524288x16384xf32> -> tensor<524288x1xf32>
  uop.sink %r : tensor<524288x1xf32>
  return
}
