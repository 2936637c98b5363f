#include <layout/tensor_layout.h>

#include <base/strings_and_math.h>
#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <layout/device_counts.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <numeric>
#include <sstream>
#include <unordered_map>

namespace fuser {

namespace {

std::atomic<int64_t> input_layouts{0};

} // namespace

int64_t inputLayoutCount() {
  return input_layouts.load();
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

namespace {

int64_t product(const std::vector<int64_t>& values) {
  return std::accumulate(
      values.begin(), values.end(), int64_t{1}, std::multiplies<>());
}

// The values of `tv`'s allocation IDs (reductions left out), outermost
// first.
std::vector<int64_t> allocationOf(
    const TensorView* tv,
    const std::unordered_map<const IterDomain*, int64_t>& values) {
  std::vector<int64_t> result;
  for (IterDomain* id :
       TensorDomain::noReductions(tv->getMaybeAllocationDomain())) {
    FUSER_INTERNAL_ASSERT(
        values.count(id), "allocation ", id->toString(), " of ", tv->toString(),
        " is not derived from its logical domain");
    result.push_back(values.at(id));
  }
  return result;
}

// The logical extents kernels see: a sharded axis counts every device's
// part.
std::vector<int64_t> globalSizes(
    const TensorView* tv, const std::vector<int64_t>& local_sizes,
    ExpressionEvaluator& ee) {
  const DeviceCounts devices(tv, ee);
  const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
  std::vector<int64_t> result;
  for (size_t i = 0; i < logical.size(); ++i) {
    result.push_back(
        logical[i]->isBroadcast() ? 1
                                  : local_sizes[i] * devices.of(logical[i]));
  }
  return result;
}

// Strides of `tv`'s logical IDs (reductions left out) given strides of its
// allocation IDs, found by replaying allocation -> logical backwards: a
// split's input takes its inner's stride (its outer's when the inner is
// device-parallel), a merge's inner takes the output's stride and its
// outer that times the inner's size. `local_size` gives the per-device size
// of an ID.
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

// How to turn a tensor into one laid out as `tv` declares, given the
// strides such a tensor has for these sizes.
std::string layoutFix(
    const TensorView* tv, const std::vector<int64_t>& logical_sizes,
    const std::vector<int64_t>& expected_strides) {
  const std::string with_strides =
      " The result has strides " + listToString(expected_strides) + ".";
  if (expected_strides == contiguousStrides(logical_sizes)) {
    return "call .contiguous() on it." + with_strides;
  }
  const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
  const auto allocation =
      TensorDomain::noReductions(tv->getMaybeAllocationDomain());
  const bool is_permutation = getExprsBetween(logical, allocation).empty() &&
                              logical.size() == allocation.size();
  if (is_permutation) {
    // permutation[k]: the logical axis stored at allocation position k.
    std::vector<int64_t> permutation;
    for (IterDomain* id : allocation) {
      permutation.push_back(
          std::find(logical.begin(), logical.end(), id) - logical.begin());
    }
    if (permutation == std::vector<int64_t>{0, 2, 3, 1}) {
      return "call .contiguous(memory_format=torch.channels_last) on it (in "
             "C++: .contiguous(at::MemoryFormat::ChannelsLast))." +
             with_strides;
    }
    if (permutation == std::vector<int64_t>{0, 2, 3, 4, 1}) {
      return "call .contiguous(memory_format=torch.channels_last_3d) on it "
             "(in C++: .contiguous(at::MemoryFormat::ChannelsLast3d))." +
             with_strides;
    }
    std::vector<int64_t> inverse(permutation.size());
    for (size_t k = 0; k < permutation.size(); ++k) {
      inverse[static_cast<size_t>(permutation[k])] = static_cast<int64_t>(k);
    }
    return "lay it out in allocation order: t.permute(" +
           listToString(permutation) + ").contiguous().permute(" +
           listToString(inverse) + ")." + with_strides;
  }
  return "copy it into a tensor laid out as declared: at::empty_strided(" +
         listToString(logical_sizes) + ", " + listToString(expected_strides) +
         ").copy_(t).";
}

} // namespace

TensorLayout stridedLayout(
    const TensorView* tv, const std::vector<int64_t>& tensor_sizes,
    const std::vector<int64_t>& tensor_strides, ExpressionEvaluator& ee,
    const LayoutFailure& failure) {
  ++input_layouts;
  const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
  const auto& maybe_allocation = tv->getMaybeAllocationDomain();
  const auto allocation = TensorDomain::noReductions(maybe_allocation);
  const auto exprs = getExprsBetween(tv->getLogicalDomain(), maybe_allocation);
  FUSER_INTERNAL_ASSERT(
      tensor_sizes.size() == logical.size() &&
          tensor_strides.size() == logical.size(),
      "stridedLayout of ", tv->toString(), ": ", tensor_sizes.size(),
      " sizes and ", tensor_strides.size(), " strides for ", logical.size(),
      " logical IDs");
  // `failure` throws; the lambda tells the compiler so.
  auto fail = [&](const std::string& problem, const std::string& expected,
                  const std::string& fix) {
    failure(problem, expected, fix);
    FUSER_ERROR("a LayoutFailure returned");
  };

  // Pass 1: sizes. Device-parallel IDs have size 1: the tensor is the shard.
  std::unordered_map<const IterDomain*, int64_t> sizes;
  for (size_t i = 0; i < logical.size(); ++i) {
    sizes[logical[i]] = tensor_sizes[i];
  }
  for (Expr* expr : exprs) {
    if (auto* split = dynamic_cast<Split*>(expr)) {
      if (!sizes.count(split->in())) {
        continue;
      }
      const int64_t size = sizes.at(split->in());
      if (split->outer()->isDeviceDim() || split->inner()->isDeviceDim()) {
        const bool outer_is_device = split->outer()->isDeviceDim();
        sizes[split->outer()] = outer_is_device ? 1 : size;
        sizes[split->inner()] = outer_is_device ? size : 1;
        continue;
      }
      auto factor_value = ee.evaluate(split->factor());
      if (!factor_value.has_value()) {
        fail(
            "the split factor " + split->factor()->toInlineString() + " of " +
                split->in()->toString() + " is not bound.",
            "a known split factor.",
            "pass the factor as a fusion input or use a constant.");
      }
      const int64_t factor = factor_value->asInt();
      FUSER_CHECK(
          factor > 0, "Split factor ", factor, " of ", split->toString(),
          " must be positive.");
      if (size % factor != 0) {
        const int64_t rounded_up = (size + factor - 1) / factor * factor;
        fail(
            "the allocation domain splits " + split->in()->toString() +
                " (size " + std::to_string(size) + " in this tensor) by " +
                std::to_string(factor) + ", which does not divide it.",
            "a size divisible by " + std::to_string(factor) + " along " +
                split->in()->toString() + ".",
            "pass a size divisible by " + std::to_string(factor) + " (e.g. " +
                std::to_string(rounded_up) +
                "), or declare the allocation without this split.");
      }
      const int64_t outer = split->innerSplit() ? size / factor : factor;
      sizes[split->outer()] = outer;
      sizes[split->inner()] = size / outer;
      continue;
    }
    auto* merge = expr->as<Merge>();
    if (sizes.count(merge->outer()) && sizes.count(merge->inner())) {
      sizes[merge->out()] = sizes.at(merge->outer()) * sizes.at(merge->inner());
    }
  }
  TensorLayout result;
  result.sizes = tensor_sizes;
  result.strides = tensor_strides;
  result.global_sizes = globalSizes(tv, result.sizes, ee);
  result.allocation_sizes = allocationOf(tv, sizes);
  result.buffer_numel = product(result.allocation_sizes);
  auto size_of = [&](const IterDomain* id) {
    auto it = sizes.find(id);
    return it == sizes.end() ? int64_t(1) : it->second;
  };
  // The strides of a tensor laid out as declared, for the messages.
  auto expected_strides = [&]() {
    return logicalStridesFromAllocation(
        tv, contiguousStrides(result.allocation_sizes), size_of);
  };
  auto declared_layout = [&]() {
    return "strides " + listToString(expected_strides()) +
           " for these sizes (a tensor laid out as declared).";
  };
  auto fix_layout = [&]() {
    return layoutFix(tv, tensor_sizes, expected_strides());
  };

  // Pass 2: strides.
  std::unordered_map<const IterDomain*, int64_t> strides;
  for (size_t i = 0; i < logical.size(); ++i) {
    strides[logical[i]] = tensor_strides[i];
  }
  for (Expr* expr : exprs) {
    if (auto* split = dynamic_cast<Split*>(expr)) {
      if (!strides.count(split->in())) {
        continue;
      }
      const int64_t stride = strides.at(split->in());
      if (split->outer()->isDeviceDim()) {
        strides[split->outer()] = stride * size_of(split->in());
        strides[split->inner()] = stride;
      } else {
        strides[split->outer()] = stride * size_of(split->inner());
        strides[split->inner()] = stride;
      }
      continue;
    }
    auto* merge = expr->as<Merge>();
    IterDomain* outer = merge->outer();
    IterDomain* inner = merge->inner();
    if (!strides.count(outer) || !strides.count(inner)) {
      continue;
    }
    if (size_of(outer) == 1) {
      strides[merge->out()] = strides.at(inner);
    } else if (size_of(inner) == 1) {
      strides[merge->out()] = strides.at(outer);
    } else {
      const int64_t needed = strides.at(inner) * size_of(inner);
      if (strides.at(outer) != needed) {
        fail(
            "the allocation domain merges " + outer->toString() + " (size " +
                std::to_string(size_of(outer)) + ", stride " +
                std::to_string(strides.at(outer)) + ") with " +
                inner->toString() + " (size " + std::to_string(size_of(inner)) +
                ", stride " + std::to_string(strides.at(inner)) +
                "), which needs the outer stride to be " +
                std::to_string(needed) + ".",
            declared_layout(), fix_layout());
      }
      strides[merge->out()] = strides.at(inner);
    }
  }
  result.allocation_strides = allocationOf(tv, strides);

  // Contiguity: walk from the innermost ID outwards. Nothing is addressed
  // in an empty tensor, so its strides are not checked.
  const bool empty = product(tensor_sizes) == 0;
  const Contiguity& contiguity = tv->getContiguity();
  bool has_inner = false;
  int64_t inner_size = 1;
  int64_t inner_stride = 1;
  const IterDomain* inner_id = nullptr;
  size_t position = allocation.size();
  for (size_t k = maybe_allocation.size(); k-- > 0;) {
    IterDomain* id = maybe_allocation[k];
    if (id->isReduction()) {
      continue;
    }
    --position;
    if (id->isBroadcast()) {
      continue;
    }
    const int64_t expected = has_inner ? inner_size * inner_stride : 1;
    const int64_t size = result.allocation_sizes[position];
    int64_t& stride = result.allocation_strides[position];
    if (size == 1) {
      stride = expected;
    } else if (
        !empty && k < contiguity.size() && contiguity[k].value_or(false) &&
        stride != expected) {
      const std::string why =
          has_inner ? " (the size " + std::to_string(inner_size) +
                          " times the stride " + std::to_string(inner_stride) +
                          " of the next inner ID " + inner_id->toString() + ")"
                    : " (it is the innermost ID)";
      fail(
          "allocation ID " + id->toString() +
              " is marked contiguous, so its stride must be " +
              std::to_string(expected) + why + ", but the tensor's stride is " +
              std::to_string(stride) + ".",
          declared_layout(), fix_layout());
    }
    has_inner = true;
    inner_size = size;
    inner_stride = stride;
    inner_id = id;
  }
  return result;
}

TensorLayout denseLayout(const TensorView* tv, ExpressionEvaluator& ee) {
  const DeviceCounts devices(tv, ee);
  auto local_size = [&](const IterDomain* id) -> int64_t {
    if (id->isDeviceDim() || id->isBroadcast()) {
      return 1;
    }
    const int64_t extent = ee.evaluateOrThrow(id->extent()).asInt();
    const int64_t count = devices.of(id);
    FUSER_CHECK(
        extent % count == 0, id->toString(), " of ", tv->toString(),
        " has extent ", extent, ", which is not divisible by the ", count,
        " devices it is sharded over. Use an extent divisible by ", count, ".");
    return extent / count;
  };
  TensorLayout layout;
  for (IterDomain* id : TensorDomain::noReductions(tv->getLogicalDomain())) {
    layout.sizes.push_back(local_size(id));
  }
  layout.global_sizes = globalSizes(tv, layout.sizes, ee);
  for (IterDomain* id :
       TensorDomain::noReductions(tv->getMaybeAllocationDomain())) {
    layout.allocation_sizes.push_back(local_size(id));
  }
  layout.allocation_strides = contiguousStrides(layout.allocation_sizes);
  layout.strides =
      logicalStridesFromAllocation(tv, layout.allocation_strides, local_size);
  layout.buffer_numel = product(layout.allocation_sizes);
  return layout;
}

} // namespace fuser
