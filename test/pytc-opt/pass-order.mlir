// A pass run on IR in the wrong form fails at the op that shows the form, names the passes to run first,
// exits 1 and prints no IR; a pass run after the form it makes has nothing left to do and is a no-op.
// RUN: not pytc-opt %s -pytc-split-kernels 2>&1 | FileCheck %s --check-prefix=SPLIT --implicit-check-not=func.func
// RUN: not pytc-opt %s -pytc-lower-kernels 2>&1 | FileCheck %s --check-prefix=LOWER --implicit-check-not=func.func
// RUN: not pytc-opt %s -pytc-rangeify -pytc-split-kernels 2>&1 | FileCheck %s --check-prefix=RANGEIFIED --implicit-check-not=func.func
// RUN: not pytc-opt %s -pytc-rangeify -pytc-bufferize -pytc-fuse 2>&1 | FileCheck %s --check-prefix=FUSE-LATE --implicit-check-not=func.func
// RUN: not pytc-opt %s -pytc-rangeify -pytc-split-reduce 2>&1 | FileCheck %s --check-prefix=SPLIT-REDUCE-LATE --implicit-check-not=func.func
// RUN: not pytc-opt %s -pytc-rangeify -pytc-bufferize -pytc-split-kernels -pytc-lower-kernels -pytc-vectorize 2>&1 | FileCheck %s --check-prefix=VECTORIZE-LATE --implicit-check-not=func.func
// RUN: not pytc-opt %s -pytc-rangeify -pytc-bufferize -pytc-split-kernels -pytc-lower-kernels -pytc-order-loops 2>&1 | FileCheck %s --check-prefix=ORDER-LATE --implicit-check-not=func.func
// RUN: pytc-opt %s -pytc-rangeify -pytc-bufferize -pytc-split-kernels -pytc-lower-kernels -pytc-rangeify -pytc-bufferize -pytc-split-kernels -pytc-lower-kernels | FileCheck %s --check-prefix=AGAIN

// SPLIT: pass-order.mlir:[[@LINE+16]]:8: error: pytc-split-kernels expects a graph bufferized by pytc-bufferize, but @graph is a tensor-level graph: run pytc-rangeify, pytc-bufferize first
// LOWER: pass-order.mlir:[[@LINE+15]]:8: error: pytc-lower-kernels expects kernels split by pytc-split-kernels, but @graph is a tensor-level graph: run pytc-rangeify, pytc-bufferize, pytc-split-kernels first
// RANGEIFIED: pass-order.mlir:{{[0-9]+}}:{{[0-9]+}}: error: pytc-split-kernels expects a graph bufferized by pytc-bufferize, but @graph is a rangeified graph: run pytc-bufferize first
// FUSE-LATE: error: pytc-fuse expects a graph rangeified by pytc-rangeify, but @graph is a bufferized graph already (pytc-bufferize ran): run pytc-fuse before pytc-bufferize
// SPLIT-REDUCE-LATE: error: pytc-split-reduce expects a tensor-level graph, but @graph is a rangeified graph already (pytc-rangeify ran): run pytc-split-reduce before pytc-rangeify
// VECTORIZE-LATE: error: pytc-vectorize expects index-level kernels, but @{{[rE]_[0-9_]+}} is a lowered kernel already (pytc-lower-kernels ran): run pytc-vectorize before pytc-lower-kernels
// ORDER-LATE: error: pytc-order-loops expects index-level kernels, but @{{[rE]_[0-9_]+}} is a lowered kernel already (pytc-lower-kernels ran): run pytc-order-loops before pytc-lower-kernels

// AGAIN-LABEL: func.func @r_4_8(
// AGAIN: scf.parallel
// AGAIN-LABEL: func.func @E_4_8(
// AGAIN-LABEL: func.func @graph(
// AGAIN-NEXT: uop.buffer
// AGAIN-NEXT: uop.launch @r_4_8
// AGAIN-NEXT: uop.launch @E_4_8
func.func @graph(%a: tensor<4x8xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %e = uop.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %s = uop.add %a, %e : tensor<4x8xf32>
  uop.sink %s : tensor<4x8xf32>
  return
}
