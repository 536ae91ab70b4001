// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-bufferize

// pytc-bufferize turns the materializations pytc-rangeify marks into buffers: a tensor-level graph has none.
func.func @tensor_level(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{pytc-bufferize expects a graph rangeified by pytc-rangeify, but @tensor_level is a tensor-level graph: run pytc-rangeify first}}
  %r = uop.reduce add %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  uop.sink %r : tensor<4x1xf32>
  return
}

// -----

// A sink listing only arguments is valid at both levels: nothing to do, no error. The graph beside it is wrong.
func.func @passthrough(%a: tensor<4xf32>) {
  uop.sink %a : tensor<4xf32>
  return
}
func.func @graph(%a: tensor<4xf32>) {
  // expected-error @+1 {{pytc-bufferize expects a graph rangeified by pytc-rangeify, but @graph is a tensor-level graph: run pytc-rangeify first}}
  %c = uop.contiguous %a : tensor<4xf32>
  uop.sink %c : tensor<4xf32>
  return
}
