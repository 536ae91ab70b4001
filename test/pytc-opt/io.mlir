// Input from a file, from stdin (`-` or nothing) and output to a file.
// RUN: pytc-opt %s | FileCheck %s
// RUN: pytc-opt < %s | FileCheck %s
// RUN: cat %s | pytc-opt - -canonicalize | FileCheck %s
// RUN: pytc-opt %s -o %t > %t.stdout
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=EMPTY --allow-empty < %t.stdout

// CHECK: module {
// CHECK-NEXT: func.func @f(%[[X:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[E:.*]] = uop.exp2 %[[X]] : tensor<4xf32>
// CHECK-NEXT: return %[[E]] : tensor<4xf32>

// EMPTY-NOT: {{.}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = uop.exp2 %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
