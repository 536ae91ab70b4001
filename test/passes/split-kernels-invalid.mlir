// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-split-kernels

// pytc-split-kernels cuts a bufferized graph at its loop ends: a tensor-level graph has none yet.
func.func @tensor_level(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  // expected-error @+1 {{pytc-split-kernels expects a graph bufferized by pytc-bufferize, but @tensor_level is a tensor-level graph: run pytc-rangeify, pytc-bufferize first}}
  uop.sink %n : tensor<4xf32>
  return
}

// -----

func.func @rangeified(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  // expected-error @+1 {{pytc-split-kernels expects a graph bufferized by pytc-bufferize, but @rangeified is a rangeified graph: run pytc-bufferize first}}
  %b = uop.bufferize %x over (%i) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %b : tensor<4xf32>
  return
}

// -----

// A kernel written by hand without its pytc.kernel attribute and without a sink is neither a graph nor a kernel.
func.func @E_4(%out: memref<4xf32>, %a: memref<4xf32>) {
  // expected-error @+1 {{pytc-split-kernels: @E_4 holds uop ops but is neither a graph (with a uop.sink listing its outputs at its top level) nor a kernel (with the pytc.kernel attribute)}}
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : memref<4xf32>
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  return
}
