// RUN: pytc-opt %s --split-input-file -pytc-gpu-emulate | FileCheck %s

// Elementwise with a tail guard: the grid (16 workgroups) comes from pytc.gpu, the workgroup size from known_block_size.
// No barrier: one phase, a thread loop inside the workgroup loop; block_id and thread_id become their loops' variables,
// block_dim the constant 64. The gpu.module is gone.
// CHECK-LABEL: func.func @add_tail(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<1000xf32>, %[[B:[a-z0-9]+]]: memref<1000xf32>, %[[OUT:[a-z0-9]+]]: memref<1000xf32>) attributes {pytc.kernel} {
// CHECK-NOT: gpu.
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %[[BID:.*]] = %{{.*}} to %[[C16]] step
// CHECK-NEXT: scf.for %[[TID:.*]] = %{{.*}} to %[[C64]] step
// CHECK: %[[BASE:.*]] = arith.muli %[[BID]], %[[C64]] : index
// CHECK-NEXT: %[[I:.*]] = arith.addi %[[BASE]], %[[TID]] : index
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[I]]
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[I]]] : memref<1000xf32>
// CHECK-NOT: gpu.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @add_tail(%a: memref<1000xf32>, %b: memref<1000xf32>, %out: memref<1000xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, pytc.gpu = {grid = 16 : i64, local = 64 : i64, outputs = 1 : i64, total = 1000 : i64}} {
      %n = arith.constant 1000 : index
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %dim = gpu.block_dim x
      %base = arith.muli %bid, %dim : index
      %i = arith.addi %base, %tid : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %a[%i] : memref<1000xf32>
        %y = memref.load %b[%i] : memref<1000xf32>
        %s = arith.addf %x, %y : f32
        memref.store %s, %out[%i] : memref<1000xf32>
      }
      gpu.return
    }
  }
}

// -----

// A row sum, softmax-row style: 256 threads each add 4 strided elements of the row into workgroup memory, then 8 halving
// steps, each closed by a barrier. The workgroup attribution becomes one alloca (no address space); the barrier after
// the strided sums cuts the first phase; the scf.for around the step barriers stays outside the thread loops, its
// bounds recomputed at the workgroup level; each step's halving is recomputed inside its phase from the step's variable.
// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<16x1024xf32>, %[[OUT:[a-z0-9]+]]: memref<16xf32>) attributes {pytc.kernel} {
// CHECK-DAG: %[[SHM:.*]] = memref.alloca() : memref<256xf32>
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[T0:.*]] = %{{.*}} to %[[C256]] step
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args
// CHECK: memref.load %[[A]][%[[ROW]], %{{.*}}] : memref<16x1024xf32>
// CHECK: memref.store %[[ACC]], %[[SHM]][%[[T0]]] : memref<256xf32>
// CHECK-NEXT: }
// CHECK: %[[STEPS:.*]] = arith.constant 8 : index
// CHECK: scf.for %[[STEP:.*]] = %{{.*}} to %[[STEPS]] step
// CHECK-NEXT: scf.for %[[T1:.*]] = %{{.*}} to %[[C256]] step
// CHECK: %[[HALF0:.*]] = arith.shrui %{{.*}}, %[[STEP]] : index
// CHECK-NEXT: %[[HALF:.*]] = arith.shrui %[[HALF0]], %{{.*}} : index
// CHECK-NEXT: %[[LIVE:.*]] = arith.cmpi ult, %[[T1]], %[[HALF]] : index
// CHECK-NEXT: scf.if %[[LIVE]] {
// CHECK: memref.store %{{.*}}, %[[SHM]][%[[T1]]] : memref<256xf32>
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: scf.for %[[T2:.*]] = %{{.*}} to %[[C256]] step
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[ROW]]] : memref<16xf32>
// CHECK-NOT: gpu.barrier
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @row_sum(%a: memref<16x1024xf32>, %out: memref<16xf32>) workgroup(%shm : memref<256xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pytc.gpu = {grid = 16 : i64, local = 256 : i64, outputs = 1 : i64, total = 16 : i64}} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c256 = arith.constant 256 : index
      %zero = arith.constant 0.0 : f32
      %row = gpu.block_id x
      %t = gpu.thread_id x
      %acc = scf.for %k = %c0 to %c4 step %c1 iter_args(%s = %zero) -> f32 {
        %col0 = arith.muli %k, %c256 : index
        %col = arith.addi %col0, %t : index
        %x = memref.load %a[%row, %col] : memref<16x1024xf32>
        %s2 = arith.addf %s, %x : f32
        scf.yield %s2 : f32
      }
      memref.store %acc, %shm[%t] : memref<256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %step = %c0 to %c8 step %c1 {
        %half0 = arith.shrui %c256, %step : index
        %half = arith.shrui %half0, %c1 : index
        %live = arith.cmpi ult, %t, %half : index
        scf.if %live {
          %o = arith.addi %t, %half : index
          %p = memref.load %shm[%t] : memref<256xf32, #gpu.address_space<workgroup>>
          %q = memref.load %shm[%o] : memref<256xf32, #gpu.address_space<workgroup>>
          %r = arith.addf %p, %q : f32
          memref.store %r, %shm[%t] : memref<256xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %v = memref.load %shm[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
        memref.store %v, %out[%row] : memref<16xf32>
      }
      gpu.return
    }
  }
}

// -----

// Values live across a barrier: the loaded %x's double is kept per thread (stored at the end of the first phase into a
// buffer of one element per thread, loaded at the start of the second); the index arithmetic (%i, %mirror) is
// recomputed in the second phase from its thread loop's variable. The grid comes from known_grid_size.
// CHECK-LABEL: func.func @mirror(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<512xf32>, %[[OUT:[a-z0-9]+]]: memref<512xf32>) attributes {pytc.kernel} {
// CHECK-DAG: %[[SHM:.*]] = memref.alloca() : memref<128xf32>
// CHECK-DAG: %[[KEPT:.*]] = memref.alloca() : memref<128xf32>
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[BID:.*]] = %{{.*}} to %[[C4]] step
// CHECK-NEXT: scf.for %[[T0:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[X:.*]] = memref.load %[[A]]
// CHECK-NEXT: %[[TWICE:.*]] = arith.addf %[[X]], %[[X]] : f32
// CHECK-NEXT: memref.store %[[X]], %[[SHM]][%[[T0]]] : memref<128xf32>
// CHECK-NEXT: memref.store %[[TWICE]], %[[KEPT]][%[[T0]]] : memref<128xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.for %[[T1:.*]] = %{{.*}} to %{{.*}} step
// CHECK-DAG: %[[TWICE1:.*]] = memref.load %[[KEPT]][%[[T1]]] : memref<128xf32>
// CHECK-DAG: %[[MIRROR:.*]] = arith.subi %{{.*}}, %[[T1]] : index
// CHECK-DAG: %[[BASE:.*]] = arith.muli %[[BID]], %{{.*}} : index
// CHECK-DAG: %[[I:.*]] = arith.addi %[[BASE]], %[[T1]] : index
// CHECK: %[[Y:.*]] = memref.load %[[SHM]][%[[MIRROR]]] : memref<128xf32>
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[TWICE1]], %[[Y]] : f32
// CHECK-NEXT: memref.store %[[R]], %[[OUT]][%[[I]]] : memref<512xf32>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @mirror(%a: memref<512xf32>, %out: memref<512xf32>) workgroup(%shm : memref<128xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 4, 1, 1>} {
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %c128 : index
      %i = arith.addi %base, %tid : index
      %mirror = arith.subi %c127, %tid : index
      %x = memref.load %a[%i] : memref<512xf32>
      %twice = arith.addf %x, %x : f32
      memref.store %x, %shm[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %y = memref.load %shm[%mirror] : memref<128xf32, #gpu.address_space<workgroup>>
      %r = arith.subf %twice, %y : f32
      memref.store %r, %out[%i] : memref<512xf32>
      gpu.return
    }
  }
}

// -----

// A 2-d workgroup (8 x 4 threads) on a grid of unknown size: the function takes the grid's x, y, z sizes as trailing
// index arguments and loops over y and x workgroups (z of unknown size too); each phase loops over thread y, then x,
// and a value kept per thread is indexed x + 8 * y.
// CHECK-LABEL: func.func @flip_tiles(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<8x16xf32>, %[[OUT:[a-z0-9]+]]: memref<8x16xf32>, %[[GX:[a-z0-9]+]]: index, %[[GY:[a-z0-9]+]]: index, %[[GZ:[a-z0-9]+]]: index) attributes {pytc.kernel} {
// CHECK-DAG: %[[KEPT:.*]] = memref.alloca() : memref<32xf32>
// CHECK-DAG: %[[TILE:.*]] = memref.alloca() : memref<4x8xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[GZ]] step
// CHECK-NEXT: scf.for %[[BY:.*]] = %{{.*}} to %[[GY]] step
// CHECK-NEXT: scf.for %[[BX:.*]] = %{{.*}} to %[[GX]] step
// CHECK-NEXT: scf.for %[[TY:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[TX:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[Y8:.*]] = arith.muli %[[TY]], %{{.*}} : index
// CHECK-NEXT: %[[L:.*]] = arith.addi %[[TX]], %[[Y8]] : index
// CHECK: %[[V:.*]] = memref.load %[[A]]
// CHECK: memref.store %[[V]], %[[KEPT]][%[[L]]] : memref<32xf32>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @flip_tiles(%a: memref<8x16xf32>, %out: memref<8x16xf32>) workgroup(%tile : memref<4x8xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 8, 4, 1>} {
      %c3 = arith.constant 3 : index
      %c7 = arith.constant 7 : index
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %lx = gpu.block_dim x
      %ly = gpu.block_dim y
      %r0 = arith.muli %by, %ly : index
      %r = arith.addi %r0, %ty : index
      %c0 = arith.muli %bx, %lx : index
      %c = arith.addi %c0, %tx : index
      %v = memref.load %a[%r, %c] : memref<8x16xf32>
      memref.store %v, %tile[%ty, %tx] : memref<4x8xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %fy = arith.subi %c3, %ty : index
      %fx = arith.subi %c7, %tx : index
      %w = memref.load %tile[%fy, %fx] : memref<4x8xf32, #gpu.address_space<workgroup>>
      %s = arith.addf %w, %v : f32
      memref.store %s, %out[%r, %c] : memref<8x16xf32>
      gpu.return
    }
  }
}

// -----

// A scheduled graph launching the kernel through a declaration, as pytc-gpu-map leaves it: the emulated kernel takes the
// declaration's place and the launch is kept.
// CHECK-LABEL: func.func @negate(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<4xf32>, %{{[a-z0-9]+}}: memref<4xf32>) attributes {pytc.kernel} {
// CHECK-NOT: func.func private @negate
// CHECK-LABEL: func.func @graph(
// CHECK: uop.launch @negate(
module attributes {gpu.container_module} {
  gpu.module @negate_module {
    gpu.func @negate(%out: memref<4xf32>, %a: memref<4xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>, pytc.gpu = {grid = 1 : i64, local = 32 : i64, outputs = 1 : i64, total = 4 : i64}} {
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %in = arith.cmpi ult, %t, %c4 : index
      scf.if %in {
        %x = memref.load %a[%t] : memref<4xf32>
        %y = arith.negf %x : f32
        memref.store %y, %out[%t] : memref<4xf32>
      }
      gpu.return
    }
  }
  func.func private @negate(memref<4xf32>, memref<4xf32>)
  func.func @graph(%a: memref<4xf32>, %out: memref<4xf32>) {
    uop.launch @negate(%out, %a) : memref<4xf32>, memref<4xf32>
    uop.sink %out : memref<4xf32>
    return
  }
}

// -----

// Vector outputs: the reads drop the alignment they claim (host memory a CPU device wraps need not keep it); the writes,
// into buffers the runtime allocated, keep theirs.
// CHECK-LABEL: func.func @twice(
// CHECK: vector.load %{{[a-z0-9]+}}[%{{[0-9]+}}] : memref<1024xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<1024xf32>, vector<4xf32>
module attributes {gpu.container_module} {
  gpu.module @twice_module {
    gpu.func @twice(%out: memref<1024xf32>, %a: memref<1024xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pytc.gpu = {grid = 1 : i64, local = 256 : i64, outputs = 1 : i64, total = 1024 : i64, vector = 4 : i64}} {
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %i = arith.muli %t, %c4 : index
      %x = vector.load %a[%i] {alignment = 16 : i64} : memref<1024xf32>, vector<4xf32>
      %y = arith.addf %x, %x : vector<4xf32>
      vector.store %y, %out[%i] {alignment = 16 : i64} : memref<1024xf32>, vector<4xf32>
      gpu.return
    }
  }
}
