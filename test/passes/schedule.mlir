// RUN: pytc-opt %s --split-input-file -pytc-schedule | FileCheck %s
// RUN: pytc-opt %s --split-input-file -pytc-schedule='report=1' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// Input: graphs split into kernel launches (pytc-split-kernels' output). pytc-schedule reads only the launches and the
// buffers they name, so the kernels are declarations.

// report=1 prints one line per graph, in the order of the chunks below.
// REPORT: schedule @chain: 4 kernels, 2 temporary buffers, peak 32 temporary bytes
// REPORT-NEXT: schedule @single: 1 kernels, 0 temporary buffers, peak 0 temporary bytes
// REPORT-NEXT: schedule @transfers: 3 kernels, 2 transfers, 3 temporary buffers, peak 32 temporary bytes
// REPORT-NOT: schedule @

// A chain through three temporaries of the same type: the third is first used after the first is dead, so it takes
// over the first one's buffer and its own uop.buffer disappears. At most two temporaries of 16 bytes are live at once.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32>, %[[OUT:[a-z0-9]+]]: memref<4xf32>)
// CHECK-SAME: attributes {pytc.buffers = 2 : i64, pytc.kernels = 4 : i64, pytc.peak_bytes = 32 : i64}
// CHECK-NEXT: %[[T0:.*]] = uop.buffer : memref<4xf32>
// CHECK-NEXT: %[[T1:.*]] = uop.buffer : memref<4xf32>
// CHECK-NEXT: uop.launch @exp2(%[[T0]], %[[A]])
// CHECK-NEXT: uop.launch @exp2(%[[T1]], %[[T0]])
// CHECK-NEXT: uop.launch @neg(%[[T0]], %[[T1]])
// CHECK-NEXT: uop.launch @sqrt(%[[OUT]], %[[T0]])
// CHECK-NEXT: uop.sink %[[OUT]]
// CHECK-NOT: uop.buffer
func.func private @exp2(memref<4xf32>, memref<4xf32>) attributes {pytc.kernel}
func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {pytc.kernel}
func.func private @sqrt(memref<4xf32>, memref<4xf32>) attributes {pytc.kernel}
func.func @chain(%a: memref<4xf32>, %out: memref<4xf32>) {
  %t0 = uop.buffer : memref<4xf32>
  uop.launch @exp2(%t0, %a) : memref<4xf32>, memref<4xf32>
  %t1 = uop.buffer : memref<4xf32>
  uop.launch @exp2(%t1, %t0) : memref<4xf32>, memref<4xf32>
  %t2 = uop.buffer : memref<4xf32>
  uop.launch @neg(%t2, %t1) : memref<4xf32>, memref<4xf32>
  uop.launch @sqrt(%out, %t2) : memref<4xf32>, memref<4xf32>
  uop.sink %out : memref<4xf32>
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
func.func @E_4(%out: memref<4xf32>, %in: memref<4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %x = uop.index %in[%i] : memref<4xf32>
  %n = uop.neg %x : f32
  %w = uop.store %n, %out[%i] : memref<4xf32>
  %e = uop.end %w over(%i) : memref<4xf32>
  return
}
func.func @single(%a: memref<4xf32>, %out: memref<4xf32>) {
  uop.launch @E_4(%out, %a) : memref<4xf32>, memref<4xf32>
  uop.sink %out : memref<4xf32>
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

// -----

// A transfer is ordered like a launch (it writes its first operand, reads its second). A dead
// temporary is reused only by one of the same type on the same device: %t2 (AMD) does not
// take %t0 (the graph's device, dead once transferred); %t3 takes %t0.
// CHECK-LABEL: func.func @transfers
// CHECK: %[[T0:.*]] = uop.buffer : memref<4xf32>
// CHECK: %[[T1:.*]] = uop.buffer {uop.device = "AMD"} : memref<4xf32>
// CHECK: %[[T2:.*]] = uop.buffer {uop.device = "AMD"} : memref<4xf32>
// CHECK-NOT: uop.buffer
// CHECK: uop.launch @exp2(%[[T0]], %arg0)
// CHECK-NEXT: uop.transfer %[[T0]] into %[[T1]]
// CHECK-NEXT: uop.launch @neg(%[[T2]], %[[T1]])
// CHECK-NEXT: uop.transfer %[[T2]] into %[[T0]]
// CHECK-NEXT: uop.launch @sqrt(%arg1, %[[T0]])
func.func private @exp2(memref<4xf32>, memref<4xf32>) attributes {pytc.kernel}
func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {pytc.kernel}
func.func private @sqrt(memref<4xf32>, memref<4xf32>) attributes {pytc.kernel}
func.func @transfers(%a: memref<4xf32>, %out: memref<4xf32>) attributes {uop.device = "CPU"} {
  %t0 = uop.buffer : memref<4xf32>
  %t1 = uop.buffer {uop.device = "AMD"} : memref<4xf32>
  uop.launch @exp2(%t0, %a) : memref<4xf32>, memref<4xf32>
  uop.transfer %t0 into %t1 : memref<4xf32>
  %t2 = uop.buffer {uop.device = "AMD"} : memref<4xf32>
  uop.launch @neg(%t2, %t1) : memref<4xf32>, memref<4xf32>
  %t3 = uop.buffer : memref<4xf32>
  uop.transfer %t2 into %t3 : memref<4xf32>
  uop.launch @sqrt(%out, %t3) : memref<4xf32>, memref<4xf32>
  uop.sink %out : memref<4xf32>
  return
}
