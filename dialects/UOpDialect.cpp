//===- UOpDialect.cpp - uop dialect, parsing and verifiers ----------------===//

#include "UOp.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

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

/// Whether int64 counts the bytes of a static tensor or memref.
static bool byteSizeFits(ShapedType type) {
  ArrayRef<int64_t> shape = type.getShape();
  if (llvm::is_contained(shape, 0))
    return true;
  Type element = type.getElementType();
  int64_t bytes = element.isIntOrFloat() ? llvm::divideCeil(element.getIntOrFloatBitWidth(), 8) : 1;
  return llvm::none_of(shape, [&](int64_t dim) { return llvm::MulOverflow(bytes, dim, bytes); });
}

LogicalResult mlir::uop::verifyByteSizes(Operation *op) {
  auto check = [&](TypeRange types, StringRef role) -> LogicalResult {
    for (auto [i, type] : llvm::enumerate(types))
      if (auto shaped = dyn_cast<ShapedType>(type); shaped && shaped.hasStaticShape() && !byteSizeFits(shaped))
        return op->emitOpError() << role << " #" << i << " of type " << type
                                 << " has a byte size that overflows int64";
    return success();
  };
  return failure(failed(check(op->getOperandTypes(), "operand")) ||
                 failed(check(op->getResultTypes(), "result")));
}

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

static int64_t rangeId(Value range) {
  return static_cast<int64_t>(range.getDefiningOp<RangeOp>().getId());
}

/// The uop.range ops among `values` each appear once.
static LogicalResult verifyDistinctRanges(Operation *op, ValueRange values) {
  llvm::SmallDenseSet<Value> seen;
  for (Value value : values)
    if (value.getDefiningOp<RangeOp>() && !seen.insert(value).second)
      return op->emitOpError("range with id ") << rangeId(value) << " appears more than once";
  return success();
}

/// `ranges` are distinct uop.range ops; `use` says what the op does with them.
static LogicalResult verifyAllRanges(Operation *op, ValueRange ranges, StringRef use) {
  for (Value range : ranges)
    if (!range.getDefiningOp<RangeOp>())
      return op->emitOpError() << use << " a value that is not a uop.range";
  return verifyDistinctRanges(op, ranges);
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
    int64_t size;
    if (llvm::AddOverflow(dim, low, size) || llvm::AddOverflow(size, high, size))
      return emitOpError("padding dim ") << axis << " of size " << dim << " by " << low << " and "
                                         << high << " overflows int64";
    expected.push_back(size);
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

/// One index per dim; an index that is a uop.range or a constant stays inside
/// its (non-empty) dim.
static LogicalResult verifyIndices(Operation *op, Type buffer, ValueRange indices) {
  if (failed(verifyIndexCount(op, buffer, indices.size())))
    return failure();
  for (auto [axis, index, dim] : llvm::enumerate(indices, cast<ShapedType>(buffer).getShape())) {
    if (auto range = index.getDefiningOp<RangeOp>()) {
      if (static_cast<int64_t>(range.getSize()) > dim)
        return op->emitOpError("range of size ") << static_cast<int64_t>(range.getSize())
                                                 << " indexes dim " << axis << " of size " << dim;
      continue;
    }
    APInt value;
    if (dim > 0 && matchPattern(index, m_ConstantInt(&value)) && (value.isNegative() || value.sge(dim)))
      return op->emitOpError("index ") << value.getSExtValue() << " is outside dim " << axis
                                       << " of size " << dim;
  }
  return success();
}

LogicalResult IndexOp::verify() {
  // A guarded read may index past the buffer where the guard is false (padding).
  if (getValid())
    return verifyIndexCount(*this, getSrc().getType(), getIndices().size());
  return verifyIndices(*this, getSrc().getType(), getIndices());
}

LogicalResult StoreOp::verify() {
  if (failed(verifyIndices(*this, getDst().getType(), getIndices())))
    return failure();
  return verifyDistinctRanges(*this, getIndices());
}

LogicalResult EndOp::verify() {
  if (failed(verifyAllRanges(*this, getRanges(), "closes")))
    return failure();
  auto store = getSrc().getDefiningOp<StoreOp>();
  if (!store)
    return emitOpError("closes the loops of a value that is not a uop.store");
  ValueRange indices = store.getIndices(), ranges = getRanges();
  for (Value range : ranges)
    if (!llvm::is_contained(indices, range))
      return emitOpError("closes range with id ") << rangeId(range) << ", which does not index the store";
  for (Value index : indices)
    if (index.getDefiningOp<RangeOp>() && !llvm::is_contained(ranges, index))
      return emitOpError("leaves the store's range with id ") << rangeId(index) << " open";
  return success();
}

LogicalResult RangeReduceOp::verify() {
  if (failed(verifyAllRanges(*this, getRanges(), "reduces over")))
    return failure();
  for (Value range : getRanges())
    if (range.getDefiningOp<RangeOp>().getKind() != RangeKind::reduce)
      return emitOpError("reduces over the loop range with id ") << rangeId(range);
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
    if (!matchPattern(range, m_Zero()))
      return emitOpError("dim ") << axis << " of size 1 needs a uop.range or the constant 0";
  }
  return verifyDistinctRanges(*this, getRanges());
}

//===----------------------------------------------------------------------===//
// launch
//===----------------------------------------------------------------------===//

LogicalResult LaunchOp::verify() {
  if (getArgs().empty())
    return emitOpError("needs at least the buffer the kernel writes");
  // A kernel's buffers are noalias: the one it writes is none of those it reads.
  if (llvm::is_contained(getArgs().drop_front(), getArgs().front()))
    return emitOpError("reads the buffer it writes (argument #0)");
  return success();
}

LogicalResult TransferOp::verify() {
  if (getDst() == getSrc())
    return emitOpError("copies a buffer into itself");
  return success();
}

/// The parameter type of a lowered kernel for a launched buffer: its storage
/// (signless, i1 as i8; an empty buffer as 1-D).
static MemRefType storageType(MemRefType buffer) {
  Type element = buffer.getElementType();
  if (auto integer = dyn_cast<IntegerType>(element))
    element = IntegerType::get(buffer.getContext(), std::max(8u, integer.getWidth()));
  if (buffer.getNumElements() == 0)
    return MemRefType::get({0}, element);
  return MemRefType::get(buffer.getShape(), element);
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto kernel = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getKernelAttr());
  if (!kernel)
    return emitOpError("kernel ") << getKernelAttr() << " is not a func.func of the enclosing symbol table";
  FunctionType signature = kernel.getFunctionType();
  if (signature.getNumResults())
    return emitOpError("kernel ") << getKernelAttr() << " returns values";
  // A lowered kernel takes each buffer as its storage, then its extent [begin, end).
  bool lowered = kernel->hasAttr("pytc.extent");
  SmallVector<Type> expected;
  for (Value arg : getArgs())
    expected.push_back(lowered ? storageType(cast<MemRefType>(arg.getType())) : arg.getType());
  if (lowered)
    expected.append(2, IndexType::get(getContext()));
  if (signature.getNumInputs() != expected.size())
    return emitOpError("passes ") << getArgs().size() << " buffers to kernel " << getKernelAttr()
                                  << ", which takes " << signature.getNumInputs() << " arguments"
                                  << (lowered ? " (its buffers, then the 2 of its extent)" : "");
  for (auto [i, param, type] : llvm::enumerate(signature.getInputs(), expected))
    if (param != type)
      return emitOpError("passes ") << type << " as argument #" << i << " of kernel " << getKernelAttr()
                                    << ", which takes " << param;
  return success();
}
