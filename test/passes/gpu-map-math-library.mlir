// RUN: pytc-opt %s --pass-pipeline='builtin.module(pytc-gpu-map,canonicalize,cse)' | FileCheck %s
// RUN: pytc-opt %s --pass-pipeline='builtin.module(pytc-gpu-map{math_library=0},canonicalize,cse)' | FileCheck %s --check-prefix=NOLIB
// RUN: pytc-opt %s -pytc-gpu-map | pytc-opt --pass-pipeline='builtin.module(convert-scf-to-cf, gpu.module(convert-gpu-to-rocdl{chipset=gfx942 index-bitwidth=64}), reconcile-unrealized-casts)' | FileCheck %s --check-prefix=ROCDL
// RUN: pytc-opt %s -pytc-gpu-map=math_library=0 | pytc-opt --pass-pipeline='builtin.module(convert-scf-to-cf, gpu.module(convert-gpu-to-rocdl{chipset=gfx942 index-bitwidth=64}), reconcile-unrealized-casts)' | FileCheck %s --check-prefix=ROCDL-NOLIB --implicit-check-not=__ocml

// By default (a target linking a math library: libm, libdevice) f64 sin stays math.sin and pow math.powf, which the AMD
// lowering turns into device-library calls that no AMD code object pytc builds can resolve.
// CHECK-LABEL: gpu.func @sine(
// CHECK: math.sin %{{.*}} : f64
// CHECK-LABEL: gpu.func @power(
// CHECK: math.powf %{{.*}}, %{{.*}} : f32
// ROCDL: llvm.func @__ocml_sin_f64
// ROCDL: llvm.func @__ocml_pow_f32

// math_library=0: f64 sin is x = k pi/2 + r (r as a pair: fused multiply-adds), the reduction of huge |x| in an scf.if
// taken when the lane needs it, the quadrant's sine or cosine series, NaN for infinities; f32 pow computes in f64 and
// rounds once. No math op is left that becomes a library call.
// NOLIB-LABEL: gpu.func @sine(
// NOLIB: %[[X:.*]] = memref.load %{{.*}} : memref<64xf64>
// NOLIB-NEXT: %[[ZERO:.*]] = arith.cmpf oeq, %[[X]], %{{.*}} : f64
// NOLIB: math.roundeven %{{.*}} : f64
// NOLIB: math.fma %{{.*}} : f64
// NOLIB: scf.if %{{.*}} -> (f64, f64, f64) {
// NOLIB: } else {
// NOLIB: arith.fptosi %{{.*}} : f64 to i32
// NOLIB: %[[SIN:.*]] = arith.select %[[ZERO]], %[[X]], %{{.*}} : f64
// NOLIB-NEXT: memref.store %[[SIN]]
// NOLIB-NOT: math.sin
// NOLIB-LABEL: gpu.func @power(
// NOLIB: %[[A:.*]] = memref.load %{{.*}} : memref<64xf32>
// NOLIB: %[[B:.*]] = memref.load %{{.*}} : memref<64xf32>
// NOLIB-DAG: arith.extf %[[A]] : f32 to f64
// NOLIB-DAG: arith.extf %[[B]] : f32 to f64
// NOLIB: math.fma %{{.*}} : f64
// NOLIB: math.trunc %{{.*}} : f64
// NOLIB: arith.cmpf uno, %{{.*}}, %{{.*}} : f64
// NOLIB: %[[P:.*]] = arith.truncf %{{.*}} : f64 to f32
// NOLIB-NEXT: memref.store %[[P]]
// NOLIB-NOT: math.powf
// ROCDL-NOLIB: llvm.func @sine(
// ROCDL-NOLIB: llvm.intr.fma
// ROCDL-NOLIB: llvm.func @power(
func.func @sine(%out: memref<64xf64>, %x: memref<64xf64>) attributes {pytc.kernel} {
  %i = uop.range loop 64 id 0
  %x_i = uop.index %x[%i] : memref<64xf64>
  %r = uop.sin %x_i : f64
  %w = uop.store %r, %out[%i] : memref<64xf64>
  %e = uop.end %w over(%i) : memref<64xf64>
  return
}
func.func @power(%out: memref<64xf32>, %a: memref<64xf32>, %b: memref<64xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 64 id 0
  %a_i = uop.index %a[%i] : memref<64xf32>
  %b_i = uop.index %b[%i] : memref<64xf32>
  %r = uop.pow %a_i, %b_i : f32
  %w = uop.store %r, %out[%i] : memref<64xf32>
  %e = uop.end %w over(%i) : memref<64xf32>
  return
}
