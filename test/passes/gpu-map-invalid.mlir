// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-gpu-map
// RUN: not pytc-opt %s -pytc-gpu-map='local_size=100' 2>&1 | FileCheck %s --check-prefix=POW2
// RUN: not pytc-opt %s -pytc-gpu-map='local_size=2048' 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not pytc-opt %s -pytc-gpu-map='outputs_per_thread=0' 2>&1 | FileCheck %s --check-prefix=OUTPUTS
// RUN: not pytc-opt %s -pytc-gpu-map='local_size=abc' 2>&1 | FileCheck %s --check-prefix=NOTINT
// RUN: not pytc-opt %s -pytc-gpu-map='threads=4' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not pytc-opt %s -pytc-gpu-map='group_reduce=-1' 2>&1 | FileCheck %s --check-prefix=GROUP
// RUN: not pytc-opt %s -pytc-gpu-map='tile=12' 2>&1 | FileCheck %s --check-prefix=TILE
// POW2: pytc-opt: error: pytc-gpu-map: option local_size expects a power of two from 1 to 1024, got 100
// LARGE: pytc-opt: error: pytc-gpu-map: option local_size expects a power of two from 1 to 1024, got 2048
// OUTPUTS: pytc-opt: error: pytc-gpu-map: option outputs_per_thread expects an integer from 1 to 64, got 0
// NOTINT: pytc-opt: error: pytc-gpu-map: option local_size expects an integer, got 'abc'
// GROUP: pytc-opt: error: pytc-gpu-map: option group_reduce expects an integer >= 0, got -1
// TILE: pytc-opt: error: pytc-gpu-map: option tile expects a power of two from 0 to 32, got 12
// UNKNOWN: pytc-opt: error: pytc-gpu-map has no option 'threads' (options: local_size, outputs_per_thread, group_reduce, tile, vector_bytes, explain, math_library)

// pytc-gpu-map maps kernels that pytc-split-kernels made: a tensor-level graph has none yet.
func.func @tensor_level(%a: tensor<4x16xf32>) {
  %n = uop.neg %a : tensor<4x16xf32>
  // expected-error @+1 {{pytc-gpu-map expects kernels split by pytc-split-kernels, but @tensor_level is a tensor-level graph: run pytc-rangeify, pytc-bufferize, pytc-split-kernels first}}
  uop.sink %n : tensor<4x16xf32>
  return
}

// -----

// A kernel pytc-lower-kernels lowered for the CPU (scalar loops over its slice of the range) is past the mapping.
// expected-error @+1 {{pytc-gpu-map expects index-level kernels, but @E_16 is a lowered kernel already (pytc-lower-kernels ran): run pytc-gpu-map before pytc-lower-kernels}}
func.func @E_16(%out: memref<16xf32>, %a: memref<16xf32>, %begin: index, %end: index) attributes {pytc.extent = 16 : i64, pytc.kernel} {
  return
}

// -----

// A kernel whose store is not closed by a uop.end has no output ranges to map onto threads.
func.func @no_end(%out: memref<16xf32>, %a: memref<16xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 16 id 0
  %x = uop.index %a[%i] : memref<16xf32>
  // expected-error @+1 {{pytc-gpu-map: kernel @no_end has no uop.end: its store must be closed by `uop.end %stored over (%loop ranges)`}}
  %w = uop.store %x, %out[%i] : memref<16xf32>
  return
}

// -----

// The mapping's record sits on the gpu.func it makes, not on a func.func.
// expected-error @+1 {{pytc-gpu-map: pytc.gpu belongs on gpu.func, not on func.func}}
func.func @marked(%out: memref<16xf32>, %a: memref<16xf32>) attributes {pytc.kernel, pytc.gpu = {grid = 1, local = 32, outputs = 1, total = 16}} {
  %i = uop.range loop 16 id 0
  %x = uop.index %a[%i] : memref<16xf32>
  %w = uop.store %x, %out[%i] : memref<16xf32>
  %e = uop.end %w over(%i) : memref<16xf32>
  return
}
