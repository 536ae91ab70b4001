// RUN: pytc-opt %s --split-input-file -pytc-rangeify | FileCheck %s

// An elementwise graph becomes one materialization of the output over a range per dim.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4x8xf32>, %[[B:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK-NOT: uop.add {{.*}} : tensor<4x8xf32>
// CHECK-DAG: %[[I:.*]] = uop.range loop 4 id
// CHECK-DAG: %[[J:.*]] = uop.range loop 8 id
// CHECK-DAG: %[[X:.*]] = uop.index %[[A]][%[[I]], %[[J]]] : tensor<4x8xf32>
// CHECK-DAG: %[[Y:.*]] = uop.index %[[B]][%[[I]], %[[J]]] : tensor<4x8xf32>
// CHECK: %[[S:.*]] = uop.add %[[X]], %[[Y]] : f32
// CHECK: %[[O:.*]] = uop.bufferize %[[S]] over(%[[I]], %[[J]]) {reason = "output"} : f32 -> tensor<4x8xf32>
// CHECK-NEXT: uop.sink %[[O]] : tensor<4x8xf32>
func.func @elementwise(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  %s = uop.add %a, %b : tensor<4x8xf32>
  uop.sink %s : tensor<4x8xf32>
  return
}

// -----

// permute reorders the indices: output (i, j) reads source (j, i).
// CHECK-LABEL: func.func @permute
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK-NOT: uop.permute
// CHECK: %[[I:.*]] = uop.range loop 8 id
// CHECK: %[[J:.*]] = uop.range loop 4 id
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[J]], %[[I]]] : tensor<4x8xf32>
// CHECK: uop.bufferize %[[X]] over(%[[I]], %[[J]]) {reason = "output"} : f32 -> tensor<8x4xf32>
func.func @permute(%a: tensor<4x8xf32>) {
  %p = uop.permute %a [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  uop.sink %p : tensor<8x4xf32>
  return
}

// -----

// A permute that is not its own inverse: output (i, j, k) of order [1, 2, 0] reads
// source (k, i, j).
// CHECK-LABEL: func.func @permute_3d
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<2x3x4xf32>)
// CHECK: %[[I:.*]] = uop.range loop 3 id
// CHECK: %[[J:.*]] = uop.range loop 4 id
// CHECK: %[[K:.*]] = uop.range loop 2 id
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[K]], %[[I]], %[[J]]] : tensor<2x3x4xf32>
// CHECK: uop.bufferize %[[X]] over(%[[I]], %[[J]], %[[K]]) {reason = "output"} : f32 -> tensor<3x4x2xf32>
func.func @permute_3d(%a: tensor<2x3x4xf32>) {
  %p = uop.permute %a [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  uop.sink %p : tensor<3x4x2xf32>
  return
}

// -----

// reshape splits and merges a flat index: a 4x4 transpose seen as 16 elements reads
// (i mod 4) * 4 + i / 4.
// CHECK-LABEL: func.func @reshape_split_merge
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<16xf32>)
// CHECK-NOT: uop.reshape
// CHECK: %[[I:.*]] = uop.range loop 16 id
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[Q:.*]] = arith.divui %[[I]], %[[C4]] : index
// CHECK: %[[R:.*]] = arith.remui %[[I]], %[[C4]] : index
// CHECK: %[[RS:.*]] = arith.muli %[[R]], %[[C4]] : index
// CHECK: %[[F:.*]] = arith.addi %[[Q]], %[[RS]] : index
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[F]]] : tensor<16xf32>
// CHECK: uop.bufferize %[[X]] over(%[[I]]) {reason = "output"} : f32 -> tensor<16xf32>
func.func @reshape_split_merge(%a: tensor<16xf32>) {
  %r = uop.reshape %a : tensor<16xf32> -> tensor<4x4xf32>
  %p = uop.permute %r [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %q = uop.reshape %p : tensor<4x4xf32> -> tensor<16xf32>
  uop.sink %q : tensor<16xf32>
  return
}

// -----

// A reshape and its inverse fold away: the range bounds prove the div/mod trivial.
// CHECK-LABEL: func.func @reshape_roundtrip
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4x4xf32>)
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[J:.*]] = uop.range loop 4 id
// CHECK-NOT: arith.divui
// CHECK-NOT: arith.remui
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[I]], %[[J]]] : tensor<4x4xf32>
// CHECK-NOT: arith.divui
// CHECK-NOT: arith.remui
// CHECK: uop.bufferize %{{.*}} over(%[[I]], %[[J]]) {reason = "output"} : f32 -> tensor<4x4xf32>
func.func @reshape_roundtrip(%a: tensor<4x4xf32>) {
  %r = uop.reshape %a : tensor<4x4xf32> -> tensor<16xf32>
  %n = uop.neg %r : tensor<16xf32>
  %q = uop.reshape %n : tensor<16xf32> -> tensor<4x4xf32>
  uop.sink %q : tensor<4x4xf32>
  return
}

// -----

// 4x6 -> 6x4 -> 4x6: the split index (4i + j) / 6, (4i + j) mod 6 merges back to 6 * ((4i + j) / 6) + (4i + j) mod 6,
// which recombines to 4i + j, and splitting that by 4 gives the ranges again.
// CHECK-LABEL: func.func @reshape_unaligned_roundtrip
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4x6xf32>)
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[J:.*]] = uop.range loop 6 id
// CHECK-NOT: arith.
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[I]], %[[J]]] : tensor<4x6xf32>
// CHECK-NOT: arith.
// CHECK: uop.bufferize %{{.*}} over(%[[I]], %[[J]]) {reason = "output"} : f32 -> tensor<4x6xf32>
func.func @reshape_unaligned_roundtrip(%a: tensor<4x6xf32>) {
  %r = uop.reshape %a : tensor<4x6xf32> -> tensor<6x4xf32>
  %n = uop.neg %r : tensor<6x4xf32>
  %q = uop.reshape %n : tensor<6x4xf32> -> tensor<4x6xf32>
  uop.sink %q : tensor<4x6xf32>
  return
}

// -----

// 2x3x4 -> 4x3x2 -> 2x3x4 -> 4x3x2 reads like the single last reshape: the middle index merges back to
// 12 * (f / 12) + 4 * ((f / 4) mod 3) + f mod 4 with f = 6i + 2j + k, and f / 12 = (f / 4) / 3 lets that recombine to f.
// The read emits each division of f through its factored form (f = 6i + (2j + k) with 2j + k < 6, f = 2(3i + j) + k):
// f / 12 = i / 2, (f / 4) mod 3 = ((3i + j) / 2) mod 3, f mod 4 = 2((i + j) mod 2) + k.
// CHECK-LABEL: func.func @reshape_3d_roundtrip
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<2x3x4xf32>)
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[J:.*]] = uop.range loop 3 id
// CHECK: %[[K:.*]] = uop.range loop 2 id
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[HI:.*]] = arith.divui %[[I]], %[[C2]] : index
// CHECK: %[[IJ:.*]] = arith.addi %[[I]], %[[J]] : index
// CHECK: %[[H:.*]] = arith.divui %[[IJ]], %[[C2]] : index
// CHECK: %[[Q:.*]] = arith.addi %[[H]], %[[I]] : index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[MID:.*]] = arith.remui %[[Q]], %[[C3]] : index
// CHECK: %[[P:.*]] = arith.remui %[[IJ]], %[[C2]] : index
// CHECK: %[[P2:.*]] = arith.muli %[[P]], %[[C2]] : index
// CHECK: %[[LO:.*]] = arith.addi %[[P2]], %[[K]] : index
// CHECK-NEXT: %[[X:.*]] = uop.index %[[A]][%[[HI]], %[[MID]], %[[LO]]] : tensor<2x3x4xf32>
// CHECK-NOT: arith.
// CHECK: uop.bufferize %{{.*}} over(%[[I]], %[[J]], %[[K]]) {reason = "output"} : f32 -> tensor<4x3x2xf32>
func.func @reshape_3d_roundtrip(%a: tensor<2x3x4xf32>) {
  %r = uop.reshape %a : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  %n = uop.neg %r : tensor<4x3x2xf32>
  %q = uop.reshape %n : tensor<4x3x2xf32> -> tensor<2x3x4xf32>
  %m = uop.neg %q : tensor<2x3x4xf32>
  %s = uop.reshape %m : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  uop.sink %s : tensor<4x3x2xf32>
  return
}

// -----

// Merging 2x3x4 into 6x4 keeps the last dim as is and splits the first by 3.
// CHECK-LABEL: func.func @reshape_merge
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<2x3x4xf32>)
// CHECK: %[[I:.*]] = uop.range loop 6 id
// CHECK: %[[J:.*]] = uop.range loop 4 id
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[HI:.*]] = arith.divui %[[I]], %[[C3]] : index
// CHECK: %[[MID:.*]] = arith.remui %[[I]], %[[C3]] : index
// CHECK: uop.index %[[A]][%[[HI]], %[[MID]], %[[J]]] : tensor<2x3x4xf32>
func.func @reshape_merge(%a: tensor<2x3x4xf32>) {
  %r = uop.reshape %a : tensor<2x3x4xf32> -> tensor<6x4xf32>
  uop.sink %r : tensor<6x4xf32>
  return
}

// -----

// expand reads index 0 of the broadcast dim; its range is not used in the read.
// CHECK-LABEL: func.func @expand
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4x1xf32>)
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[J:.*]] = uop.range loop 8 id
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[I]], %[[C0]]] : tensor<4x1xf32>
// CHECK: uop.bufferize %[[X]] over(%[[I]], %[[J]]) {reason = "output"} : f32 -> tensor<4x8xf32>
func.func @expand(%a: tensor<4x1xf32>) {
  %e = uop.expand %a : tensor<4x1xf32> -> tensor<4x8xf32>
  uop.sink %e : tensor<4x8xf32>
  return
}

// -----

// shrink adds its start to each index.
// CHECK-LABEL: func.func @shrink
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<8x8xf32>)
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[J:.*]] = uop.range loop 6 id
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[I1:.*]] = arith.addi %[[I]], %[[C1]] : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[J2:.*]] = arith.addi %[[J]], %[[C2]] : index
// CHECK: uop.index %[[A]][%[[I1]], %[[J2]]] : tensor<8x8xf32>
func.func @shrink(%a: tensor<8x8xf32>) {
  %s = uop.shrink %a [1, 2] to [5, 8] : tensor<8x8xf32> -> tensor<4x6xf32>
  uop.sink %s : tensor<4x6xf32>
  return
}

// -----

// flip reads n-1-i along the flipped dim only.
// CHECK-LABEL: func.func @flip
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[J:.*]] = uop.range loop 8 id
// CHECK: %[[M1:.*]] = arith.constant -1 : index
// CHECK: %[[NJ:.*]] = arith.muli %[[J]], %[[M1]] : index
// CHECK: %[[C7:.*]] = arith.constant 7 : index
// CHECK: %[[F:.*]] = arith.addi %[[NJ]], %[[C7]] : index
// CHECK: uop.index %[[A]][%[[I]], %[[F]]] : tensor<4x8xf32>
func.func @flip(%a: tensor<4x8xf32>) {
  %f = uop.flip %a [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  uop.sink %f : tensor<4x8xf32>
  return
}

// -----

// pad: the read is gated by 0 <= i-1 <= 3 and the value is 0 outside.
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4xf32>)
// CHECK: %[[I:.*]] = uop.range loop 7 id
// CHECK: %[[CM1:.*]] = arith.constant -1 : index
// CHECK: %[[X:.*]] = arith.addi %[[I]], %[[CM1]] : index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[LO:.*]] = arith.cmpi sge, %[[X]], %[[C0]] : index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[HI:.*]] = arith.cmpi sle, %[[X]], %[[C3]] : index
// CHECK: %[[G:.*]] = arith.andi %[[LO]], %[[HI]] : i1
// CHECK: %[[V:.*]] = uop.index %[[A]][%[[X]]] if %[[G]] : tensor<4xf32>
// CHECK: %[[W:.*]] = arith.andi
// CHECK: %[[Z:.*]] = uop.const 0.000000e+00 : f32
// CHECK: %[[S:.*]] = uop.where %[[W]], %[[V]], %[[Z]] : f32
// CHECK: uop.bufferize %[[S]] over(%[[I]]) {reason = "output"} : f32 -> tensor<7xf32>
func.func @pad(%a: tensor<4xf32>) {
  %p = uop.pad %a low [1] high [2] : tensor<4xf32> -> tensor<7xf32>
  uop.sink %p : tensor<7xf32>
  return
}

// -----

// Padding only before: the upper bound check always holds and is dropped.
// CHECK-LABEL: func.func @pad_low_only
// CHECK: %[[I:.*]] = uop.range loop 6 id
// CHECK: %[[X:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK: %[[G:.*]] = arith.cmpi sge, %[[X]], %{{.*}} : index
// CHECK-NOT: arith.cmpi sle
// CHECK: uop.index %{{.*}}[%[[X]]] if %[[G]] : tensor<4xf32>
// CHECK-NOT: arith.cmpi sle
// CHECK: uop.where
func.func @pad_low_only(%a: tensor<4xf32>) {
  %p = uop.pad %a low [2] high [0] : tensor<4xf32> -> tensor<6xf32>
  uop.sink %p : tensor<6xf32>
  return
}

// -----

// Pad then shrink back inside the original elements: the condition always holds, so the
// read is not gated and no select remains.
// CHECK-LABEL: func.func @pad_shrink_inside
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4xf32>)
// CHECK: %[[I:.*]] = uop.range loop 2 id
// CHECK: %[[X:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK: %[[V:.*]] = uop.index %[[A]][%[[X]]] : tensor<4xf32>
// CHECK-NEXT: uop.bufferize %[[V]] over(%[[I]]) {reason = "output"}
// CHECK-NOT: arith.cmpi
// CHECK-NOT: uop.where
func.func @pad_shrink_inside(%a: tensor<4xf32>) {
  %p = uop.pad %a low [2] high [2] : tensor<4xf32> -> tensor<8xf32>
  %s = uop.shrink %p [3] to [5] : tensor<8xf32> -> tensor<2xf32>
  uop.sink %s : tensor<2xf32>
  return
}

// -----

// Pad then shrink to the padding only: every element is 0 and the input is never read.
// CHECK-LABEL: func.func @pad_shrink_outside
// CHECK: %[[I:.*]] = uop.range loop 2 id
// CHECK-NOT: uop.index
// CHECK: %[[Z:.*]] = uop.const 0.000000e+00 : f32
// CHECK-NEXT: uop.bufferize %[[Z]] over(%[[I]]) {reason = "output"}
func.func @pad_shrink_outside(%a: tensor<4xf32>) {
  %p = uop.pad %a low [2] high [2] : tensor<4xf32> -> tensor<8xf32>
  %s = uop.shrink %p [6] to [8] : tensor<8xf32> -> tensor<2xf32>
  uop.sink %s : tensor<2xf32>
  return
}

// -----

// contiguous forces a materialization; its reader reads the buffer.
// CHECK-LABEL: func.func @contiguous
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4xf32>)
// CHECK-NOT: uop.contiguous
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[I]]]
// CHECK: %[[E:.*]] = uop.exp2 %[[X]] : f32
// CHECK: %[[C:.*]] = uop.bufferize %[[E]] over(%[[I]]) {reason = "contiguous"} : f32 -> tensor<4xf32>
// CHECK: %[[J:.*]] = uop.range loop 4 id
// CHECK: %[[Y:.*]] = uop.index %[[C]][%[[J]]] : tensor<4xf32>
// CHECK: %[[N:.*]] = uop.neg %[[Y]] : f32
// CHECK: uop.bufferize %[[N]] over(%[[J]]) {reason = "output"}
func.func @contiguous(%a: tensor<4xf32>) {
  %e = uop.exp2 %a : tensor<4xf32>
  %c = uop.contiguous %e : tensor<4xf32>
  %n = uop.neg %c : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}

// -----

// A copy to another device stays a uop.copy, of its source materialized on the graph's
// device (reason "copy"); readers on the target device read it like a buffer, and their
// materialization carries the device it lives on.
// CHECK-LABEL: func.func @copy
// CHECK: %[[E:.*]] = uop.exp2
// CHECK: %[[S:.*]] = uop.bufferize %[[E]] over(%{{.*}}) {reason = "copy"} : f32 -> tensor<4xf32>
// CHECK: %[[C:.*]] = uop.copy %[[S]] to "CPU:1" : tensor<4xf32>
// CHECK: uop.index %[[C]][
// CHECK: uop.bufferize %{{.*}} {reason = "output", uop.device = "CPU:1"}
func.func @copy(%a: tensor<4xf32>) {
  %e = uop.exp2 %a : tensor<4xf32>
  %c = uop.copy %e to "CPU:1" : tensor<4xf32>
  %n = uop.neg %c : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}

// -----

// An argument is copied as it is; a copy that is an output is one directly.
// CHECK-LABEL: func.func @copy_argument
// CHECK-NEXT: %[[C:.*]] = uop.copy %arg0 to "CPU" : tensor<4xf32>
// CHECK-NEXT: uop.sink %[[C]] : tensor<4xf32>
func.func @copy_argument(%a: tensor<4xf32> {uop.device = "AMD"}) attributes {uop.device = "CPU"} {
  %c = uop.copy %a to "CPU" : tensor<4xf32>
  uop.sink %c : tensor<4xf32>
  return
}

// -----

// A copy to the device the value is on already is an ordinary materialization; so is the
// copy of a value computed from constants alone (computed where it is read).
// CHECK-LABEL: func.func @copy_within
// CHECK-NOT: uop.copy
// CHECK: uop.bufferize %{{.*}} {reason = "copy"}
// CHECK-NOT: uop.copy
// CHECK: uop.bufferize %{{.*}} {reason = "output"}
func.func @copy_within(%a: tensor<4xf32>) attributes {uop.device = "CPU"} {
  %c = uop.copy %a to "CPU" : tensor<4xf32>
  %k = uop.const 2.0 : tensor<4xf32>
  %d = uop.copy %k to "AMD" : tensor<4xf32>
  %e = uop.copy %d to "CPU" : tensor<4xf32>
  %n = uop.add %c, %e : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}

// -----

// A reduce read through an expand is materialized ("reduce-expand") over a loop range
// and the constant 0 for its size-1 dim; the consumer reads it at index 0.
// CHECK-LABEL: func.func @reduce_expand
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[K:.*]] = uop.range reduce 8 id
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[I]], %[[K]]] : tensor<4x8xf32>
// CHECK: %[[M:.*]] = uop.range_reduce max %[[X]] over(%[[K]]) : f32
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[B:.*]] = uop.bufferize %[[M]] over(%[[I]], %[[C0]]) {reason = "reduce-expand"} : f32 -> tensor<4x1xf32>
// CHECK: %[[I2:.*]] = uop.range loop 4 id
// CHECK: %[[J2:.*]] = uop.range loop 8 id
// CHECK-DAG: %[[Y:.*]] = uop.index %[[A]][%[[I2]], %[[J2]]] : tensor<4x8xf32>
// CHECK-DAG: %[[R:.*]] = uop.index %[[B]][%[[I2]], %[[C0]]] : tensor<4x1xf32>
// CHECK: %[[N:.*]] = uop.neg %[[R]] : f32
// CHECK: %[[S:.*]] = uop.add %[[Y]], %[[N]] : f32
// CHECK: uop.bufferize %[[S]] over(%[[I2]], %[[J2]]) {reason = "output"} : f32 -> tensor<4x8xf32>
func.func @reduce_expand(%a: tensor<4x8xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %e = uop.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %n = uop.neg %e : tensor<4x8xf32>
  %s = uop.add %a, %n : tensor<4x8xf32>
  uop.sink %s : tensor<4x8xf32>
  return
}

// -----

// The expand is found past elementwise ops between it and the reduce, and the reduction is materialized
// after them (its epilogue), so the negation runs once per row.
// CHECK-LABEL: func.func @reduce_neg_expand
// CHECK: %[[R:.*]] = uop.range_reduce add
// CHECK-NEXT: %[[N:.*]] = uop.neg %[[R]] : f32
// CHECK: uop.bufferize %[[N]] over({{.*}}) {reason = "reduce-expand"} : f32 -> tensor<4x1xf32>
// CHECK-NOT: uop.neg
// CHECK: uop.bufferize {{.*}} {reason = "output"} : f32 -> tensor<4x8xf32>
func.func @reduce_neg_expand(%a: tensor<4x8xf32>) {
  %m = uop.reduce add %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %n = uop.neg %m : tensor<4x1xf32>
  %e = uop.expand %n : tensor<4x1xf32> -> tensor<4x8xf32>
  uop.sink %e : tensor<4x8xf32>
  return
}

// -----

// A reduce not read through an expand is computed where it is read: a range_reduce inside
// the output's materialization, with no buffer of its own.
// CHECK-LABEL: func.func @reduce_inline
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[K:.*]] = uop.range reduce 8 id
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[I]], %[[K]]] : tensor<4x8xf32>
// CHECK: %[[R:.*]] = uop.range_reduce add %[[X]] over(%[[K]]) : f32
// CHECK: %[[N:.*]] = uop.neg %[[R]] : f32
// CHECK: uop.bufferize %[[N]] over(%[[I]]) {reason = "output"} : f32 -> tensor<4xf32>
// CHECK-NOT: uop.bufferize
func.func @reduce_inline(%a: tensor<4x8xf32>) {
  %r = uop.reduce add %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %s = uop.reshape %r : tensor<4x1xf32> -> tensor<4xf32>
  %n = uop.neg %s : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}

// -----

// Reducing every dim: reduce ranges only, stored at the constant 0 for both size-1 dims.
// CHECK-LABEL: func.func @reduce_all
// CHECK-NOT: uop.range loop
// CHECK: %[[K0:.*]] = uop.range reduce 4 id
// CHECK: %[[K1:.*]] = uop.range reduce 8 id
// CHECK: %[[X:.*]] = uop.index %{{.*}}[%[[K0]], %[[K1]]]
// CHECK: %[[R:.*]] = uop.range_reduce add %[[X]] over(%[[K0]], %[[K1]]) : f32
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: uop.bufferize %[[R]] over(%[[C0]], %[[C0]]) {reason = "output"} : f32 -> tensor<1x1xf32>
func.func @reduce_all(%a: tensor<4x8xf32>) {
  %r = uop.reduce add %a [0, 1] : tensor<4x8xf32> -> tensor<1x1xf32>
  uop.sink %r : tensor<1x1xf32>
  return
}

// -----

// A value used twice is materialized as a "multi-use" candidate and read by its users.
// CHECK-LABEL: func.func @multi_use
// CHECK: %[[E:.*]] = uop.exp2 %{{.*}} : f32
// CHECK: %[[B:.*]] = uop.bufferize %[[E]] over(%{{.*}}) {reason = "multi-use"} : f32 -> tensor<4xf32>
// CHECK: %[[J:.*]] = uop.range loop 4 id
// CHECK: %[[X:.*]] = uop.index %[[B]][%[[J]]] : tensor<4xf32>
// CHECK: %[[M:.*]] = uop.mul %[[X]], %[[X]] : f32
// CHECK: uop.bufferize %[[M]] over(%[[J]]) {reason = "output"}
func.func @multi_use(%a: tensor<4xf32>) {
  %e = uop.exp2 %a : tensor<4xf32>
  %m = uop.mul %e, %e : tensor<4xf32>
  uop.sink %m : tensor<4xf32>
  return
}

// -----

// Constants used many times are not materialized.
// CHECK-LABEL: func.func @const_multi_use
// CHECK: %[[C:.*]] = uop.const 2.000000e+00 : f32
// CHECK-NOT: multi-use
// CHECK: uop.bufferize %{{.*}} {reason = "output"}
// CHECK-NOT: uop.bufferize
func.func @const_multi_use(%a: tensor<4xf32>) {
  %c = uop.const 2.0 : tensor<4xf32>
  %x = uop.mul %a, %c : tensor<4xf32>
  %y = uop.add %x, %c : tensor<4xf32>
  uop.sink %y : tensor<4xf32>
  return
}

// -----

// An output read by another op stays an "output"; the reader reads its buffer.
// CHECK-LABEL: func.func @output_read
// CHECK: %[[N:.*]] = uop.bufferize %{{.*}} {reason = "output"} : f32 -> tensor<4xf32>
// CHECK: %[[J:.*]] = uop.range loop 4 id
// CHECK: %[[X:.*]] = uop.index %[[N]][%[[J]]] : tensor<4xf32>
// CHECK: %[[E:.*]] = uop.exp2 %[[X]] : f32
// CHECK: %[[M:.*]] = uop.bufferize %[[E]] over(%[[J]]) {reason = "output"}
// CHECK: uop.sink %[[N]], %[[M]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NOT: multi-use
func.func @output_read(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  %m = uop.exp2 %n : tensor<4xf32>
  uop.sink %n, %m : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// One value sunk twice is materialized once.
// CHECK-LABEL: func.func @same_output_twice
// CHECK: %[[B:.*]] = uop.bufferize %{{.*}} {reason = "output"}
// CHECK-NOT: uop.bufferize
// CHECK: uop.sink %[[B]], %[[B]] : tensor<4xf32>, tensor<4xf32>
func.func @same_output_twice(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  uop.sink %n, %n : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// An argument sunk as is gets copied into the output.
// CHECK-LABEL: func.func @argument_output
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4xf32>)
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[I]]] : tensor<4xf32>
// CHECK: %[[B:.*]] = uop.bufferize %[[X]] over(%[[I]]) {reason = "output"}
// CHECK: uop.sink %[[B]] : tensor<4xf32>
func.func @argument_output(%a: tensor<4xf32>) {
  uop.sink %a : tensor<4xf32>
  return
}

// -----

// iota is the index along its axis, cast to the element type.
// CHECK-LABEL: func.func @iota
// CHECK: %[[I:.*]] = uop.range loop 2 id
// CHECK: %[[J:.*]] = uop.range loop 3 id
// CHECK: %[[V:.*]] = arith.index_cast %[[J]] : index to i32
// CHECK: uop.bufferize %[[V]] over(%[[I]], %[[J]]) {reason = "output"} : i32 -> tensor<2x3xi32>
func.func @iota() {
  %i = uop.iota 1 : tensor<2x3xi32>
  uop.sink %i : tensor<2x3xi32>
  return
}

// -----

// A float iota goes through i64 and a uop.cast.
// CHECK-LABEL: func.func @iota_float
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[W:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[F:.*]] = uop.cast %[[W]] : i64 to f32
// CHECK: %[[X:.*]] = uop.index
// CHECK: uop.add %[[F]], %[[X]] : f32
func.func @iota_float(%x: tensor<4xf32>) {
  %i = uop.iota 0 : tensor<4xf32>
  %a = uop.add %i, %x : tensor<4xf32>
  uop.sink %a : tensor<4xf32>
  return
}

// -----

// A size-1 dim gets the constant 0, not a range.
// CHECK-LABEL: func.func @size_one_dim
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<1x4xf32>)
// CHECK-NOT: uop.range loop 1 id
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[C0]], %[[I]]] : tensor<1x4xf32>
// CHECK: uop.bufferize %{{.*}} over(%[[C0]], %[[I]]) {reason = "output"} : f32 -> tensor<1x4xf32>
// CHECK-NOT: uop.range loop 1 id
func.func @size_one_dim(%a: tensor<1x4xf32>) {
  %n = uop.neg %a : tensor<1x4xf32>
  uop.sink %n : tensor<1x4xf32>
  return
}

// -----

// An empty dim gets an empty range (size 0), not the constant 0 of a size-1 dim.
// CHECK-LABEL: func.func @empty_dim
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<0x4xf32>)
// CHECK: %[[I:.*]] = uop.range loop 0 id
// CHECK: %[[J:.*]] = uop.range loop 4 id
// CHECK: uop.index %[[A]][%[[I]], %[[J]]] : tensor<0x4xf32>
// CHECK: uop.bufferize %{{.*}} over(%[[I]], %[[J]]) {reason = "output"} : f32 -> tensor<0x4xf32>
func.func @empty_dim(%a: tensor<0x4xf32>) {
  %n = uop.neg %a : tensor<0x4xf32>
  uop.sink %n : tensor<0x4xf32>
  return
}

// -----

// A whole-tensor reduction read back everywhere is read from its 1x1 buffer, not recomputed by the
// reader (its computation and a read of it have the same indices).
// CHECK-LABEL: func.func @sub_global_max
// CHECK: %[[M:.*]] = uop.range_reduce max
// CHECK: %[[B:.*]] = uop.bufferize %[[M]] over(%{{.*}}, %{{.*}}) {reason = "reduce-expand"} : f32 -> tensor<1x1xf32>
// CHECK: %[[R:.*]] = uop.index %[[B]][%{{.*}}, %{{.*}}] : tensor<1x1xf32>
// CHECK: uop.neg %[[R]]
func.func @sub_global_max(%a: tensor<8x16xf32>) {
  %m = uop.reduce max %a [0, 1] : tensor<8x16xf32> -> tensor<1x1xf32>
  %e = uop.expand %m : tensor<1x1xf32> -> tensor<8x16xf32>
  %n = uop.neg %e : tensor<8x16xf32>
  %s = uop.add %a, %n : tensor<8x16xf32>
  uop.sink %s : tensor<8x16xf32>
  return
}

// -----

// A one-hot sum (t[idx] as tinygrad writes it: where(idx == iota, t, 0) summed over the iota's axis) is one read of t
// at idx, clamped into the table, selected where 0 <= idx < 50; no reduction is left.
// CHECK-LABEL: func.func @one_hot_sum
// CHECK-NOT: uop.range reduce
// CHECK-NOT: uop.range_reduce
// CHECK: %[[P:.*]] = uop.index %arg1[%{{.*}}] : tensor<4xi32>
// CHECK-DAG: %[[LOW:.*]] = uop.cmplt %{{.*}}, %[[P]] : i32
// CHECK-DAG: %[[HIGH:.*]] = uop.cmplt %[[P]], %{{.*}} : i32
// CHECK: %[[IN:.*]] = uop.and %[[LOW]], %[[HIGH]] : i1
// CHECK: %[[CLAMPED:.*]] = uop.where %[[IN]], %[[P]], %{{.*}} : i32
// CHECK: %[[AT:.*]] = arith.index_cast %[[CLAMPED]] : i32 to index
// CHECK: %[[ROW:.*]] = uop.index %arg0[%[[AT]], %{{.*}}] : tensor<50x8xf32>
// CHECK: uop.where %[[IN]], %[[ROW]], %{{.*}} : f32
func.func @one_hot_sum(%t: tensor<50x8xf32>, %idx: tensor<4xi32>) {
  %0 = uop.reshape %idx : tensor<4xi32> -> tensor<4x1xi32>
  %1 = uop.expand %0 : tensor<4x1xi32> -> tensor<4x50xi32>
  %2 = uop.iota 0 : tensor<50xi32>
  %3 = uop.reshape %2 : tensor<50xi32> -> tensor<1x50xi32>
  %4 = uop.expand %3 : tensor<1x50xi32> -> tensor<4x50xi32>
  %5 = uop.cmpeq %1, %4 : tensor<4x50xi32>
  %6 = uop.reshape %5 : tensor<4x50xi1> -> tensor<4x50x1xi1>
  %7 = uop.expand %6 : tensor<4x50x1xi1> -> tensor<4x50x8xi1>
  %8 = uop.reshape %t : tensor<50x8xf32> -> tensor<1x50x8xf32>
  %9 = uop.expand %8 : tensor<1x50x8xf32> -> tensor<4x50x8xf32>
  %10 = uop.const 0.000000e+00 : tensor<4x50x8xf32>
  %11 = uop.where %7, %9, %10 : tensor<4x50x8xf32>
  %12 = uop.reduce add %11 [1] : tensor<4x50x8xf32> -> tensor<4x1x8xf32>
  uop.sink %12 : tensor<4x1x8xf32>
  return
}

// -----

// The one-hot mask of an embedding read by its forward (a sum over the table's rows) and its backward (a sum over the
// tokens) is computed in each reader rather than materialized as a multi-use value: the forward stays one read at idx.
// CHECK-LABEL: func.func @one_hot_mask_shared
// CHECK-NOT: xi1>
// CHECK: %[[AT:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: uop.index %arg0[%[[AT]], %{{.*}}] : tensor<50x8xf32>
// CHECK: uop.bufferize {{.*}} -> tensor<4x1x8xf32>
// CHECK: %[[TOKEN:.*]] = uop.range reduce 4
// CHECK: uop.cmpeq
// CHECK: uop.range_reduce add %{{.*}} over(%[[TOKEN]])
// CHECK: uop.bufferize {{.*}} -> tensor<1x50x8xf32>
func.func @one_hot_mask_shared(%t: tensor<50x8xf32>, %idx: tensor<4xi32>, %g: tensor<4x1x8xf32>) {
  %0 = uop.reshape %idx : tensor<4xi32> -> tensor<4x1xi32>
  %1 = uop.expand %0 : tensor<4x1xi32> -> tensor<4x50xi32>
  %2 = uop.iota 0 : tensor<50xi32>
  %3 = uop.reshape %2 : tensor<50xi32> -> tensor<1x50xi32>
  %4 = uop.expand %3 : tensor<1x50xi32> -> tensor<4x50xi32>
  %5 = uop.cmpeq %1, %4 : tensor<4x50xi32>
  %6 = uop.reshape %5 : tensor<4x50xi1> -> tensor<4x50x1xi1>
  %7 = uop.expand %6 : tensor<4x50x1xi1> -> tensor<4x50x8xi1>
  %8 = uop.reshape %t : tensor<50x8xf32> -> tensor<1x50x8xf32>
  %9 = uop.expand %8 : tensor<1x50x8xf32> -> tensor<4x50x8xf32>
  %10 = uop.const 0.000000e+00 : tensor<4x50x8xf32>
  %11 = uop.where %7, %9, %10 : tensor<4x50x8xf32>
  %12 = uop.reduce add %11 [1] : tensor<4x50x8xf32> -> tensor<4x1x8xf32>
  %13 = uop.expand %g : tensor<4x1x8xf32> -> tensor<4x50x8xf32>
  %14 = uop.where %7, %13, %10 : tensor<4x50x8xf32>
  %15 = uop.reduce add %14 [0] : tensor<4x50x8xf32> -> tensor<1x50x8xf32>
  uop.sink %12, %15 : tensor<4x1x8xf32>, tensor<1x50x8xf32>
  return
}

// -----

// A reshape that adds a size-1 dim, padded along it (how cat and stack place each tensor): the source is read at the
// loops' own indices. The padded dim's index is 0 wherever the read is valid, so it takes no part in the flat index
// (else the reshape would divide and take remainders by the source's dims at every element); inside the source, the
// read needs no guard, and the pad's where selects 0 outside.
// CHECK-LABEL: func.func @unit_dim_padded
// CHECK-DAG: %[[R0:.*]] = uop.range loop 6
// CHECK-DAG: %[[R1:.*]] = uop.range loop 5
// CHECK-NOT: arith.divui
// CHECK-NOT: arith.remui
// CHECK: %[[READ:.*]] = uop.index %arg0[%[[R0]], %[[R1]]] : tensor<6x5xf32>
// CHECK: uop.where %{{.*}}, %[[READ]], %{{.*}} : f32
func.func @unit_dim_padded(%a: tensor<6x5xf32>) {
  %0 = uop.reshape %a : tensor<6x5xf32> -> tensor<6x5x1xf32>
  %1 = uop.pad %0 low [0, 0, 2] high [0, 0, 1] : tensor<6x5x1xf32> -> tensor<6x5x4xf32>
  uop.sink %1 : tensor<6x5x4xf32>
  return
}

// -----

// Dims merged by a reshape and padded after it: each padded index enters the flat index modulo its dim (equal to it
// wherever the read is valid), so the flat index stays inside the batch's 16 elements and no division by them is left;
// the read, inside its buffer, has no guard.
// CHECK-LABEL: func.func @merged_dims_padded
// CHECK-NOT: arith.divui
// CHECK: %[[Y:.*]] = arith.remui %{{.*}}, %c4 : index
// CHECK: %[[X:.*]] = arith.remui %{{.*}}, %c4 : index
// CHECK: %[[READ:.*]] = uop.index %arg0[%{{.*}}] : tensor<32xf32>
// CHECK: uop.where %{{.*}}, %[[READ]], %{{.*}} : f32
func.func @merged_dims_padded(%a: tensor<32xf32>) {
  %0 = uop.reshape %a : tensor<32xf32> -> tensor<2x4x4xf32>
  %1 = uop.pad %0 low [0, 0, 0] high [0, 1, 1] : tensor<2x4x4xf32> -> tensor<2x5x5xf32>
  uop.sink %1 : tensor<2x5x5xf32>
  return
}

// -----

// The same sum with the iota in i8 over 300 positions: the iota wraps around in i8, so the sum stays a loop.
// CHECK-LABEL: func.func @one_hot_sum_wrapping
// CHECK: uop.range_reduce add
func.func @one_hot_sum_wrapping(%t: tensor<300xf32>, %idx: tensor<4xi8>) {
  %0 = uop.reshape %idx : tensor<4xi8> -> tensor<4x1xi8>
  %1 = uop.expand %0 : tensor<4x1xi8> -> tensor<4x300xi8>
  %2 = uop.iota 0 : tensor<300xi8>
  %3 = uop.reshape %2 : tensor<300xi8> -> tensor<1x300xi8>
  %4 = uop.expand %3 : tensor<1x300xi8> -> tensor<4x300xi8>
  %5 = uop.cmpeq %1, %4 : tensor<4x300xi8>
  %8 = uop.reshape %t : tensor<300xf32> -> tensor<1x300xf32>
  %9 = uop.expand %8 : tensor<1x300xf32> -> tensor<4x300xf32>
  %10 = uop.const 0.000000e+00 : tensor<4x300xf32>
  %11 = uop.where %5, %9, %10 : tensor<4x300xf32>
  %12 = uop.reduce add %11 [1] : tensor<4x300xf32> -> tensor<4x1xf32>
  uop.sink %12 : tensor<4x1xf32>
  return
}

// -----

// A convolution's padded input read through sliding windows by a reduction with few input channels (2 here) is
// materialized with its zeros ("padded": checked once per element), and the windows read it without conditions.
// CHECK-LABEL: func.func @conv_few_channels
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x40xf32>
// CHECK: uop.index %[[X]][%{{.*}}, %{{.*}}] if
// CHECK: %[[P:.*]] = uop.bufferize %{{.*}} over(%{{.*}}, %{{.*}}) {reason = "padded"} : f32 -> tensor<2x44xf32>
// CHECK: uop.index %[[P]][%{{.*}}, %{{.*}}] : tensor<2x44xf32>
// CHECK-NOT: if
// CHECK: uop.range_reduce add
// CHECK: {reason = "output"}
func.func @conv_few_channels(%x: tensor<2x40xf32>, %w: tensor<16x2x5xf32>) {
  %p = uop.pad %x low [0, 2] high [0, 2] : tensor<2x40xf32> -> tensor<2x44xf32>
  %r = uop.reshape %p : tensor<2x44xf32> -> tensor<2x1x44xf32>
  %e = uop.expand %r : tensor<2x1x44xf32> -> tensor<2x6x44xf32>
  %f = uop.reshape %e : tensor<2x6x44xf32> -> tensor<2x264xf32>
  %s = uop.shrink %f [0, 0] to [2, 225] : tensor<2x264xf32> -> tensor<2x225xf32>
  %g = uop.reshape %s : tensor<2x225xf32> -> tensor<2x5x45xf32>
  %win = uop.shrink %g [0, 0, 0] to [2, 5, 40] : tensor<2x5x45xf32> -> tensor<2x5x40xf32>
  %b = uop.reshape %win : tensor<2x5x40xf32> -> tensor<1x2x5x40xf32>
  %bx = uop.expand %b : tensor<1x2x5x40xf32> -> tensor<16x2x5x40xf32>
  %wr = uop.reshape %w : tensor<16x2x5xf32> -> tensor<16x2x5x1xf32>
  %wx = uop.expand %wr : tensor<16x2x5x1xf32> -> tensor<16x2x5x40xf32>
  %m = uop.mul %bx, %wx : tensor<16x2x5x40xf32>
  %sum = uop.reduce add %m [1, 2] : tensor<16x2x5x40xf32> -> tensor<16x1x1x40xf32>
  %out = uop.reshape %sum : tensor<16x1x1x40xf32> -> tensor<16x40xf32>
  uop.sink %out : tensor<16x40xf32>
  return
}

// -----

// With 32 input channels the conditions checked at each window position are spread over the channels: the windows
// read the input through them, with no padded copy.
// CHECK-LABEL: func.func @conv_many_channels
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<32x40xf32>
// CHECK-NOT: padded
// CHECK: uop.index %[[X]][%{{.*}}, %{{.*}}] if
// CHECK-NOT: padded
// CHECK: uop.range_reduce add
// CHECK-NOT: padded
// CHECK: return
func.func @conv_many_channels(%x: tensor<32x40xf32>, %w: tensor<16x32x5xf32>) {
  %p = uop.pad %x low [0, 2] high [0, 2] : tensor<32x40xf32> -> tensor<32x44xf32>
  %r = uop.reshape %p : tensor<32x44xf32> -> tensor<32x1x44xf32>
  %e = uop.expand %r : tensor<32x1x44xf32> -> tensor<32x6x44xf32>
  %f = uop.reshape %e : tensor<32x6x44xf32> -> tensor<32x264xf32>
  %s = uop.shrink %f [0, 0] to [32, 225] : tensor<32x264xf32> -> tensor<32x225xf32>
  %g = uop.reshape %s : tensor<32x225xf32> -> tensor<32x5x45xf32>
  %win = uop.shrink %g [0, 0, 0] to [32, 5, 40] : tensor<32x5x45xf32> -> tensor<32x5x40xf32>
  %b = uop.reshape %win : tensor<32x5x40xf32> -> tensor<1x32x5x40xf32>
  %bx = uop.expand %b : tensor<1x32x5x40xf32> -> tensor<16x32x5x40xf32>
  %wr = uop.reshape %w : tensor<16x32x5xf32> -> tensor<16x32x5x1xf32>
  %wx = uop.expand %wr : tensor<16x32x5x1xf32> -> tensor<16x32x5x40xf32>
  %m = uop.mul %bx, %wx : tensor<16x32x5x40xf32>
  %sum = uop.reduce add %m [1, 2] : tensor<16x32x5x40xf32> -> tensor<16x1x1x40xf32>
  %out = uop.reshape %sum : tensor<16x1x1x40xf32> -> tensor<16x40xf32>
  uop.sink %out : tensor<16x40xf32>
  return
}

// -----

// A depthwise convolution reads each element 5 times, fewer than a copy is worth (PAD_REUSE): no padded copy.
// CHECK-LABEL: func.func @conv_depthwise
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<16x40xf32>
// CHECK-NOT: padded
// CHECK: uop.index %[[X]][%{{.*}}, %{{.*}}] if
// CHECK-NOT: padded
// CHECK: uop.range_reduce add
// CHECK-NOT: padded
// CHECK: return
func.func @conv_depthwise(%x: tensor<16x40xf32>, %w: tensor<16x5xf32>) {
  %p = uop.pad %x low [0, 2] high [0, 2] : tensor<16x40xf32> -> tensor<16x44xf32>
  %r = uop.reshape %p : tensor<16x44xf32> -> tensor<16x1x44xf32>
  %e = uop.expand %r : tensor<16x1x44xf32> -> tensor<16x6x44xf32>
  %f = uop.reshape %e : tensor<16x6x44xf32> -> tensor<16x264xf32>
  %s = uop.shrink %f [0, 0] to [16, 225] : tensor<16x264xf32> -> tensor<16x225xf32>
  %g = uop.reshape %s : tensor<16x225xf32> -> tensor<16x5x45xf32>
  %win = uop.shrink %g [0, 0, 0] to [16, 5, 40] : tensor<16x5x45xf32> -> tensor<16x5x40xf32>
  %wr = uop.reshape %w : tensor<16x5xf32> -> tensor<16x5x1xf32>
  %wx = uop.expand %wr : tensor<16x5x1xf32> -> tensor<16x5x40xf32>
  %m = uop.mul %win, %wx : tensor<16x5x40xf32>
  %sum = uop.reduce add %m [1] : tensor<16x5x40xf32> -> tensor<16x1x40xf32>
  %out = uop.reshape %sum : tensor<16x1x40xf32> -> tensor<16x40xf32>
  uop.sink %out : tensor<16x40xf32>
  return
}
