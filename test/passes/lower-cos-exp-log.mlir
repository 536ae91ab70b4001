// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-lower-kernels,canonicalize,cse)' | FileCheck %s

// cos on f32 is sin's reduction shifted by a quarter turn, in f64: k = roundeven(x / pi + 1/2), r = x - (k - 1/2) pi
// (pi in two parts); for huge |x| the fraction of x / pi is summed from 1/2 (an scf.if on any lane); k's parity
// flips r's sign bit and the sine polynomial is rounded to f32 once. No libm call, and no -0 select as sin has.
// Marked for vectors along the row (@cosine_vector), the same in vector<8xf64>, the far reduction taken when any lane
// needs it.
// CHECK-LABEL: func.func @cosine(
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<8xf32>
// CHECK: %[[WIDE:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK: %[[Q:.*]] = arith.mulf %[[WIDE]], %{{.*}} : f64
// CHECK: %[[SHIFTED:.*]] = arith.addf %[[Q]], %[[HALF:.*]] : f64
// CHECK: %[[K:.*]] = math.roundeven %[[SHIFTED]] : f64
// CHECK: %[[MULTIPLE:.*]] = arith.subf %[[K]], %[[HALF]] : f64
// CHECK: arith.mulf %[[MULTIPLE]], %{{.*}} fastmath<contract> : f64
// CHECK: %[[KR:.*]]:2 = scf.if %{{.*}} -> (f64, f64) {
// CHECK: arith.addf %{{.*}}, %[[HALF]] : f64
// CHECK: } else {
// CHECK: arith.bitcast %[[KR]]#1 : f64 to i64
// CHECK: %[[COS:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT: memref.store %[[COS]]
// CHECK-NOT: math.cos
// CHECK-LABEL: func.func @cosine_vector(
// CHECK: arith.extf %{{.*}} : vector<8xf32> to vector<8xf64>
// CHECK: vector.reduction <or>, %{{.*}} : vector<8xi1> into i1
// CHECK: arith.truncf %{{.*}} : vector<8xf64> to vector<8xf32>
// CHECK-NOT: math.cos
func.func @cosine(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf32>
  %r = uop.cos %x_i : f32
  %w = uop.store %r, %out[%i] : memref<8xf32>
  %e = uop.end %w over(%i) : memref<8xf32>
  return
}
func.func @cosine_vector(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf32>
  %r = uop.cos %x_i : f32
  %w = uop.store %r, %out[%i] : memref<8xf32>
  %e = uop.end %w over(%i) : memref<8xf32>
  return
}

// -----

// exp on f32: x bounded to [-111, 111] by compare and select, n = roundeven(x / ln2), r = x - n ln2 with ln2 in two parts
// (contractible into fused multiply-adds), a polynomial of degree 6 for e^r, then 2^n built in the exponent bits in two
// halves (denormal results round once), NaN selected back at the end. Marked for vectors (@exponential_vector), the same
// on vector<8xf32>.
// CHECK-LABEL: func.func @exponential(
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<8xf32>
// CHECK: %[[ABOVE:.*]] = arith.cmpf ogt, %[[X]], %{{.*}} : f32
// CHECK: %[[LOWER:.*]] = arith.select %[[ABOVE]], %[[X]], %{{.*}} : f32
// CHECK: %[[BELOW:.*]] = arith.cmpf olt, %[[LOWER]], %{{.*}} : f32
// CHECK: %[[BOUNDED:.*]] = arith.select %[[BELOW]], %[[LOWER]], %{{.*}} : f32
// CHECK: %[[N:.*]] = math.roundeven %{{.*}} : f32
// CHECK: %[[HIGH:.*]] = arith.mulf %[[N]], %{{.*}} fastmath<contract> : f32
// CHECK: %[[R1:.*]] = arith.subf %[[BOUNDED]], %[[HIGH]] fastmath<contract> : f32
// CHECK: %[[LOW:.*]] = arith.mulf %[[N]], %{{.*}} fastmath<contract> : f32
// CHECK: %[[R:.*]] = arith.subf %[[R1]], %[[LOW]] fastmath<contract> : f32
// CHECK-COUNT-6: arith.mulf {{.*}}%[[R]]{{(,| )}}{{.*}}fastmath<contract> : f32
// CHECK-NOT: arith.mulf {{.*}}%[[R]]{{(,| )}}{{.*}}fastmath<contract> : f32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: arith.fptosi %[[N]] : f32 to i32
// CHECK: %[[P1:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[P2:.*]] = arith.mulf %[[P1]], %{{.*}} : f32
// CHECK: arith.select %[[NAN]], %[[X]], %[[P2]] : f32
// CHECK-NOT: math.exp
// CHECK-LABEL: func.func @exponential_vector(
// CHECK: math.roundeven %{{.*}} : vector<8xf32>
// CHECK: arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK-NOT: math.exp
func.func @exponential(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf32>
  %r = uop.exp %x_i : f32
  %w = uop.store %r, %out[%i] : memref<8xf32>
  %e = uop.end %w over(%i) : memref<8xf32>
  return
}
func.func @exponential_vector(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf32>
  %r = uop.exp %x_i : f32
  %w = uop.store %r, %out[%i] : memref<8xf32>
  %e = uop.end %w over(%i) : memref<8xf32>
  return
}

// -----

// log on f32: x = m 2^e, f = m - 1, s = f / (2 + f); log(m) = f - (f^2/2 - s (f^2/2 + R(s^2))), then e ln2 added with
// ln2 in two parts; log(0) = -inf, log(inf) = inf and NaN below 0 selected at the end. Marked for vectors
// (@logarithm_vector), the same on vector<8xf32>.
// CHECK-LABEL: func.func @logarithm(
// CHECK: %[[F:.*]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: %[[D:.*]] = arith.addf %[[F]], %{{.*}} : f32
// CHECK: %[[S:.*]] = arith.divf %[[F]], %[[D]] : f32
// CHECK: %[[CORRECTION:.*]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: %[[E:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK: %[[LOGM:.*]] = arith.subf %[[F]], %[[CORRECTION]] : f32
// CHECK: %[[ELOW:.*]] = arith.mulf %[[E]], %{{.*}} fastmath<contract> : f32
// CHECK: arith.addf %[[ELOW]], %[[LOGM]] fastmath<contract> : f32
// CHECK: arith.cmpf ult, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: math.log
// CHECK-LABEL: func.func @logarithm_vector(
// CHECK: arith.divf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NOT: math.log
func.func @logarithm(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf32>
  %r = uop.log %x_i : f32
  %w = uop.store %r, %out[%i] : memref<8xf32>
  %e = uop.end %w over(%i) : memref<8xf32>
  return
}
func.func @logarithm_vector(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf32>
  %r = uop.log %x_i : f32
  %w = uop.store %r, %out[%i] : memref<8xf32>
  %e = uop.end %w over(%i) : memref<8xf32>
  return
}

// -----

// f16 and bf16 compute cos and exp in f32 and round once: f16 by truncf, bf16 widened and rounded on the bits (LLVM must
// see no bf16 fpext or fptrunc, which it may lower to a library call); as vectors too.
// CHECK-LABEL: func.func @cos_f16(
// CHECK: %[[H:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %[[H]] : f32 to f64
// CHECK: %[[COS:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %[[COS]] : f32 to f16
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : bf16 to i16
// CHECK: arith.extui %[[BITS]] : i16 to i32
// CHECK-NOT: arith.extf %{{.*}} : bf16
// CHECK: math.roundeven %{{.*}} : f32
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK-NOT: math.cos
// CHECK-NOT: math.exp
// CHECK-LABEL: func.func @cos_f16_vector(
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK-NOT: math.cos
func.func @cos_f16(%out: memref<8xf16>, %x: memref<8xf16>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf16>
  %r = uop.cos %x_i : f16
  %w = uop.store %r, %out[%i] : memref<8xf16>
  %e = uop.end %w over(%i) : memref<8xf16>
  return
}
func.func @exp_bf16(%out: memref<8xbf16>, %x: memref<8xbf16>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xbf16>
  %r = uop.exp %x_i : bf16
  %w = uop.store %r, %out[%i] : memref<8xbf16>
  %e = uop.end %w over(%i) : memref<8xbf16>
  return
}
func.func @cos_f16_vector(%out: memref<8xf16>, %x: memref<8xf16>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf16>
  %r = uop.cos %x_i : f16
  %w = uop.store %r, %out[%i] : memref<8xf16>
  %e = uop.end %w over(%i) : memref<8xf16>
  return
}

// -----

// f64 keeps the math ops (libm).
// CHECK-LABEL: func.func @double(
// CHECK: %[[C:.*]] = math.cos %{{.*}} : f64
// CHECK: %[[E:.*]] = math.exp %[[C]] : f64
// CHECK: math.log %[[E]] : f64
func.func @double(%out: memref<8xf64>, %x: memref<8xf64>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf64>
  %c = uop.cos %x_i : f64
  %ex = uop.exp %c : f64
  %r = uop.log %ex : f64
  %w = uop.store %r, %out[%i] : memref<8xf64>
  %e = uop.end %w over(%i) : memref<8xf64>
  return
}

// -----

// tanh on f32: the odd series x p(x^2) near 0, beyond 1 - 2 / (2^t + 1) with t = 2|x|/ln2 (|x| capped at 10) and the
// sign copied back; the series where |x| < 0.55, NaN selected last. f64 keeps the math op (libm).
// CHECK-LABEL: func.func @hyperbolic_tangent(
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<8xf32>
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK: arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[SERIES:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK: math.roundeven %{{.*}} : f32
// CHECK: %[[QUOTIENT:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: %[[MAGNITUDE:.*]] = arith.subf %{{.*}}, %[[QUOTIENT]] : f32
// CHECK: %[[FAR:.*]] = math.copysign %[[MAGNITUDE]], %[[X]] : f32
// CHECK: %[[NEAR:.*]] = arith.cmpf olt, %[[A]], %{{.*}} : f32
// CHECK: %[[RESULT:.*]] = arith.select %[[NEAR]], %[[SERIES]], %[[FAR]] : f32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: arith.select %[[NAN]], %[[X]], %[[RESULT]] : f32
// CHECK-NOT: math.tanh
// CHECK-LABEL: func.func @hyperbolic_tangent_double(
// CHECK: math.tanh %{{.*}} : f64
func.func @hyperbolic_tangent(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf32>
  %r = uop.tanh %x_i : f32
  %w = uop.store %r, %out[%i] : memref<8xf32>
  %e = uop.end %w over(%i) : memref<8xf32>
  return
}
func.func @hyperbolic_tangent_double(%out: memref<8xf64>, %x: memref<8xf64>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %x_i = uop.index %x[%i] : memref<8xf64>
  %r = uop.tanh %x_i : f64
  %w = uop.store %r, %out[%i] : memref<8xf64>
  %e = uop.end %w over(%i) : memref<8xf64>
  return
}
