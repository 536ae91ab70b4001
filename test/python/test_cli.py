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
  assert main(["devices"]) == 0 and capsys.readouterr().out.split() == ["CPU", "EMU"]
