#include <ir/internal_base_nodes.h>

#include <fusion.h>
#include <ir/builder.h>
#include <ir/cloner.h>
#include <ir/dispatch.h>

#include <sstream>

namespace fuser {

IterDomain::IterDomain(
    Val* start, Val* extent, IterType iter_type, ParallelType parallel_type)
    : Val(ValType::IterDomain, DataType::Index),
      start_(start),
      extent_(extent),
      iter_type_(iter_type),
      parallel_type_(parallel_type) {
  FUSER_INTERNAL_ASSERT(start != nullptr && extent != nullptr, "null extent");
  FUSER_CHECK(
      extent->isScalar() && isIntegralType(extent->dtype()),
      "An IterDomain extent must be an integer scalar; got ",
      extent->toString(), " of type ", extent->dtype(), ".");
  FUSER_CHECK(
      !extent->isConstInt() || extent->constIntValue() >= 0,
      "An IterDomain extent must not be negative; got ", extent->toString(),
      ".");
}

void IterDomain::parallelize(ParallelType parallel_type) {
  if (parallel_type == ParallelType::Vectorize ||
      parallel_type == ParallelType::Unroll ||
      parallel_type == ParallelType::Unswitch) {
    FUSER_CHECK(
        !isReduction() || parallel_type != ParallelType::Vectorize,
        "Cannot vectorize reduction axis ", toString(), ".");
  }
  FUSER_CHECK(
      !isReduction() || parallel_type != ParallelType::Group,
      "Cannot group reduction axis ", toString(),
      "; Group is for an iteration axis of a reduction's output.");
  parallel_type_ = parallel_type;
}

void IterDomain::padToMultipleOf(int64_t multiple) {
  FUSER_CHECK(
      multiple >= 1, "padToMultipleOf(", multiple, ") of ", toString(),
      ": the multiple must be positive.");
  padded_multiple_ = multiple;
}

void IterDomain::setExtentBound(int64_t bound) {
  FUSER_CHECK(
      bound >= 0, "setExtentBound(", bound, ") of ", toString(),
      ": the bound must not be negative.");
  extent_bound_ = bound;
}

IterDomain* IterDomain::cloneWithoutDefinition() const {
  auto* id = IrBuilder::createInContainer<IterDomain>(
      fusion(), start_, extent_, iter_type_, parallel_type_);
  id->padded_multiple_ = padded_multiple_;
  id->extent_bound_ = extent_bound_;
  return id;
}

std::pair<IterDomain*, IterDomain*> IterDomain::split(
    IterDomain* in, Val* factor, bool inner_split) {
  FUSER_CHECK(in != nullptr, "IterDomain::split: the input ID is null.");
  FUSER_CHECK(
      factor != nullptr && factor->isScalar() &&
          isIntegralType(factor->dtype()),
      "Split factor of ", in->toString(), " must be an integer scalar; got ",
      factor == nullptr ? std::string("null") : factor->toString(), ".");
  FUSER_CHECK(
      !factor->isConstInt() || factor->constIntValue() > 0, "Split factor of ",
      in->toString(), " must be positive; got ", factor->toString(), ".");
  FusionGuard fg(in->fusion());
  Val* remainder = IrBuilder::ceilDivExpr(in->extent(), factor);
  Val* outer_extent = inner_split ? remainder : factor;
  Val* inner_extent = inner_split ? factor : remainder;
  auto* zero = in->fusion()->zeroVal();
  auto* outer =
      IrBuilder::create<IterDomain>(zero, outer_extent, in->getIterType());
  auto* inner =
      IrBuilder::create<IterDomain>(zero, inner_extent, in->getIterType());
  IrBuilder::create<Split>(outer, inner, in, factor, inner_split);
  return {outer, inner};
}

IterDomain* IterDomain::merge(IterDomain* outer, IterDomain* inner) {
  FUSER_CHECK(
      outer != nullptr && inner != nullptr, "IterDomain::merge: null ID.");
  FUSER_CHECK(
      outer != inner, "Cannot merge ", outer->toString(), " with itself.");
  FUSER_CHECK(
      outer->isReduction() == inner->isReduction() || outer->isBroadcast() ||
          inner->isBroadcast(),
      "Cannot merge reduction and iteration axes: ", outer->toString(), " and ",
      inner->toString(),
      ". Reorder the reduction axes next to each other first.");
  IterType iter_type = IterType::Iteration;
  if (outer->isBroadcast() && inner->isBroadcast()) {
    iter_type = IterType::Broadcast;
  } else if (outer->isReduction() || inner->isReduction()) {
    iter_type = IterType::Reduction;
  }
  FusionGuard fg(outer->fusion());
  Val* extent = IrBuilder::mulExpr(outer->extent(), inner->extent());
  auto* out = IrBuilder::create<IterDomain>(
      outer->fusion()->zeroVal(), extent, iter_type);
  IrBuilder::create<Merge>(out, outer, inner);
  return out;
}

std::string IterDomain::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size);
  switch (iter_type_) {
    case IterType::Iteration:
      ss << "i";
      break;
    case IterType::Reduction:
      ss << "r";
      break;
    case IterType::Broadcast:
      ss << "b";
      break;
  }
  ss << parallelTypeAbbreviation(parallel_type_) << name() << "{"
     << extent_->toInlineString() << "}";
  return ss.str();
}

std::string IterDomain::toInlineString() const {
  return toString();
}

bool IterDomain::sameAs(const Statement* other) const {
  return this == other;
}

void IterDomain::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* IterDomain::cloneWith(IrCloner& cloner) const {
  auto* id = IrBuilder::createInContainer<IterDomain>(
      cloner.target(), cloner.clone(start_), cloner.clone(extent_), iter_type_,
      parallel_type_);
  id->padded_multiple_ = padded_multiple_;
  id->extent_bound_ = extent_bound_;
  return id;
}

Split::Split(
    IterDomain* outer, IterDomain* inner, IterDomain* in, Val* factor,
    bool inner_split)
    : factor_(factor), inner_split_(inner_split) {
  addOutput(outer);
  addOutput(inner);
  addInput(in);
}

std::string Split::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size) << (inner_split_ ? "Split: " : "Outer split: ")
     << in()->toString() << " by factor " << factor_->toInlineString() << " -> "
     << outer()->toString() << ", " << inner()->toString() << "\n";
  return ss.str();
}

bool Split::attributesMatch(const Expr* other) const {
  auto* split = dynamic_cast<const Split*>(other);
  return split != nullptr && split->innerSplit() == inner_split_ &&
         split->factor()->sameAs(factor_);
}

void Split::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* Split::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<Split>(
      cloner.target(), cloner.clone(outer()), cloner.clone(inner()),
      cloner.clone(in()), cloner.clone(factor_), inner_split_);
}

Merge::Merge(IterDomain* out, IterDomain* outer, IterDomain* inner) {
  addOutput(out);
  addInput(outer);
  addInput(inner);
}

std::string Merge::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size) << "Merge: " << outer()->toString() << " and "
     << inner()->toString() << " -> " << out()->toString() << "\n";
  return ss.str();
}

void Merge::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* Merge::cloneWith(IrCloner& cloner) const {
  return IrBuilder::createInContainer<Merge>(
      cloner.target(), cloner.clone(out()), cloner.clone(outer()),
      cloner.clone(inner()));
}

} // namespace fuser
