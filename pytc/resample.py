"""Resampling: interpolate to a new size along the last dims (linear, nearest, nearest-exact), and the fixed-point
uint8 lerp that linear resampling of images uses."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pytc.dtype import dtypes

if TYPE_CHECKING:
  from pytc.tensor import Tensor

INTERPOLATE_MODES = ("linear", "nearest", "nearest-exact")


class Resample:
  """The resampling methods of Tensor (mixed into it)."""
  def interpolate(self, size: tuple[int, ...], mode: str = "linear", align_corners: bool = False) -> Tensor:
    """Resize the last len(size) dims to `size`, one dim at a time: "linear" (bilinear, trilinear, ... over several dims)
    samples at pixel centers, or at the corners with align_corners; "nearest" takes floor(i * in / out), "nearest-exact"
    floor((i + 0.5) * in / out). The result keeps self's dtype."""
    if not isinstance(size, tuple | list) or not all(isinstance(n, int) for n in size) or not 0 < len(size) <= self.ndim:
      raise ValueError(f"interpolate size must be 1 to {self.ndim} ints for shape {self.shape}, got {size}")
    if mode not in INTERPOLATE_MODES: raise ValueError(f"interpolate mode must be one of {', '.join(INTERPOLATE_MODES)}, got {mode!r}")
    if align_corners and mode != "linear": raise ValueError(f"align_corners needs mode 'linear', got {mode!r}")
    x = self
    for axis in reversed(range(self.ndim - len(size), self.ndim)): x = x._resample_axis(axis, size[axis - self.ndim], mode, align_corners)
    return x.cast(self.dtype)

  def _resample_axis(self, axis: int, m: int, mode: str, align_corners: bool) -> Tensor:
    """Resize dim `axis` to m (gathered along it, in a float dtype for linear mode)."""
    n, out_shape = self.shape[axis], tuple(m if a == axis else s for a, s in enumerate(self.shape))
    along = tuple(m if a == axis else 1 for a in range(self.ndim))
    def picked(index: Tensor) -> Tensor: return self.gather(axis, index.reshape(along).expand(out_shape))
    if mode != "linear":
      position = type(self).arange(m, dtype=dtypes.float32, device=self.device)
      return picked(((position + 0.5 if mode == "nearest-exact" else position) * (n / m)).cast(dtypes.int32))
    position = type(self).arange(m, device=self.device)
    # the source coordinate of output i is num / den, a fraction of ints, so the neighbors and the weight are exact
    num, den = (position * (n - 1), max(m - 1, 1)) if align_corners else ((position * 2 + 1) * n - m, 2 * m)
    num = num.clip(0, (n - 1) * den)
    weight = ((num % den).cast(dtypes.float32) / den).reshape(along).expand(out_shape)
    return picked(num // den).lerp(picked((num + den - 1) // den), weight)

  def _lerp_uint8(self, end: Tensor, weight: Tensor) -> Tensor:
    """self + (end - self) * weight for uint8 in 7-bit fixed point, rounding half up, as uint8 image resampling does;
    the difference is taken in int16, so it is exact for any pair of values."""
    step = (end.cast(dtypes.int16) - self.cast(dtypes.int16)) * (weight * 128 + 0.5).cast(dtypes.int16) + 64
    return (self.cast(dtypes.int16) + (step >> 7)).cast(dtypes.uint8)
