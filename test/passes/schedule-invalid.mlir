// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-schedule

// pytc-schedule orders the launches of a graph split into kernels.
func.func @tensor_level(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  // expected-error @+1 {{pytc-schedule expects kernels split by pytc-split-kernels, but @tensor_level is a tensor-level graph: run pytc-rangeify, pytc-bufferize, pytc-split-kernels first}}
  uop.sink %n : tensor<4xf32>
  return
}

// -----

func.func @rangeified(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  // expected-error @+1 {{pytc-schedule expects kernels split by pytc-split-kernels, but @rangeified is a rangeified graph: run pytc-bufferize, pytc-split-kernels first}}
  %b = uop.bufferize %x over (%i) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %b : tensor<4xf32>
  return
}

// -----

func.func @bufferized(%a: memref<4xf32>, %out: memref<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : memref<4xf32>
  // expected-error @+1 {{pytc-schedule expects kernels split by pytc-split-kernels, but @bufferized is a bufferized graph: run pytc-split-kernels first}}
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  uop.sink %e : memref<4xf32>
  return
}
