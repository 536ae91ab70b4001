//===- UOpDialect.td - the uop dialect, types and enums ----*- tablegen -*-===//
//
// The `uop` dialect models tinygrad's UOps at tensor level: every value is a
// builtin ranked tensor and every op is one node of the lazy graph.
//
//===----------------------------------------------------------------------===//

#ifndef UOP_DIALECT
#define UOP_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def UOp_Dialect : Dialect {
  let name = "uop";
  let cppNamespace = "::mlir::uop";
  let summary = "tinygrad-style tensor ops";
  let description = [{
    Ops of a lazy tensor graph: sources (`const`, `iota`), elementwise math,
    `reduce`, movement ops (`reshape`, `permute`, `expand`, `pad`, `shrink`,
    `flip`) and the ops that force or move buffers (`contiguous`, `copy`,
    `assign`, `sink`). Values are builtin ranked tensors; placement on a device
    is the `device` attribute of the sources and of `copy`.
  }];
  let hasConstantMaterializer = 1;
}

// Every tensor and memref of a uop op has a byte size that int64 can count.
def UOp_BoundedByteSize : NativeOpTrait<"BoundedByteSize"> {
  let cppNamespace = "::mlir::uop";
}

class UOp_Op<string mnemonic, list<Trait> traits = []>
    : Op<UOp_Dialect, mnemonic, !listconcat(traits, [UOp_BoundedByteSize])>;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

def UOp_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def UOp_Int : AnyTypeOf<[I1, I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
def UOp_IntNoBool : AnyTypeOf<[I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
def UOp_Element : AnyTypeOf<[UOp_Float, UOp_Int]>;
def UOp_Numeric : AnyTypeOf<[UOp_Float, UOp_IntNoBool]>;

def UOp_Tensor : StaticShapeTensorOf<[UOp_Element]>;
def UOp_NumericTensor : StaticShapeTensorOf<[UOp_Numeric]>;
def UOp_FloatTensor : StaticShapeTensorOf<[UOp_Float]>;
def UOp_IntTensor : StaticShapeTensorOf<[UOp_Int]>;
def UOp_IntNoBoolTensor : StaticShapeTensorOf<[UOp_IntNoBool]>;
def UOp_BoolTensor : StaticShapeTensorOf<[I1]>;

// Buffers (after pytc-bufferize): static, row-major, in the default memory space.
def UOp_MemRef : ConfinedType<MemRefOf<[UOp_Element]>, [HasStaticShapePred,
    CPred<"::llvm::cast<::mlir::MemRefType>($_self).getLayout().isIdentity()">,
    CPred<"!::llvm::cast<::mlir::MemRefType>($_self).getMemorySpace()">],
    "statically shaped row-major memref of a uop element type", "::mlir::MemRefType">;

// Elementwise ops take tensors (tensor level) or scalars (index level, after
// pytc-rangeify, where a value is one element computed at its ranges).
def UOp_Value : AnyTypeOf<[UOp_Tensor, UOp_Element], "tensor or scalar of a uop element type">;
def UOp_NumericValue : AnyTypeOf<[UOp_NumericTensor, UOp_Numeric], "numeric (not i1) tensor or scalar">;
def UOp_FloatValue : AnyTypeOf<[UOp_FloatTensor, UOp_Float], "float (f16, bf16, f32, f64) tensor or scalar">;
def UOp_IntValue : AnyTypeOf<[UOp_IntTensor, UOp_Int], "integer or i1 tensor or scalar">;
def UOp_IntNoBoolValue : AnyTypeOf<[UOp_IntNoBoolTensor, UOp_IntNoBool], "integer (not i1) tensor or scalar">;
def UOp_BoolValue : AnyTypeOf<[UOp_BoolTensor, I1], "i1 tensor or scalar">;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def UOp_ReduceAdd : I32EnumAttrCase<"add", 0>;
def UOp_ReduceMax : I32EnumAttrCase<"max", 1>;
def UOp_ReduceMul : I32EnumAttrCase<"mul", 2>;
def UOp_ReduceKind : I32EnumAttr<"ReduceKind", "reduction combiner",
    [UOp_ReduceAdd, UOp_ReduceMax, UOp_ReduceMul]> {
  let cppNamespace = "::mlir::uop";
}

def UOp_RangeLoop : I32EnumAttrCase<"loop", 0>;
def UOp_RangeReduce : I32EnumAttrCase<"reduce", 1>;
def UOp_RangeKind : I32EnumAttr<"RangeKind", "what a range iterates for",
    [UOp_RangeLoop, UOp_RangeReduce]> {
  let cppNamespace = "::mlir::uop";
}

#endif // UOP_DIALECT
