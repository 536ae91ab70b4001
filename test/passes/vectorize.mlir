// RUN: pytc-opt %s --split-input-file -pytc-vectorize | FileCheck %s
// RUN: pytc-opt %s --split-input-file -pytc-vectorize=explain=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pytc-opt %s --split-input-file -pytc-vectorize=cores=2 | FileCheck %s --check-prefix=CORES
// RUN: pytc-opt %s --split-input-file -pytc-vectorize='rows=8 along_rows=2' | FileCheck %s --check-prefix=ALONG
// RUN: pytc-opt %s --split-input-file -pytc-vectorize='vectors=3' | FileCheck %s --check-prefix=THREE
// RUN: pytc-opt %s --split-input-file -pytc-vectorize='cores=2 l2=2048' | FileCheck %s --check-prefix=SMALL-L2
// RUN: pytc-opt %s --split-input-file -pytc-vectorize='lanes=16 vectors=3 rows=8' | FileCheck %s --check-prefix=LONG

// An L2 of 2 KiB holds a's rows of only two of matmul_wide's 4 blocks (1 KiB each): two groups, each in two runs of the
// columns (4 slices for the 2 cores).
// SMALL-L2-LABEL: func.func @matmul_wide(
// SMALL-L2-SAME: chunks = 2 : i64, group = 2 : i64

// Register tiles three vectors wide where that computes at most 1/16 of the columns twice: 24 columns are one block of 3
// vectors; 128 columns would be 6 blocks of 24 (144 columns, 12.5 % again), so 2 vectors; a stream (elementwise along
// the row) takes a power of two of vectors, so that power-of-two rows split into whole blocks.
// THREE-LABEL: func.func @matmul_wide(
// THREE-SAME: vectors = 2 : i64
// THREE-LABEL: func.func @matmul_narrow_three(
// THREE-SAME: vectors = 3 : i64
// THREE-LABEL: func.func @scaled_rows(
// THREE-SAME: stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 2 : i64

// A kernel vectorized along another range than its innermost (a convolution, whose input reads are gathered and gated
// per row) takes at most along_rows rows, unless rows cover the whole range in one block (conv_narrow's 5 columns);
// the others take rows.
// ALONG-LABEL: func.func @matmul(
// ALONG-SAME: rows = 8 : i64
// ALONG-LABEL: func.func @conv_narrow(
// ALONG-SAME: rows = 5 : i64
// ALONG-LABEL: func.func @conv_wide(
// ALONG-SAME: rows = 2 : i64

// On two cores, the 8-row matmul's 2 blocks of i (its outermost range, which the runtime splits across the cores) stay
// two groups of one block, so each core gets one.
// CORES-LABEL: func.func @matmul_few_rows(
// CORES-SAME: group = 1 : i64
// CORES-NOT: chunks
// 16 rows over 128 columns: all 4 blocks of i fit one group within an L2, so the cores split its 8 blocks of j into 4 runs
// instead (each core reads half of b once, not all of it per group).
// CORES-LABEL: func.func @matmul_wide(
// CORES-SAME: chunks = 4 : i64, group = 4 : i64

// explain=1 prints each kernel's choice, in the order of the chunks below.
// EXPLAIN: pytc-vectorize: matmul: {'lanes': 8, 'vectors': 2, 'rows': 4, 'group': 16, 'upcast': 0, 'pack': 1, 'unroll': 0}
// EXPLAIN-NEXT: pytc-vectorize: matmul_few_rows: {'lanes': 8, 'vectors': 2, 'rows': 4, 'group': 2, 'upcast': 0, 'pack': 1, 'unroll': 0}
// EXPLAIN-NEXT: pytc-vectorize: matmul_wide: {'lanes': 8, 'vectors': 2, 'rows': 4, 'group': 4, 'upcast': 0, 'pack': 1, 'unroll': 0}
// EXPLAIN-NEXT: pytc-vectorize: matmul_narrow_three: {'lanes': 8, 'vectors': 2, 'rows': 4, 'group': 4, 'upcast': 0, 'pack': 1, 'unroll': 0}
// EXPLAIN-NEXT: pytc-vectorize: scaled_rows: {{.*}}'stream': 1}
// EXPLAIN-NEXT: pytc-vectorize: shifted_sum: {'lanes': 8, 'vectors': 1, 'rows': 1, 'group': 1, 'upcast': -1, 'pack': 0, 'unroll': 0}
// EXPLAIN-NEXT: pytc-vectorize: row_sum: {{.*}}'across': 1}
// EXPLAIN-NEXT: pytc-vectorize: narrow_matmul: scalar loops
// EXPLAIN-NEXT: pytc-vectorize: logsumexp: scalar loops
// EXPLAIN-NEXT: pytc-vectorize: logsumexp_rows: {{.*}}'rows': 8, {{.*}}'across': 1}
// EXPLAIN-NEXT: pytc-vectorize: row_sum_rows: {{.*}}'rows': 1, {{.*}}'across': 1}
// EXPLAIN-NEXT: pytc-vectorize: prologue: {{.*}}'unroll': 1}
// EXPLAIN-NEXT: pytc-vectorize: sub_row_max: {{.*}}'stream': 1}
// EXPLAIN-NEXT: pytc-vectorize: softmax: {{.*}}'stream': 1}
// EXPLAIN-NEXT: pytc-vectorize: softmax_matmul: {{.*}}'unroll': 1}
// EXPLAIN-NEXT: pytc-vectorize: cosine: {{.*}}'stream': 1}
// EXPLAIN-NEXT: pytc-vectorize: conv_narrow: {{.*}}'along': 0}
// EXPLAIN-NEXT: pytc-vectorize: conv_wide: {{.*}}'along': 0}
// EXPLAIN-NEXT: pytc-vectorize: conv_wide_few: {{.*}}'upcast': 0, 'pack': 0, 'unroll': 0}
// EXPLAIN-NEXT: pytc-vectorize: conv_deep: {{.*}}'vectors': 1, {{.*}}'along': 0}

// A matmul reads b[k, j] contiguously along its innermost output range j: 4 rows of i (range id 0, which b does not
// depend on: the upcast range) by 2 vectors of 8 lanes of j at once; i's 256 rows make 64 blocks, in groups of 16 sharing
// one b panel, packed once into a contiguous buffer.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: pytc.vector = {group = 16 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}
func.func @matmul(%out: memref<256x16xf32>, %a: memref<256x4xf32>, %b: memref<4x16xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 256 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 4 id 2
  %x = uop.index %a[%i, %k] : memref<256x4xf32>
  %y = uop.index %b[%k, %j] : memref<4x16xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<256x16xf32>
  %e = uop.end %w over(%i, %j) : memref<256x16xf32>
  return
}

// -----

// The same matmul over 8 rows: b's rows are contiguous already and still packed (in place, a panel's rows would lie a
// row of b apart, into a few cache sets at strides of a multiple of 4 KiB).
// CHECK-LABEL: func.func @matmul_few_rows(
// CHECK-SAME: pytc.vector = {group = 2 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}
func.func @matmul_few_rows(%out: memref<8x16xf32>, %a: memref<8x4xf32>, %b: memref<4x16xf32>) attributes {pytc.kernel} {
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

// The same over 16 rows and 128 columns: one core splits no range, so its four blocks of i make one group as before.
// CHECK-LABEL: func.func @matmul_wide(
// CHECK-SAME: pytc.vector = {group = 4 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}
func.func @matmul_wide(%out: memref<16x128xf32>, %a: memref<16x64xf32>, %b: memref<64x128xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 16 id 0
  %j = uop.range loop 128 id 1
  %k = uop.range reduce 64 id 2
  %x = uop.index %a[%i, %k] : memref<16x64xf32>
  %y = uop.index %b[%k, %j] : memref<64x128xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<16x128xf32>
  %e = uop.end %w over(%i, %j) : memref<16x128xf32>
  return
}

// -----

// 24 columns: one block of 2 vectors and a partial one moved back over it by default; with vectors=3, one block of 3.
// CHECK-LABEL: func.func @matmul_narrow_three(
// CHECK-SAME: vectors = 2 : i64
func.func @matmul_narrow_three(%out: memref<16x24xf32>, %a: memref<16x64xf32>, %b: memref<64x24xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 16 id 0
  %j = uop.range loop 24 id 1
  %k = uop.range reduce 64 id 2
  %x = uop.index %a[%i, %k] : memref<16x64xf32>
  %y = uop.index %b[%k, %j] : memref<64x24xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<16x24xf32>
  %e = uop.end %w over(%i, %j) : memref<16x24xf32>
  return
}

// -----

// Rows of 48 scaled: elementwise along the row (stream), 2 vectors of 8 lanes at a time.
// CHECK-LABEL: func.func @scaled_rows(
// CHECK-SAME: stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 2 : i64
func.func @scaled_rows(%out: memref<4x48xf32>, %x: memref<4x48xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 48 id 1
  %v = uop.index %x[%i, %j] : memref<4x48xf32>
  %two = uop.const 2.0 : f32
  %y = uop.mul %v, %two : f32
  %w = uop.store %y, %out[%i, %j] : memref<4x48xf32>
  %e = uop.end %w over(%i, %j) : memref<4x48xf32>
  return
}

// -----

// Shifted windows of a padded row (x[k, j - 1] + x[k, j + 1], zero outside), summed over rows k: the reads along j
// are contiguous, gated by the padding (masks in the vector code); no other output range, so no upcast and no panel.
// CHECK-LABEL: func.func @shifted_sum(
// CHECK-SAME: pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}
func.func @shifted_sum(%out: memref<1x10xf32>, %x: memref<3x10xf32>) attributes {pytc.kernel} {
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

// A row sum reads along its reduce range, not along an output range: its rows stay scalar loops, each sum vector code
// along its row (`across`, 16 a multiple of the lanes); an output range (5) narrower than the lanes, with reductions of
// 3, is not vectorized at all. A logsumexp's sum, whose body holds the row's max (another reduction), stays scalar
// loops too when its rows (4) are fewer than the lanes: LLVM vectorizes those faster. With 32 rows, blocks of 8 rows
// (`rows` = the lanes) compute each reduction row by row, then the log and the add as vectors across the block; a plain
// sum of as many rows gains nothing from blocks (rows 1).
// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME: pytc.vector = {across = 1 : i64, group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}
// CHECK-LABEL: func.func @narrow_matmul(
// CHECK-NOT: pytc.vector
// CHECK-LABEL: func.func @logsumexp(
// CHECK-NOT: pytc.vector
// CHECK: return
// CHECK-LABEL: func.func @logsumexp_rows(
// CHECK-SAME: pytc.vector = {across = 1 : i64, group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 8 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}
// CHECK-LABEL: func.func @row_sum_rows(
// CHECK-SAME: pytc.vector = {across = 1 : i64, group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}
func.func @row_sum(%out: memref<4x1xf32>, %x: memref<4x16xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 16 id 1
  %v = uop.index %x[%i, %k] : memref<4x16xf32>
  %s = uop.range_reduce add %v over(%k) : f32
  %w = uop.store %s, %out[%i, %c0] : memref<4x1xf32>
  %e = uop.end %w over(%i) : memref<4x1xf32>
  return
}
func.func @narrow_matmul(%out: memref<6x5x1xf32>, %a: memref<6x3xf32>, %b: memref<3x5xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 6 id 0
  %j = uop.range loop 5 id 1
  %k = uop.range reduce 3 id 2
  %x = uop.index %a[%i, %k] : memref<6x3xf32>
  %y = uop.index %b[%k, %j] : memref<3x5xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j, %c0] : memref<6x5x1xf32>
  %e = uop.end %w over(%i, %j) : memref<6x5x1xf32>
  return
}

func.func @logsumexp(%out: memref<4x1xf32>, %x: memref<4x16xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %m = uop.range reduce 16 id 1
  %k = uop.range reduce 16 id 2
  %xm = uop.index %x[%i, %m] : memref<4x16xf32>
  %max = uop.range_reduce max %xm over(%m) : f32
  %xk = uop.index %x[%i, %k] : memref<4x16xf32>
  %nm = uop.neg %max : f32
  %d = uop.add %xk, %nm : f32
  %e = uop.exp2 %d : f32
  %s = uop.range_reduce add %e over(%k) : f32
  %l = uop.log2 %s : f32
  %r = uop.add %l, %max : f32
  %w = uop.store %r, %out[%i, %c0] : memref<4x1xf32>
  %end = uop.end %w over(%i) : memref<4x1xf32>
  return
}
func.func @logsumexp_rows(%out: memref<32x1xf32>, %x: memref<32x16xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 32 id 0
  %m = uop.range reduce 16 id 1
  %k = uop.range reduce 16 id 2
  %xm = uop.index %x[%i, %m] : memref<32x16xf32>
  %max = uop.range_reduce max %xm over(%m) : f32
  %xk = uop.index %x[%i, %k] : memref<32x16xf32>
  %nm = uop.neg %max : f32
  %d = uop.add %xk, %nm : f32
  %e = uop.exp2 %d : f32
  %s = uop.range_reduce add %e over(%k) : f32
  %l = uop.log2 %s : f32
  %r = uop.add %l, %max : f32
  %w = uop.store %r, %out[%i, %c0] : memref<32x1xf32>
  %end = uop.end %w over(%i) : memref<32x1xf32>
  return
}
func.func @row_sum_rows(%out: memref<32x1xf32>, %x: memref<32x16xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 32 id 0
  %k = uop.range reduce 16 id 1
  %v = uop.index %x[%i, %k] : memref<32x16xf32>
  %s = uop.range_reduce add %v over(%k) : f32
  %w = uop.store %s, %out[%i, %c0] : memref<32x1xf32>
  %end = uop.end %w over(%i) : memref<32x1xf32>
  return
}

// -----

// Work in the body that does not depend on j (exp2(sin(a[i, k])) times b[k, j]) weighs enough to be computed as
// vectors along k, 8 steps of k at once (k's 8 divides by the lanes): unroll.
// CHECK-LABEL: func.func @prologue(
// CHECK-SAME: unroll = 1 : i64
func.func @prologue(%out: memref<4x16x1xf32>, %a: memref<4x8xf32>, %b: memref<8x16xf32>) attributes {pytc.kernel} {
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

// Elementwise work along j whose reduction varies only with the row (x - the row max): stream mode, 2 vectors of
// 8 lanes along the row of 32.
// CHECK-LABEL: func.func @sub_row_max(
// CHECK-SAME: pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 2 : i64}
func.func @sub_row_max(%out: memref<4x32xf32>, %x: memref<4x32xf32>) attributes {pytc.kernel} {
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

// Softmax in one kernel (exp2(x - max) / sum(exp2(x - max)) along the row): its reductions vary only with the row,
// so stream mode as well.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: stream = 1 : i64
func.func @softmax(%out: memref<4x16xf32>, %x: memref<4x16xf32>) attributes {pytc.kernel} {
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

// Attention's shape: a row softmax (its max and sum vary only with the row i) feeding a matmul along j. The tile
// reduction's body has much work independent of j: unroll along k.
// CHECK-LABEL: func.func @softmax_matmul(
// CHECK-SAME: unroll = 1 : i64
func.func @softmax_matmul(%out: memref<4x16x1xf32>, %a: memref<4x8xf32>, %b: memref<8x16xf32>) attributes {pytc.kernel} {
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

// Elementwise cos along a row of 8: stream mode, one vector.
// CHECK-LABEL: func.func @cosine(
// CHECK-SAME: pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}
func.func @cosine(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel} {
  %j = uop.range loop 8 id 0
  %v = uop.index %x[%j] : memref<8xf32>
  %c = uop.cos %v : f32
  %w = uop.store %c, %out[%j] : memref<8xf32>
  %e = uop.end %w over(%j) : memref<8xf32>
  return
}

// -----

// A 3x3 convolution with padding whose 5x5 outputs are narrower than the lanes: vectorized along its output channels
// (range id 0, `along`) instead, whose weights, packed once per block of channels, serve every pixel; rows of its
// pixels' columns (range id 2) reuse each read of the input.
// CHECK-LABEL: func.func @conv_narrow(
// CHECK-SAME: pytc.vector = {along = 0 : i64, group = 1 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 2 : i64, vectors = 2 : i64}
func.func @conv_narrow(%out: memref<16x5x5xf32>, %x: memref<4x5x5xf32>, %w: memref<16x4x3x3xf32>) attributes {pytc.kernel} {
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

// With 16x16 outputs the innermost range is wide enough, but the input windows read along it also vary with the
// output rows (a panel of them would be packed again for each row), while the weights along the output channels vary
// with nothing else: 32 channels (two tiles of 2 vectors of 8 lanes) are the lanes again. 16 channels would leave the
// tile too few accumulators: the innermost range takes the vectors, rows of output channels (upcast 0), the windows
// read in place (pack = 0).
// CHECK-LABEL: func.func @conv_wide(
// CHECK-SAME: along = 0 : i64
// CHECK-LABEL: func.func @conv_wide_few(
// CHECK-SAME: pytc.vector = {group = {{[0-9]+}} : i64, lanes = 8 : i64, pack = 0 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}
func.func @conv_wide(%out: memref<32x16x16xf32>, %x: memref<4x16x16xf32>, %w: memref<32x4x3x3xf32>) attributes {pytc.kernel} {
  %zero = uop.const 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %minus1 = arith.constant -1 : index
  %last = arith.constant 15 : index
  %o = uop.range loop 32 id 0
  %y = uop.range loop 16 id 1
  %x_ = uop.range loop 16 id 2
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
  %v = uop.index %x[%c, %row, %col] if %in : memref<4x16x16xf32>
  %v0 = uop.where %in, %v, %zero : f32
  %k = uop.index %w[%o, %c, %ky, %kx] : memref<32x4x3x3xf32>
  %p = uop.mul %v0, %k : f32
  %s = uop.range_reduce add %p over(%c, %ky, %kx) : f32
  %st = uop.store %s, %out[%o, %y, %x_] : memref<32x16x16xf32>
  %e = uop.end %st over(%o, %y, %x_) : memref<32x16x16xf32>
  return
}
func.func @conv_wide_few(%out: memref<16x16x16xf32>, %x: memref<4x16x16xf32>, %w: memref<16x4x3x3xf32>) attributes {pytc.kernel} {
  %zero = uop.const 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %minus1 = arith.constant -1 : index
  %last = arith.constant 15 : index
  %o = uop.range loop 16 id 0
  %y = uop.range loop 16 id 1
  %x_ = uop.range loop 16 id 2
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
  %v = uop.index %x[%c, %row, %col] if %in : memref<4x16x16xf32>
  %v0 = uop.where %in, %v, %zero : f32
  %k = uop.index %w[%o, %c, %ky, %kx] : memref<16x4x3x3xf32>
  %p = uop.mul %v0, %k : f32
  %s = uop.range_reduce add %p over(%c, %ky, %kx) : f32
  %st = uop.store %s, %out[%o, %y, %x_] : memref<16x16x16xf32>
  %e = uop.end %st over(%o, %y, %x_) : memref<16x16x16xf32>
  return
}

// -----

// With 1024 input channels, a panel of 2 vectors of channels (1024 x 3 x 3 x 16 floats, 590 KB) would pass ALONG_PANEL_BYTES
// (half an L2, leaving the rest to the input windows read alongside): one vector.
// CHECK-LABEL: func.func @conv_deep(
// CHECK-SAME: along = 0 : i64, group = 1 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 2 : i64, vectors = 1 : i64
func.func @conv_deep(%out: memref<16x5x5xf32>, %x: memref<1024x5x5xf32>, %w: memref<16x1024x3x3xf32>) attributes {pytc.kernel} {
  %zero = uop.const 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %minus1 = arith.constant -1 : index
  %last = arith.constant 4 : index
  %o = uop.range loop 16 id 0
  %y = uop.range loop 5 id 1
  %x_ = uop.range loop 5 id 2
  %c = uop.range reduce 1024 id 3
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
  %v = uop.index %x[%c, %row, %col] if %in : memref<1024x5x5xf32>
  %v0 = uop.where %in, %v, %zero : f32
  %k = uop.index %w[%o, %c, %ky, %kx] : memref<16x1024x3x3xf32>
  %p = uop.mul %v0, %k : f32
  %s = uop.range_reduce add %p over(%c, %ky, %kx) : f32
  %st = uop.store %s, %out[%o, %y, %x_] : memref<16x5x5xf32>
  %e = uop.end %st over(%o, %y, %x_) : memref<16x5x5xf32>
  return
}

// -----

// A kernel's pytc.tune replaces the options for it: the matmul with 2 rows of 1 vector, read in place (no panel); with
// vectorize = 0, scalar loops (no pytc.vector).
// CHECK-LABEL: func.func @tuned_matmul(
// CHECK-SAME: pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 2 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 1 : i64}
// CHECK-LABEL: func.func @scalar_matmul(
// CHECK-NOT: pytc.vector
// CHECK-SAME: pytc.tune = {vectorize = 0 : i64}
// CHECK-NOT: pytc.vector
func.func @tuned_matmul(%out: memref<8x16xf32>, %a: memref<8x4xf32>, %b: memref<4x16xf32>) attributes {pytc.kernel, pytc.tune = {rows = 2 : i64, vectors = 1 : i64, group = 1 : i64, pack = 0 : i64}} {
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
func.func @scalar_matmul(%out: memref<8x16xf32>, %a: memref<8x4xf32>, %b: memref<4x16xf32>) attributes {pytc.kernel, pytc.tune = {vectorize = 0 : i64}} {
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

// a.T @ b: a[k, i] steps across a's rows as k moves, so besides b's panel each group of row blocks copies its rows of
// a into a panel (group x k x rows) that the tiles read in order. That panel stays within 1 MiB: 16384 steps of 4 rows
// take 256 KiB per block, so a group holds 4 blocks (16 without it).
// CHECK-LABEL: func.func @matmul_rows_across(
// CHECK-SAME: pytc.vector = {group = 4 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}
func.func @matmul_rows_across(%out: memref<256x16xf32>, %a: memref<16384x256xf32>, %b: memref<16384x16xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 256 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 16384 id 2
  %x = uop.index %a[%k, %i] : memref<16384x256xf32>
  %y = uop.index %b[%k, %j] : memref<16384x16xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<256x16xf32>
  %e = uop.end %w over(%i, %j) : memref<256x16xf32>
  return
}

// -----

// 500 rows are 125 blocks of 4, in groups of up to 16: 8 groups, the last holding 13 blocks, where the largest size dividing
// 125 would make 25 groups of 5, packing b's panel 25 times. Two cores get 64 and 61 blocks.
// CHECK-LABEL: func.func @matmul_uneven_blocks(
// CHECK-SAME: group = 16 : i64
// CORES-LABEL: func.func @matmul_uneven_blocks(
// CORES-SAME: group = 16 : i64
func.func @matmul_uneven_blocks(%out: memref<500x16xf32>, %a: memref<500x4xf32>, %b: memref<4x16xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 500 id 0
  %j = uop.range loop 16 id 1
  %k = uop.range reduce 4 id 2
  %x = uop.index %a[%i, %k] : memref<500x4xf32>
  %y = uop.index %b[%k, %j] : memref<4x16xf32>
  %p = uop.mul %x, %y : f32
  %s = uop.range_reduce add %p over(%k) : f32
  %w = uop.store %s, %out[%i, %j] : memref<500x16xf32>
  %e = uop.end %w over(%i, %j) : memref<500x16xf32>
  return
}

// -----

// A transpose made contiguous (out[i, j] = x[j, i] + y[i, j]): the read of x crosses rows along j, and indexes i last:
// stream mode with `transpose` = i's id, in tiles of 8 x 8. A transposed read of i narrower than the lanes, or a read
// crossing rows along two ranges, keeps scalar loops.
// CHECK-LABEL: func.func @transpose_add(
// CHECK-SAME: pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, transpose = 0 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}
// CHECK-LABEL: func.func @transpose_narrow(
// CHECK-NOT: pytc.vector
// CHECK-LABEL: func.func @two_crossings(
// CHECK-NOT: pytc.vector
// CHECK: return
func.func @transpose_add(%out: memref<24x40xf32>, %x: memref<40x24xf32>, %y: memref<24x40xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 24 id 0
  %j = uop.range loop 40 id 1
  %a = uop.index %x[%j, %i] : memref<40x24xf32>
  %b = uop.index %y[%i, %j] : memref<24x40xf32>
  %s = uop.add %a, %b : f32
  %w = uop.store %s, %out[%i, %j] : memref<24x40xf32>
  %e = uop.end %w over(%i, %j) : memref<24x40xf32>
  return
}
func.func @transpose_narrow(%out: memref<4x40xf32>, %x: memref<40x4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 40 id 1
  %a = uop.index %x[%j, %i] : memref<40x4xf32>
  %w = uop.store %a, %out[%i, %j] : memref<4x40xf32>
  %e = uop.end %w over(%i, %j) : memref<4x40xf32>
  return
}
func.func @two_crossings(%out: memref<8x8x16xf32>, %x: memref<16x8x8xf32>, %y: memref<16x8x8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %h = uop.range loop 8 id 1
  %j = uop.range loop 16 id 2
  %a = uop.index %x[%j, %h, %i] : memref<16x8x8xf32>
  %b = uop.index %y[%j, %i, %h] : memref<16x8x8xf32>
  %s = uop.add %a, %b : f32
  %w = uop.store %s, %out[%i, %h, %j] : memref<8x8x16xf32>
  %e = uop.end %w over(%i, %h, %j) : memref<8x8x16xf32>
  return
}

// -----

// The mask of a 2x2 max pool's gradient (is x the max of its window?) over 64 channels: its innermost output ranges are 2 wide, but
// the reads along the channels vary with every other output range too, so a panel packed once per block of channels (before the
// loops over those ranges) would hold the wrong windows, and read in place they are not contiguous along the channels: no `along`.
// CHECK-LABEL: func.func @pool_mask(
// CHECK-NOT: along
// CHECK: return
func.func @pool_mask(%arg0: memref<64x5x14x2x2xf32>, %arg1: memref<64x11x28xf32>) attributes {pytc.kernel} {
  %c2 = arith.constant 2 : index
  %0 = uop.range loop 64 id 2
  %1 = uop.range loop 5 id 4
  %2 = arith.muli %1, %c2 : index
  %3 = uop.range loop 2 id 6
  %4 = arith.addi %2, %3 : index
  %5 = uop.range loop 14 id 5
  %6 = arith.muli %5, %c2 : index
  %7 = uop.range loop 2 id 7
  %8 = arith.addi %6, %7 : index
  %9 = uop.index %arg1[%0, %4, %8] : memref<64x11x28xf32>
  %10 = uop.range reduce 2 id 0
  %11 = arith.addi %2, %10 : index
  %12 = uop.range reduce 2 id 1
  %13 = arith.addi %6, %12 : index
  %14 = uop.index %arg1[%0, %11, %13] : memref<64x11x28xf32>
  %15 = uop.range_reduce max %14 over(%10, %12) : f32
  %16 = uop.cmpeq %9, %15 : f32
  %17 = uop.cast %16 : i1 to f32
  %18 = uop.store %17, %arg0[%0, %1, %5, %3, %7] : memref<64x5x14x2x2xf32>
  %19 = uop.end %18 over(%0, %1, %5, %3, %7) : memref<64x5x14x2x2xf32>
  return
}

// -----

// A panel of 8192 reduce steps x 3 vectors of 16 lanes (1.5 MiB) does not fit PACK_BYTES: the tile takes 2 vectors and packs
// its 1 MiB panel rather than read b in place.
// LONG-LABEL: func.func @matmul_long_panel(
// LONG-SAME: lanes = 16 : i64, pack = 1 : i64, rows = 8 : i64
// LONG-SAME: vectors = 2 : i64
func.func @matmul_long_panel(%arg0: memref<512x768xf32>, %arg1: memref<512x8192xf32>, %arg2: memref<8192x768xf32>) attributes {pytc.kernel} {
  %0 = uop.range loop 512 id 0
  %1 = uop.range reduce 8192 id 3
  %2 = uop.index %arg1[%0, %1] : memref<512x8192xf32>
  %3 = uop.range loop 768 id 2
  %4 = uop.index %arg2[%1, %3] : memref<8192x768xf32>
  %5 = uop.mul %2, %4 : f32
  %6 = uop.range_reduce add %5 over(%1) : f32
  %7 = uop.store %6, %arg0[%0, %3] : memref<512x768xf32>
  %8 = uop.end %7 over(%0, %3) : memref<512x768xf32>
  return
}

// -----

// A strided gradient's phases interleaved (out[i, p, j, q] = t[i, j] where p = q = 0, else 0): the innermost range q is 2
// wide, too short for vectors, and stored right after j: `interleave` along j (id 2), one vector per phase. Five phases are
// too many, and a read across rows along j keeps scalar loops.
// CHECK-LABEL: func.func @spread_phases(
// CHECK-SAME: pytc.vector = {along = 2 : i64, group = 1 : i64, interleave = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}
// CHECK-LABEL: func.func @five_phases(
// CHECK-NOT: pytc.vector
// CHECK-LABEL: func.func @phases_across_rows(
// CHECK-NOT: pytc.vector
// CHECK: return
func.func @spread_phases(%out: memref<4x2x8x2xf32>, %t: memref<4x8xf32>) attributes {pytc.kernel} {
  %zero = uop.const 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %p = uop.range loop 2 id 1
  %j = uop.range loop 8 id 2
  %q = uop.range loop 2 id 3
  %pq = arith.addi %p, %q : index
  %first = arith.cmpi sle, %pq, %c0 : index
  %x = uop.index %t[%i, %j] : memref<4x8xf32>
  %v = uop.where %first, %x, %zero : f32
  %w = uop.store %v, %out[%i, %p, %j, %q] : memref<4x2x8x2xf32>
  %e = uop.end %w over(%i, %p, %j, %q) : memref<4x2x8x2xf32>
  return
}
func.func @five_phases(%out: memref<8x5xf32>, %t: memref<8xf32>) attributes {pytc.kernel} {
  %j = uop.range loop 8 id 0
  %q = uop.range loop 5 id 1
  %x = uop.index %t[%j] : memref<8xf32>
  %w = uop.store %x, %out[%j, %q] : memref<8x5xf32>
  %e = uop.end %w over(%j, %q) : memref<8x5xf32>
  return
}
func.func @phases_across_rows(%out: memref<4x8x2xf32>, %t: memref<8x4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 8 id 1
  %q = uop.range loop 2 id 2
  %x = uop.index %t[%j, %i] : memref<8x4xf32>
  %w = uop.store %x, %out[%i, %j, %q] : memref<4x8x2xf32>
  %e = uop.end %w over(%i, %j, %q) : memref<4x8x2xf32>
  return
}
