#include <ops/resize.h>

#include <ir/all_nodes.h>
#include <ops/factory.h>
#include <ops/type_promotion.h>
#include <ops/utils.h>

#include <algorithm>
#include <limits>

namespace fuser {

namespace {

std::vector<IterDomain*> axesOf(TensorView* tv) {
  return TensorDomain::noReductions(tv->getLogicalDomain());
}

Val* index(int64_t v) {
  return IrBuilder::indexConst(v);
}

Val* maxOf(Val* a, Val* b) {
  return IrBuilder::binaryExpr(BinaryOpType::Max, a, b);
}

Val* minOf(Val* a, Val* b) {
  return IrBuilder::binaryExpr(BinaryOpType::Min, a, b);
}

// A slice is a view of its input (doc/ops.md "Slicing, padding and
// concatenation"): its strides are the input's, so only its innermost
// axis is known to be dense, when it is the input's innermost in memory,
// dense there, and taken with step 1 (`scalars` holds start, stop, step
// per axis).
Contiguity sliceContiguity(
    TensorView* in, TensorView* out, const std::vector<Val*>& scalars) {
  Contiguity contiguity =
      TensorDomain::getContiguityFilledWith(out->getLogicalDomain(), false);
  if (contiguity.empty() || !ops::innermostAxisIsDense(in)) {
    return contiguity;
  }
  Val* step = scalars.at(3 * (axesOf(in).size() - 1) + 2);
  if (step->isConstInt() && step->constIntValue() == 1 &&
      contiguity.back().has_value()) {
    contiguity.back() = true;
  }
  return contiguity;
}

} // namespace

Val* sliceBound(Val* bound, Val* n) {
  if (bound->isConstInt()) {
    // A constant needs no wrap-around test, and PyTorch's "to the end"
    // (INT64_MAX, e.g. x[..., 16:] traced) is the extent itself: left as
    // min(INT64_MAX, n), it would be an index constant beyond 32-bit
    // kernels (codegen/kernel_printer.cpp).
    const int64_t b = bound->constIntValue();
    if (b == std::numeric_limits<int64_t>::max()) {
      return n;
    }
    if (n->isConstInt()) {
      const int64_t extent = n->constIntValue();
      return index(std::clamp<int64_t>(b < 0 ? b + extent : b, 0, extent));
    }
    return b >= 0 ? minOf(bound, n)
                  : maxOf(index(0), IrBuilder::addExpr(bound, n));
  }
  Val* from_end = IrBuilder::create<Val>(DataType::Index);
  IrBuilder::create<TernaryOp>(
      TernaryOpType::Where, from_end,
      IrBuilder::binaryExpr(BinaryOpType::Lt, bound, index(0)),
      IrBuilder::addExpr(bound, n), bound);
  return maxOf(index(0), minOf(from_end, n));
}

TensorView* slice(TensorView* tv, const std::vector<SliceRange>& ranges) {
  ops::checkTensorOperand(tv, "slice", "a tensor");
  const std::vector<IterDomain*> axes = axesOf(tv);
  FUSER_CHECK(
      ranges.size() <= axes.size(), "slice of ", tv->toString(), ": ",
      ranges.size(), " ranges for a tensor of rank ", axes.size(), ".");
  std::vector<Val*> extents;
  std::vector<Val*> scalars;
  std::vector<bool> resized;
  for (size_t i = 0; i < axes.size(); ++i) {
    Val* n = axes[i]->extent();
    const SliceRange range = i < ranges.size() ? ranges[i] : SliceRange{};
    const bool whole = range.start == nullptr && range.stop == nullptr &&
                       range.step == nullptr;
    Val* start = range.start == nullptr
                     ? index(0)
                     : ops::integerScalar(range.start, "slice", "a start");
    Val* stop = range.stop == nullptr
                    ? n
                    : ops::integerScalar(range.stop, "slice", "a stop");
    Val* step = range.step == nullptr
                    ? index(1)
                    : ops::integerScalar(range.step, "slice", "a step");
    FUSER_CHECK(
        !step->isConstInt() || step->constIntValue() > 0, "slice of ",
        tv->toString(), ": the step along axis ", i, " is ",
        step->isConstInt() ? step->constIntValue() : 0,
        "; steps must be positive (torch's slicing takes no other).");
    scalars.insert(scalars.end(), {start, stop, step});
    resized.push_back(!whole);
    if (whole) {
      extents.push_back(n);
      continue;
    }
    Val* first = sliceBound(start, n);
    Val* last = sliceBound(stop, n);
    extents.push_back(maxOf(
        index(0),
        IrBuilder::ceilDivExpr(IrBuilder::subExpr(last, first), step)));
  }
  TensorView* out = emptyTensor(extents, tv->dtype(), "slice");
  out->setContiguity(sliceContiguity(tv, out, scalars));
  IrBuilder::create<ResizeOp>(
      ResizeOpType::Slice, out, std::vector<Val*>{tv}, scalars, resized);
  return out;
}

TensorView* pad(
    TensorView* tv, const std::vector<Val*>& pad_widths, Val* value) {
  ops::checkTensorOperand(tv, "pad", "a tensor");
  const std::vector<IterDomain*> axes = axesOf(tv);
  FUSER_CHECK(
      pad_widths.size() % 2 == 0 && pad_widths.size() <= 2 * axes.size(),
      "pad of ", tv->toString(), ": ", pad_widths.size(),
      " pad widths; give (left, right) pairs, at most one per axis (",
      2 * axes.size(), " widths), from the last axis backwards.");
  if (value == nullptr) {
    value = isFloatingPointType(tv->dtype())
                ? IrBuilder::create<Val>(0.0, DataType::Double)
                : IrBuilder::create<Val>(int64_t{0}, DataType::Int);
  }
  FUSER_CHECK(
      value->isScalar(), "pad: the value must be a scalar; got ",
      value->toString(), ".");
  std::vector<Val*> extents;
  std::vector<bool> resized;
  for (IterDomain* id : axes) {
    extents.push_back(id->extent());
    resized.push_back(false);
  }
  for (size_t k = 0; k < pad_widths.size() / 2; ++k) {
    const size_t axis = axes.size() - 1 - k;
    Val* left = ops::integerScalar(pad_widths[2 * k], "pad", "a pad width");
    Val* right =
        ops::integerScalar(pad_widths[2 * k + 1], "pad", "a pad width");
    const bool none = left->isConstInt() && left->constIntValue() == 0 &&
                      right->isConstInt() && right->constIntValue() == 0;
    if (!none) {
      extents[axis] =
          IrBuilder::addExpr(IrBuilder::addExpr(extents[axis], left), right);
      resized[axis] = true;
    }
  }
  std::vector<Val*> scalars{value};
  scalars.insert(scalars.end(), pad_widths.begin(), pad_widths.end());
  TensorView* out = emptyTensor(extents, tv->dtype(), "pad");
  IrBuilder::create<ResizeOp>(
      ResizeOpType::Pad, out, std::vector<Val*>{tv}, scalars, resized);
  return out;
}

TensorView* cat(const std::vector<TensorView*>& tensors, int64_t dim) {
  FUSER_CHECK(!tensors.empty(), "cat of no tensors.");
  for (TensorView* tv : tensors) {
    ops::checkTensorOperand(tv, "cat", "a tensor");
  }
  const std::vector<IterDomain*> first = axesOf(tensors[0]);
  const auto rank = static_cast<int64_t>(first.size());
  FUSER_CHECK(
      rank > 0 && dim >= -rank && dim < rank, "cat: dim ", dim,
      " is out of range for tensors of rank ", rank, " (expected -", rank,
      " <= dim < ", rank, ").");
  dim = dim < 0 ? dim + rank : dim;
  std::vector<Val*> operands(tensors.begin(), tensors.end());
  const DataType dtype = computeTypePromotion(operands);
  Val* length = index(0);
  std::vector<Val*> inputs;
  for (TensorView* tv : tensors) {
    FUSER_CHECK(
        static_cast<int64_t>(axesOf(tv).size()) == rank,
        "cat: ", tv->toString(), " has rank ", axesOf(tv).size(),
        ", the first tensor ", rank, "; all must have the same rank.");
    length = IrBuilder::addExpr(
        length, axesOf(tv)[static_cast<size_t>(dim)]->extent());
    inputs.push_back(ops::maybeCastTensor(tv, dtype));
  }
  std::vector<Val*> extents;
  std::vector<bool> resized;
  for (int64_t i = 0; i < rank; ++i) {
    extents.push_back(
        i == dim ? length : first[static_cast<size_t>(i)]->extent());
    resized.push_back(i == dim);
  }
  TensorView* out = emptyTensor(extents, dtype, "cat");
  IrBuilder::create<ResizeOp>(
      ResizeOpType::Cat, out, inputs, std::vector<Val*>{}, resized, dim);
  return out;
}

} // namespace fuser
