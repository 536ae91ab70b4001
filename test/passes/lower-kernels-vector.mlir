// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-lower-kernels,canonicalize,cse)' | FileCheck %s

// A matmul marked for 4 rows of i (upcast range id 0) by 2 vectors of 8 lanes of j: b's panel (k x 16 lanes of j) is
// packed once per group of row blocks into a contiguous buffer, then the 8 accumulator vectors are loop-carried through
// k, each step an fma of a broadcast a[i, k] and a panel vector; the epilogue stores the 8 vectors.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<8x16xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<8x4xf32> {llvm.noalias}, %[[B:[a-z0-9]+]]: memref<4x16xf32>
// CHECK-SAME: pytc.extent = 1 : i64
// CHECK: %[[PANEL:.*]] = memref.alloca() : memref<4x16xf32>
// CHECK: scf.parallel
// CHECK: scf.for %[[KP:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[V:.*]] = vector.load %[[B]][%[[KP]], %{{.*}}] : memref<4x16xf32>, vector<8xf32>
// CHECK-NEXT: vector.store %[[V]], %[[PANEL]][%[[KP]], %{{.*}}]
// CHECK: scf.for %[[BLOCK:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[ACCS:.*]]:8 = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: %[[AK:.*]] = memref.load %[[A]][%{{.*}}, %[[K]]]
// CHECK-NEXT: %[[ABC:.*]] = vector.broadcast %[[AK]] : f32 to vector<8xf32>
// CHECK-NEXT: %[[BK:.*]] = vector.load %[[PANEL]][%[[K]], %{{.*}}]
// CHECK-NEXT: math.fma %[[ABC]], %[[BK]], %{{.*}} : vector<8xf32>
// CHECK-COUNT-7: math.fma
// CHECK: scf.yield
// CHECK-COUNT-8: vector.store %[[ACCS]]#{{[0-7]}}, %[[OUT]]
func.func @matmul(%out: memref<8x16xf32>, %a: memref<8x4xf32>, %b: memref<4x16xf32>) attributes {pytc.kernel, pytc.vector = {group = 2 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}} {
  %i = uop.range loop 8 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 4 id 2
  %x = uop.index %a[%i, %k] : memref<8x4xf32>
  %y = uop.index %b[%k, %j] : memref<4x16xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<8x16xf32>
  %e = uop.end %w over(%i, %j) : memref<8x16xf32>
  return
}

// -----

// Shifted windows of a padded row, one vector of 8 lanes along j: the reads along j are gated by the padding, so they
// become masked vector loads. 10 outputs are two blocks of 8, the second moved back to end at 10 (overlapping).
// CHECK-LABEL: func.func @shifted_sum(
// CHECK-SAME: pytc.extent = 2 : i64
// CHECK: scf.parallel (%[[J:.*]]) =
// CHECK: %[[START:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK-NEXT: %[[CLAMPED:.*]] = arith.minsi %[[START]], %{{.*}} : index
// CHECK: scf.for {{.*}} -> (vector<8xf32>)
// CHECK-COUNT-2: vector.maskedload
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %[[CLAMPED]]] : memref<1x10xf32>, vector<8xf32>
func.func @shifted_sum(%out: memref<1x10xf32>, %x: memref<3x10xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %minus1 = arith.constant -1 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %zero = uop.const 0.000000e+00 : f32
  %j = uop.range loop 10 id 0
  %k = uop.range reduce 3 id 1
  %left = arith.addi %j, %minus1 : index
  %left_low = arith.cmpi sge, %left, %c0 : index
  %left_high = arith.cmpi sle, %left, %c9 : index
  %left_in = arith.andi %left_low, %left_high : i1
  %l = uop.index %x[%k, %left] if %left_in : memref<3x10xf32>
  %l0 = uop.where %left_in, %l, %zero : f32
  %right = arith.addi %j, %c1 : index
  %right_low = arith.cmpi sge, %right, %c0 : index
  %right_high = arith.cmpi sle, %right, %c9 : index
  %right_in = arith.andi %right_low, %right_high : i1
  %r = uop.index %x[%k, %right] if %right_in : memref<3x10xf32>
  %r0 = uop.where %right_in, %r, %zero : f32
  %both = uop.add %l0, %r0 : f32
  %s = uop.range_reduce add %both over(%k) : f32
  %w = uop.store %s, %out[%c0, %j] : memref<1x10xf32>
  %e = uop.end %w over(%j) : memref<1x10xf32>
  return
}

// -----

// Marked unroll: the work in the body that does not depend on j (exp2(sin(a[i, k]))) is computed once per row as
// vectors along k, 8 steps of k at once; each step broadcasts its lane into the fma.
// CHECK-LABEL: func.func @prologue(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<4x16x1xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<4x8xf32>
// CHECK: %[[AK:.*]] = vector.load %[[A]][%{{.*}}, %{{.*}}] : memref<4x8xf32>, vector<8xf32>
// CHECK: arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: %[[LANE:.*]] = vector.extract %{{.*}}[0] : f32 from vector<8xf32>
// CHECK-NEXT: %[[SPLAT:.*]] = vector.broadcast %[[LANE]] : f32 to vector<8xf32>
// CHECK: math.fma %[[SPLAT]]
func.func @prologue(%out: memref<4x16x1xf32>, %a: memref<4x8xf32>, %b: memref<8x16xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 1 : i64, upcast = 0 : i64, vectors = 2 : i64}} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 8 id 2
  %x = uop.index %a[%i, %k] : memref<4x8xf32>
  %sine = uop.sin %x : f32
  %scaled = uop.exp2 %sine : f32
  %y = uop.index %b[%k, %j] : memref<8x16xf32>
  %p = uop.mul %scaled, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j, %c0] : memref<4x16x1xf32>
  %e = uop.end %w over(%i, %j) : memref<4x16x1xf32>
  return
}

// -----

// Stream mode (elementwise along j, the reduction varying only with the row): the max runs once per row, before the
// loop over blocks of j, as vector code: 4 vectors of the row (its 32 elements: one step) kept apart, each a plain max
// beside a NaN-seen flag, combined pairwise, then across the lanes; loads and stores are vectors, the stores aligned
// to the vector (the row is a multiple of the lanes).
// CHECK-LABEL: func.func @sub_row_max(
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<4x32xf32> {llvm.noalias}, %[[IN:[a-z0-9]+]]: memref<4x32xf32>
// CHECK: scf.parallel (%[[I:[a-z0-9]+]]) =
// CHECK-COUNT-4: vector.load %[[IN]][%[[I]], %{{.*}}] : memref<4x32xf32>, vector<8xf32>
// CHECK-COUNT-3: arith.maximumf {{.*}} fastmath<reassoc,nnan> : vector<8xf32>
// CHECK-NEXT: %[[LARGEST:.*]] = vector.reduction <maximumf>
// CHECK-COUNT-3: arith.ori {{.*}} : vector<8xi1>
// CHECK-NEXT: %[[SEEN:.*]] = vector.reduction <or>
// CHECK-NEXT: %[[ROWMAX:.*]] = arith.select %[[SEEN]], %{{.*}}, %[[LARGEST]] : f32
// CHECK-NEXT: scf.for %[[B:[a-z0-9]+]] =
// CHECK: %[[X:.*]] = vector.load %[[IN]][%[[I]], %{{.*}}] : memref<4x32xf32>, vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[I]], %{{.*}}] {alignment = 32 : i64} : memref<4x32xf32>, vector<8xf32>
func.func @sub_row_max(%out: memref<4x32xf32>, %x: memref<4x32xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 2 : i64}} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 32 id 1
  %k = uop.range reduce 32 id 2
  %v = uop.index %x[%i, %j] : memref<4x32xf32>
  %row = uop.index %x[%i, %k] : memref<4x32xf32>
  %m = uop.range_reduce max %row over(%k) : f32
  %n = uop.neg %m : f32
  %d = uop.add %v, %n : f32
  %w = uop.store %d, %out[%i, %j] : memref<4x32xf32>
  %e = uop.end %w over(%i, %j) : memref<4x32xf32>
  return
}

// -----

// Softmax in stream mode: the sum's body is the output's numerator along the row, so the sum runs as vector code that
// keeps each exponential in a row buffer, and the loop along the row reads them back instead of computing them again.
// CHECK-LABEL: func.func @softmax(
// CHECK: %[[ROW:.*]] = memref.alloca() : memref<16xf32>
// CHECK: scf.for %[[K:[a-z0-9]+]] = {{.*}} iter_args({{.*}}) -> (vector<8xf32>)
// CHECK: math.roundeven
// CHECK: vector.store %[[E:.*]], %[[ROW]][%[[K]]] : memref<16xf32>, vector<8xf32>
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<8xf32> into f32
// CHECK-NOT: math.roundeven
// CHECK: vector.load %[[ROW]][%{{.*}}] : memref<16xf32>, vector<8xf32>
// CHECK-NOT: math.roundeven
// CHECK: return
func.func @softmax(%out: memref<4x16xf32>, %x: memref<4x16xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 2 : i64}} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 16 id 1
  %km = uop.range reduce 16 id 2
  %ks = uop.range reduce 16 id 3
  %row = uop.index %x[%i, %km] : memref<4x16xf32>
  %m = uop.range_reduce max %row over(%km) : f32
  %n = uop.neg %m : f32
  %v = uop.index %x[%i, %j] : memref<4x16xf32>
  %d = uop.add %v, %n : f32
  %numerator = uop.exp2 %d : f32
  %vs = uop.index %x[%i, %ks] : memref<4x16xf32>
  %ds = uop.add %vs, %n : f32
  %es = uop.exp2 %ds : f32
  %sum = uop.range_reduce add %es over(%ks) : f32
  %r = uop.recip %sum : f32
  %o = uop.mul %numerator, %r : f32
  %w = uop.store %o, %out[%i, %j] : memref<4x16xf32>
  %e = uop.end %w over(%i, %j) : memref<4x16xf32>
  return
}

// -----

// Attention's shape, register-blocked with the row max and sum inside: they are computed once per tile row (vector
// code along the row, 4 rows), before the loop that accumulates the 4 x 2 output vectors.
// CHECK-LABEL: func.func @softmax_matmul(
// CHECK-COUNT-4: vector.reduction <maximumf>
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK-NOT: vector.reduction <maximumf>
// CHECK: return
func.func @softmax_matmul(%out: memref<4x16x1xf32>, %a: memref<4x8xf32>, %b: memref<8x16xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 1 : i64, upcast = 0 : i64, vectors = 2 : i64}} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 8 id 2
  %km = uop.range reduce 8 id 3
  %ks = uop.range reduce 8 id 4
  %row = uop.index %a[%i, %km] : memref<4x8xf32>
  %m = uop.range_reduce max %row over(%km) : f32
  %n = uop.neg %m : f32
  %vs = uop.index %a[%i, %ks] : memref<4x8xf32>
  %ds = uop.add %vs, %n : f32
  %es = uop.exp2 %ds : f32
  %sum = uop.range_reduce add %es over(%ks) : f32
  %r = uop.recip %sum : f32
  %v = uop.index %a[%i, %k] : memref<4x8xf32>
  %d = uop.add %v, %n : f32
  %numerator = uop.exp2 %d : f32
  %p = uop.mul %numerator, %r : f32
  %y = uop.index %b[%k, %j] : memref<8x16xf32>
  %py = uop.mul %p, %y : f32
  %s = uop.range_reduce add %py over(%k) : f32
  %w = uop.store %s, %out[%i, %j, %c0] : memref<4x16x1xf32>
  %e = uop.end %w over(%i, %j) : memref<4x16x1xf32>
  return
}

// -----

// x @ w.T: the panel of w (k x 16 lanes of j) is read along k, where w is contiguous: per step of 8 along k, 8 vector
// loads of 8 consecutive k (one per column j), transposed in registers into 8 vectors along j (three rounds of eight
// interleaving shuffles), stored as panel rows.
// CHECK-LABEL: func.func @matmul_transposed(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<8x16xf32> {llvm.noalias}, %{{[a-z0-9]+}}: memref<8x16xf32> {llvm.noalias}, %[[W:[a-z0-9]+]]: memref<16x16xf32>
// CHECK: %[[PANEL:.*]] = memref.alloca() : memref<16x16xf32>
// CHECK: scf.for %[[KP:.*]] = %{{.*}} to %{{.*}} step %c8
// CHECK-COUNT-8: vector.load %[[W]][%{{.*}}, %[[KP]]] : memref<16x16xf32>, vector<8xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 8, 1, 9, 2, 10, 3, 11] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT: vector.shuffle %{{.*}}, %{{.*}} [4, 12, 5, 13, 6, 14, 7, 15] : vector<8xf32>, vector<8xf32>
// CHECK-COUNT-22: vector.shuffle
// CHECK-NOT: vector.shuffle
// CHECK-NOT: vector.from_elements
// CHECK: vector.store %{{.*}}, %[[PANEL]][%[[KP]], %{{.*}}] : memref<16x16xf32>, vector<8xf32>
// CHECK: math.fma
func.func @matmul_transposed(%out: memref<8x16xf32>, %a: memref<8x16xf32>, %w: memref<16x16xf32>) attributes {pytc.kernel, pytc.vector = {group = 2 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}} {
  %i = uop.range loop 8 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 16 id 2
  %x = uop.index %a[%i, %k] : memref<8x16xf32>
  %y = uop.index %w[%j, %k] : memref<16x16xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %st = uop.store %s, %out[%i, %j] : memref<8x16xf32>
  %e = uop.end %st over(%i, %j) : memref<8x16xf32>
  return
}

// -----

// a.T @ b: a[k, i] steps across a's rows as k moves. Before the loop over blocks of j, the rows of the group's 2 blocks
// are copied into a panel (block x k x 4 rows), a vector of 4 consecutive i per block and step; the tiles of a block
// then read their broadcast values from its part of the panel, in order.
// CHECK-LABEL: func.func @matmul_rows_across(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<8x16xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}
// CHECK: %[[ROWS:.*]] = memref.alloca() : memref<2x4x4xf32>
// CHECK: scf.parallel
// CHECK: scf.for %[[KP:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[COPIED:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[SEGMENT:.*]] = vector.load %[[A]][%[[KP]], %{{.*}}] : memref<4x8xf32>, vector<4xf32>
// CHECK-NEXT: vector.store %[[SEGMENT]], %[[ROWS]][%[[COPIED]], %[[KP]], %c0] : memref<2x4x4xf32>, vector<4xf32>
// CHECK: scf.for %[[BLOCK:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NEXT: %[[A0:.*]] = memref.load %[[ROWS]][%[[BLOCK]], %[[K]], %c0] : memref<2x4x4xf32>
// CHECK-NEXT: vector.broadcast %[[A0]] : f32 to vector<8xf32>
// CHECK-NOT: memref.load %[[A]]
// CHECK: memref.load %[[ROWS]][%[[BLOCK]], %[[K]], %c3] : memref<2x4x4xf32>
// CHECK: scf.yield
func.func @matmul_rows_across(%out: memref<8x16xf32>, %a: memref<4x8xf32>, %b: memref<4x16xf32>) attributes {pytc.kernel, pytc.vector = {group = 2 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}} {
  %i = uop.range loop 8 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 4 id 2
  %x = uop.index %a[%k, %i] : memref<4x8xf32>
  %y = uop.index %b[%k, %j] : memref<4x16xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<8x16xf32>
  %e = uop.end %w over(%i, %j) : memref<8x16xf32>
  return
}

// -----

// 12 rows are 3 blocks of 4: in groups of 2 (pytc.extent 2), the last group holds the one block left, so the loop over a
// group's blocks runs to min(2, 3 - its first block). pytc.work counts the kernel's steps: 12 x 16 outputs x 4.
// CHECK-LABEL: func.func @matmul_partial_group(
// CHECK-SAME: pytc.extent = 2 : i64, pytc.kernel, pytc.work = 768 : i64
// CHECK: scf.parallel (%[[GROUP:.*]]) =
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %[[GROUP]], %c2 : index
// CHECK-NEXT: %[[LEFT:.*]] = arith.subi %c3, %[[FIRST]] : index
// CHECK-NEXT: %[[COUNT:.*]] = arith.minsi %[[LEFT]], %c2 : index
// CHECK: scf.for %[[BLOCK:.*]] = %c0 to %[[COUNT]] step %c1 {
// CHECK-NEXT: arith.addi %[[FIRST]], %[[BLOCK]] : index
func.func @matmul_partial_group(%out: memref<12x16xf32>, %a: memref<12x4xf32>, %b: memref<4x16xf32>) attributes {pytc.kernel, pytc.vector = {group = 2 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}} {
  %i = uop.range loop 12 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 4 id 2
  %x = uop.index %a[%i, %k] : memref<12x4xf32>
  %y = uop.index %b[%k, %j] : memref<4x16xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<12x16xf32>
  %e = uop.end %w over(%i, %j) : memref<12x16xf32>
  return
}

// -----

// With chunks = 2 over two groups of i (16 rows: 4 blocks of 4, groups of 2), the parallel index runs over 2 chunks x 2
// groups (pytc.extent 4), groups fastest: index p is chunk p / 2 of group p % 2, and takes the blocks of j from
// chunk * 5 / 2 to (chunk + 1) * 5 / 2 (80 columns are 5 blocks of 16: [0, 2) and [2, 5)), packing each block's panel
// and running the group's blocks of i over it. A core's consecutive indices share their chunk: it reads those panels'
// columns of b once for every group.
// CHECK-LABEL: func.func @matmul_chunks(
// CHECK-SAME: pytc.extent = 4 : i64
// CHECK: scf.parallel (%[[INDEX:.*]]) =
// CHECK-NEXT: %[[CHUNK:.*]] = arith.divui %[[INDEX]], %c2 : index
// CHECK-NEXT: %[[GROUP:.*]] = arith.remui %[[INDEX]], %c2 : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[CHUNK]], %c1 : index
// CHECK-NEXT: %[[LOW:.*]] = arith.muli %[[CHUNK]], %c5 : index
// CHECK-NEXT: %[[FROM:.*]] = arith.divui %[[LOW]], %c2 : index
// CHECK-NEXT: %[[HIGH:.*]] = arith.muli %[[NEXT]], %c5 : index
// CHECK-NEXT: %[[TO:.*]] = arith.divui %[[HIGH]], %c2 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %[[GROUP]], %c2 : index
// CHECK-NEXT: scf.for %[[COLUMN:.*]] = %[[FROM]] to %[[TO]] step %c1 {
// CHECK-NEXT: arith.muli %[[COLUMN]], %c16 : index
// CHECK: scf.for %[[BLOCK:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT: arith.addi %[[FIRST]], %[[BLOCK]] : index
func.func @matmul_chunks(%out: memref<16x80xf32>, %a: memref<16x4xf32>, %b: memref<4x80xf32>) attributes {pytc.kernel, pytc.vector = {chunks = 2 : i64, group = 2 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}} {
  %i = uop.range loop 16 id 0
  %j = uop.range loop 80 id 1
  %k = uop.range reduce 4 id 2
  %x = uop.index %a[%i, %k] : memref<16x4xf32>
  %y = uop.index %b[%k, %j] : memref<4x80xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<16x80xf32>
  %e = uop.end %w over(%i, %j) : memref<16x80xf32>
  return
}

// -----

// A convolution marked for vectors along its output channels (`along`, range id 0), which is not its innermost range:
// the parallel loop runs over blocks of 16 channels (pytc.extent 1), the weights of a block are packed once into a
// panel (input channels x window x 16 lanes), then loops over the output rows and blocks of 4 columns (5 columns: the
// second block moved back) carry 8 accumulators through the window. The output runs along the columns: each square of
// 4 columns x 4 channels of accumulators is transposed by shuffles (two rounds of four) into a stack buffer, one row per
// channel; then one loop over the 16 channels stores each channel's 4 columns as one vector.
// CHECK-LABEL: func.func @conv_narrow(
// CHECK-SAME: pytc.extent = 1 : i64
// CHECK: %[[COLUMNS:.*]] = memref.alloca() : memref<16x4xf32>
// CHECK: %[[PANEL:.*]] = memref.alloca() : memref<4x3x3x16xf32>
// CHECK: scf.parallel
// CHECK-COUNT-3: scf.for
// CHECK: vector.store %{{.*}}, %[[PANEL]]
// CHECK: vector.store %{{.*}}, %[[PANEL]]
// CHECK: scf.for %{{.*}} = %c0 to %c5 step %c1
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c2 step %c1
// CHECK: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.load %[[PANEL]]
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK: vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 4, 1, 5] : vector<4xf32>, vector<4xf32>
// CHECK-COUNT-16: vector.store %{{.*}}, %[[COLUMNS]][%{{.*}}, %{{.*}}] : memref<16x4xf32>, vector<4xf32>
// CHECK: scf.for %[[CHANNEL:.*]] = %{{.*}} to %c16{{.*}} step
// CHECK-NEXT: %[[FOUR:.*]] = vector.load %[[COLUMNS]][%[[CHANNEL]], %{{.*}}] : memref<16x4xf32>, vector<4xf32>
// CHECK: vector.store %[[FOUR]], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<16x5x5xf32>, vector<4xf32>
// CHECK-NOT: vector.store {{.*}} memref<16x5x5xf32>
// CHECK-NOT: memref.store
func.func @conv_narrow(%out: memref<16x5x5xf32>, %x: memref<4x5x5xf32>, %w: memref<16x4x3x3xf32>) attributes {pytc.kernel, pytc.vector = {along = 0 : i64, group = 1 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 2 : i64, vectors = 2 : i64}} {
  %zero = uop.const 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %minus1 = arith.constant -1 : index
  %last = arith.constant 4 : index
  %o = uop.range loop 16 id 0
  %y = uop.range loop 5 id 1
  %x_ = uop.range loop 5 id 2
  %c = uop.range reduce 4 id 3
  %ky = uop.range reduce 3 id 4
  %kx = uop.range reduce 3 id 5
  %yk = arith.addi %y, %ky : index
  %row = arith.addi %yk, %minus1 : index
  %row_low = arith.cmpi sge, %row, %c0 : index
  %row_high = arith.cmpi sle, %row, %last : index
  %row_in = arith.andi %row_low, %row_high : i1
  %xk = arith.addi %x_, %kx : index
  %col = arith.addi %xk, %minus1 : index
  %col_low = arith.cmpi sge, %col, %c0 : index
  %col_high = arith.cmpi sle, %col, %last : index
  %col_in = arith.andi %col_low, %col_high : i1
  %in = arith.andi %row_in, %col_in : i1
  %v = uop.index %x[%c, %row, %col] if %in : memref<4x5x5xf32>
  %v0 = uop.where %in, %v, %zero : f32
  %k = uop.index %w[%o, %c, %ky, %kx] : memref<16x4x3x3xf32>
  %p = uop.mul %v0, %k : f32
  %s = uop.range_reduce add %p over(%c, %ky, %kx) : f32
  %st = uop.store %s, %out[%o, %y, %x_] : memref<16x5x5xf32>
  %e = uop.end %st over(%o, %y, %x_) : memref<16x5x5xf32>
  return
}

// -----

// Sums of rows of 16 (`across`): a scalar parallel loop over the rows; each row's 2 vectors of 8 are loaded into 2
// partial sums, added and summed across the lanes, and the sum is stored once.
// CHECK-LABEL: func.func @row_sum(
// CHECK: scf.parallel (%[[I:[a-z0-9]+]]) =
// CHECK-NEXT: vector.load %{{.*}}[%[[I]], %c0] : memref<4x16xf32>, vector<8xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: vector.load %{{.*}}[%[[I]], %c8] : memref<4x16xf32>, vector<8xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: %[[AB:.*]] = arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT: %[[S:.*]] = vector.reduction <add>, %[[AB]] fastmath<reassoc> : vector<8xf32> into f32
// CHECK-NEXT: memref.store %[[S]], %{{.*}}[%[[I]], %c0] : memref<4x1xf32>
// CHECK-NEXT: scf.reduce
func.func @row_sum(%out: memref<4x1xf32>, %x: memref<4x16xf32>) attributes {pytc.kernel, pytc.vector = {across = 1 : i64, group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 16 id 1
  %v = uop.index %x[%i, %k] : memref<4x16xf32>
  %s = uop.range_reduce add %v over(%k) : f32
  %w = uop.store %s, %out[%i, %c0] : memref<4x1xf32>
  %e = uop.end %w over(%i) : memref<4x1xf32>
  return
}

// -----

// `across` with rows = the lanes: the parallel loop runs over blocks of 8 rows (the last of 20 moved back to start at 12).
// One loop over the block's rows per reduction, each row vector code along it, left in a stack buffer: first the
// maxima, then the sums, which read their row's maximum back; the scale by b and the store are vectors over the block.
// CHECK-LABEL: func.func @row_sums_of_shifted(
// CHECK: %[[MAXIMA:.*]] = memref.alloca() : memref<8xf32>
// CHECK: %[[SUMS:.*]] = memref.alloca() : memref<8xf32>
// CHECK: scf.parallel (%[[BLOCK:[a-z0-9]+]]) =
// CHECK: %[[START:.*]] = arith.minsi %{{.*}}, %c12 : index
// CHECK: scf.for %[[ROW:[a-z0-9]+]] = %c0 to %c8 step %c1 {
// CHECK: vector.reduction <maximumf>
// CHECK: memref.store %{{.*}}, %[[MAXIMA]][%[[ROW]]] : memref<8xf32>
// CHECK: scf.for %[[ROW2:[a-z0-9]+]] = %c0 to %c8 step %c1 {
// CHECK: memref.load %[[MAXIMA]][%[[ROW2]]] : memref<8xf32>
// CHECK: vector.reduction <add>
// CHECK: memref.store %{{.*}}, %[[SUMS]][%[[ROW2]]] : memref<8xf32>
// CHECK: %[[S:.*]] = vector.load %[[SUMS]][%c0] : memref<8xf32>, vector<8xf32>
// CHECK-NEXT: %[[B:.*]] = vector.load %{{.*}}[%[[START]]] : memref<20xf32>, vector<8xf32>
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[S]], %[[B]] : vector<8xf32>
// CHECK-NEXT: vector.store %[[R]], %{{.*}}[%[[START]]] : memref<20xf32>, vector<8xf32>
func.func @row_sums_of_shifted(%out: memref<20x1xf32>, %x: memref<20x16xf32>, %b: memref<20xf32>) attributes {pytc.kernel, pytc.vector = {across = 1 : i64, group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 8 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 20 id 0
  %m = uop.range reduce 16 id 1
  %k = uop.range reduce 16 id 2
  %xm = uop.index %x[%i, %m] : memref<20x16xf32>
  %max = uop.range_reduce max %xm over(%m) : f32
  %xk = uop.index %x[%i, %k] : memref<20x16xf32>
  %nm = uop.neg %max : f32
  %d = uop.add %xk, %nm : f32
  %s = uop.range_reduce add %d over(%k) : f32
  %bi = uop.index %b[%i] : memref<20xf32>
  %r = uop.mul %s, %bi : f32
  %w = uop.store %r, %out[%i, %c0] : memref<20x1xf32>
  %end = uop.end %w over(%i) : memref<20x1xf32>
  return
}

// -----

// A kernel marked pytc.in_place computes an assign in place: the input it reads only where it writes may be the output's
// buffer, so that argument and the output lose llvm.noalias. Over 20 elements a block of 16 lanes would leave a partial
// last block moved back over its neighbour, computing outputs twice from the input the first pass overwrote, so this
// kernel keeps scalar loops; over 32 elements the blocks are whole and it is vector code. Unmarked, the 20-element
// kernel is vector code with every argument noalias.
// CHECK-LABEL: func.func @update_partial(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<20xf32>, %{{[a-z0-9]+}}: memref<20xf32>, %{{[a-z0-9]+}}: index
// CHECK-NOT: vector.
// CHECK: return
// CHECK-LABEL: func.func @update_whole(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<32xf32>, %{{[a-z0-9]+}}: memref<32xf32>, %{{[a-z0-9]+}}: index
// CHECK: vector.load
// CHECK-LABEL: func.func @update_unmarked(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<20xf32> {llvm.noalias}, %{{[a-z0-9]+}}: memref<20xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index
// CHECK: vector.load
func.func @update_partial(%out: memref<20xf32>, %m: memref<20xf32>) attributes {pytc.in_place, pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 2 : i64}} {
  %half = uop.const 5.000000e-01 : f32
  %i = uop.range loop 20 id 0
  %m_i = uop.index %m[%i] : memref<20xf32>
  %r = uop.mul %m_i, %half : f32
  %w = uop.store %r, %out[%i] : memref<20xf32>
  %e = uop.end %w over(%i) : memref<20xf32>
  return
}
func.func @update_whole(%out: memref<32xf32>, %m: memref<32xf32>) attributes {pytc.in_place, pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 2 : i64}} {
  %half = uop.const 5.000000e-01 : f32
  %i = uop.range loop 32 id 0
  %m_i = uop.index %m[%i] : memref<32xf32>
  %r = uop.mul %m_i, %half : f32
  %w = uop.store %r, %out[%i] : memref<32xf32>
  %e = uop.end %w over(%i) : memref<32xf32>
  return
}
func.func @update_unmarked(%out: memref<20xf32>, %m: memref<20xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 2 : i64}} {
  %half = uop.const 5.000000e-01 : f32
  %i = uop.range loop 20 id 0
  %m_i = uop.index %m[%i] : memref<20xf32>
  %r = uop.mul %m_i, %half : f32
  %w = uop.store %r, %out[%i] : memref<20xf32>
  %e = uop.end %w over(%i) : memref<20xf32>
  return
}

// -----

// A transpose tile of 8 x 8: the parallel loop counts tiles of both ranges (3 x 5), the read across rows is 8 loads
// along i turned by 3 rounds of shuffles (24) into 8 vectors along j, each added to y's row and stored.
// CHECK-LABEL: func.func @transpose_add(
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c5)
// CHECK-COUNT-8: vector.load %{{.*}} : memref<40x24xf32>, vector<8xf32>
// CHECK-COUNT-24: vector.shuffle
// CHECK-COUNT-8: vector.store %{{.*}} : memref<24x40xf32>, vector<8xf32>
// CHECK-NOT: vector.store
func.func @transpose_add(%out: memref<24x40xf32>, %x: memref<40x24xf32>, %y: memref<24x40xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, transpose = 0 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %i = uop.range loop 24 id 0
  %j = uop.range loop 40 id 1
  %a = uop.index %x[%j, %i] : memref<40x24xf32>
  %b = uop.index %y[%i, %j] : memref<24x40xf32>
  %s = uop.add %a, %b : f32
  %w = uop.store %s, %out[%i, %j] : memref<24x40xf32>
  %e = uop.end %w over(%i, %j) : memref<24x40xf32>
  return
}

// -----

// Two sums over one range read one weight b[j, k] (the gradients of a projection's input share its weight): the weight is
// packed once, as a transposed panel, and both reductions read that panel.
// CHECK-LABEL: func.func @two_sums_one_weight(
// CHECK: memref.alloca() : memref<16x16xf32>
// CHECK-NOT: memref.alloca() : memref<16x16xf32>
// CHECK: scf.parallel
// CHECK-COUNT-2: vector.load %{{.*}} : memref<16x16xf32>, vector<8xf32>
func.func @two_sums_one_weight(%out: memref<8x16xf32>, %a: memref<8x16xf32>, %c: memref<8x16xf32>, %b: memref<16x16xf32>) attributes {pytc.kernel, pytc.vector = {group = 2 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}} {
  %i = uop.range loop 8 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 16 id 2
  %x = uop.index %a[%i, %k] : memref<8x16xf32>
  %y = uop.index %b[%j, %k] : memref<16x16xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %z = uop.index %c[%i, %k] : memref<8x16xf32>
  %q = uop.mul %z, %y : f32
  %t = uop.range_reduce add %q over(%k) : f32
  %u = uop.mul %s, %t : f32
  %w = uop.store %u, %out[%i, %j] : memref<8x16xf32>
  %e = uop.end %w over(%i, %j) : memref<8x16xf32>
  return
}

// -----

// A one-hot sum (an embedding's gradient: row v of the table sums the gradients at the positions whose index is v), 4
// rows of v by 1 vector of d: a reduce step reads and accumulates only where its index falls in the block's rows,
// v0 <= p < v0 + 4, one unsigned compare of p - v0; the other steps keep the accumulators.
// CHECK-LABEL: func.func @embedding_gradient(
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: %[[P:.*]] = memref.load %{{.*}}[%[[K]]] : memref<64xi32>
// CHECK: %[[OFFSET:.*]] = arith.subi %[[P]], %{{.*}} : i32
// CHECK: %[[HIT:.*]] = arith.cmpi ult, %[[OFFSET]], %{{.*}} : i32
// CHECK: %[[STEP:.*]]:4 = scf.if %[[HIT]] -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.load %{{.*}}[%[[K]], %{{.*}}] : memref<64x8xf32>, vector<8xf32>
// CHECK-COUNT-4: arith.select
// CHECK: } else {
// CHECK-NEXT: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
// CHECK: scf.yield %[[STEP]]#0, %[[STEP]]#1, %[[STEP]]#2, %[[STEP]]#3
func.func @embedding_gradient(%out: memref<16x8xf32>, %idx: memref<64xi32>, %g: memref<64x8xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 1 : i64}} {
  %zero = uop.const 0.000000e+00 : f32
  %k = uop.range reduce 64 id 2
  %p = uop.index %idx[%k] : memref<64xi32>
  %v = uop.range loop 16 id 0
  %vi = arith.index_cast %v : index to i32
  %hit = uop.cmpeq %p, %vi : i32
  %d = uop.range loop 8 id 1
  %x = uop.index %g[%k, %d] : memref<64x8xf32>
  %s = uop.where %hit, %x, %zero : f32
  %r = uop.range_reduce add %s over(%k) : f32
  %w = uop.store %r, %out[%v, %d] : memref<16x8xf32>
  %e = uop.end %w over(%v, %d) : memref<16x8xf32>
  return
}

// -----

// The same gate without rows along v: each reduce step accumulates only where its mask holds.
// CHECK-LABEL: func.func @one_hot_column(
// CHECK: scf.for {{.*}} -> (vector<8xf32>)
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %{{.*}} = scf.if %[[HIT]] -> (vector<8xf32>)
func.func @one_hot_column(%out: memref<1x8xf32>, %idx: memref<64xi32>, %g: memref<64x8xf32>) attributes {pytc.kernel, pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %zero = uop.const 0.000000e+00 : f32
  %three = uop.const 3 : i32
  %k = uop.range reduce 64 id 2
  %p = uop.index %idx[%k] : memref<64xi32>
  %hit = uop.cmpeq %p, %three : i32
  %d = uop.range loop 8 id 1
  %x = uop.index %g[%k, %d] : memref<64x8xf32>
  %s = uop.where %hit, %x, %zero : f32
  %r = uop.range_reduce add %s over(%k) : f32
  %c0 = arith.constant 0 : index
  %w = uop.store %r, %out[%c0, %d] : memref<1x8xf32>
  %e = uop.end %w over(%d) : memref<1x8xf32>
  return
}

// -----

// A stack of two rows along a new last dim (out[i, j, q] = q == 0 ? a[i, j] : b[i, j]), marked `interleave` along j: the
// parallel loop runs over i and blocks of 8 of j (12 columns: the second block moved back to start at 4); per block, one
// vector load from each phase's source (the other's select folds away with q a constant), one shuffle joining them and
// one interleaving them, and one store of 16 floats into the output seen as 3 x 24.
// CHECK-LABEL: func.func @stack_last(
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<3x12x2xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<3x12xf32> {llvm.noalias}, %[[B:[a-z0-9]+]]: memref<3x12xf32> {llvm.noalias}
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0], [1, 2]] : memref<3x12x2xf32> into memref<3x24xf32>
// CHECK: scf.parallel (%[[I:.*]], %[[BLOCK:.*]]) =
// CHECK: %[[J:.*]] = arith.minsi %{{.*}}, %c4 : index
// CHECK: %[[X:.*]] = vector.load %[[A]][%[[I]], %[[J]]] : memref<3x12xf32>, vector<8xf32>
// CHECK: %[[Y:.*]] = vector.load %[[B]][%[[I]], %[[J]]] : memref<3x12xf32>, vector<8xf32>
// CHECK: %[[AT:.*]] = arith.muli %[[J]], %c2 : index
// CHECK: %[[JOINED:.*]] = vector.shuffle %[[X]], %[[Y]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// CHECK: %[[BOTH:.*]] = vector.shuffle %[[JOINED]], %[[JOINED]] [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15] : vector<16xf32>, vector<16xf32>
// CHECK: vector.store %[[BOTH]], %[[FLAT]][%[[I]], %[[AT]]] : memref<3x24xf32>, vector<16xf32>
// CHECK-NOT: memref.store
func.func @stack_last(%out: memref<3x12x2xf32>, %a: memref<3x12xf32>, %b: memref<3x12xf32>) attributes {pytc.kernel, pytc.vector = {along = 1 : i64, group = 1 : i64, interleave = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 3 id 0
  %j = uop.range loop 12 id 1
  %q = uop.range loop 2 id 2
  %x = uop.index %a[%i, %j] : memref<3x12xf32>
  %y = uop.index %b[%i, %j] : memref<3x12xf32>
  %first = arith.cmpi eq, %q, %c0 : index
  %v = uop.where %first, %x, %y : f32
  %w = uop.store %v, %out[%i, %j, %q] : memref<3x12x2xf32>
  %e = uop.end %w over(%i, %j, %q) : memref<3x12x2xf32>
  return
}

// -----

// A merged kernel streamed along its row: per block, both values as vectors, then both vector stores at the block's start.
// CHECK-LABEL: func.func @sibling_vectors(
// CHECK-SAME: %[[NEG:[a-z0-9]+]]: memref<64xf32> {llvm.noalias}, %[[TWICE:[a-z0-9]+]]: memref<64xf32> {llvm.noalias}, %[[IN:[a-z0-9]+]]: memref<64xf32> {llvm.noalias}
// CHECK: %[[X:.*]] = vector.load %[[IN]][%[[AT:.*]]] : memref<64xf32>, vector<16xf32>
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[X]] : vector<16xf32>
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[X]], %[[X]] : vector<16xf32>
// CHECK-NEXT: vector.store %[[N]], %[[NEG]][%[[AT]]] {{.*}}: memref<64xf32>, vector<16xf32>
// CHECK-NEXT: vector.store %[[T]], %[[TWICE]][%[[AT]]] {{.*}}: memref<64xf32>, vector<16xf32>
func.func @sibling_vectors(%neg: memref<64xf32>, %twice: memref<64xf32>, %in: memref<64xf32>) attributes {pytc.kernel,
    pytc.vector = {group = 1 : i64, lanes = 16 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}} {
  %i = uop.range loop 64 id 0
  %x = uop.index %in[%i] : memref<64xf32>
  %n = uop.neg %x : f32
  %s = uop.store %n, %neg[%i] : memref<64xf32>
  %e = uop.end %s over(%i) : memref<64xf32>
  %t = uop.add %x, %x : f32
  %s2 = uop.store %t, %twice[%i] : memref<64xf32>
  return
}
