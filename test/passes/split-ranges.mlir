// RUN: pytc-opt %s --split-input-file -pytc-split-ranges | FileCheck %s

// A grouped convolution's output channels (4 groups of 32): the read of x takes channel o // 32 * 32 + c. o splits into
// g (4) and i (32): x reads channel g * 32 + c, the weights and the output split their 128 channels into 4 x 32.
// CHECK-LABEL: func.func @grouped(
// CHECK-SAME: %[[OUT:.*]]: memref<4x32x6xf32>, %[[X:.*]]: memref<128x6xf32>, %[[W:.*]]: memref<4x32x32xf32>)
// CHECK-DAG: %[[G:.*]] = uop.range loop 4 id 0
// CHECK-DAG: %[[I:.*]] = uop.range loop 32 id 3
// CHECK-NOT: arith.divui
// CHECK: %[[BASE:.*]] = arith.muli %[[G]], %{{.*}} : index
// CHECK: uop.index %[[W]][%[[G]], %[[I]], %{{.*}}] : memref<4x32x32xf32>
// CHECK: uop.store %{{.*}}, %[[OUT]][%[[G]], %[[I]], %{{.*}}] : memref<4x32x6xf32>
// CHECK: uop.end %{{.*}} over(%[[G]], %[[I]], %{{.*}}) : memref<4x32x6xf32>
func.func @grouped(%out: memref<128x6xf32>, %x: memref<128x6xf32>, %w: memref<128x32xf32>) attributes {pytc.kernel} {
  %c32 = arith.constant 32 : index
  %o = uop.range loop 128 id 0
  %p = uop.range loop 6 id 1
  %c = uop.range reduce 32 id 2
  %group = arith.divui %o, %c32 : index
  %base = arith.muli %group, %c32 : index
  %channel = arith.addi %base, %c : index
  %a = uop.index %x[%channel, %p] : memref<128x6xf32>
  %b = uop.index %w[%o, %c] : memref<128x32xf32>
  %m = uop.mul %a, %b : f32
  %s = uop.range_reduce add %m over(%c) : f32
  %st = uop.store %s, %out[%o, %p] : memref<128x6xf32>
  %e = uop.end %st over(%o, %p) : memref<128x6xf32>
  return
}

// -----

// o // 4 and o mod 4 of 12 values read x[o // 4, o mod 4]: o splits into 3 x 4 and the read needs no division.
// CHECK-LABEL: func.func @reshaped(
// CHECK-SAME: %[[OUT:.*]]: memref<3x4xf32>, %[[X:.*]]: memref<3x4xf32>)
// CHECK: %[[G:.*]] = uop.range loop 3 id 0
// CHECK: %[[I:.*]] = uop.range loop 4 id 1
// CHECK: uop.index %[[X]][%[[G]], %[[I]]] : memref<3x4xf32>
// CHECK: uop.store %{{.*}}, %[[OUT]][%[[G]], %[[I]]] : memref<3x4xf32>
func.func @reshaped(%out: memref<12xf32>, %x: memref<3x4xf32>) attributes {pytc.kernel} {
  %c4 = arith.constant 4 : index
  %o = uop.range loop 12 id 0
  %q = arith.divui %o, %c4 : index
  %r = arith.remui %o, %c4 : index
  %a = uop.index %x[%q, %r] : memref<3x4xf32>
  %st = uop.store %a, %out[%o] : memref<12xf32>
  %e = uop.end %st over(%o) : memref<12xf32>
  return
}

// -----

// Two divisors (o // 4 and o // 3), a use in arithmetic (o + 1), a buffer read at another index: no split.
// CHECK-LABEL: func.func @kept(
// CHECK: uop.range loop 12 id 0
// CHECK: arith.divui
// CHECK: arith.divui
// CHECK-LABEL: func.func @shifted(
// CHECK: uop.range loop 12 id 0
// CHECK: arith.divui
// CHECK-LABEL: func.func @read_elsewhere(
// CHECK-SAME: memref<12xf32>, %{{.*}}: memref<12xf32>
func.func @kept(%out: memref<12xf32>, %x: memref<3x4xf32>) attributes {pytc.kernel} {
  %c4 = arith.constant 4 : index
  %c3 = arith.constant 3 : index
  %o = uop.range loop 12 id 0
  %q = arith.divui %o, %c4 : index
  %t = arith.divui %o, %c3 : index
  %a = uop.index %x[%q, %t] : memref<3x4xf32>
  %st = uop.store %a, %out[%o] : memref<12xf32>
  %e = uop.end %st over(%o) : memref<12xf32>
  return
}
func.func @shifted(%out: memref<12xf32>, %x: memref<13xf32>) attributes {pytc.kernel} {
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %o = uop.range loop 12 id 0
  %q = arith.divui %o, %c4 : index
  %n = arith.addi %o, %c1 : index
  %a = uop.index %x[%n] : memref<13xf32>
  %b = uop.index %x[%q] : memref<13xf32>
  %s = uop.add %a, %b : f32
  %st = uop.store %s, %out[%o] : memref<12xf32>
  %e = uop.end %st over(%o) : memref<12xf32>
  return
}
func.func @read_elsewhere(%out: memref<12xf32>, %x: memref<12xf32>) attributes {pytc.kernel} {
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  %o = uop.range loop 12 id 0
  %q = arith.divui %o, %c4 : index
  %a = uop.index %x[%o] : memref<12xf32>
  %b = uop.index %x[%c0] : memref<12xf32>
  %c = uop.index %x[%q] : memref<12xf32>
  %s = uop.add %a, %b : f32
  %t = uop.add %s, %c : f32
  %st = uop.store %t, %out[%o] : memref<12xf32>
  %e = uop.end %st over(%o) : memref<12xf32>
  return
}
