// RUN: pytc-opt --list-passes | FileCheck %s

// CHECK: pytc passes:
// CHECK-NEXT: pytc-bufferize {{.+}}
// CHECK-NEXT: pytc-fuse {{.+}} {max_buffers=16 max_ops=2000 max_row=16384 block_columns=32 explain=false}
// CHECK-NEXT: pytc-gpu-emulate {{.+}}
// CHECK-NEXT: pytc-gpu-map {{.+}}
// CHECK-NEXT: pytc-lower-kernels {{.+}}
// CHECK-NEXT: pytc-merge-kernels {{.+}}
// CHECK-NEXT: pytc-merge-ranges {{.+}}
// CHECK-NEXT: pytc-order-loops {{.+}}
// CHECK-NEXT: pytc-rangeify {{.+}}
// CHECK-NEXT: pytc-schedule {{.+}}
// CHECK-NEXT: pytc-split-kernels {{.+}}
// CHECK-NEXT: pytc-split-ranges {{.+}}
// CHECK-NEXT: pytc-split-reduce {{.+}} {threshold=16384 max_partials=4194304 lanes=16}
// CHECK-NEXT: pytc-vectorize {{.+}}
// CHECK: canonicalize
