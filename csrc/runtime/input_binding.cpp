#include <runtime/input_binding.h>

#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <runtime/aten_types.h>
#include <runtime/local_extents.h>
#include <runtime/output_allocation.h>

#include <algorithm>
#include <numeric>
#include <sstream>
#include <unordered_map>

namespace fuser {

namespace {

template <typename Sequence>
std::string listToString(const Sequence& values) {
  std::ostringstream os;
  os << "[";
  bool first = true;
  for (const auto& value : values) {
    os << (first ? "" : ", ") << value;
    first = false;
  }
  os << "]";
  return os.str();
}

std::string contiguityToString(const Contiguity& contiguity) {
  std::vector<std::string> flags;
  for (const auto& flag : contiguity) {
    flags.push_back(!flag.has_value() ? "n" : (*flag ? "t" : "f"));
  }
  return listToString(flags);
}

std::string describeInput(
    const TensorView* tv, const at::Tensor& tensor, int64_t position) {
  std::ostringstream os;
  // A negative position names an output (the executor checks the layout
  // of the tensors it allocates with the same code).
  if (position >= 0) {
    os << "Input " << position;
  } else {
    os << "An output";
  }
  os << " (" << tv->toString() << ")";
  if (tensor.defined()) {
    os << " has sizes " << listToString(tensor.sizes()) << " and strides "
       << listToString(tensor.strides());
  } else {
    os << " is an undefined tensor";
  }
  os << "; its declared allocation domain is "
     << idsToString(tv->getMaybeAllocationDomain()) << " with contiguity "
     << contiguityToString(tv->getContiguity()) << ".";
  return os.str();
}

void failInput(
    const TensorView* tv, const at::Tensor& tensor, int64_t position,
    const std::string& problem, const std::string& expected,
    const std::string& fix) {
  FUSER_CHECK(
      false, describeInput(tv, tensor, position), "\n  Problem: ", problem,
      "\n  Expected: ", expected, "\n  Fix: ", fix);
}

void checkRank(
    const TensorView* tv, const at::Tensor& tensor, int64_t position) {
  const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
  if (tensor.dim() != static_cast<int64_t>(logical.size())) {
    failInput(
        tv, tensor, position,
        "the tensor has rank " + std::to_string(tensor.dim()) +
            " but the fusion input has rank " + std::to_string(logical.size()) +
            " (logical domain " + idsToString(logical) + ").",
        "a tensor of rank " + std::to_string(logical.size()) + ".",
        "pass a tensor of that rank, or declare the input with " +
            std::to_string(tensor.dim()) + " axes.");
  }
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

void validateInputTensor(
    const TensorView* tv, const at::Tensor& tensor, int64_t input_position,
    bool require_cuda) {
  if (!tensor.defined()) {
    failInput(
        tv, tensor, input_position, "the tensor is undefined.",
        "a defined tensor.", "pass an allocated tensor.");
  }
  checkRank(tv, tensor, input_position);
  const DataType actual = fromAtenType(tensor.scalar_type());
  const DataType declared = tv->dtype();
  const bool index_ok = declared == DataType::Index &&
                        (actual == DataType::Int || actual == DataType::Int32);
  if (actual != declared && !index_ok) {
    failInput(
        tv, tensor, input_position,
        std::string("the tensor's dtype is ") +
            c10::toString(tensor.scalar_type()) +
            " but the input is declared " + toString(declared) + ".",
        std::string("a tensor of dtype ") +
            c10::toString(toAtenType(declared)) + ".",
        std::string("convert it with .to(") +
            c10::toString(toAtenType(declared)) + ") or declare the input as " +
            toString(actual) + ".");
  }
  if (require_cuda && !tensor.is_cuda()) {
    failInput(
        tv, tensor, input_position,
        "the tensor is on " + tensor.device().str() +
            ", but fusion kernels read CUDA tensors.",
        "a tensor on a CUDA device.", "move it with .cuda() or .to(\"cuda\").");
  }
}

void bindInputExtents(
    const TensorView* tv, const at::Tensor& tensor, ExpressionEvaluator& ee,
    int64_t input_position) {
  checkRank(tv, tensor, input_position);
  const LocalExtents extents(tv, ee);
  const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
  for (size_t i = 0; i < logical.size(); ++i) {
    IterDomain* id = logical[i];
    const int64_t size = tensor.size(static_cast<int64_t>(i));
    const std::string axis =
        "axis " + std::to_string(i) + " (" + id->toString() + ")";
    if (id->isBroadcast() || id->isDeviceDim()) {
      if (size != 1) {
        failInput(
            tv, tensor, input_position,
            axis + " is a " +
                (id->isBroadcast() ? std::string("broadcast")
                                   : std::string("device-parallel")) +
                " axis but the tensor's size there is " + std::to_string(size) +
                ".",
            "size 1 along " + axis + ".",
            "pass size 1 there, or declare the axis with a symbolic size "
            "(-1).");
      }
      continue;
    }
    const int64_t devices = extents.deviceCount(id);
    const int64_t global = size * devices;
    const std::string sharding =
        devices == 1
            ? ""
            : " (the local shard of " + std::to_string(size) + " on each of " +
                  std::to_string(devices) + " devices)";
    Val* extent = id->extent();
    if (auto known = ee.evaluate(extent)) {
      if (known->asInt() != global) {
        const std::string source = extent->isConst()
                                       ? "declared with the constant extent "
                                       : "bound by an earlier input to ";
        failInput(
            tv, tensor, input_position,
            axis + " is " + source + std::to_string(known->asInt()) +
                " but the tensor gives " + std::to_string(global) + sharding +
                ".",
            "a global extent of " + std::to_string(known->asInt()) + " along " +
                axis + ".",
            "pass a tensor of that size, or declare the axis with a symbolic "
            "size (-1).");
      }
      continue;
    }
    if (extent->definition() == nullptr) {
      ee.bind(extent, ScalarValue(global));
    }
    // An extent computed from other values cannot be bound directly; it is
    // checked when those are bound.
  }
}

AllocationSizesAndStrides inferAllocationSizesAndStrides(
    const TensorView* tv, const at::Tensor& tensor, ExpressionEvaluator& ee,
    int64_t input_position) {
  checkRank(tv, tensor, input_position);
  const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
  const auto& maybe_allocation = tv->getMaybeAllocationDomain();
  const auto allocation = TensorDomain::noReductions(maybe_allocation);
  const auto exprs = getExprsBetween(tv->getLogicalDomain(), maybe_allocation);
  auto fail = [&](const std::string& problem, const std::string& expected,
                  const std::string& fix) {
    failInput(tv, tensor, input_position, problem, expected, fix);
  };

  // Pass 1: sizes. Device-parallel IDs have size 1: the tensor is the shard.
  std::unordered_map<const IterDomain*, int64_t> sizes;
  for (size_t i = 0; i < logical.size(); ++i) {
    sizes[logical[i]] = tensor.size(static_cast<int64_t>(i));
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
  AllocationSizesAndStrides result;
  for (IterDomain* id : allocation) {
    FUSER_INTERNAL_ASSERT(
        sizes.count(id), "allocation ", id->toString(), " of ", tv->toString(),
        " is not derived from its logical domain");
    result.sizes.push_back(sizes.at(id));
  }
  auto size_of = [&](const IterDomain* id) {
    auto it = sizes.find(id);
    return it == sizes.end() ? int64_t(1) : it->second;
  };
  // The strides of a tensor laid out as declared, for the messages.
  auto expected_strides = [&]() {
    return logicalStridesFromAllocation(
        tv, contiguousStrides(result.sizes), size_of);
  };
  auto declared_layout = [&]() {
    return "strides " + listToString(expected_strides()) +
           " for these sizes (a tensor laid out as declared).";
  };
  auto fix_layout = [&]() {
    return layoutFix(tv, tensor.sizes().vec(), expected_strides());
  };

  // Pass 2: strides.
  std::unordered_map<const IterDomain*, int64_t> strides;
  for (size_t i = 0; i < logical.size(); ++i) {
    strides[logical[i]] = tensor.stride(static_cast<int64_t>(i));
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
  for (IterDomain* id : allocation) {
    result.strides.push_back(strides.at(id));
  }

  // Contiguity: walk from the innermost ID outwards. Nothing is addressed
  // in an empty tensor, so its strides are not checked.
  const bool empty = tensor.numel() == 0;
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
    const int64_t size = result.sizes[position];
    int64_t& stride = result.strides[position];
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

void bindFusionInputs(
    Fusion* fusion, const std::vector<c10::IValue>& inputs,
    ExpressionEvaluator& ee, bool require_cuda) {
  const auto& declared = fusion->inputs();
  FUSER_CHECK(
      inputs.size() == declared.size(), "The fusion has ", declared.size(),
      " inputs but ", inputs.size(), " values were given. Pass one value per ",
      "fusion input, in the order of fusion->addInput calls.");
  for (size_t i = 0; i < declared.size(); ++i) {
    const auto position = static_cast<int64_t>(i);
    const c10::IValue& input = inputs[i];
    if (auto* tv = dynamic_cast<TensorView*>(declared[i])) {
      FUSER_CHECK(
          input.isTensor(), "Input ", i, " (", tv->toString(),
          ") is a tensor, but a ", input.tagKind(), " was given.");
      const at::Tensor& tensor = input.toTensor();
      validateInputTensor(tv, tensor, position, require_cuda);
      bindInputExtents(tv, tensor, ee, position);
      continue;
    }
    Val* scalar = declared[i];
    ScalarValue value;
    if (input.isDouble()) {
      value = ScalarValue(input.toDouble());
    } else if (input.isInt()) {
      value = ScalarValue(input.toInt());
    } else if (input.isBool()) {
      value = ScalarValue(input.toBool());
    } else if (input.isTensor() && input.toTensor().dim() == 0) {
      const at::Tensor tensor = input.toTensor();
      if (tensor.is_floating_point()) {
        value = ScalarValue(tensor.item<double>());
      } else if (tensor.scalar_type() == at::ScalarType::Bool) {
        value = ScalarValue(tensor.item<bool>());
      } else {
        value = ScalarValue(tensor.item<int64_t>());
      }
    } else {
      FUSER_CHECK(
          false, "Input ", i, " (", scalar->toString(),
          ") is a scalar of type ", scalar->dtype(), ", but a ",
          input.tagKind(),
          " was given. Pass a double, an int64, a bool or a 0-dim tensor.");
    }
    // Keep the value's kind consistent with the declared type, so that
    // scalar arithmetic follows the IR (integer vs floating division).
    if (isFloatingPointType(scalar->dtype())) {
      value = ScalarValue(value.asDouble());
    } else if (isIntegralType(scalar->dtype())) {
      value = ScalarValue(value.asInt());
    } else if (isBooleanType(scalar->dtype())) {
      value = ScalarValue(value.asBool());
    }
    ee.bind(scalar, value);
  }
}

RuntimeInfo makeRuntimeInfo(
    Fusion* fusion, const std::vector<c10::IValue>& inputs, bool require_cuda) {
  ExpressionEvaluator ee;
  bindFusionInputs(fusion, inputs, ee, require_cuda);
  RuntimeInfo info(ee);
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto* tv = dynamic_cast<TensorView*>(fusion->inputs()[i]);
    if (tv == nullptr) {
      continue;
    }
    const at::Tensor& tensor = inputs[i].toTensor();
    AllocationSizesAndStrides layout = inferAllocationSizesAndStrides(
        tv, tensor, info.expressionEvaluator(), static_cast<int64_t>(i));
    TensorRuntimeInfo tensor_info;
    tensor_info.allocation_sizes = layout.sizes;
    tensor_info.allocation_strides = layout.strides;
    auto address = reinterpret_cast<uintptr_t>(tensor.data_ptr());
    tensor_info.alignment_bytes = 16;
    while (tensor_info.alignment_bytes > 1 &&
           address % static_cast<uintptr_t>(tensor_info.alignment_bytes) != 0) {
      tensor_info.alignment_bytes /= 2;
    }
    info.setTensorInfo(tv, std::move(tensor_info));
  }
  return info;
}

} // namespace fuser
