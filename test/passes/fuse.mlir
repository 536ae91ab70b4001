// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{max_buffers=1},canonicalize,cse)' | FileCheck %s --check-prefix=LIMIT
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{max_ops=5},canonicalize,cse)' | FileCheck %s --check-prefix=OPS
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{explain=1})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{max_ops=16 max_buffers=4},canonicalize,cse)' | FileCheck %s --check-prefix=SPLIT
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{max_ops=16 max_buffers=4 explain=1})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLIT-EXPLAIN

// The decisions printed with explain=1, in the order of the chunks below; within a graph the
// candidate saving the most bytes (the larger buffer) is decided first.
// EXPLAIN: pytc-fuse: inline tensor<4xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: keep tensor<4x1xf32> (2 readers): recomputing would repeat a reduction
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4x1xf32> (1 readers)
// EXPLAIN-NEXT: pytc-fuse: keep tensor<4xf32> (2 readers): recompute (weight 13 x 1 extra readers) costs more than memory (1 write + 2 reads)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<8xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<6xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4x1xf32> (1 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4x8xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4x1xf32> (1 readers)
// EXPLAIN-NEXT: pytc-fuse: inline tensor<4x1xf32> (2 readers)
// EXPLAIN-NEXT: pytc-fuse: keep tensor<1x8xf32> (1 readers): read at ranges that are not the consumer's outer ones
// EXPLAIN-NOT: pytc-fuse

// A cheap multi-use value is inlined: its buffer disappears and both readers recompute it,
// one at i and one at the flipped index 3-i.
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
  %e = uop.add %a, %b : tensor<4xf32>
  %f = uop.flip %e [0] : tensor<4xf32> -> tensor<4xf32>
  %m = uop.mul %e, %f : tensor<4xf32>
  uop.sink %m : tensor<4xf32>
  return
}

// -----

// A multi-use value containing a range_reduce, read at two positions (a row and its flip), is kept, with the reason
// recorded: inlining would compute every row's sum twice.
// CHECK-LABEL: func.func @reduction
// CHECK: %[[R:.*]] = uop.range_reduce add
// CHECK: %[[B:.*]] = uop.bufferize %[[R]] over(%{{.*}}, %{{.*}}) {fuse = "kept: recomputing would repeat a reduction", reason = "multi-use"} : f32 -> tensor<4x1xf32>
// CHECK-COUNT-2: uop.index %[[B]][
// CHECK: uop.bufferize %{{.*}} {reason = "output"}
// CHECK-NOT: uop.range_reduce
func.func @reduction(%a: tensor<4x8xf32>) {
  %r = uop.reduce add %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %f = uop.flip %r [0] : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = uop.neg %r : tensor<4x1xf32>
  %m = uop.exp2 %f : tensor<4x1xf32>
  %s = uop.add %n, %m : tensor<4x1xf32>
  uop.sink %s : tensor<4x1xf32>
  return
}

// -----

// Used twice at its own position (one reader once the reads are merged), a reduction is inlined: each row's sum is
// still computed once, in the kernel of its consumers (as a matmul's result feeds relu's compare and select).
// CHECK-LABEL: func.func @reduction_read_once
// CHECK-NOT: multi-use
// CHECK: %[[R:.*]] = uop.range_reduce add
// CHECK-DAG: uop.neg %[[R]] : f32
// CHECK-DAG: uop.exp2 %[[R]] : f32
// CHECK: uop.bufferize %{{.*}} {reason = "output"}
func.func @reduction_read_once(%a: tensor<4x8xf32>) {
  %r = uop.reduce add %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %n = uop.neg %r : tensor<4x1xf32>
  %m = uop.exp2 %r : tensor<4x1xf32>
  %s = uop.add %n, %m : tensor<4x1xf32>
  uop.sink %s : tensor<4x1xf32>
  return
}

// -----

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
  %0 = uop.exp2 %a : tensor<4xf32>
  %1 = uop.log2 %0 : tensor<4xf32>
  %2 = uop.sin %1 : tensor<4xf32>
  %3 = uop.flip %2 [0] : tensor<4xf32> -> tensor<4xf32>
  %4 = uop.add %2, %3 : tensor<4xf32>
  uop.sink %4 : tensor<4xf32>
  return
}

// -----

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
  %0 = uop.exp2 %a : tensor<4xf32>
  %1 = uop.log2 %0 : tensor<4xf32>
  %3 = uop.flip %1 [0] : tensor<4xf32> -> tensor<4xf32>
  %4 = uop.add %1, %3 : tensor<4xf32>
  uop.sink %4 : tensor<4xf32>
  return
}

// -----

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
  %e = uop.neg %a : tensor<4xf32>
  %f = uop.flip %e [0] : tensor<4xf32> -> tensor<4xf32>
  %m = uop.mul %e, %f : tensor<4xf32>
  %p = uop.pad %m low [2] high [2] : tensor<4xf32> -> tensor<8xf32>
  %g = uop.neg %b : tensor<8xf32>
  %h = uop.flip %g [0] : tensor<8xf32> -> tensor<8xf32>
  %n = uop.mul %g, %h : tensor<8xf32>
  %s = uop.add %n, %p : tensor<8xf32>
  uop.sink %s : tensor<8xf32>
  return
}

// -----

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
  %e = uop.pad %a low [1] high [1] : tensor<4xf32> -> tensor<6xf32>
  %f = uop.neg %e : tensor<6xf32>
  %p = uop.pad %f low [1] high [1] : tensor<6xf32> -> tensor<8xf32>
  %q = uop.pad %f low [2] high [0] : tensor<6xf32> -> tensor<8xf32>
  %s = uop.add %p, %q : tensor<8xf32>
  uop.sink %s : tensor<8xf32>
  return
}

// -----

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
  %m = uop.reduce max %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %e = uop.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %c = uop.contiguous %a : tensor<4x8xf32>
  %s = uop.add %c, %e : tensor<4x8xf32>
  uop.sink %s : tensor<4x8xf32>
  return
}

// -----

// Softmax: the exponentials (multi-use) are inlined first; then, consumers first, the sum (1 reader)
// and the max (2 readers, both in the output kernel now) join the output kernel: one kernel, no temporary.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: uop.bufferize
// CHECK: uop.range_reduce max
// CHECK: uop.range_reduce add
// CHECK: uop.bufferize %{{.*}} {reason = "output"}
func.func @softmax(%a: tensor<4x8xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %me = uop.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %n = uop.neg %me : tensor<4x8xf32>
  %d = uop.add %a, %n : tensor<4x8xf32>
  %e = uop.exp2 %d : tensor<4x8xf32>
  %s = uop.reduce add %e [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %se = uop.expand %s : tensor<4x1xf32> -> tensor<4x8xf32>
  %r = uop.recip %se : tensor<4x8xf32>
  %o = uop.mul %e, %r : tensor<4x8xf32>
  uop.sink %o : tensor<4x8xf32>
  return
}

// -----

// A column's max read back down the column varies with the consumer's inner range, not an outer one:
// it stays a kernel of its own.
// CHECK-LABEL: func.func @column_max
// CHECK: uop.bufferize %{{.*}} {fuse = "kept: read at ranges that are not the consumer's outer ones", reason = "reduce-expand"}
func.func @column_max(%a: tensor<4x8xf32>) {
  %m = uop.reduce max %a [0] : tensor<4x8xf32> -> tensor<1x8xf32>
  %e = uop.expand %m : tensor<1x8xf32> -> tensor<4x8xf32>
  %s = uop.add %a, %e : tensor<4x8xf32>
  uop.sink %s : tensor<4x8xf32>
  return
}

// -----

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
  %0 = uop.neg %a : tensor<4xf32>
  %1 = uop.neg %0 : tensor<4xf32>
  %2 = uop.neg %1 : tensor<4xf32>
  %3 = uop.neg %2 : tensor<4xf32>
  %4 = uop.neg %3 : tensor<4xf32>
  %5 = uop.neg %4 : tensor<4xf32>
  %6 = uop.neg %5 : tensor<4xf32>
  %7 = uop.neg %6 : tensor<4xf32>
  %8 = uop.neg %7 : tensor<4xf32>
  %9 = uop.neg %8 : tensor<4xf32>
  %10 = uop.neg %9 : tensor<4xf32>
  %11 = uop.neg %10 : tensor<4xf32>
  %12 = uop.neg %11 : tensor<4xf32>
  %13 = uop.neg %12 : tensor<4xf32>
  %14 = uop.neg %13 : tensor<4xf32>
  %15 = uop.neg %14 : tensor<4xf32>
  %16 = uop.neg %15 : tensor<4xf32>
  %17 = uop.neg %16 : tensor<4xf32>
  %18 = uop.neg %17 : tensor<4xf32>
  %19 = uop.neg %18 : tensor<4xf32>
  uop.sink %19 : tensor<4xf32>
  return
}

// -----

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
  %be = uop.reshape %b : tensor<8xf32> -> tensor<1x8xf32>
  %bx = uop.expand %be : tensor<1x8xf32> -> tensor<4x8xf32>
  %0 = uop.add %a, %bx : tensor<4x8xf32>
  %1 = uop.add %0, %c : tensor<4x8xf32>
  %2 = uop.add %1, %d : tensor<4x8xf32>
  %3 = uop.add %2, %e : tensor<4x8xf32>
  %4 = uop.add %3, %f : tensor<4x8xf32>
  uop.sink %4 : tensor<4x8xf32>
  return
}

// -----

// A value broadcast along the output's rows is stored over the one range it depends on.
// SPLIT-LABEL: func.func @split_broadcast
// SPLIT: %[[J:.*]] = uop.range loop 8 id 1
// SPLIT: %[[S:.*]] = uop.bufferize %{{.*}} over(%[[J]]) {fuse = "split: a kernel would exceed 16 ops", reason = "split"} : f32 -> tensor<8xf32>
// SPLIT-NEXT: uop.index %[[S]][%[[J]]] : tensor<8xf32>
// SPLIT: uop.bufferize %{{.*}} {reason = "output"} : f32 -> tensor<4x8xf32>
func.func @split_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  %0 = uop.exp2 %b : tensor<8xf32>
  %1 = uop.exp2 %0 : tensor<8xf32>
  %2 = uop.exp2 %1 : tensor<8xf32>
  %3 = uop.exp2 %2 : tensor<8xf32>
  %4 = uop.exp2 %3 : tensor<8xf32>
  %be = uop.reshape %4 : tensor<8xf32> -> tensor<1x8xf32>
  %bx = uop.expand %be : tensor<1x8xf32> -> tensor<4x8xf32>
  %s = uop.add %a, %bx : tensor<4x8xf32>
  uop.sink %s : tensor<4x8xf32>
  return
}

// -----

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
  %0 = uop.exp2 %a : tensor<4x8xf32>
  %1 = uop.exp2 %0 : tensor<4x8xf32>
  %2 = uop.exp2 %1 : tensor<4x8xf32>
  %3 = uop.exp2 %2 : tensor<4x8xf32>
  %4 = uop.exp2 %3 : tensor<4x8xf32>
  %5 = uop.exp2 %4 : tensor<4x8xf32>
  %r = uop.reduce add %5 [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  uop.sink %r : tensor<4x1xf32>
  return
}

// -----

// Stored over its reduce range, a value in this reduction's body would take more than 2^22 elements: the kernel is
// left whole, past max_ops.
// SPLIT-LABEL: func.func @big_reduce_body
// SPLIT-NOT: reason = "split"
// SPLIT-COUNT-6: uop.exp2
// SPLIT-NEXT: uop.range_reduce add
// SPLIT-NEXT: uop.bufferize %{{.*}} {reason = "output"}
// SPLIT-EXPLAIN: pytc-fuse: left a part of tensor<4096x1xf32> whole (a kernel would exceed 16 ops): a value inside a reduction's body
func.func @big_reduce_body(%a: tensor<4096x2048xf32>) {
  %0 = uop.exp2 %a : tensor<4096x2048xf32>
  %1 = uop.exp2 %0 : tensor<4096x2048xf32>
  %2 = uop.exp2 %1 : tensor<4096x2048xf32>
  %3 = uop.exp2 %2 : tensor<4096x2048xf32>
  %4 = uop.exp2 %3 : tensor<4096x2048xf32>
  %5 = uop.exp2 %4 : tensor<4096x2048xf32>
  %r = uop.reduce add %5 [1] : tensor<4096x2048xf32> -> tensor<4096x1xf32>
  uop.sink %r : tensor<4096x1xf32>
  return
}
