"""The distance the numerics tests measure: a result's error in units of the last place."""
import numpy as np


def ulps(got: np.ndarray, want: np.ndarray, dtype: type | None = None) -> np.ndarray:
  """|got - want| in units of the last place of `want` rounded to `dtype` (want's own dtype when None: want may be a float64
  reference of a float32 result); 0 where both are the same special value (NaN, an infinity, a zero of the same sign), inf
  where only one is special or they differ in sign at zero."""
  got, want = np.asarray(got), np.asarray(want)
  with np.errstate(all="ignore"):
    same = (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))
    finite = np.isfinite(got) & np.isfinite(want)
    spacing = np.spacing(np.abs(want).astype(dtype or want.dtype)).astype(np.float64)
    distance = np.abs(got.astype(np.float64) - want.astype(np.float64)) / spacing
    return np.where(same, 0.0, np.where(finite, distance, np.inf))
