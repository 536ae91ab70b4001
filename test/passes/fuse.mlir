// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{max_buffers=1},canonicalize,cse)' | FileCheck %s --check-prefix=LIMIT
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{max_ops=5},canonicalize,cse)' | FileCheck %s --check-prefix=OPS
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{explain=1})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

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
