#include <runtime/kernel_executor.h>

#include <base/compile_timer.h>
#include <base/options.h>
#include <codegen/codegen.h>
#include <layout/vectorization.h>
#include <runtime/aten_types.h>
#include <runtime/driver_api.h>
#include <runtime/input_binding.h>
#include <runtime/nvrtc_compile.h>
#include <runtime/tensor_map.h>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

namespace fuser {

namespace {

// Compiles and launches left to fail (the test hooks).
std::atomic<int> injected_compile_failures{0};
std::atomic<int> injected_launch_failures{0};

// Eight hex digits of a 32-bit FNV-1a hash of `code`: the same in every
// process and build (std::hash is not specified to be).
std::string codeDigest(const std::string& code) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : code) {
    hash = (hash ^ c) * 16777619u;
  }
  std::ostringstream digits;
  digits << std::hex << std::setw(8) << std::setfill('0') << hash;
  return digits.str();
}

// Whether this one fails (counting it).
bool takeInjected(std::atomic<int>& left) {
  int count = left.load();
  while (count > 0 && !left.compare_exchange_weak(count, count - 1)) {
  }
  return count > 0;
}

} // namespace

std::string LaunchParams::toString() const {
  std::stringstream ss;
  ss << "grid(" << grid[0] << ", " << grid[1] << ", " << grid[2] << ") block("
     << block[0] << ", " << block[1] << ", " << block[2] << ")";
  if (shared_memory_bytes > 0) {
    ss << " shared memory " << shared_memory_bytes << " bytes";
  }
  return ss.str();
}

KernelExecutor::~KernelExecutor() {
  if (module_ != nullptr && driverAvailable()) {
    driverApi().cuModuleUnload(module_);
  }
}

bool fitsInt32Indexing(const std::vector<c10::IValue>& inputs) {
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max();
  for (const auto& input : inputs) {
    if (!input.isTensor()) {
      continue;
    }
    const at::Tensor& t = input.toTensor();
    int64_t max_offset = 0;
    for (int64_t d = 0; d < t.dim(); ++d) {
      max_offset += (t.size(d) - 1) * std::abs(t.stride(d));
    }
    // Outputs are about as large as inputs; leave room for them.
    if (t.numel() > kLimit / 2 || max_offset > kLimit / 2) {
      return false;
    }
  }
  return true;
}

void KernelExecutor::compile(
    const Fusion* fusion, const std::vector<c10::IValue>& inputs,
    const KnownLayouts& layouts) {
  CompileTimer timer("kernel");
  device_ = 0;
  for (const auto& input : inputs) {
    if (input.isTensor() && input.toTensor().is_cuda()) {
      device_ = input.toTensor().get_device();
      break;
    }
  }
  const DataType index_type =
      fitsInt32Indexing(inputs) ? DataType::Int32 : DataType::Int;
  {
    GpuLower lower(fusion, index_type, kernel_flags_);
    kernel_ = lower.run();
  }
  if (!kernel_name_.empty()) {
    kernel_->kernel_name = kernel_name_;
  }
  timer.stage("lower");
  source_ = codegen::generateCudaKernel(*kernel_);
  if (!kernel_name_.empty()) {
    // The suffix is a digest of the code: a profile tells the kernels of one
    // kind apart, while identical kernels keep one name (and one cubin).
    // The name is declared once, as `<name>(`; renamed in place rather
    // than printed again.
    const std::string declared = " " + kernel_name_ + "(";
    const size_t at = source_.find(declared);
    FUSER_INTERNAL_ASSERT(
        at != std::string::npos && source_.rfind(declared) == at, "the kernel ",
        kernel_name_, " is not declared once in its code");
    kernel_->kernel_name = kernel_name_ + "_" + codeDigest(source_);
    source_.replace(at + 1, kernel_name_.size(), kernel_->kernel_name);
  }
  timer.stage("codegen");
  ensureCurrentContext(device_);
  // A kernel NVRTC rejects (test hook: failNextCompilesForTesting).
  const bool injected_failure = takeInjected(injected_compile_failures);
  CompiledModule compiled = compileToCubin(
      injected_failure ? source_ + "\n#error injected compile failure\n"
                       : source_,
      kernel_->kernel_name, deviceComputeCapability(device_),
      /*use_arch_specific=*/true);
  timer.stage("nvrtc");
  FUSER_CUDA_SAFE_CALL(
      driverApi().cuModuleLoadData(&module_, compiled.cubin.data()));
  FUSER_CUDA_SAFE_CALL(driverApi().cuModuleGetFunction(
      &function_, module_, compiled.lowered_name.c_str()));
  if (kernel_->mma.has_value()) {
    // The ring of operand tiles needs more than the default 48 KiB.
    FUSER_CUDA_SAFE_CALL(driverApi().cuFuncSetAttribute(
        function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        static_cast<int>(kernel_->mma->shared_bytes)));
  } else if (kernel_->shared_buffer_bytes > 0) {
    // Shared buffers may take more than the default 48 KiB. The most a
    // launch asks for is theirs and the reductions' at 1024 threads, within
    // what the device lets a block opt in to (the heuristics kept the
    // launch's own bytes within it, doc/normalization.md §11).
    const int64_t most =
        kernel_->shared_buffer_bytes + kernel_->smem_bytes_per_thread * 1024;
    const auto device_most = static_cast<int64_t>(
        at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(device_))
            ->sharedMemPerBlockOptin);
    FUSER_CUDA_SAFE_CALL(driverApi().cuFuncSetAttribute(
        function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        static_cast<int>(std::min(most, device_most))));
  }
  timer.stage("load");
  signature_plan_ = std::make_unique<LaunchPlan>(plan(inputs, layouts));
  timer.stage("plan");
}

namespace {

// Appends `value` to `buffer` at its natural alignment.
template <typename T>
void append(std::vector<char>& buffer, T value) {
  size_t offset = (buffer.size() + alignof(T) - 1) / alignof(T) * alignof(T);
  buffer.resize(offset + sizeof(T));
  std::memcpy(buffer.data() + offset, &value, sizeof(T));
}

void appendIndex(std::vector<char>& buffer, int64_t value, DataType type) {
  if (type == DataType::Int32) {
    append<int32_t>(buffer, static_cast<int32_t>(value));
  } else {
    append<int64_t>(buffer, value);
  }
}

// Tensor<T, LogicalRank, AllocRank>: the pointer, the logical sizes, the
// allocation strides, padded to the pointer's alignment (runtime/tensor.h).
std::vector<char> tensorArgument(
    void* data, const std::vector<int64_t>& logical_sizes,
    const std::vector<int64_t>& alloc_strides, DataType index_type) {
  std::vector<char> buffer;
  append<void*>(buffer, data);
  for (int64_t size : logical_sizes) {
    appendIndex(buffer, size, index_type);
  }
  for (int64_t stride : alloc_strides) {
    appendIndex(buffer, stride, index_type);
  }
  buffer.resize(
      (buffer.size() + alignof(void*) - 1) / alignof(void*) * alignof(void*));
  return buffer;
}

// Appends `argument` to the flat argument bytes at a 16-byte boundary and
// records its offset.
void appendArgument(
    std::vector<char>& bytes, std::vector<size_t>& offsets,
    const std::vector<char>& argument) {
  const size_t offset = (bytes.size() + 15) / 16 * 16;
  bytes.resize(offset + argument.size());
  std::memcpy(bytes.data() + offset, argument.data(), argument.size());
  offsets.push_back(offset);
}

std::vector<char> scalarArgument(
    const c10::IValue& value, Val* param, DataType index_type) {
  std::vector<char> buffer;
  switch (param->dtype()) {
    case DataType::Double:
      append<double>(buffer, value.toDouble());
      break;
    case DataType::Float:
      append<float>(buffer, static_cast<float>(value.toDouble()));
      break;
    case DataType::Int:
      append<int64_t>(buffer, value.toInt());
      break;
    case DataType::Int32:
      append<int32_t>(buffer, static_cast<int32_t>(value.toInt()));
      break;
    case DataType::Int16:
      append<int16_t>(buffer, static_cast<int16_t>(value.toInt()));
      break;
    case DataType::Int8:
      append<int8_t>(buffer, static_cast<int8_t>(value.toInt()));
      break;
    case DataType::UInt8:
      append<uint8_t>(buffer, static_cast<uint8_t>(value.toInt()));
      break;
    case DataType::Index:
      appendIndex(buffer, value.toInt(), index_type);
      break;
    case DataType::Bool:
      append<bool>(buffer, value.toBool());
      break;
    default:
      FUSER_CHECK(
          false, "Scalar input ", param->toString(), " of type ",
          param->dtype(), " cannot be passed to a kernel.");
  }
  return buffer;
}

} // namespace

void KernelExecutor::checkVectorizedAccesses(
    ExpressionEvaluator& ee, const std::vector<const TensorLayout*>& layouts,
    const std::vector<int64_t>& alignments) const {
  for (const VectorizationCheck& check : kernel_->vectorization_checks) {
    const auto t = static_cast<size_t>(check.tensor_position);
    const TensorLayout& layout = *layouts.at(t);
    StridedAxes between_runs;
    for (size_t k : check.strided_positions) {
      between_runs.sizes.push_back(layout.allocation_sizes.at(k));
      between_runs.strides.push_back(layout.allocation_strides.at(k));
    }
    const std::string violation = vectorAccessViolation(
        check.width, dataTypeSize(check.tv->dtype()),
        ee.evaluateOrThrow(check.extent).asInt(), between_runs,
        alignments.at(t));
    FUSER_CHECK(
        violation.empty(), "The kernel reads or writes ", check.tv->toString(),
        " in vectors of ", check.width,
        ", which this tensor does not allow: ", violation,
        ". Pass a tensor laid out for it (e.g. a .contiguous() copy) or "
        "schedule without vectorization.");
  }
}

void KernelExecutor::bindParameterExtents(
    ExpressionEvaluator& ee, size_t parameter,
    const std::vector<int64_t>& sizes) const {
  for (const ParameterExtent& extent : kernel_->parameter_extents) {
    if (extent.parameter == parameter) {
      ee.bind(extent.value, sizes.at(extent.dim));
    }
  }
}

void KernelExecutor::planTensorMaps(
    LaunchPlan& plan, ExpressionEvaluator& ee,
    const std::vector<const TensorLayout*>& layouts,
    const std::vector<int64_t>& alignments) const {
  Fusion* fusion = kernel_->fusion.get();
  for (const LoweredKernel::TensorMapParameter& map : kernel_->tensor_maps) {
    FUSER_INTERNAL_ASSERT(
        map.parameter < fusion->inputs().size(),
        "a tensor map of a kernel output");
    // Tensor parameters before this one (layouts holds one per tensor).
    size_t tensor = 0;
    for (size_t p = 0; p < map.parameter; ++p) {
      tensor += fusion->inputs()[p]->isA<TensorView>() ? 1 : 0;
    }
    std::vector<int64_t> sizes;
    for (Val* extent : map.dim_extents) {
      sizes.push_back(ee.evaluateOrThrow(extent).asInt());
    }
    auto* tv = fusion->inputs()[map.parameter]->as<TensorView>();
    LaunchPlan::TensorMapArgument argument;
    argument.geometry = tmaGeometry(
        map.layout, tv->dtype(), sizes, layouts[tensor]->allocation_strides);
    argument.input = map.parameter;
    const std::string violation =
        tensorMapViolation(argument.geometry, alignments[tensor]);
    FUSER_CHECK(
        violation.empty(), "The kernel copies tiles of ", tv->toString(),
        " with the bulk copy engine, which this tensor does not allow: ",
        violation, " (", argument.geometry.toString(),
        "). Pass a tensor laid out for it (16-byte aligned, with strides "
        "that are multiples of 16 bytes), or let the scheduler choose.");
    appendArgument(
        plan.bytes, plan.offsets, std::vector<char>(sizeof(CUtensorMap), 0));
    argument.argument = plan.offsets.size() - 1;
    plan.tensor_maps.push_back(std::move(argument));
  }
}

KernelExecutor::LaunchPlan KernelExecutor::plan(
    const std::vector<c10::IValue>& inputs, const KnownLayouts& known) const {
  FUSER_INTERNAL_ASSERT(isCompiled(), "run before compile");
  Fusion* fusion = kernel_->fusion.get();
  ExpressionEvaluator ee;
  bindFusionInputs(fusion, inputs, ee, /*require_cuda=*/true);

  LaunchPlan plan;
  std::vector<TensorLayout> input_layouts;
  input_layouts.reserve(inputs.size());
  std::vector<const TensorLayout*> layouts; // per tensor parameter
  std::vector<int64_t> alignments;
  for (size_t i = 0; i < fusion->inputs().size(); ++i) {
    Val* param = fusion->inputs()[i];
    if (auto* tv = dynamic_cast<TensorView*>(param)) {
      const at::Tensor& tensor = inputs[i].toTensor();
      const TensorLayout* made = i < known.size() ? known[i] : nullptr;
      input_layouts.push_back(
          made != nullptr
              ? *made
              : inputLayout(tv, tensor, ee, static_cast<int64_t>(i)));
      const TensorLayout& layout = input_layouts.back();
      bindParameterExtents(ee, i, layout.global_sizes);
      layouts.push_back(&layout);
      alignments.push_back(pointerAlignment(tensor.data_ptr()));
      appendArgument(
          plan.bytes, plan.offsets,
          tensorArgument(
              nullptr, layout.global_sizes, layout.allocation_strides,
              indexType()));
    } else {
      appendArgument(
          plan.bytes, plan.offsets,
          scalarArgument(inputs[i], param, indexType()));
    }
  }
  at::TensorOptions options = at::TensorOptions().device(at::kCUDA, device_);
  for (Val* param : fusion->outputs()) {
    auto* tv = param->as<TensorView>();
    plan.output_layouts.push_back(denseLayout(tv, ee));
    plan.output_options.push_back(options.dtype(toAtenType(tv->dtype())));
  }
  for (size_t o = 0; o < plan.output_layouts.size(); ++o) {
    const TensorLayout& layout = plan.output_layouts[o];
    bindParameterExtents(ee, fusion->inputs().size() + o, layout.global_sizes);
    layouts.push_back(&layout);
    alignments.push_back(16); // a fresh allocation
    appendArgument(
        plan.bytes, plan.offsets,
        tensorArgument(
            nullptr, layout.global_sizes, layout.allocation_strides,
            indexType()));
  }
  checkVectorizedAccesses(ee, layouts, alignments);

  for (const auto& [pt, extent] : kernel_->launch_extents) {
    const int64_t value = ee.evaluateOrThrow(extent).asInt();
    switch (pt) {
      case ParallelType::BIDx:
        plan.launch.grid[0] = value;
        break;
      case ParallelType::BIDy:
        plan.launch.grid[1] = value;
        break;
      case ParallelType::BIDz:
        plan.launch.grid[2] = value;
        break;
      case ParallelType::TIDx:
        plan.launch.block[0] = value;
        break;
      case ParallelType::TIDy:
        plan.launch.block[1] = value;
        break;
      case ParallelType::TIDz:
        plan.launch.block[2] = value;
        break;
      default:
        break;
    }
  }
  const int64_t threads =
      plan.launch.block[0] * plan.launch.block[1] * plan.launch.block[2];
  plan.launch.shared_memory_bytes =
      kernel_->shared_buffer_bytes + kernel_->smem_bytes_per_thread * threads;
  for (const LoweredKernel::GridBuffer& buffer : kernel_->grid_buffers) {
    const int64_t elements = ee.evaluateOrThrow(buffer.work_elements).asInt();
    const int64_t semaphores = ee.evaluateOrThrow(buffer.semaphores).asInt();
    // A pointer argument, filled in per stream at launch.
    auto add = [&](int64_t bytes, bool semaphores) {
      appendArgument(
          plan.bytes, plan.offsets, std::vector<char>(sizeof(void*), 0));
      plan.grid_buffers.push_back({plan.offsets.size() - 1, bytes, semaphores});
    };
    // Bytes: a work type may be a Welford state, which ATen has no type for.
    add(std::max<int64_t>(elements, 1) * dataTypeSize(buffer.work_type), false);
    add(std::max<int64_t>(semaphores, 1) * int64_t(sizeof(int64_t)), true);
  }
  if (kernel_->mma.has_value()) {
    plan.launch.shared_memory_bytes += kernel_->mma->shared_bytes;
  }
  planTensorMaps(plan, ee, layouts, alignments);
  return plan;
}

std::vector<at::Tensor> KernelExecutor::run(
    const std::vector<c10::IValue>& inputs) {
  return launch(plan(inputs), inputs);
}

std::vector<at::Tensor> KernelExecutor::runWithSignature(
    const std::vector<c10::IValue>& inputs) {
  FUSER_INTERNAL_ASSERT(signature_plan_ != nullptr, "run before compile");
  return launch(*signature_plan_, inputs);
}

std::vector<at::Tensor> KernelExecutor::launch(
    const LaunchPlan& plan, const std::vector<c10::IValue>& inputs) {
  Fusion* fusion = kernel_->fusion.get();
  FUSER_CHECK(
      inputs.size() == fusion->inputs().size(), "The fusion takes ",
      fusion->inputs().size(), " inputs, got ", inputs.size(), ".");
  // The plan's bytes with this launch's data pointers and scalars.
  alignas(16) char stack_bytes[1024];
  std::vector<char> heap_bytes;
  char* bytes = stack_bytes;
  if (plan.bytes.size() > sizeof(stack_bytes)) {
    heap_bytes.resize(plan.bytes.size());
    bytes = heap_bytes.data();
  }
  std::memcpy(bytes, plan.bytes.data(), plan.bytes.size());
  auto write = [&](size_t argument, const void* data, size_t size) {
    std::memcpy(bytes + plan.offsets[argument], data, size);
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].isTensor()) {
      void* data = inputs[i].toTensor().data_ptr();
      write(i, &data, sizeof(void*));
    } else {
      const std::vector<char> scalar =
          scalarArgument(inputs[i], fusion->inputs()[i], indexType());
      write(i, scalar.data(), scalar.size());
    }
  }
  std::vector<at::Tensor> outputs;
  outputs.reserve(plan.output_layouts.size());
  for (size_t o = 0; o < plan.output_layouts.size(); ++o) {
    outputs.push_back(
        allocateTensor(plan.output_layouts[o], plan.output_options[o]));
    void* data = outputs.back().data_ptr();
    write(inputs.size() + o, &data, sizeof(void*));
  }
  const LaunchParams& launch = plan.launch;
  static const bool dump_launch =
      isDebugDumpEnabled(DebugDumpOption::LaunchParams);
  if (dump_launch) {
    std::cout << "[launch_params] " << launch.toString() << "\n";
  }
  for (int64_t g : launch.grid) {
    if (g == 0) {
      std::lock_guard<std::mutex> lock(launch_mutex_);
      launch_params_ = launch;
      return outputs; // nothing to compute
    }
  }
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_));
  ensureCurrentContext(device_);
  CUstream stream =
      c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_))
          .stream();
  {
    std::lock_guard<std::mutex> lock(launch_mutex_);
    launch_params_ = launch;
    for (const LaunchPlan::TensorMapArgument& map : plan.tensor_maps) {
      // Encoded again only when the operand's memory moved: repeated calls
      // on the same tensors (a training loop's weights) reuse the map.
      void* data = inputs[map.input].toTensor().data_ptr();
      if (data != map.encoded_for) {
        map.encoded = encodeTensorMap(map.geometry, data);
        map.encoded_for = data;
      }
      write(map.argument, &map.encoded, sizeof(map.encoded));
    }
    writeGridBuffers(plan, stream, bytes);
  }
  c10::SmallVector<void*, 16> argument_pointers;
  for (size_t offset : plan.offsets) {
    argument_pointers.push_back(bytes + offset);
  }
  // A block the driver refuses (test hook: failNextLaunchesForTesting).
  const bool injected_failure = takeInjected(injected_launch_failures);
  // A kernel whose blocks wait for each other is launched cooperatively:
  // the driver refuses a grid that would not be resident at once
  // (KernelFlags::cooperative_launch).
  const auto grid = [&](int d) {
    return static_cast<unsigned>(launch.grid[d]);
  };
  const auto block = [&](int d) {
    return static_cast<unsigned>(
        d == 0 && injected_failure ? 4096 : launch.block[d]);
  };
  const auto smem = static_cast<unsigned>(launch.shared_memory_bytes);
  const CUresult result =
      kernel_->cooperative_launch
          ? driverApi().cuLaunchCooperativeKernel(
                function_, grid(0), grid(1), grid(2), block(0), block(1),
                block(2), smem, stream, argument_pointers.data())
          : driverApi().cuLaunchKernel(
                function_, grid(0), grid(1), grid(2), block(0), block(1),
                block(2), smem, stream, argument_pointers.data(), nullptr);
  if (result != CUDA_SUCCESS) {
    const char* name = nullptr;
    driverApi().cuGetErrorName(result, &name);
    FUSER_ERROR(
        "Launching kernel ", kernelId(), " failed with ",
        name != nullptr ? name : "an unknown CUDA error", " (",
        static_cast<int>(result), ") for ",
        injected_failure ? "an injected launch failure, " : "", "launch ",
        launch.toString(),
        ". FUSER_DUMP=cuda_kernel,launch_params prints the kernel and its "
        "launches; the fusion and its inputs reproduce it.");
  }
  return outputs;
}

LaunchParams KernelExecutor::lastLaunchParams() const {
  std::lock_guard<std::mutex> lock(launch_mutex_);
  return launch_params_;
}

std::string KernelExecutor::kernelId() const {
  std::stringstream ss;
  ss << kernel_->kernel_name << " (source hash " << std::hex
     << std::hash<std::string>()(source_) << ")";
  return ss.str();
}

void KernelExecutor::writeGridBuffers(
    const LaunchPlan& plan, CUstream stream, char* bytes) const {
  if (plan.grid_buffers.empty()) {
    return;
  }
  auto [it, fresh] = plan.grid_buffers_by_stream.try_emplace(stream);
  std::vector<at::Tensor>& buffers = it->second;
  if (fresh) {
    const auto options =
        at::TensorOptions().device(at::kCUDA, device_).dtype(at::kByte);
    for (const LaunchPlan::GridBuffer& buffer : plan.grid_buffers) {
      buffers.push_back(
          buffer.semaphores ? at::zeros({buffer.bytes}, options)
                            : at::empty({buffer.bytes}, options));
    }
  }
  for (size_t b = 0; b < plan.grid_buffers.size(); ++b) {
    void* data = buffers[b].data_ptr();
    std::memcpy(
        bytes + plan.offsets[plan.grid_buffers[b].argument], &data,
        sizeof(void*));
  }
}

void failNextCompilesForTesting(int count) {
  injected_compile_failures.store(count);
}

void failNextLaunchesForTesting(int count) {
  injected_launch_failures.store(count);
}

} // namespace fuser
