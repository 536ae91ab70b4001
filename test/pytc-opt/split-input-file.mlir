// With --split-input-file every chunk is processed: diagnostics keep the
// file's line numbers, the good chunks are printed and the exit status is 1.
// RUN: not pytc-opt %s --split-input-file 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR --implicit-check-not=Traceback < %t.err

// CHECK: func.func @first
// CHECK-NOT: func.func @second
// CHECK: // -----
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @third
func.func @first() {
  return
}

// -----

// ERR: split-input-file.mlir:[[@LINE+2]]:8: error: 'uop.iota' op axis 1 is out of range for a rank-1 tensor
func.func @second() {
  %0 = uop.iota 1 : tensor<4xi32>
  return
}

// -----

func.func @third() {
  return
}
