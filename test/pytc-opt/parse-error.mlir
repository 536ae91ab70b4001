// A parse error names the file, line and column, exits 1 and prints no IR.
// RUN: not pytc-opt %s 2>&1 | FileCheck %s --implicit-check-not=Traceback --implicit-check-not=func.func
// RUN: not pytc-opt < %s 2>&1 | FileCheck %s --check-prefix=STDIN --implicit-check-not=Traceback

// CHECK: {{.*}}parse-error.mlir:[[@LINE+3]]:8: error: custom op 'uop.bogus' is unknown
// STDIN: <stdin>:[[@LINE+2]]:8: error: custom op 'uop.bogus' is unknown
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = uop.bogus %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
