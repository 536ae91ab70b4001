// RUN: pytc-opt %s --split-input-file -pytc-bufferize | FileCheck %s
// Input: rangeified graphs after pytc-fuse (its decisions made: the uop.bufferize ops left are kernel boundaries).

// A softmax's row max that pytc-fuse kept (reduce-expand): the output is stored into a new function argument, the
// row max into a uop.buffer. Its size-1 dim is stored at the constant 0 and its end closes only the loop range.
// Tensor arguments become memrefs and the reader reads what the end returns.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4x8xf32>, %[[OUT:[a-z0-9]+]]: memref<4x8xf32>)
// CHECK-NOT: uop.bufferize
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[I:.*]] = uop.range loop 4 id 0
// CHECK: %[[K:.*]] = uop.range reduce 8 id 1
// CHECK: %[[X:.*]] = uop.index %[[A]][%[[I]], %[[K]]] : memref<4x8xf32>
// CHECK: %[[M:.*]] = uop.range_reduce max %[[X]] over(%[[K]]) : f32
// CHECK: %[[T:.*]] = uop.buffer : memref<4x1xf32>
// CHECK-NEXT: %[[W:.*]] = uop.store %[[M]], %[[T]][%[[I]], %[[C0]]] : memref<4x1xf32>
// CHECK-NEXT: %[[TE:.*]] = uop.end %[[W]] over(%[[I]]) : memref<4x1xf32>
// CHECK: %[[I2:.*]] = uop.range loop 4 id 2
// CHECK: %[[J2:.*]] = uop.range loop 8 id 3
// CHECK: uop.index %[[TE]][%[[I2]], %[[C0]]] : memref<4x1xf32>
// CHECK: %[[S:.*]] = uop.add
// CHECK-NEXT: %[[W2:.*]] = uop.store %[[S]], %[[OUT]][%[[I2]], %[[J2]]] : memref<4x8xf32>
// CHECK-NEXT: %[[E2:.*]] = uop.end %[[W2]] over(%[[I2]], %[[J2]]) : memref<4x8xf32>
// CHECK-NEXT: uop.sink %[[E2]] : memref<4x8xf32>
// CHECK-NOT: uop.buffer
func.func @softmax(%a: tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %x = uop.index %a[%i, %k] : tensor<4x8xf32>
  %max = uop.range_reduce max %x over(%k) : f32
  %rows = uop.bufferize %max over(%i, %c0) {fuse = "kept: rows longer than 0 elements", reason = "reduce-expand"} : f32 -> tensor<4x1xf32>
  %i2 = uop.range loop 4 id 2
  %j2 = uop.range loop 8 id 3
  %y = uop.index %a[%i2, %j2] : tensor<4x8xf32>
  %m = uop.index %rows[%i2, %c0] : tensor<4x1xf32>
  %n = uop.neg %m : f32
  %s = uop.add %y, %n : f32
  %out = uop.bufferize %s over(%i2, %j2) {reason = "output"} : f32 -> tensor<4x8xf32>
  uop.sink %out : tensor<4x8xf32>
  return
}

// -----

// A multi-use value that pytc-fuse kept gets a uop.buffer too; both its readers (one flipped) read its end.
// CHECK-LABEL: func.func @kept_candidate
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4x8xf32>, %[[OUT:[a-z0-9]+]]: memref<4x1xf32>)
// CHECK: %[[T:.*]] = uop.buffer : memref<4x1xf32>
// CHECK-NEXT: %[[W:.*]] = uop.store %{{.*}}, %[[T]][
// CHECK-NEXT: %[[TE:.*]] = uop.end %[[W]] over(
// CHECK: uop.index %[[TE]][
// CHECK: uop.index %[[TE]][
// CHECK: uop.store %{{.*}}, %[[OUT]][
func.func @kept_candidate(%a: tensor<4x8xf32>) {
  %c3 = arith.constant 3 : index
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %x = uop.index %a[%i, %k] : tensor<4x8xf32>
  %sum = uop.range_reduce add %x over(%k) : f32
  %kept = uop.bufferize %sum over(%i, %c0) {fuse = "kept: recomputing would repeat a reduction", reason = "multi-use"} : f32 -> tensor<4x1xf32>
  %i2 = uop.range loop 4 id 2
  %r = uop.index %kept[%i2, %c0] : tensor<4x1xf32>
  %n = uop.neg %r : f32
  %flipped_i = arith.subi %c3, %i2 : index
  %f = uop.index %kept[%flipped_i, %c0] : tensor<4x1xf32>
  %e = uop.exp2 %f : f32
  %s = uop.add %n, %e : f32
  %out = uop.bufferize %s over(%i2, %c0) {reason = "output"} : f32 -> tensor<4x1xf32>
  uop.sink %out : tensor<4x1xf32>
  return
}

// -----

// A full reduction stores at (0, 0) and its end closes no range.
// CHECK-LABEL: func.func @reduce_all
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4x8xf32>, %[[OUT:[a-z0-9]+]]: memref<1x1xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[R:.*]] = uop.range_reduce add
// CHECK-NEXT: %[[W:.*]] = uop.store %[[R]], %[[OUT]][%[[C0]], %[[C0]]] : memref<1x1xf32>
// CHECK-NEXT: %[[E:.*]] = uop.end %[[W]] over() : memref<1x1xf32>
// CHECK-NEXT: uop.sink %[[E]] : memref<1x1xf32>
func.func @reduce_all(%a: tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %k0 = uop.range reduce 4 id 0
  %k1 = uop.range reduce 8 id 1
  %x = uop.index %a[%k0, %k1] : tensor<4x8xf32>
  %sum = uop.range_reduce add %x over(%k0, %k1) : f32
  %out = uop.bufferize %sum over(%c0, %c0) {reason = "output"} : f32 -> tensor<1x1xf32>
  uop.sink %out : tensor<1x1xf32>
  return
}

// -----

// Two outputs get two new arguments, in the order of the sink; an output read by another output's computation is
// read through its end.
// CHECK-LABEL: func.func @two_outputs
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32>, %[[O1:[a-z0-9]+]]: memref<4xf32>, %[[O2:[a-z0-9]+]]: memref<4xf32>)
// CHECK-NOT: uop.buffer
// CHECK: %[[W1:.*]] = uop.store %{{.*}}, %[[O1]][%{{.*}}] : memref<4xf32>
// CHECK-NEXT: %[[E1:.*]] = uop.end %[[W1]]
// CHECK: uop.index %[[E1]][
// CHECK: %[[W2:.*]] = uop.store %{{.*}}, %[[O2]][%{{.*}}] : memref<4xf32>
// CHECK-NEXT: %[[E2:.*]] = uop.end %[[W2]]
// CHECK-NEXT: uop.sink %[[E1]], %[[E2]] : memref<4xf32>, memref<4xf32>
func.func @two_outputs(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  %n = uop.neg %x : f32
  %first = uop.bufferize %n over(%i) {reason = "output"} : f32 -> tensor<4xf32>
  %j = uop.range loop 4 id 1
  %y = uop.index %first[%j] : tensor<4xf32>
  %e = uop.exp2 %y : f32
  %second = uop.bufferize %e over(%j) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %first, %second : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// One value sunk twice gets two output arguments: the second is a copy of the first, over ranges of its own (ids
// after the graph's), so no two outputs share a buffer.
// CHECK-LABEL: func.func @same_output_twice
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32>, %[[O:[a-z0-9]+]]: memref<4xf32>, %[[COPY:[a-z0-9]+]]: memref<4xf32>)
// CHECK: %[[W:.*]] = uop.store %{{.*}}, %[[O]][
// CHECK-NEXT: %[[E:.*]] = uop.end %[[W]]
// CHECK-NEXT: %[[I:.*]] = uop.range loop 4 id 1
// CHECK-NEXT: %[[V:.*]] = uop.index %[[E]][%[[I]]] : memref<4xf32>
// CHECK-NEXT: %[[C:.*]] = uop.store %[[V]], %[[COPY]][%[[I]]] : memref<4xf32>
// CHECK-NEXT: %[[CE:.*]] = uop.end %[[C]] over(%[[I]])
// CHECK-NEXT: uop.sink %[[E]], %[[CE]] : memref<4xf32>, memref<4xf32>
func.func @same_output_twice(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  %n = uop.neg %x : f32
  %out = uop.bufferize %n over(%i) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %out, %out : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// Output arguments follow the order of the sink, not of the materializations, and size-1 dims of the output are
// stored at 0.
// CHECK-LABEL: func.func @sink_order
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32>, %[[SECOND:[a-z0-9]+]]: memref<2x1xf32>, %[[FIRST:[a-z0-9]+]]: memref<4xf32>)
// CHECK: %[[I:.*]] = uop.range loop 4 id 0
// CHECK: %[[W1:.*]] = uop.store %{{.*}}, %[[FIRST]][%[[I]]] : memref<4xf32>
// CHECK-NEXT: %[[E1:.*]] = uop.end %[[W1]] over(%[[I]]) : memref<4xf32>
// CHECK: %[[J:.*]] = uop.range loop 2 id 1
// CHECK: %[[W2:.*]] = uop.store %{{.*}}, %[[SECOND]][%[[J]], %[[C0:.*]]] : memref<2x1xf32>
// CHECK-NEXT: %[[E2:.*]] = uop.end %[[W2]] over(%[[J]]) : memref<2x1xf32>
// CHECK-NEXT: uop.sink %[[E2]], %[[E1]] : memref<2x1xf32>, memref<4xf32>
func.func @sink_order(%a: tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  %n = uop.neg %x : f32
  %first = uop.bufferize %n over(%i) {reason = "output"} : f32 -> tensor<4xf32>
  %j = uop.range loop 2 id 1
  %y = uop.index %a[%j] : tensor<4xf32>
  %second = uop.bufferize %y over(%j, %c0) {reason = "output"} : f32 -> tensor<2x1xf32>
  uop.sink %second, %first : tensor<2x1xf32>, tensor<4xf32>
  return
}

// -----

// A copy between devices becomes a uop.transfer into a buffer on the target device (its
// readers read what the transfer returns), or straight into the output it is; output
// arguments on another device than the graph's carry uop.device.
// CHECK-LABEL: func.func @transfer
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32>, %[[OUT:[a-z0-9]+]]: memref<4xf32> {uop.device = "AMD"}, %[[COPY:[a-z0-9]+]]: memref<4xf32> {uop.device = "AMD"})
// CHECK: %[[S:.*]] = uop.buffer : memref<4xf32>
// CHECK: %[[E:.*]] = uop.end
// CHECK: %[[T:.*]] = uop.transfer %[[E]] into %[[COPY]] : memref<4xf32>
// CHECK: uop.index %[[T]][
// CHECK: uop.store %{{.*}}, %[[OUT]][
// CHECK: uop.sink %{{.*}}, %[[T]]
func.func @transfer(%a: tensor<4xf32>) attributes {uop.device = "CPU"} {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  %e = uop.exp2 %x : f32
  %s = uop.bufferize %e over(%i) {reason = "copy"} : f32 -> tensor<4xf32>
  %c = uop.copy %s to "AMD" : tensor<4xf32>
  %j = uop.range loop 4 id 1
  %y = uop.index %c[%j] : tensor<4xf32>
  %n = uop.neg %y : f32
  %o = uop.bufferize %n over(%j) {reason = "output", uop.device = "AMD"} : f32 -> tensor<4xf32>
  uop.sink %o, %c : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// A copy read but not an output lands in a new buffer on its device.
// CHECK-LABEL: func.func @transfer_temporary
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32> {uop.device = "AMD"}, %{{.*}}: memref<4xf32>)
// CHECK: %[[B:.*]] = uop.buffer : memref<4xf32>
// CHECK-NEXT: %[[T:.*]] = uop.transfer %[[A]] into %[[B]] : memref<4xf32>
// CHECK: uop.index %[[T]][
func.func @transfer_temporary(%a: tensor<4xf32> {uop.device = "AMD"}) attributes {uop.device = "CPU"} {
  %c = uop.copy %a to "CPU" : tensor<4xf32>
  %j = uop.range loop 4 id 0
  %y = uop.index %c[%j] : tensor<4xf32>
  %n = uop.neg %y : f32
  %o = uop.bufferize %n over(%j) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %o : tensor<4xf32>
  return
}
