#include <ops/alias.h>

#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <ops/arith.h>
#include <ops/factory.h>
#include <ops/reduction.h>
#include <ops/utils.h>

#include <algorithm>
#include <numeric>
#include <sstream>

namespace fuser {

namespace {

void checkTensor(TensorView* tv, const char* op) {
  ops::checkTensorOperand(tv, op, "the input tensor");
}

} // namespace

TensorView* broadcast(
    TensorView* tv, const std::vector<bool>& is_broadcast_dim) {
  checkTensor(tv, "broadcast");
  const auto inputs = TensorDomain::noReductions(tv->getLogicalDomain());
  const auto n_kept = static_cast<size_t>(
      std::count(is_broadcast_dim.begin(), is_broadcast_dim.end(), false));
  FUSER_CHECK(
      n_kept == inputs.size(), "broadcast of ", tv->toString(), ": ",
      inputs.size(), " axes need as many false flags, got ", n_kept, " in ",
      is_broadcast_dim.size(), " flags.");
  Fusion* fusion = tv->fusion();
  std::vector<IterDomain*> out_ids;
  size_t next = 0;
  for (bool is_new : is_broadcast_dim) {
    if (is_new) {
      out_ids.push_back(IrBuilder::create<IterDomain>(
          fusion->zeroVal(), fusion->oneVal(), IterType::Broadcast));
    } else {
      IterDomain* id = inputs[next++];
      out_ids.push_back(IrBuilder::create<IterDomain>(
          id->start(), id->extent(), id->getIterType()));
    }
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      out_ids, TensorDomain::getContiguityFilledWith(out_ids, true));
  auto* out = IrBuilder::create<TensorView>(domain, tv->dtype());
  IrBuilder::create<BroadcastOp>(out, tv, is_broadcast_dim);
  return out;
}

namespace {

bool isConstInt(Val* v, int64_t value) {
  return v->isConstInt() && v->constIntValue() == value;
}

// The output axis of expand for input axis `id` given `extent`.
IterDomain* expandedAxis(
    TensorView* tv, size_t axis, IterDomain* id, Val* extent) {
  FUSER_CHECK(
      extent != nullptr && !extent->isA<TensorView>() &&
          isIntegralType(extent->dtype()),
      "expand of ", tv->toString(), ": extent ", axis,
      " must be an integer scalar.");
  FUSER_CHECK(
      !extent->isConstInt() || extent->constIntValue() >= -1, "expand of ",
      tv->toString(), ": extent ", extent->toInlineString(), " for axis ", axis,
      " is negative; give a size, or -1 to keep the axis's own.");
  const bool keep =
      isConstInt(extent, -1) || (id->isBroadcast() && isConstInt(extent, 1));
  if (keep) {
    return IrBuilder::create<IterDomain>(
        id->start(), id->extent(), id->getIterType());
  }
  if (!id->isBroadcast()) {
    FUSER_CHECK(
        !id->extent()->isConstInt() || !extent->isConstInt() ||
            id->extent()->constIntValue() == extent->constIntValue(),
        "expand of ", tv->toString(), ": axis ", axis, " has size ",
        id->extent()->constIntValue(), " and cannot be expanded to ",
        extent->constIntValue(),
        "; only broadcast axes (size 1) expand. Give -1 to keep it.");
  }
  return IrBuilder::create<IterDomain>(
      id->start(), extent, IterType::Iteration);
}

} // namespace

namespace {

// Whether `id` is an axis of size 1 that is not a broadcast axis (a
// reshape to size 1, a slice of one element) which `extent` expands.
bool expandsSizeOneAxis(IterDomain* id, Val* extent) {
  return !id->isBroadcast() && id->extent()->isConstInt() &&
         id->extent()->constIntValue() == 1 && !isConstInt(extent, -1) &&
         !isConstInt(extent, 1);
}

} // namespace

TensorView* expand(TensorView* tv, const std::vector<Val*>& extents) {
  checkTensor(tv, "expand");
  auto inputs = TensorDomain::noReductions(tv->getLogicalDomain());
  FUSER_CHECK(
      extents.size() == inputs.size(), "expand of ", tv->toString(),
      ": needs one extent per axis (", inputs.size(), "), got ", extents.size(),
      ". To add axes, broadcast first.");
  // torch expands any axis of size 1. When an axis of size 1 that is not a
  // broadcast axis is expanded, every axis of size 1 is squeezed and
  // broadcast again (a squeeze is a reshape, after which no axis is a
  // broadcast axis).
  bool squeeze_size_one = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    squeeze_size_one |= expandsSizeOneAxis(inputs[i], extents[i]);
  }
  if (squeeze_size_one) {
    std::vector<int64_t> size_one;
    std::vector<bool> flags(inputs.size(), false);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i]->isBroadcast() || isConstInt(inputs[i]->extent(), 1)) {
        size_one.push_back(static_cast<int64_t>(i));
        flags[i] = true;
      }
    }
    tv = broadcast(squeeze(tv, size_one), flags);
    inputs = TensorDomain::noReductions(tv->getLogicalDomain());
  }
  std::vector<IterDomain*> out_ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    out_ids.push_back(expandedAxis(tv, i, inputs[i], extents[i]));
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      out_ids, TensorDomain::getContiguityFilledWith(out_ids, true));
  auto* out = IrBuilder::create<TensorView>(domain, tv->dtype());
  IrBuilder::create<ExpandOp>(out, tv);
  return out;
}

TensorView* unsqueeze(TensorView* tv, int64_t dim) {
  checkTensor(tv, "unsqueeze");
  const auto rank = static_cast<int64_t>(
      TensorDomain::noReductions(tv->getLogicalDomain()).size());
  FUSER_CHECK(
      dim >= -(rank + 1) && dim <= rank, "unsqueeze of ", tv->toString(),
      ": dim ", dim, " is out of range for a result of rank ", rank + 1, ".");
  const int64_t at = dim < 0 ? dim + rank + 1 : dim;
  std::vector<bool> flags(static_cast<size_t>(rank + 1), false);
  flags[static_cast<size_t>(at)] = true;
  return broadcast(tv, flags);
}

TensorView* squeeze(TensorView* tv, const std::vector<int64_t>& dims) {
  checkTensor(tv, "squeeze");
  const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
  const auto rank = static_cast<int64_t>(logical.size());
  std::vector<bool> squeezed(logical.size(), false);
  for (int64_t dim : dims) {
    FUSER_CHECK(
        dim >= -rank && dim < rank, "squeeze of ", tv->toString(), ": dim ",
        dim, " is out of range for rank ", rank, ".");
    const auto at = static_cast<size_t>(dim < 0 ? dim + rank : dim);
    IterDomain* id = logical[at];
    FUSER_CHECK(
        id->isBroadcast() || !id->extent()->isConstInt() ||
            id->extent()->constIntValue() == 1,
        "squeeze of ", tv->toString(), ": axis ", at, " (", id->toString(),
        ") has size ", id->extent()->toInlineString(),
        "; only axes of size 1 can be squeezed.");
    squeezed[at] = true;
  }
  std::vector<Val*> sizes;
  for (size_t i = 0; i < logical.size(); ++i) {
    if (!squeezed[i]) {
      sizes.push_back(
          logical[i]->isBroadcast() ? IrBuilder::indexConst(1)
                                    : logical[i]->extent());
    }
  }
  return reshape(tv, sizes);
}

TensorView* permute(TensorView* tv, const std::vector<int64_t>& new2old) {
  checkTensor(tv, "permute");
  const auto inputs = TensorDomain::noReductions(tv->getLogicalDomain());
  const auto rank = static_cast<int64_t>(inputs.size());
  FUSER_CHECK(
      static_cast<int64_t>(new2old.size()) == rank, "permute of ",
      tv->toString(), ": needs ", rank, " axes, got ", new2old.size(), ".");
  std::vector<int64_t> normalized;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t axis : new2old) {
    FUSER_CHECK(
        axis >= -rank && axis < rank, "permute of ", tv->toString(), ": axis ",
        axis, " out of range for rank ", rank, ".");
    int64_t a = axis < 0 ? axis + rank : axis;
    FUSER_CHECK(
        !seen[static_cast<size_t>(a)], "permute of ", tv->toString(), ": axis ",
        a, " repeated; the axes must be a permutation.");
    seen[static_cast<size_t>(a)] = true;
    normalized.push_back(a);
  }
  std::vector<IterDomain*> root = ops::freshCopies(inputs);
  std::vector<IterDomain*> logical;
  for (int64_t a : normalized) {
    logical.push_back(root[static_cast<size_t>(a)]);
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      root, logical, std::vector<IterDomain*>{}, logical,
      TensorDomain::getContiguityFilledWith(logical, true));
  auto* out = IrBuilder::create<TensorView>(domain, tv->dtype());
  IrBuilder::create<LoadStoreOp>(LoadStoreOpType::Set, out, tv);
  return out;
}

std::optional<std::vector<int64_t>> permutationOf(const Expr* expr) {
  auto* copy = dynamic_cast<const LoadStoreOp*>(expr);
  auto* out =
      copy == nullptr ? nullptr : dynamic_cast<TensorView*>(copy->out());
  if (out == nullptr || copy->opType() != LoadStoreOpType::Set ||
      !out->hasRoot()) {
    return std::nullopt;
  }
  const auto root = TensorDomain::noReductions(out->getRootDomain());
  const auto logical = TensorDomain::noReductions(out->getLogicalDomain());
  if (root.size() != logical.size()) {
    return std::nullopt;
  }
  std::vector<int64_t> new2old;
  for (IterDomain* id : logical) {
    auto it = std::find(root.begin(), root.end(), id);
    if (it == root.end()) {
      return std::nullopt;
    }
    new2old.push_back(it - root.begin());
  }
  return new2old;
}

TensorView* transpose(TensorView* tv, int64_t dim0, int64_t dim1) {
  checkTensor(tv, "transpose");
  const auto rank = static_cast<int64_t>(
      TensorDomain::noReductions(tv->getLogicalDomain()).size());
  FUSER_CHECK(
      dim0 >= -rank && dim0 < rank && dim1 >= -rank && dim1 < rank,
      "transpose of ", tv->toString(), ": axes ", dim0, ", ", dim1,
      " out of range for rank ", rank, ".");
  std::vector<int64_t> new2old(static_cast<size_t>(rank));
  std::iota(new2old.begin(), new2old.end(), 0);
  std::swap(
      new2old[static_cast<size_t>(dim0 < 0 ? dim0 + rank : dim0)],
      new2old[static_cast<size_t>(dim1 < 0 ? dim1 + rank : dim1)]);
  return permute(tv, new2old);
}

namespace {

// The contiguity of a reshape of `tv` to `logical`: dense, when tv is
// dense in logical order (the reshape is then dense too, a view or a
// copy); else only the innermost axis, when tv's innermost logical axis is
// dense in memory: ATen's reshape is a view, whose innermost stride is
// that axis's, or a dense copy (doc/ops.md "Slicing, padding and
// concatenation").
Contiguity viewContiguity(
    TensorView* tv, const std::vector<IterDomain*>& logical) {
  const Contiguity& in = tv->getContiguity();
  const bool dense_in_order =
      !tv->hasAllocation() &&
      std::all_of(in.begin(), in.end(), [](const std::optional<bool>& c) {
        return c.value_or(true);
      });
  Contiguity out = TensorDomain::getContiguityFilledWith(logical, true);
  if (dense_in_order) {
    return out;
  }
  const bool dense_innermost = ops::innermostAxisIsDense(tv);
  for (size_t i = 0; i < logical.size(); ++i) {
    if (!logical[i]->isBroadcast()) {
      out[i] = i + 1 == logical.size() && dense_innermost;
    }
  }
  return out;
}

// The rank-0 tensor of the one element of `tv`, whose every axis has size
// 1: a max over every axis (the IR drops axes by reducing them), which
// keeps the value exactly, NaN and -0.0 included.
TensorView* rankZeroOf(TensorView* tv) {
  const auto inputs = TensorDomain::noReductions(tv->getLogicalDomain());
  for (size_t i = 0; i < inputs.size(); ++i) {
    FUSER_CHECK(
        inputs[i]->isBroadcast() || isConstInt(inputs[i]->extent(), 1),
        "reshape of ", tv->toString(), " to rank 0: axis ", i, " has size ",
        inputs[i]->extent()->toInlineString(),
        "; a rank-0 result needs every axis of size 1 (one element).");
  }
  FUSER_CHECK(
      !isComplexType(tv->dtype()), "reshape of ", tv->toString(),
      " to rank 0: complex tensors cannot be made rank 0 in a fusion; ",
      "index the element outside the fusion instead.");
  std::vector<int64_t> axes(inputs.size());
  std::iota(axes.begin(), axes.end(), 0);
  return max(tv, axes, /*keep_dim=*/false);
}

// A reshape of a rank-0 tensor: broadcast axes, one per size (each 1).
TensorView* fromRankZero(TensorView* tv, const std::vector<Val*>& sizes) {
  for (size_t i = 0; i < sizes.size(); ++i) {
    FUSER_CHECK(
        isConstInt(sizes[i], 1), "reshape of the rank-0 tensor ",
        tv->toString(), ": size ", i, " is ", sizes[i]->toInlineString(),
        "; one element reshapes only to sizes 1 (or -1), given as ints.");
  }
  if (sizes.empty()) {
    return set(tv);
  }
  return broadcast(tv, std::vector<bool>(sizes.size(), true));
}

// The view of `tv` with logical sizes `sizes` (none -1; the ViewOp's
// inputs, checked when it runs): its root mirrors tv's logical domain,
// merged into one axis, from which the new axes split off from the
// innermost outwards. To or from rank 0 it is no view: see rankZeroOf and
// fromRankZero.
TensorView* viewAs(TensorView* tv, const std::vector<Val*>& sizes) {
  const auto inputs = TensorDomain::noReductions(tv->getLogicalDomain());
  if (inputs.empty()) {
    return fromRankZero(tv, sizes);
  }
  if (sizes.empty()) {
    return rankZeroOf(tv);
  }
  std::vector<IterDomain*> root = ops::freshCopies(inputs);
  IterDomain* merged = root[0];
  for (size_t i = 1; i < root.size(); ++i) {
    merged = IterDomain::merge(merged, root[i]);
  }
  std::vector<IterDomain*> logical(sizes.size());
  IterDomain* rest = merged;
  for (size_t i = sizes.size() - 1; i > 0; --i) {
    auto [outer, inner] = IterDomain::split(rest, sizes[i], true);
    logical[i] = inner;
    rest = outer;
  }
  logical[0] = rest;
  auto* domain = IrBuilder::create<TensorDomain>(
      root, logical, std::vector<IterDomain*>{}, logical,
      viewContiguity(tv, logical));
  auto* out = IrBuilder::create<TensorView>(domain, tv->dtype());
  IrBuilder::create<ViewOp>(out, tv, sizes);
  return out;
}

// The number of elements of `tv` as a scalar (a constant when its extents
// are).
Val* numelOf(TensorView* tv) {
  Val* numel = IrBuilder::indexConst(1);
  for (IterDomain* id : TensorDomain::noReductions(tv->getLogicalDomain())) {
    numel = IrBuilder::mulExpr(numel, id->extent());
  }
  return numel;
}

} // namespace

TensorView* reshape(TensorView* tv, const std::vector<Val*>& new_sizes) {
  checkTensor(tv, "reshape");
  std::optional<size_t> infer_at;
  Val* known = IrBuilder::indexConst(1);
  for (size_t i = 0; i < new_sizes.size(); ++i) {
    Val* size = new_sizes[i];
    FUSER_CHECK(
        size != nullptr && !size->isA<TensorView>() &&
            isIntegralType(size->dtype()),
        "reshape of ", tv->toString(), ": size ", i,
        " must be an integer scalar.");
    if (size->isConstInt() && size->constIntValue() == -1) {
      FUSER_CHECK(
          !infer_at, "reshape of ", tv->toString(),
          ": only one size may be -1.");
      infer_at = i;
      continue;
    }
    FUSER_CHECK(
        !size->isConstInt() || size->constIntValue() >= 0, "reshape of ",
        tv->toString(), ": size ",
        size->isConstInt() ? size->constIntValue() : 0, " at position ", i,
        " must be 0 or more, or -1.");
    known = IrBuilder::mulExpr(known, size);
  }
  Val* numel = numelOf(tv);
  if (numel->isConstInt() && known->isConstInt()) {
    const int64_t n = numel->constIntValue();
    const int64_t k = known->constIntValue();
    FUSER_CHECK(
        !infer_at || k != 0, "reshape of ", tv->toString(), " with ", n,
        " elements: -1 cannot be inferred beside a size 0 (it could be any ",
        "size); give every size.");
    FUSER_CHECK(
        !infer_at || n % k == 0, "reshape of ", tv->toString(), " with ", n,
        " elements: cannot infer -1 from the other sizes.");
    FUSER_CHECK(
        infer_at || k == n, "reshape of ", tv->toString(), ": ", n,
        " elements cannot be viewed with ", k, " elements.");
  }
  std::vector<Val*> sizes = new_sizes;
  if (infer_at) {
    sizes[*infer_at] =
        numel->isConstInt() && known->isConstInt()
            ? IrBuilder::indexConst(
                  numel->constIntValue() / known->constIntValue())
            : IrBuilder::divExpr(numel, known);
  }
  // An empty tensor has no element to view: its reshape is a new empty
  // tensor (no split of a size 0 to follow).
  const bool empty = isConstInt(numel, 0) ||
                     std::any_of(sizes.begin(), sizes.end(), [](Val* size) {
                       return isConstInt(size, 0);
                     });
  if (empty) {
    return zeros(sizes, tv->dtype());
  }
  return viewAs(tv, sizes);
}

TensorView* reshape(TensorView* tv, const std::vector<int64_t>& new_sizes) {
  std::vector<Val*> sizes;
  for (size_t i = 0; i < new_sizes.size(); ++i) {
    FUSER_CHECK(
        new_sizes[i] >= 0 || new_sizes[i] == -1, "reshape of ", tv->toString(),
        ": size ", new_sizes[i], " at position ", i,
        " must be 0 or more, or -1.");
    sizes.push_back(IrBuilder::indexConst(new_sizes[i]));
  }
  return reshape(tv, sizes);
}

} // namespace fuser
