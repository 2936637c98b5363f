#include <scheduler/reduction_layout.h>

#include <base/strings_and_math.h>
#include <id_model/id_model.h>
#include <ir/all_nodes.h>
#include <scheduler/utils.h>
#include <scheduler/vectorize_helper.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <utility>

namespace fuser {

ReductionLayout reductionLayout(
    Fusion* fusion, TensorView* reduced, RuntimeInfo& runtime_info,
    const std::vector<TensorView*>& also_vectorized) {
  ReductionLayout layout;
  const auto& logical = reduced->getLogicalDomain();
  const auto rank = static_cast<int64_t>(logical.size());

  // Memory order: the largest input of the reduction's rank.
  std::vector<int64_t> order(static_cast<size_t>(rank));
  std::iota(order.begin(), order.end(), 0);
  TensorView* largest = nullptr;
  for (TensorView* tv : scheduler_utils::tensorInputs(fusion)) {
    auto tv_order = allocationOrderOfLogical(tv);
    if (static_cast<int64_t>(tv_order ? tv_order->size() : 0) != rank) {
      continue;
    }
    if (largest == nullptr ||
        runtime_info.numel(tv) > runtime_info.numel(largest)) {
      largest = tv;
      order = *tv_order;
    }
  }
  for (int64_t p : order) {
    IterDomain* id = logical[static_cast<size_t>(p)];
    const int64_t extent = runtime_info.extent(id);
    if (id->isReduction()) {
      layout.reduced_axes.push_back(p);
      layout.reduced_elements *= extent;
    } else {
      layout.kept_axes.push_back(p);
      layout.kept_elements *= extent;
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    IterDomain* id = logical[static_cast<size_t>(*it)];
    if (runtime_info.extent(id) > 1) {
      layout.inner = id->isReduction();
      break;
    }
  }

  // Vectors along the innermost merged axis, read in the loop order.
  std::vector<int64_t> loop_order =
      layout.inner ? layout.kept_axes : layout.reduced_axes;
  const auto& inner_part =
      layout.inner ? layout.reduced_axes : layout.kept_axes;
  loop_order.insert(loop_order.end(), inner_part.begin(), inner_part.end());
  const int64_t inner_elements =
      layout.inner ? layout.reduced_elements : layout.kept_elements;
  std::vector<TensorView*> accessed;
  int64_t loaded_registers = 0;
  for (TensorView* tv : scheduler_utils::tensorInputs(fusion)) {
    if (!tv->uses().empty()) {
      accessed.push_back(tv);
      if (static_cast<int64_t>(
              TensorDomain::noReductions(tv->getLogicalDomain()).size()) ==
          rank) {
        loaded_registers +=
            ceilDiv(std::max<int64_t>(4, dataTypeSize(tv->dtype())), 4);
      }
    }
  }
  layout.registers_per_loaded_element = std::max<int64_t>(1, loaded_registers);
  accessed.insert(
      accessed.end(), also_vectorized.begin(), also_vectorized.end());
  // The axes of a tensor of another rank in `also_vectorized` (a weight
  // broadcast along the kept axes) are those exact-mapped to the
  // reduction's.
  std::optional<IdModel> id_model;
  auto mappedIds = [&](TensorView* tv,
                       const std::vector<IterDomain*>& tv_logical) {
    if (!id_model) {
      id_model.emplace(fusion);
    }
    std::vector<IterDomain*> ids;
    for (int64_t p : loop_order) {
      IterDomain* match = nullptr;
      for (IterDomain* id : tv_logical) {
        if (!id->isBroadcast() &&
            id_model->exactMapped(id, logical[static_cast<size_t>(p)])) {
          match = id;
        }
      }
      ids.push_back(match);
    }
    return ids;
  };
  std::vector<std::pair<TensorView*, InnerRun>> candidates;
  for (TensorView* tv : accessed) {
    const auto tv_logical = TensorDomain::noReductions(tv->getLogicalDomain());
    std::vector<IterDomain*> ids;
    if (static_cast<int64_t>(tv_logical.size()) == rank) {
      for (int64_t p : loop_order) {
        IterDomain* id = tv_logical[static_cast<size_t>(p)];
        ids.push_back(id->isBroadcast() ? nullptr : id);
      }
    } else if (
        std::find(also_vectorized.begin(), also_vectorized.end(), tv) !=
        also_vectorized.end()) {
      ids = mappedIds(tv, tv_logical);
    } else {
      continue;
    }
    InnerRun run = contiguousInnerRun(tv, ids, runtime_info);
    // A tensor of another rank broadcast along the vector axis (one value
    // per row) is not read in vectors, and does not narrow them.
    if (static_cast<int64_t>(tv_logical.size()) != rank && run.elements == 0) {
      continue;
    }
    layout.max_bytes = std::max(layout.max_bytes, dataTypeSize(tv->dtype()));
    if (run.elements == 1) {
      // Read or written an element at a time: every tensor of the rank
      // takes the same vector axis (a strided row), so none can.
      candidates.clear();
      break;
    }
    if (run.elements > 1) {
      candidates.emplace_back(tv, run);
    }
  }
  layout.vectorize = candidates.empty()
                         ? 1
                         : widestVectorWidth(
                               16 / layout.max_bytes, inner_elements,
                               candidates, runtime_info);
  return layout;
}

void mergeReductionAxes(
    TensorView* reference, const std::vector<int64_t>& first,
    const std::vector<int64_t>& second) {
  // The positions name logical axes; the loop may order them otherwise
  // (reduction ops put their reduced axes last).
  const auto& logical = reference->getLogicalDomain();
  const auto& loop = reference->getLoopDomain();
  auto loop_position = [&](int64_t logical_position) {
    auto it = std::find(
        loop.begin(), loop.end(),
        logical[static_cast<size_t>(logical_position)]);
    FUSER_INTERNAL_ASSERT(it != loop.end(), "reduction loop is scheduled");
    return static_cast<int64_t>(it - loop.begin());
  };
  std::unordered_map<int64_t, int64_t> old2new;
  int64_t position = 0;
  for (int64_t p : first) {
    old2new[loop_position(p)] = position++;
  }
  for (int64_t p : second) {
    old2new[loop_position(p)] = position++;
  }
  reference->reorder(old2new);
  const auto n_first = static_cast<int64_t>(first.size());
  const auto n_second = static_cast<int64_t>(second.size());
  for (int64_t k = 1; k < n_first; ++k) {
    reference->merge(0);
  }
  const int64_t s = n_first > 0 ? 1 : 0; // where the second group starts
  for (int64_t k = 1; k < n_second; ++k) {
    reference->merge(s);
  }
}

ReductionLayout persistentRowLayout(
    Fusion* fusion, TensorView* reduced, RuntimeInfo& runtime_info) {
  const auto rank = static_cast<int64_t>(reduced->getLogicalDomain().size());
  std::vector<TensorView*> vectorized =
      scheduler_utils::outputsOfRank(fusion, rank);
  for (TensorView* tv : scheduler_utils::inputsBelowRank(fusion, rank)) {
    vectorized.push_back(tv);
  }
  return reductionLayout(fusion, reduced, runtime_info, vectorized);
}

} // namespace fuser
