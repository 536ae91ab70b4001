// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-gpu-map,canonicalize,cse)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map='local_size=128 outputs_per_thread=4' | FileCheck %s --check-prefix=OPT
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map='local_size=16' -o /dev/null
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map=explain=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map='local_size=16 explain=1' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN16
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map='group_reduce=0 explain=1' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SERIAL
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map='vector_bytes=0 explain=1' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCALAR
// The output goes through the upstream lowerings as it is: NVVM down to PTX, and ROCDL (the AMDGPU backend is not in
// this LLVM, so no binary).
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map | pytc-opt --split-input-file --pass-pipeline='builtin.module(convert-scf-to-cf, nvvm-attach-target{chip=sm_90}, gpu.module(convert-gpu-to-nvvm{index-bitwidth=64}), reconcile-unrealized-casts, gpu-module-to-binary{format=isa})' | FileCheck %s --check-prefix=PTX
// RUN: pytc-opt %s --split-input-file -pytc-gpu-map | pytc-opt --split-input-file --pass-pipeline='builtin.module(convert-scf-to-cf, gpu.module(convert-gpu-to-rocdl{chipset=gfx942 index-bitwidth=64}), reconcile-unrealized-casts)' | FileCheck %s --check-prefix=ROCDL

// explain=1 prints each kernel's mapping, in the order of the chunks below; a local_size below a warp caps the workgroup.
// EXPLAIN: pytc-gpu-map: E_4_8: 32 outputs, grid 1 x local 32, 1 per thread
// EXPLAIN-NEXT: pytc-gpu-map: row_sum: 10 outputs, grid 1 x local 32, 1 per thread, tail guarded
// EXPLAIN-NEXT: pytc-gpu-map: E_1000: 1000 outputs, grid 4 x local 256, 1 per thread, tail guarded
// EXPLAIN-NEXT: pytc-gpu-map: E_1024: 1024 outputs, grid 1 x local 256, 1 per thread of 4 lanes
// EXPLAIN-NEXT: pytc-gpu-map: E_40: 40 outputs, grid 1 x local 64, 1 per thread, tail guarded
// EXPLAIN-NEXT: pytc-gpu-map: E_2_1_3: 6 outputs, grid 1 x local 32, 1 per thread, tail guarded
// EXPLAIN-NEXT: pytc-gpu-map: any_8: 1 output, grid 1 x local 32, 1 per thread, tail guarded
// EXPLAIN-NEXT: pytc-gpu-map: E_0_4: no outputs: launches nothing
// EXPLAIN-NEXT: pytc-gpu-map: softmax_4_2048: 8192 outputs in 4 rows, grid 4 x local 256, 2 reductions of up to 2048 grouped per workgroup, 8 per thread
// EXPLAIN-NEXT: pytc-gpu-map: r_250: 1 output in 1 row, grid 1 x local 256, 1 reduction of up to 250 grouped per workgroup, 1 per thread
// EXPLAIN16: pytc-gpu-map: E_4_8: 32 outputs, grid 2 x local 16, 1 per thread
// EXPLAIN16: pytc-gpu-map: E_40: 40 outputs, grid 3 x local 16, 1 per thread, tail guarded
// EXPLAIN16: pytc-gpu-map: softmax_4_2048: 8192 outputs in 4 rows, grid 4 x local 16, 2 reductions of up to 2048 grouped per workgroup, 128 per thread
// group_reduce=0 keeps every reduction serial, one thread per output.
// SERIAL: pytc-gpu-map: softmax_4_2048: 8192 outputs, grid 8 x local 256, 1 per thread of 4 lanes
// SERIAL-NEXT: pytc-gpu-map: r_250: 1 output, grid 1 x local 32, 1 per thread, tail guarded

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

// Vectors: 1024 f32 outputs still fill a workgroup of 256 threads as 4-lane vectors (16 bytes, vector_bytes), so each
// thread reads and writes the 4 outputs from 4 * gid as one aligned vector (a multiple of the lanes into rows a multiple
// of the lanes); no tail, nothing is guarded. vector_bytes=0 keeps one output per thread, 4 workgroups.
// CHECK-LABEL: gpu.func @E_1024(
// CHECK-SAME: pytc.gpu = {grid = 1 : i64, local = 256 : i64, outputs = 1 : i64, total = 1024 : i64, vector = 4 : i64}
// CHECK-NOT: scf.if
// CHECK: %[[GID:.*]] = arith.addi
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %[[GID]], %{{.*}} : index
// CHECK-NEXT: %[[V:.*]] = vector.load %{{.*}}[%[[FIRST]]] {alignment = 16 : i64} : memref<1024xf32>, vector<4xf32>
// CHECK-NEXT: vector.store %[[V]], %{{.*}}[%[[FIRST]]] {alignment = 16 : i64} : memref<1024xf32>, vector<4xf32>
// CHECK-NEXT: gpu.return
// SCALAR: pytc-gpu-map: E_1024: 1024 outputs, grid 4 x local 256, 1 per thread
// PTX: .visible .entry E_1024(
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
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

// -----

// Softmax over 4 rows of 2048: 4 * 32 < 2048, so one row per workgroup (grid 4, no tail) of 256 threads. Each of the
// two reductions in turn: thread t's strided partial (k = t, t + 256, ...) to its own workgroup attribution, a barrier,
// then 8 halving steps (stride 128 >> s, a barrier each), and every thread reads shm[0]; the sum's body reads the max.
// Then thread t stores the row's outputs t, t + 256, ... The upstream lowerings take the workgroup memory and barriers.
// CHECK-LABEL: gpu.func @softmax_4_2048(
// CHECK-SAME: %[[OUT:.*]]: memref<4x2048xf32>, %[[X:.*]]: memref<4x2048xf32>) workgroup(%[[MAX:.*]] : memref<256xf32, #gpu.address_space<workgroup>>, %[[SUM:.*]] : memref<256xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pytc.gpu = {grid = 4 : i64, group = 2 : i64, local = 256 : i64, outputs = 8 : i64, total = 8192 : i64}} {
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C2048:.*]] = arith.constant 2048 : index
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[ROW:.*]] = gpu.block_id x
// CHECK-NEXT: %[[P:.*]] = scf.for %[[K:.*]] = %[[T]] to %[[C2048]] step %[[C256]] iter_args(%[[ACC:.*]] = %[[NEGINF]]) -> (f32) {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[K]]] : memref<4x2048xf32>
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[ACC]], %[[V]] : f32
// CHECK-NEXT: scf.yield %[[M]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[P]], %[[MAX]][%[[T]]] : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for %[[S:.*]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT: %[[STRIDE:.*]] = arith.shrui %[[C128]], %[[S]] : index
// CHECK-NEXT: %[[ACTIVE:.*]] = arith.cmpi ult, %[[T]], %[[STRIDE]] : index
// CHECK-NEXT: scf.if %[[ACTIVE]] {
// CHECK-NEXT: %[[PAIR:.*]] = arith.addi %[[T]], %[[STRIDE]] : index
// CHECK-NEXT: %[[A:.*]] = memref.load %[[MAX]][%[[T]]]
// CHECK-NEXT: %[[B:.*]] = memref.load %[[MAX]][%[[PAIR]]]
// CHECK-NEXT: %[[AB:.*]] = arith.maximumf %[[A]], %[[B]] : f32
// CHECK-NEXT: memref.store %[[AB]], %[[MAX]][%[[T]]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }
// CHECK-NEXT: %[[ROWMAX:.*]] = memref.load %[[MAX]][%[[C0]]]
// CHECK-NEXT: %[[PS:.*]] = scf.for %{{.*}} = %[[T]] to %[[C2048]] step %[[C256]] iter_args(
// CHECK: arith.negf %[[ROWMAX]] : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK: memref.store %[[PS]], %[[SUM]][%[[T]]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK: gpu.barrier
// CHECK-NEXT: }
// CHECK-NEXT: %[[ROWSUM:.*]] = memref.load %[[SUM]][%[[C0]]]
// CHECK-NEXT: scf.for %[[J:.*]] = %[[T]] to %[[C2048]] step %[[C256]] {
// CHECK: arith.divf %{{.*}}, %[[ROWSUM]] : f32
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[ROW]], %[[J]]] : memref<4x2048xf32>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
// OPT-LABEL: gpu.func @softmax_4_2048(
// OPT-SAME: workgroup(%{{.*}} : memref<128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128xf32, #gpu.address_space<workgroup>>)
// OPT-SAME: pytc.gpu = {grid = 4 : i64, group = 2 : i64, local = 128 : i64, outputs = 16 : i64, total = 8192 : i64}
// PTX: .visible .entry softmax_4_2048(
// PTX: .maxntid 256, 1, 1
// PTX: .shared .align 4 .b8 __wg_softmax_4_2048_0[1024]
// PTX: .shared .align 4 .b8 __wg_softmax_4_2048_1[1024]
// PTX: st.shared.b32
// PTX: bar.sync
// PTX: max.NaN.f32
// ROCDL: llvm.mlir.global internal @__wg_softmax_4_2048_0() {addr_space = 3 : i32} : !llvm.array<256 x f32>
// ROCDL: llvm.func @softmax_4_2048(
// ROCDL: rocdl.barrier
func.func @softmax_4_2048(%out: memref<4x2048xf32>, %x: memref<4x2048xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 2
  %j = uop.range loop 2048 id 3
  %xj = uop.index %x[%i, %j] : memref<4x2048xf32>
  %k = uop.range reduce 2048 id 0
  %xk = uop.index %x[%i, %k] : memref<4x2048xf32>
  %max = uop.range_reduce max %xk over(%k) : f32
  %neg = uop.neg %max : f32
  %sj = uop.add %xj, %neg : f32
  %ej = uop.exp %sj : f32
  %l = uop.range reduce 2048 id 1
  %xl = uop.index %x[%i, %l] : memref<4x2048xf32>
  %sl = uop.add %xl, %neg : f32
  %el = uop.exp %sl : f32
  %sum = uop.range_reduce add %el over(%l) : f32
  %r = uop.recip %sum : f32
  %y = uop.mul %ej, %r : f32
  %w = uop.store %y, %out[%i, %j] : memref<4x2048xf32>
  %e = uop.end %w over(%i, %j) : memref<4x2048xf32>
  return
}

// -----

// The last step of a whole-tensor sum, over 250 partials: one row (no block id), 256 threads (those from 250 on add
// nothing to their partial), and thread 0 alone stores the one output (the loop from t to 1).
// CHECK-LABEL: gpu.func @r_250(
// CHECK-SAME: workgroup(%[[SHM:.*]] : memref<256xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME: pytc.gpu = {grid = 1 : i64, group = 1 : i64, local = 256 : i64, outputs = 1 : i64, total = 1 : i64}
// CHECK-NOT: gpu.block_id
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK-NEXT: scf.for %{{.*}} = %[[T]] to %{{.*}} step %{{.*}} iter_args
// CHECK: scf.if
// CHECK: gpu.barrier
// CHECK-NEXT: }
// CHECK-NEXT: %[[TOTAL:.*]] = memref.load %[[SHM]][%{{.*}}]
// CHECK-NEXT: scf.for %{{.*}} = %[[T]] to %[[ONE:.*]] step %{{.*}} {
// CHECK-NEXT: memref.store %[[TOTAL]], %{{.*}}[] : memref<f32>
// PTX: .visible .entry r_250(
// PTX: bar.sync
func.func @r_250(%out: memref<f32>, %x: memref<1x1x250xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %k = uop.range reduce 250 id 0
  %v = uop.index %x[%c0, %c0, %k] : memref<1x1x250xf32>
  %s = uop.range_reduce add %v over(%k) : f32
  %w = uop.store %s, %out[] : memref<f32>
  %e = uop.end %w over() : memref<f32>
  return
}

// -----

// A matmul with a relu and bias epilogue: one 16x16 output tile per workgroup (grid ceil(33/16) * ceil(17/16) = 6) of
// 256 threads; per k step of 16, each thread stages one element of the A and B tiles (0 out of bounds, the loads under
// an scf.if without a barrier) in workgroup memory, a barrier, its 16 products added to its own accumulator slot (the
// k-step loop holds barriers, so it carries nothing), a barrier; then the guarded epilogue and store.
// CHECK-LABEL: gpu.func @r_33_17_70(
// CHECK-SAME: workgroup(%[[A:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[ACC:.*]] : memref<256xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: pytc.gpu = {grid = 6 : i64, local = 256 : i64, outputs = 1 : i64, tile = 16 : i64, total = 561 : i64}
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK-NEXT: memref.store %{{.*}}, %[[B]]
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.load %[[A]]
// CHECK-NEXT: memref.load %[[B]]
// CHECK: memref.store %{{.*}}, %[[ACC]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }
// CHECK-NEXT: %[[SUM:.*]] = memref.load %[[ACC]]
// CHECK: scf.if
// CHECK: arith.cmpf {{.*}}%[[SUM]]
// CHECK: memref.store
// EXPLAIN-NEXT: pytc-gpu-map: r_33_17_70: 561 outputs, matmul in 16x16 tiles through workgroup memory, grid 6 x local 256, k 70 in steps of 16
// SERIAL-NEXT: pytc-gpu-map: r_33_17_70: 561 outputs, matmul in 16x16 tiles through workgroup memory, grid 6 x local 256, k 70 in steps of 16
// EXPLAIN16: pytc-gpu-map: r_33_17_70: 561 outputs, grid 36 x local 16, 1 per thread, tail guarded
// PTX: .visible .entry r_33_17_70(
// PTX: .shared
// PTX: bar.sync
// ROCDL: rocdl.barrier
func.func @r_33_17_70(%out: memref<33x17xf32>, %x: memref<33x70xf32>, %w: memref<70x17xf32>, %bias: memref<17xf32>) attributes {pytc.kernel} {
  %zero = uop.const 0.000000e+00 : f32
  %i = uop.range loop 33 id 1
  %k = uop.range reduce 70 id 0
  %a = uop.index %x[%i, %k] : memref<33x70xf32>
  %j = uop.range loop 17 id 2
  %b = uop.index %w[%k, %j] : memref<70x17xf32>
  %p = uop.mul %a, %b : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %neg = uop.cmplt %s, %zero : f32
  %eq = uop.cmpeq %s, %zero : f32
  %off = uop.or %neg, %eq : i1
  %r = uop.where %off, %zero, %s : f32
  %c = uop.index %bias[%j] : memref<17xf32>
  %y = uop.add %r, %c : f32
  %st = uop.store %y, %out[%i, %j] : memref<33x17xf32>
  %e = uop.end %st over(%i, %j) : memref<33x17xf32>
  return
}
