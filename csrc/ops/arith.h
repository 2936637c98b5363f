// Elementwise op builders: set, unary, binary, where, cast. Inputs may be
// tensors or scalars; the result is a tensor when any input is one. Type
// promotion follows PyTorch (ops/type_promotion.h); Half and BFloat16 are
// computed in Float and cast back.
#pragma once

#include <ir/interface_nodes.h>

namespace fuser {

// A copy of `tv` (LoadStoreOp Set).
TensorView* set(TensorView* tv);
// A copy of `tv` that always ends a segment: what reads the result runs in
// another segment (kernel) than what computes `tv` (doc/design.md §6).
TensorView* segment_set(TensorView* tv);

Val* castOp(DataType dtype, Val* val);
TensorView* castOp(DataType dtype, TensorView* tv);
// PyTorch-style spelling.
inline TensorView* cast(TensorView* tv, DataType dtype) {
  return castOp(dtype, tv);
}
inline Val* cast(Val* val, DataType dtype) {
  return castOp(dtype, val);
}

Val* unaryOp(UnaryOpType op, Val* in);
TensorView* unaryOp(UnaryOpType op, TensorView* in);

// One builder per row of ir/unary_ops.def but the Internal ones, of the
// row's name: Val* neg(Val*), TensorView* neg(TensorView*), ... (the
// table says what each computes and the type of its result).
#define FUSER_DECLARE_UNARY(name) \
  Val* name(Val* in);             \
  TensorView* name(TensorView* in);
#define FUSER_DECLARE_UNARY_Internal(name)
#define FUSER_DECLARE_UNARY_Float FUSER_DECLARE_UNARY
#define FUSER_DECLARE_UNARY_Rounding FUSER_DECLARE_UNARY
#define FUSER_DECLARE_UNARY_Predicate FUSER_DECLARE_UNARY
#define FUSER_DECLARE_UNARY_Other FUSER_DECLARE_UNARY
#define FUSER_UNARY_OP(e, name, result, complex) \
  FUSER_DECLARE_UNARY_##result(name)
#include <ir/unary_ops.def>
#undef FUSER_UNARY_OP
#undef FUSER_DECLARE_UNARY_Internal
#undef FUSER_DECLARE_UNARY_Float
#undef FUSER_DECLARE_UNARY_Rounding
#undef FUSER_DECLARE_UNARY_Predicate
#undef FUSER_DECLARE_UNARY_Other
#undef FUSER_DECLARE_UNARY

Val* binaryOp(BinaryOpType op, Val* lhs, Val* rhs);

// One builder per row of ir/binary_ops.def but the Internal ones, of the
// row's name, for each mix of tensor and scalar operands: Val* add(Val*,
// Val*), TensorView* add(TensorView*, Val*), ... (the table says what each
// computes and the type of its result).
#define FUSER_DECLARE_BINARY(name)                    \
  Val* name(Val* lhs, Val* rhs);                      \
  TensorView* name(TensorView* lhs, TensorView* rhs); \
  TensorView* name(TensorView* lhs, Val* rhs);        \
  TensorView* name(Val* lhs, TensorView* rhs);
#define FUSER_DECLARE_BINARY_Internal(name)
#define FUSER_DECLARE_BINARY_Promoted FUSER_DECLARE_BINARY
#define FUSER_DECLARE_BINARY_Float FUSER_DECLARE_BINARY
#define FUSER_DECLARE_BINARY_Compare FUSER_DECLARE_BINARY
#define FUSER_DECLARE_BINARY_Logical FUSER_DECLARE_BINARY
#define FUSER_DECLARE_BINARY_Bits FUSER_DECLARE_BINARY
#define FUSER_DECLARE_BINARY_Integer FUSER_DECLARE_BINARY
#define FUSER_DECLARE_BINARY_FloatOnly FUSER_DECLARE_BINARY
#define FUSER_BINARY_OP(e, name, types, complex, kernel, host, aten) \
  FUSER_DECLARE_BINARY_##types(name)
#include <ir/binary_ops.def>
#undef FUSER_BINARY_OP
#undef FUSER_DECLARE_BINARY_Internal
#undef FUSER_DECLARE_BINARY_Promoted
#undef FUSER_DECLARE_BINARY_Float
#undef FUSER_DECLARE_BINARY_Compare
#undef FUSER_DECLARE_BINARY_Logical
#undef FUSER_DECLARE_BINARY_Bits
#undef FUSER_DECLARE_BINARY_Integer
#undef FUSER_DECLARE_BINARY_FloatOnly
#undef FUSER_DECLARE_BINARY

// torch.div(a, b, rounding_mode="trunc"): integers divide as C's `/`
// (nvFuser's div of integers), floats give trunc(a / b).
Val* truncDiv(Val* lhs, Val* rhs);

// Compositions of the elementwise ops above, with PyTorch's semantics.
// torch.clamp: minimum(maximum(x, min_value), max_value); a null bound is
// absent (at least one must be given). NaN stays NaN.
Val* clamp(Val* x, Val* min_value, Val* max_value);
// torch.addcmul: x + value * t1 * t2.
Val* addcmul(Val* x, Val* t1, Val* t2, Val* value);
// torch.lerp: start + weight * (end - start); weight a tensor or a scalar.
Val* lerp(Val* start, Val* end, Val* weight);

// where(condition, a, b): a where condition holds, else b.
Val* where(Val* condition, Val* a, Val* b);
TensorView* where(TensorView* condition, Val* a, Val* b);

} // namespace fuser
