// RUN: pytc-opt %s --split-input-file -pytc-split-kernels | FileCheck %s
// Input: bufferized graphs (pytc-bufferize's output): stores closed by uop.end, temporaries in uop.buffer.

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
func.func @softmax(%a: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %x = uop.index %a[%i, %k] : memref<4x8xf32>
  %max = uop.range_reduce max %x over(%k) : f32
  %rows = uop.buffer : memref<4x1xf32>
  %w = uop.store %max, %rows[%i, %c0] : memref<4x1xf32>
  %row_max = uop.end %w over(%i) : memref<4x1xf32>
  %i2 = uop.range loop 4 id 2
  %j2 = uop.range loop 8 id 3
  %y = uop.index %a[%i2, %j2] : memref<4x8xf32>
  %m = uop.index %row_max[%i2, %c0] : memref<4x1xf32>
  %n = uop.neg %m : f32
  %s = uop.add %y, %n : f32
  %w2 = uop.store %s, %out[%i2, %j2] : memref<4x8xf32>
  %done = uop.end %w2 over(%i2, %j2) : memref<4x8xf32>
  uop.sink %done : memref<4x8xf32>
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
func.func @twice(%a: memref<4xf32>, %b: memref<4xf32>, %out: memref<4xf32>) {
  %i = uop.range loop 4 id 0
  %ai = uop.index %a[%i] : memref<4xf32>
  %ea = uop.exp2 %ai : f32
  %ta = uop.buffer : memref<4xf32>
  %wa = uop.store %ea, %ta[%i] : memref<4xf32>
  %exp_a = uop.end %wa over(%i) : memref<4xf32>
  %j = uop.range loop 4 id 1
  %bj = uop.index %b[%j] : memref<4xf32>
  %eb = uop.exp2 %bj : f32
  %tb = uop.buffer : memref<4xf32>
  %wb = uop.store %eb, %tb[%j] : memref<4xf32>
  %exp_b = uop.end %wb over(%j) : memref<4xf32>
  %k = uop.range loop 4 id 2
  %x = uop.index %exp_a[%k] : memref<4xf32>
  %y = uop.index %exp_b[%k] : memref<4xf32>
  %s = uop.add %x, %y : f32
  %w = uop.store %s, %out[%k] : memref<4xf32>
  %done = uop.end %w over(%k) : memref<4xf32>
  uop.sink %done : memref<4xf32>
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
func.func @E_4(%a: memref<4xf32>, %out: memref<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : memref<4xf32>
  %n = uop.neg %x : f32
  %w = uop.store %n, %out[%i] : memref<4xf32>
  %done = uop.end %w over(%i) : memref<4xf32>
  uop.sink %done : memref<4xf32>
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
func.func @read_twice(%a: memref<4xf32>, %out: memref<4xf32>) {
  %c3 = arith.constant 3 : index
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : memref<4xf32>
  %flip = arith.subi %c3, %i : index
  %y = uop.index %a[%flip] : memref<4xf32>
  %s = uop.add %x, %y : f32
  %w = uop.store %s, %out[%i] : memref<4xf32>
  %done = uop.end %w over(%i) : memref<4xf32>
  uop.sink %done : memref<4xf32>
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
func.func @iota(%out: memref<2x3xi32>) {
  %i = uop.range loop 2 id 0
  %j = uop.range loop 3 id 1
  %v = arith.index_cast %j : index to i32
  %w = uop.store %v, %out[%i, %j] : memref<2x3xi32>
  %done = uop.end %w over(%i, %j) : memref<2x3xi32>
  uop.sink %done : memref<2x3xi32>
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
func.func @two_outputs(%a: memref<4xf32>, %first: memref<4xf32>, %second: memref<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : memref<4xf32>
  %n = uop.neg %x : f32
  %w = uop.store %n, %first[%i] : memref<4xf32>
  %first_done = uop.end %w over(%i) : memref<4xf32>
  %j = uop.range loop 4 id 1
  %y = uop.index %first_done[%j] : memref<4xf32>
  %e = uop.exp2 %y : f32
  %w2 = uop.store %e, %second[%j] : memref<4xf32>
  %second_done = uop.end %w2 over(%j) : memref<4xf32>
  uop.sink %first_done, %second_done : memref<4xf32>, memref<4xf32>
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
func.func @sum_neg(%a: memref<8xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %k = uop.range reduce 8 id 0
  %x = uop.index %a[%k] : memref<8xf32>
  %sum = uop.range_reduce add %x over(%k) : f32
  %n = uop.neg %sum : f32
  %w = uop.store %n, %out[%c0] : memref<1xf32>
  %done = uop.end %w over() : memref<1xf32>
  uop.sink %done : memref<1xf32>
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
func.func @reduce_all(%a: memref<4x8xf32>, %out: memref<1x1xf32>) {
  %c0 = arith.constant 0 : index
  %k0 = uop.range reduce 4 id 0
  %k1 = uop.range reduce 8 id 1
  %x = uop.index %a[%k0, %k1] : memref<4x8xf32>
  %sum = uop.range_reduce add %x over(%k0, %k1) : f32
  %w = uop.store %sum, %out[%c0, %c0] : memref<1x1xf32>
  %done = uop.end %w over() : memref<1x1xf32>
  uop.sink %done : memref<1x1xf32>
  return
}

// -----

// Transfers stay in the graph between the launches; what read a transfer's result reads
// the buffer it wrote.
// CHECK-LABEL: func.func @transfer(
// CHECK: %[[B:.*]] = uop.buffer : memref<4xf32>
// CHECK: uop.launch @[[K:.*]](%[[B]], %arg0)
// CHECK: uop.transfer %[[B]] into %arg1 : memref<4xf32>
// CHECK: uop.sink %arg1 : memref<4xf32>
func.func @transfer(%a: memref<4xf32>, %out: memref<4xf32> {uop.device = "AMD"}) attributes {uop.device = "CPU"} {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : memref<4xf32>
  %e = uop.exp2 %x : f32
  %b = uop.buffer : memref<4xf32>
  %w = uop.store %e, %b[%i] : memref<4xf32>
  %d = uop.end %w over(%i) : memref<4xf32>
  %t = uop.transfer %d into %out : memref<4xf32>
  uop.sink %t : memref<4xf32>
  return
}
