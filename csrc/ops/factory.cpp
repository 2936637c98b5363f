#include <ops/factory.h>

#include <ir/all_nodes.h>
#include <ops/alias.h>
#include <ops/arith.h>
#include <ops/utils.h>

namespace fuser {

namespace {

// A scalar operand of `op`: non-null, of the active fusion, not a tensor.
void checkScalar(Val* v, const char* op, const char* what) {
  FUSER_CHECK(v != nullptr, op, ": ", what, " is null.");
  FUSER_CHECK(
      v->isScalar(), op, ": ", what, " must be a scalar; got ", v->toString(),
      ".");
  FUSER_CHECK(
      v->fusion() == FusionGuard::getCurFusion(), op, ": ", what, " ",
      v->toString(), " belongs to another Fusion than the active one.");
}

void checkExtent(Val* extent, const char* op, size_t position) {
  checkScalar(extent, op, "a size");
  FUSER_CHECK(
      isIntegralType(extent->dtype()), op, ": size ", position, " (",
      extent->toString(), ") is a ", extent->dtype(),
      " scalar; sizes are integers.");
  FUSER_CHECK(
      !extent->isConstInt() || extent->constIntValue() >= 0, op, ": size ",
      position, " is ", extent->constIntValue(),
      "; sizes must not be negative.");
}

Val* constantOf(DataType dtype, int64_t value) {
  return isFloatingPointType(dtype)
             ? IrBuilder::create<Val>(
                   static_cast<double>(value), DataType::Double)
             : IrBuilder::create<Val>(value, DataType::Int);
}

// column - row of the last two axes of `tv`, compared with `diagonal` by
// `compare` (ge: triu, le: tril), broadcast over the other axes.
TensorView* triangularMask(
    TensorView* tv, int64_t diagonal, BinaryOpType compare, const char* op) {
  FUSER_CHECK(tv != nullptr, op, ": the tensor is null.");
  ops::activeFusion(op);
  const std::vector<IterDomain*> axes =
      TensorDomain::noReductions(tv->getLogicalDomain());
  const size_t rank = axes.size();
  FUSER_CHECK(
      rank >= 2, op, ": ", tv->toString(), " has rank ", rank,
      "; the input must have at least 2 dimensions (rows and columns).");
  TensorView* rows = iota(axes[rank - 2]->extent());
  TensorView* cols = iota(axes[rank - 1]->extent());
  std::vector<bool> row_flags(rank, true);
  row_flags[rank - 2] = false;
  std::vector<bool> col_flags(rank, true);
  col_flags[rank - 1] = false;
  TensorView* offset =
      sub(broadcast(cols, col_flags), broadcast(rows, row_flags));
  return binaryOp(
             compare, offset, IrBuilder::create<Val>(diagonal, DataType::Int))
      ->as<TensorView>();
}

TensorView* triangle(
    TensorView* tv, int64_t diagonal, BinaryOpType compare, const char* op) {
  TensorView* mask = triangularMask(tv, diagonal, compare, op);
  Val* zero = constantOf(tv->dtype(), 0);
  return ops::maybeCastTensor(where(mask, tv, zero), tv->dtype())
      ->as<TensorView>();
}

} // namespace

TensorView* emptyTensor(
    const std::vector<Val*>& shape, DataType dtype, const char* op) {
  Fusion* fusion = ops::activeFusion(op);
  std::vector<IterDomain*> ids;
  for (size_t i = 0; i < shape.size(); ++i) {
    checkExtent(shape[i], op, i);
    ids.push_back(IrBuilder::create<IterDomain>(fusion->zeroVal(), shape[i]));
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      ids, TensorDomain::getContiguityFilledWith(ids, true));
  return IrBuilder::create<TensorView>(domain, dtype);
}

TensorView* full(
    const std::vector<Val*>& shape, Val* fill_value, DataType dtype) {
  ops::activeFusion("full");
  checkScalar(fill_value, "full", "the fill value");
  FUSER_CHECK(
      !isFloat8Type(dtype) && dtype != DataType::Null &&
          dtype != DataType::Index,
      "full: dtype ", dtype,
      " cannot be filled; use a number type and cast to float8 after.");
  TensorView* out = emptyTensor(shape, dtype, "full");
  IrBuilder::create<FullOp>(out, fill_value);
  return out;
}

TensorView* zeros(const std::vector<Val*>& shape, DataType dtype) {
  return full(shape, constantOf(dtype, 0), dtype);
}

TensorView* ones(const std::vector<Val*>& shape, DataType dtype) {
  return full(shape, constantOf(dtype, 1), dtype);
}

TensorView* iota(Val* length, Val* start, Val* step, DataType dtype) {
  ops::activeFusion("iota");
  FUSER_CHECK(
      (isIntegralType(dtype) && dtype != DataType::Index) ||
          (isFloatingPointType(dtype) && !isFloat8Type(dtype)),
      "iota: dtype must be an integer or floating-point type; got ", dtype,
      ".");
  start = start == nullptr ? constantOf(dtype, 0) : start;
  step = step == nullptr ? constantOf(dtype, 1) : step;
  checkScalar(start, "iota", "start");
  checkScalar(step, "iota", "step");
  FUSER_CHECK(
      isFloatingPointType(dtype) ||
          (isIntegralType(start->dtype()) && isIntegralType(step->dtype())),
      "iota: an integer iota needs integer start and step; got ",
      start->dtype(), " and ", step->dtype(), ". Ask for a floating dtype.");
  TensorView* out = emptyTensor({length}, dtype, "iota");
  IrBuilder::create<IotaOp>(out, length, start, step);
  return out;
}

TensorView* triu(TensorView* tv, int64_t diagonal) {
  return triangle(tv, diagonal, BinaryOpType::Ge, "triu");
}

TensorView* tril(TensorView* tv, int64_t diagonal) {
  return triangle(tv, diagonal, BinaryOpType::Le, "tril");
}

} // namespace fuser
