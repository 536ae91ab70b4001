// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-gpu-map,canonicalize,cse)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map='local_size=128 outputs_per_thread=4' | FileCheck %s --check-prefix=OPT
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map='local_size=16' -o /dev/null
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map=explain=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map='local_size=16 explain=1' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN16
// The output goes through the upstream lowerings as it is: NVVM down to PTX, and ROCDL (the AMDGPU backend is not in
// this LLVM, so no binary).
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map | pytc-opt --split-input-file --pass-pipeline='builtin.module(convert-scf-to-cf, nvvm-attach-target{chip=sm_90}, gpu.module(convert-gpu-to-nvvm{index-bitwidth=64}), reconcile-unrealized-casts, gpu-module-to-binary{format=isa})' | FileCheck %s --check-prefix=PTX
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map | pytc-opt --split-input-file --pass-pipeline='builtin.module(convert-scf-to-cf, gpu.module(convert-gpu-to-rocdl{chipset=gfx942 index-bitwidth=64}), reconcile-unrealized-casts)' | FileCheck %s --check-prefix=ROCDL

// explain=1 prints each kernel's mapping, in the order of the chunks below; a local_size below a warp caps the workgroup.
// EXPLAIN: pytc-gpu-map: E_4_8: 32 outputs, grid 1 x local 32, 1 per thread
// EXPLAIN-NEXT: pytc-gpu-map: row_sum: 10 outputs, grid 1 x local 32, 1 per thread, tail guarded
// EXPLAIN-NEXT: pytc-gpu-map: E_1000: 1000 outputs, grid 4 x local 256, 1 per thread, tail guarded
// EXPLAIN-NEXT: pytc-gpu-map: E_1024: 1024 outputs, grid 4 x local 256, 1 per thread
// EXPLAIN-NEXT: pytc-gpu-map: E_40: 40 outputs, grid 1 x local 64, 1 per thread, tail guarded
// EXPLAIN-NEXT: pytc-gpu-map: E_2_1_3: 6 outputs, grid 1 x local 32, 1 per thread, tail guarded
// EXPLAIN-NEXT: pytc-gpu-map: any_8: 1 output, grid 1 x local 32, 1 per thread, tail guarded
// EXPLAIN-NEXT: pytc-gpu-map: E_0_4: no outputs: launches nothing
// EXPLAIN16: pytc-gpu-map: E_4_8: 32 outputs, grid 2 x local 16, 1 per thread
// EXPLAIN16: pytc-gpu-map: E_40: 40 outputs, grid 3 x local 16, 1 per thread, tail guarded

// An elementwise 2-d kernel reading a row broadcast: 32 outputs make one workgroup of 32 threads (not 256), the
// exact grid needs no guard; the flat index gid splits into row gid / 8 (no remainder: gid < 32) and column gid % 8.
// The func.func kernel is gone (no uop.launch names it) and the top module is a gpu container.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK-NEXT: gpu.module @E_4_8_module {
// CHECK-NEXT: gpu.func @E_4_8(%[[OUT:.*]]: memref<4x8xf32>, %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x1xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>, pytc.gpu = {grid = 1 : i64, local = 32 : i64, outputs = 1 : i64, total = 32 : i64}} {
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK-NEXT: %[[BASE:.*]] = arith.muli %[[BID]], %[[C32]] : index
// CHECK-NEXT: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[GID:.*]] = arith.addi %[[BASE]], %[[TID]] : index
// CHECK-NOT: scf.if
// CHECK-NEXT: %[[I:.*]] = arith.divui %[[GID]], %[[C8]] : index
// CHECK-NEXT: %[[J:.*]] = arith.remui %[[GID]], %[[C8]] : index
// CHECK-NEXT: %[[X:.*]] = memref.load %[[A]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT: %[[Y:.*]] = memref.load %[[B]][%[[I]], %[[C0]]] : memref<4x1xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT: memref.store %[[S]], %[[OUT]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: func.func
// OPT-LABEL: gpu.func @E_4_8(
// OPT-SAME: known_block_size = array<i32: 32, 1, 1>, pytc.gpu = {grid = 1 : i64, local = 32 : i64, outputs = 4 : i64, total = 32 : i64}
// PTX: .visible .entry E_4_8(
// PTX: .maxntid 32, 1, 1
// PTX: mov.u32 {{.*}}%ctaid.x
// PTX: mov.u32 {{.*}}%tid.x
// PTX: st.global
// ROCDL-LABEL: llvm.func @E_4_8(
// ROCDL-SAME: rocdl.flat_work_group_size = "32,32", rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 32, 1, 1>
// ROCDL: rocdl.workgroup.id.x
// ROCDL: rocdl.workitem.id.x
func.func @E_4_8(%out: memref<4x8xf32>, %a: memref<4x8xf32>, %b: memref<4x1xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %j = uop.range loop 8 id 1
  %x = uop.index %a[%i, %j] : memref<4x8xf32>
  %y = uop.index %b[%i, %c0] : memref<4x1xf32>
  %s = uop.add %x, %y : f32
  %w = uop.store %s, %out[%i, %j] : memref<4x8xf32>
  %e = uop.end %w over(%i, %j) : memref<4x8xf32>
  return
}

// -----

// A row sum: each thread sums its row serially (an scf.for over the reduce range), the 10 rows of a 32-thread
// workgroup guarded by gid < 10. The graph launching the kernel keeps a private declaration of it to verify against.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.func @row_sum(%[[OUT:.*]]: memref<10x1xf32>, %[[X:.*]]: memref<10x8xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>, pytc.gpu = {grid = 1 : i64, local = 32 : i64, outputs = 1 : i64, total = 10 : i64}} {
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C10:.*]] = arith.constant 10 : index
// CHECK: %[[GID:.*]] = arith.addi
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[GID]], %[[C10]] : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: %[[SUM:.*]] = scf.for %[[K:.*]] = %[[C0]] to %[[C8]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[GID]], %[[K]]] : memref<10x8xf32>
// CHECK-NEXT: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[V]] fastmath<reassoc> : f32
// CHECK-NEXT: scf.yield %[[NEXT]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %[[OUT]][%[[GID]], %[[C0]]] : memref<10x1xf32>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
// CHECK: func.func private @row_sum(memref<10x1xf32>, memref<10x8xf32>)
// CHECK-NEXT: func.func @sum_rows(
// CHECK-NEXT: uop.launch @row_sum(
// PTX: .visible .entry row_sum(
// ROCDL-LABEL: llvm.func @row_sum(
// ROCDL-SAME: rocdl.kernel
func.func @row_sum(%out: memref<10x1xf32>, %x: memref<10x8xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 10 id 0
  %k = uop.range reduce 8 id 1
  %v = uop.index %x[%i, %k] : memref<10x8xf32>
  %s = uop.range_reduce add %v over(%k) : f32
  %w = uop.store %s, %out[%i, %c0] : memref<10x1xf32>
  %e = uop.end %w over(%i) : memref<10x1xf32>
  return
}
func.func @sum_rows(%x: memref<10x8xf32>, %out: memref<10x1xf32>) {
  uop.launch @row_sum(%out, %x) : memref<10x1xf32>, memref<10x8xf32>
  uop.sink %out : memref<10x1xf32>
  return
}

// -----

// A tail: 1000 outputs over 4 workgroups of 256 threads, the last 24 threads guarded off. With local_size=128 and
// outputs_per_thread=4, each thread stores the 4 consecutive outputs from gid * 4, each guarded: 2 workgroups.
// CHECK-LABEL: gpu.func @E_1000(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>, pytc.gpu = {grid = 4 : i64, local = 256 : i64, outputs = 1 : i64, total = 1000 : i64}
// CHECK: %[[GID:.*]] = arith.addi
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[GID]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: memref.load %{{.*}}[%[[GID]]] : memref<1000xf32>
// OPT-LABEL: gpu.func @E_1000(
// OPT-SAME: known_block_size = array<i32: 128, 1, 1>, pytc.gpu = {grid = 2 : i64, local = 128 : i64, outputs = 4 : i64, total = 1000 : i64}
// OPT: %[[L:.*]] = arith.constant 128 : index
// OPT: %[[BASE:.*]] = arith.muli %{{.*}}, %[[L]] : index
// OPT: %[[GID:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// OPT: %[[C4:.*]] = arith.constant 4 : index
// OPT-NEXT: %[[FIRST:.*]] = arith.muli %[[GID]], %[[C4]] : index
// OPT: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// OPT-NEXT: %[[FLAT:.*]] = arith.addi %[[FIRST]], %[[K]] : index
// OPT-NEXT: %[[TOTAL:.*]] = arith.constant 1000 : index
// OPT-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[FLAT]], %[[TOTAL]] : index
// OPT-NEXT: scf.if %[[IN]] {
// OPT-NEXT: %[[V:.*]] = memref.load %{{.*}}[%[[FLAT]]] : memref<1000xf32>
// OPT-NEXT: %[[N:.*]] = arith.negf %[[V]] : f32
// OPT-NEXT: memref.store %[[N]], %{{.*}}[%[[FLAT]]] : memref<1000xf32>
func.func @E_1000(%out: memref<1000xf32>, %a: memref<1000xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 1000 id 0
  %x = uop.index %a[%i] : memref<1000xf32>
  %n = uop.neg %x : f32
  %w = uop.store %n, %out[%i] : memref<1000xf32>
  %e = uop.end %w over(%i) : memref<1000xf32>
  return
}

// -----

// No tail: 1024 outputs fill 4 workgroups of 256 exactly, so nothing is guarded.
// CHECK-LABEL: gpu.func @E_1024(
// CHECK-SAME: pytc.gpu = {grid = 4 : i64, local = 256 : i64, outputs = 1 : i64, total = 1024 : i64}
// CHECK-NOT: scf.if
// CHECK: gpu.return
func.func @E_1024(%out: memref<1024xf32>, %a: memref<1024xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 1024 id 0
  %x = uop.index %a[%i] : memref<1024xf32>
  %w = uop.store %x, %out[%i] : memref<1024xf32>
  %e = uop.end %w over(%i) : memref<1024xf32>
  return
}

// -----

// 40 outputs: the power of two covering them, 64 threads.
// CHECK-LABEL: gpu.func @E_40(
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>, pytc.gpu = {grid = 1 : i64, local = 64 : i64, outputs = 1 : i64, total = 40 : i64}
func.func @E_40(%out: memref<40xf32>, %a: memref<40xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 40 id 0
  %x = uop.index %a[%i] : memref<40xf32>
  %w = uop.store %x, %out[%i] : memref<40xf32>
  %e = uop.end %w over(%i) : memref<40xf32>
  return
}

// -----

// Three output ranges, the middle one of size 1: flat / 3 and flat % 3, and the constant 0 for the middle.
// CHECK-LABEL: gpu.func @E_2_1_3(
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: scf.if
// CHECK-NEXT: %[[I:.*]] = arith.divui %[[GID:.*]], %[[C3]] : index
// CHECK-NEXT: %[[K:.*]] = arith.remui %[[GID]], %[[C3]] : index
// CHECK-NEXT: %[[V:.*]] = memref.load %{{.*}}[%[[I]], %[[C0]], %[[K]]] : memref<2x1x3xf32>
// CHECK-NEXT: memref.store %[[V]], %{{.*}}[%[[I]], %[[C0]], %[[K]]] : memref<2x1x3xf32>
func.func @E_2_1_3(%out: memref<2x1x3xf32>, %a: memref<2x1x3xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 2 id 0
  %j = uop.range loop 1 id 1
  %k = uop.range loop 3 id 2
  %x = uop.index %a[%i, %j, %k] : memref<2x1x3xf32>
  %w = uop.store %x, %out[%i, %j, %k] : memref<2x1x3xf32>
  %e = uop.end %w over(%i, %j, %k) : memref<2x1x3xf32>
  return
}

// -----

// A whole reduction to one boolean: one output (no output range), one guarded thread; booleans are stored as bytes.
// CHECK-LABEL: gpu.func @any_8(
// CHECK-SAME: %{{.*}}: memref<1xi8>, %{{.*}}: memref<8xi8>) kernel
// CHECK-SAME: pytc.gpu = {grid = 1 : i64, local = 32 : i64, outputs = 1 : i64, total = 1 : i64}
// CHECK: arith.cmpi ult
// CHECK: scf.for
// CHECK: arith.maxui
func.func @any_8(%out: memref<1xi1>, %a: memref<8xi1>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %k = uop.range reduce 8 id 0
  %x = uop.index %a[%k] : memref<8xi1>
  %m = uop.range_reduce max %x over(%k) : i1
  %w = uop.store %m, %out[%c0] : memref<1xi1>
  %e = uop.end %w over() : memref<1xi1>
  return
}

// -----

// An empty output: grid 0 (the runtime launches nothing) and a body that does nothing; the empty buffers are 1-d.
// CHECK-LABEL: gpu.func @E_0_4(
// CHECK-SAME: %{{.*}}: memref<0xf32>, %{{.*}}: memref<0xf32>) kernel
// CHECK-SAME: pytc.gpu = {grid = 0 : i64, local = 32 : i64, outputs = 1 : i64, total = 0 : i64}
// CHECK-NEXT: gpu.return
// PTX: .visible .entry E_0_4(
func.func @E_0_4(%out: memref<0x4xf32>, %a: memref<0x4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 0 id 0
  %j = uop.range loop 4 id 1
  %x = uop.index %a[%i, %j] : memref<0x4xf32>
  %w = uop.store %x, %out[%i, %j] : memref<0x4xf32>
  %e = uop.end %w over(%i, %j) : memref<0x4xf32>
  return
}
