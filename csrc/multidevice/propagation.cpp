#include <multidevice/propagation.h>

#include <ir/all_nodes.h>
#include <ir/mma_op.h>
#include <multidevice/sharding.h>

#include <optional>

namespace fuser {

namespace {

bool isSum(const Expr* expr) {
  if (auto* reduction = dynamic_cast<const ReductionOp*>(expr)) {
    return reduction->opType() == ReductionOpType::Sum;
  }
  return dynamic_cast<const MmaOp*>(expr) != nullptr;
}

// A sum of partial sums taken elementwise stays a partial sum through ops
// linear in it alone: a cast, a copy, a negation.
bool keepsPartialSums(const Expr* expr) {
  if (auto* uop = dynamic_cast<const UnaryOp*>(expr)) {
    return uop->opType() == UnaryOpType::Cast ||
           uop->opType() == UnaryOpType::Neg;
  }
  auto* ldst = dynamic_cast<const LoadStoreOp*>(expr);
  return ldst != nullptr && ldst->opType() == LoadStoreOpType::Set;
}

// The sharding `consumer` inherits from `producer`: its split axis where
// that maps to one of the consumer's axes (a partial sum where the consumer
// sums it away), or its partial sums through a linear op.
std::optional<Sharding> inherited(TensorView* producer, TensorView* consumer) {
  const Sharding from = shardingOf(producer);
  if (from.partial) {
    if (keepsPartialSums(consumer->definition())) {
      return from;
    }
    return std::nullopt;
  }
  IterDomain* id = splitAxisInConsumer(producer, consumer);
  if (id == nullptr) {
    return std::nullopt;
  }
  Sharding to{from.mesh};
  if (id->isReduction()) {
    if (!isSum(consumer->definition())) {
      // A max or min of partial results is not their sum: the producer is
      // gathered instead (multidevice/resharding.h).
      return std::nullopt;
    }
    to.partial = true;
    return to;
  }
  to.axis = logicalPosition(consumer, id);
  return to;
}

const DeviceMesh* firstMesh(const std::vector<Val*>& vals) {
  for (Val* val : vals) {
    auto* tv = dynamic_cast<TensorView*>(val);
    if (tv != nullptr && tv->hasDeviceMesh()) {
      return &tv->getDeviceMesh();
    }
  }
  return nullptr;
}

} // namespace

void propagateShardings(Fusion* fusion) {
  FusionGuard fg(fusion);
  const DeviceMesh* fusion_mesh = firstMesh(fusion->inputs());
  if (fusion_mesh == nullptr) {
    fusion_mesh = firstMesh(fusion->vals());
  }
  if (fusion_mesh == nullptr) {
    return;
  }
  const DeviceMesh mesh = *fusion_mesh;
  for (Val* in : fusion->inputs()) {
    auto* tv = dynamic_cast<TensorView*>(in);
    if (tv == nullptr) {
      continue;
    }
    Sharding sharding = shardingOf(tv);
    if (sharding.mesh.empty()) {
      sharding.mesh = mesh;
    }
    shard(tv, sharding);
  }
  for (Expr* expr : fusion->exprs()) {
    for (Val* out_val : expr->outputs()) {
      auto* out = dynamic_cast<TensorView*>(out_val);
      if (out == nullptr) {
        continue;
      }
      if (out->hasDeviceMesh()) {
        shard(out, shardingOf(out));
        continue;
      }
      std::optional<Sharding> sharding;
      const DeviceMesh* input_mesh = firstMesh(expr->inputs());
      for (Val* in : expr->inputs()) {
        auto* producer = dynamic_cast<TensorView*>(in);
        if (producer != nullptr && !sharding.has_value()) {
          sharding = inherited(producer, out);
        }
      }
      if (!sharding.has_value()) {
        sharding = Sharding{input_mesh != nullptr ? *input_mesh : mesh};
      }
      shard(out, *sharding);
    }
  }
}

} // namespace fuser
