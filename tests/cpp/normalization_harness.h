// What the inner persistent scheduler's tests share: the fixtures, the
// cases (a fusion and its CPU inputs), and scheduling and compiling a case
// as the runtime would, with its heuristics and kernel code
// (tests/cpp/test_normalization.cpp, test_normalization_heuristics.cpp).
#pragma once

#include <codegen/codegen.h>
#include <ops/normalization.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/normalization_inner.h>
#include <scheduler/persistent_buffers.h>
#include <tests/cpp/reduction_harness.h>

#include <gmock/gmock.h>

#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace fuser {

class NormalizationTest : public FuserIrTest {
 protected:
  void SetUp() override {
    FuserIrTest::SetUp();
    at::manual_seed(0);
  }
};
class NormalizationGpuTest : public FuserTest {
 protected:
  void SetUp() override {
    FuserTest::SetUp();
    at::manual_seed(0);
  }
};

inline Val* eps() {
  return IrBuilder::create<Val>(1e-5);
}

inline at::ScalarType atenType(DataType dtype) {
  return dtype == DataType::Float      ? at::kFloat
         : dtype == DataType::BFloat16 ? at::kBFloat16
         : dtype == DataType::Half     ? at::kHalf
                                       : at::kDouble;
}

// A fusion over inputs of `shapes` (all of `dtype`, contiguous unless a
// given tensor says otherwise) and the outputs `build` adds.
struct NormCase {
  std::string name;
  std::unique_ptr<Fusion> fusion;
  std::vector<at::Tensor> inputs; // on the CPU
  SchedulerType expected = SchedulerType::InnerPersistent;
};

using Build = std::function<void(Fusion*, const std::vector<TensorView*>&)>;

inline NormCase normCase(
    std::string name, const std::vector<at::Tensor>& inputs, const Build& build,
    bool symbolic = false) {
  NormCase c;
  c.name = std::move(name);
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  std::vector<TensorView*> tvs;
  for (const at::Tensor& t : inputs) {
    const DataType dtype = t.scalar_type() == at::kFloat ? DataType::Float
                           : t.scalar_type() == at::kBFloat16
                               ? DataType::BFloat16
                           : t.scalar_type() == at::kHalf ? DataType::Half
                                                          : DataType::Double;
    tvs.push_back(
        symbolic ? makeSymbolicTensor(t.dim(), dtype)
                 : makeContigTensor(t.dim(), dtype));
    c.fusion->addInput(tvs.back());
  }
  build(c.fusion.get(), tvs);
  c.inputs = inputs;
  return c;
}

inline std::string shapeName(const std::vector<int64_t>& shape) {
  std::string name = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    name += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return name + "]";
}

inline at::Tensor randn(const std::vector<int64_t>& shape, DataType dtype) {
  return at::randn(shape).to(atenType(dtype));
}

inline Build softmaxOf(int64_t dim) {
  return [dim](Fusion* f, const std::vector<TensorView*>& in) {
    f->addOutput(softmax(in[0], dim));
  };
}

inline Build layerNormOf(bool affine, bool statistics) {
  return [=](Fusion* f, const std::vector<TensorView*>& in) {
    // Only the number of normalized axes matters to the op.
    ForwardNormResult r = layer_norm(
        in[0], {1}, affine ? in[1] : nullptr, affine ? in[2] : nullptr, eps());
    f->addOutput(r.output);
    if (statistics) {
      f->addOutput(r.mean);
      f->addOutput(r.invstd);
    }
  };
}

inline Build rmsNormOf(bool weighted) {
  return [=](Fusion* f, const std::vector<TensorView*>& in) {
    f->addOutput(
        rms_norm(in[0], {1}, weighted ? in[1] : nullptr, eps()).output);
  };
}

// Schedules a copy of `c` for its inputs; the kernel must compile.
inline std::unique_ptr<HeuristicParams> scheduleAndCompile(
    const NormCase& c, SchedulerType* type, std::string* rejections,
    std::string* kernel = nullptr) {
  Fusion copy(*c.fusion);
  std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
  RuntimeInfo info = makeRuntimeInfo(&copy, inputs, /*require_cuda=*/false);
  SchedulerChoice choice = chooseScheduler(&copy, info);
  *type = choice.scheduler->type();
  for (const std::string& r : choice.rejections) {
    *rejections += r + "\n";
  }
  auto params = choice.scheduler->computeHeuristics(&copy, info);
  if (*type == SchedulerType::InnerPersistent) {
    choice.scheduler->schedule(&copy, *params);
    const std::string code =
        generateCudaKernel(&copy, DataType::Int32, params->kernelFlags());
    EXPECT_THAT(code, ::testing::HasSubstr("blockAllReduce"));
    EXPECT_NO_THROW(compileToCubin(code, "fuser_kernel", 90, true))
        << params->toString();
    if (kernel != nullptr) {
      *kernel = code;
    }
  }
  return params;
}

// A bf16 layer norm [48, 4096] with weight and bias.
inline NormCase bf16LayerNorm4096() {
  return normCase(
      "layer_norm",
      {randn({48, 4096}, DataType::BFloat16), randn({4096}, DataType::BFloat16),
       randn({4096}, DataType::BFloat16)},
      layerNormOf(true, false));
}

// The input gradient of a bf16 layer norm [64, 4096] as
// benchmarks/bench_normalization.py writes it: dy, x and w in bf16, the
// statistics in float, the math in float.
inline NormCase bf16LayerNormBackward4096() {
  const DataType bf16 = DataType::BFloat16;
  return normCase(
      "layer_norm_backward",
      {randn({64, 4096}, bf16), randn({64, 4096}, bf16), randn({4096}, bf16),
       at::randn({64}), at::rand({64})},
      [](Fusion* f, const std::vector<TensorView*>& in) {
        auto rows = [](TensorView* s) { return broadcast(s, {false, true}); };
        TensorView* dy = castOp(DataType::Float, in[0]);
        TensorView* x = castOp(DataType::Float, in[1]);
        TensorView* w =
            broadcast(castOp(DataType::Float, in[2]), {true, false});
        TensorView* xhat = mul(sub(x, rows(in[3])), rows(in[4]));
        TensorView* g = mul(dy, w);
        Val* n = IrBuilder::create<Val>(4096.0);
        TensorView* mean_g = rows(div(sum(g, {1}), n));
        TensorView* mean_gx = rows(div(sum(mul(g, xhat), {1}), n));
        f->addOutput(castOp(
            DataType::BFloat16,
            mul(rows(in[4]), sub(sub(g, mean_g), mul(xhat, mean_gx)))));
      });
}

// The heuristics of `c` and its kernel's code, when the inner persistent
// scheduler takes it (else a failure and nullptr).
inline std::unique_ptr<HeuristicParams> persistentKernel(
    const NormCase& c, std::string* code) {
  SchedulerType type;
  std::string rejections;
  auto params = scheduleAndCompile(c, &type, &rejections, code);
  EXPECT_EQ(type, SchedulerType::InnerPersistent) << rejections;
  return type == SchedulerType::InnerPersistent ? std::move(params) : nullptr;
}

inline const InnerPersistentParams& persistentParams(const HeuristicParams& p) {
  return dynamic_cast<const InnerPersistentParams&>(p);
}

// The inner persistent scheduler's parameters for `c` (its kernel
// compiled), a failure naming the rejections if another scheduler took it.
inline InnerPersistentParams innerPersistentParamsOf(const NormCase& c) {
  SchedulerType type;
  std::string rejections;
  auto params = scheduleAndCompile(c, &type, &rejections);
  EXPECT_EQ(type, SchedulerType::InnerPersistent) << rejections;
  return persistentParams(*params);
}

// Runs `c` once through `fec` on the GPU (its inputs copied there with
// their strides, unless there already), checks the outputs against ATen
// (failures name `file` and `line`) and returns the runtime that ran.
inline const FusionKernelRuntime* runAndValidate(
    FusionExecutorCache& fec, const NormCase& c, const char* file, int line) {
  std::vector<c10::IValue> inputs;
  for (const at::Tensor& t : c.inputs) {
    inputs.emplace_back(t.is_cuda() ? t : onDevice(t));
  }
  std::vector<at::Tensor> outputs = fec.runFusionWithInputs(inputs);
  testValidate(fec.fusion(), outputs, inputs, line, file, c.name);
  return fec.getMostRecentKernelRuntime();
}

// runAndValidate through a fresh cache; `c` must have run as one kernel of
// `type`.
inline void expectOneKernel(
    const NormCase& c, SchedulerType type, const char* file, int line) {
  FusionExecutorCache fec(std::make_unique<Fusion>(*c.fusion));
  const FusionKernelRuntime* runtime = runAndValidate(fec, c, file, line);
  EXPECT_EQ(runtime->schedulerType(), type) << c.name;
  EXPECT_FALSE(runtime->isSegmented()) << c.name;
}

} // namespace fuser
