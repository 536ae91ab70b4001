// RUN: pytc-opt %s --split-input-file | pytc-opt --split-input-file | FileCheck %s

// The index level: ranges, element reads (gated), range reductions,
// materialization, and scalar elementwise ops.
// CHECK-LABEL: func.func @index_level(
// CHECK:         %[[I:.*]] = uop.range loop 4 id 0
// CHECK:         %[[K:.*]] = uop.range reduce 8 id 1
// CHECK:         %[[X:.*]] = uop.index %{{.*}}[%[[I]], %[[K]]] if %{{.*}} : tensor<4x8xf32>
// CHECK:         %[[Y:.*]] = uop.mul %[[X]], %{{.*}} : f32
// CHECK:         %[[S:.*]] = uop.range_reduce add %[[Y]] over(%[[K]]) : f32
// CHECK:         uop.bufferize %[[S]] over(%[[I]], %{{.*}}) {reason = "output"} : f32 -> tensor<4x1xf32>
// CHECK:         uop.cmplt %{{.*}}, %{{.*}} : f32
// CHECK:         uop.cast %{{.*}} : f32 to i32
func.func @index_level(%a: tensor<4x8xf32>) {
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %c0 = arith.constant 0 : index
  %inside = arith.cmpi ult, %k, %i : index
  %x = uop.index %a[%i, %k] if %inside : tensor<4x8xf32>
  %two = uop.const 2.0 : f32
  %y = uop.mul %x, %two : f32
  %s = uop.range_reduce add %y over (%k) : f32
  %b = uop.bufferize %s over (%i, %c0) {reason = "output"} : f32 -> tensor<4x1xf32>
  %lt = uop.cmplt %s, %two : f32
  %n = uop.cast %s : f32 to i32
  uop.sink %b : tensor<4x1xf32>
  return
}

// -----

// Buffers, stores, loop ends and launches (of a declared kernel).
// CHECK-LABEL: func.func @buffer_level(
// CHECK:         %[[B:.*]] = uop.buffer : memref<4xf32>
// CHECK:         %[[W:.*]] = uop.store %{{.*}}, %[[B]][%{{.*}}] : memref<4xf32>
// CHECK:         %[[E:.*]] = uop.end %[[W]] over(%{{.*}}) : memref<4xf32>
// CHECK:         uop.index %[[E]][%{{.*}}] : memref<4xf32>
// CHECK:         uop.launch @kernel(%[[E]], %{{.*}}) : memref<4xf32>, memref<4xf32>
func.func private @kernel(memref<4xf32>, memref<4xf32>)
func.func @buffer_level(%in: memref<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %in[%i] : memref<4xf32>
  %buf = uop.buffer : memref<4xf32>
  %w = uop.store %x, %buf[%i] : memref<4xf32>
  %done = uop.end %w over (%i) : memref<4xf32>
  %j = uop.range loop 4 id 1
  %y = uop.index %done[%j] : memref<4xf32>
  uop.launch @kernel(%done, %in) : memref<4xf32>, memref<4xf32>
  return
}
