//===- UOpOps.td - the ops of the uop dialect --------------*- tablegen -*-===//

#ifndef UOP_OPS
#define UOP_OPS

include "UOpDialect.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class BoolShapeOf<string name> : TypesMatchWith<
    "result is an i1 tensor with the shape of `" # name # "`", name, "result",
    "::mlir::uop::boolTensorLike($_self)">;

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

def UOp_ConstOp : UOp_Op<"const", [ConstantLike, Pure]> {
  let summary = "a tensor filled with one scalar";
  let description = [{
    ```mlir
    %c = uop.const 1.5 : tensor<4x4xf32>
    %t = uop.const true : tensor<8xi1>
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value, OptionalAttr<StrAttr>:$device);
  let results = (outs UOp_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasFolder = 1;
}

def UOp_IotaOp : UOp_Op<"iota", [Pure]> {
  let summary = "each element holds its index along `axis`";
  let description = [{
    ```mlir
    %i = uop.iota 1 : tensor<2x3xi32>   // [[0, 1, 2], [0, 1, 2]]
    ```
  }];
  let arguments = (ins I64Attr:$axis, OptionalAttr<StrAttr>:$device);
  let results = (outs UOp_NumericTensor:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class UOp_UnaryOp<string mnemonic, Type type>
    : UOp_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let arguments = (ins type:$src);
  let results = (outs type:$result);
  let assemblyFormat = "$src attr-dict `:` type($result)";
  let hasFolder = 1;
}

def UOp_NegOp : UOp_UnaryOp<"neg", UOp_NumericTensor> { let summary = "-x"; }
def UOp_Exp2Op : UOp_UnaryOp<"exp2", UOp_FloatTensor> { let summary = "2^x"; }
def UOp_Log2Op : UOp_UnaryOp<"log2", UOp_FloatTensor> { let summary = "log2(x)"; }
def UOp_SinOp : UOp_UnaryOp<"sin", UOp_FloatTensor> { let summary = "sin(x)"; }
def UOp_SqrtOp : UOp_UnaryOp<"sqrt", UOp_FloatTensor> { let summary = "sqrt(x)"; }
def UOp_RecipOp : UOp_UnaryOp<"recip", UOp_FloatTensor> { let summary = "1/x"; }
def UOp_TruncOp : UOp_UnaryOp<"trunc", UOp_FloatTensor> {
  let summary = "round toward zero";
}

class UOp_BinaryOp<string mnemonic, Type type, list<Trait> traits = []>
    : UOp_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType], traits)> {
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasFolder = 1;
}

def UOp_AddOp : UOp_BinaryOp<"add", UOp_NumericTensor, [Commutative]> { let summary = "x + y"; }
def UOp_MulOp : UOp_BinaryOp<"mul", UOp_NumericTensor, [Commutative]> { let summary = "x * y"; }
def UOp_MaxOp : UOp_BinaryOp<"max", UOp_Tensor, [Commutative]> { let summary = "max(x, y)"; }
def UOp_IdivOp : UOp_BinaryOp<"idiv", UOp_IntNoBoolTensor> {
  let summary = "integer division, rounding toward zero";
}
def UOp_ModOp : UOp_BinaryOp<"mod", UOp_IntNoBoolTensor> {
  let summary = "remainder of `idiv` (sign of the dividend)";
}
def UOp_AndOp : UOp_BinaryOp<"and", UOp_IntTensor, [Commutative]> { let summary = "bitwise and"; }
def UOp_OrOp : UOp_BinaryOp<"or", UOp_IntTensor, [Commutative]> { let summary = "bitwise or"; }
def UOp_XorOp : UOp_BinaryOp<"xor", UOp_IntTensor, [Commutative]> { let summary = "bitwise xor"; }
def UOp_ShlOp : UOp_BinaryOp<"shl", UOp_IntNoBoolTensor> { let summary = "x << y"; }
def UOp_ShrOp : UOp_BinaryOp<"shr", UOp_IntNoBoolTensor> {
  let summary = "x >> y (arithmetic for signed, logical for unsigned)";
}
def UOp_PowOp : UOp_BinaryOp<"pow", UOp_FloatTensor> { let summary = "x ** y"; }

class UOp_CompareOp<string mnemonic>
    : UOp_Op<mnemonic, [Pure, AllTypesMatch<["lhs", "rhs"]>, BoolShapeOf<"lhs">]> {
  let arguments = (ins UOp_Tensor:$lhs, UOp_Tensor:$rhs);
  let results = (outs UOp_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs)";
  let hasFolder = 1;
}

def UOp_CmpltOp : UOp_CompareOp<"cmplt"> { let summary = "x < y"; }
def UOp_CmpneOp : UOp_CompareOp<"cmpne"> { let summary = "x != y"; }
def UOp_CmpeqOp : UOp_CompareOp<"cmpeq"> { let summary = "x == y"; }

def UOp_WhereOp : UOp_Op<"where", [Pure,
    AllTypesMatch<["lhs", "rhs", "result"]>,
    TypesMatchWith<"condition is an i1 tensor with the shape of the values",
                   "lhs", "cond", "::mlir::uop::boolTensorLike($_self)">]> {
  let summary = "cond ? x : y";
  let arguments = (ins UOp_BoolTensor:$cond, UOp_Tensor:$lhs, UOp_Tensor:$rhs);
  let results = (outs UOp_Tensor:$result);
  let assemblyFormat = "$cond `,` $lhs `,` $rhs attr-dict `:` type($lhs)";
  let hasFolder = 1;
}

def UOp_MulaccOp : UOp_Op<"mulacc", [Pure, SameOperandsAndResultType]> {
  let summary = "a * b + c";
  let arguments = (ins UOp_NumericTensor:$a, UOp_NumericTensor:$b, UOp_NumericTensor:$c);
  let results = (outs UOp_NumericTensor:$result);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($result)";
  let hasFolder = 1;
}

def UOp_CastOp : UOp_Op<"cast", [Pure]> {
  let summary = "convert each element to another dtype";
  let description = [{
    Floats to integers round toward zero; anything to `i1` is `x != 0`.
    ```mlir
    %i = uop.cast %x : tensor<4xf32> to tensor<4xi32>
    ```
  }];
  let arguments = (ins UOp_Tensor:$src);
  let results = (outs UOp_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def UOp_BitcastOp : UOp_Op<"bitcast", [Pure]> {
  let summary = "reinterpret the bits of each element as another dtype";
  let arguments = (ins UOp_Tensor:$src);
  let results = (outs UOp_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reduction
//===----------------------------------------------------------------------===//

def UOp_ReduceOp : UOp_Op<"reduce", [Pure]> {
  let summary = "reduce over axes, keeping each reduced dim as size 1";
  let description = [{
    ```mlir
    %s = uop.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins UOp_ReduceKind:$kind, UOp_Tensor:$src, DenseI64ArrayAttr:$axes);
  let results = (outs UOp_Tensor:$result);
  let assemblyFormat = "$kind $src $axes attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Movement
//===----------------------------------------------------------------------===//

class UOp_MovementOp<string mnemonic, dag extra, string format>
    : UOp_Op<mnemonic, [Pure, AllElementTypesMatch<["src", "result"]>]> {
  let arguments = !con((ins UOp_Tensor:$src), extra);
  let results = (outs UOp_Tensor:$result);
  let assemblyFormat = "$src " # format # " attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def UOp_ReshapeOp : UOp_MovementOp<"reshape", (ins), ""> {
  let summary = "same elements in row-major order, new shape";
}
def UOp_PermuteOp : UOp_MovementOp<"permute", (ins DenseI64ArrayAttr:$order), "$order"> {
  let summary = "result dim i is source dim order[i]";
}
def UOp_ExpandOp : UOp_MovementOp<"expand", (ins), ""> {
  let summary = "broadcast size-1 dims to a larger size";
}
def UOp_PadOp : UOp_MovementOp<"pad",
    (ins DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high), "`low` $low `high` $high"> {
  let summary = "add zeros before (`low`) and after (`high`) each dim";
}
def UOp_ShrinkOp : UOp_MovementOp<"shrink",
    (ins DenseI64ArrayAttr:$starts, DenseI64ArrayAttr:$ends), "$starts `to` $ends"> {
  let summary = "keep [start, end) of each dim";
  let hasCanonicalizer = 1;
}
def UOp_FlipOp : UOp_MovementOp<"flip", (ins DenseI64ArrayAttr:$axes), "$axes"> {
  let summary = "reverse the listed dims";
}

//===----------------------------------------------------------------------===//
// Buffers and devices
//===----------------------------------------------------------------------===//

def UOp_ContiguousOp : UOp_Op<"contiguous", [Pure, SameOperandsAndResultType]> {
  let summary = "force the value into its own buffer";
  let arguments = (ins UOp_Tensor:$src);
  let results = (outs UOp_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($result)";
}

def UOp_CopyOp : UOp_Op<"copy", [Pure, SameOperandsAndResultType]> {
  let summary = "the value on another device";
  let arguments = (ins UOp_Tensor:$src, StrAttr:$device);
  let results = (outs UOp_Tensor:$result);
  let assemblyFormat = "$src `to` $device attr-dict `:` type($result)";
}

def UOp_AssignOp : UOp_Op<"assign", [SameOperandsAndResultType,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "write `value` into the buffer of `target`";
  let arguments = (ins UOp_Tensor:$target, UOp_Tensor:$value);
  let results = (outs UOp_Tensor:$result);
  let assemblyFormat = "$target `,` $value attr-dict `:` type($result)";
}

def UOp_SinkOp : UOp_Op<"sink", [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "the outputs of a graph: every source is realized";
  let arguments = (ins Variadic<UOp_Tensor>:$srcs);
  let assemblyFormat = "($srcs^ `:` type($srcs))? attr-dict";
}

#endif // UOP_OPS
