// RUN: pytc-opt %s --pass-pipeline='builtin.module(pytc-gpu-emulate{grid_arguments=1})' | FileCheck %s

// With grid_arguments the grid comes from the caller even where pytc.gpu records it (a MOCK GPU runs the grid its
// dispatch packet asks for): three trailing index arguments; the workgroup loop runs to the first, dimensions y and z
// of size 1 fold away only when the grid is known, so here they loop too.
// CHECK-LABEL: func.func @add_tail(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<1000xf32>, %{{[a-z0-9]+}}: memref<1000xf32>, %[[OUT:[a-z0-9]+]]: memref<1000xf32>, %[[GX:[a-z0-9]+]]: index, %[[GY:[a-z0-9]+]]: index, %[[GZ:[a-z0-9]+]]: index) attributes {pytc.kernel} {
// CHECK-NOT: arith.constant 16 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[GZ]] step
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[GY]] step
// CHECK: scf.for %[[BID:.*]] = %{{.*}} to %[[GX]] step
// CHECK: memref.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<1000xf32>
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
