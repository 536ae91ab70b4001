// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{max_row=0},canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-schedule,pytc-lower-kernels,canonicalize,cse)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-vectorize)' | FileCheck %s --check-prefix=MARK
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-vectorize,pytc-lower-kernels,canonicalize,cse)' | FileCheck %s --check-prefix=VECTOR

// cos on f32 is sin's reduction shifted by a quarter turn, in f64: k = roundeven(x / pi + 1/2), r = x - (k - 1/2) pi
// (pi in two parts); for huge |x| the fraction of x / pi is summed from 1/2 (an scf.if on any lane); k's parity
// flips r's sign bit and the sine polynomial is rounded to f32 once. No libm call, and no -0 select as sin has.
// CHECK-LABEL: func.func @E_8(
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
// MARK-LABEL: func.func @E_8(
// MARK-SAME: pytc.vector = {{{.*}}stream = 1
// VECTOR-LABEL: func.func @E_8(
// VECTOR: arith.extf %{{.*}} : vector<8xf32> to vector<8xf64>
// VECTOR: vector.reduction <or>, %{{.*}} : vector<8xi1> into i1
// VECTOR: arith.truncf %{{.*}} : vector<8xf64> to vector<8xf32>
// VECTOR-NOT: math.cos
func.func @cosine(%a: tensor<8xf32>) {
  %s = uop.cos %a : tensor<8xf32>
  uop.sink %s : tensor<8xf32>
  return
}

// -----

// exp on f32: n = floor(x / ln2 + 1/2), r = x - n ln2 with ln2 in two parts (contractible into fused multiply-adds),
// the Taylor series of e^r, then 2^n built in the exponent bits in two halves (denormal results round once), NaN
// selected back at the end.
// CHECK-LABEL: func.func @E_8(
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<8xf32>
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[N:.*]] = math.floor %{{.*}} : f32
// CHECK: %[[HIGH:.*]] = arith.mulf %[[N]], %{{.*}} fastmath<contract> : f32
// CHECK: %[[R1:.*]] = arith.subf %{{.*}}, %[[HIGH]] fastmath<contract> : f32
// CHECK: %[[LOW:.*]] = arith.mulf %[[N]], %{{.*}} fastmath<contract> : f32
// CHECK: %[[R:.*]] = arith.subf %[[R1]], %[[LOW]] fastmath<contract> : f32
// CHECK: arith.mulf %{{.*}}, %[[R]] fastmath<contract> : f32
// CHECK: arith.fptosi %[[N]] : f32 to i32
// CHECK: %[[P1:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[P2:.*]] = arith.mulf %[[P1]], %{{.*}} : f32
// CHECK: arith.select %[[NAN]], %[[X]], %[[P2]] : f32
// CHECK-NOT: math.exp
// MARK-LABEL: func.func @E_8(
// MARK-SAME: pytc.vector = {{{.*}}stream = 1
// VECTOR-LABEL: func.func @E_8(
// VECTOR: math.floor %{{.*}} : vector<8xf32>
// VECTOR: arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi32>
// VECTOR-NOT: math.exp
func.func @exponential(%a: tensor<8xf32>) {
  %e = uop.exp %a : tensor<8xf32>
  uop.sink %e : tensor<8xf32>
  return
}

// -----

// log on f32: x = m 2^e, f = m - 1, s = f / (2 + f); log(m) = f - (f^2/2 - s (f^2/2 + R(s^2))), then e ln2 added with
// ln2 in two parts; log(0) = -inf, log(inf) = inf and NaN below 0 selected at the end.
// CHECK-LABEL: func.func @E_8(
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
// VECTOR-LABEL: func.func @E_8(
// VECTOR: arith.divf %{{.*}}, %{{.*}} : vector<8xf32>
// VECTOR-NOT: math.log
func.func @logarithm(%a: tensor<8xf32>) {
  %l = uop.log %a : tensor<8xf32>
  uop.sink %l : tensor<8xf32>
  return
}

// -----

// f16 and bf16 compute cos and exp in f32 and round once: f16 by truncf, bf16 on the bits.
// CHECK-LABEL: func.func @E_8(
// CHECK: %[[H:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %[[H]] : f32 to f64
// CHECK: %[[COS:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %[[COS]] : f32 to f16
// CHECK: %[[B:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: math.floor %{{.*}} : f32
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK-NOT: math.cos
// CHECK-NOT: math.exp
// VECTOR-LABEL: func.func @E_8(
func.func @halves(%h: tensor<8xf16>, %b: tensor<8xbf16>) {
  %c = uop.cos %h : tensor<8xf16>
  %e = uop.exp %b : tensor<8xbf16>
  uop.sink %c, %e : tensor<8xf16>, tensor<8xbf16>
  return
}

// -----

// f64 keeps the math ops (libm).
// CHECK-LABEL: func.func @E_8(
// CHECK: %[[C:.*]] = math.cos %{{.*}} : f64
// CHECK: %[[E:.*]] = math.exp %[[C]] : f64
// CHECK: math.log %[[E]] : f64
func.func @double(%a: tensor<8xf64>) {
  %c = uop.cos %a : tensor<8xf64>
  %e = uop.exp %c : tensor<8xf64>
  %l = uop.log %e : tensor<8xf64>
  uop.sink %l : tensor<8xf64>
  return
}
