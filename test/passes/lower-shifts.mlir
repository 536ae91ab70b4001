// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-lower-kernels,canonicalize,cse)' | FileCheck %s

// A shift by the element width or more is poison in arith, so the amount is compared (unsigned, which also
// catches negative amounts) against the width: shl selects 0 there.
// CHECK-LABEL: func.func @shift_left(
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<8xi32>
// CHECK: %[[N:.*]] = memref.load %{{.*}} : memref<8xi32>
// CHECK: %[[FAR:.*]] = arith.cmpi uge, %[[N]], %{{.*}} : i32
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[X]], %[[N]] : i32
// CHECK: arith.select %[[FAR]], %{{.*}}, %[[SHIFTED]] : i32
func.func @shift_left(%out: memref<8xi32>, %x: memref<8xi32>, %n: memref<8xi32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xi32>
  %n_i = uop.index %n[%i] : memref<8xi32>
  %r = uop.shl %x_i, %n_i : i32
  %w = uop.store %r, %out[%i] : memref<8xi32>
  %e = uop.end %w over(%i) : memref<8xi32>
  return
}

// -----

// Signed shr clamps the amount to width - 1, filling with the sign bit.
// CHECK-LABEL: func.func @shift_right_signed(
// CHECK: %[[FAR:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : i8
// CHECK: %[[AMOUNT:.*]] = arith.select %[[FAR]], %{{.*}}, %{{.*}} : i8
// CHECK: arith.shrsi %{{.*}}, %[[AMOUNT]] : i8
func.func @shift_right_signed(%out: memref<8xi8>, %x: memref<8xi8>, %n: memref<8xi8>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xi8>
  %n_i = uop.index %n[%i] : memref<8xi8>
  %r = uop.shr %x_i, %n_i : i8
  %w = uop.store %r, %out[%i] : memref<8xi8>
  %e = uop.end %w over(%i) : memref<8xi8>
  return
}

// -----

// Unsigned shr selects 0 past the width, like shl.
// CHECK-LABEL: func.func @shift_right_unsigned(
// CHECK: %[[FAR:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : i16
// CHECK: %[[SHIFTED:.*]] = arith.shrui %{{.*}}, %{{.*}} : i16
// CHECK: arith.select %[[FAR]], %{{.*}}, %[[SHIFTED]] : i16
func.func @shift_right_unsigned(%out: memref<8xui16>, %x: memref<8xui16>, %n: memref<8xui16>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xui16>
  %n_i = uop.index %n[%i] : memref<8xui16>
  %r = uop.shr %x_i, %n_i : ui16
  %w = uop.store %r, %out[%i] : memref<8xui16>
  %e = uop.end %w over(%i) : memref<8xui16>
  return
}
