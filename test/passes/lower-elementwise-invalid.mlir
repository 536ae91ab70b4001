// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-lower-elementwise -o /dev/null

// Movement ops belong to the scheduling passes.
func.func @movement(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{uop.permute is not elementwise}}
  %0 = uop.permute %a [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  uop.sink %0 : tensor<3x2xf32>
  return
}

// -----

// Outputs of different shapes cannot share one loop nest.
// expected-error @+1 {{needs every value to have shape [2]}}
func.func @mixed_shapes(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  uop.sink %a, %b : tensor<2xf32>, tensor<3xf32>
  return
}

// -----

// expected-error @+1 {{needs exactly one uop.sink}}
func.func @two_sinks(%a: tensor<2xf32>) {
  uop.sink %a : tensor<2xf32>
  uop.sink %a : tensor<2xf32>
  return
}
