"""The on-disk kernel cache: compiled kernels as shared libraries, content-addressed by the kernel IR, the CPU
lowering, the target (machine, OS, CPU model and feature flags: the JIT compiles for the host) and pytc's
version. Each library sits beside the SHA-256 of its bytes; an entry whose bytes do not match, or that fails to
load, is removed and rebuilt. Nothing is pickled.

PYTC_CACHE_DIR picks the folder (default ~/.cache/pytc); PYTC_CACHE=0 turns the cache off. Building a library
needs a C compiler driver (`cc`); without one, kernels are JIT-compiled every time, as with the cache off.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from importlib.metadata import version
from pathlib import Path

from mlir.execution_engine import ExecutionEngine

from pytc.helpers import DEBUG, cpu_features, getenv


def cache_dir() -> Path | None:
  if not getenv("PYTC_CACHE", 1): return None
  return Path(getenv("PYTC_CACHE_DIR", str(Path.home() / ".cache" / "pytc")))


def cache_key(kernel_ir: str, lowering: str) -> str:
  target = f"{platform.machine()}-{platform.system()} {' '.join(cpu_features())}"  # the JIT uses all the host's features
  text = f"pytc {version('pytc')}\n{target}\n{lowering}\n{kernel_ir}"
  return hashlib.sha256(text.encode()).hexdigest()


def load(key: str, kernels: list[str]) -> tuple[ctypes.CDLL, dict[str, int]] | None:
  """The cached library for `key` and the packed entry of each kernel, or None (missing, corrupt, unloadable)."""
  if (folder := cache_dir()) is None: return None
  library, digest = folder / f"{key}.so", folder / f"{key}.sha256"
  if not library.exists() or not digest.exists(): return None
  try:
    if hashlib.sha256(library.read_bytes()).hexdigest() != digest.read_text().strip(): raise OSError("checksum mismatch")
    handle = ctypes.CDLL(str(library))
    return handle, {name: ctypes.cast(handle[f"_mlir_{name}"], ctypes.c_void_p).value for name in kernels}
  except (OSError, AttributeError) as error:
    if DEBUG >= 1: print(f"kernel cache: dropping entry {key[:12]}: {error}")
    library.unlink(missing_ok=True)
    digest.unlink(missing_ok=True)
    return None


def store(key: str, engine: ExecutionEngine) -> None:
  """Link the engine's object code into `key`'s library (atomically: a half-written entry is never visible)."""
  if (folder := cache_dir()) is None or (compiler := shutil.which("cc") or shutil.which("gcc")) is None: return
  folder.mkdir(parents=True, exist_ok=True)
  with tempfile.TemporaryDirectory(dir=folder) as scratch:
    obj, library = os.path.join(scratch, "kernels.o"), os.path.join(scratch, "kernels.so")
    engine.dump_to_object_file(obj)
    if subprocess.run([compiler, "-shared", "-o", library, obj, "-lm"], capture_output=True).returncode != 0: return
    digest = hashlib.sha256(Path(library).read_bytes()).hexdigest()
    Path(scratch, "digest").write_text(digest)
    os.replace(library, folder / f"{key}.so")
    os.replace(os.path.join(scratch, "digest"), folder / f"{key}.sha256")
