// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-vectorize

// pytc-vectorize marks kernels: a tensor-level graph has none yet.
func.func @tensor_level(%a: tensor<4x16xf32>) {
  %n = uop.neg %a : tensor<4x16xf32>
  // expected-error @+1 {{pytc-vectorize expects kernels split by pytc-split-kernels, but @tensor_level is a tensor-level graph: run pytc-rangeify, pytc-bufferize, pytc-split-kernels first}}
  uop.sink %n : tensor<4x16xf32>
  return
}

// -----

// After pytc-lower-kernels the kernel is scalar loops: too late to choose vectors.
// expected-error @+1 {{pytc-vectorize expects index-level kernels, but @E_16 is a lowered kernel already (pytc-lower-kernels ran): run pytc-vectorize before pytc-lower-kernels}}
func.func @E_16(%out: memref<16xf32>, %a: memref<16xf32>, %begin: index, %end: index) attributes {pytc.extent = 16 : i64, pytc.kernel} {
  return
}

// -----

// A loop range the kernel reads along but its uop.end does not close: the read has no loop to run in.
func.func @open_range(%out: memref<16xf32>, %a: memref<16x16xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 16 id 0
  // expected-error @+1 {{pytc-vectorize: this loop range is used but not closed by the uop.end of kernel @open_range}}
  %j = uop.range loop 16 id 1
  %x = uop.index %a[%i, %j] : memref<16x16xf32>
  %w = uop.store %x, %out[%i] : memref<16xf32>
  %e = uop.end %w over (%i) : memref<16xf32>
  return
}

// -----

// A read past the end of its row: j + 1 reaches 16 in a row of 16.
func.func @shifted(%out: memref<4x16xf32>, %a: memref<4x16xf32>) attributes {pytc.kernel} {
  %c1 = arith.constant 1 : index
  %i = uop.range loop 4 id 0
  %j = uop.range loop 16 id 1
  %j1 = arith.addi %j, %c1 : index
  // expected-error @+1 {{pytc-vectorize: this uop.index reads indices 1 to 16 along axis 1 of memref<4x16xf32>, outside its 16 elements}}
  %x = uop.index %a[%i, %j1] : memref<4x16xf32>
  %w = uop.store %x, %out[%i, %j] : memref<4x16xf32>
  %e = uop.end %w over (%i, %j) : memref<4x16xf32>
  return
}
