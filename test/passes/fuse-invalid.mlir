// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-fuse
// The width of the target's register block is from 1 to 1024 columns, checked before the pass runs.
// RUN: not pytc-opt %s -pytc-fuse='block_columns=0' 2>&1 | FileCheck %s --check-prefix=COLUMNS-ZERO
// RUN: not pytc-opt %s -pytc-fuse='block_columns=2048' 2>&1 | FileCheck %s --check-prefix=COLUMNS-MAX
// RUN: not pytc-opt %s -pytc-fuse='block_columns=wide' 2>&1 | FileCheck %s --check-prefix=COLUMNS-TYPE
// COLUMNS-ZERO: pytc-opt: error: pytc-fuse: option block_columns expects an integer from 1 to 1024, got 0
// COLUMNS-MAX: pytc-opt: error: pytc-fuse: option block_columns expects an integer from 1 to 1024, got 2048
// COLUMNS-TYPE: pytc-opt: error: pytc-fuse: option block_columns expects an integer, got 'wide'
// Graphs in the forms before and after pytc-fuse's own (rangeified): each is refused at the op that shows its form,
// naming the form and the pass to run first or the place pytc-fuse belongs.

// pytc-fuse decides which materializations of a rangeified graph stay: a tensor-level graph has none yet.
func.func @tensor_level(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  // expected-error @+1 {{pytc-fuse expects a graph rangeified by pytc-rangeify, but @tensor_level is a tensor-level graph: run pytc-rangeify first}}
  uop.sink %n : tensor<4xf32>
  return
}

// -----

// After pytc-bufferize the materializations are buffers: too late to fuse them.
func.func @bufferized(%a: memref<4xf32>, %out: memref<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : memref<4xf32>
  // expected-error @+1 {{pytc-fuse expects a graph rangeified by pytc-rangeify, but @bufferized is a bufferized graph already (pytc-bufferize ran): run pytc-fuse before pytc-bufferize}}
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  uop.sink %e : memref<4xf32>
  return
}

// -----

// Split into kernel launches (pytc-split-kernels' output): later still.
func.func @E_4(%out: memref<4xf32>, %a: memref<4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : memref<4xf32>
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  return
}
func.func @split(%a: memref<4xf32>, %out: memref<4xf32>) {
  // expected-error @+1 {{pytc-fuse expects a graph rangeified by pytc-rangeify, but @split is a graph split into kernel launches already (pytc-split-kernels ran): run pytc-fuse before pytc-bufferize}}
  uop.launch @E_4(%out, %a) : memref<4xf32>, memref<4xf32>
  uop.sink %out : memref<4xf32>
  return
}
