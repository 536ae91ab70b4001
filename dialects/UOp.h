//===- UOp.h - the uop dialect ----------------------------------*- C++ -*-===//

#ifndef PYTC_UOP_H
#define PYTC_UOP_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "UOpDialect.h.inc"
#include "UOpEnums.h.inc"

namespace mlir::uop {
/// The i1 tensor with the shape of `type` (the result type of comparisons).
Type boolTensorLike(Type type);

/// Fails unless the byte size of every tensor and memref operand and result of
/// `op` fits in int64.
LogicalResult verifyByteSizes(Operation *op);

template <typename ConcreteType>
class BoundedByteSize : public OpTrait::TraitBase<ConcreteType, BoundedByteSize> {
public:
  static LogicalResult verifyTrait(Operation *op) { return verifyByteSizes(op); }
};
} // namespace mlir::uop

#define GET_OP_CLASSES
#include "UOpOps.h.inc"

#endif // PYTC_UOP_H
