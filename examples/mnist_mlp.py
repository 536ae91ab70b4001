"""Train a 2-layer MLP with Adam on synthetic, deterministic 28x28 "digits" (no download): ten stroke
prototypes, each sample shifted by up to 2 pixels and noised. Prints loss and kernels per step, and
how many schedules each step had to build (0 from the second step on: the graphs are cached)."""
import numpy as np

from pytc import Context, GlobalCounters, Tensor, nn
from pytc.nn.optim import Adam
from pytc.nn.state import get_parameters

STROKES = [  # (row0, col0, row1, col1) segments on a 28x28 canvas, one list per class
  [(6, 10, 6, 18), (6, 18, 22, 18), (22, 18, 22, 10), (22, 10, 6, 10)],
  [(5, 14, 23, 14)],
  [(6, 9, 6, 19), (6, 19, 14, 19), (14, 19, 22, 9), (22, 9, 22, 19)],
  [(6, 9, 6, 19), (6, 19, 22, 19), (14, 11, 14, 19), (22, 9, 22, 19)],
  [(5, 9, 15, 9), (15, 9, 15, 20), (5, 17, 23, 17)],
  [(6, 19, 6, 9), (6, 9, 14, 9), (14, 9, 14, 19), (14, 19, 22, 19), (22, 19, 22, 9)],
  [(6, 18, 6, 9), (6, 9, 22, 9), (22, 9, 22, 19), (22, 19, 14, 19), (14, 19, 14, 9)],
  [(6, 8, 6, 20), (6, 20, 23, 12)],
  [(6, 9, 6, 19), (6, 9, 22, 9), (6, 19, 22, 19), (14, 9, 14, 19), (22, 9, 22, 19)],
  [(6, 9, 6, 19), (6, 9, 14, 9), (14, 9, 14, 19), (6, 19, 22, 19), (22, 19, 22, 10)],
]


def prototype(strokes) -> np.ndarray:
  canvas = np.zeros((28, 28), np.float32)
  for r0, c0, r1, c1 in strokes:
    for t in np.linspace(0, 1, 40):
      r, c = round(r0 + (r1 - r0) * t), round(c0 + (c1 - c0) * t)
      canvas[max(r - 1, 0):r + 2, max(c - 1, 0):c + 2] = 1.0
  return canvas


def dataset(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
  rng = np.random.default_rng(seed)
  protos = np.stack([prototype(s) for s in STROKES])
  labels = rng.integers(0, 10, n)
  shifts = rng.integers(-2, 3, (n, 2))
  images = np.stack([np.roll(protos[y], tuple(s), axis=(0, 1)) for y, s in zip(labels, shifts)])
  images = np.clip(images + rng.normal(0, 0.3, images.shape), 0, 1).astype(np.float32)
  return images.reshape(n, 784), labels.astype(np.int32)


class MLP:
  def __init__(self):
    self.l1, self.l2 = nn.Linear(784, 128), nn.Linear(128, 10)
  def __call__(self, x: Tensor) -> Tensor: return self.l2(self.l1(x).relu())


def main(steps: int = 120, batch: int = 128) -> float:
  Tensor.manual_seed(0)
  images, labels = dataset(4096)
  model = MLP()
  optimizer = Adam(get_parameters(model), lr=2e-3)
  rng = np.random.default_rng(1)
  with Context(TRAINING=1):  # optimizers step only in training mode
    for step in range(steps):
      pick = rng.integers(0, len(images), batch)
      GlobalCounters.reset()
      loss = model(Tensor(images[pick])).sparse_categorical_crossentropy(Tensor(labels[pick]))
      optimizer.zero_grad()
      loss.backward()
      loss.realize(*optimizer.schedule_step())  # with the update: realized after it, the loss would read the new weights
      print(f"step {step:4d}  loss {loss.item():.4f}  kernels {GlobalCounters.kernel_count:3d}  new schedules {GlobalCounters.schedules_built}")
  predictions = model(Tensor(images)).argmax(axis=1).numpy()
  accuracy = float((predictions == labels).mean())
  print(f"training accuracy {accuracy * 100:.2f}%")
  return accuracy


if __name__ == "__main__":
  main()
