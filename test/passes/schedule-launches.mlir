// RUN: pytc-opt %s -pytc-schedule | FileCheck %s
// RUN: pytc-opt %s -pytc-schedule='report=1' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// REPORT: schedule @graph: 5 kernels, 3 temporary buffers, peak 48 temporary bytes

// A graph of launches in dependency order keeps that order, including a launch that
// overwrites %t after an earlier launch has read it. The launches move after the buffers,
// before the sink. %t is still read by the fourth launch when %u is first written, and %w
// has another type, so no buffer is reused: 3 temporaries, at most 16 + 32 bytes live.
// CHECK-LABEL: func.func @graph
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32>, %[[B:[a-z0-9]+]]: memref<4xf32>, %[[O1:[a-z0-9]+]]: memref<4xf32>, %[[O2:[a-z0-9]+]]: memref<8xf32>)
// CHECK-SAME: attributes {pytc.buffers = 3 : i64, pytc.kernels = 5 : i64, pytc.peak_bytes = 48 : i64}
// CHECK-NEXT: %[[T:.*]] = uop.buffer : memref<4xf32>
// CHECK-NEXT: %[[U:.*]] = uop.buffer : memref<4xf32>
// CHECK-NEXT: %[[W:.*]] = uop.buffer : memref<8xf32>
// CHECK-NEXT: uop.launch @produce(%[[T]], %[[A]])
// CHECK-NEXT: uop.launch @consume(%[[O1]], %[[T]])
// CHECK-NEXT: uop.launch @produce(%[[T]], %[[B]])
// CHECK-NEXT: uop.launch @consume(%[[U]], %[[T]])
// CHECK-NEXT: uop.launch @widen(%[[W]], %[[U]])
// CHECK-NEXT: uop.sink %[[O1]], %[[O2]]
func.func private @produce(memref<4xf32>, memref<4xf32>)
func.func private @consume(memref<4xf32>, memref<4xf32>)
func.func private @widen(memref<8xf32>, memref<4xf32>)
func.func @graph(%a: memref<4xf32>, %b: memref<4xf32>, %o1: memref<4xf32>, %o2: memref<8xf32>) {
  %t = uop.buffer : memref<4xf32>
  uop.launch @produce(%t, %a) : memref<4xf32>, memref<4xf32>
  uop.launch @consume(%o1, %t) : memref<4xf32>, memref<4xf32>
  uop.launch @produce(%t, %b) : memref<4xf32>, memref<4xf32>
  %u = uop.buffer : memref<4xf32>
  uop.launch @consume(%u, %t) : memref<4xf32>, memref<4xf32>
  %w = uop.buffer : memref<8xf32>
  uop.launch @widen(%w, %u) : memref<8xf32>, memref<4xf32>
  uop.sink %o1, %o2 : memref<4xf32>, memref<8xf32>
  return
}
