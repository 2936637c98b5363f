#include <ops/reduction.h>

#include <ir/all_nodes.h>
#include <ops/alias.h>
#include <ops/arith.h>
#include <ops/type_promotion.h>

#include <algorithm>
#include <limits>
#include <set>

namespace fuser {

namespace {

Val* initValue(ReductionOpType op, DataType dtype) {
  switch (op) {
    case ReductionOpType::Sum:
      return isFloatingPointType(dtype)
                 ? IrBuilder::create<Val>(ScalarValue(0.0), dtype)
                 : IrBuilder::create<Val>(ScalarValue(int64_t(0)), dtype);
    case ReductionOpType::Max:
      if (isFloatingPointType(dtype)) {
        return IrBuilder::create<Val>(
            ScalarValue(-std::numeric_limits<double>::infinity()), dtype);
      }
      if (dtype == DataType::Bool) {
        return IrBuilder::create<Val>(ScalarValue(false), dtype);
      }
      return IrBuilder::create<Val>(
          ScalarValue(
              dtype == DataType::Int32
                  ? int64_t(std::numeric_limits<int32_t>::min())
                  : std::numeric_limits<int64_t>::min()),
          dtype);
    case ReductionOpType::Min:
      if (isFloatingPointType(dtype)) {
        return IrBuilder::create<Val>(
            ScalarValue(std::numeric_limits<double>::infinity()), dtype);
      }
      if (dtype == DataType::Bool) {
        return IrBuilder::create<Val>(ScalarValue(true), dtype);
      }
      return IrBuilder::create<Val>(
          ScalarValue(
              dtype == DataType::Int32
                  ? int64_t(std::numeric_limits<int32_t>::max())
                  : std::numeric_limits<int64_t>::max()),
          dtype);
  }
  FUSER_ERROR("unknown reduction");
}

std::vector<int64_t> normalizeAxes(
    TensorView* tv, const std::vector<int64_t>& axes, int64_t rank) {
  FUSER_CHECK(
      !axes.empty(), "Reduction of ", tv->toString(),
      ": no axes given; name the axes to reduce.");
  std::set<int64_t> unique;
  for (int64_t axis : axes) {
    FUSER_CHECK(
        axis >= -rank && axis < rank, "Reduction of ", tv->toString(),
        ": axis ", axis, " is out of range for rank ", rank, ".");
    int64_t a = axis < 0 ? axis + rank : axis;
    FUSER_CHECK(
        unique.insert(a).second, "Reduction of ", tv->toString(), ": axis ", a,
        " given twice.");
  }
  return {unique.begin(), unique.end()};
}

} // namespace

TensorView* reductionOp(
    ReductionOpType op, const std::vector<int64_t>& axes, TensorView* tv,
    bool keep_dim) {
  FUSER_CHECK(tv != nullptr, "Reduction of a null tensor.");
  FUSER_CHECK(
      FusionGuard::getCurFusion() == tv->fusion(),
      "Reduction: ", tv->toString(), " does not belong to the active Fusion.");
  const auto inputs = TensorDomain::noReductions(tv->getLogicalDomain());
  const auto rank = static_cast<int64_t>(inputs.size());
  const auto reduced = normalizeAxes(tv, axes, rank);
  std::vector<IterDomain*> out_ids;
  for (int64_t i = 0; i < rank; ++i) {
    IterDomain* id = inputs[static_cast<size_t>(i)];
    bool is_reduced = std::binary_search(reduced.begin(), reduced.end(), i);
    out_ids.push_back(IrBuilder::create<IterDomain>(
        id->start(), id->extent(),
        is_reduced ? IterType::Reduction : id->getIterType()));
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      out_ids, TensorDomain::getContiguityFilledWith(out_ids, true));
  auto* out = IrBuilder::create<TensorView>(domain, tv->dtype());
  IrBuilder::create<ReductionOp>(op, initValue(op, tv->dtype()), out, tv);
  if (!keep_dim) {
    return out;
  }
  std::vector<bool> flags(static_cast<size_t>(rank), false);
  for (int64_t a : reduced) {
    flags[static_cast<size_t>(a)] = true;
  }
  return broadcast(out, flags);
}

TensorView* sum(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim,
    DataType dtype) {
  FUSER_CHECK(tv != nullptr, "sum of a null tensor.");
  DataType out_type = dtype;
  if (out_type == DataType::Null) {
    out_type = isFloatingPointType(tv->dtype()) ? tv->dtype() : DataType::Int;
  }
  DataType acc_type = computeDataType(out_type);
  TensorView* in = tv->dtype() == acc_type ? tv : castOp(acc_type, tv);
  TensorView* out = reductionOp(ReductionOpType::Sum, axes, in, keep_dim);
  return out_type == acc_type ? out : castOp(out_type, out);
}

TensorView* max(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim) {
  return reductionOp(ReductionOpType::Max, axes, tv, keep_dim);
}

TensorView* min(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim) {
  return reductionOp(ReductionOpType::Min, axes, tv, keep_dim);
}

TensorView* mean(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim) {
  FUSER_CHECK(tv != nullptr, "mean of a null tensor.");
  FUSER_CHECK(
      isFloatingPointType(tv->dtype()), "mean of ", tv->toString(),
      ": needs a floating-point tensor, got ", tv->dtype(),
      ". Cast it first, e.g. castOp(DataType::Float, tv).");
  const auto inputs = TensorDomain::noReductions(tv->getLogicalDomain());
  const auto rank = static_cast<int64_t>(inputs.size());
  Val* count = tv->fusion()->oneVal();
  for (int64_t axis : normalizeAxes(tv, axes, rank)) {
    count =
        IrBuilder::mulExpr(count, inputs[static_cast<size_t>(axis)]->extent());
  }
  TensorView* total = sum(tv, axes, keep_dim);
  return div(total, count);
}

} // namespace fuser
