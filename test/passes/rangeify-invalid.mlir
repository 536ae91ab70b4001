// RUN: pytc-opt %s --split-input-file --verify-diagnostics -pytc-rangeify

// An assign writes into an existing buffer: not expressible as index-level code.
func.func @assign(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{pytc-rangeify cannot handle uop.assign}}
  %x = uop.assign %a, %b : tensor<4xf32>
  uop.sink %x : tensor<4xf32>
  return
}

// -----

// A graph function has exactly one sink listing all of its outputs.
// expected-error @+1 {{graph function @two_sinks needs exactly one uop.sink}}
func.func @two_sinks(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  uop.sink %a : tensor<4xf32>
  return
}

// -----

// A function of uop ops without a sink is not a graph: it lists no outputs to compute.
func.func @not_a_graph(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{pytc-rangeify: @not_a_graph holds uop ops but is neither a graph (with a uop.sink listing its outputs at its top level) nor a kernel (with the pytc.kernel attribute)}}
  %n = uop.neg %a : tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// Tensor-level ops beside index-level materializations: a function is in one form at a time.
func.func @mixed(%a: tensor<4xf32>) {
  %i = uop.range loop 4 id 0
  %x = uop.index %a[%i] : tensor<4xf32>
  %b = uop.bufferize %x over (%i) {reason = "output"} : f32 -> tensor<4xf32>
  // expected-error @+1 {{pytc-rangeify: uop.flip belongs to a tensor-level graph, but @mixed also holds uop.bufferize, of a rangeified graph: a function is in one form at a time}}
  %f = uop.flip %b [0] : tensor<4xf32> -> tensor<4xf32>
  uop.sink %f : tensor<4xf32>
  return
}

// -----

// A function without uop ops is no graph and no kernel: pytc's passes leave it alone (no error).
func.func @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// A graph returns nothing: its outputs are the sink's operands (rangeify replaces the tensor values it would return).
func.func @returns(%a: tensor<4xf32>) -> tensor<4xf32> {
  %n = uop.neg %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  // expected-error @+1 {{pytc-rangeify: graph function @returns returns values: a graph lists its outputs in uop.sink and returns nothing}}
  return %n : tensor<4xf32>
}

// -----

// Ops of other dialects have no index-level form.
func.func @foreign(%a: tensor<4xf32>) {
  // expected-error @+1 {{pytc-rangeify: arith.addf is not a uop op: a tensor-level graph holds uop ops only}}
  %n = arith.addf %a, %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}

// -----

// uop ops live at the top level of a graph or kernel function.
func.func @nested(%a: tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    // expected-error @+1 {{pytc-rangeify: @nested holds uop ops but is neither a graph (with a uop.sink listing its outputs at its top level) nor a kernel}}
    uop.sink %a : tensor<4xf32>
  }
  return
}

// -----

// expected-error @+1 {{pytc-rangeify: uop.sink belongs in a graph or kernel func.func}}
uop.sink

// -----

// Values on two devices meet only through a uop.copy.
func.func @two_devices(%a: tensor<4xf32> {uop.device = "AMD"}, %b: tensor<4xf32>) attributes {uop.device = "CPU"} {
  // expected-error @+1 {{uop.add reads values on AMD and the graph's own device: a uop.copy must bring them to one device}}
  %s = uop.add %a, %b : tensor<4xf32>
  uop.sink %s : tensor<4xf32>
  return
}

// -----

// A device is a name.
// expected-error @+1 {{argument #0 of @unnamed_device: uop.device must be a non-empty string}}
func.func @unnamed_device(%a: tensor<4xf32> {uop.device = 3 : i64}) {
  %c = uop.copy %a to "CPU" : tensor<4xf32>
  uop.sink %c : tensor<4xf32>
  return
}
