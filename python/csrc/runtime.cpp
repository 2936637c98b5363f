// Bindings of the runtime: FusionExecutor runs a fusion on torch.Tensors
// through a FusionExecutorCache that owns a copy of the fusion. Tensors
// cross the boundary through torch's own Python bindings (THPVariable).
#include "bindings.h"

#include <base/exceptions.h>
#include <base/options.h>
#include <expr/evaluator.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <multidevice/sharding.h>
#include <runtime/aten_evaluator.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/fusion_kernel_runtime.h>
#include <runtime/input_binding.h>
#include <runtime/kernel_executor.h>
#include <runtime/multidevice_executor.h>
#include <runtime/off_device_compile.h>
#include <segmentation/preseg_passes.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace py = pybind11;

namespace fuser::python {

namespace {

std::string typeName(const py::handle& obj) {
  return py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>();
}

// at::Tensor -> torch.Tensor, in a list.
py::list tensorList(const std::vector<at::Tensor>& tensors) {
  py::list result;
  for (const at::Tensor& t : tensors) {
    result.append(py::reinterpret_steal<py::object>(THPVariable_Wrap(t)));
  }
  return result;
}

// torch.Tensor -> at::Tensor, bool/int/float -> the scalar IValue.
std::vector<c10::IValue> toIValues(const py::sequence& inputs) {
  std::vector<c10::IValue> values;
  values.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    py::handle obj = inputs[i];
    if (THPVariable_Check(obj.ptr())) {
      values.emplace_back(THPVariable_Unpack(obj.ptr()));
    } else if (py::isinstance<py::bool_>(obj)) {
      values.emplace_back(obj.cast<bool>());
    } else if (py::isinstance<py::int_>(obj)) {
      values.emplace_back(obj.cast<int64_t>());
    } else if (py::isinstance<py::float_>(obj)) {
      values.emplace_back(obj.cast<double>());
    } else {
      FUSER_CHECK(
          false, "Input ", i, " is a ", typeName(obj),
          "; inputs must be torch.Tensor, bool, int or float.");
    }
  }
  return values;
}

class FusionExecutor {
 public:
  explicit FusionExecutor(const Fusion& fusion)
      : cache_(std::make_unique<Fusion>(fusion)) {}

  // `enable` and `disable`: options for this run only (ScopedOptions,
  // base/options.h), by the names FUSER_ENABLE and FUSER_DISABLE take.
  py::list run(
      const py::sequence& inputs, const std::vector<std::string>& enable,
      const std::vector<std::string>& disable) {
    std::vector<c10::IValue> values = toIValues(inputs);
    std::vector<at::Tensor> outputs;
    {
      // The checks and the run touch no Python object.
      py::gil_scoped_release release;
      ScopedOptions options(enable, disable);
      checkOffDevice(values);
      outputs = cache_.runFusionWithInputs(values);
    }
    return tensorList(outputs);
  }

  bool hasRun() const {
    return !runtimes().empty();
  }

  // One entry per segment of the most recent run ("" for a segment that
  // launched no generated kernel).
  std::vector<std::string> kernelCodes() const {
    std::vector<std::string> codes;
    for (const FusionKernelRuntime* runtime : mostRecent()) {
      if (runtime == nullptr) {
        codes.emplace_back();
        continue;
      }
      for (size_t i = 0; i < runtime->segments().size(); ++i) {
        codes.push_back(runtime->kernelCode(i));
      }
    }
    return codes;
  }

  std::vector<std::string> scheduledFusionIrs() const {
    std::vector<std::string> irs;
    for (const FusionKernelRuntime* runtime : mostRecent()) {
      if (runtime == nullptr) {
        irs.emplace_back();
        continue;
      }
      for (const auto& segment : runtime->segments()) {
        irs.push_back(segment.scheduled_fusion->toString());
      }
    }
    return irs;
  }

  // A multi-device run: its stages' segments, and "Communication" for each
  // collective.
  std::vector<std::string> schedulerTypes() const {
    std::vector<std::string> types;
    const auto all = mostRecent();
    for (size_t i = 0; i < all.size(); ++i) {
      const FusionKernelRuntime* runtime = all[i];
      if (runtime == nullptr) {
        types.push_back(toString(stageType(i)));
        continue;
      }
      for (const auto& segment : runtime->segments()) {
        types.push_back(toString(segment.scheduler_type));
      }
    }
    return types;
  }

  // The collectives of a multi-device fusion, in run order.
  std::vector<std::string> communications() const {
    std::vector<std::string> comms;
    if (MultiDeviceExecutor* executor = cache_.multiDeviceExecutor()) {
      for (const Communication& comm : executor->communications()) {
        comms.push_back(comm.toString());
      }
    }
    return comms;
  }

  size_t numRuntimes() const {
    return cache_.numRuntimes();
  }

 private:
  // The runtimes of the most recent run: one, or for a multi-device fusion
  // one per stage (nullptr for a communication, or for a stage run on host
  // tensors through ATen).
  std::vector<const FusionKernelRuntime*> runtimes() const {
    if (MultiDeviceExecutor* executor = cache_.multiDeviceExecutor()) {
      std::vector<const FusionKernelRuntime*> all;
      for (const MultiDeviceStage& stage : executor->stages()) {
        all.push_back(
            stage.cache ? stage.cache->getMostRecentKernelRuntime() : nullptr);
      }
      return all;
    }
    if (const FusionKernelRuntime* runtime =
            cache_.getMostRecentKernelRuntime()) {
      return {runtime};
    }
    return {};
  }

  // What ran stage `i` of a multi-device fusion without a kernel runtime: a
  // collective, or ATen on host tensors.
  SchedulerType stageType(size_t i) const {
    MultiDeviceExecutor* executor = cache_.multiDeviceExecutor();
    return executor != nullptr ? executor->stages().at(i).type()
                               : SchedulerType::ExprEval;
  }

  std::vector<const FusionKernelRuntime*> mostRecent() const {
    auto all = runtimes();
    FUSER_CHECK(!all.empty(), "The fusion has not been executed yet.");
    return all;
  }

  // Tensors off the GPU are refused by the runtime; check everything else
  // (count, dtype, rank, sizes, layout) first, so that the message names the
  // first real problem and these checks work without a GPU.
  void checkOffDevice(const std::vector<c10::IValue>& values) const {
    bool off_device = false;
    for (const auto& value : values) {
      off_device |= value.isTensor() && !value.toTensor().is_cuda();
    }
    Fusion* fusion = cache_.fusion();
    if (!off_device || isMultiDevice(fusion)) {
      // A multi-device fusion runs host tensors (the Gloo-only setups) and
      // checks its shards itself.
      return;
    }
    ExpressionEvaluator ee;
    bindFusionInputs(fusion, values, ee, /*require_cuda=*/false);
    for (size_t i = 0; i < values.size(); ++i) {
      if (auto* tv = dynamic_cast<TensorView*>(fusion->inputs()[i])) {
        inputLayout(tv, values[i].toTensor(), ee, static_cast<int64_t>(i));
      }
    }
  }

  FusionExecutorCache cache_;
};

} // namespace

void bindRuntime(py::module_& m) {
  py::class_<FusionExecutor>(m, "FusionExecutor")
      .def(
          py::init<const Fusion&>(), py::arg("fusion"),
          "Copies the fusion into a new FusionExecutorCache.")
      .def(
          "run", &FusionExecutor::run, py::arg("inputs"),
          py::arg("enable") = std::vector<std::string>{},
          py::arg("disable") = std::vector<std::string>{})
      .def("has_run", &FusionExecutor::hasRun)
      .def("kernel_codes", &FusionExecutor::kernelCodes)
      .def("scheduled_fusion_irs", &FusionExecutor::scheduledFusionIrs)
      .def("scheduler_types", &FusionExecutor::schedulerTypes)
      .def("communications", &FusionExecutor::communications)
      .def("num_runtimes", &FusionExecutor::numRuntimes);

  // The option names FUSER_ENABLE and FUSER_DISABLE (and run's `enable`
  // and `disable`) take.
  m.def("enable_option_names", &enableOptionNames);
  // The names FUSER_DUMP takes (csrc/base/options.h).
  m.def("dump_option_names", &debugDumpOptionNames);
  m.def("is_dump_enabled", [](const std::string& name) {
    const auto& names = debugDumpOptionNames();
    auto it = std::find(names.begin(), names.end(), name);
    FUSER_CHECK(
        it != names.end(), "Unknown dump option '", name,
        "'; the options are those of fuser._C.dump_option_names().");
    return isDebugDumpEnabled(static_cast<DebugDumpOption>(it - names.begin()));
  });
  m.def("disable_option_names", &disableOptionNames);
  // Segments of this process that ran with ATen because their kernel
  // failed (runtime/fusion_kernel_runtime.h); the test suite checks it.
  m.def("kernel_fallback_count", &kernelFallbackCount);
  // A cache miss without launching (runtime/off_device_compile.h): per
  // segment, its scheduler's name, its kernel and what failed ("").
  m.def(
      "_compile_off_device",
      [](const Fusion& fusion, const py::sequence& inputs) {
        std::vector<std::tuple<std::string, std::string, std::string>> out;
        const std::vector<c10::IValue> values = toIValues(inputs);
        py::gil_scoped_release release;
        for (const auto& segment : compileOffDevice(&fusion, values)) {
          out.emplace_back(
              toString(segment.scheduler), segment.code, segment.error);
        }
        return out;
      },
      py::arg("fusion"), py::arg("inputs"));
  // The fusion evaluated op by op with ATen on the inputs' device, CPU
  // included (runtime/aten_evaluator.h): the tests' reference, and a way
  // to check a definition without a GPU.
  // With `rewritten`, the copy first goes through the rewrites before
  // segmentation (segmentation/preseg_passes.h), so that their math can be
  // checked against the fusion's without a GPU.
  m.def(
      "_evaluate_with_aten",
      [](Fusion& fusion, const py::sequence& inputs, bool rewritten) {
        const std::vector<c10::IValue> values = toIValues(inputs);
        std::vector<at::Tensor> outputs;
        {
          py::gil_scoped_release release;
          Fusion copy(fusion);
          if (rewritten) {
            runPreSegmentationPasses(&copy, PreSegmentationStage::BeforeCut);
            runPreSegmentationPasses(
                &copy, PreSegmentationStage::SeveralKernels);
          }
          outputs = evaluateFusionWithATen(&copy, values);
        }
        return tensorList(outputs);
      },
      py::arg("fusion"), py::arg("inputs"), py::arg("rewritten") = false);
  // The outputs computed segment by segment with ATen (CPU tensors do;
  // runtime/off_device_compile.h): segmentation checked without a GPU.
  m.def(
      "_evaluate_segments_with_aten",
      [](const Fusion& fusion, const py::sequence& inputs) {
        const std::vector<c10::IValue> values = toIValues(inputs);
        std::vector<at::Tensor> outputs;
        {
          py::gil_scoped_release release;
          outputs = evaluateSegmentsWithATen(&fusion, values);
        }
        return tensorList(outputs);
      },
      py::arg("fusion"), py::arg("inputs"));
  // For the tests of that fallback: the next `count` kernel compilations
  // fail as NVRTC failures would (runtime/kernel_executor.h).
  m.def("_fail_next_compiles_for_testing", &failNextCompilesForTesting);

  // For the tests of error translation.
  m.def("_raise_internal_error_for_tests", [](const std::string& msg) {
    FUSER_INTERNAL_ASSERT(false, msg);
  });
}

} // namespace fuser::python
