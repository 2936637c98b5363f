// Helpers shared by the op builders.
#pragma once

#include <ir/interface_nodes.h>

#include <vector>

namespace fuser::ops {

// The Fusion ops add to; a user error naming `op` when no FusionGuard is
// active.
Fusion* activeFusion(const char* op);

// A user error naming `op` and `what` ("the tensor", "the index") unless
// `tv` is non-null and belongs to the active Fusion.
void checkTensorOperand(TensorView* tv, const char* op, const char* what);

// `v` when it is an integer scalar; else a user error naming `op` and
// `what`.
Val* integerScalar(Val* v, const char* op, const char* what);

// `dim` checked against the rank of `tv` (without reduction axes) and made
// non-negative, counting from the end as PyTorch does.
int64_t normalizedDim(TensorView* tv, int64_t dim, const char* op);
// The same, and for a 0-dim tensor dim 0 or -1 (0), as torch takes them.
int64_t normalizedDimOfAnyRank(TensorView* tv, int64_t dim, const char* op);

// A new tensor for the result of an elementwise op over `inputs`: each
// logical axis is a broadcast only where every tensor input has a broadcast,
// otherwise an iteration axis with the inputs' extent. Tensor inputs must
// have the same rank (without reduction axes); extents must agree where
// known.
TensorView* newOutputTV(const std::vector<Val*>& inputs, DataType dtype);

// The operands of an elementwise op broadcast as torch broadcasts: a tensor
// of fewer axes than the others gets leading broadcast axes (a 0-dim tensor
// with a matrix, a row with a batch of matrices), and an axis of size 1
// that is not a broadcast axis (a reshape's, a slice's) where another
// operand's axis may be longer becomes one. Scalars pass through.
std::vector<Val*> alignRanks(const std::vector<Val*>& operands);

// Fresh copies (no definition) of `ids` without reduction axes.
std::vector<IterDomain*> freshCopies(const std::vector<IterDomain*>& ids);

// Casts `val` to `dtype` when it is a tensor of another type; scalars are
// converted by codegen and stay as they are.
Val* maybeCastTensor(Val* val, DataType dtype);

// The type statistics of `tv` are computed in (Welford, variance, the
// normalizations): Double for Double, else Float. A user error, naming
// `op`, for a tensor that is not floating-point.
DataType statisticsType(TensorView* tv, const char* op);

// A user error, naming `op`, for an operand nothing computes on: float8 (as
// in PyTorch, cast, copied and moved, and computed on only after a cast)
// and the data-only types (isDataOnlyType: not even cast).
void checkComputable(const std::vector<Val*>& operands, const char* op);

// Whether `tv`'s innermost logical axis is its innermost in memory and
// dense there (stride 1): the innermost stride of any view of tv that
// keeps that axis innermost (a slice, a reshape).
bool innermostAxisIsDense(TensorView* tv);

// A user error, naming `op`, for a complex operand of an op that does not
// take complex values (doc/ops.md "Complex numbers").
void checkNotComplex(const std::vector<Val*>& operands, const char* op);

} // namespace fuser::ops
