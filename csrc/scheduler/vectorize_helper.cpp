#include <scheduler/vectorize_helper.h>

#include <ir/all_nodes.h>
#include <layout/allocation_folding.h>

#include <algorithm>

namespace fuser {

namespace {

// The logical ID `id` derives from, or nullptr when it mixes several.
IterDomain* logicalAncestor(
    IterDomain* id, const std::vector<IterDomain*>& logical) {
  while (std::find(logical.begin(), logical.end(), id) == logical.end()) {
    Expr* def = id->definition();
    if (def == nullptr || def->inputs().size() != 1) {
      return nullptr;
    }
    id = def->input(0)->as<IterDomain>();
  }
  return id;
}

} // namespace

std::optional<std::vector<int64_t>> allocationOrderOfLogical(
    const TensorView* tv) {
  const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
  std::vector<int64_t> order;
  for (const FoldedAllocationAxis& axis : foldedAllocationAxes(tv)) {
    IterDomain* ancestor = logicalAncestor(axis.id, logical);
    if (ancestor == nullptr) {
      return std::nullopt;
    }
    auto pos = static_cast<int64_t>(
        std::find(logical.begin(), logical.end(), ancestor) - logical.begin());
    if (std::find(order.begin(), order.end(), pos) == order.end()) {
      order.push_back(pos);
    }
  }
  return order;
}

InnerRun contiguousInnerRun(
    const TensorView* tv, const std::vector<IterDomain*>& loop_ids,
    RuntimeInfo& runtime_info) {
  InnerRun run;
  if (loop_ids.empty() || loop_ids.back() == nullptr ||
      loop_ids.back()->isBroadcast()) {
    run.elements = 0;
    return run;
  }
  const MemoryAxes memory = memoryAxes(tv);
  // Walk the loop and the contiguous innermost memory axes from the
  // innermost end together (the same matching lowering does on the loop's
  // merges, csrc/device_lower/analysis/vectorization.h).
  size_t matched = 0;
  // A loop axis along which `tv` does not advance ends the run.
  for (auto pos = loop_ids.rbegin(); pos != loop_ids.rend(); ++pos) {
    IterDomain* expected = *pos;
    if (expected == nullptr || expected->isBroadcast() ||
        matched == memory.contiguous_suffix ||
        memory.axes[memory.axes.size() - 1 - matched].id != expected) {
      break;
    }
    run.elements *= runtime_info.extent(expected);
    ++matched;
  }
  if (const TensorRuntimeInfo* info = runtime_info.tensorInfo(tv)) {
    for (size_t k : memory.stridesOutsideRun(matched)) {
      run.between_runs.sizes.push_back(info->layout.allocation_sizes.at(k));
      run.between_runs.strides.push_back(info->layout.allocation_strides.at(k));
    }
  }
  return run;
}

int64_t widestVectorWidth(
    int64_t widest, int64_t inner_extent,
    const std::vector<std::pair<TensorView*, InnerRun>>& runs,
    RuntimeInfo& runtime_info) {
  auto allowed = [&](int64_t v) {
    if (inner_extent % v != 0) {
      return false;
    }
    for (const auto& [tv, run] : runs) {
      const TensorRuntimeInfo* info = runtime_info.tensorInfo(tv);
      if (!vectorAccessViolation(
               v, dataTypeSize(tv->dtype()), run.elements, run.between_runs,
               info ? info->alignment_bytes : 16)
               .empty()) {
        return false;
      }
    }
    return true;
  };
  int64_t width = widest;
  while (width > 1 && !allowed(width)) {
    width /= 2;
  }
  return std::max<int64_t>(width, 1);
}

} // namespace fuser
