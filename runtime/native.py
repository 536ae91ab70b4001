"""The CPU device's native half, libpytc_cpu.so (built with the package): its core threads (parallel.c) and its queue's
command processor (packets.c)."""

from __future__ import annotations

import ctypes

from pytc.helpers import package_library

library = package_library("pytc.runtime", "libpytc_cpu.so")
library.pytc_parallel_start.argtypes, library.pytc_parallel_start.restype = [ctypes.c_int], ctypes.c_int
library.pytc_parallel_run.argtypes, library.pytc_parallel_run.restype = (
  [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int],
  None,
)
library.pytc_queue_scan.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)]
library.pytc_queue_scan.restype = ctypes.c_int
# pytc_queue_run takes ctypes objects (bytes, c_uint64, byref(c_uint64), c_int64), built once for a buffer run many
# times: without argtypes a call converts nothing, which halves its cost
library.pytc_queue_run.restype = ctypes.c_int
# its address, for the calling thread's runs (immediate.c)
QUEUE_RUN = ctypes.cast(library.pytc_queue_run, ctypes.c_void_p).value
DONE, SIGNALED, MALFORMED, TIMED_OUT, NO_MEMORY = range(5)  # what pytc_queue_run stopped at (runtime/hcq_codes.h)
