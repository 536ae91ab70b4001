"""The attribute registry (passes/common/attributes.py): every declared attribute, well formed, passes the check each pytc pass
makes before it runs; malformed, on an op it is not declared for, or undeclared (`pytc.foo`), it is a located error through
pytc-opt. The typed accessors read back what they write."""
import pytest
from mlir import ir

from pytc.dialects import uop
from pytc.passes.common.attributes import (
  ATTRIBUTES,
  BUFFER_DEVICE,
  BUFFERS,
  EXTENT,
  FUSE,
  KERNEL,
  KERNELS,
  LOOP_ORDER,
  PEAK_BYTES,
  REASON,
  SPLIT,
  VECTOR,
  LoopOrder,
  Reason,
  verify,
)
from pytc.pytc_opt import main

TILE = "lanes = 8 : i64, vectors = 2 : i64, rows = 4 : i64, group = 1 : i64, upcast = -1 : i64, pack = 0 : i64, unroll = 0 : i64"


def declaration(attrs: str) -> str:
  return f"func.func private @f(memref<4xf32>) attributes {{{attrs}}}\n"


def kernel(attrs: str) -> str: return declaration(f"pytc.kernel, {attrs}")


def gpu_kernel(attrs: str) -> str:
  return f"gpu.module @m {{\n  gpu.func @k(%a: memref<4xf32>) kernel attributes {{{attrs}}} {{\n    gpu.return\n  }}\n}}\n"


GPU_RECORD = "grid = 1 : i64, local = 32 : i64, outputs = 1 : i64, total = 4 : i64"


def tensor_graph(reduce_attrs: str = "", neg_attrs: str = "") -> str:
  return ("func.func @g(%a: tensor<4x8xf32>) {\n"
          f"  %r = uop.reduce add %a [1] {{{reduce_attrs}}} : tensor<4x8xf32> -> tensor<4x1xf32>\n"
          f"  %n = uop.neg %r {{{neg_attrs}}} : tensor<4x1xf32>\n"
          "  uop.sink %n : tensor<4x1xf32>\n  return\n}\n")


def rangeified(bufferize_attrs: str, range_attrs: str = "") -> str:
  """A materialization %b read by a second kernel, whose output is the graph's."""
  return ("func.func @g(%a: tensor<4xf32>) {\n"
          f"  %i = uop.range loop 4 id 0 {{{range_attrs}}}\n"
          "  %x = uop.index %a[%i] : tensor<4xf32>\n"
          f"  %b = uop.bufferize %x over(%i) {{{bufferize_attrs}}} : f32 -> tensor<4xf32>\n"
          "  %j = uop.range loop 4 id 1\n"
          "  %y = uop.index %b[%j] : tensor<4xf32>\n"
          "  %n = uop.neg %y : f32\n"
          '  %out = uop.bufferize %n over(%j) {reason = "output"} : f32 -> tensor<4xf32>\n'
          "  uop.sink %out : tensor<4xf32>\n  return\n}\n")


def launches(attrs: str) -> str:
  """A graph split into a launch of a kernel that writes two buffers."""
  return ("func.func private @k(memref<4xf32>, memref<4xf32>, memref<4xf32>) attributes {pytc.kernel}\n"
          "func.func @g(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) {\n"
          f"  uop.launch @k(%b, %c, %a) {{{attrs}}} : memref<4xf32>, memref<4xf32>, memref<4xf32>\n"
          "  uop.sink %b, %c : memref<4xf32>, memref<4xf32>\n  return\n}\n")


# (attribute, input): each declared attribute well formed.
WELL_FORMED = [
  ("pytc.kernel", declaration("pytc.kernel")),
  ("pytc.split", tensor_graph("pytc.split")),
  *[("reason", rangeified(f'reason = "{reason.value}"')) for reason in Reason],
  ("fuse", rangeified('fuse = "kept: recomputing would repeat a reduction", reason = "multi-use"')),
  ("fuse", rangeified('fuse = "split: a kernel would exceed 16 ops", reason = "split"')),
  ("pytc.kernels", declaration("pytc.kernels = 3 : i64")),
  ("pytc.buffers", declaration("pytc.buffers = 0 : i64")),
  ("pytc.peak_bytes", declaration("pytc.peak_bytes = 0 : i64")),
  ("pytc.loop_order", kernel('pytc.loop_order = "reduce-outer"')),
  ("pytc.vector", kernel(f"pytc.vector = {{{TILE}}}")),
  ("pytc.vector", kernel(f"pytc.vector = {{{TILE}, stream = 1 : i64}}")),
  ("pytc.tune", kernel("pytc.tune = {rows = 6 : i64, cores = 1 : i64, pack = 0 : i64}")),
  ("pytc.tune", kernel("pytc.tune = {}")),
  ("pytc.extent", kernel("pytc.extent = 4096 : i64")),
  ("pytc.work", kernel("pytc.work = 262144 : i64")),
  ("pytc.in_place", kernel("pytc.in_place")),
  ("pytc.gpu", gpu_kernel(f"pytc.gpu = {{{GPU_RECORD}}}")),
  ("pytc.gpu", gpu_kernel("pytc.gpu = {grid = 0 : i64, local = 32 : i64, outputs = 1 : i64, total = 0 : i64}")),
  ("uop.device", declaration('uop.device = "AMD:1"')),
  ("uop.device", rangeified('reason = "copy", uop.device = "AMD:1"')),
  ("pytc.writes", launches("pytc.writes = 2 : i64")),
]

# (attribute, input, the op the error is at, message): malformed values, wrong ops, undeclared names.
REJECTED = [
  ("pytc.kernel", declaration("pytc.kernel = 1 : i64"), "func.func",
   "malformed pytc.kernel on func.func: it has a value (expected a unit attribute)"),
  ("pytc.kernel", tensor_graph(neg_attrs="pytc.kernel"), "uop.neg", "pytc.kernel belongs on func.func, not on uop.neg"),
  ("pytc.split", tensor_graph('pytc.split = "yes"'), "uop.reduce", "malformed pytc.split on uop.reduce: it has a value"),
  ("pytc.split", tensor_graph(neg_attrs="pytc.split"), "uop.neg", "pytc.split belongs on uop.reduce, not on uop.neg"),
  ("pytc.split", declaration("pytc.split"), "func.func", "pytc.split belongs on uop.reduce, not on func.func"),
  ("reason", rangeified('reason = "because"'), "uop.bufferize",
   'malformed reason on uop.bufferize: "because" is not one of "output", "contiguous", "copy", "multi-use", "reduce-expand", "split"'),
  ("reason", rangeified('reason = "output"', 'reason = "output"'), "uop.range", "reason belongs on uop.bufferize, not on uop.range"),
  ("fuse", rangeified('fuse = "maybe", reason = "output"'), "uop.bufferize",
   'malformed fuse on uop.bufferize: "maybe" is not a string starting with "kept: " or "split: "'),
  ("fuse", rangeified('fuse = 3 : i64, reason = "output"'), "uop.bufferize", "malformed fuse on uop.bufferize: it is not a string"),
  ("fuse", declaration('fuse = "kept: x"'), "func.func", "fuse belongs on uop.bufferize, not on func.func"),
  ("pytc.kernels", declaration("pytc.kernels = -1 : i64"), "func.func",
   "malformed pytc.kernels on func.func: -1 is not an integer >= 0 (expected an i64 integer (an integer >= 0))"),
  ("pytc.kernels", declaration("pytc.kernels = 2 : i32"), "func.func", "malformed pytc.kernels on func.func: it is not an i64 integer"),
  ("pytc.kernels", kernel("pytc.kernels = 2 : i64"), "func.func", "pytc.kernels belongs on graph functions, not on this func.func"),
  ("pytc.kernels", tensor_graph(neg_attrs="pytc.kernels = 2 : i64"), "uop.neg", "pytc.kernels belongs on func.func, not on uop.neg"),
  ("pytc.buffers", declaration("pytc.buffers = -1 : i64"), "func.func", "malformed pytc.buffers on func.func: -1 is not an integer >= 0"),
  ("pytc.buffers", declaration('pytc.buffers = "2"'), "func.func", "malformed pytc.buffers on func.func: it is not an i64 integer"),
  ("pytc.peak_bytes", declaration("pytc.peak_bytes = -4 : i64"), "func.func",
   "malformed pytc.peak_bytes on func.func: -4 is not an integer >= 0"),
  ("pytc.peak_bytes", kernel("pytc.peak_bytes = 4 : i64"), "func.func", "pytc.peak_bytes belongs on graph functions"),
  ("pytc.loop_order", kernel('pytc.loop_order = "sideways"'), "func.func",
   'malformed pytc.loop_order on func.func: "sideways" is not one of "reduce-outer"'),
  ("pytc.loop_order", kernel("pytc.loop_order = 1 : i64"), "func.func", "malformed pytc.loop_order on func.func: it is not a string"),
  ("pytc.loop_order", declaration('pytc.loop_order = "reduce-outer"'), "func.func", "pytc.loop_order belongs on kernels"),
  ("pytc.tune", kernel("pytc.tune = {rows = 0 : i64}"), "func.func", "malformed pytc.tune on func.func: rows: 0 is not an integer from 1 to 64"),
  ("pytc.tune", kernel("pytc.tune = {unroll = 1 : i64}"), "func.func", "malformed pytc.tune on func.func: it has unknown keys unroll"),
  ("pytc.tune", declaration("pytc.tune = {cores = 2 : i64}"), "func.func", "pytc.tune belongs on kernels"),
  ("pytc.vector", kernel("pytc.vector = {lanes = 8 : i64}"), "func.func",
   "malformed pytc.vector on func.func: it lacks vectors, rows, group, upcast, pack, unroll"),
  ("pytc.vector", kernel(f"pytc.vector = {{{TILE.replace('group = 1 : i64, ', '')}}}"), "func.func",
   "malformed pytc.vector on func.func: it lacks group"),
  ("pytc.vector", kernel(f"pytc.vector = {{{TILE}, width = 4 : i64}}"), "func.func",
   "malformed pytc.vector on func.func: it has unknown keys width"),
  ("pytc.vector", kernel(f"pytc.vector = {{{TILE.replace('lanes = 8', 'lanes = 12')}}}"), "func.func",
   "malformed pytc.vector on func.func: lanes: 12 is not a power of two from 1 to 64"),
  ("pytc.vector", kernel(f"pytc.vector = {{{TILE.replace('pack = 0', 'pack = 2')}}}"), "func.func",
   "malformed pytc.vector on func.func: pack: 2 is not an integer from 0 to 1"),
  ("pytc.vector", kernel(f"pytc.vector = {{{TILE}, stream = 2 : i64}}"), "func.func",
   "malformed pytc.vector on func.func: stream: 2 is not an integer from 1 to 1"),
  ("pytc.vector", kernel(f"pytc.vector = {{{TILE.replace('rows = 4 : i64', 'rows = 4.0 : f32')}}}"), "func.func",
   "malformed pytc.vector on func.func: rows: it is not an i64 integer"),
  ("pytc.vector", kernel("pytc.vector = 8 : i64"), "func.func", "malformed pytc.vector on func.func: it is not a dictionary"),
  ("pytc.vector", declaration(f"pytc.vector = {{{TILE}}}"), "func.func", "pytc.vector belongs on kernels, not on this func.func"),
  ("pytc.extent", kernel("pytc.extent = -1 : i64"), "func.func", "malformed pytc.extent on func.func: -1 is not an integer >= 0"),
  ("pytc.work", kernel("pytc.work = 1.5 : f32"), "func.func", "malformed pytc.work on func.func"),
  ("pytc.in_place", kernel("pytc.in_place = 1 : i64"), "func.func", "malformed pytc.in_place on func.func: it has a value"),
  ("pytc.in_place", declaration("pytc.in_place"), "func.func", "pytc.in_place belongs on kernels, not on this func.func"),
  ("pytc.extent", declaration("pytc.extent = 4 : i64"), "func.func", "pytc.extent belongs on kernels, not on this func.func"),
  ("pytc.gpu", gpu_kernel(f"pytc.gpu = {{{GPU_RECORD.replace('local = 32', 'local = 48')}}}"), "gpu.func",
   "malformed pytc.gpu on gpu.func: local: 48 is not a power of two from 1 to 1024"),
  ("pytc.gpu", gpu_kernel("pytc.gpu = {grid = 1 : i64, local = 32 : i64}"), "gpu.func", "malformed pytc.gpu on gpu.func: it lacks outputs, total"),
  ("pytc.gpu", kernel(f"pytc.gpu = {{{GPU_RECORD}}}"), "func.func", "pytc.gpu belongs on gpu.func, not on func.func"),
  ("uop.device", rangeified('reason = "copy", uop.device = ""'), "uop.bufferize",
   "malformed uop.device on uop.bufferize: it is not a non-empty string (expected a non-empty string)"),
  ("uop.device", declaration("uop.device = 1 : i64"), "func.func", "malformed uop.device on func.func: it is not a non-empty string"),
  ("uop.device", kernel('uop.device = "AMD"'), "func.func", "uop.device belongs on graph functions, not on this func.func"),
  ("uop.device", tensor_graph(neg_attrs='uop.device = "AMD"'), "uop.neg",
   "uop.device belongs on func.func or uop.bufferize or uop.buffer, not on uop.neg"),
  ("pytc.writes", launches("pytc.writes = 1 : i64"), "uop.launch", "malformed pytc.writes on uop.launch: 1 is not an integer >= 2"),
  ("pytc.writes", launches("pytc.writes = 4 : i64"), "uop.launch", "this launch writes its first 4 buffers, but it has 3"),
  ("pytc.writes", declaration("pytc.writes = 2 : i64"), "func.func", "pytc.writes belongs on uop.launch, not on func.func"),
  ("pytc.foo", declaration("pytc.foo"), "func.func", "pytc.foo is not an attribute pytc declares"),
  ("pytc.foo", tensor_graph(neg_attrs="pytc.foo = 1 : i64"), "uop.neg", "pytc.foo is not an attribute pytc declares"),
  ("pytc.foo", rangeified('reason = "output", pytc.foo'), "uop.bufferize", "pytc.foo is not an attribute pytc declares"),
]


def pass_for(source: str) -> str:
  """A pytc pass that takes `source`'s form: pytc-fuse for a rangeified graph, pytc-schedule for launches, pytc-split-reduce
  for the rest (a tensor-level graph, declarations). Both check the attributes first, as every pytc pass does."""
  return "pytc-fuse" if "uop.bufferize" in source else "pytc-schedule" if "uop.launch" in source else "pytc-split-reduce"


def run(tmp_path, source: str, capsys) -> tuple[int, str]:
  (path := tmp_path / "input.mlir").write_text(source)
  code = main([str(path), f"-{pass_for(source)}", "-o", str(tmp_path / "out.mlir")])
  return code, capsys.readouterr().err


def test_every_declared_attribute_is_covered():
  declared = {a.name for a in ATTRIBUTES.values()}
  assert declared == {case[0] for case in WELL_FORMED} == {case[0] for case in REJECTED} - {"pytc.foo"}


@pytest.mark.parametrize("name,source", WELL_FORMED, ids=[f"{c[0]}-{i}" for i, c in enumerate(WELL_FORMED)])
def test_well_formed_passes(tmp_path, capsys, name, source):
  assert run(tmp_path, source, capsys) == (0, "")
  # pytc-fuse may inline a multi-use or reduce-expand materialization, its attributes with it; pytc-split-reduce keeps them
  if pass_for(source) != "pytc-fuse": assert name in (tmp_path / "out.mlir").read_text()


@pytest.mark.parametrize("name,source,op,message", REJECTED, ids=[f"{c[0]}-{i}" for i, c in enumerate(REJECTED)])
def test_rejected_with_located_error(tmp_path, capsys, name, source, op, message):
  code, err = run(tmp_path, source, capsys)
  line = next(n for n, text in enumerate(source.splitlines(), 1) if name in text)
  column = source.splitlines()[line - 1].index(op) + 1
  assert code == 1
  assert err.startswith(f"{tmp_path / 'input.mlir'}:{line}:{column}: error: {pass_for(source)}: {message}"), err
  assert err.count("error:") == 1


def test_accessors_round_trip():
  with uop.context() as ctx, ir.Location.unknown():
    module = ir.Module.parse(declaration("pytc.kernel") + declaration("pytc.kernels = 1 : i64").replace("@f", "@graph") +
                             tensor_graph() + rangeified('reason = "output"').replace("@g", "@h"), ctx)
    fn, graph, tensor_fn, rangeified_fn = module.body.operations
    reduce, bufferize = tensor_fn.regions[0].blocks[0].operations[0], rangeified_fn.regions[0].blocks[0].operations[2]
    assert KERNEL.get(fn) is True and KERNEL.get(graph) is False and KERNEL.get(graph, True) is True
    assert EXTENT.get(fn) is None and EXTENT.get(fn, 7) == 7 and not VECTOR.has(fn)
    tile = {"lanes": 16, "vectors": 2, "rows": 4, "group": 1, "upcast": -1, "pack": 1, "unroll": 0, "stream": 1}
    writes = [(fn, EXTENT, 4096), (fn, VECTOR, tile), (fn, LOOP_ORDER, LoopOrder.REDUCE_OUTER), (graph, KERNELS, 5), (graph, BUFFERS, 2),
              (graph, PEAK_BYTES, 1 << 40), (reduce, SPLIT, True), (bufferize, REASON, Reason.MULTI_USE), (bufferize, FUSE, "kept: costly")]
    for op, attribute, value in writes: attribute.set(op, value)
    verify(module.operation, "test")
    reparsed = ir.Module.parse(str(module), ctx)
    ops = dict(zip((fn, graph, reduce, bufferize), (reparsed.body.operations[0], reparsed.body.operations[1],
                                                   reparsed.body.operations[2].regions[0].blocks[0].operations[0],
                                                   reparsed.body.operations[3].regions[0].blocks[0].operations[2])))
    for op, attribute, value in writes:
      for where in (op, ops[op]):
        assert attribute.has(where) and attribute.get(where) == value and type(attribute.get(where)) is type(value), (attribute.name, value)
    assert "lanes = 16 : i64" in str(ops[fn].attributes["pytc.vector"]) and "pytc.split" in str(ops[reduce])
    assert REASON.get(ops[bufferize]) is Reason.MULTI_USE and LOOP_ORDER.get(ops[fn]) is LoopOrder.REDUCE_OUTER
    assert str(EXTENT.spelled(3)) == "3 : i64" and isinstance(KERNEL.spelled(), ir.UnitAttr)


@pytest.mark.parametrize("attribute,value", [(VECTOR, {"lanes": 12, "vectors": 1, "rows": 1, "group": 1, "upcast": -1, "pack": 0, "unroll": 0}),
                                             (VECTOR, {"lanes": 8}), (KERNELS, -1), (EXTENT, -1), (FUSE, "because"),
                                             (BUFFER_DEVICE, "")])
def test_set_refuses_a_malformed_value(attribute, value):
  with uop.context() as ctx, ir.Location.unknown():
    fn = ir.Module.parse(declaration("pytc.kernel"), ctx).body.operations[0]
    with pytest.raises(AssertionError, match=attribute.name):
      attribute.set(fn, value)
    assert not attribute.has(fn)
