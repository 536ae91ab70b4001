"""Optimizers, as in tinygrad's nn.optim. Each step realizes the new parameters and the optimizer
state in one schedule; the state lives in buffers, so every step has the same graph structure and
reuses the same compiled schedule."""
from __future__ import annotations

from pytc.tensor import Tensor


class Optimizer:
  def __init__(self, params: list[Tensor], lr: float):
    for p in params:
      if p.requires_grad is None: p.requires_grad = True
    self.params = [p for p in params if p.requires_grad]
    if not self.params: raise ValueError("the optimizer got no parameters that require a gradient")
    self.lr = lr
    Tensor.realize(*self.params)

  def zero_grad(self) -> None:
    for p in self.params: p.grad = None

  def step(self) -> None:
    """Apply one update from the parameters' gradients and realize it."""
    missing = [p.shape for p in self.params if p.grad is None]
    if missing: raise RuntimeError(f"step() before backward(): parameters of shapes {missing} have no gradient")
    updates = self.updates()
    Tensor.realize(*(new for _, new in updates))
    for target, new in updates: target.assign(new)

  def updates(self) -> list[tuple[Tensor, Tensor]]: raise NotImplementedError

  @staticmethod
  def state_like(p: Tensor) -> Tensor: return Tensor.zeros(*p.shape, dtype=p.dtype).contiguous().realize()


class SGD(Optimizer):
  def __init__(self, params: list[Tensor], lr: float = 0.001, momentum: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False):
    super().__init__(params, lr)
    self.momentum, self.weight_decay, self.nesterov = momentum, weight_decay, nesterov
    self.velocity = [self.state_like(p) for p in self.params] if momentum else []

  def updates(self) -> list[tuple[Tensor, Tensor]]:
    result = []
    for i, p in enumerate(self.params):
      g = p.grad.detach() + self.weight_decay * p.detach()
      if self.momentum:
        velocity = self.velocity[i] * self.momentum + g
        result.append((self.velocity[i], velocity))
        g = g + self.momentum * velocity if self.nesterov else velocity
      result.append((p, p.detach() - g * self.lr))
    return result


class LAMB(Optimizer):
  """Adam's moments; `adam=True` gives Adam/AdamW (no trust ratio), `weight_decay` is decoupled as in AdamW."""
  def __init__(self, params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-6,
               weight_decay: float = 0.0, adam: bool = False):
    super().__init__(params, lr)
    self.b1, self.b2, self.eps, self.weight_decay, self.adam = b1, b2, eps, weight_decay, adam
    self.t = Tensor.zeros(1).contiguous().realize()
    self.m, self.v = [self.state_like(p) for p in self.params], [self.state_like(p) for p in self.params]

  def updates(self) -> list[tuple[Tensor, Tensor]]:
    t = self.t + 1
    result = [(self.t, t)]
    for p, m, v in zip(self.params, self.m, self.v):
      g = p.grad.detach()
      new_m, new_v = m * self.b1 + g * (1 - self.b1), v * self.b2 + g * g * (1 - self.b2)
      step = (new_m / (1 - self.b1 ** t)) / ((new_v / (1 - self.b2 ** t)).sqrt() + self.eps) + self.weight_decay * p.detach()
      if not self.adam:
        weight_norm, step_norm = p.detach().square().sum().sqrt(), step.square().sum().sqrt()
        step = step * ((weight_norm > 0) & (step_norm > 0)).where(weight_norm / step_norm, 1.0)
      result += [(m, new_m), (v, new_v), (p, p.detach() - step * self.lr)]
    return result


def Adam(params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> LAMB:
  return LAMB(params, lr, b1, b2, eps, 0.0, adam=True)


def AdamW(params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.01) -> LAMB:
  return LAMB(params, lr, b1, b2, eps, weight_decay, adam=True)
