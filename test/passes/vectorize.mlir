// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-vectorize)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-vectorize,pytc-lower-kernels,canonicalize,cse)' | FileCheck %s --check-prefix=LOWER
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-vectorize{explain=1})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// explain=1 prints each kernel's choice, in the order of the chunks below.
// EXPLAIN: pytc-vectorize: r_8_16_4: {'lanes': 8, 'vectors': 2, 'rows': 4, 'group': 2, 'upcast': 0, 'pack': 1, 'unroll': 0}
// EXPLAIN-NEXT: pytc-vectorize: r_10_3: {'lanes': 8, 'vectors': 1, 'rows': 1, 'group': 1, 'upcast': -1, 'pack': 0, 'unroll': 0}
// EXPLAIN-NEXT: pytc-vectorize: r_4_16: scalar loops
// EXPLAIN-NEXT: pytc-vectorize: r_6_5_3: scalar loops
// EXPLAIN-NEXT: pytc-vectorize: r_4_16_8: {{.*}}'unroll': 1}
// EXPLAIN-NEXT: pytc-vectorize: r_4_32_32: {{.*}}'stream': 1}
// EXPLAIN-NEXT: pytc-vectorize: r_4_16_16_16: {{.*}}'stream': 1}
// EXPLAIN-NEXT: pytc-vectorize: r_4_16_8_8_8: {{.*}}'unroll': 1}

// A matmul reads b[k, j] contiguously along its innermost output range j: 4 rows of i (which b does not
// depend on) by 2 vectors of 8 lanes of j are computed at once, the 8 accumulators loop-carried through k.
// The b panel shared by the group of row blocks is packed once into a contiguous buffer.
// CHECK-LABEL: func.func @r_8_16_4(
// CHECK-SAME: pytc.vector = {group = 2 : i64, lanes = 8 : i64, pack = 1 : i64, rows = 4 : i64, unroll = 0 : i64, upcast = 0 : i64, vectors = 2 : i64}
// LOWER-LABEL: func.func @r_8_16_4(
// LOWER-SAME: %[[OUT:[a-z0-9]+]]: memref<8x16xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<8x4xf32> {llvm.noalias}, %[[B:[a-z0-9]+]]: memref<4x16xf32>
// LOWER-SAME: pytc.extent = 1 : i64
// LOWER: %[[PANEL:.*]] = memref.alloca() : memref<4x16xf32>
// LOWER: scf.parallel
// LOWER: scf.for %[[KP:.*]] = %{{.*}} to %{{.*}} step
// LOWER-NEXT: %[[V:.*]] = vector.load %[[B]][%[[KP]], %{{.*}}] : memref<4x16xf32>, vector<8xf32>
// LOWER-NEXT: vector.store %[[V]], %[[PANEL]][%[[KP]], %{{.*}}]
// LOWER: scf.for %[[BLOCK:.*]] = %{{.*}} to %{{.*}} step
// LOWER: %[[ACCS:.*]]:8 = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// LOWER: %[[AK:.*]] = memref.load %[[A]][%{{.*}}, %[[K]]]
// LOWER-NEXT: %[[ABC:.*]] = vector.broadcast %[[AK]] : f32 to vector<8xf32>
// LOWER-NEXT: %[[BK:.*]] = vector.load %[[PANEL]][%[[K]], %{{.*}}]
// LOWER-NEXT: math.fma %[[ABC]], %[[BK]], %{{.*}} : vector<8xf32>
// LOWER-COUNT-7: math.fma
// LOWER: scf.yield
// LOWER-COUNT-8: vector.store %[[ACCS]]#{{[0-7]}}, %[[OUT]]
func.func @matmul(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>) {
  %x = uop.reshape %a : tensor<8x4xf32> -> tensor<8x1x4xf32>
  %xe = uop.expand %x : tensor<8x1x4xf32> -> tensor<8x16x4xf32>
  %bt = uop.permute %b [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  %y = uop.reshape %bt : tensor<16x4xf32> -> tensor<1x16x4xf32>
  %ye = uop.expand %y : tensor<1x16x4xf32> -> tensor<8x16x4xf32>
  %m = uop.mul %xe, %ye : tensor<8x16x4xf32>
  %s = uop.reduce add %m [2] : tensor<8x16x4xf32> -> tensor<8x16x1xf32>
  %r = uop.reshape %s : tensor<8x16x1xf32> -> tensor<8x16xf32>
  uop.sink %r : tensor<8x16xf32>
  return
}

// -----

// Shifted windows of a padded row, summed over rows: reads along j are gated by the padding, so they become
// masked vector loads. 10 outputs are two blocks of 8, the second moved back to end at 10 (overlapping).
// CHECK-LABEL: func.func @r_10_3(
// CHECK-SAME: pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 1 : i64}
// LOWER-LABEL: func.func @r_10_3(
// LOWER-SAME: pytc.extent = 2 : i64
// LOWER: scf.parallel (%[[J:.*]]) =
// LOWER: %[[START:.*]] = arith.muli %[[J]], %{{.*}} : index
// LOWER-NEXT: %[[CLAMPED:.*]] = arith.minsi %[[START]], %{{.*}} : index
// LOWER: scf.for {{.*}} -> (vector<8xf32>)
// LOWER-COUNT-2: vector.maskedload
// LOWER: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %[[CLAMPED]]] : memref<1x10xf32>, vector<8xf32>
func.func @shifted_sum(%a: tensor<3x10xf32>) {
  %p = uop.pad %a low [0, 1] high [0, 1] : tensor<3x10xf32> -> tensor<3x12xf32>
  %w0 = uop.shrink %p [0, 0] to [3, 10] : tensor<3x12xf32> -> tensor<3x10xf32>
  %w1 = uop.shrink %p [0, 2] to [3, 12] : tensor<3x12xf32> -> tensor<3x10xf32>
  %w = uop.add %w0, %w1 : tensor<3x10xf32>
  %s = uop.reduce add %w [0] : tensor<3x10xf32> -> tensor<1x10xf32>
  uop.sink %s : tensor<1x10xf32>
  return
}

// -----

// A row sum reads along its reduce range, not along an output range; an output range narrower than the
// lanes is not vectorized either.
// CHECK-LABEL: func.func @r_4_16(
// CHECK-NOT: pytc.vector
// CHECK-LABEL: func.func @r_6_5_3(
// CHECK-NOT: pytc.vector
// CHECK-LABEL: func.func @not_vectorized(
func.func @not_vectorized(%a: tensor<4x16xf32>, %b: tensor<6x3xf32>, %c: tensor<3x5xf32>) {
  %s = uop.reduce add %a [1] : tensor<4x16xf32> -> tensor<4x1xf32>
  %x = uop.reshape %b : tensor<6x3xf32> -> tensor<6x1x3xf32>
  %xe = uop.expand %x : tensor<6x1x3xf32> -> tensor<6x5x3xf32>
  %ct = uop.permute %c [1, 0] : tensor<3x5xf32> -> tensor<5x3xf32>
  %y = uop.reshape %ct : tensor<5x3xf32> -> tensor<1x5x3xf32>
  %ye = uop.expand %y : tensor<1x5x3xf32> -> tensor<6x5x3xf32>
  %m = uop.mul %xe, %ye : tensor<6x5x3xf32>
  %r = uop.reduce add %m [2] : tensor<6x5x3xf32> -> tensor<6x5x1xf32>
  uop.sink %s, %r : tensor<4x1xf32>, tensor<6x5x1xf32>
  return
}

// -----

// Work in the body that does not depend on j (exp2(sin(a[i, k])), fused into the matmul) is computed once
// per row as vectors along k, 8 steps of k at once; each step takes its lane.
// CHECK-LABEL: func.func @r_4_16_8(
// CHECK-SAME: unroll = 1 : i64
// LOWER-LABEL: func.func @r_4_16_8(
// LOWER-SAME: %{{[a-z0-9]+}}: memref<4x16x1xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<4x8xf32>
// LOWER: %[[AK:.*]] = vector.load %[[A]][%{{.*}}, %{{.*}}] : memref<4x8xf32>, vector<8xf32>
// LOWER: arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi32>
// LOWER: %[[LANE:.*]] = vector.extract %{{.*}}[0] : f32 from vector<8xf32>
// LOWER-NEXT: %[[SPLAT:.*]] = vector.broadcast %[[LANE]] : f32 to vector<8xf32>
// LOWER: math.fma %[[SPLAT]]
func.func @prologue(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  %s = uop.sin %a : tensor<4x8xf32>
  %e = uop.exp2 %s : tensor<4x8xf32>
  %x = uop.reshape %e : tensor<4x8xf32> -> tensor<4x1x8xf32>
  %xe = uop.expand %x : tensor<4x1x8xf32> -> tensor<4x16x8xf32>
  %bt = uop.permute %b [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %y = uop.reshape %bt : tensor<16x8xf32> -> tensor<1x16x8xf32>
  %ye = uop.expand %y : tensor<1x16x8xf32> -> tensor<4x16x8xf32>
  %m = uop.mul %xe, %ye : tensor<4x16x8xf32>
  %r = uop.reduce add %m [2] : tensor<4x16x8xf32> -> tensor<4x16x1xf32>
  uop.sink %r : tensor<4x16x1xf32>
  return
}

// -----

// Elementwise work along j whose reduction varies only with the row (a fused row max): stream mode.
// The max runs as scalar loops once per row, before the loop over blocks of j; loads and stores are
// vectors, the stores aligned to the vector (the row is a multiple of the lanes).
// CHECK-LABEL: func.func @r_4_32_32(
// CHECK-SAME: pytc.vector = {group = 1 : i64, lanes = 8 : i64, pack = 0 : i64, rows = 1 : i64, stream = 1 : i64, unroll = 0 : i64, upcast = -1 : i64, vectors = 2 : i64}
// LOWER-LABEL: func.func @r_4_32_32(
// LOWER-SAME: %[[OUT:[a-z0-9]+]]: memref<4x32xf32> {llvm.noalias}, %[[IN:[a-z0-9]+]]: memref<4x32xf32>
// LOWER: scf.parallel (%[[I:[a-z0-9]+]]) =
// LOWER-NEXT: %[[MAX:.*]]:2 = scf.for
// LOWER: %[[ROWMAX:.*]] = arith.select %[[MAX]]#1
// LOWER-NEXT: scf.for %[[B:[a-z0-9]+]] =
// LOWER: %[[X:.*]] = vector.load %[[IN]][%[[I]], %{{.*}}] : memref<4x32xf32>, vector<8xf32>
// LOWER: vector.store %{{.*}}, %[[OUT]][%[[I]], %{{.*}}] {alignment = 32 : i64} : memref<4x32xf32>, vector<8xf32>
func.func @sub_row_max(%a: tensor<4x32xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x32xf32> -> tensor<4x1xf32>
  %e = uop.expand %m : tensor<4x1xf32> -> tensor<4x32xf32>
  %n = uop.neg %e : tensor<4x32xf32>
  %s = uop.add %a, %n : tensor<4x32xf32>
  uop.sink %s : tensor<4x32xf32>
  return
}

// -----

// Softmax in one kernel: the sum's body is the output's numerator along the row, so the sum runs as vector
// code that keeps each exponential in a row buffer, and the loop along the row reads them back instead of
// computing them again.
// LOWER-LABEL: func.func @r_4_16_16_16(
// LOWER: %[[ROW:.*]] = memref.alloca() : memref<16xf32>
// LOWER: scf.for %[[K:[a-z0-9]+]] = {{.*}} iter_args({{.*}}) -> (vector<8xf32>)
// LOWER: math.floor
// LOWER: vector.store %[[E:.*]], %[[ROW]][%[[K]]] : memref<16xf32>, vector<8xf32>
// LOWER: %[[SUM:.*]] = vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<8xf32> into f32
// LOWER-NOT: math.floor
// LOWER: vector.load %[[ROW]][%{{.*}}] : memref<16xf32>, vector<8xf32>
// LOWER-NOT: math.floor
// LOWER: return
func.func @softmax(%a: tensor<4x16xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x16xf32> -> tensor<4x1xf32>
  %me = uop.expand %m : tensor<4x1xf32> -> tensor<4x16xf32>
  %n = uop.neg %me : tensor<4x16xf32>
  %d = uop.add %a, %n : tensor<4x16xf32>
  %e = uop.exp2 %d : tensor<4x16xf32>
  %s = uop.reduce add %e [1] : tensor<4x16xf32> -> tensor<4x1xf32>
  %se = uop.expand %s : tensor<4x1xf32> -> tensor<4x16xf32>
  %r = uop.recip %se : tensor<4x16xf32>
  %o = uop.mul %e, %r : tensor<4x16xf32>
  uop.sink %o : tensor<4x16xf32>
  return
}

// -----

// Attention's shape: a row softmax feeding a matmul. pytc-fuse moves the row max and sum into the matmul
// kernel; the register-blocked kernel computes them once per tile row (scalar loops), before the loop that
// accumulates the 4 x 2 output vectors.
// CHECK-LABEL: func.func @r_4_16_8_8_8(
// CHECK-SAME: unroll = 1 : i64
// LOWER-LABEL: func.func @r_4_16_8_8_8(
// LOWER-COUNT-4: scf.for {{.*}} -> (f32, i1)
// LOWER: math.fma {{.*}} : vector<8xf32>
// LOWER-NOT: -> (f32, i1)
// LOWER: return
func.func @softmax_matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %me = uop.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %n = uop.neg %me : tensor<4x8xf32>
  %d = uop.add %a, %n : tensor<4x8xf32>
  %e = uop.exp2 %d : tensor<4x8xf32>
  %s = uop.reduce add %e [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %se = uop.expand %s : tensor<4x1xf32> -> tensor<4x8xf32>
  %r = uop.recip %se : tensor<4x8xf32>
  %p = uop.mul %e, %r : tensor<4x8xf32>
  %x = uop.reshape %p : tensor<4x8xf32> -> tensor<4x1x8xf32>
  %xe = uop.expand %x : tensor<4x1x8xf32> -> tensor<4x16x8xf32>
  %bt = uop.permute %b [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %y = uop.reshape %bt : tensor<16x8xf32> -> tensor<1x16x8xf32>
  %ye = uop.expand %y : tensor<1x16x8xf32> -> tensor<4x16x8xf32>
  %mm = uop.mul %xe, %ye : tensor<4x16x8xf32>
  %o = uop.reduce add %mm [2] : tensor<4x16x8xf32> -> tensor<4x16x1xf32>
  uop.sink %o : tensor<4x16x1xf32>
  return
}
