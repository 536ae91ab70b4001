// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-schedule,pytc-lower-kernels,canonicalize,cse)' | FileCheck %s

// A shift by the element width or more is poison in arith, so the amount is compared (unsigned, which also
// catches negative amounts) against the width: shl selects 0 there.
// CHECK-LABEL: func.func @E_8(
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<8xi32>
// CHECK: %[[N:.*]] = memref.load %{{.*}} : memref<8xi32>
// CHECK: %[[FAR:.*]] = arith.cmpi uge, %[[N]], %{{.*}} : i32
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[X]], %[[N]] : i32
// CHECK: arith.select %[[FAR]], %{{.*}}, %[[SHIFTED]] : i32
func.func @shift_left(%a: tensor<8xi32>, %b: tensor<8xi32>) {
  %s = uop.shl %a, %b : tensor<8xi32>
  uop.sink %s : tensor<8xi32>
  return
}

// -----

// Signed shr clamps the amount to width - 1, filling with the sign bit.
// CHECK-LABEL: func.func @E_8(
// CHECK: %[[FAR:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : i8
// CHECK: %[[AMOUNT:.*]] = arith.select %[[FAR]], %{{.*}}, %{{.*}} : i8
// CHECK: arith.shrsi %{{.*}}, %[[AMOUNT]] : i8
func.func @shift_right_signed(%a: tensor<8xi8>, %b: tensor<8xi8>) {
  %s = uop.shr %a, %b : tensor<8xi8>
  uop.sink %s : tensor<8xi8>
  return
}

// -----

// Unsigned shr selects 0 past the width, like shl.
// CHECK-LABEL: func.func @E_8(
// CHECK: %[[FAR:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : i16
// CHECK: %[[SHIFTED:.*]] = arith.shrui %{{.*}}, %{{.*}} : i16
// CHECK: arith.select %[[FAR]], %{{.*}}, %[[SHIFTED]] : i16
func.func @shift_right_unsigned(%a: tensor<8xui16>, %b: tensor<8xui16>) {
  %s = uop.shr %a, %b : tensor<8xui16>
  uop.sink %s : tensor<8xui16>
  return
}
