// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-rangeify

// An assign writes into an existing buffer: not expressible as index-level code.
func.func @assign(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{pytc-rangeify cannot handle uop.assign}}
  %x = uop.assign %a, %b : tensor<4xf32>
  uop.sink %x : tensor<4xf32>
  return
}

// -----

// A graph function has exactly one sink listing all of its outputs.
// expected-error @+1 {{graph function @two_sinks needs exactly one uop.sink}}
func.func @two_sinks(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  uop.sink %a : tensor<4xf32>
  return
}
