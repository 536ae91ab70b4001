//===- CAPI.cpp - load the uop dialect into a context from C --------------===//

#include "UOp.h"

#include "mlir-c/IR.h"
#include "mlir/CAPI/IR.h"

/// Loads the uop dialect into the context; called from Python with the
/// context's C pointer.
extern "C" __attribute__((visibility("default"))) void
pytcLoadUOpDialect(MlirContext context) {
  unwrap(context)->getOrLoadDialect<mlir::uop::UOpDialect>();
}
