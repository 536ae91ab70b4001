// RUN: pytc-opt %s --split-input-file -pytc-merge-kernels | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-merge-kernels{max_buffers=4})' | FileCheck %s --check-prefix=CAP
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-merge-kernels{max_ops=14})' | FileCheck %s --check-prefix=OPS
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-merge-kernels, pytc-schedule)' | FileCheck %s --check-prefix=SCHED
// Input: graphs split into kernel launches (pytc-split-kernels' output).

// An optimizer's step of one parameter: the first moment, the second, then the parameter from both new moments. The three
// launches become one kernel of three stores: the moments' values are used where the third read them back, the gradient
// is read once, and the launch writes its first three buffers.
// CHECK-LABEL: func.func @E_4_8(
// CHECK-SAME: %[[M:[a-z0-9]+]]: memref<4x8xf32>, %[[V:[a-z0-9]+]]: memref<4x8xf32>, %[[P:[a-z0-9]+]]: memref<4x8xf32>, %[[OLDM:[a-z0-9]+]]: memref<4x8xf32>, %[[G:[a-z0-9]+]]: memref<4x8xf32>, %[[OLDV:[a-z0-9]+]]: memref<4x8xf32>, %[[OLDP:[a-z0-9]+]]: memref<4x8xf32>)
// CHECK-NEXT: %[[I:.+]] = uop.range loop 4 id 0
// CHECK-NEXT: %[[J:.+]] = uop.range loop 8 id 1
// CHECK: %[[NEWM:.+]] = uop.add
// CHECK-NEXT: %[[S:.+]] = uop.store %[[NEWM]], %[[M]][%[[I]], %[[J]]]
// CHECK-NEXT: uop.end %[[S]] over(%[[I]], %[[J]])
// CHECK: %[[NEWV:.+]] = uop.add
// CHECK-NEXT: uop.store %[[NEWV]], %[[V]][%[[I]], %[[J]]]
// CHECK-NOT: uop.index %[[M]]
// CHECK-NOT: uop.index %[[V]]
// CHECK: %[[STEP:.+]] = uop.mul %[[NEWM]], %[[NEWV]]
// CHECK: uop.store %{{.+}}, %[[P]][%[[I]], %[[J]]]
// CHECK-NOT: uop.end
// CHECK: return
// CHECK-LABEL: func.func @adam
// CHECK-SAME: (%[[OM:[a-z0-9]+]]: memref<4x8xf32>, %[[GG:[a-z0-9]+]]: memref<4x8xf32>, %[[OV:[a-z0-9]+]]: memref<4x8xf32>, %[[OP:[a-z0-9]+]]: memref<4x8xf32>, %[[NM:[a-z0-9]+]]: memref<4x8xf32>, %[[NV:[a-z0-9]+]]: memref<4x8xf32>, %[[NP:[a-z0-9]+]]: memref<4x8xf32>)
// CHECK-NEXT: uop.launch @E_4_8(%[[NM]], %[[NV]], %[[NP]], %[[OM]], %[[GG]], %[[OV]], %[[OP]]) {pytc.writes = 3 : i64}
// CHECK-NEXT: uop.sink
// CHECK-NOT: func.func @first
// The merged kernel would take 7 buffers: max_buffers=4 merges the moments (5 buffers) not at all, and nothing else.
// max_ops=14 merges the moments (op weight 11) but not the third kernel into them.
// OPS-LABEL: func.func @adam
// OPS-NEXT: uop.launch @E_4_8({{.*}}) {pytc.writes = 2 : i64}
// OPS-NEXT: uop.launch @third
// CAP-LABEL: func.func @adam
// CAP-NEXT: uop.launch @first
// CAP-NEXT: uop.launch @second
// CAP-NEXT: uop.launch @third
// The merged launch writes the new moments, so a schedule waits for it before anything reads them.
// SCHED-LABEL: func.func @adam
// SCHED-NEXT: uop.launch @E_4_8({{.*}}) {pytc.writes = 3 : i64}
func.func @first(%out: memref<4x8xf32>, %m: memref<4x8xf32>, %g: memref<4x8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 8 id 1
  %a = uop.index %m[%i, %j] : memref<4x8xf32>
  %b = uop.index %g[%i, %j] : memref<4x8xf32>
  %c = uop.add %a, %b : f32
  %s = uop.store %c, %out[%i, %j] : memref<4x8xf32>
  %e = uop.end %s over(%i, %j) : memref<4x8xf32>
  return
}
func.func @second(%out: memref<4x8xf32>, %v: memref<4x8xf32>, %g: memref<4x8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 8 id 1
  %a = uop.index %v[%i, %j] : memref<4x8xf32>
  %b = uop.index %g[%i, %j] : memref<4x8xf32>
  %bb = uop.mul %b, %b : f32
  %c = uop.add %a, %bb : f32
  %s = uop.store %c, %out[%i, %j] : memref<4x8xf32>
  %e = uop.end %s over(%i, %j) : memref<4x8xf32>
  return
}
func.func @third(%out: memref<4x8xf32>, %p: memref<4x8xf32>, %m: memref<4x8xf32>, %v: memref<4x8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 8 id 1
  %a = uop.index %m[%i, %j] : memref<4x8xf32>
  %b = uop.index %v[%i, %j] : memref<4x8xf32>
  %step = uop.mul %a, %b : f32
  %w = uop.index %p[%i, %j] : memref<4x8xf32>
  %n = uop.neg %step : f32
  %c = uop.add %w, %n : f32
  %s = uop.store %c, %out[%i, %j] : memref<4x8xf32>
  %e = uop.end %s over(%i, %j) : memref<4x8xf32>
  return
}
func.func @adam(%m: memref<4x8xf32>, %g: memref<4x8xf32>, %v: memref<4x8xf32>, %p: memref<4x8xf32>,
                %new_m: memref<4x8xf32>, %new_v: memref<4x8xf32>, %new_p: memref<4x8xf32>) {
  uop.launch @first(%new_m, %m, %g) : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>
  uop.launch @second(%new_v, %v, %g) : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>
  uop.launch @third(%new_p, %p, %new_m, %new_v) : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>
  uop.sink %new_m, %new_v, %new_p : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>
  return
}

// -----

// Launches that stay apart:
// - @shifted reads what @negate writes one element over: it needs the whole buffer written first;
// - @masked reads it under a mask;
// - @other shares nothing with the launch before it;
// - @wide runs over another loop nest;
// - @total reduces;
// - @after follows a transfer.
// CHECK-LABEL: func.func @apart
// CHECK-NEXT: uop.launch @negate(
// CHECK-NEXT: uop.launch @shifted(
// CHECK-NEXT: uop.launch @masked(
// CHECK-NEXT: uop.launch @other(
// CHECK-NEXT: uop.launch @wide(
// CHECK-NEXT: uop.launch @total(
// CHECK-NEXT: uop.buffer
// CHECK-NEXT: uop.transfer
// CHECK-NEXT: uop.launch @after(
// CHECK-NOT: pytc.writes
func.func @negate(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %a = uop.index %x[%i] : memref<8xf32>
  %n = uop.neg %a : f32
  %s = uop.store %n, %out[%i] : memref<8xf32>
  %e = uop.end %s over(%i) : memref<8xf32>
  return
}
func.func @shifted(%out: memref<8xf32>, %x: memref<8xf32>, %y: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %k = arith.addi %i, %c1 : index
  %w = arith.remui %k, %c7 : index
  %a = uop.index %y[%w] : memref<8xf32>
  %b = uop.index %x[%i] : memref<8xf32>
  %c = uop.add %a, %b : f32
  %s = uop.store %c, %out[%i] : memref<8xf32>
  %e = uop.end %s over(%i) : memref<8xf32>
  return
}
func.func @masked(%out: memref<8xf32>, %x: memref<8xf32>, %y: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %c4 = arith.constant 4 : index
  %low = arith.cmpi ult, %i, %c4 : index
  %a = uop.index %y[%i] if %low : memref<8xf32>
  %b = uop.index %x[%i] : memref<8xf32>
  %c = uop.add %a, %b : f32
  %s = uop.store %c, %out[%i] : memref<8xf32>
  %e = uop.end %s over(%i) : memref<8xf32>
  return
}
func.func @wide(%out: memref<16xf32>, %x: memref<16xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 16 id 0
  %a = uop.index %x[%i] : memref<16xf32>
  %s = uop.store %a, %out[%i] : memref<16xf32>
  %e = uop.end %s over(%i) : memref<16xf32>
  return
}
func.func @total(%out: memref<1xf32>, %x: memref<16xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %k = uop.range reduce 16 id 0
  %a = uop.index %x[%k] : memref<16xf32>
  %r = uop.range_reduce add %a over(%k) : f32
  %s = uop.store %r, %out[%c0] : memref<1xf32>
  %e = uop.end %s over() : memref<1xf32>
  return
}
func.func @after(%out: memref<16xf32>, %x: memref<16xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 16 id 0
  %a = uop.index %x[%i] : memref<16xf32>
  %s = uop.store %a, %out[%i] : memref<16xf32>
  %e = uop.end %s over(%i) : memref<16xf32>
  return
}
func.func @apart(%x: memref<8xf32>, %z: memref<8xf32>, %w: memref<16xf32>, %o1: memref<8xf32>, %o2: memref<8xf32>,
                 %o3: memref<8xf32>, %o4: memref<8xf32>, %o5: memref<16xf32>, %o6: memref<1xf32>, %o7: memref<16xf32>) {
  uop.launch @negate(%o1, %x) : memref<8xf32>, memref<8xf32>
  uop.launch @shifted(%o2, %x, %o1) : memref<8xf32>, memref<8xf32>, memref<8xf32>
  uop.launch @masked(%o3, %x, %o2) : memref<8xf32>, memref<8xf32>, memref<8xf32>
  uop.launch @other(%o4, %z) : memref<8xf32>, memref<8xf32>
  uop.launch @wide(%o5, %w) : memref<16xf32>, memref<16xf32>
  uop.launch @total(%o6, %w) : memref<1xf32>, memref<16xf32>
  %t = uop.buffer {uop.device = "EMU"} : memref<16xf32>
  uop.transfer %w into %t : memref<16xf32>
  uop.launch @after(%o7, %w) : memref<16xf32>, memref<16xf32>
  uop.sink %o1, %o2, %o3, %o4, %o5, %o6, %o7 : memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<16xf32>, memref<1xf32>, memref<16xf32>
  return
}
func.func @other(%out: memref<8xf32>, %z: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %a = uop.index %z[%i] : memref<8xf32>
  %s = uop.store %a, %out[%i] : memref<8xf32>
  %e = uop.end %s over(%i) : memref<8xf32>
  return
}

// -----

// Two launches of one kernel (split-kernels emits identical kernels once) reading the same buffer: the merged kernel
// holds the body twice, one store each.
// CHECK-LABEL: func.func @E_8(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<8xf32>, %[[B:[a-z0-9]+]]: memref<8xf32>, %[[X:[a-z0-9]+]]: memref<8xf32>)
// CHECK: %[[S:.+]] = uop.store %{{.+}}, %[[A]][%[[I:.+]]]
// CHECK-NEXT: uop.end %[[S]] over(%[[I]])
// CHECK: uop.store %{{.+}}, %[[B]][%[[I]]]
// CHECK-LABEL: func.func @twice
// CHECK-NEXT: uop.launch @E_8(%{{.+}}, %{{.+}}, %{{.+}}) {pytc.writes = 2 : i64}
// CHECK-NOT: func.func @halve
func.func @halve(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %a = uop.index %x[%i] : memref<8xf32>
  %h = uop.const 0.5 : f32
  %m = uop.mul %a, %h : f32
  %s = uop.store %m, %out[%i] : memref<8xf32>
  %e = uop.end %s over(%i) : memref<8xf32>
  return
}
func.func @twice(%x: memref<8xf32>, %o1: memref<8xf32>, %o2: memref<8xf32>) {
  uop.launch @halve(%o1, %x) : memref<8xf32>, memref<8xf32>
  uop.launch @halve(%o2, %x) : memref<8xf32>, memref<8xf32>
  uop.sink %o1, %o2 : memref<8xf32>, memref<8xf32>
  return
}
