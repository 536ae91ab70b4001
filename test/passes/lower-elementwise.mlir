// RUN: pytc-opt %s --split-input-file -pytc-lower-elementwise | FileCheck %s

// Inputs become memrefs, each sink operand gets an output memref, and the ops
// become scalar arith inside one scf.parallel over the shape.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:    %[[A:.*]]: memref<2x3xf32>, %[[B:.*]]: memref<2x3xf32>, %[[OUT:.*]]: memref<2x3xf32>) attributes {pytc.kernel}
// CHECK:         scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK:           %[[X:.*]] = memref.load %[[A]][%[[I]], %[[J]]]
// CHECK:           %[[Y:.*]] = memref.load %[[B]][%[[I]], %[[J]]]
// CHECK:           %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:           %[[SUM:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK:           %[[PROD:.*]] = arith.mulf %[[SUM]], %[[TWO]] : f32
// CHECK:           memref.store %[[PROD]], %[[OUT]][%[[I]], %[[J]]]
// CHECK-NOT:     uop.
func.func @chain(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  %two = uop.const 2.0 : tensor<2x3xf32>
  %0 = uop.add %a, %b : tensor<2x3xf32>
  %1 = uop.mul %0, %two : tensor<2x3xf32>
  uop.sink %1 : tensor<2x3xf32>
  return
}

// -----

// Unsigned integers pick unsigned arith ops and are stored signless; booleans
// are stored as bytes (trunci after load, extui before store).
// CHECK-LABEL: func.func @unsigned_and_bool(
// CHECK-SAME:    memref<4xi8>, %{{.*}}: memref<4xi8>, %{{.*}}: memref<4xi8>, %[[CMP:.*]]: memref<4xi8>)
// CHECK:         arith.divui
// CHECK:         arith.maxui
// CHECK:         %[[LT:.*]] = arith.cmpi ult
// CHECK:         %[[BYTE:.*]] = arith.extui %[[LT]] : i1 to i8
// CHECK:         memref.store %[[BYTE]], %[[CMP]]
func.func @unsigned_and_bool(%a: tensor<4xui8>, %b: tensor<4xui8>) {
  %0 = uop.idiv %a, %b : tensor<4xui8>
  %1 = uop.max %0, %b : tensor<4xui8>
  %2 = uop.cmplt %1, %a : tensor<4xui8>
  uop.sink %1, %2 : tensor<4xui8>, tensor<4xi1>
  return
}

// -----

// Casts follow C: float to signed int is fptosi, anything to i1 compares with 0;
// iota reads the loop index of its axis.
// CHECK-LABEL: func.func @casts_and_iota(
// CHECK:         scf.parallel (%[[I:.*]]) =
// CHECK:         arith.fptosi %{{.*}} : f32 to i32
// CHECK:         arith.cmpf une
// CHECK:         arith.index_cast %[[I]] : index to i32
func.func @casts_and_iota(%a: tensor<4xf32>) {
  %0 = uop.cast %a : tensor<4xf32> to tensor<4xi32>
  %1 = uop.cast %a : tensor<4xf32> to tensor<4xi1>
  %2 = uop.iota 0 : tensor<4xi32>
  %3 = uop.add %0, %2 : tensor<4xi32>
  uop.sink %3, %1 : tensor<4xi32>, tensor<4xi1>
  return
}

// -----

// A rank-0 graph needs no loop.
// CHECK-LABEL: func.func @scalar(
// CHECK-NOT:     scf.parallel
// CHECK:         math.sqrt
func.func @scalar(%a: tensor<f32>) {
  %0 = uop.sqrt %a : tensor<f32>
  uop.sink %0 : tensor<f32>
  return
}
