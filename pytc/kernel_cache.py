"""The on-disk kernel cache: compiled kernels as shared libraries, content-addressed by the kernel IR, the CPU
lowering, the target (machine, OS, CPU model and feature flags: the JIT compiles for the host) and pytc's
version. Each library sits beside its size and the SHA-256 of its bytes. A library is read once; only those bytes,
when their size and hash match and the ELF segments and section table they describe lie within them, are loaded
(from a private copy, so a file changed or truncated meanwhile is never mapped); any other entry is removed and
rebuilt. Nothing is pickled.

PYTC_CACHE_DIR picks the folder (default ~/.cache/pytc); PYTC_CACHE=0 turns the cache off. A folder that cannot be
created or written (a file is in the way, no permission) leaves the process without the disk cache (said once under
DEBUG). Building a library needs a C compiler driver (`cc`); without one, kernels are JIT-compiled every time, as with
the cache off.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import struct
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


_unusable: set[Path] = set()  # folders that could not be created or written: the disk cache is off for them


def disable(folder: Path, error: OSError) -> None:
  if folder not in _unusable and DEBUG >= 1: print(f"kernel cache: cannot use {folder} ({error}); running without the disk cache")
  _unusable.add(folder)


def usable_dir() -> Path | None:
  """The cache folder, created if missing; None when the cache is off or the folder is unusable."""
  if (folder := cache_dir()) is None or folder in _unusable: return None
  try: folder.mkdir(parents=True, exist_ok=True)
  except OSError as error:
    disable(folder, error)
    return None
  return folder


def elf_problem(data: bytes) -> str | None:
  """Why `data` is not a whole 64-bit little-endian ELF file (a segment or the section table reaching past its end), or None."""
  if len(data) < 64 or data[:4] != b"\x7fELF" or data[4:6] != b"\x02\x01": return "not a 64-bit little-endian ELF file"
  phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
  phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
  if phentsize < 56 or phoff + phnum * phentsize > len(data): return "program headers past the end"
  if shnum and shoff + shnum * shentsize > len(data): return "section headers past the end"
  for header in range(phoff, phoff + phnum * phentsize, phentsize):
    offset, filesz = struct.unpack_from("<Q", data, header + 0x08)[0], struct.unpack_from("<Q", data, header + 0x20)[0]
    if offset + filesz > len(data): return "a segment past the end"
  return None


def entry_problem(data: bytes, record: str) -> str | None:
  """Why a library's bytes do not match its record ("size sha256") or are not a whole library, or None."""
  size, _, digest = record.strip().partition(" ")
  if not size.isdigit() or int(size) != len(data): return f"size {len(data)} does not match the record"
  if hashlib.sha256(data).hexdigest() != digest: return "checksum mismatch"
  return elf_problem(data)


def open_copy(folder: Path, data: bytes, kernels: list[str]) -> tuple[ctypes.CDLL, dict[str, int]]:
  """dlopen a private copy of validated bytes (a unique name: the loader cannot take it for another library) and find
  the kernels' packed entries. OSError: it did not load; AttributeError: a kernel is missing."""
  descriptor, name = tempfile.mkstemp(dir=folder, suffix=".so")
  try:
    with os.fdopen(descriptor, "wb") as copy: copy.write(data)
    handle = ctypes.CDLL(name)
  finally: os.unlink(name)
  return handle, {kernel: ctypes.cast(handle[f"_mlir_{kernel}"], ctypes.c_void_p).value for kernel in kernels}


def load(key: str, kernels: list[str]) -> tuple[ctypes.CDLL, dict[str, int]] | None:
  """The cached library for `key` and the packed entry of each kernel, or None (missing, corrupt, unloadable)."""
  if (folder := usable_dir()) is None: return None
  library, record = folder / f"{key}.so", folder / f"{key}.sha256"
  try: problem = entry_problem(data := library.read_bytes(), record.read_text())
  except FileNotFoundError: return None
  except (OSError, UnicodeDecodeError) as error: problem = str(error)
  if problem is None:
    try: return open_copy(folder, data, kernels)
    except (OSError, AttributeError) as error: problem = f"it does not load: {error}"
  if DEBUG >= 1: print(f"kernel cache: dropping entry {key[:12]}: {problem}")
  try:
    library.unlink(missing_ok=True)
    record.unlink(missing_ok=True)
  except OSError as error: disable(folder, error)
  return None


def store(key: str, engine: ExecutionEngine) -> None:
  """Link the engine's object code into `key`'s library (atomically: a half-written entry is never visible)."""
  if (folder := usable_dir()) is None or (compiler := shutil.which("cc") or shutil.which("gcc")) is None: return
  try:
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
      obj, library = os.path.join(scratch, "kernels.o"), os.path.join(scratch, "kernels.so")
      engine.dump_to_object_file(obj)
      if subprocess.run([compiler, "-shared", "-o", library, obj, "-lm"], capture_output=True).returncode != 0: return
      data = Path(library).read_bytes()
      Path(scratch, "record").write_text(f"{len(data)} {hashlib.sha256(data).hexdigest()}\n")
      os.replace(library, folder / f"{key}.so")
      os.replace(os.path.join(scratch, "record"), folder / f"{key}.sha256")
  except OSError as error: disable(folder, error)
