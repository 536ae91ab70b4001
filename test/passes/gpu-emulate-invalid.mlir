// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-gpu-emulate

// A barrier some threads skip cannot be a phase boundary.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @barrier_under_if(%out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %c32 = arith.constant 32 : index
      %t = gpu.thread_id x
      %low = arith.cmpi ult, %t, %c32 : index
      scf.if %low {
        // expected-error @+1 {{pytc-gpu-emulate: a gpu.barrier under scf.if cannot be emulated: phases are cut only at barriers at the top level of the kernel or of an scf.for around them}}
        gpu.barrier
      }
      gpu.return
    }
  }
}

// -----

// A value carried from one iteration to the next through a barrier would have to live in every thread at once.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @carried(%out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      // expected-error @+1 {{pytc-gpu-emulate: this scf.for carries iter_args around a gpu.barrier}}
      %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> f32 {
        %x = memref.load %out[%t] : memref<64xf32>
        %acc2 = arith.addf %acc, %x : f32
        gpu.barrier
        scf.yield %acc2 : f32
      }
      memref.store %s, %out[%t] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

// Threads that loop a different number of times reach different barriers.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @thread_bounds(%out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %t = gpu.thread_id x
      %n = arith.addi %t, %c1 : index
      // expected-error @+1 {{pytc-gpu-emulate: the bounds of this scf.for around a gpu.barrier depend on gpu.thread_id: threads would reach different barriers}}
      scf.for %i = %c0 to %n step %c1 {
        gpu.barrier
      }
      gpu.return
    }
  }
}

// -----

// A bound read from memory may differ between threads.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @loaded_bounds(%sizes: memref<1xindex>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = memref.load %sizes[%c0] : memref<1xindex>
      // expected-error @+1 {{pytc-gpu-emulate: the bounds of this scf.for around a gpu.barrier are not computed from constants, ids and arguments alone}}
      scf.for %i = %c0 to %n step %c1 {
        gpu.barrier
      }
      gpu.return
    }
  }
}

// -----

// A memref (here a subview) live across a barrier cannot be kept in a per-thread buffer.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @memref_across(%a: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      // expected-error @+1 {{pytc-gpu-emulate: this memref<1xf32, strided<[1], offset: ?>> value is used across a gpu.barrier and cannot be kept per thread}}
      %view = memref.subview %a[%t] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
      gpu.barrier
      %x = memref.load %view[%c0] : memref<1xf32, strided<[1], offset: ?>>
      gpu.return
    }
  }
}

// -----

// Warp-level ops have no sequential meaning here.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @shuffle(%out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %x = arith.constant 1.0 : f32
      // expected-error @+1 {{pytc-gpu-emulate: gpu.shuffle is not emulated (ids, sizes and gpu.barrier are)}}
      %y, %ok = gpu.shuffle xor %x, %c1, %c32 : f32
      gpu.return
    }
  }
}

// -----

// Per-thread (private) memory is not emulated.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{pytc-gpu-emulate: kernel @private_memory has private attributions: not emulated}}
    gpu.func @private_memory(%out: memref<64xf32>) private(%p : memref<4xf32, #gpu.address_space<private>>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
}

// -----

// The thread loops need the workgroup size.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{pytc-gpu-emulate: kernel @no_size has no workgroup size: it needs known_block_size or pytc.gpu = {local = ...}}}
    gpu.func @no_size(%out: memref<64xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// pytc.gpu and known_block_size disagree.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{pytc-gpu-emulate: @two_sizes has known_block_size [64, 1, 1] but pytc.gpu local = 128}}
    gpu.func @two_sizes(%out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, pytc.gpu = {grid = 1 : i64, local = 128 : i64, outputs = 1 : i64, total = 64 : i64}} {
      gpu.return
    }
  }
}

// -----

// A kernel pytc-gpu-map has not mapped yet.
// expected-error @+1 {{pytc-gpu-emulate expects kernels mapped onto the gpu dialect by pytc-gpu-map, but @E_4 is an index-level kernel: run pytc-gpu-map first}}
func.func @E_4(%out: memref<4xf32>) attributes {pytc.kernel} {
  %i = uop.range loop 4 id 0
  %c = uop.const 1.0 : f32
  %w = uop.store %c, %out[%i] : memref<4xf32>
  %e = uop.end %w over (%i) : memref<4xf32>
  return
}

// -----

// Host code launching a kernel: the CPU runtime calls emulated kernels itself.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
  func.func @host(%out: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    // expected-error @+1 {{pytc-gpu-emulate: gpu.launch_func is not emulated: the CPU runtime calls each emulated kernel}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%out : memref<64xf32>)
    return
  }
}

// -----

// The emulated kernel takes the name of its gpu.func: another function by that name is in the way.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{pytc-gpu-emulate: kernel @k would clash with the module's @k, which is not a declaration of the same function}}
    gpu.func @k(%out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
  func.func @k(%out: memref<64xf32>) {
    return
  }
}
