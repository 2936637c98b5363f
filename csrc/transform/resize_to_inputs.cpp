#include <transform/resize_to_inputs.h>

#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <ops/rebuild.h>

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace fuser {

namespace {

std::vector<IterDomain*> axesOf(TensorView* tv) {
  return TensorDomain::noReductions(tv->getLogicalDomain());
}

bool isConstOne(Val* v) {
  return v->isConstInt() && v->constIntValue() == 1;
}

// Per logical axis of a resized tensor: how far its positions are shifted
// from the source's (nullptr: not shifted), and its extents.
struct Shift {
  std::vector<Val*> offsets;
  std::vector<Val*> extents;
};

// The tensors of one resize read at shifted positions, rebuilt over shifted
// reads of fusion inputs; nullptr where a tensor cannot be.
class ShiftedReader {
 public:
  explicit ShiftedReader(Shift shift) : shift_(std::move(shift)) {}

  // `tv` (of the resized tensor's rank) read at its positions minus the
  // offsets.
  TensorView* read(TensorView* tv) {
    std::vector<size_t> axes(axesOf(tv).size());
    std::iota(axes.begin(), axes.end(), size_t{0});
    return read(tv, axes);
  }

 private:
  // `axes` maps tv's axes to the shift's (tv has fewer under a broadcast).
  TensorView* read(TensorView* tv, const std::vector<size_t>& axes) {
    if (auto it = memo_.find(tv); it != memo_.end()) {
      return it->second;
    }
    TensorView* result = compute(tv, axes);
    memo_[tv] = result;
    return result;
  }

  TensorView* compute(TensorView* tv, const std::vector<size_t>& axes) {
    const std::vector<IterDomain*> own = axesOf(tv);
    std::vector<Val*> offsets(own.size(), nullptr);
    for (size_t a = 0; a < own.size(); ++a) {
      offsets[a] = shift_.offsets.at(axes[a]);
    }
    if (tv->isFusionInput()) {
      return padded(tv, offsets, axes);
    }
    Expr* def = tv->definition();
    auto* resize = dynamic_cast<ResizeOp*>(def);
    if (resize != nullptr && resize->opType() == ResizeOpType::Slice &&
        resize->tensors()[0]->isFusionInput()) {
      return shiftedSlice(resize, offsets, axes);
    }
    if (def == nullptr || !canRebuildPointwise(def)) {
      return nullptr;
    }
    std::vector<size_t> in_axes = axes;
    if (auto* bcast = dynamic_cast<BroadcastOp*>(def)) {
      in_axes.clear();
      const auto& flags = bcast->getBroadcastDimFlags();
      for (size_t a = 0; a < flags.size(); ++a) {
        if (!flags[a]) {
          in_axes.push_back(axes[a]);
        }
      }
    }
    std::vector<Val*> inputs;
    for (Val* in : def->inputs()) {
      auto* in_tv = dynamic_cast<TensorView*>(in);
      if (in_tv == nullptr) {
        inputs.push_back(in);
        continue;
      }
      TensorView* shifted = read(in_tv, in_axes);
      if (shifted == nullptr) {
        return nullptr;
      }
      inputs.push_back(shifted);
    }
    return rebuildPointwise(def, inputs)->as<TensorView>();
  }

  // `input` read shifted: a pad (negative widths trim) to the resized
  // extents, broadcast axes left alone.
  TensorView* padded(
      TensorView* input, const std::vector<Val*>& offsets,
      const std::vector<size_t>& axes) {
    const std::vector<IterDomain*> own = axesOf(input);
    std::vector<Val*> widths;
    bool any = false;
    for (size_t k = own.size(); k-- > 0;) {
      Val* left = IrBuilder::indexConst(0);
      Val* right = IrBuilder::indexConst(0);
      if (offsets[k] != nullptr && !own[k]->isBroadcast()) {
        any = true;
        left = offsets[k];
        right = IrBuilder::subExpr(
            IrBuilder::subExpr(shift_.extents.at(axes[k]), own[k]->extent()),
            left);
      }
      widths.push_back(left);
      widths.push_back(right);
    }
    return any ? pad(input, widths) : input;
  }

  // A slice (steps of 1 along its resized axes) of an input, read shifted:
  // the input shifted by the offsets less the slice's starts.
  TensorView* shiftedSlice(
      ResizeOp* slice_op, std::vector<Val*> offsets,
      const std::vector<size_t>& axes) {
    auto* input = slice_op->tensors()[0]->as<TensorView>();
    const std::vector<IterDomain*> in_axes = axesOf(input);
    const std::vector<Val*> scalars = slice_op->scalars();
    for (size_t a = 0; a < in_axes.size(); ++a) {
      if (!slice_op->resized()[a]) {
        continue;
      }
      if (!isConstOne(scalars[3 * a + 2])) {
        return nullptr;
      }
      Val* start = sliceBound(scalars[3 * a], in_axes[a]->extent());
      Val* base = offsets[a] == nullptr ? IrBuilder::indexConst(0) : offsets[a];
      offsets[a] = IrBuilder::subExpr(base, start);
    }
    return padded(input, offsets, axes);
  }

  Shift shift_;
  std::unordered_map<TensorView*, TensorView*> memo_;
};

// Positions along axis `axis` of a tensor of `extents`: iota broadcast
// along the other axes.
TensorView* positionsAlong(const std::vector<Val*>& extents, size_t axis) {
  std::vector<bool> flags(extents.size(), true);
  flags[axis] = false;
  return broadcast(iota(extents[axis]), flags);
}

// slice(f(x)) = f(slice(x)) with steps of 1: the source shifted back by
// each start.
TensorView* rewrittenSlice(ResizeOp* op, Shift shift) {
  auto* in = op->tensors()[0]->as<TensorView>();
  const std::vector<IterDomain*> in_axes = axesOf(in);
  const std::vector<Val*> scalars = op->scalars();
  for (size_t a = 0; a < shift.extents.size(); ++a) {
    if (!op->resized()[a]) {
      continue;
    }
    if (!isConstOne(scalars[3 * a + 2])) {
      return nullptr;
    }
    shift.offsets[a] = IrBuilder::subExpr(
        IrBuilder::indexConst(0),
        sliceBound(scalars[3 * a], in_axes[a]->extent()));
  }
  return ShiftedReader(shift).read(in);
}

// pad(f(x), w, v) = where(inside, f(pad(x, w)), v).
TensorView* rewrittenPad(ResizeOp* op, Shift shift) {
  auto* in = op->tensors()[0]->as<TensorView>();
  const std::vector<IterDomain*> in_axes = axesOf(in);
  const std::vector<Val*> scalars = op->scalars();
  const size_t rank = shift.extents.size();
  TensorView* inside = nullptr;
  for (size_t k = 0; k < (scalars.size() - 1) / 2; ++k) {
    const size_t a = rank - 1 - k;
    if (!op->resized()[a]) {
      continue;
    }
    Val* left = scalars[1 + 2 * k];
    shift.offsets[a] = left;
    TensorView* i = positionsAlong(shift.extents, a);
    TensorView* here = logical_and(
        ge(i, left), lt(i, IrBuilder::addExpr(left, in_axes[a]->extent())));
    inside = inside == nullptr ? here : logical_and(inside, here);
  }
  TensorView* shifted = ShiftedReader(shift).read(in);
  if (shifted == nullptr || inside == nullptr) {
    return shifted;
  }
  return castOp(op->out()->dtype(), where(inside, shifted, scalars[0]));
}

// cat(f(x), g(y)) = where(i < n_f, f(pad(x, ..)), g(pad(y, ..))).
TensorView* rewrittenCat(ResizeOp* op, const Shift& shift) {
  const auto dim = static_cast<size_t>(op->dim());
  TensorView* i = positionsAlong(shift.extents, dim);
  std::vector<TensorView*> parts;
  std::vector<Val*> ends;
  Val* start = IrBuilder::indexConst(0);
  for (Val* v : op->tensors()) {
    auto* part = v->as<TensorView>();
    Shift part_shift = shift;
    part_shift.offsets[dim] = start;
    parts.push_back(ShiftedReader(part_shift).read(part));
    if (parts.back() == nullptr) {
      return nullptr;
    }
    start = IrBuilder::addExpr(start, axesOf(part)[dim]->extent());
    ends.push_back(start);
  }
  TensorView* result = parts.back();
  for (size_t k = parts.size() - 1; k-- > 0;) {
    result = where(lt(i, ends[k]), parts[k], result);
  }
  return result;
}

// What replaces `op`'s output, or nullptr when it stays.
TensorView* rewritten(ResizeOp* op) {
  auto* out = op->out()->as<TensorView>();
  const std::vector<Val*> tensors = op->tensors();
  const bool all_inputs = std::all_of(
      tensors.begin(), tensors.end(),
      [](Val* v) { return v->isFusionInput(); });
  if (all_inputs || out->hasAllocation()) {
    return nullptr;
  }
  Shift shift;
  for (IterDomain* id : axesOf(out)) {
    shift.extents.push_back(id->extent());
  }
  shift.offsets.assign(shift.extents.size(), nullptr);
  switch (op->opType()) {
    case ResizeOpType::Slice:
      return rewrittenSlice(op, shift);
    case ResizeOpType::Pad:
      return rewrittenPad(op, shift);
    case ResizeOpType::Cat:
      return rewrittenCat(op, shift);
  }
  return nullptr;
}

} // namespace

int64_t resizesToInputs(Fusion* fusion) {
  FusionGuard fg(fusion);
  int64_t count = 0;
  for (Expr* expr : fusion->exprs()) {
    auto* op = dynamic_cast<ResizeOp*>(expr);
    if (op == nullptr) {
      continue;
    }
    TensorView* replacement = rewritten(op);
    if (replacement == nullptr) {
      continue;
    }
    Val* out = op->out();
    const std::vector<Expr*> uses = out->uses();
    for (Expr* use : uses) {
      fusion->replaceInput(use, out, replacement);
    }
    if (fusion->isOutput(out)) {
      fusion->replaceOutput(out, replacement);
    }
    ++count;
  }
  return count;
}

} // namespace fuser
