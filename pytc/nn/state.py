"""Model state: finding a model's tensors, and saving/loading them in the safetensors format
(an 8-byte little-endian header length, a JSON header of name -> dtype, shape and byte offsets, then the data)."""
from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np

from pytc.dtype import DType, dtypes
from pytc.helpers import tqdm
from pytc.nn.gguf import GGUFError, gguf_load
from pytc.nn.torch_format import CheckpointError, torch_load
from pytc.tensor import Tensor

SAFETENSORS_DTYPES: dict[DType, str] = {
  dtypes.bool: "BOOL", dtypes.int8: "I8", dtypes.uint8: "U8", dtypes.int16: "I16", dtypes.uint16: "U16", dtypes.int32: "I32",
  dtypes.uint32: "U32", dtypes.int64: "I64", dtypes.uint64: "U64", dtypes.float16: "F16", dtypes.bfloat16: "BF16",
  dtypes.float32: "F32", dtypes.float64: "F64"}


def get_state_dict(obj: object, prefix: str = "", seen: set[int] | None = None) -> dict[str, Tensor]:
  """Every Tensor reachable through `obj`'s attributes, lists, tuples and dicts, by dotted name; each object is visited
  once, and a TinyJit (what it captured is not the model's state) not at all."""
  from pytc.jit import TinyJit
  if isinstance(obj, Tensor): return {prefix.rstrip("."): obj}
  if id(obj) in (seen := set() if seen is None else seen) or isinstance(obj, TinyJit): return {}
  seen.add(id(obj))
  if isinstance(obj, list | tuple): items = enumerate(obj)
  elif isinstance(obj, dict): items = obj.items()
  elif hasattr(obj, "__dict__"): items = vars(obj).items()
  else: return {}
  state: dict[str, Tensor] = {}
  for key, value in items: state.update(get_state_dict(value, f"{prefix}{key}.", seen))
  return state


def get_parameters(obj: object) -> list[Tensor]: return list(get_state_dict(obj).values())


def load_state_dict(model: object, state_dict: dict[str, Tensor], strict: bool = True, verbose: bool = False, consume: bool = False,
                    realize: bool = True) -> list[Tensor]:
  """Assign each of the model's tensors its entry of `state_dict` (cast to its dtype, moved to its device; shapes must
  match, () and (1,) being the same: a BatchNorm's num_batches_tracked saved either way). `strict`: every model tensor
  needs an entry, else KeyError; `consume`: entries are removed from state_dict as they load (their memory freed as it
  goes); without `realize` the assigns stay lazy. Returns the model's tensors that were loaded."""
  own, loaded = get_state_dict(model), []
  if strict and (missing := sorted(set(own) - set(state_dict))): raise KeyError(f"state_dict lacks {missing}")
  for name, tensor in tqdm(own.items(), desc="load_state_dict", disable=not verbose):
    if name not in state_dict: continue
    if (given := state_dict[name]).shape != tensor.shape:
      if {given.shape, tensor.shape} != {(), (1,)}:
        raise ValueError(f"Shape mismatch in layer `{name}`: Expected shape {tensor.shape}, but found {given.shape} in state dict.")
      given = given.reshape(tensor.shape)
    tensor.assign(given.cast(tensor.dtype).to(tensor.device))
    if realize: tensor.realize()
    if consume: del state_dict[name]
    loaded.append(tensor)
  return loaded


def safe_save(tensors: dict[str, Tensor], path: str | Path) -> None:
  header, blobs, offset = {}, [], 0
  for name, tensor in tensors.items():
    data = tensor.contiguous().realize().lazydata.arg.as_bytes() if tensor.numel() else b""
    header[name] = {"dtype": SAFETENSORS_DTYPES[tensor.dtype], "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
    blobs.append(data)
    offset += len(data)
  text = json.dumps(header).encode()
  text += b" " * (-len(text) % 8)
  Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
  found: dict[str, object] = {}
  for key, value in pairs:
    if key in found: raise ValueError(f"key {key!r} repeats")
    found[key] = value
  return found


def _is_count(value: object) -> bool: return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def safe_load(source: str | Path | Tensor) -> dict[str, Tensor]:
  """The tensors of a safetensors file (memory-mapped: each tensor's bytes are read when it is copied in, not the whole
  file at once) or of a uint8 Tensor holding one. A malformed file (a header that is not a JSON object of well-formed
  entries, offsets outside the data, tensors that overlap, leave gaps or do not match their shape) raises ValueError."""
  path = "the tensor" if isinstance(source, Tensor) else source
  if isinstance(source, Tensor):
    if source.dtype is not dtypes.uint8 or source.ndim != 1:
      raise TypeError(f"safe_load of a Tensor needs 1-d uint8 bytes, got {source.shape} {source.dtype}")
    raw = source.numpy()
  else: raw = np.memmap(source, np.uint8, mode="r") if Path(source).stat().st_size else np.zeros(0, np.uint8)

  def malformed(problem: str) -> ValueError: return ValueError(f"{path} is not a safetensors file: {problem}")
  if len(raw) < 8: raise malformed(f"{len(raw)} bytes, shorter than the 8-byte header length")
  (size,) = struct.unpack("<Q", raw[:8].tobytes())
  if size > len(raw) - 8: raise malformed(f"header length {size} reaches past the end of the file ({len(raw)} bytes)")
  try: header = json.loads(raw[8:8 + size].tobytes().decode(), object_pairs_hook=_unique_keys)
  except (ValueError, RecursionError) as error: raise malformed(f"the header is not JSON ({str(error).splitlines()[0]})") from None
  if not isinstance(header, dict): raise malformed(f"the header is a JSON {type(header).__name__}, not an object")
  by_name, data_size, tensors = {v: k for k, v in SAFETENSORS_DTYPES.items()}, len(raw) - 8 - size, []
  for name, entry in header.items():
    if name == "__metadata__":
      if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()): raise malformed("__metadata__ is not a map of strings")
      continue
    if not isinstance(entry, dict) or (missing := {"dtype", "shape", "data_offsets"} - set(entry)):
      raise malformed(f"tensor {name!r} lacks {sorted(missing) if isinstance(entry, dict) else 'an object with dtype, shape and data_offsets'}")
    dtype, shape, offsets = by_name.get(entry["dtype"]) if isinstance(entry["dtype"], str) else None, entry["shape"], entry["data_offsets"]
    if dtype is None: raise malformed(f"tensor {name!r} has unknown dtype {entry['dtype']!r}")
    if not isinstance(shape, list) or not all(_is_count(n) for n in shape):
      raise malformed(f"tensor {name!r} has shape {shape!r}, not a list of sizes")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_count(o) for o in offsets) or offsets[0] > offsets[1]:
      raise malformed(f"tensor {name!r} has data_offsets {offsets!r}, not [begin, end] with 0 <= begin <= end")
    if offsets[1] > data_size: raise malformed(f"tensor {name!r} ends at byte {offsets[1]}, past the {data_size} bytes of data")
    if (needed := math.prod(shape) * dtype.itemsize) != offsets[1] - offsets[0]:
      raise malformed(f"tensor {name!r} of shape {tuple(shape)} and {dtype} needs {needed} bytes, its data_offsets span {offsets[1] - offsets[0]}")
    tensors.append((offsets[0], offsets[1], name, dtype, tuple(shape)))
  covered = 0
  for begin, end, name, _, _ in sorted(tensors):
    if begin < covered: raise malformed(f"tensor {name!r} begins at byte {begin}, inside the tensor before it (ends at {covered})")
    if begin > covered: raise malformed(f"tensor {name!r} begins at byte {begin}, leaving bytes {covered}..{begin} unused")
    covered = end
  if covered != data_size: raise malformed(f"the tensors cover {covered} of the {data_size} bytes of data")
  return {name: Tensor.from_bytes(raw[8 + size + begin:8 + size + end].view(dtype.numpy).reshape(shape), dtype)
          for begin, end, name, dtype, shape in tensors}


__all__ = ["CheckpointError", "GGUFError", "get_parameters", "get_state_dict", "gguf_load", "load_state_dict", "safe_load", "safe_save",
           "torch_load"]
