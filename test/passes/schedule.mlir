// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-schedule)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-schedule{report=1})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// report=1 prints one line per graph, in the order of the chunks below.
// REPORT: schedule @chain: 4 kernels, 2 temporary buffers, peak 32 temporary bytes
// REPORT-NEXT: schedule @single: 1 kernels, 0 temporary buffers, peak 0 temporary bytes
// REPORT-NOT: schedule @

// A chain of three temporaries of the same type: the third is first used after the first
// is dead, so it takes over the first one's buffer and its own uop.buffer disappears.
// At most two temporaries of 16 bytes are live at once.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32>, %[[OUT:[a-z0-9]+]]: memref<4xf32>)
// CHECK-SAME: attributes {pytc.buffers = 2 : i64, pytc.kernels = 4 : i64, pytc.peak_bytes = 32 : i64}
// CHECK-NEXT: %[[T0:.*]] = uop.buffer : memref<4xf32>
// CHECK-NEXT: %[[T1:.*]] = uop.buffer : memref<4xf32>
// CHECK-NEXT: uop.launch @{{.*}}(%[[T0]], %[[A]])
// CHECK-NEXT: uop.launch @{{.*}}(%[[T1]], %[[T0]])
// CHECK-NEXT: uop.launch @{{.*}}(%[[T0]], %[[T1]])
// CHECK-NEXT: uop.launch @{{.*}}(%[[OUT]], %[[T0]])
// CHECK-NEXT: uop.sink %[[OUT]]
// CHECK-NOT: uop.buffer
func.func @chain(%a: tensor<4xf32>) {
  %0 = uop.exp2 %a : tensor<4xf32>
  %1 = uop.contiguous %0 : tensor<4xf32>
  %2 = uop.exp2 %1 : tensor<4xf32>
  %3 = uop.contiguous %2 : tensor<4xf32>
  %4 = uop.neg %3 : tensor<4xf32>
  %5 = uop.contiguous %4 : tensor<4xf32>
  %6 = uop.sqrt %5 : tensor<4xf32>
  uop.sink %6 : tensor<4xf32>
  return
}

// -----

// One kernel writing an output: no temporaries. Kernel functions get no schedule attributes.
// CHECK-LABEL: func.func @E_4(
// CHECK-NOT: pytc.kernels
// CHECK-SAME: attributes {pytc.kernel}
// CHECK-LABEL: func.func @single
// CHECK-SAME: attributes {pytc.buffers = 0 : i64, pytc.kernels = 1 : i64, pytc.peak_bytes = 0 : i64}
// CHECK-NEXT: uop.launch @E_4(
// CHECK-NEXT: uop.sink
func.func @single(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}

// -----

// A function without launches is left alone.
// CHECK-LABEL: func.func @no_launches
// CHECK-NOT: pytc.kernels
// CHECK-SAME: {
// CHECK-NEXT: return
func.func @no_launches(%a: memref<4xf32>) {
  return
}
