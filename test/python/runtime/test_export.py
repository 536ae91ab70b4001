"""pytc.export: graphs compiled here and run by the runtime alone, in this process and in one that cannot import MLIR;
the file format's checks against damaged and hostile files."""
import json
import os
import struct
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from pytc import Device, Tensor, TinyJit, dtypes
from pytc.export import ExportError, export
from pytc.runtime.amd_code_object import parse as parse_code_object
from pytc.runtime.device import KernelInfo
from pytc.runtime.exported import FORMAT, MAGIC, PREAMBLE, BufferSpec, ExportFormatError, Graph, decode, encode, load

RNG = np.random.default_rng(7)
W1, W2 = RNG.standard_normal((20, 32)).astype(np.float32), RNG.standard_normal((32, 5)).astype(np.float32)


def mlp(x: Tensor) -> tuple[Tensor, Tensor]:
  hidden = (x @ Tensor(W1, device=x.device)).relu()
  return (hidden @ Tensor(W2, device=x.device)).log_softmax(-1), hidden.max()


def reference(x: np.ndarray) -> list[np.ndarray]:
  return [t.numpy() for t in mlp(Tensor(x, device="CPU"))]  # what the exported CPU code computes


def test_runs_where_mlir_cannot_be_imported(tmp_path: Path):
  """The file runs in a fresh process whose `import mlir` fails (the MLIR packages kept off its path), with the compiling
  process's results; the loader imports neither MLIR nor pytc's compiler."""
  x = RNG.standard_normal((6, 20)).astype(np.float32)
  (tmp_path / "mlp.pytc").write_bytes(export(mlp, Tensor(x)))
  np.save(tmp_path / "x.npy", x)
  script = f"""
import sys
sys.modules["mlir"] = None
import numpy as np
from pytc.runtime.exported import load
graph = load({str(tmp_path / "mlp.pytc")!r})
for i, out in enumerate(graph(np.load({str(tmp_path / "x.npy")!r}))): np.save({str(tmp_path)!r} + f"/out{{i}}.npy", out)
loaded = [m for m in sys.modules if sys.modules[m] is not None]
assert not any(m == "mlir" or m.startswith(("mlir.", "pytc.compiler", "pytc.tensor", "pytc.passes")) for m in loaded)
"""
  subprocess.run([sys.executable, "-c", script], check=True, env=os.environ | {"PYTHONPATH": ""})
  for i, expected in enumerate(reference(x)): np.testing.assert_array_equal(np.load(tmp_path / f"out{i}.npy"), expected)


def test_signature_and_repeated_calls():
  x = RNG.standard_normal((6, 20)).astype(np.float32)
  graph = load(export(mlp, Tensor(x)))
  assert graph.inputs == [((6, 20), dtypes.float32)] and graph.outputs == [((6, 5), dtypes.float32), ((), dtypes.float32)]
  for _ in range(3):
    x = RNG.standard_normal((6, 20)).astype(np.float32)
    for got, expected in zip(graph(x), reference(x)): np.testing.assert_array_equal(got, expected)
  graph.write_inputs(x)
  assert graph.launch(timed=True) > 0 and graph.launch() is None  # the device's timestamps around the launches
  with pytest.raises(ValueError, match=r"input 0 has shape \(6, 20\), got \(5, 20\)"): graph(x[:5])
  with pytest.raises(TypeError, match="takes 1 inputs, got 2"): graph(x, x)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "uint8", "int32", "uint32", "int64", "bool"])
def test_dtypes(dtype):
  a, b = (RNG.standard_normal((3, 8)) * 20).astype(np.float32), (RNG.standard_normal((8,)) * 20).astype(np.float32)
  def fn(x: Tensor, y: Tensor) -> list[Tensor]: return [x + y if dtype != "bool" else x | y, (x == y).where(x, y), x.max(axis=0)]
  x, y = Tensor(a).cast(dtype), Tensor(b).cast(dtype)
  expected = [t.numpy() for t in fn(x, y)]
  graph = load(export(fn, x, y))
  got = graph(x.numpy(), y.numpy())
  for g, e in zip(got, expected): np.testing.assert_array_equal(g, e)
  assert [o[1] for o in graph.outputs] == [dtypes.bool if dtype == "bool" else getattr(dtypes, dtype)] * 3


def test_edge_shapes_and_plans():
  """0-d, empty and size-1 tensors; a returned input and a returned view are copied out; an unused input keeps its place;
  several outputs computed in one kernel and a temporary between kernels."""
  def fn(s: Tensor, empty: Tensor, x: Tensor, unused: Tensor) -> list[Tensor]:
    return [s * 2, empty + 1, x, x.T, (x - x.mean()).square().sum(axis=1, keepdim=True), x.softmax(-1)]
  s, empty, unused = Tensor(3.0), Tensor(np.zeros((0, 4), np.float32)), Tensor([1, 2])
  x = Tensor(RNG.standard_normal((5, 1, 3)).astype(np.float32)[:, 0])
  graph = load(export(fn, s, empty, x, unused))
  xs = RNG.standard_normal((5, 3)).astype(np.float32)
  got = graph(np.float32(1.5), np.zeros((0, 4), np.float32), xs, np.array([7, 8], np.int32))
  expected = [t.numpy() for t in fn(Tensor(np.float32(1.5)), empty, Tensor(xs), unused)]
  assert [g.shape for g in got] == [(), (0, 4), (5, 3), (3, 5), (5, 1), (5, 3)]
  for g, e in zip(got, expected): np.testing.assert_allclose(g, e, rtol=1e-6)


def test_tinyjit_function():
  step = TinyJit(lambda x: (x * x).sum(axis=1))
  a = RNG.standard_normal((4, 9)).astype(np.float32)
  np.testing.assert_allclose(load(export(step, Tensor(a)))(a)[0], (a * a).sum(1), rtol=1e-6)


def test_threads_share_a_loaded_graph():
  graph, results = load(export(mlp, Tensor(np.zeros((6, 20), np.float32)))), {}
  xs = [RNG.standard_normal((6, 20)).astype(np.float32) for _ in range(4)]
  def call(i: int) -> None:
    for _ in range(5): results[i] = graph(xs[i])
  threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
  for t in threads: t.start()
  for t in threads: t.join()
  for i, x in enumerate(xs):
    for got, expected in zip(results[i], reference(x)): np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("target", ["emu", "emu:sm_90"])
def test_emulated_gpu_targets(target):
  """The GPU-mapped kernels of an exported file, run by the emulator (the device it names, or that device asked for by
  another spelling): NumPy's results."""
  x = RNG.standard_normal((6, 20)).astype(np.float32)
  data = export(mlp, Tensor(x), target=target)
  for graph in (load(data), load(data, device=target)):
    for got, expected in zip(graph(x), reference(x)): np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_loaded_graphs_share_the_process_device():
  """A loaded graph runs on the device Tensors use (one CPU device, one timeline), not a second instance; a file for one
  backend is refused on another before that one is opened."""
  data = export(mlp, Tensor(np.zeros((6, 20), np.float32)))
  assert load(data).device is load(data).device is Device["CPU"]
  with pytest.raises(ExportFormatError, match="runs on CPU, not NV"): load(data, device="NV")


def test_gpu_targets_hold_their_code():
  x = Tensor(np.zeros((6, 20), np.float32))
  nv = decode(export(mlp, x, target="nvptx:sm_90"))
  assert nv.device == "NV" and b".target sm_90" in nv.code and all(f".entry {k.name}(".encode() in nv.code for k in nv.kernels)
  assert all(set(k.sizes) == {"grid", "local"} for k in nv.kernels)
  amd = decode(export(mlp, x, target="amdgpu:gfx942"))
  assert amd.device == "AMD" and sorted(parse_code_object(amd.code).kernels) == sorted(k.name for k in amd.kernels)
  if not os.path.exists("/dev/kfd"):
    with pytest.raises(RuntimeError, match="no AMD GPU driver here"): load(export(mlp, x, target="amdgpu:gfx942"))
  with pytest.raises(ValueError, match="compiled for .amdgpu:gfx942.*AMD:MOCK runs amdgpu:gfx1100 mock"):
    load(export(mlp, x, target="amdgpu:gfx942"), device="AMD:MOCK")


def test_export_errors():
  x = Tensor(np.ones((2, 3), np.float32))
  with pytest.raises(ExportError, match="realized tensors"): export(lambda t: Tensor((t + 1).numpy()), x)
  with pytest.raises(ExportError, match="must return a Tensor"): export(lambda t: 3, x)
  np.testing.assert_array_equal(load(export(lambda a, b: a * b, x, x))(np.full((2, 3), 2, np.float32), np.full((2, 3), 3, np.float32))[0], 6)
  with pytest.raises(ExportError, match="cannot export for 'gfx999'"): export(lambda t: t + 1, x, target="gfx999")
  with pytest.raises(ExportError, match="example inputs must be Tensors"): export(lambda t: t + 1, np.ones(3))


def rewritten(data: bytes, change) -> bytes:
  """`data` with its JSON header changed by `change(header)`, written compactly and padded to its old length (the blobs
  stay where they were)."""
  _, version, length = PREAMBLE.unpack_from(data)
  header = json.loads(data[PREAMBLE.size:PREAMBLE.size + length])
  change(header)
  text = json.dumps(header, separators=(",", ":")).encode()
  assert len(text) <= length
  return PREAMBLE.pack(MAGIC, version, length) + text + b" " * (length - len(text)) + data[PREAMBLE.size + length:]


def set_in(path: list, value):
  def change(header: dict) -> None:
    node = header
    for key in path[:-1]: node = node[key]
    node[path[-1]] = value
  return change


@pytest.fixture(scope="module")
def exported() -> bytes: return export(mlp, Tensor(np.zeros((6, 20), np.float32)))


@pytest.mark.parametrize("change, message", [
  (set_in(["target"], "cpu other-machine"), "compiled for 'cpu'"),
  (set_in(["launches", 0, "kernel"], "nope"), "runs kernel 'nope', not in the code"),
  (set_in(["launches", 0, "buffers"], [0]), "gives .* 1 buffers, it takes"),
  (set_in(["launches", 0, "buffers", 0], 999), "names buffer 999"),
  (set_in(["inputs"], [1]), "input 0 names buffer 1"),
  (set_in(["buffers", 0, "shape"], [-1, 20]), "not a count"),
  (set_in(["buffers", 0, "dtype"], "float128"), "not a dtype"),
  (set_in(["buffers", 0, "kind"], "secret"), "kind is 'secret'"),
  (set_in(["code", "offset"], 1 << 40), "outside the blobs"),
  (set_in(["code", "offset"], 20), "outside the blobs"),  # inside the header
  (set_in(["kernels"], "all"), "kernels is str, not list"),
  (lambda h: h.pop("launches"), "has no 'launches'"),
], ids=["target", "kernel", "arity", "index", "input-kind", "shape", "dtype", "kind", "blob", "blob-in-header", "type", "missing"])
def test_hostile_headers(exported, change, message):
  with pytest.raises(ExportFormatError, match=message): load(rewritten(exported, change))


def test_blobs_follow_headers_of_any_length():
  """The blobs land after the header whatever its length (offsets with more digits lengthen it), at 64-byte boundaries."""
  for length in range(0, 300, 7):
    graph = Graph("CPU", "t" * length, b"code" * 5, (KernelInfo("k", 1),), (BufferSpec("constant", dtypes.float32, (3,), b"\1" * 12),
                  BufferSpec("output", dtypes.float32, (3,))), (), (1,), (("k", (1,)),))
    data = encode(graph, "test")
    back = decode(data)
    assert back == graph and all(b["data"]["offset"] % 64 == 0 for b in json.loads(data[16:16 + PREAMBLE.unpack_from(data)[2]])["buffers"][:1])


def test_damaged_files(exported, tmp_path: Path):
  with pytest.raises(ExportFormatError, match="no PYTCGRPH magic"): load(b"\x7fELF" + exported[4:])
  with pytest.raises(ExportFormatError, match=f"format {FORMAT + 1}, newer than this runtime's {FORMAT}"):
    load(exported[:8] + struct.pack("<I", FORMAT + 1) + exported[12:])
  with pytest.raises(ExportFormatError): load(exported[:40])
  with pytest.raises(ExportFormatError, match="not JSON"): load(exported[:PREAMBLE.size] + b"{" * 10 + exported[PREAMBLE.size + 10:])
  header = json.loads(exported[PREAMBLE.size:PREAMBLE.size + PREAMBLE.unpack_from(exported)[2]])
  assert [b["data"]["nbytes"] for b in header["buffers"] if b["kind"] == "constant"] == [20 * 32 * 4, 32 * 5 * 4]  # the weights
  code = header["code"]
  garbage = bytearray(exported)
  garbage[code["offset"]:code["offset"] + code["nbytes"]] = b"\0" * code["nbytes"]
  with pytest.raises(ValueError): load(bytes(garbage))
  (tmp_path / "g.pytc").write_bytes(exported)
  assert load(tmp_path / "g.pytc").outputs == load(str(tmp_path / "g.pytc")).outputs
