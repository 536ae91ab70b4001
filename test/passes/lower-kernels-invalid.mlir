// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-lower-kernels

// A kernel is one store and the end of its loop nest: a second end is rejected.
// expected-error @+1 {{kernel @two_ends needs exactly one uop.end}}
func.func @two_ends(%out: memref<4xf32>, %in: memref<4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %x = uop.index %in[%i] : memref<4xf32>
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %d = uop.end %w over (%i) : memref<4xf32>
  %j = uop.range loop 4 id 1
  %y = uop.index %in[%j] : memref<4xf32>
  %w2 = uop.store %y, %out[%j] : memref<4xf32>
  %d2 = uop.end %w2 over (%j) : memref<4xf32>
  return
}

// -----

// A range used outside the loop it names (here: a reduce range read after its range_reduce,
// outside any loop) cannot be lowered.
func.func @range_outside(%out: memref<1xf32>, %in: memref<4xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a uop.range is used outside the loop it names}}
  %k = uop.range reduce 4 id 0
  %x = uop.index %in[%k] : memref<4xf32>
  %s = uop.range_reduce add %x over (%k) : f32
  %y = uop.add %s, %x : f32
  %w = uop.store %y, %out[%c0] : memref<1xf32>
  %d = uop.end %w over () : memref<1xf32>
  return
}
