#include <tests/cpp/utils.h>

#include <base/register_file.h>
#include <codegen/embedded_runtime.h>
#include <runtime/fusion_kernel_runtime.h>

#include <codegen/codegen.h>
#include <expr/evaluator.h>
#include <runtime/aten_evaluator.h>
#include <runtime/input_binding.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/registry.h>

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <unordered_set>

namespace fuser {

namespace {
[[maybe_unused]] const bool kDiskCacheOffUnlessAsked =
    setenv("FUSER_KERNEL_CACHE_DIR", "off", /*overwrite=*/0) == 0;
} // namespace

ScopedEnv::ScopedEnv(const char* name, const std::optional<std::string>& value)
    : name_(name) {
  if (const char* old = std::getenv(name)) {
    old_ = old;
  }
  if (value.has_value()) {
    setenv(name, value->c_str(), 1);
  } else {
    unsetenv(name);
  }
}

ScopedEnv::~ScopedEnv() {
  if (old_.has_value()) {
    setenv(name_, old_->c_str(), 1);
  } else {
    unsetenv(name_);
  }
}

bool hasPtxasReport(const KernelInspection& inspection) {
  return inspection.ptxas_log.find("bytes stack frame") != std::string::npos;
}

KernelInspection inspectForSm90a(const std::string& source) {
  KernelInspection inspection;
  for (int attempt = 0; attempt < 3 && !hasPtxasReport(inspection); ++attempt) {
    inspection = inspectKernel(source, "fuser_kernel", 90, true);
  }
  return inspection;
}

std::string launchBoundsOf(const std::string& code) {
  const size_t kernel = code.find("__global__ void ");
  const size_t at = code.find("__launch_bounds__(", kernel);
  if (kernel == std::string::npos || at == std::string::npos ||
      code.find('{', kernel) < at) {
    return "";
  }
  std::string bounds = code.substr(at, code.find(')', at) + 1 - at);
  const std::string macro = kMinBlocksPerSmMacro;
  const size_t use = bounds.find(macro);
  if (use != std::string::npos) {
    const std::string definition = "#define " + macro + " ";
    const size_t defined = code.find(definition);
    const size_t value = defined + definition.size();
    bounds.replace(
        use, macro.size(),
        defined == std::string::npos
            ? "?"
            : code.substr(value, code.find('\n', value) - value));
  }
  return bounds;
}

::testing::AssertionResult keepsEverythingInRegisters(
    const KernelInspection& inspection) {
  if (inspection.ptxas_log.find(
          "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads") !=
      std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "ptxas reports a stack frame or spills (or no report):\n"
         << inspection.ptxas_log;
}

CompiledSchedule scheduleAndCompile(
    const Fusion& fusion, const std::vector<c10::IValue>& inputs) {
  Fusion copy(fusion);
  RuntimeInfo info = makeRuntimeInfo(&copy, inputs, /*require_cuda=*/false);
  SchedulerChoice choice = chooseScheduler(&copy, info);
  CompiledSchedule result;
  result.type = choice.scheduler->type();
  auto params = choice.scheduler->computeHeuristics(&copy, info);
  choice.scheduler->schedule(&copy, *params);
  if (result.type != SchedulerType::ExprEval) {
    result.code =
        generateCudaKernel(&copy, DataType::Int32, params->kernelFlags());
    compileToCubin(result.code, "fuser_kernel", 90, true);
  }
  return result;
}

std::string runtimePreamble() {
  std::string source =
      "typedef long long int nvfuser_index_t;\n"
      "typedef long long int int64_t;\n"
      "#define FUSER_HAS_HALF\n"
      "#include <cuda_fp16.h>\n"
      "#define FUSER_HAS_BFLOAT16\n"
      "#include <cuda_bf16.h>\n"
      "#define CUDART_INF __longlong_as_double(0x7ff0000000000000ULL)\n"
      "#define CUDART_NAN __longlong_as_double(0xfff8000000000000ULL)\n";
  for (const auto& [name, content] : embeddedRuntimeSources()) {
    source += "// runtime/" + name + "\n" + content + "\n";
  }
  return source;
}

namespace {

TensorView* makeTensor(
    const std::vector<int64_t>& shape, DataType dtype, bool contiguous) {
  Fusion* fusion = FusionGuard::getCurFusion();
  FUSER_CHECK(
      fusion != nullptr,
      "Making a tensor needs an active Fusion (FusionGuard).");
  std::vector<IterDomain*> ids;
  for (int64_t size : shape) {
    FUSER_CHECK(
        size == -1 || size >= 0, "Tensor size ", size,
        " must be -1 (symbolic) or non-negative.");
    if (size == 1) {
      ids.push_back(IrBuilder::create<IterDomain>(
          fusion->zeroVal(), fusion->oneVal(), IterType::Broadcast));
      continue;
    }
    Val* extent =
        size == -1 ? IrBuilder::create<Val>(DataType::Index)
                   : IrBuilder::create<Val>(ScalarValue(size), DataType::Index);
    ids.push_back(IrBuilder::create<IterDomain>(fusion->zeroVal(), extent));
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      ids, TensorDomain::getContiguityFilledWith(ids, contiguous));
  return IrBuilder::create<TensorView>(domain, dtype);
}

} // namespace

TensorView* makeContigConcreteTensor(
    std::vector<int64_t> shape, DataType dtype) {
  return makeTensor(shape, dtype, true);
}

TensorView* makeConcreteTensor(std::vector<int64_t> shape, DataType dtype) {
  return makeTensor(shape, dtype, false);
}

TensorView* makeContigTensor(int64_t ndims, DataType dtype) {
  return makeTensor(
      std::vector<int64_t>(static_cast<size_t>(ndims), -1), dtype, true);
}

TensorView* makeSymbolicTensor(int64_t ndims, DataType dtype) {
  return makeTensor(
      std::vector<int64_t>(static_cast<size_t>(ndims), -1), dtype, false);
}

bool deviceAvailable() {
  return at::globalContext().hasCUDA();
}

at::Tensor cudaRandn(const std::vector<int64_t>& shape) {
  return at::randn(shape, at::TensorOptions().device(at::kCUDA));
}

int64_t deviceMemoryBytes() {
  if (!deviceAvailable()) {
    return 0;
  }
  return static_cast<int64_t>(
      at::cuda::getCurrentDeviceProperties()->totalGlobalMem);
}

namespace {

// The largest number of elements one reduction (or matrix product, its K)
// feeding `out` combines (1 when none does). Rounding error grows with it.
int64_t largestReductionSize(Val* out, ExpressionEvaluator& ee) {
  int64_t largest = 1;
  std::unordered_set<Val*> visited;
  std::vector<Val*> stack = {out};
  while (!stack.empty()) {
    Val* val = stack.back();
    stack.pop_back();
    if (!visited.insert(val).second || val->definition() == nullptr ||
        val->isFusionInput()) {
      continue;
    }
    Expr* def = val->definition();
    if (def->isA<ReductionOp>() || def->isA<MmaOp>()) {
      int64_t reduced = 1;
      for (IterDomain* id :
           def->output(0)->as<TensorView>()->getLogicalDomain()) {
        if (id->isReduction()) {
          auto extent = ee.evaluate(id->extent());
          reduced *=
              extent.has_value() ? std::max<int64_t>(extent->asInt(), 1) : 1;
        }
      }
      largest = std::max(largest, reduced);
    }
    for (Val* input : def->inputs()) {
      if (input->isA<TensorView>()) {
        stack.push_back(input);
      }
    }
  }
  return largest;
}

struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

Tolerance toleranceFor(at::ScalarType type, int64_t reduction_size) {
  double base = 0.0;
  switch (type) {
    case at::ScalarType::Float:
    case at::ScalarType::ComplexFloat:
      base = 1e-5;
      break;
    case at::ScalarType::Half:
      base = 1e-3;
      break;
    case at::ScalarType::BFloat16:
      base = 1e-2;
      break;
    case at::ScalarType::Double:
    case at::ScalarType::ComplexDouble:
      base = 1e-12;
      break;
    default:
      return {}; // integers and bools: exact
  }
  const double scale =
      std::max(1.0, std::sqrt(static_cast<double>(reduction_size)));
  return {base * scale, base * scale};
}

std::string sizesToString(at::IntArrayRef sizes) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    os << (i == 0 ? "" : ", ") << sizes[i];
  }
  os << "]";
  return os.str();
}

std::vector<int64_t> unravel(int64_t flat, at::IntArrayRef sizes) {
  std::vector<int64_t> coordinates(sizes.size(), 0);
  for (size_t i = sizes.size(); i-- > 0;) {
    coordinates[i] = flat % sizes[i];
    flat /= sizes[i];
  }
  return coordinates;
}

// Compares one output; returns "" when it matches, else the description.
std::string compareOutput(
    const at::Tensor& got, const at::Tensor& expected, Tolerance tolerance) {
  std::ostringstream os;
  if (!got.defined()) {
    return "the output is an undefined tensor";
  }
  if (got.sizes() != expected.sizes()) {
    os << "sizes differ: got " << sizesToString(got.sizes()) << ", expected "
       << sizesToString(expected.sizes());
    return os.str();
  }
  if (got.scalar_type() != expected.scalar_type()) {
    os << "dtypes differ: got " << c10::toString(got.scalar_type())
       << ", expected " << c10::toString(expected.scalar_type());
    return os.str();
  }
  if (got.numel() == 0) {
    return "";
  }
  if (got.is_complex()) { // each part within the tolerance
    return compareOutput(
        at::view_as_real(got.resolve_conj().contiguous()),
        at::view_as_real(expected.resolve_conj().contiguous()), tolerance);
  }
  const at::Tensor a = got.detach().to(at::kCPU).to(at::kDouble).contiguous();
  const at::Tensor b =
      expected.detach().to(at::kCPU).to(at::kDouble).contiguous();
  // Equal values (infinities included) and NaN against NaN count as exact.
  const at::Tensor same =
      at::eq(a, b).logical_or(at::isnan(a).logical_and(at::isnan(b)));
  const at::Tensor error = at::where(
      same, at::zeros_like(a),
      at::nan_to_num(at::abs(a - b), /*nan=*/INFINITY, /*posinf=*/INFINITY));
  // An infinite expected value allows no slack (only an equal value, which
  // `same` already accepts, matches it).
  const at::Tensor allowed =
      tolerance.atol +
      tolerance.rtol * at::nan_to_num(at::abs(b), /*nan=*/0.0, /*posinf=*/0.0);
  const at::Tensor excess = error - allowed;
  const int64_t worst = excess.argmax().item<int64_t>();
  if (excess.view(-1)[worst].item<double>() <= 0.0) {
    return "";
  }
  const auto coordinates = unravel(worst, a.sizes());
  os << "max abs error " << error.max().item<double>() << " (atol "
     << tolerance.atol << ", rtol " << tolerance.rtol << ", "
     << at::gt(excess, 0.0).sum().item<int64_t>() << " of " << a.numel()
     << " elements out of tolerance); worst element at "
     << sizesToString(coordinates) << ": got "
     << a.view(-1)[worst].item<double>() << ", expected "
     << b.view(-1)[worst].item<double>();
  return os.str();
}

// The mismatches of `outputs` against `expected`, one line per output.
std::string mismatches(
    Fusion* fusion, const std::vector<at::Tensor>& outputs,
    const std::vector<at::Tensor>& expected, ExpressionEvaluator& ee) {
  if (outputs.size() != expected.size()) {
    return "got " + std::to_string(outputs.size()) + " outputs, expected " +
           std::to_string(expected.size()) + ".";
  }
  std::string result;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Val* out = i < fusion->outputs().size() ? fusion->outputs()[i] : nullptr;
    const int64_t reduction_size =
        out != nullptr ? largestReductionSize(out, ee) : 1;
    const Tolerance tolerance =
        toleranceFor(expected[i].scalar_type(), reduction_size);
    const std::string mismatch =
        compareOutput(outputs[i], expected[i], tolerance);
    if (!mismatch.empty()) {
      result += "output " + std::to_string(i) + " (" +
                (out != nullptr ? out->toString() : std::string("?")) +
                ") differs from the reference: " + mismatch + ".\n";
    }
  }
  return result;
}

void validateOutputs(
    Fusion* fusion, const std::vector<at::Tensor>& outputs,
    const std::vector<at::Tensor>& expected, ExpressionEvaluator& ee, int line,
    const char* file, const std::string& err_msg) {
  const std::string found = mismatches(fusion, outputs, expected, ee);
  if (!found.empty()) {
    ADD_FAILURE_AT(file, line) << "testValidate: " << found << err_msg;
  }
}

} // namespace

void testValidate(
    Fusion* fusion, const std::vector<at::Tensor>& outputs,
    const std::vector<c10::IValue>& inputs, int line, const char* file,
    std::string err_msg) {
  ExpressionEvaluator ee;
  std::vector<at::Tensor> expected;
  try {
    expected = evaluateFusionWithATen(fusion, inputs, ee);
  } catch (const std::exception& e) {
    ADD_FAILURE_AT(file, line)
        << "testValidate: the ATen evaluation of the fusion failed: "
        << e.what() << " " << err_msg;
    return;
  }
  validateOutputs(fusion, outputs, expected, ee, line, file, err_msg);
}

void testValidate(
    Fusion* fusion, const std::vector<at::Tensor>& outputs,
    const std::vector<c10::IValue>& inputs,
    const std::vector<at::Tensor>& expected_outputs, int line, const char* file,
    std::string err_msg) {
  ExpressionEvaluator ee;
  try {
    bindFusionInputs(fusion, inputs, ee, /*require_cuda=*/false);
  } catch (const std::exception& e) {
    ADD_FAILURE_AT(file, line)
        << "testValidate: binding the inputs failed: " << e.what() << " "
        << err_msg;
    return;
  }
  validateOutputs(fusion, outputs, expected_outputs, ee, line, file, err_msg);
}

void FuserTest::SetUp() {
  fallbacks_at_start_ = kernelFallbackCount();
  if (!deviceAvailable()) {
    GTEST_SKIP() << "No CUDA device: this test runs kernels and needs a GPU "
                    "(it runs in tools/gpu_test.sh on a GPU machine).";
  }
}

void FuserTest::TearDown() {
  EXPECT_EQ(kernelFallbackCount(), fallbacks_at_start_)
      << "a kernel failed in this test and its segment ran with ATen "
         "instead (the warning above says why)";
}

void FuserTest::expectKernelFallbacks() {
  fallbacks_at_start_ = kernelFallbackCount();
}

std::string referenceMismatches(
    Fusion* fusion, const std::vector<at::Tensor>& outputs,
    const std::vector<c10::IValue>& inputs) {
  ExpressionEvaluator ee;
  std::vector<at::Tensor> expected;
  try {
    expected = evaluateFusionWithATen(fusion, inputs, ee);
  } catch (const std::exception& e) {
    return std::string("the ATen evaluation of the fusion failed: ") + e.what();
  }
  return mismatches(fusion, outputs, expected, ee);
}

} // namespace fuser
