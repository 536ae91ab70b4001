"""`python -m pytc.conformance` on a small stand-in for a tinygrad checkout."""
import json

from pytc.conformance import main

TEST_FILE = '''
import unittest
import numpy as np
from tinygrad import Tensor, dtypes, Device
from tinygrad.helpers import getenv, Context
from tinygrad.tensor import _to_np_dtype

class TestShim(unittest.TestCase):
  def test_passes(self):
    with Context(NOOPT=1): np.testing.assert_allclose((Tensor([1.0, 2.0]) * 2).numpy(), [2.0, 4.0])
    assert _to_np_dtype(dtypes.float32) is np.float32 and dtypes.half in Device[Device.DEFAULT].renderer.supported_dtypes()
  def test_wrong_value(self): np.testing.assert_allclose(Tensor([1.0]).numpy(), [2.0])
  def test_error(self): Tensor.no_such_method()
  @unittest.skipIf(getenv("FORWARD_ONLY", 0) == 0, "skipped by the file itself")
  def test_skipped(self): pass
'''


def test_runner_reports_each_outcome(tmp_path, capsys):
  (tmp_path / "test").mkdir()
  (tmp_path / "test" / "test_shim.py").write_text(TEST_FILE)
  report = tmp_path / "report.json"
  assert main(["--tinygrad-src", str(tmp_path), "test/test_shim.py", "--json", str(report)]) == 1
  outcomes = {test_id.split("::")[-1]: result["outcome"] for test_id, result in json.loads(report.read_text()).items()}
  assert outcomes == {"test_passes": "passed", "test_wrong_value": "wrong value", "test_error": "error", "test_skipped": "skipped"}
  assert "4 tests: 1 passed, 1 skipped, 1 wrong value, 1 error" in capsys.readouterr().out


def test_runner_reports_files_that_do_not_collect(tmp_path, capsys):
  (tmp_path / "test").mkdir()
  (tmp_path / "test" / "test_internals.py").write_text("from tinygrad import NoSuchInternal\n")
  assert main(["--tinygrad-src", str(tmp_path), "test/test_internals.py"]) == 1
  out = capsys.readouterr().out
  assert "test_internals.py::<collection>: collection failed" in out and "NoSuchInternal" in out


def test_runner_rejects_missing_file(tmp_path):
  try: main(["--tinygrad-src", str(tmp_path), "test/nope.py"])
  except SystemExit as e: assert "no test file" in str(e)
  else: raise AssertionError("a missing test file must stop the runner")


STAND_IN_TRANSFORMER = '''
from tinygrad import Tensor
class Block:
  def __init__(self, dim): self.w, self.dropout = Tensor.scaled_uniform(dim, dim), 0.1
class Transformer:
  def __init__(self, syms, maxlen, layers, embed_dim, num_heads, ff_dim):
    self.syms, self.embed = syms, Tensor.scaled_uniform(syms, embed_dim)
    self.tbs, self.final = [Block(embed_dim) for _ in range(layers)], Tensor.scaled_uniform(embed_dim, syms)
  def forward(self, x):
    h = (x.unsqueeze(-1) == Tensor.arange(self.syms)).float() @ self.embed
    for block in self.tbs: h = (h @ block.w).relu().dropout(block.dropout)
    return h @ self.final
'''


def test_models_mode_runs_a_model_file_on_pytc(tmp_path, capsys):
  (tmp_path / "extra" / "models").mkdir(parents=True)
  (tmp_path / "extra" / "models" / "transformer.py").write_text(STAND_IN_TRANSFORMER)
  report = tmp_path / "models.json"
  assert main(["--tinygrad-src", str(tmp_path), "--models", "--only", "transformer", "--json", str(report)]) == 0
  result = json.loads(report.read_text())["transformer"]
  assert result["outcome"] == "ran" and "tinygrad could not run it" in result["message"]  # no tinygrad in the stand-in checkout
  assert main(["--tinygrad-src", str(tmp_path), "--models", "--only", "gpt2"]) == 1  # no examples/gpt2.py there: an error on pytc
  assert "on pytc" in capsys.readouterr().out


def test_models_outputs_compare_tokens_exactly_and_values_within_tolerance():
  import numpy as np

  from pytc.conformance_models import compare
  tokens = {"tokens": np.array([1, 2, 3])}
  assert compare(tokens, {"tokens": np.array([1, 2, 3])}) == ""
  assert "tokens" in compare(tokens, {"tokens": np.array([1, 2, 4])})
  assert compare({"x": np.ones(3, np.float32)}, {"x": np.ones(3, np.float32) * (1 + 1e-4)}) == ""
  assert "max difference" in compare({"x": np.ones(3, np.float32)}, {"x": np.ones(3, np.float32) * 1.1})
  assert "only on one side" in compare({"x": np.ones(1)}, {})


def test_runner_copies_imported_test_modules_and_deselects_internal_tests(tmp_path, capsys):
  """A test file importing another test module finds it at its path; a test named in DESELECTED is left out and listed
  with its reason; a test skipped by a helper of tinygrad's internals reports that reason."""
  from pytc.conformance_shim import DESELECTED
  internal = next(iter(DESELECTED))
  (tmp_path / "test" / "unit").mkdir(parents=True)
  (tmp_path / "test" / "backend").mkdir()
  (tmp_path / "test" / "unit" / "test_shared.py").write_text("def doubled(x): return x * 2\n")
  (tmp_path / "test" / "backend" / "test_user.py").write_text(f'''
import unittest
from tinygrad import Tensor
from test.unit.test_shared import doubled
from test.helpers import assert_jit_cache_len
class TestUser(unittest.TestCase):
  def test_uses_the_shared_module(self): assert doubled(Tensor([1.0])).tolist() == [2.0]
  def {internal}(self): raise AssertionError("a deselected test ran")
  def test_inspects_the_jit_cache(self): assert_jit_cache_len(None, 1)
''')
  report = tmp_path / "report.json"
  assert main(["--tinygrad-src", str(tmp_path), "test/backend/test_user.py", "--json", str(report)]) == 0
  outcomes = {test_id.split("::")[-1]: result for test_id, result in json.loads(report.read_text()).items()}
  assert set(outcomes) == {"test_uses_the_shared_module", "test_inspects_the_jit_cache"}
  assert outcomes["test_uses_the_shared_module"]["outcome"] == "passed"
  assert outcomes["test_inspects_the_jit_cache"] == {"outcome": "skipped", "message": "tinygrad internals: its JIT cache"}
  out = capsys.readouterr().out
  assert f"deselected  {internal}: {DESELECTED[internal]}" in out and "1x tinygrad internals: its JIT cache" in out
