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


@pytest.mark.parametrize("target", ["cpu", "gfx942", "sm_90"])
def test_stage_table_is_what_pytc_opt_runs(tmp_path, capsys, target):
  """`pytc-opt --stage` replays a stage of the table `pytc compile --stage` stops at: the same IR after each."""
  from pytc.compiler import context
  from pytc.compilers.targets import compiler_for
  from pytc.pytc_opt import main as opt
  with context(): stages = compiler_for(target).stages()
  assert [s.name for s in stages] == ["schedule", "kernels", "llvm", "binary"] and [s.number for s in stages] == [1, 2, 3, 4]
  assert opt(["--list-stages", "--target", target]) == 0
  table = capsys.readouterr().out
  assert all(s.name in table and (s.pipeline or "code emission") in table for s in stages)
  assert compile_graph(tmp_path, "--target", target, "--stage", "schedule") == 0
  (tmp_path / "scheduled.mlir").write_text(capsys.readouterr().out)
  assert compile_graph(tmp_path, "--target", target, "--stage", "kernels") == 0
  kernels = capsys.readouterr().out
  assert opt([str(tmp_path / "scheduled.mlir"), "--stage", "kernels", "--target", target]) == 0
  assert capsys.readouterr().out.strip() == kernels.strip()


def test_pytc_opt_stage_errors(tmp_path, capsys):
  from pytc.pytc_opt import main as opt
  (tmp_path / "empty.mlir").write_text("module {}")
  cases = [(["--stage", "binary"], "emits code"), (["--stage", "fuse"], "no stage 'fuse' for cpu (its stages: schedule, kernels"),
           (["--stage", "kernels", "--target", "gfx1"], "unknown target 'gfx1'"), (["--list-stages", "--target", "x"], "unknown target 'x'"),
           (["--stage", "kernels", "-cse"], "use one of --pass-pipeline, --stage or -<pass> flags")]
  for args, message in cases:
    assert opt([str(tmp_path / "empty.mlir"), *args]) == 1
    assert message in capsys.readouterr().err, args


def test_dump_folders_are_named_by_the_stage_table(tmp_path, monkeypatch):
  monkeypatch.setenv("PYTC_DUMP", str(tmp_path / "ir"))
  assert compile_graph(tmp_path, "--stage", "binary", "-o", str(tmp_path / "kernels.so")) == 0
  folders = sorted(p.name for p in (tmp_path / "ir" / "graph").iterdir())
  assert folders == ["1-schedule", "2-kernels", "3-llvm"]
  assert all(any((tmp_path / "ir" / "graph" / folder).rglob("*.mlir")) for folder in folders)
