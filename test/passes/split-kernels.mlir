// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{max_row=0},canonicalize,cse,pytc-bufferize,pytc-split-kernels)' | FileCheck %s

// Each store with its loop nest becomes a kernel function: written buffer first, then the
// buffers it reads. The reduction kernel is named r_<loop>_<reduce>, the elementwise one
// E_<loops>; range ids restart at 0 in each kernel. The graph keeps the temporary buffer and
// launches the kernels in order; no index-level code is left in it.
// CHECK-LABEL: func.func @r_4_8
// CHECK-SAME: (%[[RO:[a-z0-9]+]]: memref<4x1xf32>, %[[RA:[a-z0-9]+]]: memref<4x8xf32>) attributes {pytc.kernel}
// CHECK-DAG: %[[I:.*]] = uop.range loop 4 id {{[01]}}
// CHECK-DAG: %[[K:.*]] = uop.range reduce 8 id {{[01]}}
// CHECK: %[[X:.*]] = uop.index %[[RA]][%[[I]], %[[K]]] : memref<4x8xf32>
// CHECK: %[[M:.*]] = uop.range_reduce max %[[X]] over(%[[K]]) : f32
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[W:.*]] = uop.store %[[M]], %[[RO]][%[[I]], %[[C0]]] : memref<4x1xf32>
// CHECK: uop.end %[[W]] over(%[[I]]) : memref<4x1xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @E_4_8
// CHECK-SAME: (%[[EO:[a-z0-9]+]]: memref<4x8xf32>, %{{[a-z0-9]+}}: [[T1:memref<4x[18]xf32>]], %{{[a-z0-9]+}}: [[T2:memref<4x[18]xf32>]]) attributes {pytc.kernel}
// CHECK-DAG: %[[I2:.*]] = uop.range loop 4 id {{[01]}}
// CHECK-DAG: %[[J2:.*]] = uop.range loop 8 id {{[01]}}
// CHECK-DAG: uop.index %{{.*}}[%[[I2]], %[[J2]]] : memref<4x8xf32>
// CHECK-DAG: uop.index %{{.*}}[%[[I2]], %{{.*}}] : memref<4x1xf32>
// CHECK: %[[W2:.*]] = uop.store %{{.*}}, %[[EO]][%[[I2]], %[[J2]]] : memref<4x8xf32>
// CHECK: uop.end %[[W2]] over(%[[I2]], %[[J2]]) : memref<4x8xf32>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4x8xf32>, %[[OUT:[a-z0-9]+]]: memref<4x8xf32>)
// CHECK-NOT: pytc.kernel
// CHECK-NEXT: %[[T:.*]] = uop.buffer : memref<4x1xf32>
// CHECK-NEXT: uop.launch @r_4_8(%[[T]], %[[A]]) : memref<4x1xf32>, memref<4x8xf32>
// CHECK-NEXT: uop.launch @E_4_8(%[[OUT]], %{{.*}}, %{{.*}}) : memref<4x8xf32>, [[T1]], [[T2]]
// CHECK-NEXT: uop.sink %[[OUT]] : memref<4x8xf32>
// CHECK-NEXT: return
func.func @softmax(%a: tensor<4x8xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %e = uop.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %n = uop.neg %e : tensor<4x8xf32>
  %s = uop.add %a, %n : tensor<4x8xf32>
  uop.sink %s : tensor<4x8xf32>
  return
}

// -----

// Two structurally identical kernels (the same body once range ids are renumbered) are
// emitted once and launched twice; the third kernel, also E_4, gets a suffix.
// CHECK-LABEL: func.func @E_4(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<4xf32>, %{{[a-z0-9]+}}: memref<4xf32>) attributes {pytc.kernel}
// CHECK: uop.range loop 4 id 0
// CHECK: uop.exp2
// CHECK-NOT: func.func @E_4(
// CHECK-LABEL: func.func @E_4n1(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<4xf32>, %{{[a-z0-9]+}}: memref<4xf32>, %{{[a-z0-9]+}}: memref<4xf32>) attributes {pytc.kernel}
// CHECK: uop.add
// CHECK-LABEL: func.func @twice
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32>, %[[B:[a-z0-9]+]]: memref<4xf32>, %[[OUT:[a-z0-9]+]]: memref<4xf32>)
// CHECK: %[[X:.*]] = uop.buffer : memref<4xf32>
// CHECK-NEXT: uop.launch @E_4(%[[X]], %[[A]])
// CHECK-NEXT: %[[Y:.*]] = uop.buffer : memref<4xf32>
// CHECK-NEXT: uop.launch @E_4(%[[Y]], %[[B]])
// CHECK-NEXT: uop.launch @E_4n1(%[[OUT]], {{.*}}) : memref<4xf32>, memref<4xf32>, memref<4xf32>
// CHECK-NOT: func.func
func.func @twice(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  %x = uop.exp2 %a : tensor<4xf32>
  %cx = uop.contiguous %x : tensor<4xf32>
  %y = uop.exp2 %b : tensor<4xf32>
  %cy = uop.contiguous %y : tensor<4xf32>
  %s = uop.add %cx, %cy : tensor<4xf32>
  uop.sink %s : tensor<4xf32>
  return
}

// -----

// The name of an existing function is not reused: the kernel gets a suffix.
// CHECK-LABEL: func.func @E_4n1(
// CHECK-SAME: attributes {pytc.kernel}
// CHECK: uop.neg
// CHECK-LABEL: func.func @E_4(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<4xf32>, %[[OUT:[a-z0-9]+]]: memref<4xf32>)
// CHECK-NOT: pytc.kernel
// CHECK-NEXT: uop.launch @E_4n1(%[[OUT]], %[[A]]) : memref<4xf32>, memref<4xf32>
func.func @E_4(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}

// -----

// A buffer read twice by a kernel is one parameter.
// CHECK-LABEL: func.func @E_4(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<4xf32>, %[[P:[a-z0-9]+]]: memref<4xf32>) attributes {pytc.kernel}
// CHECK-DAG: uop.index %[[P]][%{{.*}}] : memref<4xf32>
// CHECK-DAG: uop.index %[[P]][%{{.*}}] : memref<4xf32>
// CHECK-LABEL: func.func @read_twice
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32>, %[[OUT:[a-z0-9]+]]: memref<4xf32>)
// CHECK-NEXT: uop.launch @E_4(%[[OUT]], %[[A]]) : memref<4xf32>, memref<4xf32>
func.func @read_twice(%a: tensor<4xf32>) {
  %f = uop.flip %a [0] : tensor<4xf32> -> tensor<4xf32>
  %s = uop.add %a, %f : tensor<4xf32>
  uop.sink %s : tensor<4xf32>
  return
}

// -----

// A kernel reading nothing has only its output; the name lists the sizes of the store's
// loop ranges in dim order.
// CHECK-LABEL: func.func @E_2_3(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<2x3xi32>) attributes {pytc.kernel}
// CHECK-DAG: %[[I:.*]] = uop.range loop 2 id
// CHECK-DAG: %[[J:.*]] = uop.range loop 3 id
// CHECK: %[[W:.*]] = uop.store %{{.*}}, %[[O]][%[[I]], %[[J]]] : memref<2x3xi32>
// CHECK: uop.end %[[W]] over(%[[I]], %[[J]])
// CHECK-LABEL: func.func @iota
// CHECK-NEXT: uop.launch @E_2_3(%{{.*}}) : memref<2x3xi32>
func.func @iota() {
  %i = uop.iota 1 : tensor<2x3xi32>
  uop.sink %i : tensor<2x3xi32>
  return
}

// -----

// An output read by a later kernel is passed to it as an input.
// CHECK-LABEL: func.func @E_4(
// CHECK: uop.neg
// CHECK-LABEL: func.func @E_4n1(
// CHECK: uop.exp2
// CHECK-LABEL: func.func @two_outputs
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32>, %[[N:[a-z0-9]+]]: memref<4xf32>, %[[E:[a-z0-9]+]]: memref<4xf32>)
// CHECK-NEXT: uop.launch @E_4(%[[N]], %[[A]])
// CHECK-NEXT: uop.launch @E_4n1(%[[E]], %[[N]])
// CHECK-NEXT: uop.sink %[[N]], %[[E]]
func.func @two_outputs(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  %e = uop.exp2 %n : tensor<4xf32>
  uop.sink %n, %e : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// A store with no loop range (every dim size 1) stays a kernel of its own, without loops;
// a reduce not through an expand stays inside its reader's kernel.
// CHECK-LABEL: func.func @r_8(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<1xf32>, %[[P:[a-z0-9]+]]: memref<8xf32>) attributes {pytc.kernel}
// CHECK-NOT: uop.range loop
// CHECK: %[[K:.*]] = uop.range reduce 8 id 0
// CHECK: %[[R:.*]] = uop.range_reduce add %{{.*}} over(%[[K]]) : f32
// CHECK: %[[N:.*]] = uop.neg %[[R]] : f32
// CHECK: %[[W:.*]] = uop.store %[[N]], %[[O]][%{{.*}}] : memref<1xf32>
// CHECK: uop.end %[[W]] over() : memref<1xf32>
// CHECK-LABEL: func.func @sum_neg
// CHECK-NEXT: uop.launch @r_8(
// CHECK-NOT: uop.launch
func.func @sum_neg(%a: tensor<8xf32>) {
  %r = uop.reduce add %a [0] : tensor<8xf32> -> tensor<1xf32>
  %n = uop.neg %r : tensor<1xf32>
  uop.sink %n : tensor<1xf32>
  return
}

// -----

// A reduction over several axes names its reduce sizes in axis order, and the kernel's ranges
// are numbered in that order too.
// CHECK-LABEL: func.func @r_4_8(
// CHECK-DAG: uop.range reduce 4 id 0
// CHECK-DAG: uop.range reduce 8 id 1
// CHECK-LABEL: func.func @reduce_all
// CHECK: uop.launch @r_4_8(
func.func @reduce_all(%a: tensor<4x8xf32>) {
  %r = uop.reduce add %a [0, 1] : tensor<4x8xf32> -> tensor<1x1xf32>
  uop.sink %r : tensor<1x1xf32>
  return
}
