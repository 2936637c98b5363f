#include <ops/matmul.h>

#include <ir/all_nodes.h>
#include <ops/alias.h>
#include <ops/arith.h>

#include <sstream>

namespace fuser {

namespace {

std::string rolesToString(const std::vector<MmaRole>& roles) {
  std::stringstream ss;
  ss << "[";
  for (size_t i = 0; i < roles.size(); ++i) {
    ss << (i ? ", " : "") << toString(roles[i]);
  }
  ss << "]";
  return ss.str();
}

// `a` and `b` must agree where both are known constants.
void checkSameExtent(
    IterDomain* a, IterDomain* b, const char* what, TensorView* ta,
    TensorView* tb) {
  if (a->extent()->isConstInt() && b->extent()->isConstInt()) {
    FUSER_CHECK(
        a->extent()->constIntValue() == b->extent()->constIntValue(),
        "Matrix product of ", ta->toString(), " and ", tb->toString(), ": the ",
        what, " extents differ (", a->extent()->constIntValue(), " vs ",
        b->extent()->constIntValue(), ").");
  }
}

IterDomain* freshId(IterDomain* like, IterType type) {
  return IrBuilder::create<IterDomain>(like->start(), like->extent(), type);
}

} // namespace

TensorView* mma(
    TensorView* a, TensorView* b, const std::vector<MmaRole>& a_roles,
    const std::vector<MmaRole>& b_roles) {
  FUSER_CHECK(a != nullptr && b != nullptr, "mma of a null tensor.");
  FUSER_CHECK(
      a->dtype() == b->dtype(), "Matrix product of ", a->toString(), " and ",
      b->toString(), ": the operands' types differ (", a->dtype(), " and ",
      b->dtype(), "); cast one of them first.");
  FUSER_CHECK(
      isFloatingPointType(a->dtype()), "Matrix product of ", a->toString(),
      ": a ", a->dtype(), " operand; cast it to a floating type first.");
  const auto a_ids = TensorDomain::noReductions(a->getLogicalDomain());
  const auto b_ids = TensorDomain::noReductions(b->getLogicalDomain());
  FUSER_CHECK(
      a_roles.size() == a_ids.size() && b_roles.size() == b_ids.size(),
      "mma: roles ", rolesToString(a_roles), " and ", rolesToString(b_roles),
      " do not give one role per axis of ", a->toString(), " and ",
      b->toString(), ".");
  std::vector<IterDomain*> a_batch, b_batch, ms, ns, a_k, b_k;
  for (size_t i = 0; i < a_ids.size(); ++i) {
    FUSER_CHECK(
        a_roles[i] != MmaRole::N, "mma: ", a->toString(),
        " is the first operand; it has no N axes.");
    (a_roles[i] == MmaRole::Batch ? a_batch
                                  : (a_roles[i] == MmaRole::M ? ms : a_k))
        .push_back(a_ids[i]);
  }
  for (size_t i = 0; i < b_ids.size(); ++i) {
    FUSER_CHECK(
        b_roles[i] != MmaRole::M, "mma: ", b->toString(),
        " is the second operand; it has no M axes.");
    (b_roles[i] == MmaRole::Batch ? b_batch
                                  : (b_roles[i] == MmaRole::N ? ns : b_k))
        .push_back(b_ids[i]);
  }
  FUSER_CHECK(
      a_k.size() == 1 && b_k.size() == 1,
      "mma: each operand needs exactly one "
      "K axis; the roles are ",
      rolesToString(a_roles), " and ", rolesToString(b_roles), ".");
  FUSER_CHECK(
      a_batch.size() == b_batch.size(), "mma: ", a->toString(), " has ",
      a_batch.size(), " batch axes and ", b->toString(), " ", b_batch.size(),
      "; pair them (broadcast the operand that has fewer).");
  checkSameExtent(a_k[0], b_k[0], "K", a, b);
  std::vector<IterDomain*> out_ids;
  for (size_t i = 0; i < a_batch.size(); ++i) {
    IterDomain* pa = a_batch[i];
    IterDomain* pb = b_batch[i];
    if (pa->isBroadcast() || pb->isBroadcast()) {
      IterDomain* kept = pa->isBroadcast() ? pb : pa;
      out_ids.push_back(freshId(kept, kept->getIterType()));
      continue;
    }
    checkSameExtent(pa, pb, "batch", a, b);
    out_ids.push_back(
        freshId(pa->extent()->isConstInt() ? pa : pb, IterType::Iteration));
  }
  for (IterDomain* id : ms) {
    out_ids.push_back(freshId(id, id->getIterType()));
  }
  for (IterDomain* id : ns) {
    out_ids.push_back(freshId(id, id->getIterType()));
  }
  out_ids.push_back(freshId(
      a_k[0]->extent()->isConstInt() ? a_k[0] : b_k[0], IterType::Reduction));
  auto* domain = IrBuilder::create<TensorDomain>(
      out_ids, TensorDomain::getContiguityFilledWith(out_ids, true));
  const DataType accumulate =
      a->dtype() == DataType::Double ? DataType::Double : DataType::Float;
  auto* out = IrBuilder::create<TensorView>(domain, accumulate);
  IrBuilder::create<MmaOp>(out, a, b, a_roles, b_roles);
  return out;
}

TensorView* matmul(TensorView* a, TensorView* b) {
  FUSER_CHECK(a != nullptr && b != nullptr, "matmul of a null tensor.");
  const auto ra = static_cast<int64_t>(
      TensorDomain::noReductions(a->getLogicalDomain()).size());
  const auto rb = static_cast<int64_t>(
      TensorDomain::noReductions(b->getLogicalDomain()).size());
  FUSER_CHECK(
      ra >= 1 && rb >= 1, "matmul of ", a->toString(), " and ", b->toString(),
      ": both operands need at least one axis (torch.matmul).");
  // Batch axes: all but the last two of an operand of rank >= 3. A batch
  // of `a` alone is part of its rows; a batch of `b` alone pairs with
  // broadcast axes added to `a`.
  const int64_t a_batch = std::max<int64_t>(0, ra - 2);
  const int64_t b_batch = std::max<int64_t>(0, rb - 2);
  std::vector<MmaRole> a_roles, b_roles;
  if (b_batch == 0) {
    a_roles.assign(static_cast<size_t>(ra - 1), MmaRole::M);
  } else {
    const int64_t batches = std::max(a_batch, b_batch);
    if (a_batch < batches) {
      std::vector<bool> flags(static_cast<size_t>(batches - a_batch), true);
      flags.resize(static_cast<size_t>(batches - a_batch + ra), false);
      a = broadcast(a, flags);
    }
    if (b_batch < batches) {
      std::vector<bool> flags(static_cast<size_t>(batches - b_batch), true);
      flags.resize(static_cast<size_t>(batches - b_batch + rb), false);
      b = broadcast(b, flags);
    }
    a_roles.assign(static_cast<size_t>(batches), MmaRole::Batch);
    b_roles.assign(static_cast<size_t>(batches), MmaRole::Batch);
    if (ra >= 2) {
      a_roles.push_back(MmaRole::M);
    }
  }
  a_roles.push_back(MmaRole::K);
  b_roles.push_back(MmaRole::K);
  if (rb >= 2) {
    b_roles.push_back(MmaRole::N);
  }
  TensorView* out = mma(a, b, a_roles, b_roles);
  return castOp(a->dtype(), out);
}

TensorView* linear(TensorView* x, TensorView* weight, TensorView* bias) {
  FUSER_CHECK(x != nullptr && weight != nullptr, "linear of a null tensor.");
  const auto rx = TensorDomain::noReductions(x->getLogicalDomain()).size();
  const auto rw = TensorDomain::noReductions(weight->getLogicalDomain()).size();
  FUSER_CHECK(
      rx >= 1 && (rw == 1 || rw == 2), "linear(", x->toString(), ", ",
      weight->toString(),
      "): the input needs at least one axis and the "
      "weight one or two ([out_features, in_features]).");
  std::vector<MmaRole> x_roles(rx, MmaRole::M);
  x_roles.back() = MmaRole::K;
  std::vector<MmaRole> w_roles =
      rw == 2 ? std::vector<MmaRole>{MmaRole::N, MmaRole::K}
              : std::vector<MmaRole>{MmaRole::K};
  TensorView* out = mma(x, weight, x_roles, w_roles);
  if (bias != nullptr) {
    const auto rbias =
        TensorDomain::noReductions(bias->getLogicalDomain()).size();
    const size_t rout =
        TensorDomain::noReductions(out->getLogicalDomain()).size();
    FUSER_CHECK(
        rbias <= 1 && (rbias == 0 || rw == 2), "linear: the bias ",
        bias->toString(), " must have one axis (out_features) or none.");
    TensorView* b = bias;
    if (rbias < rout) {
      std::vector<bool> flags(rout, true);
      if (rbias == 1) {
        flags.back() = false;
      }
      b = broadcast(bias, flags);
    }
    out = add(out, b);
  }
  return castOp(x->dtype(), out);
}

} // namespace fuser
