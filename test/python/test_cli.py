"""The `pytc` command."""
import pytest

from pytc.cli import main

GRAPH = """func.func @graph(%a: tensor<4x8xf32>) {
  %m = uop.reduce max %a [0] : tensor<4x8xf32> -> tensor<1x8xf32>
  %e = uop.expand %m : tensor<1x8xf32> -> tensor<4x8xf32>
  %s = uop.add %a, %e : tensor<4x8xf32>
  uop.sink %s : tensor<4x8xf32>
  return
}
"""


@pytest.mark.parametrize("stage, expected, absent", [
  ("schedule", ["uop.launch @r_8_4", "uop.launch @E_4_8", "pytc.kernels = 2"], ["scf.parallel"]),
  ("kernels", ["scf.parallel", "scf.for", "uop.launch"], ["uop.range"]),
  ("llvm", ["llvm.func @r_8_4", "llvm.func @E_4_8"], ["uop.", "scf."]),
])
def test_compile_stages(tmp_path, capsys, stage, expected, absent):
  (tmp_path / "graph.mlir").write_text(GRAPH)
  assert main(["compile", str(tmp_path / "graph.mlir"), "--stage", stage]) == 0
  out = capsys.readouterr().out
  assert all(text in out for text in expected) and not any(text in out for text in absent)


def test_compile_reports_errors(tmp_path, capsys):
  (tmp_path / "bad.mlir").write_text("func.func @f() { %0 = uop.bogus }")
  assert main(["compile", str(tmp_path / "bad.mlir")]) == 1
  assert "pytc: error:" in capsys.readouterr().err
  assert main(["compile", str(tmp_path / "missing.mlir")]) == 1


def test_devices(capsys):
  assert main(["devices"]) == 0 and capsys.readouterr().out.split() == ["AMD", "CPU", "DISK", "EMU", "NV"]


def compile_graph(tmp_path, *args: str) -> int:
  (tmp_path / "graph.mlir").write_text(GRAPH)
  return main(["compile", str(tmp_path / "graph.mlir"), *args])


def test_compile_cpu_binary(tmp_path, capsys):
  assert compile_graph(tmp_path, "--target", "cpu", "--stage", "binary", "-o", str(tmp_path / "kernels.so")) == 0
  assert (tmp_path / "kernels.so").read_bytes()[:4] == b"\x7fELF" and capsys.readouterr().out == ""


@pytest.mark.parametrize("target, dialect", [("amdgpu:gfx942", "rocdl."), ("nvptx:sm_90", "nvvm.")])
@pytest.mark.parametrize("stage", ["schedule", "kernels", "gpu", "llvm"])
def test_compile_gpu_stages(tmp_path, capsys, target, dialect, stage):
  assert compile_graph(tmp_path, "--target", target, "--stage", stage) == 0
  out = capsys.readouterr().out
  expected = {"schedule": ["uop.launch @r_8_4", "uop.end"], "kernels": ["gpu.module @r_8_4_module", "gpu.func @E_4_8", "pytc.gpu = {grid = 1"],
              "gpu": ["gpu.module @E_4_8_module", "gpu.func @r_8_4", "gpu.thread_id"], "llvm": ["gpu.module @kernels", "llvm.func @r_8_4", dialect]}
  absent = {"schedule": ["gpu."], "kernels": ["scf.parallel", "uop.end"], "gpu": ["uop.end"], "llvm": ["gpu.func", "uop.", "func.func @graph"]}
  assert all(text in out for text in expected[stage]) and not any(text in out for text in absent[stage]), out


def test_compile_gpu_binaries(tmp_path, capsys):
  from pytc.runtime.amd_code_object import parse
  assert compile_graph(tmp_path, "--target", "gfx942", "--stage", "binary", "-o", str(tmp_path / "k.hsaco")) == 0
  code_object = parse((tmp_path / "k.hsaco").read_bytes())
  assert code_object.arch == "gfx942" and sorted(code_object.kernels) == ["E_4_8", "r_8_4"] and code_object.undefined == ()
  assert compile_graph(tmp_path, "--target", "sm_90", "--stage", "binary") == 0
  ptx = capsys.readouterr().out
  assert ".target sm_90" in ptx and ".entry r_8_4" in ptx and ".entry E_4_8" in ptx
  assert compile_graph(tmp_path, "--target", "sm_90", "--stage", "binary", "-o", str(tmp_path / "k.ptx")) == 0
  assert (tmp_path / "k.ptx").read_text() == ptx.removesuffix("\n")


def test_compile_refuses(tmp_path, capsys, monkeypatch):
  assert compile_graph(tmp_path, "--target", "gfx9000") == 1
  err = capsys.readouterr().err
  assert err.startswith("pytc: error: unknown target 'gfx9000'") and "cpu, amdgpu:gfx90a" in err and "nvptx:sm_90" in err
  assert compile_graph(tmp_path, "--stage", "gpu") == 1 and "pytc: error: stage 'gpu'" in capsys.readouterr().err
  monkeypatch.setattr("sys.stdout.isatty", lambda: True)
  assert compile_graph(tmp_path, "--target", "gfx942", "--stage", "binary") == 1 and "-o FILE" in capsys.readouterr().err
