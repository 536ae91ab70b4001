// RUN: pytc-opt %s --split-input-file | pytc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @const_float
// CHECK-NEXT: uop.const 1.500000e+00 : tensor<4x4xf32>
// CHECK-NEXT: uop.const -2.500000e-01 : tensor<2xf16>
// CHECK-NEXT: uop.const 3.000000e+00 : tensor<2xbf16>
// CHECK-NEXT: uop.const 1.000000e-03 : tensor<2xf64>
// CHECK-NEXT: uop.const 2.000000e+00 : tensor<3xf32>
// CHECK-NEXT: uop.const 1.000000e+00 : tensor<1xf32>
// CHECK-NEXT: uop.const 0x7FC00000 : tensor<1xf32>
// CHECK-NEXT: uop.const 0xFF800000 : tensor<1xf32>
// CHECK-NEXT: uop.const 0x7C00 : tensor<1xf16>
// CHECK-NEXT: uop.const -0.000000e+00 : tensor<1xf64>
// CHECK-NEXT: uop.const 1.000000e+00 : tensor<1xbf16>
// CHECK-NEXT: uop.const 0.000000e+00 : tensor<1xf32>
func.func @const_float() {
  %0 = uop.const 1.5 : tensor<4x4xf32>
  %1 = uop.const -0.25 : tensor<2xf16>
  %2 = uop.const 3.0 : tensor<2xbf16>
  %3 = uop.const 1.0e-3 : tensor<2xf64>
  %4 = uop.const 2 : tensor<3xf32>
  %5 = uop.const 0x3F800000 : tensor<1xf32>
  %6 = uop.const 0x7FC00000 : tensor<1xf32>
  %7 = uop.const 0xFF800000 : tensor<1xf32>
  %8 = uop.const 0x7C00 : tensor<1xf16>
  %9 = uop.const -0.0 : tensor<1xf64>
  %10 = uop.const true : tensor<1xbf16>
  %11 = uop.const false : tensor<1xf32>
  uop.sink %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<4x4xf32>, tensor<2xf16>, tensor<2xbf16>, tensor<2xf64>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf16>, tensor<1xf64>, tensor<1xbf16>, tensor<1xf32>
  return
}

// -----

// CHECK-LABEL: func.func @const_int
// CHECK-NEXT: uop.const true : tensor<8xi1>
// CHECK-NEXT: uop.const false : tensor<8xi1>
// CHECK-NEXT: uop.const true : tensor<2xi1>
// CHECK-NEXT: uop.const 255 : tensor<2xui8>
// CHECK-NEXT: uop.const -128 : tensor<2xi8>
// CHECK-NEXT: uop.const -7 : tensor<2x3xi32>
// CHECK-NEXT: uop.const -9223372036854775808 : tensor<2xi64>
// CHECK-NEXT: uop.const 18446744073709551615 : tensor<2xui64>
// CHECK-NEXT: uop.const 65535 : tensor<2xui16>
// CHECK-NEXT: uop.const -16 : tensor<2xi16>
func.func @const_int() {
  %0 = uop.const true : tensor<8xi1>
  %1 = uop.const false : tensor<8xi1>
  %2 = uop.const 1 : tensor<2xi1>
  %3 = uop.const 255 : tensor<2xui8>
  %4 = uop.const -128 : tensor<2xi8>
  %5 = uop.const -7 : tensor<2x3xi32>
  %6 = uop.const -9223372036854775808 : tensor<2xi64>
  %7 = uop.const 18446744073709551615 : tensor<2xui64>
  %8 = uop.const 0xFFFF : tensor<2xui16>
  %9 = uop.const -0x10 : tensor<2xi16>
  uop.sink %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<8xi1>, tensor<8xi1>, tensor<2xi1>, tensor<2xui8>, tensor<2xi8>, tensor<2x3xi32>, tensor<2xi64>, tensor<2xui64>, tensor<2xui16>, tensor<2xi16>
  return
}

// -----

// CHECK-LABEL: func.func @const_device
// CHECK-NEXT: uop.const 0 {device = "CPU"} : tensor<4xi32>
// CHECK-NEXT: uop.const 1.000000e+00 {device = "GPU:1"} : tensor<4xf32>
// CHECK-NEXT: uop.const true {device = "CPU"} : tensor<4xi1>
// CHECK-NEXT: uop.const 0 : tensor<i32>
func.func @const_device() {
  %0 = uop.const 0 {device = "CPU"} : tensor<4xi32>
  %1 = uop.const 1.0 {device = "GPU:1"} : tensor<4xf32>
  %2 = uop.const true {device = "CPU"} : tensor<4xi1>
  %3 = uop.const 0 : tensor<i32>
  uop.sink %0, %1, %2, %3 : tensor<4xi32>, tensor<4xf32>, tensor<4xi1>, tensor<i32>
  return
}

// -----

// CHECK-LABEL: func.func @iota
// CHECK-NEXT: uop.iota 1 : tensor<2x3xi32>
// CHECK-NEXT: uop.iota 0 {device = "CPU"} : tensor<5xf32>
func.func @iota() {
  %0 = uop.iota 1 : tensor<2x3xi32>
  %1 = uop.iota 0 {device = "CPU"} : tensor<5xf32>
  uop.sink %0, %1 : tensor<2x3xi32>, tensor<5xf32>
  return
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT: %[[NEG:.*]] = uop.neg %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[INEG:.*]] = uop.neg %[[I]] : tensor<4xi32>
// CHECK-NEXT: %[[EXP2:.*]] = uop.exp2 %[[NEG]] : tensor<4xf32>
// CHECK-NEXT: %[[LOG2:.*]] = uop.log2 %[[EXP2]] : tensor<4xf32>
// CHECK-NEXT: %[[SIN:.*]] = uop.sin %[[LOG2]] : tensor<4xf32>
// CHECK-NEXT: %[[SQRT:.*]] = uop.sqrt %[[SIN]] : tensor<4xf32>
// CHECK-NEXT: %[[RECIP:.*]] = uop.recip %[[SQRT]] : tensor<4xf32>
// CHECK-NEXT: %[[TRUNC:.*]] = uop.trunc %[[RECIP]] : tensor<4xf32>
// CHECK-NEXT: return %[[TRUNC]], %[[INEG]] : tensor<4xf32>, tensor<4xi32>
func.func @unary(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = uop.neg %x : tensor<4xf32>
  %1 = uop.neg %i : tensor<4xi32>
  %2 = uop.exp2 %0 : tensor<4xf32>
  %3 = uop.log2 %2 : tensor<4xf32>
  %4 = uop.sin %3 : tensor<4xf32>
  %5 = uop.sqrt %4 : tensor<4xf32>
  %6 = uop.recip %5 : tensor<4xf32>
  %7 = uop.trunc %6 : tensor<4xf32>
  return %7, %1 : tensor<4xf32>, tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @unary_float_types
// CHECK-NEXT: uop.exp2 %{{.*}} : tensor<2xf16>
// CHECK-NEXT: uop.sqrt %{{.*}} : tensor<2xbf16>
// CHECK-NEXT: uop.sin %{{.*}} : tensor<2xf64>
// CHECK-NEXT: uop.neg %{{.*}} : tensor<2xui8>
func.func @unary_float_types(%h: tensor<2xf16>, %b: tensor<2xbf16>, %d: tensor<2xf64>, %u: tensor<2xui8>) {
  %0 = uop.exp2 %h : tensor<2xf16>
  %1 = uop.sqrt %b : tensor<2xbf16>
  %2 = uop.sin %d : tensor<2xf64>
  %3 = uop.neg %u : tensor<2xui8>
  uop.sink %0, %1, %2, %3 : tensor<2xf16>, tensor<2xbf16>, tensor<2xf64>, tensor<2xui8>
  return
}

// -----

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[A:.*]]: tensor<4xi32>, %[[B:.*]]: tensor<4xi32>)
// CHECK-NEXT: uop.add %[[X]], %[[Y]] : tensor<4xf32>
// CHECK-NEXT: uop.mul %[[X]], %[[Y]] : tensor<4xf32>
// CHECK-NEXT: uop.max %[[X]], %[[Y]] : tensor<4xf32>
// CHECK-NEXT: uop.pow %[[X]], %[[Y]] : tensor<4xf32>
// CHECK-NEXT: uop.add %[[A]], %[[B]] : tensor<4xi32>
// CHECK-NEXT: uop.mul %[[A]], %[[B]] : tensor<4xi32>
// CHECK-NEXT: uop.max %[[A]], %[[B]] : tensor<4xi32>
// CHECK-NEXT: uop.idiv %[[A]], %[[B]] : tensor<4xi32>
// CHECK-NEXT: uop.mod %[[A]], %[[B]] : tensor<4xi32>
// CHECK-NEXT: uop.and %[[A]], %[[B]] : tensor<4xi32>
// CHECK-NEXT: uop.or %[[A]], %[[B]] : tensor<4xi32>
// CHECK-NEXT: uop.xor %[[A]], %[[B]] : tensor<4xi32>
// CHECK-NEXT: uop.shl %[[A]], %[[B]] : tensor<4xi32>
// CHECK-NEXT: uop.shr %[[A]], %[[B]] : tensor<4xi32>
// CHECK-NEXT: uop.sink
func.func @binary(%x: tensor<4xf32>, %y: tensor<4xf32>, %a: tensor<4xi32>, %b: tensor<4xi32>) {
  %0 = uop.add %x, %y : tensor<4xf32>
  %1 = uop.mul %x, %y : tensor<4xf32>
  %2 = uop.max %x, %y : tensor<4xf32>
  %3 = uop.pow %x, %y : tensor<4xf32>
  %4 = uop.add %a, %b : tensor<4xi32>
  %5 = uop.mul %a, %b : tensor<4xi32>
  %6 = uop.max %a, %b : tensor<4xi32>
  %7 = uop.idiv %a, %b : tensor<4xi32>
  %8 = uop.mod %a, %b : tensor<4xi32>
  %9 = uop.and %a, %b : tensor<4xi32>
  %10 = uop.or %a, %b : tensor<4xi32>
  %11 = uop.xor %a, %b : tensor<4xi32>
  %12 = uop.shl %a, %b : tensor<4xi32>
  %13 = uop.shr %a, %b : tensor<4xi32>
  uop.sink %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
  return
}

// -----

// CHECK-LABEL: func.func @binary_bool_and_unsigned
// CHECK-SAME: (%[[P:.*]]: tensor<3xi1>, %[[Q:.*]]: tensor<3xi1>, %[[U:.*]]: tensor<3xui16>)
// CHECK-NEXT: uop.and %[[P]], %[[Q]] : tensor<3xi1>
// CHECK-NEXT: uop.or %[[P]], %[[Q]] : tensor<3xi1>
// CHECK-NEXT: uop.xor %[[P]], %[[Q]] : tensor<3xi1>
// CHECK-NEXT: uop.max %[[P]], %[[Q]] : tensor<3xi1>
// CHECK-NEXT: uop.shr %[[U]], %[[U]] : tensor<3xui16>
// CHECK-NEXT: uop.idiv %[[U]], %[[U]] : tensor<3xui16>
func.func @binary_bool_and_unsigned(%p: tensor<3xi1>, %q: tensor<3xi1>, %u: tensor<3xui16>) {
  %0 = uop.and %p, %q : tensor<3xi1>
  %1 = uop.or %p, %q : tensor<3xi1>
  %2 = uop.xor %p, %q : tensor<3xi1>
  %3 = uop.max %p, %q : tensor<3xi1>
  %4 = uop.shr %u, %u : tensor<3xui16>
  %5 = uop.idiv %u, %u : tensor<3xui16>
  uop.sink %0, %1, %2, %3, %4, %5 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xui16>, tensor<3xui16>
  return
}

// -----

// CHECK-LABEL: func.func @compare_where
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[Y:.*]]: tensor<2x4xf32>, %[[A:.*]]: tensor<2x4xi8>)
// CHECK-NEXT: %[[LT:.*]] = uop.cmplt %[[X]], %[[Y]] : tensor<2x4xf32>
// CHECK-NEXT: %[[NE:.*]] = uop.cmpne %[[A]], %[[A]] : tensor<2x4xi8>
// CHECK-NEXT: %[[EQ:.*]] = uop.cmpeq %[[LT]], %[[NE]] : tensor<2x4xi1>
// CHECK-NEXT: %[[W:.*]] = uop.where %[[EQ]], %[[X]], %[[Y]] : tensor<2x4xf32>
// CHECK-NEXT: %[[WI:.*]] = uop.where %[[LT]], %[[A]], %[[A]] : tensor<2x4xi8>
// CHECK-NEXT: return %[[W]], %[[WI]] : tensor<2x4xf32>, tensor<2x4xi8>
func.func @compare_where(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>, %a: tensor<2x4xi8>) -> (tensor<2x4xf32>, tensor<2x4xi8>) {
  %0 = uop.cmplt %x, %y : tensor<2x4xf32>
  %1 = uop.cmpne %a, %a : tensor<2x4xi8>
  %2 = uop.cmpeq %0, %1 : tensor<2x4xi1>
  %3 = uop.where %2, %x, %y : tensor<2x4xf32>
  %4 = uop.where %0, %a, %a : tensor<2x4xi8>
  return %3, %4 : tensor<2x4xf32>, tensor<2x4xi8>
}

// -----

// CHECK-LABEL: func.func @mulacc
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi64>)
// CHECK-NEXT: %[[F:.*]] = uop.mulacc %[[A]], %[[B]], %[[C]] : tensor<4xf32>
// CHECK-NEXT: %[[N:.*]] = uop.mulacc %[[I]], %[[I]], %[[I]] : tensor<4xi64>
// CHECK-NEXT: return %[[F]], %[[N]]
func.func @mulacc(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %0 = uop.mulacc %a, %b, %c : tensor<4xf32>
  %1 = uop.mulacc %i, %i, %i : tensor<4xi64>
  return %0, %1 : tensor<4xf32>, tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @cast_bitcast
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[H:.*]]: tensor<4xf16>)
// CHECK-NEXT: uop.cast %[[X]] : tensor<4xf32> to tensor<4xi32>
// CHECK-NEXT: uop.cast %[[X]] : tensor<4xf32> to tensor<4xi1>
// CHECK-NEXT: uop.cast %[[H]] : tensor<4xf16> to tensor<4xf64>
// CHECK-NEXT: uop.bitcast %[[X]] : tensor<4xf32> to tensor<4xi32>
// CHECK-NEXT: uop.bitcast %[[H]] : tensor<4xf16> to tensor<4xbf16>
// CHECK-NEXT: uop.bitcast %[[H]] : tensor<4xf16> to tensor<4xui16>
func.func @cast_bitcast(%x: tensor<4xf32>, %h: tensor<4xf16>) {
  %0 = uop.cast %x : tensor<4xf32> to tensor<4xi32>
  %1 = uop.cast %x : tensor<4xf32> to tensor<4xi1>
  %2 = uop.cast %h : tensor<4xf16> to tensor<4xf64>
  %3 = uop.bitcast %x : tensor<4xf32> to tensor<4xi32>
  %4 = uop.bitcast %h : tensor<4xf16> to tensor<4xbf16>
  %5 = uop.bitcast %h : tensor<4xf16> to tensor<4xui16>
  uop.sink %0, %1, %2, %3, %4, %5 : tensor<4xi32>, tensor<4xi1>, tensor<4xf64>, tensor<4xi32>, tensor<4xbf16>, tensor<4xui16>
  return
}

// -----

// CHECK-LABEL: func.func @reduce
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[I:.*]]: tensor<2x3x4xi32>)
// CHECK-NEXT: uop.reduce add %[[X]] [1] : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT: uop.reduce max %[[X]] [0, 1] : tensor<4x8xf32> -> tensor<1x1xf32>
// CHECK-NEXT: uop.reduce mul %[[I]] [2, 0] : tensor<2x3x4xi32> -> tensor<1x3x1xi32>
// CHECK-NEXT: uop.reduce add %[[I]] [] : tensor<2x3x4xi32> -> tensor<2x3x4xi32>
func.func @reduce(%x: tensor<4x8xf32>, %i: tensor<2x3x4xi32>) {
  %0 = uop.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = uop.reduce max %x [0, 1] : tensor<4x8xf32> -> tensor<1x1xf32>
  %2 = uop.reduce mul %i [2, 0] : tensor<2x3x4xi32> -> tensor<1x3x1xi32>
  %3 = uop.reduce add %i [] : tensor<2x3x4xi32> -> tensor<2x3x4xi32>
  uop.sink %0, %1, %2, %3 : tensor<4x1xf32>, tensor<1x1xf32>, tensor<1x3x1xi32>, tensor<2x3x4xi32>
  return
}

// -----

// CHECK-LABEL: func.func @movement
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = uop.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[P:.*]] = uop.permute %[[R]] [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[RS:.*]] = uop.reshape %[[P]] : tensor<4x6xf32> -> tensor<4x1x6xf32>
// CHECK-NEXT: %[[E:.*]] = uop.expand %[[RS]] : tensor<4x1x6xf32> -> tensor<4x5x6xf32>
// CHECK-NEXT: %[[PD:.*]] = uop.pad %[[E]] low [0, 1, 2] high [3, 0, 1] : tensor<4x5x6xf32> -> tensor<7x6x9xf32>
// CHECK-NEXT: %[[S:.*]] = uop.shrink %[[PD]] [1, 0, 2] to [7, 6, 5] : tensor<7x6x9xf32> -> tensor<6x6x3xf32>
// CHECK-NEXT: %[[F:.*]] = uop.flip %[[S]] [2, 0] : tensor<6x6x3xf32> -> tensor<6x6x3xf32>
// CHECK-NEXT: return %[[F]] : tensor<6x6x3xf32>
func.func @movement(%x: tensor<2x3x4xf32>) -> tensor<6x6x3xf32> {
  %0 = uop.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = uop.permute %0 [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %2 = uop.reshape %1 : tensor<4x6xf32> -> tensor<4x1x6xf32>
  %3 = uop.expand %2 : tensor<4x1x6xf32> -> tensor<4x5x6xf32>
  %4 = uop.pad %3 low [0, 1, 2] high [3, 0, 1] : tensor<4x5x6xf32> -> tensor<7x6x9xf32>
  %5 = uop.shrink %4 [1, 0, 2] to [7, 6, 5] : tensor<7x6x9xf32> -> tensor<6x6x3xf32>
  %6 = uop.flip %5 [2, 0] : tensor<6x6x3xf32> -> tensor<6x6x3xf32>
  return %6 : tensor<6x6x3xf32>
}

// -----

// CHECK-LABEL: func.func @movement_scalar_and_bool
// CHECK-SAME: (%[[S:.*]]: tensor<f32>, %[[B:.*]]: tensor<2x2xi1>)
// CHECK-NEXT: uop.reshape %[[S]] : tensor<f32> -> tensor<1x1xf32>
// CHECK-NEXT: uop.permute %[[S]] [] : tensor<f32> -> tensor<f32>
// CHECK-NEXT: uop.flip %[[B]] [] : tensor<2x2xi1> -> tensor<2x2xi1>
// CHECK-NEXT: uop.pad %[[B]] low [0, 0] high [0, 0] : tensor<2x2xi1> -> tensor<2x2xi1>
// CHECK-NEXT: uop.shrink %[[B]] [0, 1] to [2, 1] : tensor<2x2xi1> -> tensor<2x0xi1>
func.func @movement_scalar_and_bool(%s: tensor<f32>, %b: tensor<2x2xi1>) {
  %0 = uop.reshape %s : tensor<f32> -> tensor<1x1xf32>
  %1 = uop.permute %s [] : tensor<f32> -> tensor<f32>
  %2 = uop.flip %b [] : tensor<2x2xi1> -> tensor<2x2xi1>
  %3 = uop.pad %b low [0, 0] high [0, 0] : tensor<2x2xi1> -> tensor<2x2xi1>
  %4 = uop.shrink %b [0, 1] to [2, 1] : tensor<2x2xi1> -> tensor<2x0xi1>
  uop.sink %0, %1, %2, %3, %4 : tensor<1x1xf32>, tensor<f32>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x0xi1>
  return
}

// -----

// CHECK-LABEL: func.func @buffers
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[T:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[C:.*]] = uop.contiguous %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[D:.*]] = uop.copy %[[C]] to "GPU" : tensor<4xf32>
// CHECK-NEXT: %[[A:.*]] = uop.assign %[[T]], %[[D]] : tensor<4xf32>
// CHECK-NEXT: uop.sink %[[A]], %[[C]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: uop.sink{{$}}
// CHECK-NEXT: return %[[A]] : tensor<4xf32>
func.func @buffers(%x: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<4xf32> {
  %0 = uop.contiguous %x : tensor<4xf32>
  %1 = uop.copy %0 to "GPU" : tensor<4xf32>
  %2 = uop.assign %t, %1 : tensor<4xf32>
  uop.sink %2, %0 : tensor<4xf32>, tensor<4xf32>
  uop.sink
  return %2 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @generic_form
// CHECK-NEXT: %[[C:.*]] = uop.const 4 {device = "CPU"} : tensor<3xi32>
// CHECK-NEXT: %[[R:.*]] = uop.reduce max %[[C]] [0] : tensor<3xi32> -> tensor<1xi32>
// CHECK-NEXT: uop.sink %[[R]] : tensor<1xi32>
func.func @generic_form() {
  %0 = "uop.const"() {value = 4 : i32, device = "CPU"} : () -> tensor<3xi32>
  %1 = "uop.reduce"(%0) {kind = 1 : i32, axes = array<i64: 0>} : (tensor<3xi32>) -> tensor<1xi32>
  "uop.sink"(%1) : (tensor<1xi32>) -> ()
  return
}

// -----

// CHECK-LABEL: func.func @cos_exp_log
// CHECK-NEXT: %[[COS:.*]] = uop.cos %{{.*}} : tensor<4xf32>
// CHECK-NEXT: %[[EXP:.*]] = uop.exp %[[COS]] : tensor<4xf32>
// CHECK-NEXT: %[[LOG:.*]] = uop.log %[[EXP]] : tensor<4xf32>
// CHECK-NEXT: uop.cos %{{.*}} : tensor<2xf16>
// CHECK-NEXT: uop.exp %{{.*}} : tensor<2xbf16>
// CHECK-NEXT: uop.log %{{.*}} : tensor<2xf64>
func.func @cos_exp_log(%x: tensor<4xf32>, %h: tensor<2xf16>, %b: tensor<2xbf16>, %d: tensor<2xf64>) {
  %0 = uop.cos %x : tensor<4xf32>
  %1 = uop.exp %0 : tensor<4xf32>
  %2 = uop.log %1 : tensor<4xf32>
  %3 = uop.cos %h : tensor<2xf16>
  %4 = uop.exp %b : tensor<2xbf16>
  %5 = uop.log %d : tensor<2xf64>
  uop.sink %2, %3, %4, %5 : tensor<4xf32>, tensor<2xf16>, tensor<2xbf16>, tensor<2xf64>
  return
}
