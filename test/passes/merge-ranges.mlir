// RUN: pytc-opt %s --split-input-file -pytc-merge-ranges | FileCheck %s

// An elementwise kernel over contiguous 1024x7x7 buffers: the 7 x 7 merge, then 1024 x 49, into one range of 50176.
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME: %[[OUT:.*]]: memref<50176xf32>, %[[IN:.*]]: memref<50176xf32>)
// CHECK: %[[R:.*]] = uop.range loop 50176 id 0
// CHECK-NOT: uop.range
// CHECK: uop.index %[[IN]][%[[R]]] : memref<50176xf32>
// CHECK: uop.store %{{.*}}, %[[OUT]][%[[R]]] : memref<50176xf32>
// CHECK: uop.end %{{.*}} over(%[[R]]) : memref<50176xf32>
func.func @elementwise(%out: memref<1024x7x7xf32>, %in: memref<1024x7x7xf32>) attributes {pytc.kernel} {
  %n = uop.range loop 1024 id 0
  %h = uop.range loop 7 id 1
  %w = uop.range loop 7 id 2
  %x = uop.index %in[%n, %h, %w] : memref<1024x7x7xf32>
  %e = uop.exp %x : f32
  %s = uop.store %e, %out[%n, %h, %w] : memref<1024x7x7xf32>
  %d = uop.end %s over(%n, %h, %w) : memref<1024x7x7xf32>
  return
}

// -----

// A 1x1 convolution: the pixels (14 x 14) merge into 196 in the input and the output; the channels stay apart (the
// weights read the output channel with the reduce range, not with the pixels).
// CHECK-LABEL: func.func @conv1x1(
// CHECK-SAME: memref<1x1024x196xf32>, %[[X:.*]]: memref<1x256x196xf32>, %[[W:.*]]: memref<1024x256x1x1xf32>)
// CHECK-DAG: %[[O:.*]] = uop.range loop 1024 id 0
// CHECK-DAG: %[[P:.*]] = uop.range loop 196 id 1
// CHECK-DAG: %[[C:.*]] = uop.range reduce 256 id 3
// CHECK: uop.index %[[X]][%{{.*}}, %[[C]], %[[P]]] : memref<1x256x196xf32>
// CHECK: uop.end %{{.*}} over(%[[O]], %[[P]]) : memref<1x1024x196xf32>
func.func @conv1x1(%out: memref<1x1024x14x14xf32>, %x: memref<1x256x14x14xf32>, %w: memref<1024x256x1x1xf32>) attributes {pytc.kernel} {
  %zero = arith.constant 0 : index
  %o = uop.range loop 1024 id 0
  %h = uop.range loop 14 id 1
  %v = uop.range loop 14 id 2
  %c = uop.range reduce 256 id 3
  %a = uop.index %x[%zero, %c, %h, %v] : memref<1x256x14x14xf32>
  %b = uop.index %w[%o, %c, %zero, %zero] : memref<1024x256x1x1xf32>
  %p = uop.mul %a, %b : f32
  %s = uop.range_reduce add %p over(%c) : f32
  %st = uop.store %s, %out[%zero, %o, %h, %v] : memref<1x1024x14x14xf32>
  %d = uop.end %st over(%o, %h, %v) : memref<1x1024x14x14xf32>
  return
}

// -----

// A sum over the 7 x 7 pixels of each channel (global average pooling): the two reduce ranges merge into 49.
// CHECK-LABEL: func.func @pool(
// CHECK-SAME: memref<512xf32>, %[[X:.*]]: memref<512x49xf32>)
// CHECK: %[[K:.*]] = uop.range reduce 49 id 1
// CHECK: uop.index %[[X]][%{{.*}}, %[[K]]] : memref<512x49xf32>
// CHECK: uop.range_reduce add %{{.*}} over(%[[K]]) : f32
func.func @pool(%out: memref<512xf32>, %x: memref<512x7x7xf32>) attributes {pytc.kernel} {
  %c = uop.range loop 512 id 0
  %h = uop.range reduce 7 id 1
  %w = uop.range reduce 7 id 2
  %a = uop.index %x[%c, %h, %w] : memref<512x7x7xf32>
  %s = uop.range_reduce add %a over(%h, %w) : f32
  %st = uop.store %s, %out[%c] : memref<512xf32>
  %d = uop.end %st over(%c) : memref<512xf32>
  return
}

// -----

// A bias added along the rows reads `j` alone; a transposed read takes (j, i); a shifted read computes i + 1; a read
// gated on i; a window narrower than its buffer's row (6 of 8): none of these pairs merge.
// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME: memref<4x6xf32>
// CHECK: uop.range loop 4
// CHECK: uop.range loop 6
func.func @broadcast(%out: memref<4x6xf32>, %x: memref<4x6xf32>, %bias: memref<6xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 6 id 1
  %a = uop.index %x[%i, %j] : memref<4x6xf32>
  %b = uop.index %bias[%j] : memref<6xf32>
  %s = uop.add %a, %b : f32
  %st = uop.store %s, %out[%i, %j] : memref<4x6xf32>
  %d = uop.end %st over(%i, %j) : memref<4x6xf32>
  return
}

// CHECK-LABEL: func.func @transposed(
// CHECK-SAME: memref<4x4xf32>, %{{.*}}: memref<4x4xf32>, %{{.*}}: memref<4x4xf32>)
// CHECK: uop.range loop 4 id 0
// CHECK: uop.range loop 4 id 1
func.func @transposed(%out: memref<4x4xf32>, %x: memref<4x4xf32>, %y: memref<4x4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 4 id 1
  %a = uop.index %x[%i, %j] : memref<4x4xf32>
  %b = uop.index %y[%j, %i] : memref<4x4xf32>
  %s = uop.add %a, %b : f32
  %st = uop.store %s, %out[%i, %j] : memref<4x4xf32>
  %d = uop.end %st over(%i, %j) : memref<4x4xf32>
  return
}

// CHECK-LABEL: func.func @shifted(
// CHECK-SAME: memref<4x6xf32>, %{{.*}}: memref<5x6xf32>)
// CHECK: uop.range loop 4
// CHECK: uop.range loop 6
func.func @shifted(%out: memref<4x6xf32>, %x: memref<5x6xf32>) attributes {pytc.kernel} {
  %one = arith.constant 1 : index
  %i = uop.range loop 4 id 0
  %j = uop.range loop 6 id 1
  %next = arith.addi %i, %one : index
  %a = uop.index %x[%next, %j] : memref<5x6xf32>
  %st = uop.store %a, %out[%i, %j] : memref<4x6xf32>
  %d = uop.end %st over(%i, %j) : memref<4x6xf32>
  return
}

// CHECK-LABEL: func.func @gated(
// CHECK-SAME: memref<4x6xf32>, %{{.*}}: memref<4x6xf32>)
// CHECK: uop.range loop 4
// CHECK: uop.range loop 6
func.func @gated(%out: memref<4x6xf32>, %x: memref<4x6xf32>) attributes {pytc.kernel} {
  %two = arith.constant 2 : index
  %i = uop.range loop 4 id 0
  %j = uop.range loop 6 id 1
  %inside = arith.cmpi ult, %i, %two : index
  %a = uop.index %x[%i, %j] if %inside : memref<4x6xf32>
  %st = uop.store %a, %out[%i, %j] : memref<4x6xf32>
  %d = uop.end %st over(%i, %j) : memref<4x6xf32>
  return
}

// CHECK-LABEL: func.func @window(
// CHECK-SAME: memref<4x6xf32>, %{{.*}}: memref<4x8xf32>)
// CHECK: uop.range loop 4
// CHECK: uop.range loop 6
func.func @window(%out: memref<4x6xf32>, %x: memref<4x8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 6 id 1
  %a = uop.index %x[%i, %j] : memref<4x8xf32>
  %st = uop.store %a, %out[%i, %j] : memref<4x6xf32>
  %d = uop.end %st over(%i, %j) : memref<4x6xf32>
  return
}

// -----

// A buffer read twice, once along the ranges and once at a fixed row: its dimensions cannot merge for one read only, so
// no pair merges.
// CHECK-LABEL: func.func @read_twice(
// CHECK-SAME: memref<2x3x4xf32>, %{{.*}}: memref<2x3x4xf32>, %{{.*}}: memref<2x3x4xf32>)
// CHECK-COUNT-3: uop.range loop
func.func @read_twice(%out: memref<2x3x4xf32>, %x: memref<2x3x4xf32>, %y: memref<2x3x4xf32>) attributes {pytc.kernel} {
  %zero = arith.constant 0 : index
  %i = uop.range loop 2 id 0
  %j = uop.range loop 3 id 1
  %k = uop.range loop 4 id 2
  %a = uop.index %x[%i, %j, %k] : memref<2x3x4xf32>
  %b = uop.index %x[%zero, %zero, %k] : memref<2x3x4xf32>
  %c = uop.index %y[%zero, %j, %k] : memref<2x3x4xf32>
  %s = uop.add %a, %b : f32
  %t = uop.add %s, %c : f32
  %st = uop.store %t, %out[%i, %j, %k] : memref<2x3x4xf32>
  %d = uop.end %st over(%i, %j, %k) : memref<2x3x4xf32>
  return
}
