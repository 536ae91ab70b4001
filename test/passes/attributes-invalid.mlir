// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-fuse
// Every pass checks the attributes passes leave for each other (passes/common/attributes.py) before it runs.

// A misspelled pytc attribute is not silently ignored.
// expected-error @+1 {{pytc-fuse: pytc.kernal is not an attribute pytc declares}}
func.func @typo() attributes {pytc.kernal} {
  return
}

// -----

// pytc.kernel is a unit attribute.
// expected-error @+1 {{pytc-fuse: malformed pytc.kernel on func.func: it has a value (expected a unit attribute)}}
func.func @valued() attributes {pytc.kernel = 1 : i64} {
  return
}

// -----

// pytc.vector needs every key of the tile, each an i64 in its range.
// expected-error @+1 {{pytc-fuse: malformed pytc.vector on func.func: it lacks vectors, rows, group, upcast, pack, unroll}}
func.func @partial_tile() attributes {pytc.kernel, pytc.vector = {lanes = 8 : i64}} {
  return
}

// -----

// expected-error @+1 {{pytc-fuse: malformed pytc.vector on func.func: lanes: 12 is not a power of two from 1 to 64}}
func.func @odd_lanes() attributes {pytc.kernel, pytc.vector = {lanes = 12 : i64, vectors = 2 : i64, rows = 4 : i64, group = 1 : i64, upcast = -1 : i64, pack = 0 : i64, unroll = 0 : i64}} {
  return
}

// -----

// pytc.extent belongs on lowered kernels, not on graphs.
// expected-error @+1 {{pytc-fuse: pytc.extent belongs on kernels, not on this func.func}}
func.func @graph_extent() attributes {pytc.extent = 4 : i64} {
  return
}

// -----

// pytc.split marks a uop.reduce; anywhere else it is misplaced.
func.func @misplaced(%a: tensor<4xf32>) {
  // expected-error @+1 {{pytc-fuse: pytc.split belongs on uop.reduce, not on uop.neg}}
  %n = uop.neg %a {pytc.split} : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}

// -----

// A materialization's reason is one pytc-rangeify (or pytc-fuse) gives.
func.func @reason(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  // expected-error @+1 {{pytc-fuse: malformed reason on uop.bufferize: "because" is not one of "output", "contiguous", "copy", "multi-use", "reduce-expand", "split"}}
  %b = uop.bufferize %x over (%i) {reason = "because"} : f32 -> tensor<4xf32>
  uop.sink %b : tensor<4xf32>
  return
}

// -----

// pytc-fuse's own record of a decision says kept or split.
func.func @fuse_note(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  // expected-error @+1 {{pytc-fuse: malformed fuse on uop.bufferize: "maybe" is not a string starting with "kept: " or "split: "}}
  %b = uop.bufferize %x over (%i) {reason = "output", fuse = "maybe"} : f32 -> tensor<4xf32>
  uop.sink %b : tensor<4xf32>
  return
}

// -----

// pytc.kernels counts a scheduled graph's launches: an i64.
// expected-error @+1 {{pytc-fuse: malformed pytc.kernels on func.func: it is not an i64 integer}}
func.func @count(%a: tensor<4xf32>) attributes {pytc.kernels = 2 : i32} {
  uop.sink %a : tensor<4xf32>
  return
}
