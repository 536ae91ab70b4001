// RUN: pytc-opt --list-passes | FileCheck %s

// CHECK: pytc passes:
// CHECK-NEXT: pytc-lower-elementwise {{.+}}
// CHECK: canonicalize
