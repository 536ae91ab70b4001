"""How pytc's pass wrapper reports a bug inside a pass, checks pass options by their annotations, and locates errors:
throwaway passes registered in-process, run through pytc-opt and through the compile driver."""
import json
import re
from pathlib import Path
from typing import Annotated

import pytest
from mlir import ir

from pytc.compiler import context
from pytc.passes import PASSES, Count, PassError, PipelineError, Within, pass_manager, register
from pytc.pipelines import CompileError, run_pipeline
from pytc.pytc_opt import main

GRAPH = """func.func @graph(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  %e = uop.exp2 %n : tensor<4xf32>
  uop.sink %e : tensor<4xf32>
  return
}
"""
EXP2_LINE = 3  # the line of the uop.exp2 the failing passes stop at


def lookup(table: dict, key: str) -> int: return table[key]


def ops_named(module: ir.Operation, name: str) -> list[ir.OpView]:
  return [op for fn in module.regions[0].blocks[0].operations for op in fn.regions[0].blocks[0].operations if op.operation.name == name]


@pytest.fixture
def passes():
  """Register throwaway passes for one test and forget them afterwards."""
  added = []

  def add(argument: str, takes: tuple[str, ...] = ("tensor",)):
    added.append(argument)
    return register(argument, "a pass of this test", takes=takes)
  yield add
  for argument in added: PASSES.pop(argument)


@pytest.fixture
def graph_file(tmp_path):
  (path := tmp_path / "graph.mlir").write_text(GRAPH)
  return str(path)


def failing_pass(passes, argument: str) -> None:
  @passes(argument)
  def run(module: ir.Operation) -> None:
    for op in ops_named(module, "uop.exp2"): lookup({}, op.operation.name)


def test_internal_error_names_pass_op_and_frame(passes, graph_file, capsys):
  failing_pass(passes, "test-keyerror")
  assert main([graph_file, "-test-keyerror"]) == 1
  err = capsys.readouterr().err
  assert f"graph.mlir:{EXP2_LINE}:8: error: test-keyerror failed with an internal error: KeyError: 'uop.exp2'" in err
  assert "test_pass_errors.py:" in err and "in lookup" in err  # the innermost frame
  assert "Traceback" not in err and "--debug" in err


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_prints_the_traceback(passes, graph_file, capsys, monkeypatch, how):
  failing_pass(passes, "test-keyerror")
  if how == "env": monkeypatch.setenv("DEBUG", "1")
  assert main([graph_file, "-test-keyerror"] + (["--debug"] if how == "flag" else [])) == 1
  err = capsys.readouterr().err
  assert "Traceback (most recent call last)" in err and "in run" in err and "in lookup" in err
  assert f"graph.mlir:{EXP2_LINE}:8: error: test-keyerror failed with an internal error" in err


def test_internal_error_in_compile_driver(passes):
  failing_pass(passes, "test-keyerror")
  with context():
    module = ir.Module.parse(GRAPH)
    with pytest.raises(CompileError, match=r"test-keyerror failed with an internal error: KeyError: 'uop.exp2' \(at .*errors.py:\d+ in lookup"):
      run_pipeline(module, "builtin.module(test-keyerror)")


def test_frame_inside_a_library_names_the_pass_code_too(passes, graph_file, capsys):
  @passes("test-library")
  def run(module: ir.Operation) -> None:
    for op in ops_named(module, "uop.neg"): json.loads(op.operation.name)
  assert main([graph_file, "-test-library"]) == 1
  err = capsys.readouterr().err
  assert "graph.mlir:2:8: error: test-library failed with an internal error: JSONDecodeError" in err
  assert "(at json/decoder.py:" in err and ", called from " in err and "test_pass_errors.py:" in err and " in run)" in err


def test_pass_error_is_located(passes, graph_file, capsys):
  @passes("test-reject")
  def run(module: ir.Operation) -> None:
    for op in ops_named(module, "uop.exp2"): raise PassError(op.location, "test-reject does not take exp2")
  assert main([graph_file, "-test-reject"]) == 1
  assert capsys.readouterr().err.strip() == f"{graph_file}:{EXP2_LINE}:8: error: test-reject does not take exp2"


def test_options_are_typed_by_annotations(passes):
  seen = {}

  @passes("test-options")
  def run(module: ir.Operation, lanes: Annotated[int, Within(1, 64, power_of_two=True)] = 8, rows: Count = 4, verbose: bool = False,
          name: str = "x") -> None:
    seen.update(lanes=lanes, rows=rows, verbose=verbose, name=name)
  with context() as ctx:
    pass_manager("builtin.module(test-options{lanes=16 verbose name=y})", ctx).run(ir.Module.parse(GRAPH).operation)
    assert seen == {"lanes": 16, "rows": 4, "verbose": True, "name": "y"}
    for options, message in [("lanes=abc", "option lanes expects an integer, got 'abc'"), ("lanes=0", "a power of two from 1 to 64, got 0"),
                             ("rows=0", "option rows expects an integer >= 1, got 0"), ("verbose=2", "expects true, false, 1 or 0, got '2'"),
                             ("rows=1 rows=2", "option rows is given twice"), ("depth=1", "test-options has no option 'depth'")]:
      with pytest.raises(PipelineError, match=message): pass_manager(f"builtin.module(test-options{{{options}}})", ctx)


def test_pipeline_is_checked_before_the_input_is_read(capsys, tmp_path):
  assert main([str(tmp_path / "missing.mlir"), "-pytc-vectorize=lanes=abc"]) == 1
  assert capsys.readouterr().err.strip() == "pytc-opt: error: pytc-vectorize: option lanes expects an integer, got 'abc'"


def test_compiler_pipelines_still_parse():
  from dataclasses import replace

  from pytc.compilers.cpu import CPUCompiler
  from pytc.compilers.gpu import gpu_compiler
  from pytc.runtime.target import host_cpu
  targets = [host_cpu(), replace(host_cpu(), vector_lanes=16, vector_registers=32), replace(host_cpu(), vector_lanes=8, vector_registers=16)]
  compilers = [*map(CPUCompiler, targets), gpu_compiler("gfx942"), gpu_compiler("sm_90")]
  with context() as ctx:
    for stage in (stage for compiler in compilers for stage in compiler.stages() if stage.pipeline): pass_manager(stage.pipeline, ctx)


INVALID = sorted((Path(__file__).parents[2] / "passes").glob("*-invalid.mlir"))


@pytest.mark.parametrize("path", INVALID, ids=[p.name for p in INVALID])
def test_every_invalid_chunk_fails_with_a_located_error(path, tmp_path, capsys):
  """Outside --verify-diagnostics, each chunk expecting an error exits 1 with `file:line:col: error:` at a real line."""
  text = path.read_text()
  flags = re.search(r"--verify-diagnostics (.*)$", text.splitlines()[0]).group(1).split()
  for number, chunk in enumerate(re.split(r"^// -----.*$", text, flags=re.M)):
    if "expected-error" not in chunk: continue
    (chunk_file := tmp_path / f"chunk{number}.mlir").write_text(chunk)
    assert main([str(chunk_file), *flags]) == 1, f"{path.name} chunk {number} exits 0"
    err = capsys.readouterr().err
    assert re.search(rf"chunk{number}\.mlir:[1-9]\d*:\d+: error: ", err), f"{path.name} chunk {number}: {err}"


def test_a_pipeline_s_first_pytc_pass_checks_its_input_and_every_pass_does_when_asked(passes, monkeypatch):
  """Without PYTC_CHECK_FORMS=1 only the first pytc pass of a pipeline checks the forms of its input (what it was given);
  with it, or with check_every, each pass checks what the one before it left. A malformed input is refused either way."""
  from pytc.passes.common import forms
  checked, ran = [], []
  real_check = forms.check_input
  monkeypatch.setattr(forms, "check_input", lambda op, argument, takes: checked.append(argument) or real_check(op, argument, takes))
  for name in ("test-first", "test-second"): passes(name)(lambda module, name=name: ran.append(name))
  pipeline = "builtin.module(canonicalize, test-first, cse, test-second)"
  with context() as ctx:
    for setting, check_every, expected in [("0", None, ["test-first"]), ("1", None, ["test-first", "test-second"]),
                                           ("0", True, ["test-first", "test-second"]), ("1", False, ["test-first"])]:
      monkeypatch.setenv("PYTC_CHECK_FORMS", setting)
      checked.clear()
      pass_manager(pipeline, ctx, check_every=check_every).run(ir.Module.parse(GRAPH).operation)
      assert checked == expected
    monkeypatch.setenv("PYTC_CHECK_FORMS", "0")
    kernel_only = ir.Module.parse(GRAPH.replace("uop.sink %e : tensor<4xf32>\n", ""))  # uop ops but no sink: no form
    with pytest.raises(ir.MLIRError, match="test-first"): pass_manager("builtin.module(test-first, test-second)", ctx).run(kernel_only.operation)
  assert ran.count("test-first") == 4


@pytest.mark.parametrize("every", ["0", "1"])
def test_a_pass_that_leaves_invalid_ir_fails_the_pipeline(passes, monkeypatch, every):
  """The compile driver verifies a pipeline's result (after every pass with PYTC_CHECK_FORMS=1, where the failure names the
  pass): a pass that leaves invalid IR raises CompileError either way, never hands it on."""
  @passes("test-break-ir")
  def run(module: ir.Operation) -> None:
    ops_named(module, "uop.neg")[0].operation.move_after(ops_named(module, "uop.exp2")[0].operation)  # used before defined
  monkeypatch.setenv("PYTC_CHECK_FORMS", every)
  with context():
    module = ir.Module.parse(GRAPH)
    with pytest.raises(CompileError, match="dominate"): run_pipeline(module, "builtin.module(test-break-ir, canonicalize)")
