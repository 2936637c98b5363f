#include <runtime/output_allocation.h>

#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <runtime/aten_types.h>
#include <runtime/local_extents.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <unordered_map>

namespace fuser {

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

std::vector<int64_t> logicalStridesFromAllocation(
    const TensorView* tv, const std::vector<int64_t>& allocation_strides,
    const std::function<int64_t(const IterDomain*)>& local_size) {
  const auto allocation =
      TensorDomain::noReductions(tv->getMaybeAllocationDomain());
  FUSER_INTERNAL_ASSERT(
      allocation.size() == allocation_strides.size(), "expected ",
      allocation.size(), " allocation strides for ", tv->toString(), ", got ",
      allocation_strides.size());
  std::unordered_map<const IterDomain*, int64_t> strides;
  for (size_t i = 0; i < allocation.size(); ++i) {
    strides[allocation[i]] = allocation_strides[i];
  }
  auto known = [&](const IterDomain* id) { return strides.count(id) != 0; };

  const auto exprs =
      getExprsBetween(tv->getLogicalDomain(), tv->getMaybeAllocationDomain());
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    if (auto* split = dynamic_cast<Split*>(*it)) {
      IterDomain* outer = split->outer();
      IterDomain* inner = split->inner();
      // Reduction IDs have no place in memory; neither do their sources.
      if (!known(outer) || !known(inner)) {
        continue;
      }
      if (inner->isDeviceDim()) {
        strides[split->in()] = strides.at(outer);
        continue;
      }
      if (!outer->isDeviceDim() && local_size(outer) > 1) {
        FUSER_INTERNAL_ASSERT(
            strides.at(outer) == strides.at(inner) * local_size(inner),
            "split ", split->toString(), " of ", tv->toString(),
            " is not contiguous in memory: stride of the outer part ",
            strides.at(outer), " vs inner stride ", strides.at(inner),
            " times size ", local_size(inner));
      }
      strides[split->in()] = strides.at(inner);
      continue;
    }
    auto* merge = (*it)->as<Merge>();
    if (!known(merge->out())) {
      continue;
    }
    const int64_t stride = strides.at(merge->out());
    strides[merge->inner()] = stride;
    strides[merge->outer()] = stride * local_size(merge->inner());
  }

  std::vector<int64_t> logical_strides;
  for (IterDomain* id : TensorDomain::noReductions(tv->getLogicalDomain())) {
    FUSER_INTERNAL_ASSERT(
        known(id), "logical ", id->toString(), " of ", tv->toString(),
        " is not reached from its allocation domain");
    logical_strides.push_back(strides.at(id));
  }
  return logical_strides;
}

std::vector<int64_t> logicalSizes(
    const TensorView* tv, ExpressionEvaluator& ee) {
  return LocalExtents(tv, ee).logicalSizes();
}

at::Tensor allocateOutput(
    const TensorView* tv, ExpressionEvaluator& ee,
    const at::TensorOptions& options) {
  const LocalExtents extents(tv, ee);
  const std::vector<int64_t> allocation_sizes = extents.allocationSizes();
  const std::vector<int64_t> logical_strides = logicalStridesFromAllocation(
      tv, contiguousStrides(allocation_sizes),
      [&](const IterDomain* id) { return extents.localExtent(id); });
  int64_t numel = 1;
  for (int64_t size : allocation_sizes) {
    numel *= size;
  }
  at::Tensor buffer =
      at::empty({numel}, options.dtype(toAtenType(tv->dtype())));
  return buffer.as_strided(extents.logicalSizes(), logical_strides);
}

} // namespace fuser
