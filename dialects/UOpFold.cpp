//===- UOpFold.cpp - constant folding and movement algebra ----------------===//
//
// Elementwise ops on splat constants fold to splat constants; movement ops
// fold when they are identities, compose with a movement op of the same kind,
// or move a splat constant.
//
//===----------------------------------------------------------------------===//

#include "UOp.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APSInt.h"
#include <cmath>

using namespace mlir;
using namespace mlir::uop;

namespace {
using FloatFn = llvm::function_ref<std::optional<double>(ArrayRef<double>)>;
using IntFn = llvm::function_ref<std::optional<APInt>(ArrayRef<APInt>, bool isUnsigned)>;
} // namespace

/// The scalar of a constant operand (a splat tensor or a scalar), or null.
static Attribute splatScalar(Attribute operand) {
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(operand))
    return splat.getSplatValue<Attribute>();
  if (isa_and_present<FloatAttr, IntegerAttr>(operand))
    return operand;
  return {};
}

static double toDouble(APFloat value) {
  bool lost;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return value.convertToDouble();
}

static Attribute scalarFrom(double value, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type)) {
    APFloat result(value);
    bool lost;
    result.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return FloatAttr::get(floatType, result);
  }
  return IntegerAttr::get(type, APInt(1, value != 0));
}

static OpFoldResult splatResult(Operation *op, Attribute scalar) {
  if (auto shaped = dyn_cast<ShapedType>(op->getResult(0).getType()))
    return DenseElementsAttr::get(shaped, scalar);
  return scalar;
}

/// Folds an elementwise op whose operands are all splat constants, computing
/// floats in double precision and integers at their own width (i1 as unsigned:
/// true > false).
static OpFoldResult foldElementwise(Operation *op, ArrayRef<Attribute> operands, FloatFn onFloat,
                                    IntFn onInt) {
  SmallVector<Attribute> scalars;
  for (Attribute operand : operands) {
    if (!(scalars.emplace_back(splatScalar(operand))))
      return {};
  }
  Type resultElement = getElementTypeOrSelf(op->getResult(0).getType());
  if (isa<FloatAttr>(scalars[0])) {
    SmallVector<double> values;
    for (Attribute scalar : scalars)
      values.push_back(toDouble(cast<FloatAttr>(scalar).getValue()));
    std::optional<double> result = onFloat(values);
    return result ? splatResult(op, scalarFrom(*result, resultElement)) : OpFoldResult();
  }
  SmallVector<APInt> values;
  for (Attribute scalar : scalars)
    values.push_back(cast<IntegerAttr>(scalar).getValue());
  Type operandElement = cast<IntegerAttr>(scalars[0]).getType();
  bool isUnsigned = operandElement.isUnsignedInteger() || operandElement.isInteger(1);
  std::optional<APInt> result = onInt(values, isUnsigned);
  return result ? splatResult(op, IntegerAttr::get(resultElement, *result)) : OpFoldResult();
}

static std::optional<APInt> boolean(bool value) { return APInt(1, value); }
static std::optional<double> noFloat(ArrayRef<double>) { return std::nullopt; }

#define FOLD_FLOAT(OP, EXPR)                                                                 \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                               \
    return foldElementwise(*this, adaptor.getOperands(),                                     \
                           [](ArrayRef<double> v) -> std::optional<double> { return EXPR; }, \
                           [](ArrayRef<APInt>, bool) -> std::optional<APInt> { return {}; }); \
  }
#define FOLD_BOTH(OP, FEXPR, IEXPR)                                                          \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                               \
    return foldElementwise(                                                                  \
        *this, adaptor.getOperands(),                                                        \
        [](ArrayRef<double> v) -> std::optional<double> { return FEXPR; },                   \
        [](ArrayRef<APInt> v, bool isUnsigned) -> std::optional<APInt> {                     \
          (void)isUnsigned;                                                                  \
          return IEXPR;                                                                      \
        });                                                                                  \
  }
#define FOLD_INT(OP, IEXPR)                                                                  \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                               \
    return foldElementwise(*this, adaptor.getOperands(), noFloat,                            \
                           [](ArrayRef<APInt> v, bool isUnsigned) -> std::optional<APInt> {  \
                             (void)isUnsigned;                                               \
                             return IEXPR;                                                   \
                           });                                                               \
  }

static double maxWithNaN(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}

static std::optional<APInt> divide(const APInt &a, const APInt &b, bool isUnsigned, bool rem) {
  if (b.isZero() || (!isUnsigned && b.isAllOnes() && a.isMinSignedValue()))
    return std::nullopt;
  if (isUnsigned)
    return rem ? a.urem(b) : a.udiv(b);
  return rem ? a.srem(b) : a.sdiv(b);
}

static std::optional<APInt> shift(const APInt &a, const APInt &b, bool isUnsigned, bool left) {
  if (b.uge(a.getBitWidth()))
    return std::nullopt;
  unsigned amount = b.getZExtValue();
  return left ? a.shl(amount) : isUnsigned ? a.lshr(amount) : a.ashr(amount);
}

FOLD_BOTH(NegOp, -v[0], -v[0])
FOLD_FLOAT(Exp2Op, std::exp2(v[0]))
FOLD_FLOAT(Log2Op, std::log2(v[0]))
FOLD_FLOAT(SinOp, std::sin(v[0]))
FOLD_FLOAT(CosOp, std::cos(v[0]))
FOLD_FLOAT(ExpOp, std::exp(v[0]))
FOLD_FLOAT(TanhOp, std::tanh(v[0]))
FOLD_FLOAT(LogOp, std::log(v[0]))
FOLD_FLOAT(SqrtOp, std::sqrt(v[0]))
FOLD_FLOAT(RecipOp, 1.0 / v[0])
FOLD_FLOAT(TruncOp, std::trunc(v[0]))
FOLD_BOTH(AddOp, v[0] + v[1], v[0] + v[1])
FOLD_BOTH(MulOp, v[0] * v[1], v[0] * v[1])
FOLD_BOTH(MaxOp, maxWithNaN(v[0], v[1]),
          (isUnsigned ? llvm::APIntOps::umax(v[0], v[1]) : llvm::APIntOps::smax(v[0], v[1])))
FOLD_INT(IdivOp, divide(v[0], v[1], isUnsigned, false))
FOLD_INT(ModOp, divide(v[0], v[1], isUnsigned, true))
FOLD_INT(AndOp, v[0] & v[1])
FOLD_INT(OrOp, v[0] | v[1])
FOLD_INT(XorOp, v[0] ^ v[1])
FOLD_INT(ShlOp, shift(v[0], v[1], isUnsigned, true))
FOLD_INT(ShrOp, shift(v[0], v[1], isUnsigned, false))
FOLD_FLOAT(PowOp, std::pow(v[0], v[1]))
FOLD_BOTH(CmpltOp, double(v[0] < v[1]), boolean(isUnsigned ? v[0].ult(v[1]) : v[0].slt(v[1])))
FOLD_BOTH(CmpneOp, double(v[0] != v[1]), boolean(v[0] != v[1]))
FOLD_BOTH(CmpeqOp, double(v[0] == v[1]), boolean(v[0] == v[1]))
FOLD_BOTH(MulaccOp, v[0] * v[1] + v[2], v[0] * v[1] + v[2])

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  if (auto cond = dyn_cast_if_present<IntegerAttr>(splatScalar(adaptor.getCond())))
    return cond.getValue().isOne() ? getLhs() : getRhs();
  return {};
}

/// A constant placed on a device folds to `[splat, device]`, so that equal
/// constants on different devices stay apart and the folders, which take only
/// splat attributes, leave the ops that use it (and its placement) alone.
OpFoldResult ConstOp::fold(FoldAdaptor) {
  Attribute splat = isa<ShapedType>(getType())
                        ? Attribute(DenseElementsAttr::get(cast<ShapedType>(getType()), Attribute(getValue())))
                        : Attribute(getValue());
  if (StringAttr device = getDeviceAttr())
    return ArrayAttr::get(getContext(), {splat, device});
  return splat;
}

//===----------------------------------------------------------------------===//
// cast / bitcast
//===----------------------------------------------------------------------===//

/// Converts a scalar like a C cast; anything to i1 is `x != 0`. Returns null
/// where the value does not fit (NaN or out of range to an integer).
static Attribute castScalar(Attribute scalar, Type to) {
  auto toInt = dyn_cast<IntegerType>(to);
  if (auto floating = dyn_cast<FloatAttr>(scalar)) {
    APFloat value = floating.getValue();
    if (toInt && toInt.getWidth() == 1)
      return IntegerAttr::get(to, APInt(1, !value.isZero()));
    if (toInt) {
      APSInt result(toInt.getWidth(), toInt.isUnsigned());
      bool exact;
      if (value.convertToInteger(result, APFloat::rmTowardZero, &exact) & APFloat::opInvalidOp)
        return {};
      return IntegerAttr::get(to, result);
    }
    bool lost;
    value.convert(cast<FloatType>(to).getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return FloatAttr::get(to, value);
  }
  auto integer = cast<IntegerAttr>(scalar);
  APInt value = integer.getValue();
  bool isSigned = !integer.getType().isUnsignedInteger() && value.getBitWidth() > 1;
  if (toInt && toInt.getWidth() == 1)
    return IntegerAttr::get(to, APInt(1, !value.isZero()));
  if (toInt)
    return IntegerAttr::get(to, isSigned ? value.sextOrTrunc(toInt.getWidth())
                                         : value.zextOrTrunc(toInt.getWidth()));
  auto floatType = cast<FloatType>(to);
  APFloat result(floatType.getFloatSemantics());
  result.convertFromAPInt(value, isSigned, APFloat::rmNearestTiesToEven);
  return FloatAttr::get(to, result);
}

static APInt bitsOf(Attribute scalar) {
  if (auto floating = dyn_cast<FloatAttr>(scalar))
    return floating.getValue().bitcastToAPInt();
  return cast<IntegerAttr>(scalar).getValue();
}

static Attribute scalarFromBits(const APInt &bits, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return FloatAttr::get(type, APFloat(floatType.getFloatSemantics(), bits));
  return IntegerAttr::get(type, bits);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  Attribute scalar = splatScalar(adaptor.getSrc());
  Attribute result = scalar ? castScalar(scalar, getElementTypeOrSelf(getType())) : Attribute();
  return result ? splatResult(*this, result) : OpFoldResult();
}

OpFoldResult BitcastOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  if (Attribute scalar = splatScalar(adaptor.getSrc()))
    return splatResult(*this, scalarFromBits(bitsOf(scalar), getElementTypeOrSelf(getType())));
  return {};
}

//===----------------------------------------------------------------------===//
// Movement
//===----------------------------------------------------------------------===//

/// Every movement op of a splat constant is a splat constant; an op whose
/// result type equals its source type and that `isIdentity` is its source.
template <typename Op>
static OpFoldResult foldMovement(Op op, Attribute source, bool isIdentity) {
  if (isIdentity && op.getSrc().getType() == op.getType())
    return op.getSrc();
  if (Attribute scalar = splatScalar(source))
    return splatResult(op, scalar);
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getSrc().getDefiningOp<ReshapeOp>()) {
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return foldMovement(*this, adaptor.getSrc(), true);
}

OpFoldResult PermuteOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getSrc().getDefiningOp<PermuteOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t axis : getOrder())
      composed.push_back(inner.getOrder()[axis]);
    getSrcMutable().assign(inner.getSrc());
    setOrder(composed);
    return getResult();
  }
  bool identity = llvm::equal(getOrder(), llvm::seq<int64_t>(0, getOrder().size()));
  return foldMovement(*this, adaptor.getSrc(), identity);
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getSrc().getDefiningOp<ExpandOp>()) {
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return foldMovement(*this, adaptor.getSrc(), true);
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  bool identity = llvm::all_of(getLow(), [](int64_t p) { return p == 0; }) &&
                  llvm::all_of(getHigh(), [](int64_t p) { return p == 0; });
  return identity ? getSrc() : OpFoldResult();
}

OpFoldResult ShrinkOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getSrc().getDefiningOp<ShrinkOp>()) {
    SmallVector<int64_t> starts, ends;
    for (auto [outer, start, end] : llvm::zip(inner.getStarts(), getStarts(), getEnds())) {
      starts.push_back(outer + start);
      ends.push_back(outer + end);
    }
    getSrcMutable().assign(inner.getSrc());
    setStarts(starts);
    setEnds(ends);
    return getResult();
  }
  return foldMovement(*this, adaptor.getSrc(), true);
}

OpFoldResult FlipOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> shape = getType().getShape();
  if (auto inner = getSrc().getDefiningOp<FlipOp>()) {
    SmallVector<int64_t> outerAxes(getAxes()), innerAxes(inner.getAxes());
    llvm::sort(outerAxes);
    llvm::sort(innerAxes);
    if (outerAxes == innerAxes)
      return inner.getSrc();
  }
  bool identity = llvm::all_of(getAxes(), [&](int64_t axis) { return shape[axis] == 1; });
  return foldMovement(*this, adaptor.getSrc(), identity);
}

namespace {
/// shrink(pad(x)) reads only the unpadded region: shrink x directly.
struct ShrinkOfPad : OpRewritePattern<ShrinkOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ShrinkOp op, PatternRewriter &rewriter) const override {
    auto pad = op.getSrc().getDefiningOp<PadOp>();
    if (!pad)
      return failure();
    ArrayRef<int64_t> dims = pad.getSrc().getType().getShape();
    SmallVector<int64_t> starts, ends;
    for (auto [dim, low, start, end] : llvm::zip(dims, pad.getLow(), op.getStarts(), op.getEnds())) {
      if (start < low || end > low + dim)
        return failure();
      starts.push_back(start - low);
      ends.push_back(end - low);
    }
    rewriter.replaceOpWithNewOp<ShrinkOp>(op, op.getType(), pad.getSrc(), starts, ends);
    return success();
  }
};
} // namespace

void ShrinkOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<ShrinkOfPad>(context);
}
