#include <ir/interface_nodes.h>

#include <fusion.h>
#include <ir/builder.h>
#include <ir/cloner.h>
#include <ir/dispatch.h>
#include <ir/domain_traversal.h>

#include <iostream>
#include <sstream>

namespace fuser {

TensorView::TensorView(
    TensorDomain* domain, DataType dtype, MemoryType memory_type)
    : Val(ValType::TensorView, dtype),
      domain_(domain),
      memory_type_(memory_type) {
  FUSER_INTERNAL_ASSERT(domain != nullptr, "TensorView needs a domain");
  domain_->owner_ = this;
}

void TensorView::setDomain(TensorDomain* domain) {
  FUSER_INTERNAL_ASSERT(domain != nullptr, "setDomain(nullptr)");
  FUSER_CHECK(
      domain->logical() == domain_->logical(), "setDomain on ", toString(),
      ": the new domain must keep the logical domain ",
      idsToString(domain_->logical()), ", got ", idsToString(domain->logical()),
      ".");
  domain_ = domain;
  domain_->owner_ = this;
}

void TensorView::setAllocationDomain(
    std::vector<IterDomain*> ids, bool contiguous) {
  Contiguity contiguity =
      TensorDomain::getContiguityFilledWith(ids, contiguous);
  domain_->setAllocationDomain(std::move(ids), std::move(contiguity));
}

void TensorView::setAllocationDomain(
    std::vector<IterDomain*> ids, Contiguity contiguity) {
  domain_->setAllocationDomain(std::move(ids), std::move(contiguity));
}

void TensorView::setContiguity(const Contiguity& contiguity) {
  domain_->setContiguity(contiguity);
}

void TensorView::setContiguity(bool contiguous) {
  domain_->setContiguity(TensorDomain::getContiguityFilledWith(
      domain_->maybeAllocation(), contiguous));
}

void TensorView::setLoopDomain(std::vector<IterDomain*> ids) {
  FUSER_CHECK(
      compute_at_pos_ == 0 && max_producer_pos_ == 0, "setLoopDomain on ",
      toString(),
      ": the tensor is already inlined; set loop domains before inlining.");
  domain_->setLoopDomain(std::move(ids));
}

namespace {

void checkNotInlined(const TensorView* tv, int64_t axis, const char* what) {
  int64_t limit =
      std::max(tv->getComputeAtPosition(), tv->getMaxProducerPosition());
  FUSER_CHECK(
      axis >= limit, "Cannot ", what, " axis ", axis, " of ", tv->toString(),
      ": axes left of position ", limit,
      " are inlined. Schedule before calling inlineAt/inlineMost.");
}

} // namespace

TensorView* TensorView::split(int64_t axis, int64_t factor, bool inner_split) {
  FusionGuard fg(fusion());
  return split(
      axis, IrBuilder::create<Val>(ScalarValue(factor), DataType::Index),
      inner_split);
}

TensorView* TensorView::split(int64_t axis, Val* factor, bool inner_split) {
  axis = domain_->wrapDim(axis);
  checkNotInlined(this, axis, "split");
  FusionGuard fg(fusion());
  domain_->split(axis, factor, inner_split);
  return this;
}

TensorView* TensorView::merge(int64_t axis_o, int64_t axis_i) {
  axis_o = domain_->wrapDim(axis_o);
  axis_i = domain_->wrapDim(axis_i);
  checkNotInlined(this, std::min(axis_o, axis_i), "merge");
  FusionGuard fg(fusion());
  domain_->merge(axis_o, axis_i);
  return this;
}

TensorView* TensorView::reorder(
    const std::unordered_map<int64_t, int64_t>& old2new) {
  for (auto [old_pos, new_pos] : old2new) {
    checkNotInlined(this, domain_->wrapDim(old_pos), "reorder");
    checkNotInlined(this, domain_->wrapDim(new_pos), "reorder to");
  }
  domain_->reorder(old2new);
  return this;
}

void TensorView::setMemoryType(MemoryType memory_type) {
  if (memory_type != MemoryType::Global) {
    FUSER_CHECK(
        !isFusionInput() && !isFusionOutput(), "Cannot place ", toString(),
        " in ", memory_type,
        " memory: fusion inputs and outputs live in global memory.");
  }
  memory_type_ = memory_type;
}

void TensorView::setComputeAt(int64_t pos) {
  FUSER_INTERNAL_ASSERT(pos >= 0 && pos <= nDims(), "bad compute-at position");
  compute_at_pos_ = pos;
}

void TensorView::setMaxProducer(int64_t pos) {
  FUSER_INTERNAL_ASSERT(pos >= 0 && pos <= nDims(), "bad producer position");
  max_producer_pos_ = pos;
}

std::string TensorView::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size) << "T" << name() << "_";
  switch (memory_type_) {
    case MemoryType::Global:
      ss << "g";
      break;
    case MemoryType::Shared:
      ss << "s";
      break;
    case MemoryType::Local:
      ss << "l";
      break;
  }
  ss << "_" << dtype() << idsToString(getLoopDomain());
  if (compute_at_pos_ > 0) {
    ss << " ca_pos( " << compute_at_pos_ << " )";
  }
  if (max_producer_pos_ > 0) {
    ss << " produce_pos( " << max_producer_pos_ << " )";
  }
  return ss.str();
}

std::string TensorView::toInlineString() const {
  return toString();
}

namespace {

void printExprs(
    std::stringstream& ss, const std::vector<Expr*>& exprs, int indent_size) {
  for (Expr* expr : exprs) {
    ss << expr->toString(indent_size);
  }
}

} // namespace

std::string TensorView::domainsToString(int indent_size) const {
  std::stringstream ss;
  const std::string pad = indent(indent_size);
  ss << pad << toString() << "\n";
  if (hasRoot()) {
    ss << pad << " root domain : " << idsToString(getRootDomain()) << "\n";
    printExprs(
        ss, getExprsBetween(getRootDomain(), getLogicalDomain()),
        indent_size + 1);
  }
  ss << pad << " logical domain : " << idsToString(getLogicalDomain()) << "\n";
  if (hasAllocation()) {
    ss << pad << " allocation domain : " << idsToString(getAllocationDomain())
       << "\n";
    printExprs(
        ss, getExprsBetween(getLogicalDomain(), getAllocationDomain()),
        indent_size + 1);
  }
  ss << pad << " contiguity: " << contiguityToString(getContiguity()) << "\n";
  ss << pad << " loop domain : " << idsToString(getLoopDomain()) << "\n";
  printExprs(
      ss, getExprsBetween(getLogicalDomain(), getLoopDomain()),
      indent_size + 1);
  return ss.str();
}

void TensorView::printTransforms() const {
  std::cout << domainsToString() << std::flush;
}

void TensorView::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* TensorView::cloneWith(IrCloner& cloner) const {
  auto* copy = IrBuilder::createInContainer<TensorView>(
      cloner.target(), cloner.clone(domain_), dtype(), memory_type_);
  copy->compute_at_pos_ = compute_at_pos_;
  copy->max_producer_pos_ = max_producer_pos_;
  copy->mesh_ = mesh_;
  copy->partial_sum_ = partial_sum_;
  return copy;
}

std::string contiguityToString(const Contiguity& contiguity) {
  std::stringstream ss;
  for (size_t i = 0; i < contiguity.size(); ++i) {
    ss << (i ? " " : "")
       << (contiguity[i].has_value() ? (*contiguity[i] ? "t" : "f") : "n");
  }
  return ss.str();
}

int64_t rankOf(const TensorView* tv) {
  return static_cast<int64_t>(
      TensorDomain::noReductions(tv->getLogicalDomain()).size());
}

} // namespace fuser
