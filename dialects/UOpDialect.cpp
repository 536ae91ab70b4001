//===- UOpDialect.cpp - uop dialect, parsing and verifiers ----------------===//

#include "UOp.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::uop;

#include "UOpDialect.cpp.inc"
#include "UOpEnums.cpp.inc"
#define GET_OP_CLASSES
#include "UOpOps.cpp.inc"

void UOpDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "UOpOps.cpp.inc"
      >();
}

Type mlir::uop::boolTensorLike(Type type) {
  auto bool1 = IntegerType::get(type.getContext(), 1);
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return RankedTensorType::get(tensor.getShape(), bool1);
  return bool1;
}

Operation *UOpDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  if (auto scalar = dyn_cast<TypedAttr>(value); scalar && scalar.getType() == type &&
                                                 isa<FloatAttr, IntegerAttr>(scalar))
    return ConstOp::create(builder, loc, type, scalar, StringAttr());
  auto splat = dyn_cast<SplatElementsAttr>(value);
  if (!splat || splat.getType() != type)
    return nullptr;
  return ConstOp::create(builder, loc, type,
                         cast<TypedAttr>(splat.getSplatValue<Attribute>()),
                         StringAttr());
}

//===----------------------------------------------------------------------===//
// Helpers shared by the verifiers
//===----------------------------------------------------------------------===//

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, dim] : llvm::enumerate(shape))
    text += (i ? ", " : "") + std::to_string(dim);
  return text + "]";
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

static LogicalResult verifyResultShape(Operation *op, ArrayRef<int64_t> expected) {
  ArrayRef<int64_t> actual = shapeOf(op->getResult(0));
  if (actual == expected)
    return success();
  return op->emitOpError("result shape ") << shapeString(actual)
         << " does not match the expected " << shapeString(expected);
}

/// Axes must each be in [0, rank) and appear once.
static LogicalResult verifyAxes(Operation *op, ArrayRef<int64_t> axes, int64_t rank) {
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= rank)
      return op->emitOpError("axis ") << axis << " is out of range for a rank-"
                                      << rank << " tensor";
    if (!seen.insert(axis).second)
      return op->emitOpError("axis ") << axis << " appears more than once";
  }
  return success();
}

static LogicalResult verifyArity(Operation *op, StringRef name, size_t size, int64_t rank) {
  if (static_cast<int64_t>(size) == rank)
    return success();
  return op->emitOpError() << "`" << name << "` has " << size
                           << " entries but the source has rank " << rank;
}

//===----------------------------------------------------------------------===//
// const
//===----------------------------------------------------------------------===//

/// Converts a parsed literal to a scalar of `type`; a hex literal for a float
/// type spells the bits, as in the builtin dialect.
static FailureOr<TypedAttr> scalarLiteral(Attribute literal, Type type, bool hex,
                                          llvm::function_ref<InFlightDiagnostic()> error) {
  if (auto floatType = dyn_cast<FloatType>(type)) {
    if (auto floating = dyn_cast<FloatAttr>(literal)) {
      APFloat value = floating.getValue();
      bool lost;
      value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      return TypedAttr(FloatAttr::get(floatType, value));
    }
    auto integer = dyn_cast<IntegerAttr>(literal);
    if (!integer)
      return error() << "expected a number for element type " << type;
    if (hex) {
      APInt bits = integer.getValue();
      if (bits.isNegative())
        return error() << "hex literal for " << type << " cannot be negative";
      if (bits.getActiveBits() > floatType.getWidth())
        return error() << "hex literal does not fit in " << type;
      return TypedAttr(FloatAttr::get(
          floatType, APFloat(floatType.getFloatSemantics(), bits.zextOrTrunc(floatType.getWidth()))));
    }
    APFloat value(floatType.getFloatSemantics());
    value.convertFromAPInt(integer.getValue(), /*isSigned=*/!integer.getType().isInteger(1),
                           APFloat::rmNearestTiesToEven);
    return TypedAttr(FloatAttr::get(floatType, value));
  }
  auto intType = dyn_cast<IntegerType>(type);
  if (!intType)
    return error() << "element type " << type << " is not a uop element type";
  auto integer = dyn_cast<IntegerAttr>(literal);
  if (!integer)
    return error() << "expected an integer literal for element type " << type;
  APInt value = integer.getType().isInteger(1) ? integer.getValue().zext(64) : integer.getValue();
  unsigned width = intType.getWidth();
  bool fits = width == 1 ? value.ule(1)
              : intType.isUnsigned() ? !value.isNegative() && value.getActiveBits() <= width
                                     : value.getSignificantBits() <= width;
  if (!fits)
    return error() << "literal " << llvm::toString(value, 10, /*Signed=*/true)
                   << " does not fit in " << type;
  return TypedAttr(IntegerAttr::get(intType, value.trunc(width)));
}

/// Parses `true`, `false`, an integer (decimal or hex) or a float literal,
/// without the trailing `: type` that a full attribute would take.
static ParseResult parseScalarLiteral(OpAsmParser &parser, Attribute &literal, bool &hex) {
  MLIRContext *context = parser.getContext();
  for (bool value : {true, false})
    if (succeeded(parser.parseOptionalKeyword(value ? "true" : "false"))) {
      literal = BoolAttr::get(context, value);
      return success();
    }
  StringRef token = StringRef(parser.getCurrentLocation().getPointer()).ltrim("-");
  hex = token.starts_with("0x");
  StringRef digits = token.take_while([](char c) { return llvm::isAlnum(c) || c == '.'; });
  if (!hex && digits.find_first_of(".eE") != StringRef::npos) {
    double value;
    if (parser.parseFloat(value))
      return failure();
    literal = FloatAttr::get(Float64Type::get(context), value);
    return success();
  }
  APInt value;
  if (parser.parseInteger(value))
    return failure();
  // The parser returns a signed value wide enough to hold the literal; keep all
  // of its bits so that out-of-range literals are reported, not truncated.
  value = value.sext(std::max(64u, value.getBitWidth()));
  literal = IntegerAttr::get(IntegerType::get(context, value.getBitWidth()), value);
  return success();
}

ParseResult ConstOp::parse(OpAsmParser &parser, OperationState &result) {
  SMLoc loc = parser.getCurrentLocation();
  Attribute literal;
  bool hex = false;
  Type type;
  if (parseScalarLiteral(parser, literal, hex) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColonType(type))
    return failure();
  FailureOr<TypedAttr> value = scalarLiteral(literal, getElementTypeOrSelf(type), hex,
                                             [&] { return parser.emitError(loc); });
  if (failed(value))
    return failure();
  result.addAttribute(getValueAttrName(result.name), *value);
  result.addTypes(type);
  return success();
}

void ConstOp::print(OpAsmPrinter &printer) {
  printer << ' ';
  printer.printAttributeWithoutType(getValue());
  printer.printOptionalAttrDict((*this)->getAttrs(), {getValueAttrName()});
  printer << " : " << getType();
}

LogicalResult ConstOp::verify() {
  Type element = getElementTypeOrSelf(getType());
  if (getValue().getType() != element)
    return emitOpError("value of type ") << getValue().getType()
                                         << " does not match the element type " << element;
  return success();
}

//===----------------------------------------------------------------------===//
// Sources, casts and reduce
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::verify() {
  int64_t rank = getType().getRank(), axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << axis << " is out of range for a rank-" << rank << " tensor";
  return success();
}

/// Casts convert each element: the shape stays.
static LogicalResult verifySameShape(Operation *op) {
  Type fromType = op->getOperand(0).getType(), toType = op->getResult(0).getType();
  if (isa<RankedTensorType>(fromType) != isa<RankedTensorType>(toType))
    return op->emitOpError("converts between a tensor and a scalar");
  if (!isa<RankedTensorType>(fromType))
    return success();
  ArrayRef<int64_t> from = shapeOf(op->getOperand(0)), to = shapeOf(op->getResult(0));
  if (from != to)
    return op->emitOpError("changes the shape from ") << shapeString(from) << " to " << shapeString(to);
  return success();
}

LogicalResult CastOp::verify() { return verifySameShape(*this); }

LogicalResult BitcastOp::verify() {
  if (failed(verifySameShape(*this)))
    return failure();
  Type from = getElementTypeOrSelf(getSrc()), to = getElementTypeOrSelf(getType());
  if (from.getIntOrFloatBitWidth() != to.getIntOrFloatBitWidth())
    return emitOpError("cannot reinterpret ") << from << " as " << to
                                              << ": the bit widths differ";
  return success();
}

LogicalResult ReduceOp::verify() {
  RankedTensorType source = getSrc().getType();
  if (failed(verifyAxes(*this, getAxes(), source.getRank())))
    return failure();
  if (source.getElementType() != getType().getElementType())
    return emitOpError("result element type ") << getType().getElementType()
                                               << " differs from the source's "
                                               << source.getElementType();
  SmallVector<int64_t> expected(source.getShape());
  for (int64_t axis : getAxes())
    expected[axis] = 1;
  return verifyResultShape(*this, expected);
}

//===----------------------------------------------------------------------===//
// Movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  int64_t from = getSrc().getType().getNumElements(), to = getType().getNumElements();
  if (from != to)
    return emitOpError("cannot reshape ") << from << " elements into " << to;
  return success();
}

LogicalResult PermuteOp::verify() {
  ArrayRef<int64_t> source = shapeOf(getSrc());
  SmallVector<int64_t> sorted(getOrder());
  llvm::sort(sorted);
  if (sorted != llvm::to_vector(llvm::seq<int64_t>(0, source.size())))
    return emitOpError("order ") << shapeString(getOrder()) << " is not a permutation of the "
                                 << source.size() << " dims";
  SmallVector<int64_t> expected;
  for (int64_t axis : getOrder())
    expected.push_back(source[axis]);
  return verifyResultShape(*this, expected);
}

LogicalResult ExpandOp::verify() {
  ArrayRef<int64_t> source = shapeOf(getSrc()), result = shapeOf(getResult());
  if (source.size() != result.size())
    return emitOpError("cannot change the rank from ") << source.size() << " to "
                                                      << result.size();
  for (auto [axis, from, to] : llvm::enumerate(source, result))
    if (from != to && from != 1)
      return emitOpError("cannot expand dim ") << axis << " of size " << from << " to " << to
                                               << ": only size-1 dims expand";
  return success();
}

LogicalResult PadOp::verify() {
  ArrayRef<int64_t> source = shapeOf(getSrc());
  if (failed(verifyArity(*this, "low", getLow().size(), source.size())) ||
      failed(verifyArity(*this, "high", getHigh().size(), source.size())))
    return failure();
  SmallVector<int64_t> expected;
  for (auto [axis, dim, low, high] : llvm::enumerate(source, getLow(), getHigh())) {
    if (low < 0 || high < 0)
      return emitOpError("padding of dim ") << axis << " is negative";
    expected.push_back(dim + low + high);
  }
  return verifyResultShape(*this, expected);
}

LogicalResult ShrinkOp::verify() {
  ArrayRef<int64_t> source = shapeOf(getSrc());
  if (failed(verifyArity(*this, "starts", getStarts().size(), source.size())) ||
      failed(verifyArity(*this, "ends", getEnds().size(), source.size())))
    return failure();
  SmallVector<int64_t> expected;
  for (auto [axis, dim, start, end] : llvm::enumerate(source, getStarts(), getEnds())) {
    if (start > end)
      return emitOpError("range [") << start << ", " << end << ") of dim " << axis
                                    << " starts after it ends";
    if (start < 0 || end > dim)
      return emitOpError("range [") << start << ", " << end << ") of dim " << axis
                                    << " is outside [0, " << dim << "]";
    expected.push_back(end - start);
  }
  return verifyResultShape(*this, expected);
}

LogicalResult FlipOp::verify() {
  if (failed(verifyAxes(*this, getAxes(), shapeOf(getSrc()).size())))
    return failure();
  return verifyResultShape(*this, shapeOf(getSrc()));
}

//===----------------------------------------------------------------------===//
// Index level
//===----------------------------------------------------------------------===//

LogicalResult RangeOp::verify() {
  int64_t size = static_cast<int64_t>(getSize());
  if (size < 0)
    return emitOpError("size ") << size << " is negative";
  return success();
}

static LogicalResult verifyIndexCount(Operation *op, Type buffer, size_t count) {
  int64_t rank = cast<ShapedType>(buffer).getRank();
  if (static_cast<int64_t>(count) != rank)
    return op->emitOpError("has ") << count << " indices for a rank-" << rank << " buffer";
  return success();
}

LogicalResult IndexOp::verify() {
  return verifyIndexCount(*this, getSrc().getType(), getIndices().size());
}

LogicalResult StoreOp::verify() {
  return verifyIndexCount(*this, getDst().getType(), getIndices().size());
}

LogicalResult RangeReduceOp::verify() {
  for (Value range : getRanges())
    if (!range.getDefiningOp<RangeOp>())
      return emitOpError("reduces over a value that is not a uop.range");
  return success();
}

LogicalResult BufferizeOp::verify() {
  ArrayRef<int64_t> shape = getType().getShape();
  if (failed(verifyIndexCount(*this, getType(), getRanges().size())))
    return failure();
  if (getSrc().getType() != getType().getElementType())
    return emitOpError("materializes ") << getSrc().getType() << " into a tensor of "
                                        << getType().getElementType();
  for (auto [axis, range, dim] : llvm::enumerate(getRanges(), shape)) {
    if (auto loop = range.getDefiningOp<RangeOp>()) {
      if (static_cast<int64_t>(loop.getSize()) != dim)
        return emitOpError("range of size ") << static_cast<int64_t>(loop.getSize()) << " for dim " << axis
                                             << " of size " << dim;
      continue;
    }
    if (dim != 1)
      return emitOpError("dim ") << axis << " of size " << dim << " needs a uop.range";
  }
  return success();
}
