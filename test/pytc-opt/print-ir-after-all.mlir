// --mlir-print-ir-after-all dumps the module to stderr after each pass.
// RUN: pytc-opt %s --mlir-print-ir-after-all -canonicalize -cse -o %t 2>&1 | FileCheck %s
// RUN: pytc-opt %s --mlir-print-ir-after-all --pass-pipeline='builtin.module(cse)' 2>/dev/null | FileCheck %s --check-prefix=STDOUT

// CHECK: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// CHECK-NEXT: module {
// CHECK: uop.exp2
// CHECK: uop.exp2
// CHECK: // -----// IR Dump After CSE (cse) //----- //
// CHECK-NEXT: module {
// CHECK: uop.exp2
// CHECK-NOT: uop.exp2

// STDOUT-NOT: IR Dump
// STDOUT: func.func @f
// STDOUT-NOT: IR Dump
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = uop.exp2 %x : tensor<4xf32>
  %1 = uop.exp2 %x : tensor<4xf32>
  %2 = uop.add %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
