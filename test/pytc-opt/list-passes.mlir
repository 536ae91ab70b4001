// RUN: pytc-opt --list-passes | FileCheck %s

// CHECK: pytc passes:
// CHECK-NEXT: pytc-bufferize {{.+}}
// CHECK-NEXT: pytc-fuse {{.+}}
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
// CHECK: canonicalize
