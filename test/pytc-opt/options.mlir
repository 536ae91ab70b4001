// Pass options are typed and range-checked before any pass runs: one `pytc-opt: error:` line, exit 1, no IR.
// RUN: not pytc-opt %s -pytc-vectorize='lanes=abc' 2>&1 | FileCheck %s --check-prefix=LANES-TYPE
// RUN: not pytc-opt %s -pytc-vectorize='lanes=0' 2>&1 | FileCheck %s --check-prefix=LANES-ZERO
// RUN: not pytc-opt %s -pytc-vectorize='lanes=12' 2>&1 | FileCheck %s --check-prefix=LANES-POW2
// RUN: not pytc-opt %s -pytc-vectorize='lanes=128' 2>&1 | FileCheck %s --check-prefix=LANES-MAX
// RUN: not pytc-opt %s -pytc-vectorize='lanes=8.0' 2>&1 | FileCheck %s --check-prefix=LANES-FLOAT
// RUN: not pytc-opt %s -pytc-vectorize='lanes=' 2>&1 | FileCheck %s --check-prefix=LANES-EMPTY
// RUN: not pytc-opt %s -pytc-vectorize='rows=0' 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not pytc-opt %s -pytc-vectorize='rows=four' 2>&1 | FileCheck %s --check-prefix=ROWS-TYPE
// RUN: not pytc-opt %s -pytc-vectorize='vectors=-2' 2>&1 | FileCheck %s --check-prefix=VECTORS
// RUN: not pytc-opt %s -pytc-vectorize='vectors=2x' 2>&1 | FileCheck %s --check-prefix=VECTORS-TYPE
// RUN: not pytc-opt %s -pytc-vectorize='group=0' 2>&1 | FileCheck %s --check-prefix=GROUP
// RUN: not pytc-opt %s -pytc-vectorize='group=1e9' 2>&1 | FileCheck %s --check-prefix=GROUP-TYPE
// RUN: not pytc-opt %s -pytc-vectorize='explain=maybe' 2>&1 | FileCheck %s --check-prefix=VEC-EXPLAIN
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-vectorize{lanes=8,rows=2})' 2>&1 | FileCheck %s --check-prefix=COMMA
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-vectorize{lanes=8 lanes=16})' 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-fuse{max_row=lots})' 2>&1 | FileCheck %s --check-prefix=ROW
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-fuse{max_row=-1})' 2>&1 | FileCheck %s --check-prefix=ROW-RANGE
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-fuse{max_buffers=many})' 2>&1 | FileCheck %s --check-prefix=BUFFERS
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-fuse{max_buffers=-3})' 2>&1 | FileCheck %s --check-prefix=BUFFERS-RANGE
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-fuse{max_ops=1.5})' 2>&1 | FileCheck %s --check-prefix=OPS
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-fuse{max_ops=-1})' 2>&1 | FileCheck %s --check-prefix=OPS-RANGE
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-fuse{explain=yes})' 2>&1 | FileCheck %s --check-prefix=FUSE-EXPLAIN
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-fuse{max_row})' 2>&1 | FileCheck %s --check-prefix=NO-VALUE
// RUN: not pytc-opt %s -pytc-schedule='report=2' 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not pytc-opt %s -pytc-order-loops='max_accumulators=big' 2>&1 | FileCheck %s --check-prefix=ACCUMULATORS
// RUN: not pytc-opt %s -pytc-order-loops='max_accumulators=-1' 2>&1 | FileCheck %s --check-prefix=ACCUMULATORS-RANGE
// RUN: not pytc-opt %s -pytc-split-reduce='threshold=0' 2>&1 | FileCheck %s --check-prefix=THRESHOLD
// RUN: not pytc-opt %s -pytc-split-reduce='threshold=half' 2>&1 | FileCheck %s --check-prefix=THRESHOLD-TYPE
// RUN: not pytc-opt %s -pytc-split-reduce='max_partials=-1' 2>&1 | FileCheck %s --check-prefix=PARTIALS
// RUN: not pytc-opt %s -pytc-split-reduce='max_partials=0x10' 2>&1 | FileCheck %s --check-prefix=PARTIALS-TYPE
// RUN: not pytc-opt %s -pytc-lower-kernels='lanes=8' 2>&1 | FileCheck %s --check-prefix=NONE
// A bad option in a later pass stops the pipeline before the first pass runs (no IR, no pass output).
// RUN: not pytc-opt %s -pytc-rangeify -pytc-schedule='report=1' -pytc-vectorize='lanes=3' 2>&1 | FileCheck %s --check-prefix=LATER

// LANES-TYPE: pytc-opt: error: pytc-vectorize: option lanes expects an integer, got 'abc'
// LANES-ZERO: pytc-opt: error: pytc-vectorize: option lanes expects a power of two from 1 to 64, got 0
// LANES-POW2: pytc-opt: error: pytc-vectorize: option lanes expects a power of two from 1 to 64, got 12
// LANES-MAX: pytc-opt: error: pytc-vectorize: option lanes expects a power of two from 1 to 64, got 128
// LANES-FLOAT: pytc-opt: error: pytc-vectorize: option lanes expects an integer, got '8.0'
// LANES-EMPTY: pytc-opt: error: pytc-vectorize: option lanes expects an integer, got ''
// ROWS: pytc-opt: error: pytc-vectorize: option rows expects an integer from 1 to 64, got 0
// ROWS-TYPE: pytc-opt: error: pytc-vectorize: option rows expects an integer, got 'four'
// VECTORS: pytc-opt: error: pytc-vectorize: option vectors expects an integer from 1 to 16, got -2
// VECTORS-TYPE: pytc-opt: error: pytc-vectorize: option vectors expects an integer, got '2x'
// GROUP: pytc-opt: error: pytc-vectorize: option group expects an integer from 1 to 4096, got 0
// GROUP-TYPE: pytc-opt: error: pytc-vectorize: option group expects an integer, got '1e9'
// VEC-EXPLAIN: pytc-opt: error: pytc-vectorize: option explain expects true, false, 1 or 0, got 'maybe'
// COMMA: pytc-opt: error: pytc-vectorize: option lanes expects an integer, got '8,rows=2' (options are separated by spaces)
// TWICE: pytc-opt: error: pytc-vectorize: option lanes is given twice
// ROW: pytc-opt: error: pytc-fuse: option max_row expects an integer, got 'lots'
// ROW-RANGE: pytc-opt: error: pytc-fuse: option max_row expects an integer >= 0, got -1
// BUFFERS: pytc-opt: error: pytc-fuse: option max_buffers expects an integer, got 'many'
// BUFFERS-RANGE: pytc-opt: error: pytc-fuse: option max_buffers expects an integer >= 0, got -3
// OPS: pytc-opt: error: pytc-fuse: option max_ops expects an integer, got '1.5'
// OPS-RANGE: pytc-opt: error: pytc-fuse: option max_ops expects an integer >= 0, got -1
// FUSE-EXPLAIN: pytc-opt: error: pytc-fuse: option explain expects true, false, 1 or 0, got 'yes'
// NO-VALUE: pytc-opt: error: option 'max_row' of pytc-fuse is not key=value
// REPORT: pytc-opt: error: pytc-schedule: option report expects true, false, 1 or 0, got '2'
// ACCUMULATORS: pytc-opt: error: pytc-order-loops: option max_accumulators expects an integer, got 'big'
// ACCUMULATORS-RANGE: pytc-opt: error: pytc-order-loops: option max_accumulators expects an integer >= 0, got -1
// THRESHOLD: pytc-opt: error: pytc-split-reduce: option threshold expects an integer >= 1, got 0
// THRESHOLD-TYPE: pytc-opt: error: pytc-split-reduce: option threshold expects an integer, got 'half'
// PARTIALS: pytc-opt: error: pytc-split-reduce: option max_partials expects an integer >= 0, got -1
// PARTIALS-TYPE: pytc-opt: error: pytc-split-reduce: option max_partials expects an integer, got '0x10'
// NONE: pytc-opt: error: pytc-lower-kernels has no option 'lanes' (options: none)
// LATER-NOT: func.func
// LATER-NOT: schedule @
// LATER: pytc-opt: error: pytc-vectorize: option lanes expects a power of two from 1 to 64, got 3
// LATER-NOT: func.func

func.func @graph(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}
