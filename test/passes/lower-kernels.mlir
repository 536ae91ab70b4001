// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse{max_row=0},canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-schedule,pytc-lower-kernels,canonicalize,cse)' | FileCheck %s
// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-rangeify,canonicalize,cse,pytc-fuse,canonicalize,cse,pytc-bufferize,pytc-split-kernels,pytc-schedule,pytc-lower-kernels,canonicalize,cse)' | FileCheck %s --check-prefix=ROW

// A max reduction: scf.parallel over the store's loop range, an scf.for over the reduce
// range carrying the accumulator from -inf, a NaN-ignoring maximumf to combine beside a NaN-seen flag
// (a seen NaN is the result); the kernel body is exactly
// that loop nest. The elementwise kernel is a 2-d scf.parallel with no loop inside. The graph
// keeps its launches.
// CHECK-LABEL: func.func @r_4_8
// CHECK-SAME: (%[[RO:[a-z0-9]+]]: memref<4x1xf32> {llvm.noalias}, %[[RA:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index) attributes {pytc.extent = 4 : i64, pytc.kernel}
// CHECK-NOT: uop.
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK-DAG: %[[FALSE:.*]] = arith.constant false
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%[[BEGIN]]) to (%[[END]]) step (%[[C1]]) {
// CHECK-NEXT: %[[R:.*]]:2 = scf.for %[[K:.*]] = %[[C0]] to %[[C8]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[NINF]], %[[SEEN:.*]] = %[[FALSE]]) -> (f32, i1) {
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
// CHECK-LABEL: func.func @E_4_8
// CHECK-SAME: (%[[EO:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, {{.*}}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel}
// CHECK-NOT: uop.
// CHECK: scf.parallel (%[[I2:.*]], %[[J2:.*]]) = (%{{[a-z0-9]+}}, %[[Z:.*]]) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) {
// CHECK-NOT: scf.for
// CHECK-DAG: memref.load %{{.*}}[%[[I2]], %[[J2]]] : memref<4x8xf32>
// CHECK-DAG: memref.load %{{.*}}[%[[I2]], %[[Z]]] : memref<4x1xf32>
// CHECK: arith.negf
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[EO]][%[[I2]], %[[J2]]] : memref<4x8xf32>
// CHECK-NEXT: scf.reduce
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: uop.buffer
// CHECK-NEXT: uop.launch @r_4_8
// CHECK-NEXT: uop.launch @E_4_8
func.func @softmax(%a: tensor<4x8xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %e = uop.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %n = uop.neg %e : tensor<4x8xf32>
  %s = uop.add %a, %n : tensor<4x8xf32>
  uop.sink %s : tensor<4x8xf32>
  return
}

// -----

// A sum starts from 0 and combines with addf.
// CHECK-LABEL: func.func @r_4_8
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.parallel
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK: %[[X:.*]] = memref.load
// CHECK: arith.addf %[[ACC]], %[[X]] fastmath<reassoc> : f32
func.func @sum(%a: tensor<4x8xf32>) {
  %r = uop.reduce add %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  uop.sink %r : tensor<4x1xf32>
  return
}

// -----

// A product starts from 1 and combines with mulf.
// CHECK-LABEL: func.func @r_4_3
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[ONE]]) -> (f32) {
// CHECK: %[[X:.*]] = memref.load
// CHECK: arith.mulf %[[ACC]], %[[X]] fastmath<reassoc> : f32
func.func @prod(%a: tensor<4x3xf32>) {
  %r = uop.reduce mul %a [1] : tensor<4x3xf32> -> tensor<4x1xf32>
  uop.sink %r : tensor<4x1xf32>
  return
}

// -----

// A signed integer max starts from the smallest i32 and uses maxsi.
// CHECK-LABEL: func.func @r_8
// CHECK-SAME: (%[[O:[a-z0-9]+]]: memref<1xi32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<8xi32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index)
// CHECK-DAG: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[MIN]]) -> (i32) {
// CHECK: %[[X:.*]] = memref.load %[[A]]
// CHECK: arith.maxsi %[[ACC]], %[[X]] : i32
func.func @imax(%a: tensor<8xi32>) {
  %r = uop.reduce max %a [0] : tensor<8xi32> -> tensor<1xi32>
  uop.sink %r : tensor<1xi32>
  return
}

// -----

// Unsigned buffers become signless: ui8 is i8 in the kernel, its max starts from 0 and
// uses maxui. With no loop range the store is not inside an scf.parallel.
// CHECK-LABEL: func.func @r_8
// CHECK-SAME: (%[[O:[a-z0-9]+]]: memref<1xi8> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<8xi8> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel}
// CHECK-NOT: scf.parallel
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i8
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[Z]]) -> (i8) {
// CHECK: %[[X:.*]] = memref.load %[[A]][%{{.*}}] : memref<8xi8>
// CHECK: arith.maxui %[[ACC]], %[[X]] : i8
// CHECK: memref.store %[[R]], %[[O]][%[[C0]]] : memref<1xi8>
// CHECK-NOT: ui8
// CHECK-LABEL: func.func @umax
// CHECK-SAME: memref<8xui8>
func.func @umax(%a: tensor<8xui8>) {
  %r = uop.reduce max %a [0] : tensor<8xui8> -> tensor<1xui8>
  uop.sink %r : tensor<1xui8>
  return
}

// -----

// Two reduce ranges become two nested scf.for loops, the inner one carrying the outer
// accumulator.
// CHECK-LABEL: func.func @r_{{[0-9_]+}}(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<1x1xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel}
// CHECK-NOT: scf.parallel
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[R:.*]] = scf.for %[[K0:.*]] = %{{.*}} to %[[C4]] step %{{.*}} iter_args(%[[ACC0:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT: %[[R1:.*]] = scf.for %[[K1:.*]] = %{{.*}} to %[[C8]] step %{{.*}} iter_args(%[[ACC1:.*]] = %[[ACC0]]) -> (f32) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[A]][%[[K0]], %[[K1]]] : memref<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC1]], %[[X]] fastmath<reassoc> : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[R1]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[R]], %[[O]][
func.func @sum_all(%a: tensor<4x8xf32>) {
  %r = uop.reduce add %a [0, 1] : tensor<4x8xf32> -> tensor<1x1xf32>
  uop.sink %r : tensor<1x1xf32>
  return
}

// -----

// A gated read (padding) clamps its index to 0 where the condition fails, loads, and
// selects 0 there.
// CHECK-LABEL: func.func @E_7
// CHECK-SAME: (%[[O:[a-z0-9]+]]: memref<7xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<4xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: %[[J:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK: %[[G:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[G]], %[[J]], %[[C0]] : index
// CHECK-NEXT: %[[V:.*]] = memref.load %[[A]][%[[SAFE]]] : memref<4xf32>
// CHECK-NEXT: %[[P:.*]] = arith.select %[[G]], %[[V]], %[[ZERO]] : f32
// CHECK-NEXT: memref.store %[[P]], %[[O]][%[[I]]] : memref<7xf32>
func.func @pad(%a: tensor<4xf32>) {
  %p = uop.pad %a low [1] high [2] : tensor<4xf32> -> tensor<7xf32>
  uop.sink %p : tensor<7xf32>
  return
}

// -----

// Boolean buffers are bytes: a comparison result is widened with extui before the store.
// CHECK-LABEL: func.func @E_4
// CHECK-SAME: (%[[O:[a-z0-9]+]]: memref<4xi8> {llvm.noalias}, %{{[a-z0-9]+}}: memref<4xf32> {llvm.noalias}, %{{[a-z0-9]+}}: memref<4xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel}
// CHECK: %[[C:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[B:.*]] = arith.extui %[[C]] : i1 to i8
// CHECK-NEXT: memref.store %[[B]], %[[O]][%{{.*}}] : memref<4xi8>
func.func @bool_out(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  %c = uop.cmplt %a, %b : tensor<4xf32>
  uop.sink %c : tensor<4xi1>
  return
}

// -----

// An empty buffer is neither read nor written: the kernel over an empty output is empty and
// its parameters are passed as 1-D empty memrefs.
// CHECK-LABEL: func.func @E_0_4
// CHECK-SAME: (%{{[a-z0-9]+}}: memref<0xf32> {llvm.noalias}, %{{[a-z0-9]+}}: memref<0xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel}
// CHECK-NEXT: return
// CHECK-LABEL: func.func @empty
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<0x4xf32>, %[[OUT:[a-z0-9]+]]: memref<0x4xf32>)
// CHECK-NEXT: uop.launch @E_0_4(%[[OUT]], %[[A]]) : memref<0x4xf32>, memref<0x4xf32>
func.func @empty(%a: tensor<0x4xf32>) {
  %n = uop.neg %a : tensor<0x4xf32>
  uop.sink %n : tensor<0x4xf32>
  return
}

// -----

// A sum over an empty axis stores the identity 0 for every row and loads nothing.
// CHECK-LABEL: func.func @r_4_0
// CHECK-SAME: (%[[O:[a-z0-9]+]]: memref<4x1xf32> {llvm.noalias}, %{{[a-z0-9]+}}: memref<0xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel}
// CHECK-NOT: memref.load
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK-NEXT: memref.store %[[ZERO]], %[[O]][%[[I]], %{{.*}}] : memref<4x1xf32>
// CHECK-NEXT: scf.reduce
func.func @sum_empty(%a: tensor<4x0xf32>) {
  %r = uop.reduce add %a [1] : tensor<4x0xf32> -> tensor<4x1xf32>
  uop.sink %r : tensor<4x1xf32>
  return
}

// -----

// Hand-written kernel: a boolean buffer read under a gate is loaded as a byte, truncated to
// i1 and selected with false where the gate fails; the float read is gated the same way.
// CHECK-LABEL: func.func @gated_bool
// CHECK-SAME: (%[[O:[a-z0-9]+]]: memref<6xf32> {llvm.noalias}, %[[MASK:[a-z0-9]+]]: memref<4xi8> {llvm.noalias}, %[[X:[a-z0-9]+]]: memref<4xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel}
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[FALSE:.*]] = arith.constant false
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{[a-z0-9]+}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK: %[[J:.*]] = arith.subi %[[I]], %{{.*}} : index
// CHECK: %[[G:.*]] = arith.andi
// CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[G]], %[[J]], %[[C0]] : index
// CHECK-NEXT: %[[BYTE:.*]] = memref.load %[[MASK]][%[[SAFE]]] : memref<4xi8>
// CHECK-NEXT: %[[BIT:.*]] = arith.trunci %[[BYTE]] : i8 to i1
// CHECK-NEXT: %[[M:.*]] = arith.select %[[G]], %[[BIT]], %[[FALSE]] : i1
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[SAFE]]] : memref<4xf32>
// CHECK-NEXT: %[[VG:.*]] = arith.select %[[G]], %[[V]], %[[ZERO]] : f32
// CHECK-NEXT: %[[W:.*]] = arith.select %[[M]], %[[VG]], %[[ZERO]] : f32
// CHECK-NEXT: memref.store %[[W]], %[[O]][%[[I]]] : memref<6xf32>
// CHECK-NEXT: scf.reduce
func.func @gated_bool(%out: memref<6xf32>, %mask: memref<4xi1>, %x: memref<4xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = uop.const 0.0 : f32
  %i = uop.range loop 6 id 0
  %j = arith.subi %i, %c1 : index
  %lo = arith.cmpi sge, %j, %c0 : index
  %hi = arith.cmpi sle, %j, %c3 : index
  %valid = arith.andi %lo, %hi : i1
  %m = uop.index %mask[%j] if %valid : memref<4xi1>
  %v = uop.index %x[%j] if %valid : memref<4xf32>
  %s = uop.where %m, %v, %zero : f32
  %w = uop.store %s, %out[%i] : memref<6xf32>
  %e = uop.end %w over (%i) : memref<6xf32>
  return
}

// -----

// exp2, log2 and sin on f32 become arithmetic (range reduction, polynomial with contractible steps,
// exponent bits), so the loop has no libm call (math.floor, roundeven and absf are single instructions);
// f16 computes them in f32; f64 keeps the math op.
// CHECK-LABEL: func.func @E_8(
// CHECK-NOT: math.{{(exp|log|sin|pow)}}
// CHECK: arith.mulf %{{.*}} fastmath<contract> : f32
// CHECK: arith.bitcast
// CHECK-NOT: math.{{(exp|log|sin|pow)}}
// CHECK: return
// CHECK-LABEL: func.func @E_8n1(
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NOT: math.{{(exp|log|sin|pow)}}
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-LABEL: func.func @E_8n2(
// CHECK: math.exp2 %{{.*}} : f64
func.func @transcendentals(%a: tensor<8xf32>, %h: tensor<8xf16>, %d: tensor<8xf64>) {
  %0 = uop.exp2 %a : tensor<8xf32>
  %1 = uop.log2 %0 : tensor<8xf32>
  %2 = uop.sin %1 : tensor<8xf32>
  %3 = uop.exp2 %h : tensor<8xf16>
  %4 = uop.exp2 %d : tensor<8xf64>
  uop.sink %2, %3, %4 : tensor<8xf32>, tensor<8xf16>, tensor<8xf64>
  return
}

// -----

// With rows fused (the default pytc-fuse), a row's max is computed inside the kernel that reads it: a
// parallel loop over rows, the max loop once per row, then a parallel loop along the row reading it.
// ROW-LABEL: func.func @r_4_8_8(
// ROW-SAME: %[[OUT:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %[[IN:[a-z0-9]+]]: memref<4x8xf32>
// ROW: scf.parallel (%[[I:[a-z0-9]+]]) =
// ROW-NEXT: %[[MAX:[a-z0-9]+]]:2 = scf.for %[[K:[a-z0-9]+]] = {{.*}} -> (f32, i1) {
// ROW-NEXT: memref.load %[[IN]][%[[I]], %[[K]]]
// ROW: %[[ROWMAX:.*]] = arith.select %[[MAX]]#1, %{{.*}}, %[[MAX]]#0 : f32
// ROW-NEXT: scf.parallel (%[[J:[a-z0-9]+]]) =
// ROW-NEXT: %[[X:.*]] = memref.load %[[IN]][%[[I]], %[[J]]]
// ROW-NEXT: %[[NEG:.*]] = arith.negf %[[ROWMAX]] : f32
// ROW-NEXT: %[[D:.*]] = arith.addf %[[X]], %[[NEG]] : f32
// ROW-NEXT: memref.store %[[D]], %[[OUT]][%[[I]], %[[J]]]
func.func @sub_row_max(%a: tensor<4x8xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %e = uop.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %n = uop.neg %e : tensor<4x8xf32>
  %s = uop.add %a, %n : tensor<4x8xf32>
  uop.sink %s : tensor<4x8xf32>
  return
}
