#include <ops/alias.h>

#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <ops/utils.h>

#include <algorithm>
#include <numeric>
#include <sstream>

namespace fuser {

namespace {

void checkTensor(TensorView* tv, const char* op) {
  FUSER_CHECK(tv != nullptr, op, ": the input tensor is null.");
  FUSER_CHECK(
      FusionGuard::getCurFusion() == tv->fusion(), op, ": ", tv->toString(),
      " does not belong to the active Fusion; create a FusionGuard for it.");
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

TensorView* reshape(TensorView* tv, const std::vector<int64_t>& new_sizes) {
  checkTensor(tv, "reshape");
  const auto inputs = TensorDomain::noReductions(tv->getLogicalDomain());
  int64_t numel = 1;
  for (IterDomain* id : inputs) {
    FUSER_CHECK(
        id->extent()->isConstInt(), "reshape of ", tv->toString(),
        ": needs known extents, but ", id->toString(),
        " is symbolic. Use makeContigConcreteTensor for the input.");
    numel *= id->extent()->constIntValue();
  }
  std::vector<int64_t> sizes = new_sizes;
  int64_t infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      FUSER_CHECK(
          infer_at == -1, "reshape of ", tv->toString(),
          ": only one size may be -1.");
      infer_at = static_cast<int64_t>(i);
    } else {
      FUSER_CHECK(
          sizes[i] > 0, "reshape of ", tv->toString(), ": size ", sizes[i],
          " at position ", i, " must be positive or -1.");
      known *= sizes[i];
    }
  }
  if (infer_at >= 0) {
    FUSER_CHECK(
        known > 0 && numel % known == 0, "reshape of ", tv->toString(),
        " with ", numel, " elements: cannot infer -1 from the other sizes.");
    sizes[static_cast<size_t>(infer_at)] = numel / known;
    known = numel;
  }
  FUSER_CHECK(
      known == numel, "reshape of ", tv->toString(), ": ", numel,
      " elements cannot be viewed with ", known, " elements.");
  FUSER_CHECK(!sizes.empty(), "reshape to rank 0 is not supported.");

  std::vector<IterDomain*> root = ops::freshCopies(inputs);
  // Merge everything into one axis, then split off the new axes from the
  // innermost outwards.
  IterDomain* merged = root.empty() ? nullptr : root[0];
  for (size_t i = 1; i < root.size(); ++i) {
    merged = IterDomain::merge(merged, root[i]);
  }
  FUSER_CHECK(merged != nullptr, "reshape of a rank-0 tensor.");
  std::vector<IterDomain*> logical(sizes.size());
  IterDomain* rest = merged;
  for (size_t i = sizes.size() - 1; i > 0; --i) {
    auto [outer, inner] =
        IterDomain::split(rest, IrBuilder::indexConst(sizes[i]), true);
    logical[i] = inner;
    rest = outer;
  }
  logical[0] = rest;
  auto* domain = IrBuilder::create<TensorDomain>(
      root, logical, std::vector<IterDomain*>{}, logical,
      TensorDomain::getContiguityFilledWith(logical, true));
  auto* out = IrBuilder::create<TensorView>(domain, tv->dtype());
  IrBuilder::create<ViewOp>(out, tv);
  return out;
}

} // namespace fuser
