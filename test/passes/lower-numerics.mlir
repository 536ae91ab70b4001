// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-lower-kernels,canonicalize,cse)' | FileCheck %s

// sin on f32 works in f64: k = roundeven(x / pi) and r = x - k pi (pi in two parts) for |x| up to 2^24; the
// exact reduction for larger |x| runs only when some lane needs it (an scf.if on any lane); k's parity flips
// r's sign bit, the odd polynomial in r is rounded to f32 once, and sin(-0) = -0 is selected at the end. Marked for
// vectors (@sine_vector), the same on vector<8xf64>.
// CHECK-LABEL: func.func @sine(
// CHECK: %[[X:.*]] = memref.load
// CHECK: %[[WIDE:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK: math.roundeven %{{.*}} : f64
// CHECK: %[[FAR:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK: %[[KR:.*]]:2 = scf.if %[[FAR]] -> (f64, f64) {
// CHECK: math.roundeven %{{.*}} : f64
// CHECK: } else {
// CHECK: arith.bitcast %[[KR]]#1 : f64 to i64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK-NOT: math.sin
// CHECK: return
// CHECK-LABEL: func.func @sine_vector(
// CHECK: arith.extf %{{.*}} : vector<8xf32> to vector<8xf64>
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %{{.*}} : vector<8xi1> into i1
// CHECK: scf.if %[[ANY]] -> (vector<8xf64>, vector<8xf64>) {
// CHECK: arith.truncf %{{.*}} : vector<8xf64> to vector<8xf32>
func.func @sine(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf32>
  %r = uop.sin %x_i : f32
  %w = uop.store %r, %out[%i] : memref<8xf32>
  %e = uop.end %w over(%i) : memref<8xf32>
  return
}
func.func @sine_vector(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf32>
  %r = uop.sin %x_i : f32
  %w = uop.store %r, %out[%i] : memref<8xf32>
  %e = uop.end %w over(%i) : memref<8xf32>
  return
}

// -----

// f32 to bf16 rounds to nearest even on the bits (no truncf, whose x86 instruction flushes denormals to
// zero); a NaN becomes the quiet NaN of its top bits.
// CHECK-LABEL: func.func @to_bfloat16(
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<8xf32>
// CHECK-NEXT: %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK-NEXT: %[[HIGH:.*]] = arith.shrui %[[BITS]], %{{.*}} : i32
// CHECK: %[[ROUNDED:.*]] = arith.shrui %{{.*}}, %{{.*}} : i32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[QUIET:.*]] = arith.ori %[[HIGH]], %{{.*}} : i32
// CHECK: arith.select %[[NAN]], %[[QUIET]], %[[ROUNDED]] : i32
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @to_bfloat16(%out: memref<8xbf16>, %x: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf32>
  %r = uop.cast %x_i : f32 to bf16
  %w = uop.store %r, %out[%i] : memref<8xbf16>
  %e = uop.end %w over(%i) : memref<8xbf16>
  return
}

// -----

// bf16 arithmetic that rounds computes in f32 and rounds back on the bits, keeping denormal results; NaNs computed
// from bf16 operands need no special case (their low 16 bits are clear). The operands widen on the bits too (shifted into
// the high half of an f32), so LLVM cannot fold the f32 op back into a bf16 one that flushes denormals.
// CHECK-LABEL: func.func @bfloat16_product(
// CHECK: %[[A:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[B:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: arith.bitcast %[[P]] : f32 to i32
// CHECK-NOT: arith.cmpf
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK-NOT: arith.mulf {{.*}} : bf16
// CHECK: return
func.func @bfloat16_product(%out: memref<8xbf16>, %a: memref<8xbf16>, %b: memref<8xbf16>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %a_i = uop.index %a[%i] : memref<8xbf16>
  %b_i = uop.index %b[%i] : memref<8xbf16>
  %r = uop.mul %a_i, %b_i : bf16
  %w = uop.store %r, %out[%i] : memref<8xbf16>
  %e = uop.end %w over(%i) : memref<8xbf16>
  return
}

// -----

// f64 (and integers, through f64) to bf16: to f32 rounding to odd (toward zero, the last bit set when inexact), then
// to bf16 as above, so that it rounds once; LLVM's own f64 to bf16 is a library call the JIT does not have.
// CHECK-LABEL: func.func @f64_to_bfloat16(
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<8xf64>
// CHECK-NEXT: %[[NEAR:.*]] = arith.truncf %[[X]] : f64 to f32
// CHECK: arith.cmpf one, %{{.*}}, %[[X]] : f64
// CHECK: arith.subi
// CHECK: arith.ori
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK-NOT: to bf16
// CHECK-LABEL: func.func @i32_to_bfloat16(
// CHECK: arith.sitofp %{{.*}} : i32 to f64
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK-NOT: to bf16
func.func @f64_to_bfloat16(%out: memref<8xbf16>, %x: memref<8xf64>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf64>
  %r = uop.cast %x_i : f64 to bf16
  %w = uop.store %r, %out[%i] : memref<8xbf16>
  %e = uop.end %w over(%i) : memref<8xbf16>
  return
}
func.func @i32_to_bfloat16(%out: memref<8xbf16>, %x: memref<8xi32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xi32>
  %r = uop.cast %x_i : i32 to bf16
  %w = uop.store %r, %out[%i] : memref<8xbf16>
  %e = uop.end %w over(%i) : memref<8xbf16>
  return
}

// -----

// A sum in f32 of f16 products (a half matmul accumulating in float) widens the factors and multiplies them in
// f32, exactly, so the sum rounds once (to f16 at the end), not once per product; register-blocked vector code
// (@half_matmul_vector) fuses it into fma.
// CHECK-LABEL: func.func @half_matmul(
// CHECK: scf.for {{.*}} -> (f32) {
// CHECK: %[[A:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[B:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: arith.addf %{{.*}}, %[[P]] fastmath<reassoc> : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: arith.mulf {{.*}} : f16
// CHECK-LABEL: func.func @half_matmul_vector(
// CHECK: %[[B:.*]] = arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: math.fma %{{.*}}, %[[B]], %{{.*}} : vector<8xf32>
// CHECK-NOT: arith.mulf {{.*}} : vector<8xf16>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
func.func @half_matmul(%out: memref<8x16xf16>, %a: memref<8x4xf16>, %b: memref<4x16xf16>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 4 id 2
  %x = uop.index %a[%i, %k] : memref<8x4xf16>
  %y = uop.index %b[%k, %j] : memref<4x16xf16>
  %p = uop.mul %x, %y : f16
  %wide = uop.cast %p : f16 to f32
  %s = uop.range_reduce add %wide over(%k) : f32
  %h = uop.cast %s : f32 to f16
  %w = uop.store %h, %out[%i, %j] : memref<8x16xf16>
  %e = uop.end %w over(%i, %j) : memref<8x16xf16>
  return
}
func.func @half_matmul_vector(%out: memref<8x16xf16>, %a: memref<8x4xf16>, %b: memref<4x16xf16>) attributes {pytc.kernel, pytc.vector = {group = 2 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}} {
  %i = uop.range loop 8 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 4 id 2
  %x = uop.index %a[%i, %k] : memref<8x4xf16>
  %y = uop.index %b[%k, %j] : memref<4x16xf16>
  %p = uop.mul %x, %y : f16
  %wide = uop.cast %p : f16 to f32
  %s = uop.range_reduce add %wide over(%k) : f32
  %h = uop.cast %s : f32 to f16
  %w = uop.store %h, %out[%i, %j] : memref<8x16xf16>
  %e = uop.end %w over(%i, %j) : memref<8x16xf16>
  return
}
