// RUN: pytc-opt %s --split-input-file --verify-diagnostics

// A tensor operand whose element count overflows int64.
func.func @operand_count_overflow(%x: tensor<4611686018427387904x4xf32>) {
  // expected-error @+1 {{'uop.neg' op operand #0 of type 'tensor<4611686018427387904x4xf32>' has a byte size that overflows int64}}
  %0 = uop.neg %x : tensor<4611686018427387904x4xf32>
  return
}

// -----

// A result whose element count fits but whose bytes (2^63) do not.
func.func @result_bytes_overflow() {
  // expected-error @+1 {{'uop.const' op result #0 of type 'tensor<2305843009213693952xf32>' has a byte size that overflows int64}}
  %0 = uop.const 1.0 : tensor<2305843009213693952xf32>
  return
}

// -----

// The size is checked before the op's own verifier (which counts elements).
func.func @reshape_source_overflow(%x: tensor<4611686018427387904x4xi8>) {
  // expected-error @+1 {{'uop.reshape' op operand #0 of type 'tensor<4611686018427387904x4xi8>' has a byte size that overflows int64}}
  %0 = uop.reshape %x : tensor<4611686018427387904x4xi8> -> tensor<4xi8>
  return
}

// -----

// A memref result.
func.func @buffer_overflow() {
  // expected-error @+1 {{'uop.buffer' op result #0 of type 'memref<4611686018427387904x2xf16>' has a byte size that overflows int64}}
  %0 = uop.buffer : memref<4611686018427387904x2xf16>
  return
}

// -----

// An i1 element takes one byte: 2^62 of them fit, where 2^62 f16 do not.
func.func @bool_bytes_fit(%x: tensor<4611686018427387904xi1>) {
  uop.sink %x : tensor<4611686018427387904xi1>
  return
}

// -----

func.func @half_bytes_overflow(%x: tensor<4611686018427387904xf16>) {
  // expected-error @+1 {{'uop.sink' op operand #0 of type 'tensor<4611686018427387904xf16>' has a byte size that overflows int64}}
  uop.sink %x : tensor<4611686018427387904xf16>
  return
}

// -----

// The largest byte size, 2^63 - 1 bytes, fits.
func.func @largest_fits(%x: tensor<9223372036854775807xi8>) {
  uop.sink %x : tensor<9223372036854775807xi8>
  return
}

// -----

// An empty tensor has no bytes, whatever its other dims.
func.func @empty_fits(%x: tensor<4611686018427387904x0x4xf32>) {
  %0 = uop.neg %x : tensor<4611686018427387904x0x4xf32>
  return
}
