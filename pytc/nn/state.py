"""Model state: finding a model's tensors, and saving/loading them in the safetensors format
(an 8-byte little-endian header length, a JSON header of name -> dtype, shape and byte offsets, then the data)."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from pytc.dtype import DType, dtypes
from pytc.tensor import Tensor

SAFETENSORS_DTYPES: dict[DType, str] = {
  dtypes.bool: "BOOL", dtypes.int8: "I8", dtypes.uint8: "U8", dtypes.int16: "I16", dtypes.uint16: "U16", dtypes.int32: "I32",
  dtypes.uint32: "U32", dtypes.int64: "I64", dtypes.uint64: "U64", dtypes.float16: "F16", dtypes.bfloat16: "BF16",
  dtypes.float32: "F32", dtypes.float64: "F64"}


def get_state_dict(obj: object, prefix: str = "") -> dict[str, Tensor]:
  """Every Tensor reachable through `obj`'s attributes, lists, tuples and dicts, by dotted name."""
  if isinstance(obj, Tensor): return {prefix.rstrip("."): obj}
  if isinstance(obj, list | tuple): items = enumerate(obj)
  elif isinstance(obj, dict): items = obj.items()
  elif hasattr(obj, "__dict__"): items = vars(obj).items()
  else: return {}
  state: dict[str, Tensor] = {}
  for key, value in items: state.update(get_state_dict(value, f"{prefix}{key}."))
  return state


def get_parameters(obj: object) -> list[Tensor]: return list(get_state_dict(obj).values())


def load_state_dict(model: object, state_dict: dict[str, Tensor], strict: bool = True) -> None:
  """Assign each of the model's tensors its entry of `state_dict` (shapes and dtypes must match)."""
  own = get_state_dict(model)
  if strict and (missing := sorted(set(own) - set(state_dict))): raise KeyError(f"state_dict lacks {missing}")
  for name, tensor in own.items():
    if name in state_dict: tensor.assign(state_dict[name].cast(tensor.dtype).to(tensor.device)).realize()


def safe_save(tensors: dict[str, Tensor], path: str | Path) -> None:
  header, blobs, offset = {}, [], 0
  for name, tensor in tensors.items():
    data = tensor.contiguous().realize().lazydata.arg.raw.copyout() if tensor.numel() else b""
    header[name] = {"dtype": SAFETENSORS_DTYPES[tensor.dtype], "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
    blobs.append(data)
    offset += len(data)
  text = json.dumps(header).encode()
  text += b" " * (-len(text) % 8)
  Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def safe_load(path: str | Path) -> dict[str, Tensor]:
  raw = Path(path).read_bytes()
  if len(raw) < 8: raise ValueError(f"{path} is not a safetensors file: too short")
  (size,) = struct.unpack("<Q", raw[:8])
  try:
    header = json.loads(raw[8:8 + size])
  except ValueError as error:
    raise ValueError(f"{path} is not a safetensors file: bad header ({error})") from None
  by_name = {v: k for k, v in SAFETENSORS_DTYPES.items()}
  tensors = {}
  for name, entry in header.items():
    if name == "__metadata__": continue
    dtype, (start, end) = by_name[entry["dtype"]], entry["data_offsets"]
    data = np.frombuffer(raw[8 + size + start:8 + size + end], dtype=dtype.numpy).reshape(entry["shape"])
    tensors[name] = Tensor.from_bytes(data, dtype)
  return tensors
