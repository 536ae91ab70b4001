// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(canonicalize,pytc-rangeify,canonicalize,cse,pytc-fuse{max_row=0},canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-schedule,canonicalize,cse,pytc-lower-kernels,canonicalize,cse)' | FileCheck %s

// x - max(x) along rows: a max-reduction kernel into a 4x1 temporary, then an elementwise
// kernel reading it at column 0 for every column.
// CHECK-LABEL: func.func @r_4_8(
// CHECK-SAME: %[[RO:[a-z0-9]+]]: memref<4x1xf32> {llvm.noalias}, %[[RA:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK-NOT: uop.
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK-DAG: %[[FALSE:.*]] = arith.constant false
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{[a-z0-9]+}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: %[[R:.*]]:2 = scf.for %[[K:.*]] = %[[C0]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[NINF]], %[[SEEN:.*]] = %[[FALSE]]) -> (f32, i1) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[RA]][%[[I]], %[[K]]] : memref<4x8xf32>
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[ACC]], %[[X]] fastmath<reassoc,nnan> : f32
// CHECK-NEXT: %[[ISNAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[SEEN2:.*]] = arith.ori %[[SEEN]], %[[ISNAN]] : i1
// CHECK-NEXT: scf.yield %[[M]], %[[SEEN2]] : f32, i1
// CHECK-NEXT: }
// CHECK-NEXT: %[[RESULT:.*]] = arith.select %[[R]]#1, %[[NAN]], %[[R]]#0 : f32
// CHECK-NEXT: memref.store %[[RESULT]], %[[RO]][%[[I]], %[[C0]]] : memref<4x1xf32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-LABEL: func.func @E_4_8(
// CHECK-SAME: %[[EO:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %[[EA:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %[[EM:[a-z0-9]+]]: memref<4x1xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK-NOT: uop.
// CHECK-NOT: scf.for
// CHECK: scf.parallel (%[[I2:.*]], %[[J2:.*]]) = (%{{[a-z0-9]+}}, %[[Z:.*]]) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) {
// CHECK-NEXT: %[[X2:.*]] = memref.load %[[EA]][%[[I2]], %[[J2]]] : memref<4x8xf32>
// CHECK-NEXT: %[[M2:.*]] = memref.load %[[EM]][%[[I2]], %[[Z]]] : memref<4x1xf32>
// CHECK-NEXT: %[[N2:.*]] = arith.negf %[[M2]] : f32
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[X2]], %[[N2]] : f32
// CHECK-NEXT: memref.store %[[S2]], %[[EO]][%[[I2]], %[[J2]]] : memref<4x8xf32>
// CHECK-NEXT: scf.reduce
// CHECK-LABEL: func.func @softmax_shift
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4x8xf32>, %[[OUT:[a-z0-9]+]]: memref<4x8xf32>)
// CHECK-SAME: attributes {pytc.buffers = 1 : i64, pytc.kernels = 2 : i64, pytc.peak_bytes = 16 : i64}
// CHECK-NEXT: %[[T:.*]] = uop.buffer : memref<4x1xf32>
// CHECK-NEXT: uop.launch @r_4_8(%[[T]], %[[A]]) : memref<4x1xf32>, memref<4x8xf32>
// CHECK-NEXT: uop.launch @E_4_8(%[[OUT]], %[[A]], %[[T]]) : memref<4x8xf32>, memref<4x8xf32>, memref<4x1xf32>
// CHECK-NEXT: uop.sink %[[OUT]] : memref<4x8xf32>
func.func @softmax_shift(%a: tensor<4x8xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %e = uop.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %n = uop.neg %e : tensor<4x8xf32>
  %s = uop.add %a, %n : tensor<4x8xf32>
  uop.sink %s : tensor<4x8xf32>
  return
}

// -----

// The whole softmax: max, then the sum of exp2(x - max) (the shifted exponential is
// recomputed inside the sum's loop, not stored), then exp2(x - max) / sum. Three kernels;
// the two 4x1 temporaries are live together.
// CHECK-LABEL: func.func @r_4_8(
// CHECK: arith.maximumf
// CHECK-LABEL: func.func @r_4_8n1(
// CHECK-SAME: %[[SO:[a-z0-9]+]]: memref<4x1xf32> {llvm.noalias}, %[[SA:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %[[SM:[a-z0-9]+]]: memref<4x1xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK-NEXT: %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-DAG: %[[X:.*]] = memref.load %[[SA]][%[[I]], %[[K]]] : memref<4x8xf32>
// CHECK-DAG: %[[M:.*]] = memref.load %[[SM]][%[[I]], %{{.*}}] : memref<4x1xf32>
// CHECK: %[[N:.*]] = arith.negf %[[M]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[X]], %[[N]] : f32
// CHECK-NOT: math.exp2
// CHECK: %[[S:.*]] = arith.addf %[[ACC]], %{{.*}} fastmath<reassoc> : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[R]], %[[SO]][%[[I]], %{{.*}}] : memref<4x1xf32>
// CHECK-LABEL: func.func @E_4_8(
// CHECK-SAME: %[[EO:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %[[EA:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %[[EM:[a-z0-9]+]]: memref<4x1xf32> {llvm.noalias}, %[[ES:[a-z0-9]+]]: memref<4x1xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: scf.parallel (%[[I2:.*]], %[[J2:.*]]) =
// CHECK-NOT: scf.for
// CHECK-DAG: %[[X2:.*]] = memref.load %[[EA]][%[[I2]], %[[J2]]] : memref<4x8xf32>
// CHECK-DAG: %[[M2:.*]] = memref.load %[[EM]][%[[I2]], %{{.*}}] : memref<4x1xf32>
// CHECK: %[[N2:.*]] = arith.negf %[[M2]] : f32
// CHECK-NEXT: %[[D2:.*]] = arith.addf %[[X2]], %[[N2]] : f32
// CHECK-NOT: math.exp2
// CHECK: %[[S2:.*]] = memref.load %[[ES]][%[[I2]], %{{.*}}] : memref<4x1xf32>
// CHECK-NEXT: %[[R2:.*]] = arith.divf %[[ONE]], %[[S2]] : f32
// CHECK-NEXT: %[[P2:.*]] = arith.mulf %{{.*}}, %[[R2]] : f32
// CHECK-NEXT: memref.store %[[P2]], %[[EO]][%[[I2]], %[[J2]]] : memref<4x8xf32>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4x8xf32>, %[[OUT:[a-z0-9]+]]: memref<4x8xf32>)
// CHECK-SAME: attributes {pytc.buffers = 2 : i64, pytc.kernels = 3 : i64, pytc.peak_bytes = 32 : i64}
// CHECK-NEXT: %[[MAX:.*]] = uop.buffer : memref<4x1xf32>
// CHECK-NEXT: %[[SUM:.*]] = uop.buffer : memref<4x1xf32>
// CHECK-NEXT: uop.launch @r_4_8(%[[MAX]], %[[A]])
// CHECK-NEXT: uop.launch @r_4_8n1(%[[SUM]], %[[A]], %[[MAX]])
// CHECK-NEXT: uop.launch @E_4_8(%[[OUT]], %[[A]], %[[MAX]], %[[SUM]])
// CHECK-NEXT: uop.sink %[[OUT]]
func.func @softmax(%a: tensor<4x8xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %e = uop.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %n = uop.neg %e : tensor<4x8xf32>
  %s = uop.add %a, %n : tensor<4x8xf32>
  %x = uop.exp2 %s : tensor<4x8xf32>
  %t = uop.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %te = uop.expand %t : tensor<4x1xf32> -> tensor<4x8xf32>
  %r = uop.recip %te : tensor<4x8xf32>
  %o = uop.mul %x, %r : tensor<4x8xf32>
  uop.sink %o : tensor<4x8xf32>
  return
}

// -----

// A 4x3 @ 3x5 matmul written as reshape/expand/mul/reduce: one kernel, an scf.parallel over
// the 4x5 output and an scf.for over the 3 products, reading a[i, k] and b[k, j].
// CHECK-LABEL: func.func @r_4_5_3(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<4x5xf32> {llvm.noalias}, %[[P1:[a-z0-9]+]]: [[T1:memref<[0-9x]+xf32>]] {llvm.noalias}, %[[P2:[a-z0-9]+]]: [[T2:memref<[0-9x]+xf32>]] {llvm.noalias}, %[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index) attributes {pytc.extent = 4 : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK-NOT: uop.
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%[[BEGIN]], %{{.*}}) to (%[[END]], %[[C5]]) step (%{{.*}}, %{{.*}}) {
// CHECK-NEXT: %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[C3]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-DAG: %[[X:.*]] = memref.load %{{.*}}[%[[I]], %[[K]]] : memref<4x3xf32>
// CHECK-DAG: %[[Y:.*]] = memref.load %{{.*}}[%[[K]], %[[J]]] : memref<3x5xf32>
// CHECK: %[[P:.*]] = arith.mulf
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] fastmath<reassoc> : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[R]], %[[O]][%[[I]], %[[J]]] : memref<4x5xf32>
// CHECK-NEXT: scf.reduce
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4x3xf32>, %[[B:[a-z0-9]+]]: memref<3x5xf32>, %[[OUT:[a-z0-9]+]]: memref<4x5xf32>)
// CHECK-SAME: attributes {pytc.buffers = 0 : i64, pytc.kernels = 1 : i64, pytc.peak_bytes = 0 : i64}
// CHECK-NEXT: uop.launch @r_4_5_3(%[[OUT]], %{{[a-z0-9]+}}, %{{[a-z0-9]+}}) : memref<4x5xf32>, [[T1]], [[T2]]
// CHECK-NEXT: uop.sink %[[OUT]]
func.func @matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) {
  %a1 = uop.reshape %a : tensor<4x3xf32> -> tensor<4x1x3xf32>
  %a2 = uop.expand %a1 : tensor<4x1x3xf32> -> tensor<4x5x3xf32>
  %bt = uop.permute %b [1, 0] : tensor<3x5xf32> -> tensor<5x3xf32>
  %b1 = uop.reshape %bt : tensor<5x3xf32> -> tensor<1x5x3xf32>
  %b2 = uop.expand %b1 : tensor<1x5x3xf32> -> tensor<4x5x3xf32>
  %m = uop.mul %a2, %b2 : tensor<4x5x3xf32>
  %r = uop.reduce add %m [2] : tensor<4x5x3xf32> -> tensor<4x5x1xf32>
  %o = uop.reshape %r : tensor<4x5x1xf32> -> tensor<4x5xf32>
  uop.sink %o : tensor<4x5xf32>
  return
}

// -----

// Two outputs sharing a + b: the shared sum is cheap, so it is recomputed in each output's
// kernel and no temporary is left; two kernels, both reading a and b.
// CHECK-LABEL: func.func @E_4(
// CHECK-SAME: %[[O1:[a-z0-9]+]]: memref<4xf32> {llvm.noalias}, %[[X1:[a-z0-9]+]]: memref<4xf32> {llvm.noalias}, %[[Y1:[a-z0-9]+]]: memref<4xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK: scf.parallel (%[[I1:.*]]) =
// CHECK-DAG: %[[U1:.*]] = memref.load %[[X1]][%[[I1]]] : memref<4xf32>
// CHECK-DAG: %[[V1:.*]] = memref.load %[[Y1]][%[[I1]]] : memref<4xf32>
// CHECK: %[[S1:.*]] = arith.addf
// CHECK-NOT: math.exp2
// CHECK: memref.store %{{.*}}, %[[O1]][%[[I1]]] : memref<4xf32>
// CHECK-LABEL: func.func @E_4n1(
// CHECK-SAME: %[[O2:[a-z0-9]+]]: memref<4xf32> {llvm.noalias}, %[[X2:[a-z0-9]+]]: memref<4xf32> {llvm.noalias}, %[[Y2:[a-z0-9]+]]: memref<4xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK: scf.parallel (%[[I2:.*]]) =
// CHECK-DAG: %[[U2:.*]] = memref.load %[[X2]][%[[I2]]] : memref<4xf32>
// CHECK-DAG: %[[V2:.*]] = memref.load %[[Y2]][%[[I2]]] : memref<4xf32>
// CHECK: %[[S2:.*]] = arith.addf
// CHECK-NEXT: %[[N2:.*]] = arith.negf %[[S2]] : f32
// CHECK-NEXT: memref.store %[[N2]], %[[O2]][%[[I2]]] : memref<4xf32>
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<4xf32>, %[[B:[a-z0-9]+]]: memref<4xf32>, %[[EXP:[a-z0-9]+]]: memref<4xf32>, %[[NEG:[a-z0-9]+]]: memref<4xf32>)
// CHECK-SAME: attributes {pytc.buffers = 0 : i64, pytc.kernels = 2 : i64, pytc.peak_bytes = 0 : i64}
// CHECK-NOT: uop.buffer
// CHECK-NEXT: uop.launch @E_4(%[[EXP]], {{%[a-z0-9]+, %[a-z0-9]+}}) : memref<4xf32>, memref<4xf32>, memref<4xf32>
// CHECK-NEXT: uop.launch @E_4n1(%[[NEG]], {{%[a-z0-9]+, %[a-z0-9]+}}) : memref<4xf32>, memref<4xf32>, memref<4xf32>
// CHECK-NEXT: uop.sink %[[EXP]], %[[NEG]] : memref<4xf32>, memref<4xf32>
func.func @shared(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  %e = uop.add %a, %b : tensor<4xf32>
  %x = uop.exp2 %e : tensor<4xf32>
  %y = uop.neg %e : tensor<4xf32>
  uop.sink %x, %y : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// A graph over two devices: the sum runs on the graph's device (CPU) into a temporary, a
// transfer moves it to AMD, and the kernel that scales it there writes the AMD output. The
// graph keeps the launches and the transfer in order; the kernels are lowered as any other.
// CHECK-LABEL: func.func @two_devices(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<4x8xf32>, %[[OUT:[a-z0-9]+]]: memref<4x1xf32> {uop.device = "AMD"}
// CHECK: %[[T:.*]] = uop.buffer : memref<4x1xf32>
// CHECK: %[[D:.*]] = uop.buffer {uop.device = "AMD"} : memref<4x1xf32>
// CHECK: uop.launch @r_4_8(%[[T]], %[[A]])
// CHECK-NEXT: uop.transfer %[[T]] into %[[D]] : memref<4x1xf32>
// CHECK-NEXT: uop.launch @E_4(%[[OUT]], %[[D]])
func.func @two_devices(%a: tensor<4x8xf32>) attributes {uop.device = "CPU"} {
  %s = uop.reduce add %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %c = uop.copy %s to "AMD" : tensor<4x1xf32>
  %two = uop.const 2.0 : tensor<4x1xf32>
  %m = uop.mul %c, %two : tensor<4x1xf32>
  uop.sink %m : tensor<4x1xf32>
  return
}
