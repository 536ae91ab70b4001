// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{max_row=0},canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-schedule,pytc-lower-kernels,canonicalize,cse)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-vectorize,pytc-lower-kernels,canonicalize,cse)' | FileCheck %s --check-prefix=VECTOR

// sin on f32 works in f64: k = roundeven(x / pi) and r = x - k pi (pi in two parts) for |x| up to 2^24; the
// exact reduction for larger |x| runs only when some lane needs it (an scf.if on any lane); k's parity flips
// r's sign bit, the odd polynomial in r is rounded to f32 once, and sin(-0) = -0 is selected at the end.
// CHECK-LABEL: func.func @E_8(
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
// VECTOR-LABEL: func.func @E_8(
// VECTOR: arith.extf %{{.*}} : vector<8xf32> to vector<8xf64>
// VECTOR: %[[ANY:.*]] = vector.reduction <or>, %{{.*}} : vector<8xi1> into i1
// VECTOR: scf.if %[[ANY]] -> (vector<8xf64>, vector<8xf64>) {
// VECTOR: arith.truncf %{{.*}} : vector<8xf64> to vector<8xf32>
func.func @sine(%a: tensor<8xf32>) {
  %s = uop.sin %a : tensor<8xf32>
  uop.sink %s : tensor<8xf32>
  return
}

// -----

// f32 to bf16 rounds to nearest even on the bits (no truncf, whose x86 instruction flushes denormals to
// zero); a NaN becomes the quiet NaN of its top bits.
// CHECK-LABEL: func.func @E_8(
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
func.func @to_bfloat16(%a: tensor<8xf32>) {
  %c = uop.cast %a : tensor<8xf32> to tensor<8xbf16>
  uop.sink %c : tensor<8xbf16>
  return
}

// -----

// bf16 arithmetic that rounds computes in f32 and rounds back on the bits, keeping denormal results; NaNs computed
// from bf16 operands need no special case (their low 16 bits are clear).
// CHECK-LABEL: func.func @E_8(
// CHECK: %[[A:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[B:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: arith.bitcast %[[P]] : f32 to i32
// CHECK-NOT: arith.cmpf
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK-NOT: arith.mulf {{.*}} : bf16
// CHECK: return
func.func @bfloat16_product(%a: tensor<8xbf16>, %b: tensor<8xbf16>) {
  %p = uop.mul %a, %b : tensor<8xbf16>
  uop.sink %p : tensor<8xbf16>
  return
}

// -----

// f64 (and integers, through f64) to bf16: to f32 rounding to odd (toward zero, the last bit set when inexact), then
// to bf16 as above, so that it rounds once; LLVM's own f64 to bf16 is a library call the JIT does not have.
// CHECK-LABEL: func.func @E_8(
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<8xf64>
// CHECK-NEXT: %[[NEAR:.*]] = arith.truncf %[[X]] : f64 to f32
// CHECK: arith.cmpf one, %{{.*}}, %[[X]] : f64
// CHECK: arith.subi
// CHECK: arith.ori
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK-NOT: to bf16
// CHECK-LABEL: func.func @E_8n1(
// CHECK: arith.sitofp %{{.*}} : i32 to f64
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK-NOT: to bf16
func.func @wide_to_bfloat16(%a: tensor<8xf64>, %b: tensor<8xi32>) {
  %c = uop.cast %a : tensor<8xf64> to tensor<8xbf16>
  %d = uop.cast %b : tensor<8xi32> to tensor<8xbf16>
  uop.sink %c, %d : tensor<8xbf16>, tensor<8xbf16>
  return
}

// -----

// A sum in f32 of f16 products (a half matmul accumulating in float) widens the factors and multiplies them in
// f32, exactly, so the sum rounds once (to f16 at the end), not once per product; vector code fuses it into fma.
// CHECK-LABEL: func.func @r_8_16_4(
// CHECK: scf.for {{.*}} -> (f32) {
// CHECK: %[[A:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[B:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: arith.addf %{{.*}}, %[[P]] fastmath<reassoc> : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: arith.mulf {{.*}} : f16
// VECTOR-LABEL: func.func @r_8_16_4(
// VECTOR: %[[B:.*]] = arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// VECTOR: math.fma %{{.*}}, %[[B]], %{{.*}} : vector<8xf32>
// VECTOR-NOT: arith.mulf {{.*}} : vector<8xf16>
// VECTOR: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
func.func @half_matmul(%a: tensor<8x4xf16>, %b: tensor<4x16xf16>) {
  %x = uop.reshape %a : tensor<8x4xf16> -> tensor<8x1x4xf16>
  %xe = uop.expand %x : tensor<8x1x4xf16> -> tensor<8x16x4xf16>
  %bt = uop.permute %b [1, 0] : tensor<4x16xf16> -> tensor<16x4xf16>
  %y = uop.reshape %bt : tensor<16x4xf16> -> tensor<1x16x4xf16>
  %ye = uop.expand %y : tensor<1x16x4xf16> -> tensor<8x16x4xf16>
  %m = uop.mul %xe, %ye : tensor<8x16x4xf16>
  %w = uop.cast %m : tensor<8x16x4xf16> to tensor<8x16x4xf32>
  %s = uop.reduce add %w [2] : tensor<8x16x4xf32> -> tensor<8x16x1xf32>
  %r = uop.reshape %s : tensor<8x16x1xf32> -> tensor<8x16xf32>
  %h = uop.cast %r : tensor<8x16xf32> to tensor<8x16xf16>
  uop.sink %h : tensor<8x16xf16>
  return
}
