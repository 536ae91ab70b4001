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

// -----

// pytc-lower-kernels lowers kernels: a graph before pytc-split-kernels has none.
func.func @tensor_level(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  // expected-error @+1 {{pytc-lower-kernels expects kernels split by pytc-split-kernels, but @tensor_level is a tensor-level graph: run pytc-rangeify, pytc-bufferize, pytc-split-kernels first}}
  uop.sink %n : tensor<4xf32>
  return
}

// -----

func.func @rangeified(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  // expected-error @+1 {{pytc-lower-kernels expects kernels split by pytc-split-kernels, but @rangeified is a rangeified graph: run pytc-bufferize, pytc-split-kernels first}}
  %b = uop.bufferize %x over (%i) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %b : tensor<4xf32>
  return
}

// -----

// A store with no uop.end closing its loops: the kernel would be left unlowered.
func.func @no_end(%out: memref<4xf32>, %in: memref<4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %x = uop.index %in[%i] : memref<4xf32>
  // expected-error @+1 {{pytc-lower-kernels: kernel @no_end has no uop.end}}
  %w = uop.store %x, %out[%i] : memref<4xf32>
  return
}

// -----

// A second store in a kernel that its uop.end does not close, at another element than the one it closes: no sibling.
func.func @two_stores(%out: memref<4xf32>, %copy: memref<4xf32>, %in: memref<4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %c0 = arith.constant 0 : index
  %x = uop.index %in[%i] : memref<4xf32>
  // expected-error @+1 {{pytc-lower-kernels: this uop.store is not closed by the uop.end of kernel @two_stores, nor a sibling of the one it closes}}
  %w2 = uop.store %x, %copy[%c0] : memref<4xf32>
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  return
}

// -----

// A reduce range read without the uop.range_reduce that loops over it.
func.func @open_reduce(%out: memref<4xf32>, %in: memref<4x8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  // expected-error @+1 {{pytc-lower-kernels: this reduce range is used but not closed by a uop.range_reduce in kernel @open_reduce}}
  %k = uop.range reduce 8 id 1
  %x = uop.index %in[%i, %k] : memref<4x8xf32>
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  return
}

// -----

// A graph op inside a kernel.
func.func @buffer_inside(%out: memref<4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  // expected-error @+1 {{pytc-lower-kernels: uop.buffer cannot appear in kernel @buffer_inside: a kernel is index-level code}}
  %t = uop.buffer : memref<4xf32>
  %x = uop.index %t[%i] : memref<4xf32>
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  return
}

// -----

// Flipped without the -1: 4 - i reads 1..4 of a 4-element buffer.
func.func @flip_off_by_one(%out: memref<4xf32>, %in: memref<4xf32>) attributes {pytc.kernel} {
  %c4 = arith.constant 4 : index
  %i = uop.range loop 4 id 0
  %j = arith.subi %c4, %i : index
  // expected-error @+1 {{pytc-lower-kernels: this uop.index reads indices 1 to 4 along axis 0 of memref<4xf32>, outside its 4 elements}}
  %x = uop.index %in[%j] : memref<4xf32>
  %w = uop.store %x, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  return
}

// -----

// A row-major flattening with the wrong stride: 8 * i + j reaches 31 in a 4x4 (16-element) buffer.
func.func @wrong_stride(%out: memref<4x4xf32>, %in: memref<16xf32>) attributes {pytc.kernel} {
  %c8 = arith.constant 8 : index
  %i = uop.range loop 4 id 0
  %j = uop.range loop 4 id 1
  %row = arith.muli %i, %c8 : index
  %flat = arith.addi %row, %j : index
  // expected-error @+1 {{pytc-lower-kernels: this uop.index reads indices 0 to 27 along axis 0 of memref<16xf32>, outside its 16 elements}}
  %x = uop.index %in[%flat] : memref<16xf32>
  %w = uop.store %x, %out[%i, %j] : memref<4x4xf32>
  %e = uop.end %w over (%i, %j) : memref<4x4xf32>
  return
}

// -----

// Every value of this index is past the end: (i + 8) / 2 is 4 for both values of i, in a buffer of 4.
func.func @divided(%out: memref<2xf32>, %in: memref<4xf32>) attributes {pytc.kernel} {
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %i = uop.range loop 2 id 0
  %s = arith.addi %i, %c8 : index
  %h = arith.divui %s, %c2 : index
  // expected-error @+1 {{pytc-lower-kernels: this uop.index reads index 4 along axis 0 of memref<4xf32>, outside its 4 elements}}
  %x = uop.index %in[%h] : memref<4xf32>
  %w = uop.store %x, %out[%i] : memref<2xf32>
  %e = uop.end %w over (%i) : memref<2xf32>
  return
}

// -----

// Reads shifted by one that stay inside (i + 1 <= 3 in a buffer of 4) lower: no error.
func.func @shifted_read(%out: memref<3xf32>, %in: memref<4xf32>) attributes {pytc.kernel} {
  %c1 = arith.constant 1 : index
  %i = uop.range loop 3 id 0
  %x = uop.index %in[%i] : memref<4xf32>
  %i1 = arith.addi %i, %c1 : index
  %y = uop.index %in[%i1] : memref<4xf32>
  %s = uop.add %x, %y : f32
  %w = uop.store %s, %out[%i] : memref<3xf32>
  %e = uop.end %w over (%i) : memref<3xf32>
  return
}
func.func @graph(%in: memref<4xf32>, %out: memref<3xf32>) {
  uop.launch @shifted_read(%out, %in) : memref<3xf32>, memref<4xf32>
  uop.sink %out : memref<3xf32>
  return
}
