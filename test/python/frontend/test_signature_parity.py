"""Every public method and property of tinygrad's Tensor exists on pytc's Tensor with the same parameter names, kinds,
order and defaults (pytc may add parameters of its own, each with a default). Needs tinygrad installed (the test extra
pins the version); names pytc leaves out on purpose, or has not made yet, are listed below with the reason."""
import inspect

import pytest

from pytc import Tensor, dtypes

tinygrad = pytest.importorskip("tinygrad", reason="tinygrad is not installed: pip install -e .[test] pins the version to compare with")
TinyTensor = tinygrad.Tensor

# tinygrad members pytc leaves out on purpose.
DELIBERATE: dict[str, str] = {
  "uop": "tinygrad's graph node; pytc's is `lazydata`, a LazyOp lowered to the uop MLIR dialect",
  "alu": "applies a tinygrad Ops enum member; pytc's elementwise ops are methods",
  "call": "runs a tinygrad UOp program as a function call; pytc has no UOp programs",
  "callify": "wraps tinygrad's graph into a UOp call",
  "custom_kernel": "takes a function that writes tinygrad UOps",
  "linear_with_vars": "returns tinygrad's linearized UOp program",
  "schedule_linear": "returns tinygrad's linearized UOp schedule; pytc's schedule() returns its launches",
  "as_param": "marks a UOp parameter slot of a tinygrad call",
  "is_param": "tinygrad's flag for call parameters; pytc marks trainable tensors with requires_grad",
  "is_param_": "sets is_param; see is_param",
  "const": "wraps a tinygrad UOp constant; pytc makes constants with Tensor(value) and full",
  "const_like": "wraps a tinygrad UOp constant; pytc has full_like",
  "invalids": "tinygrad's Invalid placeholder value has no pytc counterpart",
  "max_numel": "symbolic (Variable) shapes: pytc's shapes are plain ints",
  "max_shape": "symbolic (Variable) shapes: pytc's shapes are plain ints",
  "ufix": "tinygrad's helper turning Python scalars into UOps",
  "usum": "tinygrad's helper that adds UOps (a reduction helper of its mixins)",
  "uprod": "tinygrad's helper that multiplies UOps (a reduction helper of its mixins)",
  "shard": "multi-device tensors: pytc has one device per tensor",
  "shard_": "multi-device tensors: pytc has one device per tensor",
  "shard_like": "multi-device tensors: pytc has one device per tensor",
  "from_url": "downloads over the network, which pytc never does",
  "decode_hevc_frame": "runs a hardware video decoder",
  "image_conv2d": "tinygrad's IMAGE texture layout for Qualcomm GPUs",
  "image_dot": "tinygrad's IMAGE texture layout for Qualcomm GPUs",
  "contiguous": "tinygrad's keyword arguments are options of its UOp graph (ranges, tags); contiguous() itself is pytc's",
  "from_blob": "tinygrad's **kwargs are dtype and device, which pytc names (with owner, to keep the memory alive)",
  "data": "a memoryview over the buffer in tinygrad's struct formats; pytc reads data with numpy(), tolist() and item()",
}

# Not made yet; checked like the rest as soon as pytc has them.
PENDING: dict[str, str] = {
  "threefry": "the threefry2x32 hash as a Tensor method (pytc's rand computes the same stream on the host)",
  "random_bits": "tinygrad's threefry random stream for a (key, counter) pair as a Tensor method: needs threefry",
  "keccak": "the keccak (SHA-3) hash as tensor ops",
  "hash": "tinygrad's content hash of a tensor: needs keccak",
  "qr": "QR decomposition by Householder reflections",
  "svd": "singular value decomposition by one-sided Jacobi rotations",
}


def _normalized(default):
  """A default value comparable across the two libraries: a dtype by pytc's dtype of the same name."""
  if type(default).__name__ == "DType": return getattr(dtypes, repr(default).removeprefix("dtypes."))
  return default


def _same_default(tiny, mine) -> bool:
  if isinstance(mine, str) and isinstance(_normalized(tiny), type(dtypes.int32)): return getattr(dtypes, mine) is _normalized(tiny)
  return type(_normalized(tiny)) is type(mine) and _normalized(tiny) == mine


def signature_problems(tiny: inspect.Signature, mine: inspect.Signature) -> list[str]:
  """How `mine` fails to accept every call `tiny` accepts the same way: each tinygrad parameter must exist in pytc with
  the same kind, position (for positional ones) and default (pytc may give a default where tinygrad has none); pytc's
  extra parameters need defaults."""
  P = inspect.Parameter
  problems, ours = [], mine.parameters
  positional = lambda sig: [p.name for p in sig.parameters.values() if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
  variadic = lambda sig, kind: any(p.kind is kind for p in sig.parameters.values())
  for p in tiny.parameters.values():
    if p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD):
      if not variadic(mine, p.kind): problems.append(f"no {'*args' if p.kind is P.VAR_POSITIONAL else '**kwargs'}")
      continue
    if (q := ours.get(p.name)) is None: problems.append(f"no parameter {p.name}"); continue
    if p.kind is not P.KEYWORD_ONLY and (q.kind is P.KEYWORD_ONLY or positional(tiny).index(p.name) != positional(mine).index(p.name)):
      problems.append(f"{p.name} is not positional at place {positional(tiny).index(p.name)}")
    if p.kind is P.KEYWORD_ONLY and q.kind not in (P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD): problems.append(f"{p.name} cannot be a keyword")
    if p.default is not P.empty and (q.default is P.empty or not _same_default(p.default, q.default)):
      problems.append(f"{p.name} defaults to {q.default!r}, not {p.default!r}")
  for q in ours.values():
    if q.name not in tiny.parameters and q.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD) and q.default is P.empty:
      problems.append(f"extra parameter {q.name} without a default")
  return problems


PUBLIC = sorted(n for n in dir(TinyTensor) if not n.startswith("_"))


def test_lists_name_real_members():
  assert not (set(DELIBERATE) & set(PENDING))
  assert set(DELIBERATE) | set(PENDING) <= set(PUBLIC), sorted((set(DELIBERATE) | set(PENDING)) - set(PUBLIC))


@pytest.mark.parametrize("name", [n for n in PUBLIC if n not in DELIBERATE])
def test_member_matches_tinygrad(name):
  if not hasattr(Tensor, name) and not hasattr(Tensor([1.0]), name):
    if name in PENDING: pytest.skip(f"not yet in pytc: {PENDING[name]}")
    pytest.fail(f"Tensor.{name} is missing")
  tiny = inspect.getattr_static(TinyTensor, name)
  if isinstance(tiny, property) or type(tiny).__name__ == "member_descriptor":
    assert isinstance(inspect.getattr_static(Tensor, name, None), property) or name in vars(Tensor([1.0])), f"Tensor.{name} should be a property"
    return
  assert callable(getattr(Tensor, name)), f"Tensor.{name} should be a method"
  if problems := signature_problems(inspect.signature(getattr(TinyTensor, name)), inspect.signature(getattr(Tensor, name))):
    if name in PENDING: pytest.skip(f"signature not yet as tinygrad's ({'; '.join(problems)}): {PENDING[name]}")
    pytest.fail(f"Tensor.{name}{inspect.signature(getattr(Tensor, name))} differs from tinygrad's "
                f"{name}{inspect.signature(getattr(TinyTensor, name))}: {'; '.join(problems)}")


def test_signature_problems_catches_differences():
  def tiny(self, a, b=1, *, dtype=dtypes.int32): pass
  assert signature_problems(inspect.signature(tiny), inspect.signature(lambda self, a, b=1, dtype="int32", extra=None: 0)) == []
  assert signature_problems(inspect.signature(tiny), inspect.signature(lambda self, b=1, a=0: 0)) != []
  assert signature_problems(inspect.signature(tiny), inspect.signature(lambda self, a, b=2, *, dtype=None: 0)) != []
  assert signature_problems(inspect.signature(tiny), inspect.signature(lambda self, a, b=1, *, dtype=None, extra: 0)) != []
  assert signature_problems(inspect.signature(tiny), inspect.signature(lambda self, a=0, b=1, *, dtype=dtypes.int32: 0)) == []
  assert signature_problems(inspect.signature(lambda self, *args, **kwargs: 0), inspect.signature(lambda self, *args: 0)) == ["no **kwargs"]
