// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-split-reduce
// The target's vector lanes are a power of two up to 64, checked before the pass runs.
// RUN: not pytc-opt %s -pytc-split-reduce='lanes=12' 2>&1 | FileCheck %s --check-prefix=LANES-POW2
// RUN: not pytc-opt %s -pytc-split-reduce='lanes=0' 2>&1 | FileCheck %s --check-prefix=LANES-ZERO
// RUN: not pytc-opt %s -pytc-split-reduce='lanes=128' 2>&1 | FileCheck %s --check-prefix=LANES-MAX
// LANES-POW2: pytc-opt: error: pytc-split-reduce: option lanes expects a power of two from 1 to 64, got 12
// LANES-ZERO: pytc-opt: error: pytc-split-reduce: option lanes expects a power of two from 1 to 64, got 0
// LANES-MAX: pytc-opt: error: pytc-split-reduce: option lanes expects a power of two from 1 to 64, got 128

// pytc-split-reduce rewrites tensor-level reductions: after pytc-rangeify there are none left to split.
func.func @rangeified(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  // expected-error @+1 {{pytc-split-reduce expects a tensor-level graph, but @rangeified is a rangeified graph already (pytc-rangeify ran): run pytc-split-reduce before pytc-rangeify}}
  %b = uop.bufferize %x over (%i) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %b : tensor<4xf32>
  return
}

// -----

func.func @bufferized(%a: memref<4xf32>, %out: memref<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : memref<4xf32>
  // expected-error @+1 {{pytc-split-reduce expects a tensor-level graph, but @bufferized is a bufferized graph already (pytc-bufferize ran)}}
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  uop.sink %e : memref<4xf32>
  return
}

// -----

// A function of uop ops that lists no outputs is not a graph: nothing would be computed.
func.func @no_sink(%a: tensor<65536xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{pytc-split-reduce: @no_sink holds uop ops but is neither a graph (with a uop.sink listing its outputs at its top level) nor a kernel (with the pytc.kernel attribute)}}
  %r = uop.reduce add %a [0] : tensor<65536xf32> -> tensor<1xf32>
  return %r : tensor<1xf32>
}
