// RUN: pytc-opt %s --split-input-file -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @unary_float
// CHECK-NEXT: %[[NEG:.*]] = uop.const -2.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[EXP2:.*]] = uop.const 4.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[LOG2:.*]] = uop.const 1.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[SIN:.*]] = uop.const 0.909297{{[0-9]*}} : tensor<4xf32>
// CHECK-NEXT: %[[SQRT:.*]] = uop.const 1.414213{{[0-9]*}} : tensor<4xf32>
// CHECK-NEXT: %[[RECIP:.*]] = uop.const 5.000000e-01 : tensor<4xf32>
// CHECK-NEXT: %[[TRUNC:.*]] = uop.const -3.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[TANH:.*]] = uop.const -0.998894{{[0-9]*}} : tensor<4xf32>
// CHECK-NEXT: uop.sink %[[NEG]], %[[EXP2]], %[[LOG2]], %[[SIN]], %[[SQRT]], %[[RECIP]], %[[TRUNC]], %[[TANH]] :
func.func @unary_float() {
  %c = uop.const 2.0 : tensor<4xf32>
  %t = uop.const -3.75 : tensor<4xf32>
  %0 = uop.neg %c : tensor<4xf32>
  %1 = uop.exp2 %c : tensor<4xf32>
  %2 = uop.log2 %c : tensor<4xf32>
  %3 = uop.sin %c : tensor<4xf32>
  %4 = uop.sqrt %c : tensor<4xf32>
  %5 = uop.recip %c : tensor<4xf32>
  %6 = uop.trunc %t : tensor<4xf32>
  %7 = uop.tanh %t : tensor<4xf32>
  uop.sink %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// IEEE results: 1/0 = inf, log2(0) = -inf, sqrt(-4) = NaN.
// CHECK-LABEL: func.func @unary_special
// CHECK-NEXT: %[[INF:.*]] = uop.const 0x7F800000 : tensor<4xf32>
// CHECK-NEXT: %[[NINF:.*]] = uop.const 0xFF800000 : tensor<4xf32>
// CHECK-NEXT: %[[NAN:.*]] = uop.const 0x{{7F|FF}}C00000 : tensor<4xf32>
// CHECK-NEXT: uop.sink %[[INF]], %[[NINF]], %[[NAN]] :
func.func @unary_special() {
  %z = uop.const 0.0 : tensor<4xf32>
  %n = uop.const -4.0 : tensor<4xf32>
  %0 = uop.recip %z : tensor<4xf32>
  %1 = uop.log2 %z : tensor<4xf32>
  %2 = uop.sqrt %n : tensor<4xf32>
  uop.sink %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// Results are rounded to the element type.
// CHECK-LABEL: func.func @narrow_floats
// CHECK-NEXT: %[[H:.*]] = uop.const 8.000000e+00 : tensor<2xf16>
// CHECK-NEXT: %[[B:.*]] = uop.const -1.000980e-01 : tensor<2xbf16>
// CHECK-NEXT: %[[D:.*]] = uop.const 0.47942553860420301 : tensor<2xf64>
// CHECK-NEXT: %[[O:.*]] = uop.const 0x7C00 : tensor<2xf16>
// CHECK-NEXT: uop.sink %[[H]], %[[B]], %[[D]], %[[O]] :
func.func @narrow_floats() {
  %c = uop.const 3.0 : tensor<2xf16>
  %0 = uop.exp2 %c : tensor<2xf16>
  %b = uop.const 0.1 : tensor<2xbf16>
  %1 = uop.neg %b : tensor<2xbf16>
  %d = uop.const 0.5 : tensor<2xf64>
  %2 = uop.sin %d : tensor<2xf64>
  %big = uop.const 60000.0 : tensor<2xf16>
  %3 = uop.add %big, %big : tensor<2xf16>
  uop.sink %0, %1, %2, %3 : tensor<2xf16>, tensor<2xbf16>, tensor<2xf64>, tensor<2xf16>
  return
}

// -----

// Integer negation wraps at the element width.
// CHECK-LABEL: func.func @neg_int
// CHECK-NEXT: %[[I:.*]] = uop.const -5 : tensor<3xi32>
// CHECK-NEXT: %[[U:.*]] = uop.const 255 : tensor<3xui8>
// CHECK-NEXT: %[[M:.*]] = uop.const -128 : tensor<3xi8>
// CHECK-NEXT: uop.sink %[[I]], %[[U]], %[[M]] :
func.func @neg_int() {
  %i = uop.const 5 : tensor<3xi32>
  %u = uop.const 1 : tensor<3xui8>
  %m = uop.const -128 : tensor<3xi8>
  %0 = uop.neg %i : tensor<3xi32>
  %1 = uop.neg %u : tensor<3xui8>
  %2 = uop.neg %m : tensor<3xi8>
  uop.sink %0, %1, %2 : tensor<3xi32>, tensor<3xui8>, tensor<3xi8>
  return
}

// -----

// CHECK-LABEL: func.func @binary_float
// CHECK-NEXT: %[[ADD:.*]] = uop.const -2.500000e+00 : tensor<2xf32>
// CHECK-NEXT: %[[MUL:.*]] = uop.const -6.000000e+00 : tensor<2xf32>
// CHECK-NEXT: %[[MAX:.*]] = uop.const 1.500000e+00 : tensor<2xf32>
// CHECK-NEXT: %[[POWNAN:.*]] = uop.const 0x{{7F|FF}}C00000 : tensor<2xf32>
// CHECK-NEXT: %[[POW:.*]] = uop.const 1.600000e+01 : tensor<2xf32>
// CHECK-NEXT: uop.sink %[[ADD]], %[[MUL]], %[[MAX]], %[[POWNAN]], %[[POW]] :
func.func @binary_float() {
  %a = uop.const 1.5 : tensor<2xf32>
  %b = uop.const -4.0 : tensor<2xf32>
  %c = uop.const 2.0 : tensor<2xf32>
  %0 = uop.add %a, %b : tensor<2xf32>
  %1 = uop.mul %a, %b : tensor<2xf32>
  %2 = uop.max %a, %b : tensor<2xf32>
  %3 = uop.pow %b, %a : tensor<2xf32>
  %4 = uop.pow %b, %c : tensor<2xf32>
  uop.sink %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  return
}

// -----

// max propagates NaN from either side.
// CHECK-LABEL: func.func @max_nan
// CHECK-NEXT: %[[NAN:.*]] = uop.const 0x7FF8000000000000 : tensor<2xf64>
// CHECK-NEXT: uop.sink %[[NAN]], %[[NAN]] :
func.func @max_nan() {
  %a = uop.const 1.0 : tensor<2xf64>
  %nan = uop.const 0x7FF8000000000000 : tensor<2xf64>
  %0 = uop.max %a, %nan : tensor<2xf64>
  %1 = uop.max %nan, %a : tensor<2xf64>
  uop.sink %0, %1 : tensor<2xf64>, tensor<2xf64>
  return
}

// -----

// CHECK-LABEL: func.func @binary_int
// CHECK-NEXT: %[[ADD:.*]] = uop.const 5 : tensor<2xi32>
// CHECK-NEXT: %[[MUL:.*]] = uop.const -14 : tensor<2xi32>
// CHECK-NEXT: %[[MAX:.*]] = uop.const 7 : tensor<2xi32>
// CHECK-NEXT: %[[AND:.*]] = uop.const 6 : tensor<2xi32>
// CHECK-NEXT: %[[OR:.*]] = uop.const -1 : tensor<2xi32>
// CHECK-NEXT: %[[XOR:.*]] = uop.const -7 : tensor<2xi32>
// CHECK-NEXT: uop.sink %[[ADD]], %[[MUL]], %[[MAX]], %[[AND]], %[[OR]], %[[XOR]] :
func.func @binary_int() {
  %a = uop.const 7 : tensor<2xi32>
  %b = uop.const -2 : tensor<2xi32>
  %0 = uop.add %a, %b : tensor<2xi32>
  %1 = uop.mul %a, %b : tensor<2xi32>
  %2 = uop.max %a, %b : tensor<2xi32>
  %3 = uop.and %a, %b : tensor<2xi32>
  %4 = uop.or %a, %b : tensor<2xi32>
  %5 = uop.xor %a, %b : tensor<2xi32>
  uop.sink %0, %1, %2, %3, %4, %5 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>
  return
}

// -----

// Unsigned arithmetic wraps modulo 256 and max compares unsigned (200 > 100).
// CHECK-LABEL: func.func @binary_unsigned
// CHECK-NEXT: %[[ADD:.*]] = uop.const 44 : tensor<2xui8>
// CHECK-NEXT: %[[MAX:.*]] = uop.const 200 : tensor<2xui8>
// CHECK-NEXT: %[[MUL:.*]] = uop.const 32 : tensor<2xui8>
// CHECK-NEXT: uop.sink %[[ADD]], %[[MAX]], %[[MUL]] :
func.func @binary_unsigned() {
  %a = uop.const 200 : tensor<2xui8>
  %b = uop.const 100 : tensor<2xui8>
  %0 = uop.add %a, %b : tensor<2xui8>
  %1 = uop.max %a, %b : tensor<2xui8>
  %2 = uop.mul %a, %b : tensor<2xui8>
  uop.sink %0, %1, %2 : tensor<2xui8>, tensor<2xui8>, tensor<2xui8>
  return
}

// -----

// idiv truncates toward zero; mod has the sign of the dividend.
// CHECK-LABEL: func.func @idiv_mod
// CHECK-NEXT: %[[P3:.*]] = uop.const 3 : tensor<2xi32>
// CHECK-NEXT: %[[P1:.*]] = uop.const 1 : tensor<2xi32>
// CHECK-NEXT: %[[N3:.*]] = uop.const -3 : tensor<2xi32>
// CHECK-NEXT: %[[N1:.*]] = uop.const -1 : tensor<2xi32>
// CHECK-NEXT: uop.sink %[[P3]], %[[P1]], %[[N3]], %[[N1]], %[[N3]], %[[P1]], %[[P3]], %[[N1]] :
func.func @idiv_mod() {
  %a = uop.const 7 : tensor<2xi32>
  %b = uop.const 2 : tensor<2xi32>
  %na = uop.const -7 : tensor<2xi32>
  %nb = uop.const -2 : tensor<2xi32>
  %0 = uop.idiv %a, %b : tensor<2xi32>
  %1 = uop.mod %a, %b : tensor<2xi32>
  %2 = uop.idiv %na, %b : tensor<2xi32>
  %3 = uop.mod %na, %b : tensor<2xi32>
  %4 = uop.idiv %a, %nb : tensor<2xi32>
  %5 = uop.mod %a, %nb : tensor<2xi32>
  %6 = uop.idiv %na, %nb : tensor<2xi32>
  %7 = uop.mod %na, %nb : tensor<2xi32>
  uop.sink %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>
  return
}

// -----

// 250 is -6 as i8: an unsigned division must not see it as negative.
// CHECK-LABEL: func.func @idiv_mod_unsigned
// CHECK-NEXT: %[[DIV:.*]] = uop.const 35 : tensor<2xui8>
// CHECK-NEXT: %[[MOD:.*]] = uop.const 5 : tensor<2xui8>
// CHECK-NEXT: uop.sink %[[DIV]], %[[MOD]] :
func.func @idiv_mod_unsigned() {
  %a = uop.const 250 : tensor<2xui8>
  %b = uop.const 7 : tensor<2xui8>
  %0 = uop.idiv %a, %b : tensor<2xui8>
  %1 = uop.mod %a, %b : tensor<2xui8>
  uop.sink %0, %1 : tensor<2xui8>, tensor<2xui8>
  return
}

// -----

// Division by zero and INT_MIN / -1 are left for run time.
// CHECK-LABEL: func.func @division_not_folded
// CHECK-DAG: %[[SEVEN:.*]] = uop.const 7 : tensor<2xi32>
// CHECK-DAG: %[[ZERO:.*]] = uop.const 0 : tensor<2xi32>
// CHECK-DAG: %[[MIN:.*]] = uop.const -2147483648 : tensor<2xi32>
// CHECK-DAG: %[[M1:.*]] = uop.const -1 : tensor<2xi32>
// CHECK: %[[DIV:.*]] = uop.idiv %[[SEVEN]], %[[ZERO]] : tensor<2xi32>
// CHECK-NEXT: %[[MOD:.*]] = uop.mod %[[SEVEN]], %[[ZERO]] : tensor<2xi32>
// CHECK-NEXT: %[[OVF:.*]] = uop.idiv %[[MIN]], %[[M1]] : tensor<2xi32>
// CHECK-NEXT: uop.sink %[[DIV]], %[[MOD]], %[[OVF]] :
func.func @division_not_folded() {
  %a = uop.const 7 : tensor<2xi32>
  %z = uop.const 0 : tensor<2xi32>
  %0 = uop.idiv %a, %z : tensor<2xi32>
  %1 = uop.mod %a, %z : tensor<2xi32>
  %min = uop.const -2147483648 : tensor<2xi32>
  %m1 = uop.const -1 : tensor<2xi32>
  %2 = uop.idiv %min, %m1 : tensor<2xi32>
  uop.sink %0, %1, %2 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>
  return
}

// -----

// shr is arithmetic on signed and logical on unsigned types; a shift by the
// width or more is not folded.
// CHECK-LABEL: func.func @shifts
// CHECK-DAG: %[[EIGHT:.*]] = uop.const 8 : tensor<2xi8>
// CHECK-DAG: %[[A:.*]] = uop.const -16 : tensor<2xi8>
// CHECK-DAG: %[[SHL:.*]] = uop.const -64 : tensor<2xi8>
// CHECK-DAG: %[[SHR:.*]] = uop.const -4 : tensor<2xi8>
// CHECK-DAG: %[[LSHR:.*]] = uop.const 60 : tensor<2xui8>
// CHECK-DAG: %[[USHL:.*]] = uop.const 192 : tensor<2xui8>
// CHECK: %[[WIDE:.*]] = uop.shl %[[A]], %[[EIGHT]] : tensor<2xi8>
// CHECK-NEXT: uop.sink %[[SHL]], %[[SHR]], %[[LSHR]], %[[USHL]], %[[WIDE]] :
func.func @shifts() {
  %a = uop.const -16 : tensor<2xi8>
  %u = uop.const 240 : tensor<2xui8>
  %s = uop.const 2 : tensor<2xi8>
  %su = uop.const 2 : tensor<2xui8>
  %0 = uop.shl %a, %s : tensor<2xi8>
  %1 = uop.shr %a, %s : tensor<2xi8>
  %2 = uop.shr %u, %su : tensor<2xui8>
  %3 = uop.shl %u, %su : tensor<2xui8>
  %big = uop.const 8 : tensor<2xi8>
  %4 = uop.shl %a, %big : tensor<2xi8>
  uop.sink %0, %1, %2, %3, %4 : tensor<2xi8>, tensor<2xi8>, tensor<2xui8>, tensor<2xui8>, tensor<2xi8>
  return
}

// -----

// On i1, true > false.
// CHECK-LABEL: func.func @bool_ops
// CHECK-NEXT: %[[F:.*]] = uop.const false : tensor<2xi1>
// CHECK-NEXT: %[[T:.*]] = uop.const true : tensor<2xi1>
// CHECK-NEXT: uop.sink %[[F]], %[[T]], %[[F]], %[[T]], %[[T]], %[[F]] :
func.func @bool_ops() {
  %t = uop.const true : tensor<2xi1>
  %f = uop.const false : tensor<2xi1>
  %0 = uop.and %t, %f : tensor<2xi1>
  %1 = uop.or %t, %f : tensor<2xi1>
  %2 = uop.xor %t, %t : tensor<2xi1>
  %3 = uop.max %f, %t : tensor<2xi1>
  %4 = uop.cmplt %f, %t : tensor<2xi1>
  %5 = uop.cmplt %t, %f : tensor<2xi1>
  uop.sink %0, %1, %2, %3, %4, %5 : tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>
  return
}

// -----

// Comparisons on floats, signed ints (-1 < 1), unsigned ints (255 > 1) and NaN.
// CHECK-LABEL: func.func @compare
// CHECK-NEXT: %[[T:.*]] = uop.const true : tensor<2xi1>
// CHECK-NEXT: %[[F:.*]] = uop.const false : tensor<2xi1>
// CHECK-NEXT: uop.sink %[[T]], %[[F]], %[[T]], %[[T]], %[[T]], %[[F]], %[[F]], %[[T]], %[[F]], %[[T]] :
func.func @compare() {
  %a = uop.const 1.0 : tensor<2xf32>
  %b = uop.const 2.0 : tensor<2xf32>
  %0 = uop.cmplt %a, %b : tensor<2xf32>
  %1 = uop.cmplt %b, %a : tensor<2xf32>
  %2 = uop.cmpne %a, %b : tensor<2xf32>
  %3 = uop.cmpeq %a, %a : tensor<2xf32>
  %i = uop.const -1 : tensor<2xi32>
  %j = uop.const 1 : tensor<2xi32>
  %4 = uop.cmplt %i, %j : tensor<2xi32>
  %5 = uop.cmpeq %i, %j : tensor<2xi32>
  %u = uop.const 255 : tensor<2xui8>
  %v = uop.const 1 : tensor<2xui8>
  %6 = uop.cmplt %u, %v : tensor<2xui8>
  %7 = uop.cmpne %u, %v : tensor<2xui8>
  %nan = uop.const 0x7FC00000 : tensor<2xf32>
  %8 = uop.cmpeq %nan, %nan : tensor<2xf32>
  %9 = uop.cmpne %nan, %nan : tensor<2xf32>
  uop.sink %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>
  return
}

// -----

// CHECK-LABEL: func.func @mulacc
// CHECK-NEXT: %[[F:.*]] = uop.const 6.500000e+00 : tensor<3xf32>
// CHECK-NEXT: %[[I:.*]] = uop.const -16 : tensor<3xi16>
// CHECK-NEXT: uop.sink %[[F]], %[[I]] :
func.func @mulacc() {
  %a = uop.const 2.0 : tensor<3xf32>
  %b = uop.const 3.0 : tensor<3xf32>
  %c = uop.const 0.5 : tensor<3xf32>
  %0 = uop.mulacc %a, %b, %c : tensor<3xf32>
  %i = uop.const 4 : tensor<3xi16>
  %j = uop.const -5 : tensor<3xi16>
  %1 = uop.mulacc %i, %j, %i : tensor<3xi16>
  uop.sink %0, %1 : tensor<3xf32>, tensor<3xi16>
  return
}

// -----

// CHECK-LABEL: func.func @where
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xi1>)
// CHECK-NEXT: return %[[X]], %[[Y]], %[[X]] :
func.func @where(%x: tensor<4xf32>, %y: tensor<4xf32>, %c: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = uop.const true : tensor<4xi1>
  %f = uop.const false : tensor<4xi1>
  %0 = uop.where %t, %x, %y : tensor<4xf32>
  %1 = uop.where %f, %x, %y : tensor<4xf32>
  %2 = uop.where %c, %x, %x : tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @where_kept
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xi1>)
// CHECK-NEXT: %[[W:.*]] = uop.where %[[C]], %[[X]], %[[Y]] : tensor<4xf32>
// CHECK-NEXT: return %[[W]]
func.func @where_kept(%x: tensor<4xf32>, %y: tensor<4xf32>, %c: tensor<4xi1>) -> tensor<4xf32> {
  %0 = uop.where %c, %x, %y : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Floats to ints truncate toward zero, anything to i1 is `!= 0`, signed ints
// sign-extend, unsigned ints and i1 zero-extend, narrowing keeps the low bits.
// CHECK-LABEL: func.func @cast
// CHECK-NEXT: %[[F2I:.*]] = uop.const -2 : tensor<2xi32>
// CHECK-NEXT: %[[F2B:.*]] = uop.const true : tensor<2xi1>
// CHECK-NEXT: %[[F2H:.*]] = uop.const -2.750000e+00 : tensor<2xf16>
// CHECK-NEXT: %[[I2F:.*]] = uop.const -3.000000e+00 : tensor<2xf32>
// CHECK-NEXT: %[[SEXT:.*]] = uop.const -3 : tensor<2xi32>
// CHECK-NEXT: %[[ZEXT:.*]] = uop.const 200 : tensor<2xi32>
// CHECK-NEXT: %[[U2F:.*]] = uop.const 2.000000e+02 : tensor<2xf32>
// CHECK-NEXT: %[[B2I:.*]] = uop.const 1 : tensor<2xi32>
// CHECK-NEXT: %[[B2F:.*]] = uop.const 1.000000e+00 : tensor<2xf32>
// CHECK-NEXT: %[[I2B:.*]] = uop.const false : tensor<2xi1>
// CHECK-NEXT: %[[NARROW:.*]] = uop.const 44 : tensor<2xui8>
// CHECK-NEXT: uop.sink %[[F2I]], %[[F2B]], %[[F2H]], %[[I2F]], %[[SEXT]], %[[ZEXT]], %[[U2F]], %[[B2I]], %[[B2F]], %[[I2B]], %[[NARROW]] :
func.func @cast() {
  %f = uop.const -2.75 : tensor<2xf32>
  %0 = uop.cast %f : tensor<2xf32> to tensor<2xi32>
  %1 = uop.cast %f : tensor<2xf32> to tensor<2xi1>
  %2 = uop.cast %f : tensor<2xf32> to tensor<2xf16>
  %i = uop.const -3 : tensor<2xi8>
  %3 = uop.cast %i : tensor<2xi8> to tensor<2xf32>
  %4 = uop.cast %i : tensor<2xi8> to tensor<2xi32>
  %u = uop.const 200 : tensor<2xui8>
  %5 = uop.cast %u : tensor<2xui8> to tensor<2xi32>
  %6 = uop.cast %u : tensor<2xui8> to tensor<2xf32>
  %t = uop.const true : tensor<2xi1>
  %7 = uop.cast %t : tensor<2xi1> to tensor<2xi32>
  %8 = uop.cast %t : tensor<2xi1> to tensor<2xf32>
  %z = uop.const 0 : tensor<2xi64>
  %9 = uop.cast %z : tensor<2xi64> to tensor<2xi1>
  %big = uop.const 300 : tensor<2xi32>
  %10 = uop.cast %big : tensor<2xi32> to tensor<2xui8>
  uop.sink %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<2xi32>, tensor<2xi1>, tensor<2xf16>, tensor<2xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi1>, tensor<2xui8>
  return
}

// -----

// A cast to the same type is removed; out-of-range and NaN casts to ints stay.
// CHECK-LABEL: func.func @cast_not_folded
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>)
// CHECK-DAG: %[[NAN:.*]] = uop.const 0x7FC00000 : tensor<2xf32>
// CHECK-DAG: %[[BIG:.*]] = uop.const 1.000000e+03 : tensor<2xf32>
// CHECK: %[[C0:.*]] = uop.cast %[[BIG]] : tensor<2xf32> to tensor<2xi8>
// CHECK-NEXT: %[[C1:.*]] = uop.cast %[[NAN]] : tensor<2xf32> to tensor<2xi32>
// CHECK-NEXT: return %[[X]], %[[C0]], %[[C1]] :
func.func @cast_not_folded(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi8>, tensor<2xi32>) {
  %0 = uop.cast %x : tensor<2xf32> to tensor<2xf32>
  %big = uop.const 1.0e3 : tensor<2xf32>
  %1 = uop.cast %big : tensor<2xf32> to tensor<2xi8>
  %nan = uop.const 0x7FC00000 : tensor<2xf32>
  %2 = uop.cast %nan : tensor<2xf32> to tensor<2xi32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xi8>, tensor<2xi32>
}

// -----

// 1.0f is 0x3F800000 = 1065353216; 0xBF800000 = -1082130432 is -1.0f; 1.0 in
// f16 is 0x3C00 = 15360. A bitcast to the same type is removed.
// CHECK-LABEL: func.func @bitcast
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>)
// CHECK-NEXT: %[[F2I:.*]] = uop.const 1065353216 : tensor<2xi32>
// CHECK-NEXT: %[[I2F:.*]] = uop.const -1.000000e+00 : tensor<2xf32>
// CHECK-NEXT: %[[H2U:.*]] = uop.const 15360 : tensor<2xui16>
// CHECK-NEXT: uop.sink %[[F2I]], %[[I2F]], %[[H2U]] :
// CHECK-NEXT: return %[[X]]
func.func @bitcast(%x: tensor<2xf32>) -> tensor<2xf32> {
  %f = uop.const 1.0 : tensor<2xf32>
  %0 = uop.bitcast %f : tensor<2xf32> to tensor<2xi32>
  %i = uop.const -1082130432 : tensor<2xi32>
  %1 = uop.bitcast %i : tensor<2xi32> to tensor<2xf32>
  %h = uop.const 1.0 : tensor<2xf16>
  %2 = uop.bitcast %h : tensor<2xf16> to tensor<2xui16>
  %3 = uop.bitcast %x : tensor<2xf32> to tensor<2xf32>
  uop.sink %0, %1, %2 : tensor<2xi32>, tensor<2xf32>, tensor<2xui16>
  return %3 : tensor<2xf32>
}

// -----

// Equal constants on different devices stay apart and are not folded into
// device-less ones; equal constants on one device are merged.
// CHECK-LABEL: func.func @const_device
// CHECK-NEXT: %[[CPU:.*]] = uop.const 1.000000e+00 {device = "CPU"} : tensor<4xf32>
// CHECK-NEXT: %[[GPU:.*]] = uop.const 1.000000e+00 {device = "GPU"} : tensor<4xf32>
// CHECK-NEXT: %[[NONE:.*]] = uop.const 1.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[NEG:.*]] = uop.neg %[[GPU]] : tensor<4xf32>
// CHECK-NEXT: uop.sink %[[CPU]], %[[GPU]], %[[NONE]], %[[NEG]], %[[GPU]] :
func.func @const_device() {
  %a = uop.const 1.0 {device = "CPU"} : tensor<4xf32>
  %b = uop.const 1.0 {device = "GPU"} : tensor<4xf32>
  %c = uop.const 1.0 : tensor<4xf32>
  %d = uop.neg %b : tensor<4xf32>
  %e = uop.const 1.0 {device = "GPU"} : tensor<4xf32>
  uop.sink %a, %b, %c, %d, %e : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = uop.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = uop.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = uop.reshape %0 : tensor<6x4xf32> -> tensor<24xf32>
  %2 = uop.reshape %1 : tensor<24xf32> -> tensor<4x6xf32>
  return %2 : tensor<4x6xf32>
}

// -----

// The inner reshape keeps its other use.
// CHECK-LABEL: func.func @reshape_reshape_shared
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[R0:.*]] = uop.reshape %[[X]] : tensor<2x3xf32> -> tensor<6xf32>
// CHECK-NEXT: %[[R1:.*]] = uop.reshape %[[X]] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT: return %[[R0]], %[[R1]]
func.func @reshape_reshape_shared(%x: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {
  %0 = uop.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = uop.reshape %0 : tensor<6xf32> -> tensor<3x2xf32>
  return %0, %1 : tensor<6xf32>, tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]] :
func.func @reshape_identity(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = uop.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = uop.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %2 = uop.reshape %1 : tensor<6xf32> -> tensor<2x3xf32>
  return %0, %2 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_splat
// CHECK-NEXT: %[[C:.*]] = uop.const 7 : tensor<3x2xi32>
// CHECK-NEXT: return %[[C]]
func.func @reshape_splat() -> tensor<3x2xi32> {
  %c = uop.const 7 : tensor<6xi32>
  %0 = uop.reshape %c : tensor<6xi32> -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}

// -----

// permute [2, 1, 0] of permute [2, 0, 1] reads source dims [1, 0, 2].
// CHECK-LABEL: func.func @permute_permute
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[P:.*]] = uop.permute %[[X]] [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
// CHECK-NEXT: return %[[P]]
func.func @permute_permute(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %0 = uop.permute %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %1 = uop.permute %0 [2, 1, 0] : tensor<4x2x3xf32> -> tensor<3x2x4xf32>
  return %1 : tensor<3x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @permute_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]] :
func.func @permute_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = uop.permute %x [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// [2, 0, 1] undoes [1, 2, 0]: the pair is removed.
// CHECK-LABEL: func.func @permute_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]] :
func.func @permute_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = uop.permute %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = uop.permute %0 [2, 0, 1] : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// A transpose of a square tensor keeps the type but is not an identity.
// CHECK-LABEL: func.func @permute_square
// CHECK-SAME: (%[[X:.*]]: tensor<3x3xf32>)
// CHECK-NEXT: %[[P:.*]] = uop.permute %[[X]] [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
// CHECK-NEXT: return %[[P]]
func.func @permute_square(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = uop.permute %x [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @permute_splat
// CHECK-NEXT: %[[C:.*]] = uop.const 1.000000e+00 : tensor<3x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @permute_splat() -> tensor<3x2xf32> {
  %c = uop.const 1.0 : tensor<2x3xf32>
  %0 = uop.permute %c [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @expand_splat
// CHECK-NEXT: %[[C:.*]] = uop.const 2.500000e+00 : tensor<4x3xf32>
// CHECK-NEXT: return %[[C]]
func.func @expand_splat() -> tensor<4x3xf32> {
  %c = uop.const 2.5 : tensor<1x3xf32>
  %0 = uop.expand %c : tensor<1x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @expand_identity
// CHECK-SAME: (%[[X:.*]]: tensor<1x3xf32>)
// CHECK-NEXT: return %[[X]] :
func.func @expand_identity(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %0 = uop.expand %x : tensor<1x3xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// CHECK-LABEL: func.func @expand_expand
// CHECK-SAME: (%[[X:.*]]: tensor<1x1xf32>)
// CHECK-NEXT: %[[E:.*]] = uop.expand %[[X]] : tensor<1x1xf32> -> tensor<4x5xf32>
// CHECK-NEXT: return %[[E]]
func.func @expand_expand(%x: tensor<1x1xf32>) -> tensor<4x5xf32> {
  %0 = uop.expand %x : tensor<1x1xf32> -> tensor<4x1xf32>
  %1 = uop.expand %0 : tensor<4x1xf32> -> tensor<4x5xf32>
  return %1 : tensor<4x5xf32>
}

// -----

// CHECK-LABEL: func.func @pad_zero
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]] :
func.func @pad_zero(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = uop.pad %x low [0, 0] high [0, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Padding a splat adds zeros: the result is no longer a splat.
// CHECK-LABEL: func.func @pad_splat_kept
// CHECK-NEXT: %[[C:.*]] = uop.const 1.000000e+00 : tensor<2x3xf32>
// CHECK-NEXT: %[[P:.*]] = uop.pad %[[C]] low [1, 0] high [0, 0] : tensor<2x3xf32> -> tensor<3x3xf32>
// CHECK-NEXT: return %[[P]]
func.func @pad_splat_kept() -> tensor<3x3xf32> {
  %c = uop.const 1.0 : tensor<2x3xf32>
  %0 = uop.pad %c low [1, 0] high [0, 0] : tensor<2x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @shrink_full
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]] :
func.func @shrink_full(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = uop.shrink %x [0, 0] to [2, 3] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Offsets add up: [2, 1] + [1, 3] = [3, 4] and [2, 1] + [4, 5] = [6, 6].
// CHECK-LABEL: func.func @shrink_shrink
// CHECK-SAME: (%[[X:.*]]: tensor<10x8xf32>)
// CHECK-NEXT: %[[S:.*]] = uop.shrink %[[X]] [3, 4] to [6, 6] : tensor<10x8xf32> -> tensor<3x2xf32>
// CHECK-NEXT: return %[[S]]
func.func @shrink_shrink(%x: tensor<10x8xf32>) -> tensor<3x2xf32> {
  %0 = uop.shrink %x [2, 1] to [9, 7] : tensor<10x8xf32> -> tensor<7x6xf32>
  %1 = uop.shrink %0 [1, 3] to [4, 5] : tensor<7x6xf32> -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @shrink_splat
// CHECK-NEXT: %[[C:.*]] = uop.const -3 : tensor<1x2xi8>
// CHECK-NEXT: return %[[C]]
func.func @shrink_splat() -> tensor<1x2xi8> {
  %c = uop.const -3 : tensor<4x4xi8>
  %0 = uop.shrink %c [1, 1] to [2, 3] : tensor<4x4xi8> -> tensor<1x2xi8>
  return %0 : tensor<1x2xi8>
}

// -----

// The window [2, 4) x [3, 6) lies inside the copy of %x at [1, 5) x [2, 7).
// CHECK-LABEL: func.func @shrink_of_pad
// CHECK-SAME: (%[[X:.*]]: tensor<4x5xf32>)
// CHECK-NEXT: %[[S:.*]] = uop.shrink %[[X]] [1, 1] to [3, 4] : tensor<4x5xf32> -> tensor<2x3xf32>
// CHECK-NEXT: return %[[S]]
func.func @shrink_of_pad(%x: tensor<4x5xf32>) -> tensor<2x3xf32> {
  %0 = uop.pad %x low [1, 2] high [3, 0] : tensor<4x5xf32> -> tensor<8x7xf32>
  %1 = uop.shrink %0 [2, 3] to [4, 6] : tensor<8x7xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Shrinking exactly to the unpadded region gives back the source.
// CHECK-LABEL: func.func @shrink_of_pad_exact
// CHECK-SAME: (%[[X:.*]]: tensor<4x5xf32>)
// CHECK-NEXT: return %[[X]] :
func.func @shrink_of_pad_exact(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %0 = uop.pad %x low [1, 2] high [3, 0] : tensor<4x5xf32> -> tensor<8x7xf32>
  %1 = uop.shrink %0 [1, 2] to [5, 7] : tensor<8x7xf32> -> tensor<4x5xf32>
  return %1 : tensor<4x5xf32>
}

// -----

// Windows that reach into the low or the high padding are kept.
// CHECK-LABEL: func.func @shrink_into_padding
// CHECK-SAME: (%[[X:.*]]: tensor<4x5xf32>)
// CHECK-NEXT: %[[P:.*]] = uop.pad %[[X]] low [1, 2] high [3, 0] : tensor<4x5xf32> -> tensor<8x7xf32>
// CHECK-NEXT: %[[LOW:.*]] = uop.shrink %[[P]] [0, 3] to [2, 6] : tensor<8x7xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[HIGH:.*]] = uop.shrink %[[P]] [4, 3] to [6, 6] : tensor<8x7xf32> -> tensor<2x3xf32>
// CHECK-NEXT: return %[[LOW]], %[[HIGH]]
func.func @shrink_into_padding(%x: tensor<4x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = uop.pad %x low [1, 2] high [3, 0] : tensor<4x5xf32> -> tensor<8x7xf32>
  %1 = uop.shrink %0 [0, 3] to [2, 6] : tensor<8x7xf32> -> tensor<2x3xf32>
  %2 = uop.shrink %0 [4, 3] to [6, 6] : tensor<8x7xf32> -> tensor<2x3xf32>
  return %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// The axes match as sets.
// CHECK-LABEL: func.func @flip_flip
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]] :
func.func @flip_flip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = uop.flip %x [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = uop.flip %0 [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @flip_flip_other_axes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[F0:.*]] = uop.flip %[[X]] [0] : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[F1:.*]] = uop.flip %[[F0]] [1] : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: return %[[F1]]
func.func @flip_flip_other_axes(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = uop.flip %x [0] : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = uop.flip %0 [1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Flipping only size-1 dims (or none) is an identity.
// CHECK-LABEL: func.func @flip_unit_dims
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x1xf32>)
// CHECK-NEXT: %[[F:.*]] = uop.flip %[[X]] [0, 1] : tensor<1x3x1xf32> -> tensor<1x3x1xf32>
// CHECK-NEXT: return %[[X]], %[[F]], %[[X]] :
func.func @flip_unit_dims(%x: tensor<1x3x1xf32>) -> (tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>) {
  %0 = uop.flip %x [0, 2] : tensor<1x3x1xf32> -> tensor<1x3x1xf32>
  %1 = uop.flip %x [0, 1] : tensor<1x3x1xf32> -> tensor<1x3x1xf32>
  %2 = uop.flip %x [] : tensor<1x3x1xf32> -> tensor<1x3x1xf32>
  return %0, %1, %2 : tensor<1x3x1xf32>, tensor<1x3x1xf32>, tensor<1x3x1xf32>
}

// -----

// CHECK-LABEL: func.func @flip_splat
// CHECK-NEXT: %[[C:.*]] = uop.const 3.000000e+00 : tensor<4xf32>
// CHECK-NEXT: return %[[C]]
func.func @flip_splat() -> tensor<4xf32> {
  %c = uop.const 3.0 : tensor<4xf32>
  %0 = uop.flip %c [0] : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// contiguous forces a buffer: it stays, even on a constant.
// CHECK-LABEL: func.func @contiguous_kept
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[C:.*]] = uop.const 3.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[A:.*]] = uop.contiguous %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = uop.contiguous %[[C]] : tensor<4xf32>
// CHECK-NEXT: uop.sink %[[B]] : tensor<4xf32>
// CHECK-NEXT: return %[[A]]
func.func @contiguous_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = uop.const 3.0 : tensor<4xf32>
  %0 = uop.contiguous %x : tensor<4xf32>
  %1 = uop.contiguous %c : tensor<4xf32>
  uop.sink %1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Unused pure ops go; assign and sink write memory and stay.
// CHECK-LABEL: func.func @side_effects
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: uop.assign %[[X]], %[[X]] : tensor<4xf32>
// CHECK-NEXT: uop.sink{{$}}
// CHECK-NEXT: return %[[X]]
func.func @side_effects(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = uop.exp2 %x : tensor<4xf32>
  %1 = uop.copy %x to "GPU" : tensor<4xf32>
  %2 = uop.contiguous %x : tensor<4xf32>
  %3 = uop.assign %x, %x : tensor<4xf32>
  uop.sink
  return %x : tensor<4xf32>
}

// -----

// cos, exp and log of constants fold in double precision, rounded once to the element type; log(0) = -inf,
// exp(-inf) = 0, log(-1) = NaN.
// CHECK-LABEL: func.func @cos_exp_log
// CHECK-NEXT: %[[COS:.*]] = uop.const -0.416146{{[0-9]*}} : tensor<4xf32>
// CHECK-NEXT: %[[EXP:.*]] = uop.const 7.389056{{[0-9]*}} : tensor<4xf32>
// CHECK-NEXT: %[[LOG:.*]] = uop.const 0.693147{{[0-9]*}} : tensor<4xf32>
// CHECK-NEXT: %[[NINF:.*]] = uop.const 0xFF800000 : tensor<4xf32>
// CHECK-NEXT: %[[ZERO:.*]] = uop.const 0.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[NAN:.*]] = uop.const 0x{{7F|FF}}C00000 : tensor<4xf32>
// CHECK-NEXT: %[[HALF:.*]] = uop.const 7.3906{{[0-9]*}}e+00 : tensor<2xf16>
// CHECK-NEXT: uop.sink %[[COS]], %[[EXP]], %[[LOG]], %[[NINF]], %[[ZERO]], %[[NAN]], %[[HALF]] :
func.func @cos_exp_log() {
  %c = uop.const 2.0 : tensor<4xf32>
  %z = uop.const 0.0 : tensor<4xf32>
  %m = uop.const 0xFF800000 : tensor<4xf32>
  %n = uop.const -1.0 : tensor<4xf32>
  %h = uop.const 2.0 : tensor<2xf16>
  %0 = uop.cos %c : tensor<4xf32>
  %1 = uop.exp %c : tensor<4xf32>
  %2 = uop.log %c : tensor<4xf32>
  %3 = uop.log %z : tensor<4xf32>
  %4 = uop.exp %m : tensor<4xf32>
  %5 = uop.log %n : tensor<4xf32>
  %6 = uop.exp %h : tensor<2xf16>
  uop.sink %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf16>
  return
}
