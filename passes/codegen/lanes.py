"""Values as vectors of lanes: types and constants shaped like a value that may be a vector."""

from mlir import ir
from mlir.dialects import arith


def shaped(t: ir.Type, like: ir.Value | None) -> ir.Type:
  """`t`, or a vector of `t` in the shape of `like` when that is a vector."""
  return (
    ir.VectorType.get(ir.VectorType(like.type).shape, t)
    if like is not None and isinstance(like.type, ir.VectorType)
    else t
  )


def splat(attr: ir.Attribute, like: ir.Value | None = None) -> ir.Value:
  """The constant `attr`, splat in the shape of `like` when that is a vector."""
  t = shaped(attr.type, like)
  return arith.constant(t, ir.DenseElementsAttr.get_splat(t, attr) if t != attr.type else attr)
