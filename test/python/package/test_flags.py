"""The flag table (pytc/flags.py): the README's table matches it, the package reads the environment only through it, and
flags are read live, typed and checked."""
import re
from pathlib import Path

import numpy as np
import pytest

from pytc import Tensor, flags
from pytc.helpers import DEBUG, JIT, Context, LRUCache

ROOT = Path(__file__).resolve().parents[3]
PACKAGE_FOLDERS = ("pytc", "passes", "runtime")
# environment reads that are not knobs: a child process gets the parent's PYTHONPATH extended
PASSED_THROUGH = {"PYTHONPATH"}


def readme_rows() -> dict[str, tuple[str, str]]:
  """The README's environment table: variable -> (type, default)."""
  text = (ROOT / "README.md").read_text()
  section = text[text.index("## Environment variables"):]
  section = section[:section.index("\n## ")]
  return {m[1]: (m[2], m[3]) for m in re.finditer(r"^\| `([A-Z_0-9]+)` \| (\w+) \| ([^|]+) \|", section, re.M)}


def test_the_readme_table_lists_every_flag_with_its_type_and_default():
  rows = readme_rows()
  assert set(rows) == {f.name for f in flags.FLAGS}
  for flag in flags.FLAGS:
    kind, default = rows[flag.name]
    assert kind == flag.kind.__name__, flag.name
    expected = "(see meaning)" if flag.default is None else "(empty)" if flag.default == "" else f"`{flag.default}`"
    assert default.strip() == expected, flag.name


def test_flag_names_are_unique():
  assert len({f.name for f in flags.FLAGS}) == len(flags.FLAGS)


def test_the_package_reads_the_environment_only_through_the_flag_table():
  read = re.compile(r"""(?:environ\.get|environ\[|getenv)\(?\s*["']([A-Za-z_0-9]+)["']""")
  found = {}
  for folder in PACKAGE_FOLDERS:
    for path in (ROOT / folder).rglob("*.py"):
      if path.name == "flags.py": continue
      for name in read.findall(path.read_text()): found.setdefault(name, []).append(str(path.relative_to(ROOT)))
  assert {name: paths for name, paths in found.items() if name not in PASSED_THROUGH} == {}


def test_a_flag_is_read_live(monkeypatch):
  monkeypatch.setenv("PYTC_SPLIT_BYTES", "123")
  assert flags.SPLIT_BYTES.value == 123
  monkeypatch.setenv("PYTC_SPLIT_BYTES", "456")
  assert flags.SPLIT_BYTES.value == 456
  monkeypatch.delenv("PYTC_SPLIT_BYTES")
  assert flags.SPLIT_BYTES.value == 1 << 18


@pytest.mark.parametrize("raw", ["", "  "])
def test_an_empty_flag_is_its_default(monkeypatch, raw):
  monkeypatch.setenv("PYTC_WAIT_TIMEOUT", raw)
  assert flags.WAIT_TIMEOUT.value == 30.0


@pytest.mark.parametrize("flag, raw", [(flags.SPLIT_WORK, "lots"), (flags.WAIT_TIMEOUT, "10s"), (flags.COMPILE_THREADS, "2.5"),
                                       (flags.DEBUG, "yes")])
def test_a_value_of_the_wrong_type_is_a_flag_error_naming_the_variable(monkeypatch, flag, raw):
  monkeypatch.setenv(flag.name, raw)
  with pytest.raises(flags.FlagError, match=f"{flag.name} is '{raw}', not an? (integer|number)"): print(flag.value)


def test_context_sets_a_flag_mode_for_a_block_and_restores_it(monkeypatch):
  monkeypatch.delenv("DEBUG", raising=False)
  assert DEBUG.value == 0 and not DEBUG
  with Context(DEBUG=3, JIT=0):
    assert DEBUG >= 3 and DEBUG.value == 3 and JIT.value == 0
  assert DEBUG.value == 0 and JIT.value == 1


def test_debug_from_the_environment_prints_realizes(monkeypatch, capsys):
  monkeypatch.setenv("DEBUG", "1")
  np.testing.assert_array_equal((Tensor([1.0, 2.0]) + 1).numpy(), [2.0, 3.0])
  assert "realize:" in capsys.readouterr().out


def test_a_cache_sized_by_a_flag_keeps_that_many_entries_when_one_is_added(monkeypatch):
  monkeypatch.setenv("PYTC_SCHEDULE_CACHE", "3")
  cache = LRUCache(flags.SCHEDULE_CACHE)
  for key in range(5): cache[key] = key
  assert list(cache) == [2, 3, 4]
  monkeypatch.setenv("PYTC_SCHEDULE_CACHE", "1")
  cache[5] = 5
  assert list(cache) == [5]


def test_the_flags_read_at_import_set_the_starting_modes(tmp_path):
  import os
  import subprocess
  import sys
  code = "from pytc import Device, Tensor, dtypes; print(Tensor.training, Device.DEFAULT, dtypes.default_float.name)"
  env = {**os.environ, "TRAINING": "1", "PYTC_DEVICE": "EMU", "DEFAULT_FLOAT": "half"}
  out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
  assert out.split() == ["True", "EMU", "float16"]
