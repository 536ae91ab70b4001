// RUN: pytc-opt %s --split-input-file --verify-diagnostics

// A kernel that no symbol names.
func.func @undefined(%a: memref<4xf32>) {
  // expected-error @+1 {{'uop.launch' op kernel @missing is not a func.func of the enclosing symbol table}}
  uop.launch @missing(%a) : memref<4xf32>
  return
}

// -----

// A symbol that is not a function.
module @not_a_function {
}
func.func @not_func(%a: memref<4xf32>) {
  // expected-error @+1 {{'uop.launch' op kernel @not_a_function is not a func.func of the enclosing symbol table}}
  uop.launch @not_a_function(%a) : memref<4xf32>
  return
}

// -----

// Fewer buffers than the kernel takes.
func.func private @k(memref<4xf32>, memref<4xf32>)
func.func @too_few(%a: memref<4xf32>) {
  // expected-error @+1 {{'uop.launch' op passes 1 buffers to kernel @k, which takes 2 arguments}}
  uop.launch @k(%a) : memref<4xf32>
  return
}

// -----

// A buffer of another type than the kernel's argument.
func.func private @k(memref<4xf32>, memref<8xf32>)
func.func @wrong_type(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'uop.launch' op passes 'memref<4xf32>' as argument #1 of kernel @k, which takes 'memref<8xf32>'}}
  uop.launch @k(%a, %b) : memref<4xf32>, memref<4xf32>
  return
}

// -----

// A kernel's buffers do not alias: it cannot read the buffer it writes.
func.func private @k(memref<4xf32>, memref<4xf32>)
func.func @aliased(%a: memref<4xf32>) {
  // expected-error @+1 {{'uop.launch' op reads the buffer it writes (argument #0)}}
  uop.launch @k(%a, %a) : memref<4xf32>, memref<4xf32>
  return
}

// -----

// Reading one buffer twice is fine.
func.func private @k(memref<4xf32>, memref<4xf32>, memref<4xf32>)
func.func @read_twice(%a: memref<4xf32>, %b: memref<4xf32>) {
  uop.launch @k(%a, %b, %b) : memref<4xf32>, memref<4xf32>, memref<4xf32>
  return
}

// -----

// A kernel writes its first buffer: it returns nothing.
func.func private @k(memref<4xf32>) -> f32
func.func @returns(%a: memref<4xf32>) {
  // expected-error @+1 {{'uop.launch' op kernel @k returns values}}
  uop.launch @k(%a) : memref<4xf32>
  return
}

// -----

// A launch needs the buffer it writes.
func.func private @k()
func.func @no_buffers() {
  // expected-error @+1 {{'uop.launch' op needs at least the buffer the kernel writes}}
  "uop.launch"() {kernel = @k} : () -> ()
  return
}

// -----

// A lowered kernel (pytc.extent) takes each buffer as its storage (i1 as i8,
// signless, an empty buffer 1-D), then its extent.
func.func private @k(memref<4xi8>, memref<4xi8>, memref<0xf32>, index, index) attributes {pytc.extent = 4 : i64, pytc.kernel}
func.func @lowered(%a: memref<4xi1>, %b: memref<4xui8>, %c: memref<0x4xf32>) {
  uop.launch @k(%a, %b, %c) : memref<4xi1>, memref<4xui8>, memref<0x4xf32>
  return
}

// -----

// A lowered kernel without the extent arguments is not what the launch calls.
func.func private @k(memref<4xf32>) attributes {pytc.extent = 4 : i64, pytc.kernel}
func.func @lowered_no_extent(%a: memref<4xf32>) {
  // expected-error @+1 {{'uop.launch' op passes 1 buffers to kernel @k, which takes 1 arguments (its buffers, then the 2 of its extent)}}
  uop.launch @k(%a) : memref<4xf32>
  return
}

// -----

// A lowered kernel stores i1 as bytes.
func.func private @k(memref<4xi1>, index, index) attributes {pytc.extent = 4 : i64, pytc.kernel}
func.func @lowered_bool(%a: memref<4xi1>) {
  // expected-error @+1 {{'uop.launch' op passes 'memref<4xi8>' as argument #0 of kernel @k, which takes 'memref<4xi1>'}}
  uop.launch @k(%a) : memref<4xi1>
  return
}

// -----

// Buffers are row-major.
func.func @strided_buffer() {
  // expected-error @+1 {{'uop.buffer' op result #0 must be statically shaped row-major memref of a uop element type, but got 'memref<4xf32, strided<[2]>>'}}
  %0 = uop.buffer : memref<4xf32, strided<[2]>>
  return
}

// -----

// Buffers are in the default memory space.
func.func @memory_space(%a: memref<4xf32, 1>) {
  // expected-error @+1 {{'uop.launch' op operand #0 must be variadic of statically shaped row-major memref of a uop element type, but got 'memref<4xf32, 1>'}}
  uop.launch @k(%a) : memref<4xf32, 1>
  return
}

// -----

// Buffers hold uop element types.
func.func @index_elements() {
  // expected-error @+1 {{'uop.buffer' op result #0 must be statically shaped row-major memref of a uop element type, but got 'memref<4xindex>'}}
  %0 = uop.buffer : memref<4xindex>
  return
}
