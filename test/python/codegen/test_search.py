"""The kernel search (pytc/search.py): PYTC_SEARCH=1 times candidates and stores the winner by the kernel's structure; a
stored winner is used by every later compile; every choice it may make computes what NumPy computes; a damaged or hostile
record is ignored."""
import json
import os

import numpy as np
import pytest

from pytc import Tensor, kernel_cache, realize, search
from pytc.passes.common.attributes import TUNE

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture
def cache(tmp_path, monkeypatch):
  monkeypatch.setenv("PYTC_CACHE_DIR", str(folder := tmp_path / "cache"))
  realize._schedules.clear()
  yield folder
  realize._schedules.clear()


@pytest.fixture
def searching(monkeypatch, cache):
  monkeypatch.setenv("PYTC_SEARCH", "1")
  monkeypatch.setenv("PYTC_SEARCH_BUDGET", "3")
  yield cache
  monkeypatch.undo()


def matmul(m: int, k: int, n: int, seed: int = 0) -> tuple[Tensor, np.ndarray]:
  rng = np.random.default_rng(seed)
  a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
  return Tensor(a) @ Tensor(b), a @ b


def records(folder) -> dict[str, dict]:
  return {key: json.loads(value) for key, value in (line.split(" ") for line in (folder / "tuned").read_text().splitlines())}


def test_search_stores_a_winner_that_later_compiles_use(searching):
  out, expected = matmul(96, 200, 160)
  np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)
  stored = records(searching)
  assert len(stored) == 1
  (key, winner), = stored.items()
  with open(searching / "tuned", "a") as f: f.write(f'{key} {{"rows":1}}\n')  # the newest record wins
  realize._schedules.clear()
  out, expected = matmul(96, 200, 160, seed=1)
  np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)
  assert records(searching)[key] == {"rows": 1}, "a stored winner is used, not searched again"
  assert set(winner) <= set(TUNE.kind.optional)
  assert "pytc.tune = {rows = 1 : i64}" in kernel_ir()


def kernel_ir() -> str:
  return "\n".join(e.kernel_ir for s in list(realize._schedules.values()) for e in s.schedule.executables.values())


def test_without_pytc_search_nothing_is_searched(cache):
  out, expected = matmul(64, 64, 64)
  np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)
  assert not (cache / "tuned").exists()


def test_no_structure_key_without_a_stored_winner_or_a_search(cache, monkeypatch):
  monkeypatch.setattr(search, "structure_key", lambda kernel, device: pytest.fail("a structure key was computed"))
  out, expected = matmul(40, 24, 56)
  np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("content, expected", [(None, False), ("", False), ("not a record\n" + "zz" * 32 + " {}\n", False),
                                               ("0" * 64 + ' {"rows":2}\n', True)])
def test_has_records(cache, content, expected):
  if content is not None:
    os.makedirs(cache, exist_ok=True)
    (cache / "tuned").write_text(content)
  assert kernel_cache.has_records("tuned") is expected


def test_a_stored_winner_is_used_without_pytc_search(cache, monkeypatch):
  chosen = []
  os.makedirs(cache, exist_ok=True)
  (cache / "tuned").write_text("0" * 64 + ' {"rows":2}\n')  # some winner is stored: keys are looked up
  monkeypatch.setattr(search, "stored_winner", lambda key: chosen.append(key) or {"rows": 2, "vectors": 1, "cores": 1})
  out, expected = matmul(64, 96, 128)
  np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)
  assert chosen
  assert "cores = 1 : i64, rows = 2 : i64, vectors = 1 : i64" in kernel_ir()


def graphs():
  rng = np.random.default_rng(3)
  x, y = rng.standard_normal((48, 80)).astype(np.float32), rng.standard_normal((80, 72)).astype(np.float32)
  img, w = rng.standard_normal((2, 3, 12, 12)).astype(np.float32), rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
  e = np.exp(x - x.max(-1, keepdims=True))
  return [
    ("matmul", lambda: Tensor(x) @ Tensor(y), x @ y),
    ("matmul_t", lambda: Tensor(y).T @ Tensor(x).T, y.T @ x.T),
    ("softmax", lambda: Tensor(x).softmax(-1), e / e.sum(-1, keepdims=True)),
    ("column_sum", lambda: Tensor(x).sum(0), x.sum(0)),
    ("row_max", lambda: Tensor(x).max(1), x.max(1)),
    ("elementwise", lambda: (Tensor(x).sigmoid() * Tensor(x).abs().sqrt()), np.sqrt(np.abs(x)) / (1 + np.exp(-x))),
    ("conv", lambda: Tensor(img).conv2d(Tensor(w), padding=1), None),
  ]


CHOICES = [{"vectorize": 0}, {"lanes": 8}, {"vectors": 1}, {"vectors": 4}, {"rows": 1}, {"rows": 12}, {"group": 1}, {"group": 64},
           {"pack": 0}, {"reduce_outer": 0}, {"reduce_outer": 1}, {"cores": 1}, {"cores": 2}, {"rows": 6, "vectors": 3, "group": 4, "pack": 0}]


@pytest.mark.parametrize("choice", CHOICES, ids=[",".join(f"{k}={v}" for k, v in c.items()) for c in CHOICES])
def test_every_choice_computes_what_the_defaults_compute(cache, monkeypatch, choice):
  defaults = {name: build().numpy() for name, build, _ in graphs()}
  realize._schedules.clear()
  monkeypatch.setattr(search, "stored_winner", lambda key: dict(choice))
  monkeypatch.setattr(kernel_cache, "has_records", lambda name: True)
  for name, build, expected in graphs():
    ours = build().numpy()
    np.testing.assert_allclose(ours, defaults[name], rtol=2e-5, atol=2e-5, err_msg=f"{name} with {choice}")
    if expected is not None: np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-4, err_msg=f"{name} with {choice}")


HOSTILE = ["not a record", "zz" * 32 + ' {"rows":4}', "KEY {", 'KEY {"rows":0}', 'KEY {"unroll":1}', "KEY [1,2]", 'KEY {"rows":"4"}',
           'KEY {"rows":99999999999999999999999}', "KEY " + "x" * 5000, "KEY \x00\xff", 'KEY {"rows":4} trailing']


@pytest.mark.parametrize("line", HOSTILE)
def test_a_damaged_record_is_ignored(cache, monkeypatch, line):
  keys = []
  original = search.stored_winner
  monkeypatch.setattr(search, "stored_winner", lambda key: keys.append(key) or original(key))
  monkeypatch.setattr(kernel_cache, "has_records", lambda name: True)
  matmul(32, 40, 48)[0].realize()
  os.makedirs(cache, exist_ok=True)
  (cache / "tuned").write_text(line.replace("KEY", keys[0]) + "\n")
  realize._schedules.clear()
  out, expected = matmul(32, 40, 48, seed=2)
  np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)
  assert original(keys[0]) is None


def test_a_record_file_others_can_write_is_not_read(cache, monkeypatch):
  keys = []
  original = search.stored_winner
  monkeypatch.setattr(search, "stored_winner", lambda key: keys.append(key) or original(key))
  monkeypatch.setattr(kernel_cache, "has_records", lambda name: True)
  matmul(32, 40, 48)[0].realize()
  (cache / "tuned").write_text(f'{keys[0]} {{"rows":2}}\n')
  assert original(keys[0]) == {"rows": 2}
  os.chmod(cache / "tuned", 0o666)
  assert original(keys[0]) is None


def test_a_candidate_with_another_output_is_rejected(searching, monkeypatch):
  monkeypatch.setattr(search, "same_values", lambda a, b, element: False)  # every candidate after the default "differs"
  out, expected = matmul(64, 128, 96)
  np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)
  assert list(records(searching).values()) == [{}]


def test_same_values_compares_within_the_outputs_scale():
  from mlir import ir
  with ir.Context():
    f32 = ir.F32Type.get()
    a = np.array([1.0, 1000.0, np.nan], np.float32)
    assert search.same_values(a.tobytes(), (a * (1 + 1e-6)).astype(np.float32).tobytes(), f32)
    assert not search.same_values(a.tobytes(), np.array([1.5, 1000.0, np.nan], np.float32).tobytes(), f32)
    assert not search.same_values(a.tobytes(), np.array([1.0, 1000.0, 0.0], np.float32).tobytes(), f32)
    i32 = ir.IntegerType.get_signless(32)
    assert not search.same_values(np.int32([1, 2]).tobytes(), np.int32([1, 3]).tobytes(), i32)


def test_tune_attribute_reads_back():
  from mlir import ir
  from mlir.dialects import func
  with ir.Context(), ir.Location.unknown():
    module = ir.Module.create()
    with ir.InsertionPoint(module.body): fn = func.FuncOp("k", ([], []))
    TUNE.set(fn, {"rows": 6, "cores": 1})
    assert TUNE.get(fn) == {"rows": 6, "cores": 1}


def test_a_kernel_too_short_to_matter_keeps_the_defaults(searching):
  x = np.arange(64, dtype=np.float32)
  np.testing.assert_allclose((Tensor(x) * 2 + 1).numpy(), x * 2 + 1)
  assert list(records(searching).values()) == [{}]


def test_the_host_target_counts_its_cores_in_what_binaries_depend_on():
  from pytc.runtime.target import host_cpu
  assert host_cpu().cores == (os.cpu_count() or 1)
  assert f"cores={host_cpu().cores}" in host_cpu().cache_key()
