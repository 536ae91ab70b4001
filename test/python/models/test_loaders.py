"""Weight loaders: torch_load (zip and legacy checkpoints, a restricted unpickler), gguf_load (a GGUF file written here from
the format's specification, every quantized type decoded against NumPy), memory-mapped safe_load, load_state_dict's
options, and the refusals of malformed and hostile files."""
import collections
import io
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest

from pytc import Tensor, dtypes, nn
from pytc.nn.state import CheckpointError, GGUFError, gguf_load, load_state_dict, safe_load, safe_save, torch_load

# *** PyTorch checkpoints ***


def op_global(module: str, name: str) -> bytes: return b"c" + module.encode() + b"\n" + name.encode() + b"\n"
def op_tuple(*items: bytes) -> bytes: return b"(" + b"".join(items) + b"t"
def op_str(s: str) -> bytes: return b"X" + struct.pack("<I", len(s.encode())) + s.encode()
def op_int(i: int) -> bytes: return b"J" + struct.pack("<i", i)


def checkpoint_pickle(entries: dict[str, tuple[str, str, int, int, tuple, tuple]]) -> bytes:
  """A state_dict pickle as torch.save writes it: name -> _rebuild_tensor_v2(persistent storage, offset, size, stride, ...)."""
  body = b""
  for name, (storage, key, count, offset, size, stride) in entries.items():
    persistent = op_tuple(op_str("storage"), op_global("torch", storage), op_str(key), op_str("cpu"), op_int(count)) + b"Q"
    arguments = op_tuple(persistent, op_int(offset), op_tuple(*map(op_int, size)), op_tuple(*map(op_int, stride)), b"\x89",
                         op_global("collections", "OrderedDict") + b")R")
    body += op_str(name) + op_global("torch._utils", "_rebuild_tensor_v2") + arguments + b"R"
  return b"\x80\x02" + op_global("collections", "OrderedDict") + b")R(" + body + b"u."


def zip_checkpoint(pickled: bytes, storages: dict[str, bytes]) -> bytes:
  out = io.BytesIO()
  with zipfile.ZipFile(out, "w") as archive:
    archive.writestr("archive/data.pkl", pickled)
    archive.writestr("archive/version", "3\n")
    for key, data in storages.items(): archive.writestr(f"archive/data/{key}", data)
  return out.getvalue()


def test_a_zip_checkpoint_written_from_the_format(tmp_path):
  w = np.arange(12, dtype=np.float32).reshape(3, 4)
  ids = np.array([5, -7, 9], np.int64)
  pickled = checkpoint_pickle({"w": ("FloatStorage", "0", 12, 0, (3, 4), (4, 1)), "wt": ("FloatStorage", "0", 12, 1, (3, 2), (1, 4)),
                               "ids": ("LongStorage", "1", 3, 0, (3,), (1,)), "empty": ("FloatStorage", "0", 12, 0, (0, 4), (4, 1))})
  path = tmp_path / "model.pt"
  path.write_bytes(zip_checkpoint(pickled, {"0": w.tobytes(), "1": ids.tobytes()}))
  state = torch_load(path)
  np.testing.assert_array_equal(state["w"].numpy(), w)
  np.testing.assert_array_equal(state["wt"].numpy(), np.lib.stride_tricks.as_strided(w.reshape(-1)[1:], (3, 2), (4, 16)))
  np.testing.assert_array_equal(state["ids"].numpy(), ids)
  assert state["ids"].dtype is dtypes.int64 and state["empty"].shape == (0, 4)
  np.testing.assert_array_equal(torch_load(Tensor(path)).get("w").numpy(), w)


class Hostile:
  def __reduce__(self): return (os.system, ("echo this must not run",))


@pytest.mark.parametrize("problem", ["code", "a storage past its bytes", "a view past its storage", "not a checkpoint", "truncated"])
def test_hostile_and_malformed_checkpoints_are_refused(tmp_path, problem):
  path = tmp_path / "bad.pt"
  if problem == "code": path.write_bytes(zip_checkpoint(pickle.dumps({"w": Hostile()}, protocol=2), {}))
  elif problem == "a storage past its bytes":
    path.write_bytes(zip_checkpoint(checkpoint_pickle({"w": ("FloatStorage", "0", 12, 0, (12,), (1,))}), {"0": b"\0" * 8}))
  elif problem == "a view past its storage":
    path.write_bytes(zip_checkpoint(checkpoint_pickle({"w": ("FloatStorage", "0", 4, 2, (4,), (1,))}), {"0": b"\0" * 16}))
  elif problem == "not a checkpoint": path.write_bytes(b"this is text, not a pickle")
  else: path.write_bytes(zip_checkpoint(checkpoint_pickle({"w": ("FloatStorage", "0", 4, 0, (4,), (1,))}), {"0": b"\0" * 16})[:-30])
  with pytest.raises(CheckpointError): torch_load(path)


def test_checkpoints_torch_writes(tmp_path):
  torch = pytest.importorskip("torch")
  state = collections.OrderedDict(w=torch.randn(3, 4), ids=torch.arange(5), half=torch.randn(2, 3).half(), bf=torch.randn(4).bfloat16(),
                                  transposed=torch.randn(4, 3).T, flags=torch.tensor([True, False]), empty=torch.zeros(0, 3),
                                  param=torch.nn.Parameter(torch.randn(2)))
  for zipped in (True, False):
    path = tmp_path / f"torch_{zipped}.pt"
    torch.save({"state_dict": state}, path, _use_new_zipfile_serialization=zipped)
    loaded = torch_load(path)
    assert set(loaded) == set(state)
    for name, tensor in state.items():
      assert loaded[name].shape == tuple(tensor.shape)
      np.testing.assert_array_equal(loaded[name].float().numpy(), tensor.detach().float().numpy())


# *** GGUF ***

def f16_bytes(values: np.ndarray) -> np.ndarray: return values.astype(np.float16).view(np.uint8).reshape(-1, 2)


def quantize(kind: str, x: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
  """Random blocks of `kind` for the values' count, written by the format's layout, and the values they decode to (by the
  format's formulas, in NumPy)."""
  n = x.size // (256 if kind.endswith("_K") else 32)
  u8 = lambda *shape: rng.integers(0, 256, shape, dtype=np.uint8)  # noqa: E731
  d, m = rng.uniform(-2, 2, n).astype(np.float16), rng.uniform(-1, 1, n).astype(np.float16)
  df, mf = d.astype(np.float32)[:, None], m.astype(np.float32)[:, None]
  def split(q): return np.concatenate([q & 0xF, q >> 4], 1).astype(np.int32)
  if kind == "Q8_0":
    qs = u8(n, 32)
    return np.concatenate([f16_bytes(d), qs], 1), qs.view(np.int8) * df
  if kind in ("Q4_0", "Q4_1"):
    qs = u8(n, 16)
    head = np.concatenate([f16_bytes(d)] + ([f16_bytes(m)] if kind == "Q4_1" else []), 1)
    return np.concatenate([head, qs], 1), (split(qs) - 8) * df if kind == "Q4_0" else split(qs) * df + mf
  if kind in ("Q5_0", "Q5_1"):
    qh, qs = u8(n, 4), u8(n, 16)
    high = np.unpackbits(qh, axis=1, bitorder="little").astype(np.int32)
    head = np.concatenate([f16_bytes(d)] + ([f16_bytes(m)] if kind == "Q5_1" else []), 1)
    q = split(qs) | (high << 4)
    return np.concatenate([head, qh, qs], 1), (q - 16) * df if kind == "Q5_0" else q * df + mf
  if kind == "MXFP4":
    e, qs = u8(n, 1) % 40 + 110, u8(n, 16)
    table = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], np.float32)
    return np.concatenate([e, qs], 1), table[split(qs)] * np.ldexp(np.float32(1), e.astype(np.int32) - 128)
  scales = u8(n, 12)
  sc, mn = np.zeros((n, 8), np.float32), np.zeros((n, 8), np.float32)
  for j in range(8):  # the six-bit scale and min of sub-block j
    if j < 4: sc[:, j], mn[:, j] = scales[:, j] & 63, scales[:, j + 4] & 63
    else:
      sc[:, j] = (scales[:, j + 4] & 0xF) | ((scales[:, j - 4] >> 6) << 4)
      mn[:, j] = (scales[:, j + 4] >> 4) | ((scales[:, j] >> 6) << 4)
  if kind in ("Q4_K", "Q5_K"):
    qs, qh = u8(n, 128), u8(n, 32)
    y = np.zeros((n, 256), np.float32)
    for chunk in range(4):
      q = qs[:, 32 * chunk:32 * chunk + 32].astype(np.int32)
      for half, values in enumerate((q & 0xF, q >> 4)):
        j = 2 * chunk + half
        if kind == "Q5_K": values = values + 16 * ((qh >> j) & 1)
        y[:, 64 * chunk + 32 * half:64 * chunk + 32 * half + 32] = df * sc[:, j:j + 1] * values - mf * mn[:, j:j + 1]
    parts = [f16_bytes(d), f16_bytes(m), scales] + ([qh] if kind == "Q5_K" else []) + [qs]
    return np.concatenate(parts, 1), y
  ql, qh, s6 = u8(n, 128), u8(n, 64), u8(n, 16).view(np.int8)  # Q6_K
  y = np.zeros((n, 256), np.float32)
  for h in range(2):
    for i in range(32):
      lo, hi, b = ql[:, 64 * h + i].astype(np.int32), ql[:, 64 * h + i + 32].astype(np.int32), qh[:, 32 * h + i].astype(np.int32)
      quads = [(lo & 0xF) | ((b & 3) << 4), (hi & 0xF) | (((b >> 2) & 3) << 4), (lo >> 4) | (((b >> 4) & 3) << 4), (hi >> 4) | (((b >> 6) & 3) << 4)]
      for g, q in enumerate(quads): y[:, 128 * h + 32 * g + i] = df[:, 0] * s6[:, 8 * h + i // 16 + 2 * g] * (q - 32)
  return np.concatenate([ql, qh, s6.view(np.uint8), f16_bytes(d)], 1), y


GGML = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "BF16": 30, "MXFP4": 39}


def gguf_bytes(metadata: list[tuple[str, int, bytes]], tensors: list[tuple[str, tuple, int, bytes]], alignment: int = 32) -> bytes:
  def string(s: str) -> bytes: return struct.pack("<Q", len(s.encode())) + s.encode()
  out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
  for key, kind, value in metadata: out += string(key) + struct.pack("<I", kind) + value
  data, offsets = b"", []
  for _, _, _, blob in tensors:
    data += b"\0" * (-len(data) % alignment)
    offsets.append(len(data))
    data += blob
  for (name, shape, kind, _), offset in zip(tensors, offsets):
    out += string(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", n) for n in shape[::-1]) + struct.pack("<IQ", kind, offset)
  return out + b"\0" * (-len(out) % alignment) + data


def test_gguf_written_from_the_specification(tmp_path):
  rng = np.random.default_rng(0)
  tensors, expected = [], {}
  for kind in ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K", "MXFP4"):
    shape = (4, 512) if kind.endswith("_K") else (3, 64)
    blocks, values = quantize(kind, np.zeros(shape), rng)
    tensors.append((f"{kind}.weight", shape, GGML[kind], blocks.tobytes()))
    expected[f"{kind}.weight"] = values.reshape(shape)
  plain = rng.standard_normal((5, 7)).astype(np.float32)
  tensors += [("f32", (5, 7), 0, plain.tobytes()), ("f16", (5, 7), 1, plain.astype(np.float16).tobytes()),
              ("bf16", (5, 7), 30, (plain.view(np.uint32) >> 16).astype(np.uint16).tobytes())]
  metadata = [("general.architecture", 8, struct.pack("<Q", 4) + b"gpt2"), ("gpt2.block_count", 4, struct.pack("<I", 2)),
              ("gpt2.attention.layer_norm_epsilon", 6, struct.pack("<f", 1e-5)),
              ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 2) + struct.pack("<Q", 1) + b"a" + struct.pack("<Q", 2) + b"bc")]
  path = tmp_path / "model.gguf"
  path.write_bytes(gguf_bytes(metadata, tensors))
  meta, loaded = gguf_load(path)
  assert meta["general.architecture"] == "gpt2" and meta["gpt2.block_count"] == 2 and meta["tokenizer.ggml.tokens"] == ["a", "bc"]
  assert abs(meta["gpt2.attention.layer_norm_epsilon"] - 1e-5) < 1e-9
  for name, values in expected.items():
    np.testing.assert_allclose(loaded[name].numpy(), values, rtol=1e-6, atol=1e-6, err_msg=name)
  np.testing.assert_array_equal(loaded["f32"].numpy(), plain)
  np.testing.assert_array_equal(loaded["f16"].numpy(), plain.astype(np.float16))
  np.testing.assert_array_equal(loaded["bf16"].float().numpy(), ((plain.view(np.uint32) >> 16) << 16).view(np.float32))
  assert set(gguf_load(Tensor(path))[1]) == set(loaded)


@pytest.mark.parametrize("damage", ["magic", "version", "truncated header", "data past the end", "unknown type", "ragged blocks"])
def test_malformed_gguf_files_are_refused(tmp_path, damage):
  blob = np.zeros((2, 34), np.uint8).tobytes()
  shape, kind = ((5, 13), 8) if damage == "ragged blocks" else ((2, 32), 99 if damage == "unknown type" else 8)
  raw = gguf_bytes([("general.name", 8, struct.pack("<Q", 1) + b"x")], [("w", shape, kind, blob)])
  raw = {"magic": b"GGUX" + raw[4:], "version": raw[:4] + struct.pack("<I", 9) + raw[8:], "truncated header": raw[:30],
         "data past the end": raw[:-10]}.get(damage, raw)
  (path := tmp_path / "bad.gguf").write_bytes(raw)
  with pytest.raises(GGUFError): gguf_load(path)


# *** safetensors and load_state_dict ***

class Small:
  def __init__(self):
    self.linear, self.norm = nn.Linear(4, 3), nn.LayerNorm(3)


def test_safe_load_maps_the_file_and_reads_tensors(tmp_path):
  model = Small()
  safe_save(nn.state.get_state_dict(model), path := tmp_path / "m.safetensors")
  mapped, from_tensor = safe_load(path), safe_load(Tensor(path))
  for name, tensor in nn.state.get_state_dict(model).items():
    np.testing.assert_array_equal(mapped[name].numpy(), tensor.numpy())
    np.testing.assert_array_equal(from_tensor[name].numpy(), tensor.numpy())
  with pytest.raises(TypeError, match="uint8"): safe_load(Tensor([1.0, 2.0]))


def test_load_state_dict_options():
  source, target = Small(), Small()
  state = dict(nn.state.get_state_dict(source))
  state["extra"] = Tensor.ones(2)
  loaded = load_state_dict(target, state, consume=True, realize=False)
  assert [id(t) for t in loaded] == [id(t) for t in nn.state.get_state_dict(target).values()] and list(state) == ["extra"]
  np.testing.assert_array_equal(target.linear.weight.numpy(), source.linear.weight.numpy())
  with pytest.raises(ValueError, match="linear.bias"):
    load_state_dict(Small(), {**nn.state.get_state_dict(source), "linear.bias": Tensor.ones(4)})
  with pytest.raises(KeyError, match="norm.weight"): load_state_dict(Small(), {"linear.weight": Tensor.ones(3, 4)})
  partial = Small()
  assert load_state_dict(partial, {"linear.weight": Tensor.ones(3, 4)}, strict=False) == [partial.linear.weight]
  norm = nn.BatchNorm(3)
  assert norm.num_batches_tracked.shape in ((), (1,))
  load_state_dict(norm, {**nn.state.get_state_dict(norm), "num_batches_tracked": Tensor([5] if norm.num_batches_tracked.shape == () else 5)})
  assert norm.num_batches_tracked.numpy().reshape(()) == 5
