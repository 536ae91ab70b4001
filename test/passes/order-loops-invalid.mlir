// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-order-loops

// pytc-order-loops marks kernels: a graph not yet split into kernels has none.
func.func @bufferized(%a: memref<4xf32>, %out: memref<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : memref<4xf32>
  // expected-error @+1 {{pytc-order-loops expects kernels split by pytc-split-kernels, but @bufferized is a bufferized graph: run pytc-split-kernels first}}
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  uop.sink %e : memref<4xf32>
  return
}

// -----

// A kernel pytc-lower-kernels has lowered has no index-level loops left to reorder.
// expected-error @+1 {{pytc-order-loops expects index-level kernels, but @E_4 is a lowered kernel already (pytc-lower-kernels ran): run pytc-order-loops before pytc-lower-kernels}}
func.func @E_4(%out: memref<4xf32>, %a: memref<4xf32>, %begin: index, %end: index) attributes {pytc.extent = 4 : i64, pytc.kernel} {
  return
}

// -----

// A kernel's store is closed by a uop.end over its loops; without one the kernel is never lowered.
func.func @no_end(%out: memref<4x1xf32>, %a: memref<4x8xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %x = uop.index %a[%i, %k] : memref<4x8xf32>
  %s = uop.range_reduce add %x over (%k) : f32
  // expected-error @+1 {{pytc-order-loops: kernel @no_end has no uop.end: its store must be closed by `uop.end %stored over (%loop ranges)`}}
  %w = uop.store %s, %out[%i, %c0] : memref<4x1xf32>
  return
}
