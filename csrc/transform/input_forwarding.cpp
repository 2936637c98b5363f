#include <transform/input_forwarding.h>

#include <ir/all_nodes.h>
#include <ops/rebuild.h>

#include <set>
#include <unordered_map>
#include <vector>

namespace fuser {

namespace {

// More full-size inputs than this make a copy read more than a write and a
// read of the tensor would.
constexpr size_t kMaxFullSizeInputs = 2;

// A new computation of `tv` from the fusion inputs.
Val* copyFromInputs(TensorView* tv) {
  Expr* def = tv->definition();
  std::vector<Val*> inputs;
  for (Val* in : def->inputs()) {
    auto* in_tv = dynamic_cast<TensorView*>(in);
    inputs.push_back(
        in_tv == nullptr || in_tv->isFusionInput() ? in
                                                   : copyFromInputs(in_tv));
  }
  Val* copy = rebuildPointwise(def, inputs);
  FUSER_INTERNAL_ASSERT(copy != nullptr, "cannot recompute ", tv->toString());
  return copy;
}

} // namespace

int64_t forwardPointwiseChainsFromInputs(Fusion* fusion) {
  FusionGuard fg(fusion);
  // Per tensor computed from inputs by pointwise ops: the inputs of its
  // rank it reads.
  std::unordered_map<Val*, std::set<Val*>> full_size_inputs;
  std::vector<TensorView*> order;
  for (Expr* expr : fusion->exprs()) {
    auto* out = dynamic_cast<TensorView*>(expr->output(0));
    if (out == nullptr || !canRebuildPointwise(expr)) {
      continue;
    }
    std::set<Val*> reads;
    bool from_inputs = true;
    for (Val* in : expr->inputs()) {
      auto* tv = dynamic_cast<TensorView*>(in);
      if (tv == nullptr) {
        continue;
      }
      if (tv->isFusionInput()) {
        if (rankOf(tv) == rankOf(out)) {
          reads.insert(tv);
        }
      } else if (auto it = full_size_inputs.find(tv);
                 it != full_size_inputs.end()) {
        reads.insert(it->second.begin(), it->second.end());
      } else {
        from_inputs = false;
      }
    }
    if (from_inputs && reads.size() <= kMaxFullSizeInputs) {
      full_size_inputs.emplace(out, std::move(reads));
      order.push_back(out);
    }
  }
  int64_t copies = 0;
  for (TensorView* tv : order) {
    // A layout the user gave an intermediate is one to write it in.
    if (tv->isFusionOutput() || tv->hasAllocation() || tv->uses().size() < 2) {
      continue;
    }
    // A copy: replaceInput edits the uses.
    const std::vector<Expr*> uses = tv->uses();
    for (size_t i = 1; i < uses.size(); ++i) {
      fusion->replaceInput(uses[i], tv, copyFromInputs(tv));
      ++copies;
    }
  }
  return copies;
}

} // namespace fuser
