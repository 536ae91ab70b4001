// RUN: pytc-opt %s --split-input-file --pass-pipeline='builtin.module(pytc-lower-kernels,canonicalize,cse)' | FileCheck %s

// A max reduction: scf.parallel over the store's loop range, its outermost range over the CPU slice [begin, end)
// (the last two arguments), an scf.for over the reduce range carrying the accumulator from -inf, a NaN-ignoring
// maximumf to combine beside a NaN-seen flag (a seen NaN is the result); the kernel body is exactly that loop nest.
// pytc.work counts its 4 outputs x 8 steps. The elementwise kernel is a 2-d scf.parallel with no loop inside. The graph
// keeps its launches.
// CHECK-LABEL: func.func @row_max(
// CHECK-SAME: %[[RO:[a-z0-9]+]]: memref<4x1xf32> {llvm.noalias}, %[[RA:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index) attributes {pytc.extent = 4 : i64, pytc.kernel, pytc.work = 32 : i64}
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
// CHECK-LABEL: func.func @sub_max(
// CHECK-SAME: %[[EO:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, {{.*}}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK-NOT: uop.
// CHECK: scf.parallel (%[[I2:.*]], %[[J2:.*]]) = (%{{[a-z0-9]+}}, %[[Z:.*]]) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) {
// CHECK-NOT: scf.for
// CHECK-DAG: memref.load %{{.*}}[%[[I2]], %[[J2]]] : memref<4x8xf32>
// CHECK-DAG: memref.load %{{.*}}[%[[I2]], %[[Z]]] : memref<4x1xf32>
// CHECK: arith.negf
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[EO]][%[[I2]], %[[J2]]] : memref<4x8xf32>
// CHECK-NEXT: scf.reduce
// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT: uop.buffer
// CHECK-NEXT: uop.launch @row_max(
// CHECK-NEXT: uop.launch @sub_max(
func.func @row_max(%out: memref<4x1xf32>, %x: memref<4x8xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %v = uop.index %x[%i, %k] : memref<4x8xf32>
  %m = uop.range_reduce max %v over(%k) : f32
  %w = uop.store %m, %out[%i, %c0] : memref<4x1xf32>
  %e = uop.end %w over(%i) : memref<4x1xf32>
  return
}
func.func @sub_max(%out: memref<4x8xf32>, %x: memref<4x8xf32>, %max: memref<4x1xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %j = uop.range loop 8 id 1
  %v = uop.index %x[%i, %j] : memref<4x8xf32>
  %m = uop.index %max[%i, %c0] : memref<4x1xf32>
  %n = uop.neg %m : f32
  %d = uop.add %v, %n : f32
  %w = uop.store %d, %out[%i, %j] : memref<4x8xf32>
  %e = uop.end %w over(%i, %j) : memref<4x8xf32>
  return
}
func.func @softmax(%x: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %max = uop.buffer : memref<4x1xf32>
  uop.launch @row_max(%max, %x) : memref<4x1xf32>, memref<4x8xf32>
  uop.launch @sub_max(%out, %x, %max) : memref<4x8xf32>, memref<4x8xf32>, memref<4x1xf32>
  uop.sink %out : memref<4x8xf32>
  return
}

// -----

// A sum starts from 0 and combines with addf.
// CHECK-LABEL: func.func @row_sum(
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.parallel
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK: %[[X:.*]] = memref.load
// CHECK: arith.addf %[[ACC]], %[[X]] fastmath<reassoc> : f32
func.func @row_sum(%out: memref<4x1xf32>, %x: memref<4x8xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %v = uop.index %x[%i, %k] : memref<4x8xf32>
  %s = uop.range_reduce add %v over(%k) : f32
  %w = uop.store %s, %out[%i, %c0] : memref<4x1xf32>
  %e = uop.end %w over(%i) : memref<4x1xf32>
  return
}

// -----

// A product starts from 1 and combines with mulf.
// CHECK-LABEL: func.func @row_prod(
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[ONE]]) -> (f32) {
// CHECK: %[[X:.*]] = memref.load
// CHECK: arith.mulf %[[ACC]], %[[X]] fastmath<reassoc> : f32
func.func @row_prod(%out: memref<4x1xf32>, %x: memref<4x3xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 3 id 1
  %v = uop.index %x[%i, %k] : memref<4x3xf32>
  %p = uop.range_reduce mul %v over(%k) : f32
  %w = uop.store %p, %out[%i, %c0] : memref<4x1xf32>
  %e = uop.end %w over(%i) : memref<4x1xf32>
  return
}

// -----

// A signed integer max starts from the smallest i32 and uses maxsi.
// CHECK-LABEL: func.func @imax(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<1xi32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<8xi32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index)
// CHECK-DAG: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[MIN]]) -> (i32) {
// CHECK: %[[X:.*]] = memref.load %[[A]]
// CHECK: arith.maxsi %[[ACC]], %[[X]] : i32
func.func @imax(%out: memref<1xi32>, %x: memref<8xi32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %k = uop.range reduce 8 id 0
  %v = uop.index %x[%k] : memref<8xi32>
  %m = uop.range_reduce max %v over(%k) : i32
  %w = uop.store %m, %out[%c0] : memref<1xi32>
  %e = uop.end %w over() : memref<1xi32>
  return
}

// -----

// Unsigned buffers become signless: ui8 is i8 in the kernel, its max starts from 0 and
// uses maxui. With no loop range the store is not inside an scf.parallel.
// CHECK-LABEL: func.func @umax(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<1xi8> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<8xi8> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK-NOT: scf.parallel
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i8
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[Z]]) -> (i8) {
// CHECK: %[[X:.*]] = memref.load %[[A]][%{{.*}}] : memref<8xi8>
// CHECK: arith.maxui %[[ACC]], %[[X]] : i8
// CHECK: memref.store %[[R]], %[[O]][%[[C0]]] : memref<1xi8>
// CHECK-NOT: ui8
// CHECK: return
func.func @umax(%out: memref<1xui8>, %x: memref<8xui8>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %k = uop.range reduce 8 id 0
  %v = uop.index %x[%k] : memref<8xui8>
  %m = uop.range_reduce max %v over(%k) : ui8
  %w = uop.store %m, %out[%c0] : memref<1xui8>
  %e = uop.end %w over() : memref<1xui8>
  return
}

// -----

// Two reduce ranges become two nested scf.for loops. A float sum cascades: the inner loop sums its row from zero and the
// row's total joins the outer accumulator once, so rounding grows with 4 + 8 steps, not 4 x 8. An integer sum, exact,
// carries one accumulator through both loops.
// CHECK-LABEL: func.func @sum_all(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<1x1xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK-NOT: scf.parallel
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[R:.*]] = scf.for %[[K0:.*]] = %{{.*}} to %[[C4]] step %{{.*}} iter_args(%[[ACC0:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT: %[[R1:.*]] = scf.for %[[K1:.*]] = %{{.*}} to %[[C8]] step %{{.*}} iter_args(%[[ACC1:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[A]][%[[K0]], %[[K1]]] : memref<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC1]], %[[X]] fastmath<reassoc> : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[ROW:.*]] = arith.addf %[[ACC0]], %[[R1]] fastmath<reassoc> : f32
// CHECK-NEXT: scf.yield %[[ROW]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[R]], %[[O]][
// CHECK-LABEL: func.func @integer_sum_all(
// CHECK: scf.for %{{.*}} iter_args(%[[IACC0:.*]] = %{{.*}}) -> (i32) {
// CHECK-NEXT: %[[IR1:.*]] = scf.for %{{.*}} iter_args(%[[IACC1:.*]] = %[[IACC0]]) -> (i32) {
// CHECK: scf.yield %[[IR1]] : i32
func.func @sum_all(%out: memref<1x1xf32>, %x: memref<4x8xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %k0 = uop.range reduce 4 id 0
  %k1 = uop.range reduce 8 id 1
  %v = uop.index %x[%k0, %k1] : memref<4x8xf32>
  %s = uop.range_reduce add %v over(%k0, %k1) : f32
  %w = uop.store %s, %out[%c0, %c0] : memref<1x1xf32>
  %e = uop.end %w over() : memref<1x1xf32>
  return
}
func.func @integer_sum_all(%out: memref<1x1xi32>, %x: memref<4x8xi32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %k0 = uop.range reduce 4 id 0
  %k1 = uop.range reduce 8 id 1
  %v = uop.index %x[%k0, %k1] : memref<4x8xi32>
  %s = uop.range_reduce add %v over(%k0, %k1) : i32
  %w = uop.store %s, %out[%c0, %c0] : memref<1x1xi32>
  %e = uop.end %w over() : memref<1x1xi32>
  return
}

// -----

// A gated read (padding) clamps its index to 0 where the condition fails, loads, and
// selects 0 there.
// CHECK-LABEL: func.func @pad(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<7xf32> {llvm.noalias}, %[[A:[a-z0-9]+]]: memref<4xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: %[[J:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK: %[[G:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[G]], %[[J]], %[[C0]] : index
// CHECK-NEXT: %[[V:.*]] = memref.load %[[A]][%[[SAFE]]] : memref<4xf32>
// CHECK-NEXT: %[[P:.*]] = arith.select %[[G]], %[[V]], %[[ZERO]] : f32
// CHECK-NEXT: memref.store %[[P]], %[[O]][%[[I]]] : memref<7xf32>
func.func @pad(%out: memref<7xf32>, %x: memref<4xf32>) attributes {pytc.kernel} {
  %minus1 = arith.constant -1 : index
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %zero = uop.const 0.000000e+00 : f32
  %i = uop.range loop 7 id 0
  %j = arith.addi %i, %minus1 : index
  %low = arith.cmpi sge, %j, %c0 : index
  %high = arith.cmpi sle, %j, %c3 : index
  %inside = arith.andi %low, %high : i1
  %v = uop.index %x[%j] if %inside : memref<4xf32>
  %p = uop.where %inside, %v, %zero : f32
  %w = uop.store %p, %out[%i] : memref<7xf32>
  %e = uop.end %w over(%i) : memref<7xf32>
  return
}

// -----

// Boolean buffers are bytes: a comparison result is widened with extui before the store.
// CHECK-LABEL: func.func @less_than(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<4xi8> {llvm.noalias}, %{{[a-z0-9]+}}: memref<4xf32> {llvm.noalias}, %{{[a-z0-9]+}}: memref<4xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK: %[[C:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[B:.*]] = arith.extui %[[C]] : i1 to i8
// CHECK-NEXT: memref.store %[[B]], %[[O]][%{{.*}}] : memref<4xi8>
func.func @less_than(%out: memref<4xi1>, %a: memref<4xf32>, %b: memref<4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : memref<4xf32>
  %y = uop.index %b[%i] : memref<4xf32>
  %c = uop.cmplt %x, %y : f32
  %w = uop.store %c, %out[%i] : memref<4xi1>
  %e = uop.end %w over(%i) : memref<4xi1>
  return
}

// -----

// An empty buffer is neither read nor written: the kernel over an empty output is empty (no work) and
// its parameters are passed as 1-D empty memrefs.
// CHECK-LABEL: func.func @empty_neg(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<0xf32> {llvm.noalias}, %{{[a-z0-9]+}}: memref<0xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = 0 : i64}
// CHECK-NEXT: return
// CHECK-LABEL: func.func @empty(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<0x4xf32>, %[[OUT:[a-z0-9]+]]: memref<0x4xf32>)
// CHECK-NEXT: uop.launch @empty_neg(%[[OUT]], %[[A]]) : memref<0x4xf32>, memref<0x4xf32>
func.func @empty_neg(%out: memref<0x4xf32>, %x: memref<0x4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 0 id 0
  %j = uop.range loop 4 id 1
  %v = uop.index %x[%i, %j] : memref<0x4xf32>
  %n = uop.neg %v : f32
  %w = uop.store %n, %out[%i, %j] : memref<0x4xf32>
  %e = uop.end %w over(%i, %j) : memref<0x4xf32>
  return
}
func.func @empty(%x: memref<0x4xf32>, %out: memref<0x4xf32>) {
  uop.launch @empty_neg(%out, %x) : memref<0x4xf32>, memref<0x4xf32>
  uop.sink %out : memref<0x4xf32>
  return
}

// -----

// A sum over an empty axis stores the identity 0 for every row and loads nothing.
// CHECK-LABEL: func.func @sum_empty(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<4x1xf32> {llvm.noalias}, %{{[a-z0-9]+}}: memref<0xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
// CHECK-NOT: memref.load
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK-NEXT: memref.store %[[ZERO]], %[[O]][%[[I]], %{{.*}}] : memref<4x1xf32>
// CHECK-NEXT: scf.reduce
func.func @sum_empty(%out: memref<4x1xf32>, %x: memref<4x0xf32>) attributes {pytc.kernel} {
  %c0 = arith.constant 0 : index
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 0 id 1
  %v = uop.index %x[%i, %k] : memref<4x0xf32>
  %s = uop.range_reduce add %v over(%k) : f32
  %w = uop.store %s, %out[%i, %c0] : memref<4x1xf32>
  %e = uop.end %w over(%i) : memref<4x1xf32>
  return
}

// -----

// A boolean buffer read under a gate is loaded as a byte, truncated to
// i1 and selected with false where the gate fails; the float read is gated the same way.
// CHECK-LABEL: func.func @gated_bool
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<6xf32> {llvm.noalias}, %[[MASK:[a-z0-9]+]]: memref<4xi8> {llvm.noalias}, %[[X:[a-z0-9]+]]: memref<4xf32> {llvm.noalias}, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = {{[0-9]+}} : i64, pytc.kernel, pytc.work = {{[0-9]+}} : i64}
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
// CHECK-LABEL: func.func @transcendentals(
// CHECK-NOT: math.{{(exp|log|sin|pow)}}
// CHECK: arith.mulf %{{.*}} fastmath<contract> : f32
// CHECK: arith.bitcast
// CHECK-NOT: math.{{(exp|log|sin|pow)}}
// CHECK: return
// CHECK-LABEL: func.func @exp2_f16(
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NOT: math.{{(exp|log|sin|pow)}}
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-LABEL: func.func @exp2_f64(
// CHECK: math.exp2 %{{.*}} : f64
func.func @transcendentals(%out: memref<8xf32>, %x: memref<8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %v = uop.index %x[%i] : memref<8xf32>
  %e2 = uop.exp2 %v : f32
  %l2 = uop.log2 %e2 : f32
  %s = uop.sin %l2 : f32
  %w = uop.store %s, %out[%i] : memref<8xf32>
  %e = uop.end %w over(%i) : memref<8xf32>
  return
}
func.func @exp2_f16(%out: memref<8xf16>, %x: memref<8xf16>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %v = uop.index %x[%i] : memref<8xf16>
  %e2 = uop.exp2 %v : f16
  %w = uop.store %e2, %out[%i] : memref<8xf16>
  %e = uop.end %w over(%i) : memref<8xf16>
  return
}
func.func @exp2_f64(%out: memref<8xf64>, %x: memref<8xf64>) attributes {pytc.kernel} {
  %i = uop.range loop 8 id 0
  %v = uop.index %x[%i] : memref<8xf64>
  %e2 = uop.exp2 %v : f64
  %w = uop.store %e2, %out[%i] : memref<8xf64>
  %e = uop.end %w over(%i) : memref<8xf64>
  return
}

// -----

// A row's max inside the kernel that reads it (as pytc-fuse joins them) is computed once per row: a parallel loop
// over rows, the max loop, then a parallel loop along the row reading it.
// CHECK-LABEL: func.func @sub_row_max(
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<4x8xf32> {llvm.noalias}, %[[IN:[a-z0-9]+]]: memref<4x8xf32>
// CHECK: scf.parallel (%[[I:[a-z0-9]+]]) =
// CHECK-NEXT: %[[MAX:[a-z0-9]+]]:2 = scf.for %[[K:[a-z0-9]+]] = {{.*}} -> (f32, i1) {
// CHECK-NEXT: memref.load %[[IN]][%[[I]], %[[K]]]
// CHECK: %[[ROWMAX:.*]] = arith.select %[[MAX]]#1, %{{.*}}, %[[MAX]]#0 : f32
// CHECK-NEXT: scf.parallel (%[[J:[a-z0-9]+]]) =
// CHECK-NEXT: %[[X:.*]] = memref.load %[[IN]][%[[I]], %[[J]]]
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[ROWMAX]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[X]], %[[NEG]] : f32
// CHECK-NEXT: memref.store %[[D]], %[[OUT]][%[[I]], %[[J]]]
func.func @sub_row_max(%out: memref<4x8xf32>, %x: memref<4x8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %j = uop.range loop 8 id 1
  %k = uop.range reduce 8 id 2
  %v = uop.index %x[%i, %j] : memref<4x8xf32>
  %row = uop.index %x[%i, %k] : memref<4x8xf32>
  %m = uop.range_reduce max %row over(%k) : f32
  %n = uop.neg %m : f32
  %d = uop.add %v, %n : f32
  %w = uop.store %d, %out[%i, %j] : memref<4x8xf32>
  %e = uop.end %w over(%i, %j) : memref<4x8xf32>
  return
}

// -----

// logsumexp's sum reads the row's max, which does not vary with the sum's range: the max loops once per row, before
// the sum's loop, not at every step of it.
// CHECK-LABEL: func.func @sum_exp_minus_max(
// CHECK: scf.parallel
// CHECK: %[[MAX:.*]]:2 = scf.for
// CHECK: arith.maximumf
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[PEAK:.*]] = arith.select %[[MAX]]#1
// CHECK-NEXT: scf.for
// CHECK-NOT: arith.maximumf
// CHECK: arith.negf %[[PEAK]]
// CHECK: arith.addf
func.func @sum_exp_minus_max(%out: memref<4xf32>, %x: memref<4x8xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %k = uop.range reduce 8 id 1
  %k2 = uop.range reduce 8 id 2
  %a = uop.index %x[%i, %k2] : memref<4x8xf32>
  %m = uop.range_reduce max %a over(%k2) : f32
  %v = uop.index %x[%i, %k] : memref<4x8xf32>
  %n = uop.neg %m : f32
  %d = uop.add %v, %n : f32
  %e = uop.exp %d : f32
  %s = uop.range_reduce add %e over(%k) : f32
  %w = uop.store %s, %out[%i] : memref<4xf32>
  %end = uop.end %w over(%i) : memref<4xf32>
  return
}

// -----

// A merged kernel (pytc-merge-kernels): the store its uop.end closes and a sibling store into another buffer at the same
// element, in one loop. Both values are computed before either is stored; marked in place, the outputs and the input read
// where they are written keep no llvm.noalias.
// CHECK-LABEL: func.func @siblings(
// CHECK-SAME: %[[NEG:[a-z0-9]+]]: memref<6xf32>, %[[TWICE:[a-z0-9]+]]: memref<6xf32>, %[[IN:[a-z0-9]+]]: memref<6xf32>, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index) attributes {pytc.extent = 6 : i64, pytc.kernel, pytc.work = 6 : i64}
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK-NEXT: %[[X:.*]] = memref.load %[[IN]][%[[I]]] : memref<6xf32>
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[X]], %[[X]] : f32
// CHECK-NEXT: memref.store %[[N]], %[[NEG]][%[[I]]] : memref<6xf32>
// CHECK-NEXT: memref.store %[[T]], %[[TWICE]][%[[I]]] : memref<6xf32>
// CHECK-NEXT: scf.reduce
func.func @siblings(%neg: memref<6xf32>, %twice: memref<6xf32>, %in: memref<6xf32>) attributes {pytc.kernel, pytc.in_place} {
  %i = uop.range loop 6 id 0
  %x = uop.index %in[%i] : memref<6xf32>
  %n = uop.neg %x : f32
  %s = uop.store %n, %neg[%i] : memref<6xf32>
  %e = uop.end %s over(%i) : memref<6xf32>
  %t = uop.add %x, %x : f32
  %s2 = uop.store %t, %twice[%i] : memref<6xf32>
  return
}
