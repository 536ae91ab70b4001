"""ctypes bindings of the CUDA driver API (libcuda), the entry points the NV device uses: each with its C prototype,
bound by the name the driver exports (the `_v2` ones where cuda.h maps the plain name to them), and every CUresult other
than CUDA_SUCCESS raised as a `CUDAError` naming the call and the error (cuGetErrorName, cuGetErrorString). No CUDA
toolkit is needed: only the driver library, `PYTC_LIBCUDA` or else libcuda.so.1, then libcuda.so."""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from ctypes import POINTER, c_char_p, c_float, c_int, c_size_t, c_uint, c_uint64, c_void_p

from pytc import flags

CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_READY = 0, 2, 500, 600
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 75, 76
CU_STREAM_NON_BLOCKING = 0x1  # no implicit synchronization with the legacy default stream
CU_EVENT_DEFAULT = 0x0  # timing enabled
CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_DEVICEMAP = 0x1, 0x2
CU_STREAM_WRITE_VALUE_DEFAULT = (
  0x0  # the write waits for the stream's earlier memory operations (kernel stores included)
)
CU_STREAM_WAIT_VALUE_GEQ = 0x0  # until (int64_t)(*address - value) >= 0
CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 5, 6
QUERIES = frozenset({"cuStreamQuery", "cuEventQuery"})  # CUDA_ERROR_NOT_READY is an answer, not an error

PROTOTYPES: dict[str, list] = {
  "cuInit": [c_uint],
  "cuDeviceGetCount": [POINTER(c_int)],
  "cuDeviceGet": [POINTER(c_int), c_int],
  "cuDeviceGetAttribute": [POINTER(c_int), c_int, c_int],
  "cuDeviceGetName": [c_char_p, c_int, c_int],
  "cuDevicePrimaryCtxRetain": [POINTER(c_void_p), c_int],
  "cuCtxSetCurrent": [c_void_p],
  "cuStreamCreate": [POINTER(c_void_p), c_uint],
  "cuStreamDestroy_v2": [c_void_p],
  "cuStreamQuery": [c_void_p],
  "cuMemAlloc_v2": [POINTER(c_uint64), c_size_t],
  "cuMemFree_v2": [c_uint64],
  "cuMemHostAlloc": [POINTER(c_void_p), c_size_t, c_uint],
  "cuMemHostGetDevicePointer_v2": [POINTER(c_uint64), c_void_p, c_uint],
  "cuMemcpyHtoDAsync_v2": [c_uint64, c_void_p, c_size_t, c_void_p],
  "cuMemcpyDtoHAsync_v2": [c_void_p, c_uint64, c_size_t, c_void_p],
  "cuMemcpyDtoDAsync_v2": [c_uint64, c_uint64, c_size_t, c_void_p],
  "cuModuleLoadDataEx": [POINTER(c_void_p), c_char_p, c_uint, POINTER(c_int), POINTER(c_void_p)],
  "cuModuleGetFunction": [POINTER(c_void_p), c_void_p, c_char_p],
  "cuModuleUnload": [c_void_p],
  "cuLaunchKernel": [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_void_p, c_void_p, c_void_p],
  "cuStreamWriteValue64_v2": [c_void_p, c_uint64, c_uint64, c_uint],
  "cuStreamWaitValue64_v2": [c_void_p, c_uint64, c_uint64, c_uint],
  "cuEventCreate": [POINTER(c_void_p), c_uint],
  "cuEventDestroy_v2": [c_void_p],
  "cuEventRecord": [c_void_p, c_void_p],
  "cuEventQuery": [c_void_p],
  "cuEventElapsedTime": [POINTER(c_float), c_void_p, c_void_p],
}


class CUDAError(RuntimeError):
  """A driver call returned an error: `call` names it, `code` is the CUresult."""

  def __init__(self, message: str, call: str, code: int):
    super().__init__(message)
    self.call, self.code = call, code


class Driver:
  """The driver library with its entry points as attributes (`driver.cuMemAlloc_v2(...)`), each raising CUDAError on
  failure; cuStreamQuery and cuEventQuery return CUDA_SUCCESS or CUDA_ERROR_NOT_READY."""

  def __init__(self, path: str):
    self.path, self.library = path, ctypes.CDLL(path)
    self._error_name, self._error_string = self._bind("cuGetErrorName"), self._bind("cuGetErrorString")
    for function in (self._error_name, self._error_string):
      function.argtypes, function.restype = [c_int, POINTER(c_char_p)], c_int
    for name, argtypes in PROTOTYPES.items():
      function = self._bind(name)
      function.argtypes, function.restype, function.errcheck = argtypes, c_int, self._check
      setattr(self, name, function)

  def _bind(self, name: str) -> Callable[..., int]:
    try:
      return getattr(self.library, name)
    except AttributeError:
      raise RuntimeError(
        f"the NVIDIA driver {self.path} has no {name}: pytc needs a driver for CUDA 12 or newer"
      ) from None

  def describe(self, code: int) -> str:
    """`CUDA_ERROR_NAME (code): explanation`, as the driver words it."""
    name, text = c_char_p(), c_char_p()
    known = self._error_name(code, ctypes.byref(name)) == CUDA_SUCCESS and name.value
    if known and self._error_string(code, ctypes.byref(text)) == CUDA_SUCCESS and text.value:
      return f"{name.value.decode()} ({code}): {text.value.decode()}"
    return f"{name.value.decode()} ({code})" if known else f"CUresult {code}"

  def _check(self, result: int, function: Callable[..., int], args: tuple) -> int:
    if result == CUDA_SUCCESS or (result == CUDA_ERROR_NOT_READY and function.__name__ in QUERIES):
      return result
    raise CUDAError(f"{function.__name__} failed: {self.describe(result)}", function.__name__, result)


@functools.cache
def _load(path: str) -> Driver:
  return Driver(path)


def driver() -> Driver:
  """The driver named by PYTC_LIBCUDA, else libcuda.so.1, else libcuda.so; RuntimeError starting "no NVIDIA driver
  (libcuda.so not found)" when none loads."""
  candidates = [path] if (path := flags.LIBCUDA.value) else ["libcuda.so.1", "libcuda.so"]
  failures = []
  for candidate in candidates:
    try:
      return _load(candidate)
    except OSError as error:
      failures.append(str(error))
  raise RuntimeError(f"no NVIDIA driver (libcuda.so not found): {'; '.join(failures)}")
