// RUN: pytc-opt %s --split-input-file --verify-diagnostics

// reduce: an axis past the rank.
func.func @reduce_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'uop.reduce' op axis 2 is out of range for a rank-2 tensor}}
  %0 = uop.reduce add %x [2] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// reduce: a negative axis.
func.func @reduce_axis_negative(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -1 is out of range for a rank-2 tensor}}
  %0 = uop.reduce add %x [-1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

// reduce: the same axis twice.
func.func @reduce_axis_duplicate(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'uop.reduce' op axis 1 appears more than once}}
  %0 = uop.reduce max %x [1, 1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

// reduce: the reduced dim must become size 1.
func.func @reduce_result_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'uop.reduce' op result shape [4] does not match the expected [4, 1]}}
  %0 = uop.reduce add %x [1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// reduce: the element type is kept.
func.func @reduce_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'uop.reduce' op result element type 'f16' differs from the source's 'f32'}}
  %0 = uop.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf16>
  return
}

// -----

// reduce: an unknown combiner.
func.func @reduce_unknown_kind(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [add, max, mul]}}
  %0 = uop.reduce min %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

// permute: an order shorter than the rank.
func.func @permute_wrong_length(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'uop.permute' op order [1, 0] is not a permutation of the 3 dims}}
  %0 = uop.permute %x [1, 0] : tensor<2x3x4xf32> -> tensor<3x2xf32>
  return
}

// -----

// permute: an order that repeats a dim.
func.func @permute_repeated(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'uop.permute' op order [0, 0] is not a permutation of the 2 dims}}
  %0 = uop.permute %x [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

// permute: result dim i must be source dim order[i].
func.func @permute_result_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'uop.permute' op result shape [2, 3] does not match the expected [3, 2]}}
  %0 = uop.permute %x [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// pad: `low` needs one entry per dim.
func.func @pad_low_arity(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'uop.pad' op `low` has 1 entries but the source has rank 2}}
  %0 = uop.pad %x low [1] high [0, 0] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

// pad: `high` needs one entry per dim.
func.func @pad_high_arity(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'uop.pad' op `high` has 3 entries but the source has rank 2}}
  %0 = uop.pad %x low [0, 0] high [0, 0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// pad: negative padding.
func.func @pad_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'uop.pad' op padding of dim 1 is negative}}
  %0 = uop.pad %x low [0, 1] high [0, -2] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

// pad: the result grows by low + high.
func.func @pad_result_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'uop.pad' op result shape [2, 3] does not match the expected [3, 5]}}
  %0 = uop.pad %x low [1, 1] high [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// shrink: `starts` needs one entry per dim.
func.func @shrink_starts_arity(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'uop.shrink' op `starts` has 1 entries but the source has rank 2}}
  %0 = uop.shrink %x [0] to [2, 2] : tensor<4x4xf32> -> tensor<2x2xf32>
  return
}

// -----

// shrink: `ends` needs one entry per dim.
func.func @shrink_ends_arity(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'uop.shrink' op `ends` has 3 entries but the source has rank 2}}
  %0 = uop.shrink %x [0, 0] to [2, 2, 2] : tensor<4x4xf32> -> tensor<2x2xf32>
  return
}

// -----

// shrink: a start past its end.
func.func @shrink_start_after_end(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'uop.shrink' op range [3, 2) of dim 0 starts after it ends}}
  %0 = uop.shrink %x [3, 0] to [2, 4] : tensor<4x4xf32> -> tensor<0x4xf32>
  return
}

// -----

// shrink: an end past the dim.
func.func @shrink_end_past_dim(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'uop.shrink' op range [1, 5) of dim 1 is outside [0, 4]}}
  %0 = uop.shrink %x [0, 1] to [4, 5] : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// shrink: a negative start.
func.func @shrink_negative_start(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'uop.shrink' op range [-1, 2) of dim 0 is outside [0, 4]}}
  %0 = uop.shrink %x [-1, 0] to [2, 4] : tensor<4x4xf32> -> tensor<3x4xf32>
  return
}

// -----

// shrink: the result is end - start in each dim.
func.func @shrink_result_shape(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'uop.shrink' op result shape [2, 2] does not match the expected [2, 3]}}
  %0 = uop.shrink %x [1, 0] to [3, 3] : tensor<4x4xf32> -> tensor<2x2xf32>
  return
}

// -----

// expand: only size-1 dims expand.
func.func @expand_non_unit(%x: tensor<2x1xf32>) {
  // expected-error @+1 {{'uop.expand' op cannot expand dim 0 of size 2 to 4: only size-1 dims expand}}
  %0 = uop.expand %x : tensor<2x1xf32> -> tensor<4x3xf32>
  return
}

// -----

// expand: the rank is kept.
func.func @expand_rank(%x: tensor<1x3xf32>) {
  // expected-error @+1 {{'uop.expand' op cannot change the rank from 2 to 3}}
  %0 = uop.expand %x : tensor<1x3xf32> -> tensor<2x1x3xf32>
  return
}

// -----

// reshape: the element count is kept.
func.func @reshape_count(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'uop.reshape' op cannot reshape 8 elements into 6}}
  %0 = uop.reshape %x : tensor<2x4xf32> -> tensor<2x3xf32>
  return
}

// -----

// movement ops keep the element type.
func.func @movement_element_type(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'uop.reshape' op failed to verify that all of {src, result} have same element type}}
  %0 = uop.reshape %x : tensor<2x4xf32> -> tensor<8xf16>
  return
}

// -----

// where: the condition must be an i1 tensor.
func.func @where_condition_not_bool(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'uop.where' op operand #0 must be i1 tensor or scalar, but got 'tensor<4xf32>'}}
  %0 = "uop.where"(%c, %x, %x) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// where: the condition must have the shape of the values.
func.func @where_condition_shape(%c: tensor<2xi1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'uop.where' op failed to verify that condition is an i1 tensor with the shape of the values}}
  %0 = "uop.where"(%c, %x, %x) : (tensor<2xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// where: both values and the result share one type.
func.func @where_values_disagree(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf16>) {
  // expected-error @+1 {{'uop.where' op failed to verify that all of {lhs, rhs, result} have same type}}
  %0 = "uop.where"(%c, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

// binary ops: both operands and the result share one type.
func.func @binary_operands_disagree(%x: tensor<4xf32>, %y: tensor<4xf16>) {
  // expected-error @+1 {{'uop.add' op requires the same type for all operands and results}}
  %0 = "uop.add"(%x, %y) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

// binary ops: the result has the operands' shape.
func.func @binary_result_shape(%x: tensor<4xi32>) {
  // expected-error @+1 {{'uop.idiv' op requires the same type for all operands and results}}
  %0 = "uop.idiv"(%x, %x) : (tensor<4xi32>, tensor<4xi32>) -> tensor<2xi32>
  return
}

// -----

// float-only unary op on integers.
func.func @exp2_on_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{'uop.exp2' op operand #0 must be float (f16, bf16, f32, f64) tensor or scalar, but got 'tensor<4xi32>'}}
  %0 = uop.exp2 %x : tensor<4xi32>
  return
}

// -----

// float-only binary op on integers.
func.func @pow_on_int(%x: tensor<4xi8>) {
  // expected-error @+1 {{'uop.pow' op operand #0 must be float (f16, bf16, f32, f64) tensor or scalar}}
  %0 = uop.pow %x, %x : tensor<4xi8>
  return
}

// -----

// integer-only op on floats.
func.func @idiv_on_float(%x: tensor<4xf32>) {
  // expected-error @+1 {{'uop.idiv' op operand #0 must be integer (not i1) tensor or scalar, but got 'tensor<4xf32>'}}
  %0 = uop.idiv %x, %x : tensor<4xf32>
  return
}

// -----

// shifts exclude i1.
func.func @shl_on_bool(%x: tensor<4xi1>) {
  // expected-error @+1 {{'uop.shl' op operand #0 must be integer (not i1) tensor or scalar}}
  %0 = uop.shl %x, %x : tensor<4xi1>
  return
}

// -----

// bitwise ops reject floats.
func.func @xor_on_float(%x: tensor<4xf32>) {
  // expected-error @+1 {{'uop.xor' op operand #0 must be integer or i1 tensor or scalar}}
  %0 = uop.xor %x, %x : tensor<4xf32>
  return
}

// -----

// neg rejects i1.
func.func @neg_on_bool(%x: tensor<4xi1>) {
  // expected-error @+1 {{'uop.neg' op operand #0 must be numeric (not i1) tensor or scalar}}
  %0 = uop.neg %x : tensor<4xi1>
  return
}

// -----

// element types outside the dialect's set.
func.func @unsupported_element(%x: tensor<4xi4>) {
  // expected-error @+1 {{'uop.contiguous' op operand #0 must be statically shaped tensor of}}
  %0 = uop.contiguous %x : tensor<4xi4>
  return
}

// -----

// shapes must be static.
func.func @dynamic_shape(%x: tensor<?xf32>) {
  // expected-error @+1 {{'uop.sqrt' op operand #0 must be float (f16, bf16, f32, f64) tensor or scalar, but got 'tensor<?xf32>'}}
  %0 = uop.sqrt %x : tensor<?xf32>
  return
}

// -----

// comparisons produce i1.
func.func @cmplt_result_not_bool(%x: tensor<4xf32>) {
  // expected-error @+1 {{'uop.cmplt' op result #0 must be i1 tensor or scalar, but got 'tensor<4xf32>'}}
  %0 = "uop.cmplt"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// comparisons keep the shape of their operands.
func.func @cmpeq_result_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'uop.cmpeq' op failed to verify that result is an i1 tensor with the shape of `lhs`}}
  %0 = "uop.cmpeq"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<2xi1>
  return
}

// -----

// comparisons need operands of one type.
func.func @cmpne_operands_disagree(%x: tensor<4xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'uop.cmpne' op failed to verify that all of {lhs, rhs} have same type}}
  %0 = "uop.cmpne"(%x, %y) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

// mulacc: all three operands share one type.
func.func @mulacc_operands_disagree(%x: tensor<4xf32>, %y: tensor<4xf64>) {
  // expected-error @+1 {{'uop.mulacc' op requires the same type for all operands and results}}
  %0 = "uop.mulacc"(%x, %x, %y) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

// cast: the shape is kept.
func.func @cast_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'uop.cast' op changes the shape from [4] to [2, 2]}}
  %0 = uop.cast %x : tensor<4xf32> to tensor<2x2xi32>
  return
}

// -----

// bitcast: the element widths must match.
func.func @bitcast_width(%x: tensor<4xf32>) {
  // expected-error @+1 {{'uop.bitcast' op cannot reinterpret 'f32' as 'f16': the bit widths differ}}
  %0 = uop.bitcast %x : tensor<4xf32> to tensor<4xf16>
  return
}

// -----

// bitcast: the shape is kept.
func.func @bitcast_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'uop.bitcast' op changes the shape from [4] to [1, 4]}}
  %0 = uop.bitcast %x : tensor<4xf32> to tensor<1x4xi32>
  return
}

// -----

// iota: the axis must be a dim of the result.
func.func @iota_axis() {
  // expected-error @+1 {{'uop.iota' op axis 2 is out of range for a rank-2 tensor}}
  %0 = uop.iota 2 : tensor<2x3xi32>
  return
}

// -----

// iota: a negative axis.
func.func @iota_negative_axis() {
  // expected-error @+1 {{'uop.iota' op axis -1 is out of range for a rank-1 tensor}}
  %0 = uop.iota -1 : tensor<3xf32>
  return
}

// -----

// iota: no i1 result.
func.func @iota_bool() {
  // expected-error @+1 {{'uop.iota' op result #0 must be statically shaped tensor of}}
  %0 = uop.iota 0 : tensor<3xi1>
  return
}

// -----

// flip: an axis past the rank.
func.func @flip_axis_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'uop.flip' op axis 2 is out of range for a rank-2 tensor}}
  %0 = uop.flip %x [2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// flip: the same axis twice.
func.func @flip_axis_duplicate(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'uop.flip' op axis 0 appears more than once}}
  %0 = uop.flip %x [0, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// flip: the shape is kept.
func.func @flip_result_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'uop.flip' op result shape [3, 2] does not match the expected [2, 3]}}
  %0 = uop.flip %x [0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}

// -----

// copy and contiguous keep the type.
func.func @copy_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'uop.copy' op requires the same type for all operands and results}}
  %0 = "uop.copy"(%x) {device = "GPU"} : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// copy needs a device.
func.func @copy_no_device(%x: tensor<4xf32>) {
  // expected-error @+1 {{'uop.copy' op requires attribute 'device'}}
  %0 = "uop.copy"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// const: the typed value must have the element type.
func.func @const_value_type() {
  // expected-error @+1 {{'uop.const' op value of type 'f32' does not match the element type 'f64'}}
  %0 = "uop.const"() {value = 1.0 : f32} : () -> tensor<4xf64>
  return
}

// -----

// const: the value must be a typed attribute.
func.func @const_untyped_value() {
  // expected-error @+1 {{'uop.const' op attribute 'value' failed to satisfy constraint: TypedAttr instance}}
  %0 = "uop.const"() {value = [1.0]} : () -> tensor<4xf32>
  return
}

// -----

// const: a string value has no element type.
func.func @const_string_value() {
  // expected-error @+1 {{'uop.const' op value of type 'none' does not match the element type 'f32'}}
  %0 = "uop.const"() {value = "one"} : () -> tensor<4xf32>
  return
}

// -----

// const: 300 does not fit in ui8.
func.func @const_too_big() {
  // expected-error @+1 {{literal 300 does not fit in 'ui8'}}
  %0 = uop.const 300 : tensor<4xui8>
  return
}

// -----

// const: -1 does not fit in ui8.
func.func @const_negative_unsigned() {
  // expected-error @+1 {{literal -1 does not fit in 'ui8'}}
  %0 = uop.const -1 : tensor<4xui8>
  return
}

// -----

// const: 128 does not fit in i8.
func.func @const_signed_overflow() {
  // expected-error @+1 {{literal 128 does not fit in 'i8'}}
  %0 = uop.const 128 : tensor<4xi8>
  return
}

// -----

// const: a literal wider than 64 bits is reported, not truncated.
func.func @const_wider_than_64_bits() {
  // expected-error @+1 {{literal 18446744073709551617 does not fit in 'i8'}}
  %0 = uop.const 18446744073709551617 : tensor<4xi8>
  return
}

// -----

// const: i1 takes 0 and 1 only.
func.func @const_bool_range() {
  // expected-error @+1 {{literal 2 does not fit in 'i1'}}
  %0 = uop.const 2 : tensor<4xi1>
  return
}

// -----

// const: a float literal for an integer type.
func.func @const_float_for_int() {
  // expected-error @+1 {{expected an integer literal for element type 'i32'}}
  %0 = uop.const 1.5 : tensor<4xi32>
  return
}

// -----

// const: a hex bit pattern wider than the float type.
func.func @const_hex_too_wide() {
  // expected-error @+1 {{hex literal does not fit in 'f16'}}
  %0 = uop.const 0x3F800000 : tensor<4xf16>
  return
}

// -----

// const: a hex bit pattern has no sign.
func.func @const_hex_negative() {
  // expected-error @+1 {{hex literal for 'f32' cannot be negative}}
  %0 = uop.const -0x3F800000 : tensor<4xf32>
  return
}

// -----

// const: the element type must be a uop element type.
func.func @const_index() {
  // expected-error @+1 {{element type 'index' is not a uop element type}}
  %0 = uop.const 1 : index
  return
}

// -----

// const: a scalar result is an index-level value; a memref is neither.
func.func @const_memref() {
  // expected-error @+1 {{result #0 must be tensor or scalar of a uop element type, but got 'memref<4xf32>'}}
  %0 = "uop.const"() {value = 1.0 : f32} : () -> memref<4xf32>
  return
}

// -----

// const: a literal is required.
func.func @const_missing_literal() {
  // expected-error @+1 {{expected integer value}}
  %0 = uop.const : tensor<4xf32>
  return
}

// -----

// range: the size cannot be negative.
func.func @range_size() {
  // expected-error @+1 {{'uop.range' op size -1 is negative}}
  %r = uop.range loop -1 id 0
  return
}

// -----

// index: one index per dim.
func.func @index_count(%a: tensor<4x4xf32>) {
  %r = uop.range loop 4 id 0
  // expected-error @+1 {{'uop.index' op has 1 indices for a rank-2 buffer}}
  %x = uop.index %a[%r] : tensor<4x4xf32>
  return
}

// -----

// range_reduce: only over ranges.
func.func @range_reduce_not_range(%a: tensor<4xf32>) {
  %c = arith.constant 0 : index
  %x = uop.index %a[%c] : tensor<4xf32>
  // expected-error @+1 {{'uop.range_reduce' op reduces over a value that is not a uop.range}}
  %s = uop.range_reduce add %x over (%c) : f32
  return
}

// -----

// bufferize: each range has the size of its dim.
func.func @bufferize_range_size(%a: tensor<4xf32>) {
  %r = uop.range loop 4 id 0
  %x = uop.index %a[%r] : tensor<4xf32>
  // expected-error @+1 {{'uop.bufferize' op range of size 4 for dim 0 of size 8}}
  %b = uop.bufferize %x over (%r) {reason = "output"} : f32 -> tensor<8xf32>
  return
}

// -----

// bufferize: a dim larger than 1 needs a range.
func.func @bufferize_needs_range(%a: tensor<4xf32>) {
  %c = arith.constant 0 : index
  %x = uop.index %a[%c] : tensor<4xf32>
  // expected-error @+1 {{'uop.bufferize' op dim 0 of size 4 needs a uop.range}}
  %b = uop.bufferize %x over (%c) {reason = "output"} : f32 -> tensor<4xf32>
  return
}

// -----

// bufferize: the element type is kept.
func.func @bufferize_element_type(%a: tensor<4xf32>) {
  %r = uop.range loop 4 id 0
  %x = uop.index %a[%r] : tensor<4xf32>
  // expected-error @+1 {{'uop.bufferize' op materializes 'f32' into a tensor of 'i32'}}
  %b = uop.bufferize %x over (%r) {reason = "output"} : f32 -> tensor<4xi32>
  return
}

// -----

// store: one index per dim.
func.func @store_count(%m: memref<4x4xf32>, %v: f32) {
  %r = uop.range loop 4 id 0
  // expected-error @+1 {{'uop.store' op has 1 indices for a rank-2 buffer}}
  %w = uop.store %v, %m[%r] : memref<4x4xf32>
  return
}

// -----

// cast: a tensor cannot become a scalar.
func.func @cast_tensor_to_scalar(%a: tensor<4xf32>) {
  // expected-error @+1 {{'uop.cast' op converts between a tensor and a scalar}}
  %0 = "uop.cast"(%a) : (tensor<4xf32>) -> f32
  return
}

// -----

// pad: a result dim past int64.
func.func @pad_overflow(%x: tensor<2xf32>) {
  // expected-error @+1 {{'uop.pad' op padding dim 0 of size 2 by 9223372036854775806 and 0 overflows int64}}
  %0 = uop.pad %x low [9223372036854775806] high [0] : tensor<2xf32> -> tensor<2xf32>
  return
}

// -----

// range_reduce: a range reduced twice.
func.func @range_reduce_duplicate(%a: tensor<4xf32>) {
  %k = uop.range reduce 4 id 1
  %x = uop.index %a[%k] : tensor<4xf32>
  // expected-error @+1 {{'uop.range_reduce' op range with id 1 appears more than once}}
  %s = uop.range_reduce add %x over (%k, %k) : f32
  return
}

// -----

// range_reduce: a loop range is a dim of the result, not reduced.
func.func @range_reduce_loop(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  // expected-error @+1 {{'uop.range_reduce' op reduces over the loop range with id 0}}
  %s = uop.range_reduce add %x over (%i) : f32
  return
}

// -----

// index: an unguarded range past the dim reads out of bounds.
func.func @index_range_past_dim(%a: tensor<4x8xf32>) {
  %i = uop.range loop 8 id 0
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'uop.index' op range of size 8 indexes dim 0 of size 4}}
  %x = uop.index %a[%i, %c0] : tensor<4x8xf32>
  return
}

// -----

// index: a constant outside the dim.
func.func @index_constant_outside(%a: memref<4xf32>) {
  %c = arith.constant -1 : index
  // expected-error @+1 {{'uop.index' op index -1 is outside dim 0 of size 4}}
  %x = uop.index %a[%c] : memref<4xf32>
  return
}

// -----

// index: a guarded read may index past the buffer where the guard is false (padding).
func.func @index_guarded(%a: tensor<4xf32>) {
  %i = uop.range loop 6 id 0
  %c4 = arith.constant 4 : index
  %inside = arith.cmpi ult, %i, %c4 : index
  %x = uop.index %a[%i] if %inside : tensor<4xf32>
  return
}

// -----

// store: a range past the dim writes out of bounds.
func.func @store_range_past_dim(%m: memref<4xf32>, %v: f32) {
  %r = uop.range loop 5 id 0
  // expected-error @+1 {{'uop.store' op range of size 5 indexes dim 0 of size 4}}
  %w = uop.store %v, %m[%r] : memref<4xf32>
  return
}

// -----

// store: a constant outside the dim.
func.func @store_constant_outside(%m: memref<1x4xf32>, %v: f32) {
  %c1 = arith.constant 1 : index
  %r = uop.range loop 4 id 0
  // expected-error @+1 {{'uop.store' op index 1 is outside dim 0 of size 1}}
  %w = uop.store %v, %m[%c1, %r] : memref<1x4xf32>
  return
}

// -----

// store: one range for two dims writes the diagonal only.
func.func @store_range_twice(%m: memref<4x4xf32>, %v: f32) {
  %r = uop.range loop 4 id 3
  // expected-error @+1 {{'uop.store' op range with id 3 appears more than once}}
  %w = uop.store %v, %m[%r, %r] : memref<4x4xf32>
  return
}

// -----

// end: closes the loops of a store.
func.func @end_not_store(%m: memref<4xf32>) {
  %r = uop.range loop 4 id 0
  // expected-error @+1 {{'uop.end' op closes the loops of a value that is not a uop.store}}
  %e = uop.end %m over (%r) : memref<4xf32>
  return
}

// -----

// end: only ranges are closed.
func.func @end_constant(%m: memref<1xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %w = uop.store %v, %m[%c0] : memref<1xf32>
  // expected-error @+1 {{'uop.end' op closes a value that is not a uop.range}}
  %e = uop.end %w over (%c0) : memref<1xf32>
  return
}

// -----

// end: every range of the store is closed.
func.func @end_leaves_open(%m: memref<4x8xf32>, %v: f32) {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 8 id 1
  %w = uop.store %v, %m[%i, %j] : memref<4x8xf32>
  // expected-error @+1 {{'uop.end' op leaves the store's range with id 1 open}}
  %e = uop.end %w over (%i) : memref<4x8xf32>
  return
}

// -----

// end: a range that the store does not index.
func.func @end_foreign_range(%m: memref<4xf32>, %v: f32) {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 8 id 1
  %w = uop.store %v, %m[%i] : memref<4xf32>
  // expected-error @+1 {{'uop.end' op closes range with id 1, which does not index the store}}
  %e = uop.end %w over (%i, %j) : memref<4xf32>
  return
}

// -----

// end: a range closed twice.
func.func @end_duplicate(%m: memref<4xf32>, %v: f32) {
  %i = uop.range loop 4 id 0
  %w = uop.store %v, %m[%i] : memref<4xf32>
  // expected-error @+1 {{'uop.end' op range with id 0 appears more than once}}
  %e = uop.end %w over (%i, %i) : memref<4xf32>
  return
}

// -----

// bufferize: a size-1 dim takes the constant 0.
func.func @bufferize_unit_dim_nonzero(%a: tensor<4xf32>) {
  %c1 = arith.constant 1 : index
  %r = uop.range loop 4 id 0
  %x = uop.index %a[%r] : tensor<4xf32>
  // expected-error @+1 {{'uop.bufferize' op dim 0 of size 1 needs a uop.range or the constant 0}}
  %b = uop.bufferize %x over (%c1, %r) {reason = "output"} : f32 -> tensor<1x4xf32>
  return
}

// -----

// bufferize: one range for two dims.
func.func @bufferize_range_twice(%a: tensor<4xf32>) {
  %r = uop.range loop 4 id 2
  %x = uop.index %a[%r] : tensor<4xf32>
  // expected-error @+1 {{'uop.bufferize' op range with id 2 appears more than once}}
  %b = uop.bufferize %x over (%r, %r) {reason = "output"} : f32 -> tensor<4x4xf32>
  return
}
