"""pytc's first slice end to end: lazy elementwise math, one fused kernel per realize, launched
through the CPU device's HCQ queue. Prints results, kernel counts and timings."""
import time

import numpy as np

from pytc import Device, GlobalCounters, Tensor, TinyJit


def timed(fn):
  start = time.perf_counter()
  result = fn()
  return result, (time.perf_counter() - start) * 1e3


def main() -> None:
  print(f"device: {Device.DEFAULT}")
  a, b = Tensor([1.0, 2.0, 3.0, 4.0]), Tensor([0.5, -1.0, 2.0, 8.0])
  c = ((a + b) * 2 - a / b).relu()
  print("((a + b) * 2 - a / b).relu() =", c.numpy())

  x_np = np.random.default_rng(0).standard_normal((1024, 1024), dtype=np.float32)
  y_np = np.random.default_rng(1).standard_normal((1024, 1024), dtype=np.float32)
  x, y = Tensor(x_np), Tensor(y_np)
  expr = lambda: ((x * y + x).maximum(0.0) * 0.5).exp2()
  expected = np.exp2(np.maximum(x_np * y_np + x_np, 0.0) * 0.5)

  GlobalCounters.reset()
  cold, cold_ms = timed(lambda: expr().numpy())
  warm, warm_ms = timed(lambda: expr().numpy())
  _, numpy_ms = timed(lambda: np.exp2(np.maximum(x_np * y_np + x_np, 0.0) * 0.5))
  assert np.allclose(cold, expected, rtol=1e-5) and np.allclose(warm, expected, rtol=1e-5)
  print(f"((x*y + x).maximum(0) * 0.5).exp2() on 1024x1024: matches NumPy, "
        f"{GlobalCounters.kernel_count} kernels for 2 realizes (1 fused kernel each)")
  print(f"  first realize (compile + run): {cold_ms:8.2f} ms")
  print(f"  second realize (cached):       {warm_ms:8.2f} ms")
  replay = TinyJit(lambda: expr().realize())
  for _ in range(3): replay()  # a run, the capture, a replay
  replayed, replay_ms = timed(lambda: replay().numpy())
  assert np.allclose(replayed, expected, rtol=1e-5)
  print(f"  TinyJit replay (+ read back):  {replay_ms:8.2f} ms")
  print(f"  NumPy, same expression:        {numpy_ms:8.2f} ms")


if __name__ == "__main__":
  main()
