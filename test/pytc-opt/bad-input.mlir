// Input a new user might write: each chunk fails at its line with one error (parse, verifier or pass), exit 1.
// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-rangeify
// RUN: not pytc-opt %s --split-input-file -pytc-rangeify 2>&1 | FileCheck %s --implicit-check-not=Traceback
// CHECK-COUNT-8: bad-input.mlir:{{[1-9][0-9]*}}:{{[0-9]+}}: error:

func.func @unknown_op(%a: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'uop.negate' is unknown}}
  %n = uop.negate %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}

// -----

func.func @unknown_dialect(%a: tensor<4xf32>) {
  // expected-note @+2 {{Available dialects}}
  // expected-error @+1 {{Dialect `torch' not found for custom op 'torch.relu'}}
  %n = torch.relu %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}

// -----

func.func @mixed_types(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%b' expects different type than prior uses: 'tensor<4xf32>' vs 'tensor<4xi32>'}}
  %n = uop.add %a, %b : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}

// -----

func.func @scalar_output(%a: f32) {
  // expected-error @+1 {{'uop.sink' op operand #0 must be variadic of static tensor or memref, but got 'f32'}}
  uop.sink %a : f32
  return
}

// -----

func.func @dynamic_shape(%a: tensor<?xf32>) {
  // expected-error @+1 {{'uop.neg' op operand #0 must be numeric (not i1) tensor or scalar, but got 'tensor<?xf32>'}}
  %n = uop.neg %a : tensor<?xf32>
  uop.sink %n : tensor<?xf32>
  return
}

// -----

func.func @no_return(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  // expected-error @+1 {{block with no terminator}}
  uop.sink %n : tensor<4xf32>
}

// -----

// A graph computed by a function that returns it instead of sinking it.
func.func @returns_tensor(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{pytc-rangeify: @returns_tensor holds uop ops but is neither a graph}}
  %n = uop.neg %a : tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// Index-level code handed to the first pass: pytc-rangeify reads tensor-level graphs.
func.func @kernel_without_attribute(%out: memref<4xf32>, %in: memref<4xf32>) {
  // expected-error @+1 {{pytc-rangeify: @kernel_without_attribute holds uop ops but is neither a graph}}
  %i = uop.range loop 4 id 0
  %x = uop.index %in[%i] : memref<4xf32>
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  return
}
