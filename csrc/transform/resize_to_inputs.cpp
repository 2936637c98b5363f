#include <transform/resize_to_inputs.h>

#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <ops/rebuild.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <unordered_set>

namespace fuser {

namespace {

std::vector<IterDomain*> axesOf(TensorView* tv) {
  return TensorDomain::noReductions(tv->getLogicalDomain());
}

bool isConstOne(Val* v) {
  return v->isConstInt() && v->constIntValue() == 1;
}

// Whether the permute `new2old` of `in` reads it in memory order: its
// output's axes are `in`'s allocation order (the heads of an attention
// gradient laid out [B, S, H, D] and read as such). A kernel that reads a
// transposed input through shifted reads fails to lower (the transposed
// tile and the shifted reads' loops conflict), so the other permutes stay.
bool readsInMemoryOrder(TensorView* in, const std::vector<int64_t>& new2old) {
  const std::vector<IterDomain*> logical = axesOf(in);
  const std::vector<IterDomain*> allocation =
      TensorDomain::noReductions(in->getMaybeAllocationDomain());
  if (allocation.size() != new2old.size()) {
    return false;
  }
  for (size_t p = 0; p < new2old.size(); ++p) {
    if (allocation[p] != logical.at(static_cast<size_t>(new2old[p]))) {
      return false;
    }
  }
  return true;
}

// Whether `def` is a reshape, a slice or a permute.
bool isReshapeSliceOrPermute(const Expr* def) {
  auto* slice = dynamic_cast<const ResizeOp*>(def);
  return def->isA<ViewOp>() || permutationOf(def).has_value() ||
         (slice != nullptr && slice->opType() == ResizeOpType::Slice);
}

// Whether `tv` is a fusion input or reshapes, slices and permutes of one.
bool isInputOrItsView(TensorView* tv) {
  Expr* def = tv->definition();
  return def == nullptr ? tv->isFusionInput()
                        : isReshapeSliceOrPermute(def) &&
                              isInputOrItsView(def->input(0)->as<TensorView>());
}

// Whether `tv` is a product no kernel beside its readers computes (ATen's
// or the matmul kernel's), a library op's result (ir/external_op.h: an
// attention's gradients), the cast that rounds a product or the copy a
// float product is handed on through (onlyResultExpr), a
// reshape of a fusion input or of a view of one (no kernel reshapes:
// ATen's view, segmentation/segmenter.cpp), or a reshape, slice or
// permute of one of those: a segment reads it from global memory, so
// shifted reads of it are pads of a segment input, read in place (the
// rotary embedding of a QKV projection's heads, or of an input's heads).
bool isProductOrItsView(TensorView* tv) {
  Expr* def = tv->definition();
  if (def == nullptr) {
    return false;
  }
  if (def->isA<MmaOp>() || def->isA<ExternalOp>()) {
    return true;
  }
  if (auto* mma = dynamic_cast<MmaOp*>(def->input(0)->definition());
      mma != nullptr && onlyResultExpr(mma) == def) {
    return true;
  }
  if (!isReshapeSliceOrPermute(def)) {
    return false;
  }
  auto* in = def->input(0)->as<TensorView>();
  return (def->isA<ViewOp>() && isInputOrItsView(in)) || isProductOrItsView(in);
}

// A tensor that shifted reads take from memory: a fusion input, or a
// product (isProductOrItsView).
bool isSource(TensorView* tv) {
  return tv->isFusionInput() || isProductOrItsView(tv);
}

// Per logical axis of a resized tensor: how far its positions are shifted
// from the source's (nullptr: not shifted), and its extents.
struct Shift {
  std::vector<Val*> offsets;
  std::vector<Val*> extents;
};

// The tensors of one resize read at shifted positions, rebuilt over shifted
// reads of sources; nullptr where a tensor cannot be.
class ShiftedReader {
 public:
  explicit ShiftedReader(Shift shift) : shift_(std::move(shift)) {}

  // `tv` (of the resized tensor's rank) read at its positions minus the
  // offsets.
  TensorView* read(TensorView* tv) {
    std::vector<size_t> axes(axesOf(tv).size());
    std::iota(axes.begin(), axes.end(), size_t{0});
    return read(tv, axes, shift_.offsets);
  }

 private:
  // `axes` maps tv's axes to the shift's (tv has fewer under a broadcast);
  // `offsets` are the shifts of tv's own axes (nullptr: none).
  TensorView* read(
      TensorView* tv, const std::vector<size_t>& axes,
      const std::vector<Val*>& offsets) {
    auto key = std::make_pair(tv, offsets);
    if (auto it = memo_.find(key); it != memo_.end()) {
      return it->second;
    }
    TensorView* result = compute(tv, axes, offsets);
    memo_[key] = result;
    return result;
  }

  TensorView* compute(
      TensorView* tv, const std::vector<size_t>& axes,
      const std::vector<Val*>& offsets) {
    if (isSource(tv)) {
      return padded(tv, offsets, axes);
    }
    Expr* def = tv->definition();
    auto* resize = dynamic_cast<ResizeOp*>(def);
    if (resize != nullptr && resize->opType() == ResizeOpType::Slice) {
      return throughSlice(resize, offsets, axes);
    }
    if (std::optional<std::vector<int64_t>> new2old = permutationOf(def)) {
      auto* in = def->input(0)->as<TensorView>();
      if (!readsInMemoryOrder(in, *new2old)) {
        return nullptr;
      }
      // Axis p of tv is axis new2old[p] of the permute's input.
      std::vector<size_t> in_axes(axes.size());
      std::vector<Val*> in_offsets(axes.size());
      for (size_t p = 0; p < axes.size(); ++p) {
        const auto q = static_cast<size_t>((*new2old)[p]);
        in_axes[q] = axes[p];
        in_offsets[q] = offsets[p];
      }
      TensorView* shifted = read(in, in_axes, in_offsets);
      return shifted == nullptr ? nullptr : permute(shifted, *new2old);
    }
    if (def == nullptr || !canRebuildPointwise(def)) {
      return nullptr;
    }
    std::vector<size_t> in_axes = axes;
    std::vector<Val*> in_offsets = offsets;
    if (auto* bcast = dynamic_cast<BroadcastOp*>(def)) {
      in_axes.clear();
      in_offsets.clear();
      const auto& flags = bcast->getBroadcastDimFlags();
      for (size_t a = 0; a < flags.size(); ++a) {
        if (!flags[a]) {
          in_axes.push_back(axes[a]);
          in_offsets.push_back(offsets[a]);
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
      TensorView* shifted = read(in_tv, in_axes, in_offsets);
      if (shifted == nullptr) {
        return nullptr;
      }
      inputs.push_back(shifted);
    }
    return rebuildPointwise(def, inputs)->as<TensorView>();
  }

  // `source` read shifted: a pad (negative widths trim) to the resized
  // extents, broadcast axes left alone.
  TensorView* padded(
      TensorView* source, const std::vector<Val*>& offsets,
      const std::vector<size_t>& axes) {
    const std::vector<IterDomain*> own = axesOf(source);
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
    return any ? pad(source, widths) : source;
  }

  // A slice (steps of 1 along its resized axes) read shifted: its input
  // shifted by the offsets less the slice's starts.
  TensorView* throughSlice(
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
    return read(input, axes, offsets);
  }

  Shift shift_;
  std::map<std::pair<TensorView*, std::vector<Val*>>, TensorView*> memo_;
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
  // Resizes of sources stay: a kernel reads them in place, ATen as views.
  const bool all_sources = std::all_of(
      tensors.begin(), tensors.end(),
      [](Val* v) { return isSource(v->as<TensorView>()); });
  if (all_sources || out->hasAllocation()) {
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
  // Readers first: a cat of slices is rewritten whole (its parts read
  // through the slices), and the slices it read are then left unused.
  const std::vector<Expr*> exprs = fusion->exprs();
  std::unordered_set<Expr*> live(exprs.begin(), exprs.end());
  for (auto e = exprs.rbegin(); e != exprs.rend(); ++e) {
    auto* op = dynamic_cast<ResizeOp*>(*e);
    if (op == nullptr || !live.count(op)) {
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
    const std::vector<Expr*> now = fusion->exprs();
    live = std::unordered_set<Expr*>(now.begin(), now.end());
  }
  return count;
}

} // namespace fuser
