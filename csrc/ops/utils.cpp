#include <ops/utils.h>

#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <ops/alias.h>
#include <ops/arith.h>

#include <sstream>

namespace fuser::ops {

Fusion* activeFusion(const char* op) {
  Fusion* fusion = FusionGuard::getCurFusion();
  FUSER_CHECK(
      fusion != nullptr, op,
      ": no active Fusion; create a `FusionGuard fg(fusion.get());` first.");
  return fusion;
}

void checkTensorOperand(TensorView* tv, const char* op, const char* what) {
  Fusion* fusion = activeFusion(op);
  FUSER_CHECK(tv != nullptr, op, ": ", what, " is null.");
  FUSER_CHECK(
      tv->fusion() == fusion, op, ": ", what, " ", tv->toString(),
      " belongs to another Fusion than the active one.");
}

Val* integerScalar(Val* v, const char* op, const char* what) {
  FUSER_CHECK(
      v != nullptr && v->isScalar() && isIntegralType(v->dtype()), op, ": ",
      what, " must be an integer scalar; got ",
      v == nullptr ? std::string("null") : v->toString(), ".");
  return v;
}

int64_t normalizedDim(TensorView* tv, int64_t dim, const char* op) {
  const auto rank = static_cast<int64_t>(
      TensorDomain::noReductions(tv->getLogicalDomain()).size());
  FUSER_CHECK(
      rank > 0 && dim >= -rank && dim < rank, op, " of ", tv->toString(),
      ": dim ", dim, " is out of range for a tensor of rank ", rank,
      " (expected -", rank, " <= dim < ", rank, ").");
  return dim < 0 ? dim + rank : dim;
}

int64_t normalizedDimOfAnyRank(TensorView* tv, int64_t dim, const char* op) {
  if (TensorDomain::noReductions(tv->getLogicalDomain()).empty()) {
    FUSER_CHECK(
        dim == 0 || dim == -1, op, " of the 0-dim ", tv->toString(), ": dim ",
        dim, " is out of range (a 0-dim tensor takes 0 or -1).");
    return 0;
  }
  return normalizedDim(tv, dim, op);
}

std::vector<IterDomain*> freshCopies(const std::vector<IterDomain*>& ids) {
  std::vector<IterDomain*> copies;
  for (IterDomain* id : TensorDomain::noReductions(ids)) {
    copies.push_back(IrBuilder::create<IterDomain>(
        id->start(), id->extent(), id->getIterType()));
  }
  return copies;
}

namespace {

bool isSizeOneIteration(IterDomain* id) {
  return !id->isBroadcast() && id->extent()->isConstInt() &&
         id->extent()->constIntValue() == 1;
}

// Whether logical axis `axis` of `tv` (of size 1) is a fusion input's axis
// carried by the ops that made `tv`: the binding of the inputs then checks
// that every axis joined to it has size 1 too.
bool carriedFromAnInput(TensorView* tv, size_t axis) {
  Expr* def = tv->definition();
  if (def == nullptr) {
    return true;
  }
  if (tv->hasRoot()) {
    return false; // a reshape or permute: positions move
  }
  for (Val* in : def->inputs()) {
    auto* producer = dynamic_cast<TensorView*>(in);
    if (producer == nullptr) {
      continue;
    }
    const auto ids = TensorDomain::noReductions(producer->getLogicalDomain());
    for (auto [p, c] : def->mappedAxes(producer)) {
      if (c == axis && isSizeOneIteration(ids.at(p)) &&
          carriedFromAnInput(producer, p)) {
        return true;
      }
    }
  }
  return false;
}

// `operands` (tensors of rank `rank`) with each axis of size 1 that is not
// a broadcast axis made one (squeezed, then broadcast again) where another
// operand's axis is not known to have size 1. Only axes that no fusion
// input's axis of size 1 carries (a reshape's, a slice's): an input's is
// checked against the axes joined to it when the inputs are bound.
std::vector<Val*> broadcastSizeOneAxes(
    std::vector<Val*> operands, size_t rank) {
  std::vector<bool> longer(rank, false);
  for (Val* v : operands) {
    if (auto* tv = dynamic_cast<TensorView*>(v)) {
      const auto ids = TensorDomain::noReductions(tv->getLogicalDomain());
      for (size_t i = 0; i < rank; ++i) {
        longer[i] = longer[i] ||
                    (!ids[i]->isBroadcast() && !isSizeOneIteration(ids[i]));
      }
    }
  }
  for (Val*& v : operands) {
    auto* tv = dynamic_cast<TensorView*>(v);
    if (tv == nullptr) {
      continue;
    }
    const auto ids = TensorDomain::noReductions(tv->getLogicalDomain());
    std::vector<int64_t> squeezed;
    std::vector<bool> flags(rank, false);
    for (size_t i = 0; i < rank; ++i) {
      if (longer[i] && isSizeOneIteration(ids[i]) &&
          !carriedFromAnInput(tv, i)) {
        squeezed.push_back(static_cast<int64_t>(i));
        flags[i] = true;
      }
    }
    if (!squeezed.empty() && squeezed.size() < rank) {
      v = broadcast(squeeze(tv, squeezed), flags);
    }
  }
  return operands;
}

} // namespace

std::vector<Val*> alignRanks(const std::vector<Val*>& operands) {
  size_t rank = 0;
  for (Val* v : operands) {
    if (auto* tv = dynamic_cast<TensorView*>(v)) {
      rank = std::max(
          rank, TensorDomain::noReductions(tv->getLogicalDomain()).size());
    }
  }
  std::vector<Val*> aligned;
  for (Val* v : operands) {
    auto* tv = dynamic_cast<TensorView*>(v);
    const size_t own =
        tv ? TensorDomain::noReductions(tv->getLogicalDomain()).size() : rank;
    if (own == rank) {
      aligned.push_back(v);
      continue;
    }
    std::vector<bool> flags(rank, false);
    std::fill(flags.begin(), flags.begin() + (rank - own), true);
    aligned.push_back(broadcast(tv, flags));
  }
  return broadcastSizeOneAxes(aligned, rank);
}

TensorView* newOutputTV(const std::vector<Val*>& inputs, DataType dtype) {
  std::vector<TensorView*> tvs;
  for (Val* input : inputs) {
    if (auto* tv = dynamic_cast<TensorView*>(input)) {
      tvs.push_back(tv);
    }
  }
  FUSER_INTERNAL_ASSERT(!tvs.empty(), "newOutputTV without tensor inputs");
  const auto reference = TensorDomain::noReductions(tvs[0]->getLogicalDomain());
  for (TensorView* tv : tvs) {
    const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
    if (logical.size() != reference.size()) {
      std::stringstream ss;
      ss << "Elementwise op over tensors of different ranks: "
         << tvs[0]->toString() << " has " << reference.size() << " axes, "
         << tv->toString() << " has " << logical.size()
         << ". Insert broadcast(tv, {...}) to align the ranks first.";
      FUSER_CHECK(false, ss.str());
    }
  }
  std::vector<IterDomain*> out_ids;
  for (size_t i = 0; i < reference.size(); ++i) {
    IterDomain* chosen = nullptr;
    for (TensorView* tv : tvs) {
      IterDomain* id = TensorDomain::noReductions(tv->getLogicalDomain())[i];
      if (id->isBroadcast()) {
        continue;
      }
      if (chosen == nullptr) {
        chosen = id;
        continue;
      }
      Val* a = chosen->extent();
      Val* b = id->extent();
      if (a->isConstInt() && b->isConstInt()) {
        FUSER_CHECK(
            a->constIntValue() == b->constIntValue(),
            "Elementwise op: extents of axis ", i,
            " do not match: ", chosen->toString(), " vs ", id->toString(),
            ". Tensors must have equal sizes or be broadcast.");
      } else {
        if (!a->isConstInt() && b->isConstInt()) {
          chosen = id; // prefer the known extent
        }
      }
    }
    if (chosen == nullptr) {
      out_ids.push_back(IrBuilder::create<IterDomain>(
          FusionGuard::getCurFusion()->zeroVal(),
          FusionGuard::getCurFusion()->oneVal(), IterType::Broadcast));
    } else {
      out_ids.push_back(IrBuilder::create<IterDomain>(
          chosen->start(), chosen->extent(), IterType::Iteration));
    }
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      out_ids, TensorDomain::getContiguityFilledWith(out_ids, true));
  return IrBuilder::create<TensorView>(domain, dtype);
}

Val* maybeCastTensor(Val* val, DataType dtype) {
  if (val->isA<TensorView>() && val->dtype() != dtype) {
    return castOp(dtype, val);
  }
  return val;
}

void checkComputable(const std::vector<Val*>& operands, const char* op) {
  for (Val* v : operands) {
    FUSER_CHECK(
        v == nullptr || !isDataOnlyType(v->dtype()), op, ": ", v->toString(),
        " is of type ", v->dtype(),
        "; fuser moves and copies tensors of this type, and passes them to "
        "the ops that run through ATen, but does not compute on them or cast "
        "them (as most of PyTorch's operators do not).");
    FUSER_CHECK(
        v == nullptr || !isFloat8Type(v->dtype()), op, ": ", v->toString(),
        " is of type ", v->dtype(),
        "; float8 tensors are cast, copied and moved, and computed on only "
        "after a cast, as in PyTorch. Cast it first, e.g. "
        "castOp(DataType::Float, tv) (Python: fd.ops.cast(t, "
        "DataType.Float)).");
  }
}

bool innermostAxisIsDense(TensorView* tv) {
  const auto axes = TensorDomain::noReductions(tv->getLogicalDomain());
  const std::vector<IterDomain*>& allocation = tv->getMaybeAllocationDomain();
  const Contiguity& contiguity = tv->getContiguity();
  return !axes.empty() && !allocation.empty() && !contiguity.empty() &&
         allocation.back() == axes.back() && contiguity.back().value_or(false);
}

void checkNotComplex(const std::vector<Val*>& operands, const char* op) {
  for (Val* v : operands) {
    FUSER_CHECK(
        v == nullptr || !isComplexType(v->dtype()), op, ": ", v->toString(),
        " is of type ", v->dtype(), ", and ", op,
        " does not take complex values. Complex tensors take "
        "neg, abs, real, imag, conj, add, sub, mul, div, eq, ne, where, "
        "casts and the movement ops; compute on the real and imaginary parts "
        "otherwise (real(tv), imag(tv); Python fd.ops.real, fd.ops.imag).");
  }
}

DataType statisticsType(TensorView* tv, const char* op) {
  FUSER_CHECK(tv != nullptr, op, " of a null tensor.");
  checkComputable({tv}, op);
  FUSER_CHECK(
      isFloatingPointType(tv->dtype()), op, " of ", tv->toString(),
      ": needs a floating-point tensor, got ", tv->dtype(),
      ". Cast it first, e.g. castOp(DataType::Float, tv).");
  return tv->dtype() == DataType::Double ? DataType::Double : DataType::Float;
}

} // namespace fuser::ops
