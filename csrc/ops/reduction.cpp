#include <ops/reduction.h>

#include <ir/all_nodes.h>
#include <ops/alias.h>
#include <ops/arith.h>
#include <ops/type_promotion.h>
#include <ops/utils.h>

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
    case ReductionOpType::Prod:
      return isFloatingPointType(dtype)
                 ? IrBuilder::create<Val>(ScalarValue(1.0), dtype)
                 : IrBuilder::create<Val>(ScalarValue(int64_t(1)), dtype);
    case ReductionOpType::Max:
      if (isFloatingPointType(dtype)) {
        return IrBuilder::create<Val>(
            ScalarValue(-std::numeric_limits<double>::infinity()), dtype);
      }
      if (dtype == DataType::Bool) {
        return IrBuilder::create<Val>(ScalarValue(false), dtype);
      }
      return IrBuilder::create<Val>(
          ScalarValue(integralRange(dtype).first), dtype);
    case ReductionOpType::Welford:
      // The empty state: count 0.
      return IrBuilder::create<Val>(ScalarValue(0.0), dtype);
    case ReductionOpType::Min:
      if (isFloatingPointType(dtype)) {
        return IrBuilder::create<Val>(
            ScalarValue(std::numeric_limits<double>::infinity()), dtype);
      }
      if (dtype == DataType::Bool) {
        return IrBuilder::create<Val>(ScalarValue(true), dtype);
      }
      return IrBuilder::create<Val>(
          ScalarValue(integralRange(dtype).second), dtype);
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
  ops::checkTensorOperand(tv, "reduction", "the input tensor");
  ops::checkComputable({tv}, "reduction");
  ops::checkNotComplex({tv}, "reduction");
  const auto inputs = TensorDomain::noReductions(tv->getLogicalDomain());
  const auto rank = static_cast<int64_t>(inputs.size());
  if (rank == 0) {
    // As torch does for a 0-dim tensor: axis 0 or -1 (or none) names the
    // tensor itself, and reducing one element gives it back.
    for (int64_t axis : axes) {
      ops::normalizedDimOfAnyRank(tv, axis, "Reduction");
    }
    return set(tv);
  }
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

namespace {

// A sum or product: integers and bools accumulate in int64, Half and
// BFloat16 in Float; the result has `dtype` when given.
TensorView* accumulatingReduction(
    ReductionOpType op, TensorView* tv, const std::vector<int64_t>& axes,
    bool keep_dim, DataType dtype) {
  FUSER_CHECK(tv != nullptr, op, " of a null tensor.");
  ops::checkNotComplex({tv}, "reduction"); // before any cast drops a part
  DataType out_type = dtype;
  if (out_type == DataType::Null) {
    out_type = isFloatingPointType(tv->dtype()) ? tv->dtype() : DataType::Int;
  }
  DataType acc_type = computeDataType(out_type);
  TensorView* in = tv->dtype() == acc_type ? tv : castOp(acc_type, tv);
  TensorView* out = reductionOp(op, axes, in, keep_dim);
  return out_type == acc_type ? out : castOp(out_type, out);
}

} // namespace

TensorView* sum(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim,
    DataType dtype) {
  return accumulatingReduction(ReductionOpType::Sum, tv, axes, keep_dim, dtype);
}

TensorView* prod(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim,
    DataType dtype) {
  return accumulatingReduction(
      ReductionOpType::Prod, tv, axes, keep_dim, dtype);
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

namespace {

// A tensor of `in`'s shape and type `dtype` made by `op` (the Welford
// conversions, which type promotion knows nothing of).
TensorView* welfordConversion(UnaryOpType op, TensorView* in, DataType dtype) {
  TensorView* out = ops::newOutputTV({in}, dtype);
  IrBuilder::create<UnaryOp>(op, out, in);
  return out;
}

} // namespace

WelfordResult welford(TensorView* tv, const std::vector<int64_t>& axes) {
  const DataType value_type = ops::statisticsType(tv, "welford");
  TensorView* x = tv->dtype() == value_type ? tv : castOp(value_type, tv);
  TensorView* state = welfordConversion(
      UnaryOpType::WelfordInit, x, welfordStateType(value_type));
  TensorView* reduced = reductionOp(ReductionOpType::Welford, axes, state);
  WelfordResult result;
  result.avg = welfordConversion(UnaryOpType::WelfordAvg, reduced, value_type);
  result.var_sum =
      welfordConversion(UnaryOpType::WelfordVarSum, reduced, value_type);
  result.n =
      welfordConversion(UnaryOpType::WelfordCount, reduced, DataType::Int);
  return result;
}

VarMeanResult varianceMean(
    TensorView* tv, const std::vector<int64_t>& axes, int64_t correction,
    bool keep_dim) {
  ops::statisticsType(tv, "variance");
  FUSER_CHECK(
      correction >= 0, "variance of ", tv->toString(), ": correction ",
      correction, " is negative; use 0 (population) or 1 (sample).");
  const auto rank = static_cast<int64_t>(
      TensorDomain::noReductions(tv->getLogicalDomain()).size());
  const std::vector<int64_t> reduced = normalizeAxes(tv, axes, rank);
  WelfordResult w = welford(tv, reduced);
  Val* zero = IrBuilder::create<Val>(ScalarValue(int64_t(0)), DataType::Int);
  Val* c = IrBuilder::create<Val>(ScalarValue(correction), DataType::Int);
  TensorView* divisor = maximum(sub(w.n, c), zero);
  VarMeanResult result;
  result.var = div(w.var_sum, divisor);
  result.mean = w.avg;
  if (tv->dtype() != result.var->dtype()) {
    result.var = castOp(tv->dtype(), result.var);
    result.mean = castOp(tv->dtype(), result.mean);
  }
  if (keep_dim) {
    std::vector<bool> flags(static_cast<size_t>(rank), false);
    for (int64_t a : reduced) {
      flags[static_cast<size_t>(a)] = true;
    }
    result.var = broadcast(result.var, flags);
    result.mean = broadcast(result.mean, flags);
  }
  return result;
}

TensorView* variance(
    TensorView* tv, const std::vector<int64_t>& axes, int64_t correction,
    bool keep_dim) {
  return varianceMean(tv, axes, correction, keep_dim).var;
}

} // namespace fuser
