#include <runtime/input_binding.h>

#include <base/strings_and_math.h>
#include <id_model/id_model.h>
#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <layout/device_counts.h>
#include <layout/vectorization.h>
#include <runtime/aten_types.h>
#include <runtime/tensor_layout.h>

#include <ATen/cuda/CUDAContext.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace fuser {

namespace {

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
     << idsToString(tv->getMaybeAllocationDomain()) << " with contiguity ["
     << contiguityToString(tv->getContiguity()) << "].";
  return os.str();
}

} // namespace

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
    int64_t input_position, std::vector<DerivedExtent>* derived) {
  checkRank(tv, tensor, input_position);
  const DeviceCounts device_counts(tv, ee);
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
    const int64_t devices = device_counts.of(id);
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
    } else if (derived != nullptr) {
      derived->push_back({extent, global});
    }
  }
}

void bindFusionInputs(
    Fusion* fusion, const std::vector<c10::IValue>& inputs,
    ExpressionEvaluator& ee, bool require_cuda) {
  const auto& declared = fusion->inputs();
  FUSER_CHECK(
      inputs.size() == declared.size(), "The fusion has ", declared.size(),
      " inputs but ", inputs.size(), " values were given. Pass one value per ",
      "fusion input, in the order of fusion->addInput calls.");
  // The first CUDA input's position: the others must be on its device.
  std::optional<size_t> first_cuda;
  std::vector<DerivedExtent> derived;
  for (size_t i = 0; i < declared.size(); ++i) {
    const auto position = static_cast<int64_t>(i);
    const c10::IValue& input = inputs[i];
    if (auto* tv = dynamic_cast<TensorView*>(declared[i])) {
      FUSER_CHECK(
          input.isTensor(), "Input ", i, " (", tv->toString(),
          ") is a tensor, but a ", input.tagKind(), " was given.");
      const at::Tensor& tensor = input.toTensor();
      validateInputTensor(tv, tensor, position, require_cuda);
      if (tensor.is_cuda() && !first_cuda) {
        first_cuda = i;
      } else if (tensor.is_cuda()) {
        const at::Device expected = inputs[*first_cuda].toTensor().device();
        if (tensor.device() != expected) {
          failInput(
              tv, tensor, position,
              "the tensor is on " + tensor.device().str() + " but input " +
                  std::to_string(*first_cuda) + " is on " + expected.str() +
                  "; one kernel runs on one device.",
              "a tensor on " + expected.str() + ".",
              "move it with .to(\"" + expected.str() + "\").");
        }
      }
      bindInputExtents(tv, tensor, ee, position, &derived);
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
  // An extent computed from scalars no input binds (an intermediate between
  // segments whose extents are expressions of the complete fusion's sizes)
  // takes its tensor's size itself.
  for (const DerivedExtent& d : derived) {
    if (!ee.evaluate(d.extent)) {
      ee.bind(d.extent, ScalarValue(d.size));
    }
  }
}

void checkJoinedInputExtents(Fusion* fusion, ExpressionEvaluator& ee) {
  IdModel id_model(fusion);
  // Where a size of an exact group was first seen: an input's axis, or
  // an axis given its extent by expand.
  struct Seen {
    std::string what;
    size_t axis;
    int64_t size;
  };
  std::unordered_map<IterDomain*, Seen> seen;
  auto check = [&](IterDomain* id, std::string what, size_t axis) {
    auto size = id->isBroadcast() ? std::nullopt : ee.evaluate(id->extent());
    if (!size) {
      return;
    }
    auto [it, fresh] =
        seen.emplace(id_model.exactGroup(id), Seen{what, axis, size->asInt()});
    const Seen& other = it->second;
    what[0] = static_cast<char>(std::toupper(what[0]));
    FUSER_CHECK(
        fresh || other.size == size->asInt(), what, " has size ", size->asInt(),
        " along axis ", axis, ", but ", other.what, " has size ", other.size,
        " along axis ", other.axis,
        ", and the fusion combines the two axes. Pass sizes that agree "
        "there, or give one of them size 1 and declare that axis a "
        "broadcast.");
  };
  for (size_t i = 0; i < fusion->inputs().size(); ++i) {
    auto* tv = dynamic_cast<TensorView*>(fusion->inputs()[i]);
    if (tv == nullptr) {
      continue;
    }
    const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
    for (size_t j = 0; j < logical.size(); ++j) {
      check(
          logical[j],
          "input " + std::to_string(i) + " (" + tv->toString() + ")", j);
    }
  }
  for (Expr* expr : fusion->exprs()) {
    if (auto* expand = dynamic_cast<ExpandOp*>(expr)) {
      auto* out = expand->out()->as<TensorView>();
      const auto& logical = out->getLogicalDomain();
      for (size_t j = 0; j < logical.size(); ++j) {
        check(logical[j], "the expanded " + out->toString(), j);
      }
    }
  }
  // A constant size the fusion gave a tensor (a random op's shape), which
  // the kernels take for the joined axes of the inputs (GpuLower's extent
  // substitutions).
  for (TensorView* tv : fusion->allTvs()) {
    if (tv->isFusionInput()) {
      continue;
    }
    const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
    for (size_t j = 0; j < logical.size(); ++j) {
      if (logical[j]->extent()->isConstInt()) {
        check(
            logical[j], "the tensor " + tv->toString() + " of constant sizes",
            j);
      }
    }
  }
}

RuntimeInfo makeRuntimeInfo(
    Fusion* fusion, const std::vector<c10::IValue>& inputs, bool require_cuda,
    const KnownLayouts& layouts) {
  ExpressionEvaluator ee;
  bindFusionInputs(fusion, inputs, ee, require_cuda);
  RuntimeInfo info(ee);
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto* tv = dynamic_cast<TensorView*>(fusion->inputs()[i]);
    if (tv == nullptr) {
      continue;
    }
    const at::Tensor& tensor = inputs[i].toTensor();
    const TensorLayout* made = i < layouts.size() ? layouts[i] : nullptr;
    TensorRuntimeInfo tensor_info;
    tensor_info.layout = made != nullptr
                             ? *made
                             : inputLayout(
                                   tv, tensor, info.expressionEvaluator(),
                                   static_cast<int64_t>(i));
    tensor_info.alignment_bytes = pointerAlignment(tensor.data_ptr());
    info.setTensorInfo(tv, std::move(tensor_info));
    if (tensor.is_cuda()) {
      const auto* properties =
          at::cuda::getDeviceProperties(tensor.get_device());
      RuntimeInfo::Device device;
      device.multiprocessors = properties->multiProcessorCount;
      device.compute_capability = properties->major * 10 + properties->minor;
      device.l2_bytes = properties->l2CacheSize;
      device.registers_per_sm = properties->regsPerMultiprocessor;
      device.shared_bytes_per_sm =
          static_cast<int64_t>(properties->sharedMemPerMultiprocessor);
      device.shared_bytes_per_block =
          static_cast<int64_t>(properties->sharedMemPerBlockOptin);
      info.setDevice(device);
    }
  }
  return info;
}

KnownLayouts layoutsOf(Fusion* fusion, const RuntimeInfo& info) {
  KnownLayouts layouts;
  for (Val* input : fusion->inputs()) {
    auto* tv = dynamic_cast<TensorView*>(input);
    const TensorRuntimeInfo* tensor_info =
        tv == nullptr ? nullptr : info.tensorInfo(tv);
    layouts.push_back(tensor_info == nullptr ? nullptr : &tensor_info->layout);
  }
  return layouts;
}

} // namespace fuser
