//===- UOpOps.td - the ops of the uop dialect --------------*- tablegen -*-===//

#ifndef UOP_OPS
#define UOP_OPS

include "UOpDialect.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def UOp_Buffer : AnyTypeOf<[UOp_Tensor, UOp_MemRef], "static tensor or memref">;

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
    %s = uop.const 0.0 : f32          // a scalar, at index level
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value, OptionalAttr<StrAttr>:$device);
  let results = (outs UOp_Value:$result);
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

def UOp_NegOp : UOp_UnaryOp<"neg", UOp_NumericValue> { let summary = "-x"; }
def UOp_Exp2Op : UOp_UnaryOp<"exp2", UOp_FloatValue> { let summary = "2^x"; }
def UOp_Log2Op : UOp_UnaryOp<"log2", UOp_FloatValue> { let summary = "log2(x)"; }
def UOp_SinOp : UOp_UnaryOp<"sin", UOp_FloatValue> { let summary = "sin(x)"; }
def UOp_CosOp : UOp_UnaryOp<"cos", UOp_FloatValue> { let summary = "cos(x)"; }
def UOp_ExpOp : UOp_UnaryOp<"exp", UOp_FloatValue> { let summary = "e^x"; }
def UOp_LogOp : UOp_UnaryOp<"log", UOp_FloatValue> { let summary = "ln(x), the natural logarithm"; }
def UOp_TanhOp : UOp_UnaryOp<"tanh", UOp_FloatValue> { let summary = "tanh(x), the hyperbolic tangent"; }
def UOp_SqrtOp : UOp_UnaryOp<"sqrt", UOp_FloatValue> { let summary = "sqrt(x)"; }
def UOp_RecipOp : UOp_UnaryOp<"recip", UOp_FloatValue> { let summary = "1/x"; }
def UOp_TruncOp : UOp_UnaryOp<"trunc", UOp_FloatValue> {
  let summary = "round toward zero";
}

class UOp_BinaryOp<string mnemonic, Type type, list<Trait> traits = []>
    : UOp_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType], traits)> {
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasFolder = 1;
}

def UOp_AddOp : UOp_BinaryOp<"add", UOp_NumericValue, [Commutative]> { let summary = "x + y"; }
def UOp_MulOp : UOp_BinaryOp<"mul", UOp_NumericValue, [Commutative]> { let summary = "x * y"; }
def UOp_MaxOp : UOp_BinaryOp<"max", UOp_Value, [Commutative]> { let summary = "max(x, y)"; }
def UOp_IdivOp : UOp_BinaryOp<"idiv", UOp_IntNoBoolValue> {
  let summary = "integer division, rounding toward zero";
}
def UOp_ModOp : UOp_BinaryOp<"mod", UOp_IntNoBoolValue> {
  let summary = "remainder of `idiv` (sign of the dividend)";
}
def UOp_AndOp : UOp_BinaryOp<"and", UOp_IntValue, [Commutative]> { let summary = "bitwise and"; }
def UOp_OrOp : UOp_BinaryOp<"or", UOp_IntValue, [Commutative]> { let summary = "bitwise or"; }
def UOp_XorOp : UOp_BinaryOp<"xor", UOp_IntValue, [Commutative]> { let summary = "bitwise xor"; }
def UOp_ShlOp : UOp_BinaryOp<"shl", UOp_IntNoBoolValue> { let summary = "x << y"; }
def UOp_ShrOp : UOp_BinaryOp<"shr", UOp_IntNoBoolValue> {
  let summary = "x >> y (arithmetic for signed, logical for unsigned)";
}
def UOp_PowOp : UOp_BinaryOp<"pow", UOp_FloatValue> { let summary = "x ** y"; }

class UOp_CompareOp<string mnemonic>
    : UOp_Op<mnemonic, [Pure, AllTypesMatch<["lhs", "rhs"]>, BoolShapeOf<"lhs">]> {
  let arguments = (ins UOp_Value:$lhs, UOp_Value:$rhs);
  let results = (outs UOp_BoolValue:$result);
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
  let arguments = (ins UOp_BoolValue:$cond, UOp_Value:$lhs, UOp_Value:$rhs);
  let results = (outs UOp_Value:$result);
  let assemblyFormat = "$cond `,` $lhs `,` $rhs attr-dict `:` type($lhs)";
  let hasFolder = 1;
}

def UOp_MulaccOp : UOp_Op<"mulacc", [Pure, SameOperandsAndResultType]> {
  let summary = "a * b + c";
  let arguments = (ins UOp_NumericValue:$a, UOp_NumericValue:$b, UOp_NumericValue:$c);
  let results = (outs UOp_NumericValue:$result);
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
  let arguments = (ins UOp_Value:$src);
  let results = (outs UOp_Value:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def UOp_BitcastOp : UOp_Op<"bitcast", [Pure]> {
  let summary = "reinterpret the bits of each element as another dtype";
  let arguments = (ins UOp_Value:$src);
  let results = (outs UOp_Value:$result);
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
    MemoryEffects<[MemWrite]>]> {
  let summary = "write `value` into the buffer of `target`";
  let arguments = (ins UOp_Tensor:$target, UOp_Tensor:$value);
  let results = (outs UOp_Tensor:$result);
  let assemblyFormat = "$target `,` $value attr-dict `:` type($result)";
}

def UOp_SinkOp : UOp_Op<"sink", [MemoryEffects<[MemWrite]>]> {
  let summary = "the outputs of a graph: every source is realized";
  let arguments = (ins Variadic<UOp_Buffer>:$srcs);
  let assemblyFormat = "($srcs^ `:` type($srcs))? attr-dict";
}

//===----------------------------------------------------------------------===//
// Index level: ranges, element reads, range reductions and materialization
// (introduced by pytc-rangeify), then buffers, stores and loop ends
// (introduced by pytc-bufferize).
//===----------------------------------------------------------------------===//

def UOp_RangeOp : UOp_Op<"range", [Pure]> {
  let summary = "a loop index over [0, size) (empty for size 0); `id` tells ranges of the same size apart";
  let description = [{
    ```mlir
    %i = uop.range loop 16 id 0
    %k = uop.range reduce 32 id 1
    ```
  }];
  let arguments = (ins UOp_RangeKind:$kind, I64Attr:$size, I64Attr:$id);
  let results = (outs Index:$result);
  let assemblyFormat = "$kind $size `id` $id attr-dict";
  let hasVerifier = 1;
}

def UOp_IndexOp : UOp_Op<"index", [Pure, AttrSizedOperandSegments,
    TypesMatchWith<"result is the element type of the source", "src", "result",
                   "::mlir::getElementTypeOrSelf($_self)">]> {
  let summary = "one element of a tensor or buffer; 0 where `valid` is false";
  let description = [{
    The element at `indices`. With `if %valid`, the read happens only where
    `%valid` holds and the result is 0 elsewhere: out-of-range indices (padding)
    are never read.
    ```mlir
    %x = uop.index %t[%i, %j] : tensor<4x4xf32>
    %y = uop.index %t[%i, %j] if %inside : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins UOp_Buffer:$src, Variadic<Index>:$indices, Optional<I1>:$valid);
  let results = (outs UOp_Element:$result);
  let assemblyFormat = "$src `[` $indices `]` (`if` $valid^)? attr-dict `:` type($src)";
  let hasVerifier = 1;
}

def UOp_RangeReduceOp : UOp_Op<"range_reduce", [Pure, AllTypesMatch<["src", "result"]>]> {
  let summary = "combine `src` over every value of the reduce ranges";
  let description = [{
    ```mlir
    %s = uop.range_reduce add %x over (%k) : f32
    ```
  }];
  let arguments = (ins UOp_ReduceKind:$kind, UOp_Element:$src, Variadic<Index>:$ranges);
  let results = (outs UOp_Element:$result);
  let assemblyFormat = "$kind $src `over` `(` $ranges `)` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def UOp_BufferizeOp : UOp_Op<"bufferize", [Pure]> {
  let summary = "materialize `src` over its ranges into a tensor";
  let description = [{
    A materialization point: `src`, computed for every value of `ranges`
    (one per dim; the constant 0 for a size-1 dim), becomes a tensor that
    consumers read with `uop.index`. `reason` says why rangeify put it here;
    pytc-fuse removes those whose recompute is cheap.
    ```mlir
    %t = uop.bufferize %v over (%i, %j) {reason = "output"} : f32 -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins UOp_Element:$src, Variadic<Index>:$ranges, StrAttr:$reason);
  let results = (outs UOp_Tensor:$result);
  let assemblyFormat = "$src `over` `(` $ranges `)` attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def UOp_BufferOp : UOp_Op<"buffer", [MemoryEffects<[MemAlloc]>]> {
  let summary = "a new device buffer";
  let results = (outs UOp_MemRef:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def UOp_StoreOp : UOp_Op<"store", [AllTypesMatch<["dst", "result"]>,
    TypesMatchWith<"value is the element type of the buffer", "dst", "value",
                   "::mlir::getElementTypeOrSelf($_self)">,
    MemoryEffects<[MemWrite]>]> {
  let summary = "write `value` at `indices` of `dst`; the result is `dst` being written";
  let arguments = (ins UOp_Element:$value, UOp_MemRef:$dst, Variadic<Index>:$indices);
  let results = (outs UOp_MemRef:$result);
  let assemblyFormat = "$value `,` $dst `[` $indices `]` attr-dict `:` type($dst)";
  let hasVerifier = 1;
}

def UOp_EndOp : UOp_Op<"end", [AllTypesMatch<["src", "result"]>,
    MemoryEffects<[MemWrite]>]> {
  let summary = "close the ranges of a store: the result is the buffer, fully written";
  let description = [{
    ```mlir
    %w = uop.store %v, %buf[%i] : memref<16xf32>
    %done = uop.end %w over (%i) : memref<16xf32>
    ```
  }];
  let arguments = (ins UOp_MemRef:$src, Variadic<Index>:$ranges);
  let results = (outs UOp_MemRef:$result);
  let assemblyFormat = "$src `over` `(` $ranges `)` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def UOp_LaunchOp : UOp_Op<"launch", [MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "run the kernel function `kernel` on buffers";
  let description = [{
    The first buffer is the one the kernel writes (the first `pytc.writes`
    ones for a kernel of several stores, pytc-merge-kernels). `kernel` is a `func.func`
    taking the buffers' types; once lowered (`pytc.extent`), it takes each
    buffer as its storage (i1 as bytes, an empty buffer as 1-D) and then the
    [begin, end) of its parallel extent as two `index` arguments.
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<UOp_MemRef>:$args);
  let assemblyFormat = "$kernel `(` $args `)` attr-dict `:` type($args)";
  let hasVerifier = 1;
}

def UOp_TransferOp : UOp_Op<"transfer", [AllTypesMatch<["dst", "src", "result"]>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "copy all of buffer `src` into buffer `dst`, on another device";
  let description = [{
    A `uop.copy` between devices once bufferized: the runtime moves the bytes
    (a copy queue, or through the host) rather than launching a kernel. The
    result is `dst`, fully written. Which device a buffer is on: the
    `uop.device` of its `uop.buffer` or graph argument (none: the graph's own).
    ```mlir
    %b = uop.buffer {uop.device = "AMD"} : memref<16xf32>
    %t = uop.transfer %a into %b : memref<16xf32>
    ```
  }];
  let arguments = (ins UOp_MemRef:$dst, UOp_MemRef:$src);
  let results = (outs UOp_MemRef:$result);
  let assemblyFormat = "$src `into` $dst attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // UOP_OPS
