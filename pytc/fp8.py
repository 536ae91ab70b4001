"""The fp8 storage types: conversion between their 8-bit patterns (uint8 tensors) and float32, as graph ops.

OCP e4m3 (fp8e4m3) has no infinity and one NaN pattern per sign; OCP e5m2 keeps IEEE infinities and NaNs; the fnuz types
have no negative zero and 0x80 as their only NaN. Encoding rounds to nearest even, keeps subnormals, and saturates finite
values past the largest normal to it; an infinity becomes NaN (e4m3, fnuz) or stays one (e5m2)."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytc.dtype import FLOAT_LAYOUTS, LARGEST_NORMAL, DType, dtypes

if TYPE_CHECKING:
  from pytc.tensor import Tensor

def fp8_to_float32(bits: Tensor, dtype: DType) -> Tensor:
  """The float32 values of the fp8 `dtype` patterns held in the uint8 tensor `bits`."""
  exponent_bits, mantissa_bits, bias = FLOAT_LAYOUTS[dtype.name]
  b = bits.cast(dtypes.int32)
  exponent, mantissa = (b >> mantissa_bits) & ((1 << exponent_bits) - 1), b & ((1 << mantissa_bits) - 1)
  normal = (((exponent + (127 - bias)) << 23) | (mantissa << (23 - mantissa_bits))).bitcast(dtypes.float32)
  magnitude = (exponent == 0).where(mantissa.cast(dtypes.float32) * 2.0 ** (1 - bias - mantissa_bits), normal)
  value = (b >= 0x80).where(-magnitude, magnitude)
  if dtype in dtypes.fp8_fnuz: return (b == 0x80).where(float("nan"), value)
  if dtype is dtypes.fp8e4m3: return ((b & 0x7F) == 0x7F).where(float("nan"), value)
  top = exponent == (1 << exponent_bits) - 1
  infinity = (b >= 0x80).where(type(b).full(b.shape, -math.inf, dtypes.float32, b.device), math.inf)  # float32 whatever the default
  return top.where((mantissa == 0).where(infinity, math.nan), value)


def float32_to_fp8(x: Tensor, dtype: DType) -> Tensor:
  """The uint8 patterns of the float32 tensor `x` rounded to the fp8 `dtype`."""
  exponent_bits, mantissa_bits, bias = FLOAT_LAYOUTS[dtype.name]
  word = x.bitcast(dtypes.uint32)
  sign, magnitude = (word >> 31).cast(dtypes.int32) << 7, (word & 0x7FFFFFFF).cast(dtypes.int32)
  # normal results: rebias the exponent, then round the dropped mantissa bits to nearest even (a carry bumps the exponent)
  drop = 23 - mantissa_bits
  rebased = magnitude - ((127 - bias) << 23)
  kept, rest, half = rebased >> drop, rebased & ((1 << drop) - 1), 1 << (drop - 1)
  normal = kept + ((rest > half) | ((rest == half) & ((kept & 1) == 1))).cast(dtypes.int32)
  # subnormal results: the magnitude in units of the smallest subnormal, rounded to nearest even (2**mantissa_bits is the smallest normal)
  subnormal = (x.abs() * 2.0 ** (bias - 1 + mantissa_bits)).round().cast(dtypes.int32)
  pattern = (magnitude < ((128 - bias) << 23)).where(subnormal, normal).minimum(LARGEST_NORMAL[dtype.name])
  not_finite, nan = magnitude >= 0x7F800000, magnitude > 0x7F800000
  if dtype in dtypes.fp8_fnuz: encoded = not_finite.where(0x80, (pattern == 0).where(0, pattern | sign))
  elif dtype is dtypes.fp8e4m3: encoded = not_finite.where(0x7F, pattern) | sign
  else: encoded = nan.where(0x7F, not_finite.where(0x7C, pattern)) | sign
  return encoded.cast(dtypes.uint8)
