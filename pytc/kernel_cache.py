"""The on-disk kernel cache: compiled kernels (each target's binaries: shared libraries for the CPU), reused across processes.

Threat model: loading a library runs its code (its constructors first), so whoever can write the cache folder could
make pytc run anything. The folder is trusted as ssh trusts ~/.ssh: a real directory (not a symlink) owned by the
current user and writable by nobody else; pytc creates it with mode 0700. Any other folder is refused for the rest of
the process with one RuntimeWarning; a folder that cannot be created or opened (a file in the way, no permission) also
leaves the process without the disk cache (said once under DEBUG). Every file is reached through a descriptor of the
checked folder and opened with O_NOFOLLOW, then checked on its own descriptor (a regular file owned by the user and
writable by nobody else), so no path can be swapped between a check and its use.

Layout: `<digest>.so` is a binary stored under the SHA-256 of its bytes. `index` maps each cache key (a compiler's hash
of the kernel IR, its lowering, its target, and pytc's version: see pytc/compilers) to the digest pytc computed when it
wrote that binary itself: one `key digest` line per entry, oldest first. A binary is read only through the index: its
bytes are read once and returned (the device loads them from memory, so a file changed or truncated meanwhile is never
mapped) only when their hash is the recorded digest; any other entry is removed and rebuilt, and a `.so` the index does
not name is never opened. Record files (`tuned`: a kernel search's winners, see pytc/search.py) hold one `key value` line
per entry, read through the same checks; a line of any other shape is skipped. Files are written under a temporary
name and renamed into place; `lock` (fcntl.flock) serializes the read-modify-write of the index and the record files, so
concurrent processes never corrupt them. Nothing is pickled.

PYTC_CACHE_DIR picks the folder (default ~/.cache/pytc); PYTC_CACHE=0 turns the cache off; PYTC_CACHE_ENTRIES (default
4096) bounds the index: adding beyond it drops the oldest entries and the binaries no remaining entry uses (a new
index first clears out any binary left by older pytc versions).
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import re
import secrets
import stat
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from pytc import flags
from pytc.helpers import DEBUG, cache_root

READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # O_NONBLOCK: a FIFO in the way cannot hang the open
CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
INDEX_LINE = re.compile(r"[0-9a-f]{64} [0-9a-f]{64}")

_unusable: set[Path] = set()  # folders refused or unusable: the disk cache is off for them in this process
_memos: dict[str, tuple[tuple[int, ...], dict[str, str]]] = {}  # per file name, as last parsed: its (device, inode, mtime, size), entries


def entry_limit() -> int:
  """PYTC_CACHE_ENTRIES (default 4096)."""
  return flags.CACHE_ENTRIES.value


def cache_dir() -> Path | None:
  """The cache folder (helpers.cache_root), or None with PYTC_CACHE=0; read at every call, as every flag is: tests and tools switch folders."""
  return None if flags.CACHE.value == 0 else cache_root()


def disable(folder: Path, reason: str, untrusted: bool) -> None:
  if folder in _unusable: return
  _unusable.add(folder)
  message = f"kernel cache: not using {folder}: {reason}; running without the disk cache"
  if untrusted: warnings.warn(message, RuntimeWarning, stacklevel=2)
  elif DEBUG >= 1: print(message)


def distrust(st: os.stat_result, directory: bool = False) -> str | None:
  """Why a file or folder (`st`: fstat of its open descriptor) could hold someone else's bytes, or None."""
  if not (stat.S_ISDIR if directory else stat.S_ISREG)(st.st_mode): return f"it is not a {'directory' if directory else 'regular file'}"
  if st.st_uid != os.geteuid(): return f"it is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
  if st.st_mode & 0o022: return f"it is writable by others (mode {stat.S_IMODE(st.st_mode):o}; chmod go-w it)"
  return None


def open_folder() -> int | None:
  """A descriptor of the checked cache folder (created with mode 0700 if missing), or None: cache off, folder unusable or refused."""
  if (folder := cache_dir()) is None or folder in _unusable: return None
  try:
    os.makedirs(folder, mode=0o700, exist_ok=True)
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
  except OSError as error:
    if folder.is_symlink(): disable(folder, "it is a symbolic link", untrusted=True)
    else: disable(folder, str(error), untrusted=False)
    return None
  if (problem := distrust(os.fstat(descriptor), directory=True)) is None: return descriptor
  os.close(descriptor)
  disable(folder, problem, untrusted=True)
  return None


@contextmanager
def cache_folder() -> Iterator[int | None]:
  descriptor = open_folder()
  try: yield descriptor
  finally:
    if descriptor is not None: os.close(descriptor)


def open_checked(folder: int, name: str) -> int:
  """A read descriptor of `name` in the folder. FileNotFoundError: missing; OSError: a symlink or a file not to trust."""
  descriptor = os.open(name, READ, dir_fd=folder)
  if (problem := distrust(os.fstat(descriptor))) is None: return descriptor
  os.close(descriptor)
  raise OSError(f"{name}: {problem}")


def write_file(folder: int, name: str, data: bytes) -> None:
  """Replace `name` in the folder by `data` atomically (mode 0600 whatever the umask)."""
  temporary = f".{secrets.token_hex(8)}.tmp"
  try:
    with open(os.open(temporary, CREATE, 0o600, dir_fd=folder), "wb") as file: file.write(data)
    os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
  except BaseException:
    with suppress(OSError): os.unlink(temporary, dir_fd=folder)
    raise


def read_keyed(folder: int, name: str, line_shape: re.Pattern, limit: int = -1) -> dict[str, str]:
  """The `key value` lines of the file `name` that have `line_shape` (key -> value in file order, a later line replacing an
  earlier one; at most `limit` bytes read), parsed again only when the file changed; empty when missing or refused."""
  try: descriptor = open_checked(folder, name)
  except FileNotFoundError: return {}
  except OSError as error:
    if DEBUG >= 1: print(f"kernel cache: ignoring {name}: {error}")
    return {}
  with open(descriptor, "rb") as file:
    st = os.fstat(descriptor)
    signature = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
    if (memo := _memos.get(name)) is None or memo[0] != signature:
      lines = file.read(limit).decode("ascii", "replace").splitlines()
      _memos[name] = memo = (signature, dict(line.split(" ", 1) for line in lines if line_shape.fullmatch(line)))
  return memo[1]


def read_index(folder: int) -> dict[str, str]:
  """The index's entries (key -> digest, oldest first)."""
  return read_keyed(folder, "index", INDEX_LINE)


@contextmanager
def locked(folder: int) -> Iterator[None]:
  """Hold the folder's lock (fcntl.flock on `lock`): one process at a time rewrites the index or a record file."""
  lock = os.open("lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder)
  try:
    fcntl.flock(lock, fcntl.LOCK_EX)
    yield
  finally: os.close(lock)


def load(key: str, check: Callable[[bytes], str | None] | None = None) -> bytes | None:
  """The cached binary for `key`, or None (no entry; missing, refused or corrupt). `check(data)` says why bytes with the right
  digest still cannot be a binary of the caller's (say a truncated library indexed under its own digest): that entry is dropped too."""
  with cache_folder() as folder:
    if folder is None or (digest := read_index(folder).get(key)) is None: return None
    library = f"{digest}.so"
    try:
      with open(open_checked(folder, library), "rb") as file: data = file.read()
      if hashlib.sha256(data).hexdigest() != digest: problem = "checksum mismatch"
      elif check is None or (problem := check(data)) is None: return data
    except FileNotFoundError: return None
    except OSError as error: problem = str(error)
    if DEBUG >= 1: print(f"kernel cache: dropping entry {key[:12]}: {problem}")
    with suppress(OSError): os.unlink(library, dir_fd=folder)
  return None


def add_entry(folder: int, key: str, data: bytes) -> None:
  """Store the library under its digest and map `key` to it in the index, under the lock. Beyond PYTC_CACHE_ENTRIES the oldest
  entries go, with the libraries no remaining entry uses."""
  with locked(folder):
    if not (entries := dict(read_index(folder))): remove_libraries(folder, os.listdir(folder))  # none is known to be pytc's own
    entries.pop(key, None)
    entries[key] = digest = hashlib.sha256(data).hexdigest()
    write_file(folder, f"{digest}.so", data)
    excess = max(0, len(entries) - max(1, entry_limit()))
    evicted = {entries.pop(oldest) for oldest in list(entries)[:excess]}
    write_file(folder, "index", "".join(f"{k} {d}\n" for k, d in entries.items()).encode())
    remove_libraries(folder, [f"{unused}.so" for unused in evicted - set(entries.values())])


def remove_libraries(folder: int, names: list[str]) -> None:
  """Delete the named libraries and checksum records (never the temporary files of writers and loaders: `.*`)."""
  for name in names:
    if name.endswith((".so", ".sha256")) and not name.startswith("."):
      with suppress(OSError): os.unlink(name, dir_fd=folder)


RECORD_LINE = re.compile(r"[0-9a-f]{64} \S{1,4096}")
RECORD_BYTES = 1 << 24  # the most of a record file read


def load_record(name: str, key: str) -> str | None:
  """The value stored under `key` in the record file `name` of the cache folder (a small text value per key: a kernel
  search's winner), or None; a file not to trust is ignored, lines of any other shape are skipped."""
  with cache_folder() as folder: return None if folder is None else read_keyed(folder, name, RECORD_LINE, RECORD_BYTES).get(key)


def has_records(name: str) -> bool:
  """Whether the record file `name` of the cache folder holds a record at all (one to trust)."""
  with cache_folder() as folder: return folder is not None and bool(read_keyed(folder, name, RECORD_LINE, RECORD_BYTES))


def store_record(name: str, key: str, value: str) -> None:
  """Map `key` to `value` (no whitespace) in the record file `name`, under the lock; beyond PYTC_CACHE_ENTRIES the oldest go."""
  assert RECORD_LINE.fullmatch(f"{key} {value}"), f"not a record: {key} {value}"
  with cache_folder() as folder:
    if folder is None: return
    try:
      with locked(folder):
        records = dict(read_keyed(folder, name, RECORD_LINE, RECORD_BYTES))
        records.pop(key, None)
        records[key] = value
        kept = list(records.items())[-max(1, entry_limit()):]
        write_file(folder, name, "".join(f"{k} {v}\n" for k, v in kept).encode())
    except OSError as error:
      if DEBUG >= 1: print(f"kernel cache: could not store {name} record {key[:12]}: {error}")


def store(key: str, data: bytes) -> None:
  """Add the binary `data` to the cache under `key` (a half-written entry is never visible)."""
  with cache_folder() as folder:
    if folder is None: return
    try: add_entry(folder, key, data)
    except OSError as error:
      if DEBUG >= 1: print(f"kernel cache: could not store entry {key[:12]}: {error}")
