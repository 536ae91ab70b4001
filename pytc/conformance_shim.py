"""The `tinygrad` package the conformance runner puts in front of tinygrad's test files: names mapped onto pytc, inert
stand-ins for the tests' bookkeeping (environment flags, device capabilities), and the helpers of tinygrad's
`test/helpers.py` that test user-visible behaviour. Helpers that inspect tinygrad's own internals (its kernel lists, JIT
cache, code generator) skip the test that calls them, with the reason; DESELECTED names the remaining tests of internals."""

# file: text, under the scratch folder the test files are copied into
SHIM: dict[str, str] = {
  "tinygrad/__init__.py": """
from pytc import Device, GlobalCounters, Tensor, TinyJit, Variable, dtypes, function, nn
from tinygrad.uop.ops import UOp
from tinygrad.helpers import Context
from tinygrad.device import Device
""",
  "tinygrad/tensor.py": """
from typing import cast
from pytc import Tensor
from tinygrad.dtype import _to_np_dtype
""",
  "tinygrad/uop/__init__.py": """
class _AnyOp:  # tinygrad's op enum: a test that names one asks about its internals
  def __getattr__(self, name): return name
Ops = _AnyOp()
""",
  "tinygrad/uop/ops.py": """
from pytc.symbolic import Variable as UOp  # a bound Variable is what tinygrad's code checks for
UOp.variable = staticmethod(lambda name, min_val, max_val, dtype=None: UOp(name, min_val, max_val))
from tinygrad.uop import Ops
class KernelInfo: pass
""",
  "tinygrad/llm/__init__.py": "",
  "tinygrad/llm/gguf.py": "from pytc.nn.gguf import gguf_load  # noqa\n",
  "tinygrad/dtype.py": """
import numpy as np
from pytc.dtype import DTYPES_DICT, DType, dtypes, float_to_fp8, fp8_to_float, least_upper_dtype, truncate  # noqa
ConstType = float | int | bool
def _to_np_dtype(dtype): return np.float32 if dtype is dtypes.bfloat16 or dtype in dtypes.fp8s else np.dtype(dtype.numpy).type
def strong_dtype(dtype): return dtype
def _to_torch_dtype(dtype):
  import torch
  if dtype is dtypes.bfloat16: return torch.bfloat16
  if dtype in dtypes.fp8s: return torch.uint8
  return torch.from_numpy(np.array([], dtype=dtype.numpy)).dtype
""",
  "tinygrad/device.py": """
from pytc import dtypes
from pytc.device import Device as _Device
class _Renderer:
  code_for_op = {}
  def supported_dtypes(self): return list(dtypes.all)
class _Opened:
  renderer, graph = _Renderer(), None
  def __init__(self, name): self.name = name
  def synchronize(self): pass  # pytc's realize returns once its kernels ran
class _DeviceNames:
  @property
  def DEFAULT(self): return _Device.DEFAULT
  def canonicalize(self, name): return _Device.canonicalize(name)
  def __getitem__(self, name): return _Opened(name)
Device = _DeviceNames()
""",
  "tinygrad/helpers.py": """
import os, pathlib, tempfile
from pytc.helpers import DEBUG, JIT, ContextVar, GlobalCounters, Timing, colored, fetch, get_child, getenv, tqdm, trange
from pytc.helpers import Context as _Context
from pytc import flags as _flags
class _Dev:
  device, renderer, interface, arch = "CPU", "", "", ""
class _NoEmulation:
  def tolist(self, dtypes): return []
DEV, EMULATED_DTYPES = _Dev(), _NoEmulation()
IMAGE, CI, OSX, WINDOWS = 0, bool(_flags.CI.value), False, False
def temp(name, append_user=False): return (pathlib.Path(tempfile.gettempdir()) / name).as_posix()
def mv_address(mv):
  import ctypes
  return ctypes.addressof(ctypes.c_char.from_buffer(mv))
class Context(_Context):  # the modes pytc has (TRAINING, JIT) are set; tinygrad's compiler flags mean nothing here
  def __init__(self, **flags): super().__init__(**{k: v for k, v in flags.items() if k in ContextVar._registry})
""",
  "tinygrad/codegen/__init__.py": """
import unittest
def to_program(*args, **kwargs): raise unittest.SkipTest("tinygrad internals: its code generator")
""",
  "tinygrad/renderer/__init__.py": "class Renderer: pass\n",
  "tinygrad/renderer/nir.py": "class NIRRenderer: pass\n",
  "tinygrad/renderer/ptx.py": "class PTXRenderer: pass\n",
  "tinygrad/renderer/llvmir.py": "class CPULLVMRenderer: pass\n",
  "tinygrad/renderer/isa/__init__.py": "",
  "tinygrad/renderer/isa/x86.py": "class X86Renderer: pass\n",
  "tinygrad/runtime/__init__.py": "",
  "tinygrad/runtime/ops_python.py": """
import struct
from pytc.dtype import dtypes, fp8_to_float
def from_storage_scalar(x, dtype):
  if dtype is dtypes.bfloat16: return struct.unpack("f", struct.pack("I", (x & 0xFFFF) << 16))[0]
  return fp8_to_float(int(x), dtype) if dtype in dtypes.fp8s else x
""",
  "tinygrad/nn/__init__.py": "from pytc.nn import *  # noqa\nfrom pytc.nn import datasets, optim, state  # noqa\n",
  "tinygrad/nn/datasets.py": "from pytc.nn.datasets import *  # noqa\n",
  "tinygrad/nn/optim.py": "from pytc.nn.optim import *  # noqa\n",
  "tinygrad/nn/state.py": "from pytc.nn.state import *  # noqa\n",
  "tinygrad/engine/__init__.py": "",
  "tinygrad/engine/jit.py": """
from pytc.jit import *  # noqa
from pytc.jit import JitError  # noqa
def graph_class(device): return None
""",
  "tinygrad/engine/realize.py": """
import unittest
def run_linear(*args, **kwargs): raise unittest.SkipTest("tinygrad internals: its linearized schedule")
""",
  "test/__init__.py": "",
  "test/backend/__init__.py": "",
  "test/unit/__init__.py": "",
  "test/helpers.py": """
import functools, os, unittest
import numpy as np
from pytc import Tensor, dtypes
from pytc.dtype import truncate
slow = lambda test: test  # noqa: E731  (tinygrad skips these without RUN_SLOW; they check values, so they run)
class KernelCountException(Exception): pass
def _internal(what):
  def skip(*args, **kwargs): raise unittest.SkipTest(f"tinygrad internals: {what}")
  return skip
check_schedule, assert_jit_cache_len = _internal("its scheduler's kernel list"), _internal("its JIT cache")
call_is_graph, assert_kernel_count = _internal("its graph executor"), _internal("its kernel count")
def not_support_multi_device(): return True
def needs_second_gpu(fn):
  @functools.wraps(fn)
  def skipped(self, *args, **kwargs): self.skipTest("one device")
  return skipped
def min_normal(dt): return 2.0 ** (2 - (1 << (dtypes.finfo(dt)[0] - 1)))
def rand_for_dtype(dt, size, allow_subnormal=True):
  if dt.is_unsigned: return np.random.randint(0, 100, size=size, dtype=dt.numpy)
  if dt.is_int: return np.random.randint(-100, 100, size=size, dtype=dt.numpy)
  if dt is dtypes.bool: return np.random.choice([True, False], size=size)
  values = np.random.uniform(-10, 10, size=size).astype(np.float32 if dt is dtypes.bfloat16 or dt in dtypes.fp8s else dt.numpy)
  if dt is dtypes.bfloat16 or dt in dtypes.fp8s: values = np.array([truncate[dt](x) for x in values], dtype=values.dtype)
  return values if allow_subnormal else np.where(np.abs(values) < min_normal(dt), 0, values)
""",
}

# tinygrad repository files (not its library) that test files import, copied beside them when the checkout has them
SUPPORT_FILES = ("extra/__init__.py", "extra/gradcheck.py")

# the names of the tests (functions, in any class) that only check tinygrad's internals, with the reason
DESELECTED: dict[str, str] = {
  **dict.fromkeys(("test_deviceless_const_construct_device_repr", "test_deviceless_const_realize_noop", "test_clone_deviceless_const",
                   "test_clone_deviceless_const_to_cpu", "test_numpy_deviceless_const", "test_jit_const_input",
                   "test_jit_deviceless_compute_input"), "builds a tensor from a tinygrad UOp (UOp.const)"),
  **dict.fromkeys(("test_clone", "test_clone_with_shrink", "test_clone_with_shrink_realized"), "compares tinygrad's UOp buffers (uop.base.buffer)"),
  "test_threefry_doesnt_use_long": "reads the code tinygrad's renderer generates",
  "test_jitbeam_triggers_beam": "tinygrad's BEAM kernel search",
  **dict.fromkeys(("test_free_intermediates", "test_updated_not_freed"), "tinygrad's CapturedJit (fxn.captured.free_intermediates)"),
  "test_rand_is_lazy": "reads tinygrad's counter tensor (pytc keeps the draw counters on the host: a draw runs no kernel)",
  "test_random_counter_overflow": "assigns into tinygrad's counter tensor (pytc's host counter carries the same way: its own tests)",
}
