"""examples/train_digits.py trains its MLP on scikit-learn's digits to well above chance (10%) with and without TinyJit, and the
jitted training step computes the same losses as the plain one."""
import importlib.util
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "train_digits.py"


def load_example():
  spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_train_digits_with_and_without_the_jit():
  example = load_example()
  jitted, plain = example.train(steps=200, jit=True), example.train(steps=200, jit=False)
  assert jitted["accuracy"] > 0.85 and plain["accuracy"] > 0.85
  np.testing.assert_allclose(jitted["losses"], plain["losses"], rtol=1e-5)
  assert np.mean(jitted["losses"][-20:]) < 0.5 * np.mean(jitted["losses"][:20])
