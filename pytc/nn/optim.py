"""Optimizers, as in tinygrad's nn.optim. Each step realizes the new parameters and the optimizer
state in one schedule; the state lives in buffers, so every step has the same graph structure and
reuses the same compiled schedule."""
from __future__ import annotations

from pytc.device import Device
from pytc.dtype import DType, dtypes, least_upper_dtype
from pytc.template import templated
from pytc.tensor import Tensor


class Optimizer:
  """`device` holds the optimizer state (default: the first parameter's). `fused` is there for tinygrad's signature: it
  concatenates all parameters into one update there, while pytc's scheduler already puts every parameter's update into
  one schedule."""
  def __init__(self, params: list[Tensor], lr: float, device: str | None = None, fused: bool = False):
    if lr < 0: raise ValueError(f"the learning rate must be >= 0, got {lr}")
    for p in params:
      if p.requires_grad is None: p.requires_grad = True
    self.params = [p for p in params if p.requires_grad]
    # the other tensors it was given (running statistics: is_param_(False)) are realized with every step, as tinygrad does, so
    # that their pending updates read the parameters from before the step, not the ones it writes in place
    self.buffers = [p for p in params if not p.requires_grad]
    if not self.params: raise ValueError("the optimizer got no parameters that require a gradient")
    self.lr, self.device, self.fused = lr, Device.canonicalize(device or self.params[0].device), fused
    Tensor.realize(*self.params, *self.buffers)

  def zero_grad(self) -> None:
    for p in self.params: p.grad = None

  def step(self) -> None:
    """Apply one update from the parameters' gradients and realize it."""
    Tensor.realize(*self.schedule_step())

  def schedule_step(self) -> list[Tensor]:
    """Assign one update to the parameters and the optimizer state without realizing it; returns those tensors, to realize
    together with others (say, the loss) in one schedule. Each keeps its buffer, so a TinyJit replay updates them."""
    if not Tensor.training:
      raise RuntimeError("optimizers step only in training mode: wrap the step in Context(TRAINING=1) or set Tensor.training = True")
    missing = [p.shape for p in self.params if p.grad is None]
    if missing: raise RuntimeError(f"step() before backward(): parameters of shapes {missing} have no gradient")
    updates = self.updates()
    for target, new in updates: target.assign(new)
    return [target for target, _ in updates] + self.buffers

  def updates(self) -> list[tuple[Tensor, Tensor]]: raise NotImplementedError

  def state_like(self, p: Tensor) -> Tensor:
    """Zeros for p's optimizer state, in at least float32: a float16 model's moments and updates computed in float16 would
    round (and overflow) where the parameters' own precision would not."""
    return Tensor.zeros(*p.shape, dtype=state_dtype(p.dtype), device=self.device).contiguous().realize()


def state_dtype(dtype: DType) -> DType: return least_upper_dtype(dtype, dtypes.float32)


class OptimizerGroup(Optimizer):
  """Several optimizers (say, one per parameter group) stepped as one, in one schedule."""
  def __init__(self, *optimizers: Optimizer):
    self.optimizers = optimizers
    self.params = [p for o in optimizers for p in o.params]
    self.buffers = list({id(b): b for o in optimizers for b in o.buffers}.values())

  def __getitem__(self, i: int) -> Optimizer: return self.optimizers[i]
  def zero_grad(self) -> None:
    for o in self.optimizers: o.zero_grad()
  def updates(self) -> list[tuple[Tensor, Tensor]]: return [u for o in self.optimizers for u in o.updates()]


class LARS(Optimizer):
  """SGD with momentum and a layer-wise trust ratio tcoef * |p| / (|g| + weight_decay * |p|) (1 when tcoef is 0 or a norm
  is 0). `classic` scales by the learning rate before the momentum, else after; `pre_wd` adds the weight decay to the
  gradient, else (Muon) to the update after the momentum, times the learning rate; with `ns_coefficients` each update is
  orthogonalized by ns_steps Newton-Schulz iterations (as a matrix of its first dim by the rest)."""
  def __init__(self, params: list[Tensor], lr: float = 0.001, momentum: float = 0.9, weight_decay: float = 1e-4, ns_steps: int = 0,
               ns_coefficients: tuple[float, ...] | None = None, nesterov: bool = False, classic: bool = True, pre_wd: bool = True,
               tcoef: float = 0.001, device: str | None = None, fused: bool = False):
    if momentum < 0: raise ValueError(f"momentum must be >= 0, got {momentum}")
    super().__init__(params, lr, device, fused)
    self.momentum, self.weight_decay, self.ns_steps, self.ns_coefficients = momentum, weight_decay, ns_steps, ns_coefficients
    self.nesterov, self.classic, self.pre_wd, self.tcoef = nesterov, classic, pre_wd, tcoef
    self.velocity = [self.state_like(p) for p in self.params] if momentum else []

  def updates(self) -> list[tuple[Tensor, Tensor]]:
    result = []
    for i, p in enumerate(self.params):
      g, w, ratio = p.grad.detach().cast(state_dtype(p.dtype)), p.detach(), 1.0  # the update in at least float32
      if self.tcoef:
        w_norm, g_norm = w.square().sum().sqrt(), g.square().sum().sqrt()
        ratio = ((w_norm > 0) & (g_norm > 0)).where(self.tcoef * w_norm / (g_norm + self.weight_decay * w_norm), 1.0)
      if self.pre_wd and self.weight_decay: g = g + self.weight_decay * w
      if self.classic: g = g * ratio * self.lr
      if self.momentum:
        velocity = self.velocity[i] * self.momentum + g
        result.append((self.velocity[i], velocity))
        g = g + self.momentum * velocity if self.nesterov else velocity
      if self.ns_coefficients: g = g.reshape(g.shape[0], -1).newton_schulz(self.ns_steps, self.ns_coefficients).reshape(g.shape)
      if not self.classic: g = g * ratio * self.lr
      if not self.pre_wd and self.weight_decay: g = g + self.weight_decay * self.lr * w
      result.append((p, w - g.cast(p.dtype)))
    return result


def SGD(params: list[Tensor], lr: float = 0.001, momentum: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, classic: bool = False,
        device: str | None = None, fused: bool = False) -> LARS:
  """SGD with optional momentum (nesterov), weight decay added to the gradient, and the learning rate applied after the
  momentum (before it when `classic`): LARS without a trust ratio."""
  return LARS(params, lr, momentum, weight_decay, 0, None, nesterov, classic=classic, pre_wd=True, tcoef=0.0, device=device, fused=fused)


def Muon(params: list[Tensor], lr: float = 0.001, momentum: float = 0.95, weight_decay: float = 0.1, ns_steps: int = 5,
         ns_coefficients: tuple[float, ...] = (3.4445, -4.775, 2.0315), nesterov: bool = True, device: str | None = None,
         fused: bool = False) -> LARS:
  """Momentum SGD whose updates are orthogonalized by Newton-Schulz iterations, weight decay applied after the momentum."""
  if fused: raise ValueError("Muon orthogonalizes each parameter's update on its own, so it cannot be fused")
  return LARS(params, lr, momentum, weight_decay, ns_steps, ns_coefficients, nesterov, classic=False, pre_wd=False, tcoef=0.0, device=device)


class LAMB(Optimizer):
  """Adam's moments; `adam=True` gives Adam/AdamW (no trust ratio), `weight_decay` is decoupled as in AdamW. `b1_t` and
  `b2_t` hold b1 and b2 to the power of the steps taken (multiplied in float32 each step, as tinygrad does); `m` and `v`
  the moments. Each may be moved to another device (`to_`): a step reads them there."""
  def __init__(self, params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-6,
               weight_decay: float = 0.0, adam: bool = False, device: str | None = None, fused: bool = False):
    if weight_decay < 0: raise ValueError(f"weight_decay must be >= 0, got {weight_decay}")
    super().__init__(params, lr, device, fused)
    self.b1, self.b2, self.eps, self.weight_decay, self.adam = b1, b2, eps, weight_decay, adam
    self.b1_t, self.b2_t = (Tensor.ones(1, dtype=dtypes.float32, device=self.device).contiguous().realize().is_param_(False) for _ in "12")
    self.m, self.v = [self.state_like(p) for p in self.params], [self.state_like(p) for p in self.params]

  def updates(self) -> list[tuple[Tensor, Tensor]]:
    new = lamb_step(self.b1_t, self.b2_t, *self.params, *(p.grad for p in self.params), *self.m, *self.v, lr=self.lr, b1=self.b1,
                    b2=self.b2, eps=self.eps, weight_decay=self.weight_decay, adam=self.adam)
    return list(zip([self.b1_t, self.b2_t, *(target for p, m, v in zip(self.params, self.m, self.v) for target in (m, v, p))], new))


@templated
def lamb_step(b1_t: Tensor, b2_t: Tensor, *state: Tensor, lr: float | Tensor, b1: float, b2: float, eps: float, weight_decay: float,
              adam: bool) -> tuple[Tensor, ...]:
  """b1 and b2 to the power of the next step, then each parameter's new moments and value; `state` holds the parameters,
  their gradients, first and second moments, a quarter each (a graph template: every step rebuilds one recorded graph)."""
  n = len(state) // 4
  new_b1_t, new_b2_t = b1_t * b1, b2_t * b2
  result = [new_b1_t, new_b2_t]
  for w, g, m, v in zip(state[:n], state[n:2 * n], state[2 * n:3 * n], state[3 * n:]):
    m_scale, v_scale = (1 - new_b1_t).to(m.device).reshape(()), (1 - new_b2_t).to(v.device).reshape(())  # the bias corrections, scalars
    result += lamb_update(w.detach(), g.detach(), m, v, m_scale, v_scale, lr, b1, b2, eps, weight_decay, adam)
  return tuple(result)


@templated
def lamb_update(w: Tensor, g: Tensor, m: Tensor, v: Tensor, m_scale: Tensor, v_scale: Tensor, lr: float | Tensor, b1: float, b2: float,
                eps: float, weight_decay: float, adam: bool) -> tuple[Tensor, Tensor, Tensor]:
  """One parameter's new moments and value, the update computed where the moments are (a graph template: every step
  rebuilds the same graph)."""
  g, here = g.to(m.device).cast(m.dtype), w.to(m.device)  # the moments' dtype, at least float32 (state_like)
  new_m, new_v = m * b1 + g * (1 - b1), v * b2 + g * g * (1 - b2)
  step = (new_m / m_scale) / ((new_v / v_scale).sqrt() + eps)
  if weight_decay: step = step + weight_decay * here
  if not adam:
    weight_norm, step_norm = here.square().sum().sqrt(), step.square().sum().sqrt()
    step = step * ((weight_norm > 0) & (step_norm > 0)).where(weight_norm / step_norm, 1.0)
  return new_m, new_v, w - (step * lr).cast(w.dtype).to(w.device)


def Adam(params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, device: str | None = None,
         fused: bool = False) -> LAMB:
  return LAMB(params, lr, b1, b2, eps, 0.0, adam=True, device=device, fused=fused)


def AdamW(params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.01,
          device: str | None = None, fused: bool = False) -> LAMB:
  return LAMB(params, lr, b1, b2, eps, weight_decay, adam=True, device=device, fused=fused)
