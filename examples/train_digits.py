"""Train an MLP (64-128-10, Adam) on scikit-learn's bundled 8x8 digits (1797 images, no download), the training step
under TinyJit unless --no-jit: from the third step on, a step replays the captured kernels without building a graph.
Prints the loss as it trains, then test accuracy and milliseconds per step. With the same --seed, the jitted and the plain
step compute the same losses."""
from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits

from pytc import Context, Tensor, TinyJit, nn
from pytc.nn.optim import Adam
from pytc.nn.state import get_parameters


def digits(seed: int = 0, test_fraction: float = 0.2) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
  """Train and test images (float32 in [0, 1], flattened to 64) and labels (int32), split after a seeded shuffle."""
  images, labels = load_digits(return_X_y=True)
  order = np.random.default_rng(seed).permutation(len(images))
  images, labels = (images[order] / 16.0).astype(np.float32), labels[order].astype(np.int32)
  split = int(len(images) * (1 - test_fraction))
  return images[:split], labels[:split], images[split:], labels[split:]


class MLP:
  def __init__(self):
    self.l1, self.l2 = nn.Linear(64, 128), nn.Linear(128, 10)
  def __call__(self, x: Tensor) -> Tensor: return self.l2(self.l1(x).relu())


def train(steps: int = 300, batch: int = 64, lr: float = 1e-3, jit: bool = True, seed: int = 0, log_every: int = 0) -> dict:
  """Train from a seeded start; returns the loss of every step, the test accuracy and the mean milliseconds per step after the
  first three (the plain run, the capture and the compiles behind them)."""
  Tensor.manual_seed(seed)
  x_train, y_train, x_test, y_test = digits(seed)
  model = MLP()
  optimizer = Adam(get_parameters(model), lr=lr)

  def step(x: Tensor, y: Tensor) -> Tensor:
    loss = model(x).sparse_categorical_crossentropy(y)
    optimizer.zero_grad()
    loss.backward()
    return loss.realize(*optimizer.schedule_step())  # the loss and the update in one schedule

  run = TinyJit(step) if jit else step
  picks = np.random.default_rng(seed + 1).integers(0, len(x_train), (steps, batch))
  losses, started = [], 0.0
  with Context(TRAINING=1):  # optimizers step only in training mode
    for i, pick in enumerate(picks):
      if i == min(3, steps - 1): started = time.perf_counter()
      losses.append(run(Tensor(x_train[pick]), Tensor(y_train[pick])).item())
      if log_every and (i % log_every == 0 or i == steps - 1): print(f"step {i:4d}  loss {losses[-1]:.4f}")
  ms_per_step = (time.perf_counter() - started) * 1e3 / max(1, steps - min(3, steps - 1))
  accuracy = float((model(Tensor(x_test)).argmax(axis=1).numpy() == y_test).mean())
  return {"losses": losses, "accuracy": accuracy, "ms_per_step": ms_per_step}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=300)
  parser.add_argument("--batch", type=int, default=64)
  parser.add_argument("--lr", type=float, default=1e-3)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--no-jit", action="store_true", help="run the training step plainly every step")
  args = parser.parse_args()
  result = train(args.steps, args.batch, args.lr, jit=not args.no_jit, seed=args.seed, log_every=50)
  print(f"final loss {result['losses'][-1]:.4f}  test accuracy {result['accuracy'] * 100:.2f}%  "
        f"{result['ms_per_step']:.3f} ms/step ({'plain' if args.no_jit else 'TinyJit'})")


if __name__ == "__main__":
  main()
