#include <ir/internal_base_nodes.h>

#include <ir/dispatch.h>
#include <fusion.h>
#include <ir/builder.h>
#include <ir/cloner.h>
#include <ir/domain_traversal.h>

#include <algorithm>
#include <numeric>
#include <sstream>

namespace fuser {

TensorDomain::TensorDomain(
    std::vector<IterDomain*> logical, Contiguity contiguity)
    : TensorDomain({}, std::move(logical), {}, {}, std::move(contiguity)) {}

TensorDomain::TensorDomain(
    std::vector<IterDomain*> root, std::vector<IterDomain*> logical,
    std::vector<IterDomain*> allocation, std::vector<IterDomain*> loop,
    Contiguity contiguity)
    : Val(ValType::TensorDomain, DataType::Null),
      root_(std::move(root)),
      logical_(std::move(logical)),
      allocation_(std::move(allocation)),
      loop_(std::move(loop)),
      contiguity_(std::move(contiguity)) {
  if (loop_.empty()) {
    loop_ = logical_;
  }
  if (contiguity_.empty()) {
    contiguity_ = getContiguityFilledWith(maybeAllocation(), false);
  }
  if (hasRoot()) {
    validateDomainEquivalence(root_, logical_, ownerName(), "logical domain");
  }
  if (hasAllocation()) {
    validateDomainEquivalence(
        logical_, allocation_, ownerName(), "allocation domain");
  }
  if (loop_ != logical_) {
    validateDomainEquivalence(logical_, loop_, ownerName(), "loop domain");
  }
  validateContiguity(maybeAllocation(), contiguity_);
}

std::string TensorDomain::ownerName() const {
  return owner_ == nullptr ? std::string("the tensor") : owner_->toString();
}

IterDomain* TensorDomain::axis(int64_t i) const {
  return loop_.at(static_cast<size_t>(wrapDim(i)));
}

int64_t TensorDomain::wrapDim(int64_t i, int64_t extra) const {
  int64_t n = nDims() + extra;
  FUSER_CHECK(
      i >= -n && i < n, "Axis ", i, " is out of range for ", ownerName(),
      " with ", nDims(), " loop axes ", idsToString(loop_),
      "; use an index in [", -n, ", ", n, ").");
  return i < 0 ? i + n : i;
}

bool TensorDomain::hasReduction() const {
  return std::any_of(logical_.begin(), logical_.end(), [](IterDomain* id) {
    return id->isReduction();
  });
}

bool TensorDomain::hasBroadcast() const {
  return std::any_of(logical_.begin(), logical_.end(), [](IterDomain* id) {
    return id->isBroadcast();
  });
}

void TensorDomain::split(int64_t axis, Val* factor, bool inner_split) {
  axis = wrapDim(axis);
  IterDomain* id = loop_[static_cast<size_t>(axis)];
  auto [outer, inner] = IterDomain::split(id, factor, inner_split);
  loop_[static_cast<size_t>(axis)] = outer;
  loop_.insert(loop_.begin() + axis + 1, inner);
}

void TensorDomain::merge(int64_t axis_o, int64_t axis_i) {
  axis_o = wrapDim(axis_o);
  axis_i = wrapDim(axis_i);
  FUSER_CHECK(
      axis_o != axis_i, "Cannot merge axis ", axis_o, " of ", ownerName(),
      " with itself.");
  IterDomain* merged = IterDomain::merge(
      loop_[static_cast<size_t>(axis_o)], loop_[static_cast<size_t>(axis_i)]);
  int64_t first = std::min(axis_o, axis_i);
  int64_t second = std::max(axis_o, axis_i);
  loop_.erase(loop_.begin() + second);
  loop_[static_cast<size_t>(first)] = merged;
}

void TensorDomain::reorder(
    const std::unordered_map<int64_t, int64_t>& old2new) {
  const int64_t n = nDims();
  std::vector<int64_t> new2old(static_cast<size_t>(n), -1);
  std::vector<bool> old_used(static_cast<size_t>(n), false);
  for (const auto& entry : old2new) {
    const int64_t old_pos = wrapDim(entry.first);
    const int64_t new_pos = wrapDim(entry.second);
    FUSER_CHECK(
        new2old[static_cast<size_t>(new_pos)] == -1, "reorder of ", ownerName(),
        ": two axes are moved to position ", new_pos, ".");
    FUSER_CHECK(
        !old_used[static_cast<size_t>(old_pos)], "reorder of ", ownerName(),
        ": axis ", old_pos, " is moved twice.");
    new2old[static_cast<size_t>(new_pos)] = old_pos;
    old_used[static_cast<size_t>(old_pos)] = true;
  }
  // Axes not mentioned keep their relative order in the free positions.
  int64_t next_old = 0;
  for (auto& old_pos : new2old) {
    if (old_pos != -1) {
      continue;
    }
    while (old_used[static_cast<size_t>(next_old)]) {
      ++next_old;
    }
    old_pos = next_old;
    old_used[static_cast<size_t>(next_old)] = true;
  }
  std::vector<IterDomain*> reordered;
  reordered.reserve(loop_.size());
  for (int64_t old_pos : new2old) {
    reordered.push_back(loop_[static_cast<size_t>(old_pos)]);
  }
  loop_ = std::move(reordered);
}

void TensorDomain::setLoopDomain(std::vector<IterDomain*> loop) {
  validateDomainEquivalence(logical_, loop, ownerName(), "loop domain");
  loop_ = std::move(loop);
}

void TensorDomain::setAllocationDomain(
    std::vector<IterDomain*> allocation, Contiguity contiguity) {
  validateDomainEquivalence(
      logical_, allocation, ownerName(), "allocation domain");
  validateContiguity(allocation, contiguity);
  allocation_ = std::move(allocation);
  contiguity_ = std::move(contiguity);
}

void TensorDomain::setContiguity(const Contiguity& contiguity) {
  validateContiguity(maybeAllocation(), contiguity);
  contiguity_ = contiguity;
}

void TensorDomain::validateContiguity(
    const std::vector<IterDomain*>& ids, const Contiguity& contiguity) const {
  FUSER_CHECK(
      ids.size() == contiguity.size(), "Contiguity of ", ownerName(),
      " needs one entry per allocation ID ", idsToString(ids), " (", ids.size(),
      "), got ", contiguity.size(), ".");
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i]->isBroadcast()) {
      FUSER_CHECK(
          !contiguity[i].has_value(), "Contiguity of ", ownerName(),
          ": broadcast ID ", ids[i]->toString(),
          " takes no contiguity flag (std::nullopt), got ",
          *contiguity[i] ? "true" : "false", ".");
    } else {
      FUSER_CHECK(
          contiguity[i].has_value(), "Contiguity of ", ownerName(), ": ",
          ids[i]->toString(),
          " needs a contiguity flag (true or false); only broadcast IDs take "
          "std::nullopt.");
    }
  }
}

Contiguity TensorDomain::getContiguityFilledWith(
    const std::vector<IterDomain*>& ids, bool fill) {
  Contiguity contiguity;
  contiguity.reserve(ids.size());
  for (IterDomain* id : ids) {
    contiguity.push_back(
        id->isBroadcast() ? std::nullopt : std::optional<bool>(fill));
  }
  return contiguity;
}

std::vector<IterDomain*> TensorDomain::noReductions(
    const std::vector<IterDomain*>& ids) {
  std::vector<IterDomain*> result;
  std::copy_if(
      ids.begin(), ids.end(), std::back_inserter(result),
      [](IterDomain* id) { return !id->isReduction(); });
  return result;
}

std::vector<IterDomain*> TensorDomain::noBroadcasts(
    const std::vector<IterDomain*>& ids) {
  std::vector<IterDomain*> result;
  std::copy_if(
      ids.begin(), ids.end(), std::back_inserter(result),
      [](IterDomain* id) { return !id->isBroadcast(); });
  return result;
}

std::string TensorDomain::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size) << idsToString(loop_);
  return ss.str();
}

bool TensorDomain::sameAs(const Statement* other) const {
  return this == other;
}

void TensorDomain::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* TensorDomain::cloneWith(IrCloner& cloner) const {
  // Clone the Split/Merge exprs between the lists first, so the copied IDs
  // have their definitions when the copy's constructor validates them.
  std::vector<Expr*> exprs = getExprsBetween(root_, logical_);
  for (const auto* ids : {&allocation_, &loop_}) {
    auto more = getExprsBetween(logical_, *ids);
    exprs.insert(exprs.end(), more.begin(), more.end());
  }
  for (Expr* expr : exprs) {
    cloner.clone(expr);
  }
  return IrBuilder::createInContainer<TensorDomain>(
      cloner.target(), cloner.clone(root_), cloner.clone(logical_),
      cloner.clone(allocation_), cloner.clone(loop_), contiguity_);
}

} // namespace fuser
