// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-fuse,canonicalize,cse)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-fuse{max_buffers=1},canonicalize,cse)' | FileCheck %s --check-prefix=LIMIT
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-fuse{max_ops=5},canonicalize,cse)' | FileCheck %s --check-prefix=OPS
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-fuse{explain=1})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-fuse{max_ops=16 max_buffers=4},canonicalize,cse)' | FileCheck %s --check-prefix=SPLIT
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-fuse{max_ops=16 max_buffers=4 explain=1})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLIT-EXPLAIN
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-fuse{block_columns=256},canonicalize,cse)' | FileCheck %s --check-prefix=WIDE-BLOCK
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-fuse{block_columns=8},canonicalize,cse)' | FileCheck %s --check-prefix=NARROW-BLOCK
// Input: rangeified graphs (pytc-rangeify's output, canonicalized): every materialization is a uop.bufferize with
// its reason, and pytc-fuse decides which multi-use and reduce-expand ones stay. Each case names the tensor-level
// graph it was rangeified from. canonicalize and cse after pytc-fuse only drop the ranges an inlined buffer leaves dead.

// The decisions printed with explain=1, in the order of the chunks below; within a graph the
// candidate saving the most bytes (the larger buffer) is decided first.
// EXPLAIN: pytc-fuse: inline tensor<4xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: keep tensor<4x1xf32> (2 readers): recomputing would repeat a reduction
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4x1xf32> (1 readers)
// EXPLAIN-NEXT: pytc-fuse: keep tensor<4xf32> (2 readers): recompute (weight 13 x 1 extra readers) costs more than memory (1 write + 2 reads)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4xf32> (3 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<8xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<6xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4x1xf32> (1 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4x8xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4x1xf32> (1 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4x1xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: keep tensor<1x8xf32> (1 readers): read at ranges that are not the consumer's outer ones
// EXPLAIN-NEXT: pytc-fuse: keep tensor<4xf32> (0 readers): read as a whole (by the sink or a launch)
// EXPLAIN-NOT: pytc-fuse

// e = a + b; e * flip(e): %e, multi-use, is read at j and at 3 - j.
// A cheap multi-use value is inlined: its buffer disappears and both readers recompute it,
// one at j and one at the flipped index 3-j.
// CHECK-LABEL: func.func @cheap
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4xf32>, %[[B:[a-z0-9]+]]: tensor<4xf32>)
// CHECK-NOT: multi-use
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK-DAG: %[[A0:.*]] = uop.index %[[A]][%[[I]]] : tensor<4xf32>
// CHECK-DAG: %[[B0:.*]] = uop.index %[[B]][%[[I]]] : tensor<4xf32>
// CHECK: %[[X:.*]] = uop.add %[[A0]], %[[B0]] : f32
// CHECK: %[[F:.*]] = arith.subi %{{.*}}, %[[I]] : index
// CHECK-DAG: %[[A1:.*]] = uop.index %[[A]][%[[F]]] : tensor<4xf32>
// CHECK-DAG: %[[B1:.*]] = uop.index %[[B]][%[[F]]] : tensor<4xf32>
// CHECK: %[[Y:.*]] = uop.add %[[A1]], %[[B1]] : f32
// CHECK: %[[M:.*]] = uop.mul %[[X]], %[[Y]] : f32
// CHECK: %[[O:.*]] = uop.bufferize %[[M]] over(%[[I]]) {reason = "output"}
// CHECK-NEXT: uop.sink %[[O]]
// With max_buffers=1 the reading kernel would read both inputs: the buffer stays.
// LIMIT-LABEL: func.func @cheap
// LIMIT: %[[E:.*]] = uop.bufferize %{{.*}} {fuse = "kept: a reading kernel would read 2 buffers (limit 1)", reason = "multi-use"} : f32 -> tensor<4xf32>
// LIMIT: uop.index %[[E]]
// LIMIT: uop.index %[[E]]
// LIMIT: uop.bufferize %{{.*}} {reason = "output"}
// With max_ops=5 the reading kernel would grow too large: the buffer stays.
// OPS-LABEL: func.func @cheap
// OPS: uop.bufferize %{{.*}} {fuse = "kept: a reading kernel would exceed 5 ops", reason = "multi-use"} : f32 -> tensor<4xf32>
func.func @cheap(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  %c3 = arith.constant 3 : index
  %i = uop.range loop 4 id 0
  %ai = uop.index %a[%i] : tensor<4xf32>
  %bi = uop.index %b[%i] : tensor<4xf32>
  %sum = uop.add %ai, %bi : f32
  %e = uop.bufferize %sum over(%i) {reason = "multi-use"} : f32 -> tensor<4xf32>
  %j = uop.range loop 4 id 1
  %ej = uop.index %e[%j] : tensor<4xf32>
  %flip = arith.subi %c3, %j : index
  %ef = uop.index %e[%flip] : tensor<4xf32>
  %m = uop.mul %ej, %ef : f32
  %out = uop.bufferize %m over(%j) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %out : tensor<4xf32>
  return
}

// -----

// r = sum(a, 1); -r + exp2(flip(r)): the row sums %r are read at row j and at row 3 - j.
// A multi-use value containing a range_reduce, read at two positions (a row and its flip), is kept, with the reason
// recorded: inlining would compute every row's sum twice.
// CHECK-LABEL: func.func @reduction
// CHECK: %[[R:.*]] = uop.range_reduce add
// CHECK: %[[B:.*]] = uop.bufferize %[[R]] over(%{{.*}}, %{{.*}}) {fuse = "kept: recomputing would repeat a reduction", reason = "multi-use"} : f32 -> tensor<4x1xf32>
// CHECK-COUNT-2: uop.index %[[B]][
// CHECK: uop.bufferize %{{.*}} {reason = "output"}
// CHECK-NOT: uop.range_reduce
func.func @reduction(%a: tensor<4x8xf32>) {
  %c3 = arith.constant 3 : index
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %x = uop.index %a[%i, %k] : tensor<4x8xf32>
  %sum = uop.range_reduce add %x over(%k) : f32
  %r = uop.bufferize %sum over(%i, %c0) {reason = "multi-use"} : f32 -> tensor<4x1xf32>
  %j = uop.range loop 4 id 2
  %rj = uop.index %r[%j, %c0] : tensor<4x1xf32>
  %n = uop.neg %rj : f32
  %flip = arith.subi %c3, %j : index
  %rf = uop.index %r[%flip, %c0] : tensor<4x1xf32>
  %m = uop.exp2 %rf : f32
  %s = uop.add %n, %m : f32
  %out = uop.bufferize %s over(%j, %c0) {reason = "output"} : f32 -> tensor<4x1xf32>
  uop.sink %out : tensor<4x1xf32>
  return
}

// -----

// r = sum(a, 1); -r + exp2(r): the row sums %r, marked multi-use by pytc-rangeify, are read once (%rj, the two reads
// merged by cse) by two ops.
// Used twice at its own position (one reader), a reduction is inlined: each row's sum is
// still computed once, in the kernel of its consumers (as a matmul's result feeds relu's compare and select).
// CHECK-LABEL: func.func @reduction_read_once
// CHECK-NOT: multi-use
// CHECK: %[[R:.*]] = uop.range_reduce add
// CHECK-DAG: uop.neg %[[R]] : f32
// CHECK-DAG: uop.exp2 %[[R]] : f32
// CHECK: uop.bufferize %{{.*}} {reason = "output"}
func.func @reduction_read_once(%a: tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %x = uop.index %a[%i, %k] : tensor<4x8xf32>
  %sum = uop.range_reduce add %x over(%k) : f32
  %r = uop.bufferize %sum over(%i, %c0) {reason = "multi-use"} : f32 -> tensor<4x1xf32>
  %j = uop.range loop 4 id 2
  %rj = uop.index %r[%j, %c0] : tensor<4x1xf32>
  %n = uop.neg %rj : f32
  %m = uop.exp2 %rj : f32
  %s = uop.add %n, %m : f32
  %out = uop.bufferize %s over(%j, %c0) {reason = "output"} : f32 -> tensor<4x1xf32>
  uop.sink %out : tensor<4x1xf32>
  return
}

// -----

// v = sin(log2(exp2(a))); v + flip(v): %v read at j and 3 - j.
// Three transcendental ops read twice: recomputing (weight 13 per extra reader) costs more
// than a write and two reads, so the buffer is kept and both readers read it.
// CHECK-LABEL: func.func @expensive
// CHECK: uop.sin %
// CHECK: %[[B:.*]] = uop.bufferize %{{.*}} {fuse = "kept: recompute (weight 13 x 1 extra readers) costs more than memory (1 write + 2 reads)", reason = "multi-use"} : f32 -> tensor<4xf32>
// CHECK: %[[I:.*]] = uop.range loop 4 id
// CHECK-DAG: %[[X:.*]] = uop.index %[[B]][%[[I]]] : tensor<4xf32>
// CHECK-DAG: %[[Y:.*]] = uop.index %[[B]][%{{.*}}] : tensor<4xf32>
// CHECK: uop.add %[[X]], %[[Y]] : f32
// CHECK-NOT: uop.sin %
func.func @expensive(%a: tensor<4xf32>) {
  %c3 = arith.constant 3 : index
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  %exp = uop.exp2 %x : f32
  %log = uop.log2 %exp : f32
  %sin = uop.sin %log : f32
  %v = uop.bufferize %sin over(%i) {reason = "multi-use"} : f32 -> tensor<4xf32>
  %j = uop.range loop 4 id 1
  %vj = uop.index %v[%j] : tensor<4xf32>
  %flip = arith.subi %c3, %j : index
  %vf = uop.index %v[%flip] : tensor<4xf32>
  %s = uop.add %vj, %vf : f32
  %out = uop.bufferize %s over(%j) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %out : tensor<4xf32>
  return
}

// -----

// v = sin(log2(exp2(a))); v * v + v: %v read three times, all at j. The reads are alike: after CSE one load of the buffer,
// or one recomputation, so the three transcendental ops are inlined, as for a single reader.
// CHECK-LABEL: func.func @expensive_read_alike
// CHECK-NOT: uop.bufferize {{.*}}multi-use
// CHECK: uop.sin %
// CHECK-NOT: uop.bufferize {{.*}}multi-use
// CHECK: uop.bufferize %{{.*}} {reason = "output"}
func.func @expensive_read_alike(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  %exp = uop.exp2 %x : f32
  %log = uop.log2 %exp : f32
  %sin = uop.sin %log : f32
  %v = uop.bufferize %sin over(%i) {reason = "multi-use"} : f32 -> tensor<4xf32>
  %j = uop.range loop 4 id 1
  %v1 = uop.index %v[%j] : tensor<4xf32>
  %v2 = uop.index %v[%j] : tensor<4xf32>
  %v3 = uop.index %v[%j] : tensor<4xf32>
  %p = uop.mul %v1, %v2 : f32
  %s = uop.add %p, %v3 : f32
  %out = uop.bufferize %s over(%j) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %out : tensor<4xf32>
  return
}

// -----

// v = log2(exp2(a)); v + flip(v): %v read at j and 3 - j.
// Two transcendental ops (weight 9) are cheap enough to recompute in both readers.
// CHECK-LABEL: func.func @two_transcendentals
// CHECK-NOT: uop.bufferize {{.*}}multi-use
// CHECK: uop.exp2
// CHECK: uop.log2
// CHECK: uop.exp2
// CHECK: uop.log2
// CHECK: uop.bufferize %{{.*}} {reason = "output"}
// CHECK-NOT: uop.bufferize
func.func @two_transcendentals(%a: tensor<4xf32>) {
  %c3 = arith.constant 3 : index
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  %exp = uop.exp2 %x : f32
  %log = uop.log2 %exp : f32
  %v = uop.bufferize %log over(%i) {reason = "multi-use"} : f32 -> tensor<4xf32>
  %j = uop.range loop 4 id 1
  %vj = uop.index %v[%j] : tensor<4xf32>
  %flip = arith.subi %c3, %j : index
  %vf = uop.index %v[%flip] : tensor<4xf32>
  %s = uop.add %vj, %vf : f32
  %out = uop.bufferize %s over(%j) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %out : tensor<4xf32>
  return
}

// -----

// e = -a (4 elements), g = -b (8 elements); g * flip(g) + pad(e * flip(e), 2, 2): two multi-use buffers, %e read under
// the pad's %valid gate.
// Candidates are decided largest saving first (see EXPLAIN above: the 8-element one before
// the 4-element one); both inline here, and the 4-element one is recomputed under the pad's
// validity condition.
// CHECK-LABEL: func.func @order
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>)
// CHECK-NOT: multi-use
// CHECK: %[[G:.*]] = arith.andi
// CHECK: uop.index %[[A]][%{{.*}}] if %[[G]] : tensor<4xf32>
// CHECK: uop.index %[[A]][%{{.*}}] if %[[G]] : tensor<4xf32>
// CHECK: uop.bufferize %{{.*}} {reason = "output"} : f32 -> tensor<8xf32>
// CHECK-NOT: uop.bufferize
func.func @order(%a: tensor<4xf32>, %b: tensor<8xf32>) {
  %zero = uop.const 0.000000e+00 : f32
  %c5 = arith.constant 5 : index
  %c3 = arith.constant 3 : index
  %c0 = arith.constant 0 : index
  %c-2 = arith.constant -2 : index
  %c7 = arith.constant 7 : index
  %i = uop.range loop 4 id 0
  %ai = uop.index %a[%i] : tensor<4xf32>
  %na = uop.neg %ai : f32
  %e = uop.bufferize %na over(%i) {reason = "multi-use"} : f32 -> tensor<4xf32>
  %j = uop.range loop 8 id 1
  %bj = uop.index %b[%j] : tensor<8xf32>
  %nb = uop.neg %bj : f32
  %g = uop.bufferize %nb over(%j) {reason = "multi-use"} : f32 -> tensor<8xf32>
  %k = uop.range loop 8 id 2
  %gk = uop.index %g[%k] : tensor<8xf32>
  %kflip = arith.subi %c7, %k : index
  %gf = uop.index %g[%kflip] : tensor<8xf32>
  %n = uop.mul %gk, %gf : f32
  %p = arith.addi %k, %c-2 : index
  %above = arith.cmpi sge, %p, %c0 : index
  %below = arith.cmpi sle, %p, %c3 : index
  %valid = arith.andi %above, %below : i1
  %ep = uop.index %e[%p] if %valid : tensor<4xf32>
  %pflip = arith.subi %c5, %k : index
  %ef = uop.index %e[%pflip] if %valid : tensor<4xf32>
  %m = uop.mul %ep, %ef : f32
  %padded = uop.where %valid, %m, %zero : f32
  %s = uop.add %n, %padded : f32
  %out = uop.bufferize %s over(%k) {reason = "output"} : f32 -> tensor<8xf32>
  uop.sink %out : tensor<8xf32>
  return
}

// -----

// f = -pad(a, 1, 1); pad(f, 1, 1) + pad(f, 2, 0): %f (itself computed under %x_valid) is read under %y_valid and %z_valid.
// Inlining under a gated read: the reader's condition is ANDed into the gate of every read
// cloned from the value, and the recomputed value is selected with 0 where it does not hold.
// CHECK-LABEL: func.func @gated
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4xf32>)
// CHECK-NOT: multi-use
// CHECK: %[[Z:.*]] = uop.const 0.000000e+00 : f32
// CHECK: %[[I:.*]] = uop.range loop 8 id
// CHECK: %[[X:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK: %[[OUTER:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: %[[Y:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK: %[[INNER:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: %[[BOTH:.*]] = arith.andi %[[OUTER]], %[[INNER]] : i1
// CHECK: %[[V:.*]] = uop.index %[[A]][%[[Y]]] if %[[BOTH]] : tensor<4xf32>
// CHECK: %[[P:.*]] = uop.where %[[INNER]], %[[V]], %[[Z]] : f32
// CHECK: %[[N:.*]] = uop.neg %[[P]] : f32
// CHECK: %[[G:.*]] = uop.where %[[OUTER]], %[[N]], %[[Z]] : f32
// CHECK: uop.where %[[OUTER]], %[[G]], %[[Z]] : f32
func.func @gated(%a: tensor<4xf32>) {
  %c-2 = arith.constant -2 : index
  %c5 = arith.constant 5 : index
  %zero = uop.const 0.000000e+00 : f32
  %c3 = arith.constant 3 : index
  %c0 = arith.constant 0 : index
  %c-1 = arith.constant -1 : index
  %i = uop.range loop 6 id 0
  %x = arith.addi %i, %c-1 : index
  %x_above = arith.cmpi sge, %x, %c0 : index
  %x_below = arith.cmpi sle, %x, %c3 : index
  %x_valid = arith.andi %x_above, %x_below : i1
  %ax = uop.index %a[%x] if %x_valid : tensor<4xf32>
  %e = uop.where %x_valid, %ax, %zero : f32
  %ne = uop.neg %e : f32
  %f = uop.bufferize %ne over(%i) {reason = "multi-use"} : f32 -> tensor<6xf32>
  %j = uop.range loop 8 id 1
  %y = arith.addi %j, %c-1 : index
  %y_above = arith.cmpi sge, %y, %c0 : index
  %y_below = arith.cmpi sle, %y, %c5 : index
  %y_valid = arith.andi %y_above, %y_below : i1
  %fy = uop.index %f[%y] if %y_valid : tensor<6xf32>
  %p = uop.where %y_valid, %fy, %zero : f32
  %z = arith.addi %j, %c-2 : index
  %z_valid = arith.cmpi sge, %z, %c0 : index
  %fz = uop.index %f[%z] if %z_valid : tensor<6xf32>
  %q = uop.where %z_valid, %fz, %zero : f32
  %s = uop.add %p, %q : f32
  %out = uop.bufferize %s over(%j) {reason = "output"} : f32 -> tensor<8xf32>
  uop.sink %out : tensor<8xf32>
  return
}

// -----

// contiguous(a) + expand(max(a, 1)): the row max %m (reduce-expand) and the contiguous copy %c.
// Outputs and contiguous materializations are not candidates: they stay, without a fuse attribute.
// A row's max read back along its row (reduce-expand) is computed inside the one kernel that reads
// it, at the row's range: the lowering runs it once per row, before the loop along the row.
// CHECK-LABEL: func.func @not_candidates
// CHECK-NOT: fuse =
// CHECK: uop.bufferize %{{.*}} {reason = "contiguous"} : f32 -> tensor<4x8xf32>
// CHECK: %[[I:.*]] = uop.range loop 4
// CHECK: %[[ROW:.*]] = uop.index %arg0[%[[I]], %{{.*}}] : tensor<4x8xf32>
// CHECK-NEXT: %[[MAX:.*]] = uop.range_reduce max %[[ROW]]
// CHECK: uop.add %{{.*}}, %[[MAX]]
// CHECK-NOT: fuse =
// CHECK: uop.bufferize %{{.*}} {reason = "output"} : f32 -> tensor<4x8xf32>
func.func @not_candidates(%a: tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %x = uop.index %a[%i, %k] : tensor<4x8xf32>
  %max = uop.range_reduce max %x over(%k) : f32
  %m = uop.bufferize %max over(%i, %c0) {reason = "reduce-expand"} : f32 -> tensor<4x1xf32>
  %i2 = uop.range loop 4 id 2
  %j2 = uop.range loop 8 id 3
  %y = uop.index %a[%i2, %j2] : tensor<4x8xf32>
  %c = uop.bufferize %y over(%i2, %j2) {reason = "contiguous"} : f32 -> tensor<4x8xf32>
  %i3 = uop.range loop 4 id 4
  %j3 = uop.range loop 8 id 5
  %cy = uop.index %c[%i3, %j3] : tensor<4x8xf32>
  %mi = uop.index %m[%i3, %c0] : tensor<4x1xf32>
  %s = uop.add %cy, %mi : f32
  %out = uop.bufferize %s over(%i3, %j3) {reason = "output"} : f32 -> tensor<4x8xf32>
  uop.sink %out : tensor<4x8xf32>
  return
}

// -----

// e = exp2(a - max(a, 1)); e * recip(sum(e, 1)): row max %m and row sum %s (reduce-expand), exponentials %e (multi-use).
// Softmax: the exponentials (multi-use) are inlined first; then, consumers first, the sum (1 reader)
// and the max (2 readers, both in the output kernel now) join the output kernel: one kernel, no temporary.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: uop.bufferize
// CHECK: uop.range_reduce max
// CHECK: uop.range_reduce add
// CHECK: uop.bufferize %{{.*}} {reason = "output"}
func.func @softmax(%a: tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %x = uop.index %a[%i, %k] : tensor<4x8xf32>
  %max = uop.range_reduce max %x over(%k) : f32
  %m = uop.bufferize %max over(%i, %c0) {reason = "reduce-expand"} : f32 -> tensor<4x1xf32>
  %i2 = uop.range loop 4 id 2
  %j2 = uop.range loop 8 id 3
  %y = uop.index %a[%i2, %j2] : tensor<4x8xf32>
  %my = uop.index %m[%i2, %c0] : tensor<4x1xf32>
  %n = uop.neg %my : f32
  %d = uop.add %y, %n : f32
  %exp = uop.exp2 %d : f32
  %e = uop.bufferize %exp over(%i2, %j2) {reason = "multi-use"} : f32 -> tensor<4x8xf32>
  %i3 = uop.range loop 4 id 4
  %k3 = uop.range reduce 8 id 5
  %ek = uop.index %e[%i3, %k3] : tensor<4x8xf32>
  %sum = uop.range_reduce add %ek over(%k3) : f32
  %s = uop.bufferize %sum over(%i3, %c0) {reason = "reduce-expand"} : f32 -> tensor<4x1xf32>
  %i4 = uop.range loop 4 id 6
  %j4 = uop.range loop 8 id 7
  %ej = uop.index %e[%i4, %j4] : tensor<4x8xf32>
  %sj = uop.index %s[%i4, %c0] : tensor<4x1xf32>
  %r = uop.recip %sj : f32
  %o = uop.mul %ej, %r : f32
  %out = uop.bufferize %o over(%i4, %j4) {reason = "output"} : f32 -> tensor<4x8xf32>
  uop.sink %out : tensor<4x8xf32>
  return
}

// -----

// a + expand(max(a, 0)): the column max %m (1x8, reduce-expand) is read at [0, j2].
// A column's max read back down the column varies with the consumer's inner range, not an outer one:
// it stays a kernel of its own.
// CHECK-LABEL: func.func @column_max
// CHECK: uop.bufferize %{{.*}} {fuse = "kept: read at ranges that are not the consumer's outer ones", reason = "reduce-expand"}
func.func @column_max(%a: tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %j = uop.range loop 8 id 0
  %k = uop.range reduce 4 id 1
  %x = uop.index %a[%k, %j] : tensor<4x8xf32>
  %max = uop.range_reduce max %x over(%k) : f32
  %m = uop.bufferize %max over(%c0, %j) {reason = "reduce-expand"} : f32 -> tensor<1x8xf32>
  %i2 = uop.range loop 4 id 2
  %j2 = uop.range loop 8 id 3
  %y = uop.index %a[%i2, %j2] : tensor<4x8xf32>
  %mj = uop.index %m[%c0, %j2] : tensor<1x8xf32>
  %s = uop.add %y, %mj : f32
  %out = uop.bufferize %s over(%i2, %j2) {reason = "output"} : f32 -> tensor<4x8xf32>
  uop.sink %out : tensor<4x8xf32>
  return
}

// -----

// Twenty negs of a, in one kernel.
// A single-use chain has no candidate; past max_ops (16; read 1 + neg 1 each) its kernel is cut. Past three quarters of
// the limit a cut comes where one value is live: the 11th neg is stored over the kernel's range, the rest reads it.
// SPLIT-LABEL: func.func @split_chain
// SPLIT: %[[I:.*]] = uop.range loop 4 id 0
// SPLIT-COUNT-11: uop.neg
// SPLIT-NEXT: %[[S:.*]] = uop.bufferize %{{.*}} over(%[[I]]) {fuse = "split: a kernel would exceed 16 ops", reason = "split"} : f32 -> tensor<4xf32>
// SPLIT-NEXT: %[[R:.*]] = uop.index %[[S]][%[[I]]] : tensor<4xf32>
// SPLIT-NEXT: uop.neg %[[R]] : f32
// SPLIT-COUNT-8: uop.neg
// SPLIT-NEXT: uop.bufferize %{{.*}} over(%[[I]]) {reason = "output"}
// SPLIT-EXPLAIN: pytc-fuse: split tensor<4xf32> before op 13 of 22 (a kernel would exceed 16 ops: weight 12, 1 buffers): materialize 1 values
func.func @split_chain(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  %n1 = uop.neg %x : f32
  %n2 = uop.neg %n1 : f32
  %n3 = uop.neg %n2 : f32
  %n4 = uop.neg %n3 : f32
  %n5 = uop.neg %n4 : f32
  %n6 = uop.neg %n5 : f32
  %n7 = uop.neg %n6 : f32
  %n8 = uop.neg %n7 : f32
  %n9 = uop.neg %n8 : f32
  %n10 = uop.neg %n9 : f32
  %n11 = uop.neg %n10 : f32
  %n12 = uop.neg %n11 : f32
  %n13 = uop.neg %n12 : f32
  %n14 = uop.neg %n13 : f32
  %n15 = uop.neg %n14 : f32
  %n16 = uop.neg %n15 : f32
  %n17 = uop.neg %n16 : f32
  %n18 = uop.neg %n17 : f32
  %n19 = uop.neg %n18 : f32
  %n20 = uop.neg %n19 : f32
  %out = uop.bufferize %n20 over(%i) {reason = "output"} : f32 -> tensor<4xf32>
  uop.sink %out : tensor<4xf32>
  return
}

// -----

// a + b (broadcast) + c + d + e + f, in one kernel.
// A sum of six tensors (one broadcast along rows) reads more than max_buffers (4): the partial sum of the first four is
// stored, and the rest of the kernel reads it and the last two.
// SPLIT-LABEL: func.func @split_wide
// SPLIT-SAME: (%[[A:[a-z0-9]+]]: tensor<4x8xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>, %[[C:[a-z0-9]+]]: tensor<4x8xf32>, %[[D:[a-z0-9]+]]: tensor<4x8xf32>, %[[E:[a-z0-9]+]]: tensor<4x8xf32>, %[[F:[a-z0-9]+]]: tensor<4x8xf32>)
// SPLIT: %[[I:.*]] = uop.range loop 4 id 0
// SPLIT: %[[J:.*]] = uop.range loop 8 id 1
// SPLIT: uop.index %[[B]][%[[J]]] : tensor<8xf32>
// SPLIT: uop.index %[[D]][%[[I]], %[[J]]]
// SPLIT-NEXT: %[[P:.*]] = uop.add
// SPLIT-NEXT: %[[S:.*]] = uop.bufferize %[[P]] over(%[[I]], %[[J]]) {fuse = "split: a kernel would read more than 4 buffers", reason = "split"}
// SPLIT-NEXT: %[[R:.*]] = uop.index %[[S]][%[[I]], %[[J]]] : tensor<4x8xf32>
// SPLIT-NEXT: %[[EE:.*]] = uop.index %[[E]][%[[I]], %[[J]]]
// SPLIT-NEXT: uop.add %[[R]], %[[EE]]
// SPLIT-NEXT: uop.index %[[F]][%[[I]], %[[J]]]
// SPLIT-NEXT: uop.add
// SPLIT-NEXT: uop.bufferize %{{.*}} over(%[[I]], %[[J]]) {reason = "output"}
func.func @split_wide(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x8xf32>, %d: tensor<4x8xf32>, %e: tensor<4x8xf32>, %f: tensor<4x8xf32>) {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 8 id 1
  %aij = uop.index %a[%i, %j] : tensor<4x8xf32>
  %bj = uop.index %b[%j] : tensor<8xf32>
  %ab = uop.add %aij, %bj : f32
  %cij = uop.index %c[%i, %j] : tensor<4x8xf32>
  %abc = uop.add %ab, %cij : f32
  %dij = uop.index %d[%i, %j] : tensor<4x8xf32>
  %abcd = uop.add %abc, %dij : f32
  %eij = uop.index %e[%i, %j] : tensor<4x8xf32>
  %abcde = uop.add %abcd, %eij : f32
  %fij = uop.index %f[%i, %j] : tensor<4x8xf32>
  %abcdef = uop.add %abcde, %fij : f32
  %out = uop.bufferize %abcdef over(%i, %j) {reason = "output"} : f32 -> tensor<4x8xf32>
  uop.sink %out : tensor<4x8xf32>
  return
}

// -----

// a + expand(exp2^5(b)): the five exp2 of b depend only on the column range %j.
// A value broadcast along the output's rows is stored over the one range it depends on.
// SPLIT-LABEL: func.func @split_broadcast
// SPLIT: %[[J:.*]] = uop.range loop 8 id 1
// SPLIT: %[[S:.*]] = uop.bufferize %{{.*}} over(%[[J]]) {fuse = "split: a kernel would exceed 16 ops", reason = "split"} : f32 -> tensor<8xf32>
// SPLIT-NEXT: uop.index %[[S]][%[[J]]] : tensor<8xf32>
// SPLIT: uop.bufferize %{{.*}} {reason = "output"} : f32 -> tensor<4x8xf32>
func.func @split_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 8 id 1
  %aij = uop.index %a[%i, %j] : tensor<4x8xf32>
  %bj = uop.index %b[%j] : tensor<8xf32>
  %e1 = uop.exp2 %bj : f32
  %e2 = uop.exp2 %e1 : f32
  %e3 = uop.exp2 %e2 : f32
  %e4 = uop.exp2 %e3 : f32
  %e5 = uop.exp2 %e4 : f32
  %s = uop.add %aij, %e5 : f32
  %out = uop.bufferize %s over(%i, %j) {reason = "output"} : f32 -> tensor<4x8xf32>
  uop.sink %out : tensor<4x8xf32>
  return
}

// -----

// sum(exp2^6(a), 1): six exp2 in the body of the row sum, at the reduce range %k.
// Inside a reduction's body a value varies with the reduce range: it is stored over a new loop range in its place (its
// computation copied there), and the body reads it back at the reduce range.
// SPLIT-LABEL: func.func @split_reduce_body
// SPLIT: %[[I:.*]] = uop.range loop 4 id 0
// SPLIT: %[[R:.*]] = uop.range reduce 8 id 1
// SPLIT: %[[K:.*]] = uop.range loop 8 id 2
// SPLIT: uop.index %{{.*}}[%[[I]], %[[K]]] : tensor<4x8xf32>
// SPLIT-COUNT-2: uop.exp2
// SPLIT-NEXT: %[[S:.*]] = uop.bufferize %{{.*}} over(%[[I]], %[[K]]) {fuse = "split: a kernel would exceed 16 ops", reason = "split"} : f32 -> tensor<4x8xf32>
// SPLIT: %[[L:.*]] = uop.range loop 8 id 3
// SPLIT-NEXT: uop.index %[[S]][%[[I]], %[[L]]]
// SPLIT-COUNT-2: uop.exp2
// SPLIT-NEXT: %[[T:.*]] = uop.bufferize %{{.*}} over(%[[I]], %[[L]]) {fuse = "split: a kernel would exceed 16 ops", reason = "split"} : f32 -> tensor<4x8xf32>
// SPLIT-NEXT: uop.index %[[T]][%[[I]], %[[R]]]
// SPLIT-COUNT-2: uop.exp2
// SPLIT-NEXT: uop.range_reduce add %{{.*}} over(%[[R]])
func.func @split_reduce_body(%a: tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %x = uop.index %a[%i, %k] : tensor<4x8xf32>
  %e1 = uop.exp2 %x : f32
  %e2 = uop.exp2 %e1 : f32
  %e3 = uop.exp2 %e2 : f32
  %e4 = uop.exp2 %e3 : f32
  %e5 = uop.exp2 %e4 : f32
  %e6 = uop.exp2 %e5 : f32
  %sum = uop.range_reduce add %e6 over(%k) : f32
  %out = uop.bufferize %sum over(%i, %c0) {reason = "output"} : f32 -> tensor<4x1xf32>
  uop.sink %out : tensor<4x1xf32>
  return
}

// -----

// sum(exp2^6(a), 1) of a 4096x2048 tensor.
// Stored over its reduce range, a value in this reduction's body would take more than 2^22 elements: the kernel is
// left whole, past max_ops.
// SPLIT-LABEL: func.func @big_reduce_body
// SPLIT-NOT: reason = "split"
// SPLIT-COUNT-6: uop.exp2
// SPLIT-NEXT: uop.range_reduce add
// SPLIT-NEXT: uop.bufferize %{{.*}} {reason = "output"}
// SPLIT-EXPLAIN: pytc-fuse: left a part of tensor<4096x1xf32> whole (a kernel would exceed 16 ops): a value inside a reduction's body
func.func @big_reduce_body(%a: tensor<4096x2048xf32>) {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4096 id 0
  %k = uop.range reduce 2048 id 1
  %x = uop.index %a[%i, %k] : tensor<4096x2048xf32>
  %e1 = uop.exp2 %x : f32
  %e2 = uop.exp2 %e1 : f32
  %e3 = uop.exp2 %e2 : f32
  %e4 = uop.exp2 %e3 : f32
  %e5 = uop.exp2 %e4 : f32
  %e6 = uop.exp2 %e5 : f32
  %sum = uop.range_reduce add %e6 over(%k) : f32
  %out = uop.bufferize %sum over(%i, %c0) {reason = "output"} : f32 -> tensor<4096x1xf32>
  uop.sink %out : tensor<4096x1xf32>
  return
}

// -----

// A multi-use materialization the sink reads as a whole stays: it is a buffer, whatever its readers inside kernels.
// CHECK-LABEL: func.func @read_by_the_sink
// CHECK: %[[B:.*]] = uop.bufferize {{.*}} {fuse = "kept: read as a whole (by the sink or a launch)", reason = "multi-use"}
// CHECK: uop.sink %[[B]]
func.func @read_by_the_sink(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  %b = uop.bufferize %x over(%i) {reason = "multi-use"} : f32 -> tensor<4xf32>
  uop.sink %b : tensor<4xf32>
  return
}

// -----

// exp2(a) @ b with a 64x512 and b 512x256: exp2(a)[i, k] does not vary with the column loop %j around the reduction.
// Computed in the reduction's body it would be computed once per column block (7 extra blocks of 32): it is hoisted,
// stored over (%i, a new loop in place of %k) and read back there. The same product with 32 columns keeps it inline.
// A target whose register blocks are 256 columns wide (block_columns=256) computes it once per element: it stays inline.
// CHECK-LABEL: func.func @invariant_operand
// CHECK: %[[E:.*]] = uop.exp2
// CHECK: %[[B:.*]] = uop.bufferize %[[E]] over(%{{.*}}, %{{.*}}) {fuse = "split: recomputed 7 extra times in a reduction", reason = "split"} : f32 -> tensor<64x512xf32>
// CHECK: %[[R:.*]] = uop.index %[[B]]
// CHECK: uop.mul %[[R]]
// EXPLAIN: pytc-fuse: hoist f32 (weight 5) out of tensor<64x256xf32>'s reduction: repeated 7 extra times
// WIDE-BLOCK-LABEL: func.func @invariant_operand
// WIDE-BLOCK-NOT: split
// WIDE-BLOCK: uop.exp2
// WIDE-BLOCK-NEXT: uop.index
// WIDE-BLOCK-NEXT: uop.mul
// WIDE-BLOCK-NOT: split
func.func @invariant_operand(%a: tensor<64x512xf32>, %b: tensor<512x256xf32>) {
  %i = uop.range loop 64 id 0
  %j = uop.range loop 256 id 1
  %k = uop.range reduce 512 id 2
  %x = uop.index %a[%i, %k] : tensor<64x512xf32>
  %e = uop.exp2 %x : f32
  %y = uop.index %b[%k, %j] : tensor<512x256xf32>
  %m = uop.mul %e, %y : f32
  %sum = uop.range_reduce add %m over(%k) : f32
  %out = uop.bufferize %sum over(%i, %j) {reason = "output"} : f32 -> tensor<64x256xf32>
  uop.sink %out : tensor<64x256xf32>
  return
}

// -----

// With register blocks of 8 columns (block_columns=8) the 32 columns are 4 blocks: exp2(a) is hoisted.
// CHECK-LABEL: func.func @narrow_invariant_operand
// CHECK-NOT: split
// CHECK: uop.exp2
// CHECK-NEXT: uop.index
// CHECK-NEXT: uop.mul
// CHECK-NOT: split
// NARROW-BLOCK-LABEL: func.func @narrow_invariant_operand
// NARROW-BLOCK: uop.exp2
// NARROW-BLOCK: uop.bufferize %{{.*}} {fuse = "split: recomputed 3 extra times in a reduction", reason = "split"} : f32 -> tensor<64x512xf32>
func.func @narrow_invariant_operand(%a: tensor<64x512xf32>, %b: tensor<512x32xf32>) {
  %i = uop.range loop 64 id 0
  %j = uop.range loop 32 id 1
  %k = uop.range reduce 512 id 2
  %x = uop.index %a[%i, %k] : tensor<64x512xf32>
  %e = uop.exp2 %x : f32
  %y = uop.index %b[%k, %j] : tensor<512x32xf32>
  %m = uop.mul %e, %y : f32
  %sum = uop.range_reduce add %m over(%k) : f32
  %out = uop.bufferize %sum over(%i, %j) {reason = "output"} : f32 -> tensor<64x32xf32>
  uop.sink %out : tensor<64x32xf32>
  return
}

// -----

// A 1-d convolution of exp2(a) with 256 output channels: exp2(a)[c, x + kx] does not vary with the channel loop %o, but
// stored over (x, c, kx) it would be 3 times the size of a, read back for every output channel: it stays inline.
// CHECK-LABEL: func.func @invariant_windows
// CHECK-NOT: split
// CHECK: uop.exp2
// CHECK-NOT: split
func.func @invariant_windows(%a: tensor<64x66xf32>, %w: tensor<256x64x3xf32>) {
  %o = uop.range loop 256 id 0
  %x = uop.range loop 64 id 1
  %c = uop.range reduce 64 id 2
  %kx = uop.range reduce 3 id 3
  %at = arith.addi %x, %kx : index
  %v = uop.index %a[%c, %at] : tensor<64x66xf32>
  %e = uop.exp2 %v : f32
  %y = uop.index %w[%o, %c, %kx] : tensor<256x64x3xf32>
  %m = uop.mul %e, %y : f32
  %sum = uop.range_reduce add %m over(%c, %kx) : f32
  %out = uop.bufferize %sum over(%o, %x) {reason = "output"} : f32 -> tensor<256x64xf32>
  uop.sink %out : tensor<256x64xf32>
  return
}

// -----

// exp2(a + b), read by a 1-d convolution with 256 output channels and by an elementwise kernel. Inlined, the
// convolution would compute it in its reduction for every block of 32 output channels and in each of the 3 windows
// covering an element: 22 extra times (of weight 5) per element. It stays, written once. With register blocks of 256
// columns (block_columns=256), one block covers the output channels: 1 extra time, and it is inlined.
// CHECK-LABEL: func.func @windows_of_a_shared_value
// CHECK: %[[E:.*]] = uop.bufferize %{{.*}} {fuse = "kept: recomputed 22 extra times in a reading kernel's reduction (weight 5)", reason = "multi-use"} : f32 -> tensor<64x66xf32>
// CHECK: uop.index %[[E]]
// CHECK: uop.range_reduce
// CHECK: uop.index %[[E]]
// EXPLAIN: pytc-fuse: keep tensor<64x66xf32> (2 readers): recomputed 22 extra times in a reading kernel's reduction (weight 5)
// WIDE-BLOCK-LABEL: func.func @windows_of_a_shared_value(
// WIDE-BLOCK-NOT: multi-use
// WIDE-BLOCK: uop.exp2
// WIDE-BLOCK: uop.range_reduce
// WIDE-BLOCK-NOT: multi-use
func.func @windows_of_a_shared_value(%a: tensor<64x66xf32>, %b: tensor<64x66xf32>, %w: tensor<256x64x3xf32>) {
  %c0 = uop.range loop 64 id 0
  %x0 = uop.range loop 66 id 1
  %a0 = uop.index %a[%c0, %x0] : tensor<64x66xf32>
  %b0 = uop.index %b[%c0, %x0] : tensor<64x66xf32>
  %s = uop.add %a0, %b0 : f32
  %e = uop.exp2 %s : f32
  %shared = uop.bufferize %e over(%c0, %x0) {reason = "multi-use"} : f32 -> tensor<64x66xf32>
  %o = uop.range loop 256 id 2
  %x = uop.range loop 64 id 3
  %c = uop.range reduce 64 id 4
  %kx = uop.range reduce 3 id 5
  %at = arith.addi %x, %kx : index
  %v = uop.index %shared[%c, %at] : tensor<64x66xf32>
  %y = uop.index %w[%o, %c, %kx] : tensor<256x64x3xf32>
  %m = uop.mul %v, %y : f32
  %sum = uop.range_reduce add %m over(%c, %kx) : f32
  %conv = uop.bufferize %sum over(%o, %x) {reason = "output"} : f32 -> tensor<256x64xf32>
  %c1 = uop.range loop 64 id 6
  %x1 = uop.range loop 66 id 7
  %v1 = uop.index %shared[%c1, %x1] : tensor<64x66xf32>
  %twice = uop.add %v1, %v1 : f32
  %doubled = uop.bufferize %twice over(%c1, %x1) {reason = "output"} : f32 -> tensor<64x66xf32>
  uop.sink %conv, %doubled : tensor<256x64xf32>, tensor<64x66xf32>
  return
}

// -----

// The same with 32 output channels: one block of them, each element computed 2 times (once more) in the convolution's
// windows, which costs less than a write and its reads: inlined.
// CHECK-LABEL: func.func @windows_of_a_shared_value_few_channels
// CHECK-NOT: multi-use
// CHECK: uop.exp2
// CHECK: uop.range_reduce
// EXPLAIN: pytc-fuse: inline tensor<64x66xf32> (2 readers)
func.func @windows_of_a_shared_value_few_channels(%a: tensor<64x66xf32>, %b: tensor<64x66xf32>, %w: tensor<32x64x3xf32>) {
  %c0 = uop.range loop 64 id 0
  %x0 = uop.range loop 66 id 1
  %a0 = uop.index %a[%c0, %x0] : tensor<64x66xf32>
  %b0 = uop.index %b[%c0, %x0] : tensor<64x66xf32>
  %s = uop.add %a0, %b0 : f32
  %e = uop.exp2 %s : f32
  %shared = uop.bufferize %e over(%c0, %x0) {reason = "multi-use"} : f32 -> tensor<64x66xf32>
  %o = uop.range loop 32 id 2
  %x = uop.range loop 64 id 3
  %c = uop.range reduce 64 id 4
  %kx = uop.range reduce 3 id 5
  %at = arith.addi %x, %kx : index
  %v = uop.index %shared[%c, %at] : tensor<64x66xf32>
  %y = uop.index %w[%o, %c, %kx] : tensor<32x64x3xf32>
  %m = uop.mul %v, %y : f32
  %sum = uop.range_reduce add %m over(%c, %kx) : f32
  %conv = uop.bufferize %sum over(%o, %x) {reason = "output"} : f32 -> tensor<32x64xf32>
  %c1 = uop.range loop 64 id 6
  %x1 = uop.range loop 66 id 7
  %v1 = uop.index %shared[%c1, %x1] : tensor<64x66xf32>
  %twice = uop.add %v1, %v1 : f32
  %doubled = uop.bufferize %twice over(%c1, %x1) {reason = "output"} : f32 -> tensor<64x66xf32>
  uop.sink %conv, %doubled : tensor<32x64xf32>, tensor<64x66xf32>
  return
}

// -----

// exp2(a + b), read by a projection with 256 columns and by an elementwise kernel: the projection reads one element per
// reduction step (no windows), so pytc-fuse inlines it and the hoist stores the whole value once, over (%i, %k).
// CHECK-LABEL: func.func @shared_projection_input
// CHECK-NOT: multi-use
// CHECK: uop.bufferize %{{.*}} {fuse = "split: recomputed 7 extra times in a reduction", reason = "split"} : f32 -> tensor<64x512xf32>
// EXPLAIN: pytc-fuse: inline tensor<64x512xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: hoist f32
func.func @shared_projection_input(%a: tensor<64x512xf32>, %b: tensor<64x512xf32>, %w: tensor<512x256xf32>) {
  %i0 = uop.range loop 64 id 0
  %k0 = uop.range loop 512 id 1
  %a0 = uop.index %a[%i0, %k0] : tensor<64x512xf32>
  %b0 = uop.index %b[%i0, %k0] : tensor<64x512xf32>
  %s = uop.add %a0, %b0 : f32
  %e = uop.exp2 %s : f32
  %shared = uop.bufferize %e over(%i0, %k0) {reason = "multi-use"} : f32 -> tensor<64x512xf32>
  %i = uop.range loop 64 id 2
  %j = uop.range loop 256 id 3
  %k = uop.range reduce 512 id 4
  %v = uop.index %shared[%i, %k] : tensor<64x512xf32>
  %y = uop.index %w[%k, %j] : tensor<512x256xf32>
  %m = uop.mul %v, %y : f32
  %sum = uop.range_reduce add %m over(%k) : f32
  %proj = uop.bufferize %sum over(%i, %j) {reason = "output"} : f32 -> tensor<64x256xf32>
  %i1 = uop.range loop 64 id 5
  %k1 = uop.range loop 512 id 6
  %v1 = uop.index %shared[%i1, %k1] : tensor<64x512xf32>
  %twice = uop.add %v1, %v1 : f32
  %doubled = uop.bufferize %twice over(%i1, %k1) {reason = "output"} : f32 -> tensor<64x512xf32>
  uop.sink %proj, %doubled : tensor<64x256xf32>, tensor<64x512xf32>
  return
}
