"""The differential fuzzer (pytc.fuzz): a fixed range of seeds passes, and the fuzzer's own machinery works: a seed makes
the same program every time, a printed program reproduces what the fuzzer checked, a dying worker is a reported crash,
and shrinking keeps a program that fails the same way."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from pytc import fuzz

CI_SEEDS = range(0, int(os.environ.get("PYTC_FUZZ_SEEDS", "300")))


def test_ci_seeds_pass():
  failures = fuzz.run_seeds(CI_SEEDS, workers=2, timeout=300, verbose=False)
  assert not failures, "\n".join(f"seed {seed}: {answer['status']} {answer['message']}" for seed, answer in failures)


def test_a_seed_makes_one_program():
  for seed in (3, 17, 123):
    assert fuzz.generate(seed) == fuzz.generate(seed)
    assert fuzz.decode(fuzz.encode(fuzz.generate(seed))) == fuzz.generate(seed)
  assert len({fuzz.encode(fuzz.generate(seed)) for seed in range(20)}) == 20


def test_programs_cover_the_op_families_and_dtypes():
  programs = [fuzz.generate(seed) for seed in range(300)]
  ops = {node.op for p in programs for node in p.nodes if isinstance(node, fuzz.Step)}
  assert ops == set(fuzz.OPS), f"never drawn: {set(fuzz.OPS) - ops}"
  dtypes = {node.dtype for p in programs for node in p.nodes}
  assert {"float32", "float16", "int32", "uint8", "bool"} <= dtypes
  assert any(p.gradient for p in programs) and any(not p.gradient for p in programs)
  shapes = [node.shape for p in programs for node in p.nodes]
  assert any(0 in s for s in shapes) and any(s == () for s in shapes) and any(1 in s for s in shapes)


@pytest.mark.parametrize("seed", [2, 5, 36])
def test_a_printed_program_computes_what_was_checked(seed):
  """The Python a failure prints runs on its own and gives the values the fuzzer compared with the reference."""
  program = fuzz.generate(seed)
  capture = ("import builtins, pickle, sys\nimport numpy\n"
             "builtins.print = lambda *values: sys.stdout.buffer.write(pickle.dumps([numpy.asarray(v) for v in values]))\n")
  result = subprocess.run([sys.executable, "-c", capture + fuzz.python_source(program)], capture_output=True, check=True)
  printed = pickle.loads(result.stdout)
  arrays = {i: fuzz.input_values(program, i) for i in program.inputs()}
  expected = fuzz.evaluate(program, arrays)[program.output]
  np.testing.assert_allclose(printed[0].astype(np.float64), expected.astype(np.float64), rtol=2e-2, atol=2e-2)


def test_a_dying_worker_is_a_crash_with_its_request():
  worker = fuzz.Worker(timeout=60)
  try:
    assert worker.ask("seed 1")["status"] in ("pass", "mismatch", "error", "reference")
    answer = worker.ask("not a program")
    assert answer["status"].startswith("crash"), answer
    assert worker.ask("seed 1")["status"] != "crash"  # a fresh worker takes the next request
  finally: worker.close()


def test_shrinking_keeps_the_failure_and_drops_the_rest():
  """A program made to fail (its reference truncates the output, an exp or a sigmoid, to int32) shrinks to no more nodes and still
  fails alike."""
  program = next(p for p in map(fuzz.generate, range(100, 1000)) if not p.gradient and p.output >= 6 and p.nodes[p.output].op in ("exp", "sigmoid")
                 and p.nodes[p.output].dtype == "float32" and 0 not in p.nodes[p.output].shape)
  broken = fuzz.replace(program, nodes=program.nodes[:-1] + (fuzz.replace(program.nodes[-1], dtype="int32"),))
  worker = fuzz.Worker(timeout=120)
  try:
    answer = worker.ask(fuzz.encode(broken))
    assert answer["status"] == "mismatch", answer
    shrunk = fuzz.shrink(broken, answer, worker)
    assert len(shrunk.nodes) <= len(fuzz.without_unused(broken).nodes)
    assert fuzz.same_failure(worker.ask(fuzz.encode(shrunk)), answer)
  finally: worker.close()


def test_the_command_reports_seeds_and_exits_zero():
  result = subprocess.run([sys.executable, "-m", "pytc.fuzz", "--seeds", "0:6", "--workers", "1"], capture_output=True, text=True, timeout=600)
  assert result.returncode == 0, result.stdout + result.stderr
  assert "6 of 6 seeds passed" in result.stdout
