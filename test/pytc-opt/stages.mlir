// A target's compile path is a table of named stages; --stage runs one of them, each on the output of the one before.
// RUN: pytc-opt --list-stages | FileCheck %s --check-prefix=TABLE
// RUN: pytc-opt --list-stages --target gfx942 | FileCheck %s --check-prefix=GPU-TABLE
// RUN: pytc-opt %s --stage schedule | FileCheck %s --check-prefix=SCHEDULE
// RUN: pytc-opt %s --stage schedule | pytc-opt --stage kernels | FileCheck %s --check-prefix=KERNELS
// RUN: pytc-opt %s --stage schedule | pytc-opt --stage kernels --target gfx942 | FileCheck %s --check-prefix=GPU

// TABLE: stages of the cpu target
// TABLE-NEXT: 1. schedule
// TABLE-NEXT: builtin.module(canonicalize, pytc-split-reduce{lanes={{8|16}}}, pytc-rangeify, {{.*}}pytc-fuse{block_columns={{16|32|48}}},
// TABLE-NEXT: 2. kernels
// TABLE-NEXT: builtin.module(pytc-split-ranges, {{.*}}pytc-vectorize{lanes=
// TABLE-NEXT: 3. llvm
// TABLE-NEXT: builtin.module(convert-scf-to-cf,
// TABLE-NEXT: 4. binary
// TABLE-NEXT: (code emission

// GPU-TABLE: stages of the amdgpu target (gfx942)
// GPU-TABLE: pytc-split-reduce{lanes=16}, {{.*}}pytc-fuse{block_columns=16},
// GPU-TABLE: builtin.module(pytc-gpu-map{local_size=256 tile=16 vector_bytes=16{{.*}}}, canonicalize)
// GPU-TABLE: builtin.module(gpu.module(
// GPU-TABLE-SAME: convert-gpu-to-rocdl{{.*}}gfx942

// SCHEDULE: func.func @E_8({{.*}}) attributes {pytc.kernel}
// SCHEDULE: uop.launch @E_8

// KERNELS: func.func @E_8
// KERNELS-NOT: uop.range
// KERNELS: scf.parallel

// GPU: gpu.module
// GPU: gpu.func @E_8

func.func @graph(%a: tensor<8xf32>) {
  %e = uop.exp2 %a : tensor<8xf32>
  uop.sink %e : tensor<8xf32>
  return
}
