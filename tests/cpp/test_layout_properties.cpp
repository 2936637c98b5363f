// Property tests: random pointwise fusions over random valid input layouts
// (tests/cpp/random_fusion.h), scheduled by the registry as the runtime
// does, and the regression tests for the layouts they found broken.
//
// On the CPU every scheduled kernel runs on the kernel IR interpreter
// (kernel_ir_interpreter.h) with the allocation strides and element offsets
// the test computed itself: no read outside an input's elements (the
// buffers have gaps: padded rows, steps), every output element written
// exactly once and nothing else written, and every element holding what the
// fusion computes at its coordinate from the input elements there. No
// scheduler may raise a UserError for a layout that binding accepted, and
// the pointwise scheduler must take every one of these fusions.
//
// On the GPU the same cases run through FusionExecutorCache on inputs that
// are views into NaN-filled buffers and are compared with ATen, outputs in
// their declared layout.
#include <device_lower/lower.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <layout/vectorization.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/input_binding.h>
#include <scheduler/pointwise.h>
#include <scheduler/registry.h>
#include <tests/cpp/kernel_ir_interpreter.h>
#include <tests/cpp/property_harness.h>
#include <tests/cpp/random_fusion.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fuser {

namespace {

using kir_test::Coord;
using kir_test::Value;
using random_fusion::Case;

class LayoutPropertyTest : public FuserIrTest {};
class LayoutPropertyGpuTest : public FuserTest {};

// How many failing cases are reported in full (FUSER_PROPERTY_REPORTS).
int64_t maxReports() {
  return envCount("FUSER_PROPERTY_REPORTS", 5);
}

// What the unscheduled fusion computes at coordinate `c` of `v`, in double,
// as the interpreter does, naming the input elements it reads.
class ReferenceEvaluator {
 public:
  explicit ReferenceEvaluator(const Case& c) : case_(c) {
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      auto* tv = c.fusion->inputs()[i]->as<TensorView>();
      layouts_.emplace(tv, random_fusion::inputLayout(c.inputs[i]));
      inverses_.emplace(tv, layouts_.at(tv).inverse());
    }
  }

  Value at(Val* v, const Coord& c) {
    if (!v->isA<TensorView>()) {
      return Value{v->value().asDouble(), {}};
    }
    auto* tv = v->as<TensorView>();
    // Broadcast axes read position 0.
    Coord own = c;
    const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
    for (size_t a = 0; a < logical.size(); ++a) {
      if (logical[a]->isBroadcast()) {
        own[a] = 0;
      }
    }
    if (tv->isFusionInput()) {
      const kir_test::BufferLayout& layout = layouts_.at(tv);
      const int64_t offset = *layout.offsetOf(own);
      return kir_test::inputValue(tv->name(), inverses_.at(tv).at(offset));
    }
    Expr* def = tv->definition();
    if (auto* bop = dynamic_cast<BroadcastOp*>(def)) {
      Coord in;
      for (size_t a = 0; a < own.size(); ++a) {
        if (!bop->getBroadcastDimFlags()[a]) {
          in.push_back(own[a]);
        }
      }
      return at(bop->in(), in);
    }
    std::vector<Value> operands;
    for (Val* in : def->inputs()) {
      operands.push_back(at(in, own));
    }
    double number = 0.0;
    if (auto* uop = dynamic_cast<UnaryOp*>(def)) {
      number =
          evaluateUnaryOp(
              uop->opType(), ScalarValue(operands[0].number), DataType::Double)
              .asDouble();
    } else if (auto* bin = dynamic_cast<BinaryOp*>(def)) {
      number = evaluateBinaryOp(
                   bin->opType(), ScalarValue(operands[0].number),
                   ScalarValue(operands[1].number), DataType::Double)
                   .asDouble();
    } else {
      number = operands[0].number; // a copy
    }
    Value result{number, {}};
    for (const Value& operand : operands) {
      result.sources.add(operand.sources);
    }
    return result;
  }

 private:
  const Case& case_;
  std::map<TensorView*, kir_test::BufferLayout> layouts_;
  std::map<TensorView*, std::map<int64_t, Coord>> inverses_;
};

std::string joinErrors(const kir_test::KernelInterpreter& interpreter) {
  std::stringstream ss;
  for (const std::string& e : interpreter.errors()) {
    ss << "    " << e << "\n";
  }
  return ss.str();
}

// Schedules, lowers and interprets one case; returns "" or what went wrong.
std::string checkCaseOnInterpreter(const Case& c) {
  std::stringstream failure;
  const std::vector<at::Tensor> tensors =
      random_fusion::makeInputs(c, at::kCPU, c.seed);
  std::vector<c10::IValue> inputs(tensors.begin(), tensors.end());
  Fusion scheduled(*c.fusion);
  std::unique_ptr<LoweredKernel> kernel;
  std::string params;
  try {
    RuntimeInfo info = makeRuntimeInfo(&scheduled, inputs, false);
    SchedulerChoice choice = chooseScheduler(&scheduled, info);
    if (choice.scheduler->type() != SchedulerType::PointWise) {
      failure << "scheduled by " << choice.scheduler->type()
              << ", not PointWise:";
      for (const auto& r : choice.rejections) {
        failure << "\n    " << r;
      }
      return failure.str();
    }
    auto heuristics = choice.scheduler->computeHeuristics(&scheduled, info);
    params = heuristics->toString();
    choice.scheduler->schedule(&scheduled, *heuristics);
    GpuLower lower(&scheduled, DataType::Int32);
    kernel = lower.run();
  } catch (const std::exception& e) {
    failure << "threw while scheduling or lowering: " << e.what() << "\n  "
            << params << "\n  scheduled fusion:\n"
            << scheduled.toString();
    return failure.str();
  }

  std::map<int64_t, kir_test::BufferLayout> layouts;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    layouts[scheduled.inputs()[i]->name()] =
        random_fusion::inputLayout(c.inputs[i]);
  }
  std::vector<kir_test::BufferLayout> output_layouts;
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    auto* tv = scheduled.outputs()[o]->as<TensorView>();
    random_fusion::Layout layout = c.outputs[o].layout;
    if (!layout.declared) {
      // The scheduler may give an output without a layout the layout of an
      // input (a permutation); read it off the scheduled output.
      const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
      layout.order.clear();
      for (IterDomain* id : tv->getMaybeAllocationDomain()) {
        auto it = std::find(logical.begin(), logical.end(), id);
        if (it == logical.end()) {
          return "the scheduler gave output " + std::to_string(o) +
                 " an allocation that is not a permutation: " + tv->toString();
        }
        layout.order.push_back(it - logical.begin());
      }
    }
    Coord shape = c.shape;
    const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
    for (size_t a = 0; a < logical.size(); ++a) {
      if (logical[a]->isBroadcast()) {
        shape[a] = 1;
      }
    }
    layouts[tv->name()] = random_fusion::outputLayout(layout, shape);
    output_layouts.push_back(layouts[tv->name()]);
  }

  kir_test::KernelInterpreter interpreter(*kernel, layouts);
  const bool ran = interpreter.run();
  if (!ran || interpreter.errorCount() > 0) {
    failure << "the interpreter reports " << interpreter.errorCount()
            << " errors:\n"
            << joinErrors(interpreter);
  }
  ReferenceEvaluator reference(c);
  for (size_t o = 0; ran && o < c.outputs.size(); ++o) {
    auto* tv = scheduled.outputs()[o]->as<TensorView>();
    const kir_test::BufferLayout& layout = output_layouts[o];
    const auto& counts = interpreter.writeCounts(tv->name());
    const auto& values = interpreter.storage(tv->name());
    int reports = 0;
    int64_t bad_counts = 0;
    int64_t bad_values = 0;
    for (const auto& [offset, coord] : layout.inverse()) {
      const auto k = static_cast<size_t>(offset);
      if (counts[k] != 1) {
        ++bad_counts;
        if (reports++ < 6) {
          failure << "  output " << o << " element " << kir_test::str(coord)
                  << " written " << counts[k] << " times\n";
        }
        continue;
      }
      const Value expected = reference.at(c.fusion->outputs()[o], coord);
      if (*values[k] != expected) {
        ++bad_values;
        if (reports++ < 6) {
          failure << "  output " << o << " element " << kir_test::str(coord)
                  << " holds " << kir_test::str(*values[k]) << ", expected "
                  << kir_test::str(expected) << "\n";
        }
      }
    }
    if (bad_counts + bad_values > 0) {
      failure << "  output " << o << ": " << bad_counts
              << " elements not written exactly once, " << bad_values
              << " with a wrong value\n";
    }
  }
  // The run-time conditions of the vectorized accesses hold for these
  // inputs (the scheduler saw them): extents divisible by the width.
  ExpressionEvaluator ee;
  for (size_t p = 0; p < kernel->parameters.size(); ++p) {
    auto* tv = dynamic_cast<TensorView*>(kernel->parameters[p]);
    if (tv == nullptr) {
      continue;
    }
    const kir_test::BufferLayout& layout = layouts.at(tv->name());
    for (size_t j = 0; j < layout.logical_sizes.size(); ++j) {
      ee.bind(
          "T" + std::to_string(tv->name()) + ".logical_size[" +
              std::to_string(j) + "]",
          ScalarValue(layout.logical_sizes[j]));
    }
  }
  // Every condition the runtime checks, on the test's own layouts: the run
  // is a multiple of the width, the strides between runs and the data
  // pointers are aligned.
  std::vector<TensorView*> tensor_parameters;
  for (Val* param : kernel->parameters) {
    if (auto* tv = dynamic_cast<TensorView*>(param)) {
      tensor_parameters.push_back(tv);
    }
  }
  for (const VectorizationCheck& check : kernel->vectorization_checks) {
    TensorView* tv =
        tensor_parameters.at(static_cast<size_t>(check.tensor_position));
    const kir_test::BufferLayout& layout = layouts.at(tv->name());
    StridedAxes between_runs;
    for (size_t k : check.strided_positions) {
      between_runs.sizes.push_back(layout.alloc_sizes.at(k));
      between_runs.strides.push_back(layout.alloc_strides.at(k));
    }
    int64_t alignment = 16; // an output: a fresh allocation
    const auto& inputs = kernel->fusion->inputs();
    auto it = std::find(inputs.begin(), inputs.end(), tv);
    if (it != inputs.end()) {
      alignment = pointerAlignment(
          tensors.at(static_cast<size_t>(it - inputs.begin())).data_ptr());
    }
    const auto extent = ee.evaluate(check.extent);
    const std::string violation =
        !extent.has_value() ? "its extent cannot be evaluated"
                            : vectorAccessViolation(
                                  check.width, dataTypeSize(tv->dtype()),
                                  extent->asInt(), between_runs, alignment);
    if (!violation.empty()) {
      failure << "  the vectorized access of " << tv->toString() << " by "
              << check.width << " would be rejected at run time: " << violation
              << "\n";
    }
  }
  if (!failure.str().empty()) {
    failure << "  " << params << "\n  kernel IR:\n"
            << kir::toString(kernel->exprs);
  }
  return failure.str();
}

// Runs one case through FusionExecutorCache on the GPU and compares with
// ATen; returns "" or what went wrong.
std::string checkCaseOnGpu(const Case& c) {
  std::stringstream failure;
  try {
    const std::vector<at::Tensor> tensors =
        random_fusion::makeInputs(c, at::kCUDA, c.seed);
    std::vector<c10::IValue> inputs(tensors.begin(), tensors.end());
    FusionExecutorCache executor_cache(std::make_unique<Fusion>(*c.fusion));
    std::vector<at::Tensor> outputs =
        executor_cache.runFusionWithInputs(inputs);
    FusionKernelRuntime* runtime = executor_cache.getMostRecentKernelRuntime();
    if (runtime->schedulerType() != SchedulerType::PointWise) {
      failure << "scheduled by " << runtime->schedulerType() << "\n";
    }
    failure << referenceMismatches(c.fusion.get(), outputs, inputs);
    for (size_t o = 0; o < outputs.size(); ++o) {
      if (!c.outputs[o].layout.declared) {
        continue;
      }
      const std::vector<int64_t> strides =
          random_fusion::expectedOutputStrides(c.outputs[o].layout, c.shape);
      for (size_t a = 0; a < strides.size(); ++a) {
        if (outputs[o].size(static_cast<int64_t>(a)) > 1 &&
            outputs[o].stride(static_cast<int64_t>(a)) != strides[a]) {
          failure << "output " << o << " has strides "
                  << random_fusion::join(outputs[o].strides().vec())
                  << ", its layout gives " << random_fusion::join(strides)
                  << "\n";
          break;
        }
      }
    }
    if (!failure.str().empty()) {
      const std::string& code = runtime->kernelCode();
      failure << runtime->segments().front().params->toString() << "\n"
              << code.substr(
                     std::min(code.size(), code.find("// ---- kernel")));
    }
  } catch (const std::exception& e) {
    failure << "threw: " << e.what();
  }
  return failure.str();
}

} // namespace

// Every random case schedules as PointWise, lowers without an error and
// runs correctly on the interpreter (see the top of the file).
TEST_F(LayoutPropertyTest, RandomPointwiseFusionsOnTheInterpreter) {
  const int64_t n = envCount("FUSER_PROPERTY_CPU_CASES", 300);
  const uint64_t first = firstSeed();
  random_fusion::Limits limits;
  limits.max_numel = 2048;
  int64_t failures = 0;
  for (int64_t k = 0; k < n; ++k) {
    const Case c = random_fusion::randomCase(first + k, limits);
    const std::string failure = checkCaseOnInterpreter(c);
    if (!failure.empty() && failures++ < maxReports()) {
      ADD_FAILURE() << c.toString() << "\n" << failure;
    }
  }
  EXPECT_EQ(failures, 0) << "of " << n << " cases";
}

// The same cases, larger, through FusionExecutorCache on the GPU against
// ATen; inputs are views into NaN-filled buffers.
TEST_F(LayoutPropertyGpuTest, RandomPointwiseFusionsMatchATen) {
  const int64_t n = envCount("FUSER_PROPERTY_GPU_CASES", 1200);
  const uint64_t first = firstSeed() + 1000000;
  random_fusion::Limits limits;
  limits.max_numel = 1 << 18;
  int64_t failures = 0;
  for (int64_t k = 0; k < n; ++k) {
    const Case c = random_fusion::randomCase(first + k, limits);
    const std::string failure = checkCaseOnGpu(c);
    if (!failure.empty() && failures++ < maxReports()) {
      ADD_FAILURE() << c.toString() << "\n" << failure;
    }
  }
  EXPECT_EQ(failures, 0) << "of " << n << " cases";
}

// ---------------------------------------------------------------------------
// Regression cases (each runs on the interpreter and, with a GPU, on the
// device against ATen)
// ---------------------------------------------------------------------------

namespace {

using random_fusion::addInput;
using random_fusion::addOutput;
using random_fusion::declaredLayout;
using random_fusion::logicalLayout;
using random_fusion::mergeAxes;
using random_fusion::splitAxis;
using random_fusion::stridedInput;

Case newCase(std::vector<int64_t> shape) {
  Case c;
  c.shape = std::move(shape);
  c.fusion = std::make_unique<Fusion>();
  return c;
}

// x + bias along the innermost axis, both cast through bfloat16 and back:
// a register-cached bias of a partly vectorized loop (the bias collided
// inside a vector: two bias elements at one buffer slot).
Case biasCase(
    std::vector<int64_t> shape, random_fusion::InputSpec x,
    random_fusion::InputSpec bias, std::vector<int64_t> bias_axes) {
  Case c = newCase(std::move(shape));
  FusionGuard fg(c.fusion.get());
  TensorView* tx = addInput(c, std::move(x));
  TensorView* tb = addInput(c, std::move(bias));
  std::vector<bool> flags(c.shape.size(), true);
  for (int64_t a : bias_axes) {
    flags[static_cast<size_t>(a)] = false;
  }
  TensorView* sum = add(tx, broadcast(tb, flags));
  TensorView* out = castOp(DataType::Float, castOp(DataType::BFloat16, sum));
  addOutput(c, out, logicalLayout(static_cast<int64_t>(c.shape.size())));
  c.program = "cast(cast(x + broadcast(bias), bf16), float)";
  return c;
}

// The smallest example: [16, 1, 9] with strides [162, 7, 2] and
// default contiguity flags, a bias [9] of stride 2.
Case biasOfStridedViewCase() {
  return biasCase(
      {16, 1, 9}, stridedInput({16, 1, 9}, {162, 7, 2}, logicalLayout(3), true),
      stridedInput({9}, {2}, logicalLayout(1), true), {2});
}

// A contiguous [10, 9, 7, 9] whose allocation splits its last axis, with a
// bias along axis 1.
Case biasOfSplitAllocationCase() {
  return biasCase(
      {10, 9, 7, 9},
      stridedInput(
          {10, 9, 7, 9}, {567, 63, 9, 1}, splitAxis(logicalLayout(4), 3, 3)),
      stridedInput({9}, {1}, logicalLayout(1)), {1});
}

// A per-channel vector of an NHWC [3, 6, 5, 7] tensor: the 2-D schedule
// over rows N*H*W and the 6 channels (not a multiple of 4).
Case biasOfNhwcChannelsCase() {
  return biasCase(
      {3, 6, 5, 7},
      stridedInput({3, 6, 5, 7}, {210, 1, 42, 6}, declaredLayout({0, 2, 3, 1})),
      stridedInput({6}, {1}, logicalLayout(1)), {1});
}

// Rows of 9 and 39 elements: not a multiple of the vector width.
Case biasOfOddRowsCase(int64_t n) {
  return biasCase(
      {16, n}, stridedInput({16, n}, {n, 1}, logicalLayout(2)),
      stridedInput({n}, {1}, logicalLayout(1)), {1});
}

// relu of one input, written to an output laid out as `out_layout`.
Case reluCase(random_fusion::InputSpec x, random_fusion::Layout out_layout) {
  Case c = newCase(x.sizes);
  FusionGuard fg(c.fusion.get());
  TensorView* tx = addInput(c, std::move(x));
  addOutput(c, relu(tx), std::move(out_layout));
  c.program = "relu(x)";
  return c;
}

// A [64, 300] tensor narrowed to [64, 256], declared contiguity
// [false, true]: the scheduler may vectorize the rows, never across them.
Case narrowedViewCase() {
  return reluCase(
      stridedInput({64, 256}, {300, 1}, logicalLayout(2)), logicalLayout(2));
}

// Rows of 32 elements `row_stride` apart, the inner axis split by 4 in the
// allocation: an odd stride leaves no aligned vector.
Case oddRowStrideCase(int64_t row_stride) {
  return reluCase(
      stridedInput(
          {48, 32}, {row_stride, 1}, splitAxis(logicalLayout(2), 1, 4)),
      logicalLayout(2));
}

// An output whose allocation merges its axes in column-major order, [i1*i0].
Case mergedOutputCase() {
  return reluCase(
      stridedInput({24, 40}, {40, 1}, logicalLayout(2)),
      mergeAxes(declaredLayout({1, 0}), 0));
}

// A broadcast axis innermost (size 1, declared broadcast) used to make a
// 2-D schedule whose inner part ran 128 threads over one element.
Case innerBroadcastCase() {
  Case c = newCase({100, 3, 4, 1});
  FusionGuard fg(c.fusion.get());
  random_fusion::InputSpec x =
      stridedInput({100, 3, 4, 1}, {12, 4, 1, 1}, logicalLayout(4));
  x.broadcast[3] = true;
  x.contiguity[3] = std::nullopt;
  TensorView* tx = addInput(c, std::move(x));
  addOutput(c, add(tx, IrBuilder::create<Val>(1.0)), logicalLayout(4));
  c.program = "x + 1";
  return c;
}

// One case per class of valid input layout: none may make a scheduler
// raise an error.
std::vector<std::pair<std::string, Case>> layoutClassCases() {
  std::vector<std::pair<std::string, Case>> cases;
  auto relu_of = [&](const std::string& name, random_fusion::InputSpec x) {
    const auto rank = static_cast<int64_t>(x.sizes.size());
    cases.emplace_back(name, reluCase(std::move(x), logicalLayout(rank)));
  };
  relu_of("contiguous", stridedInput({8, 24}, {24, 1}, logicalLayout(2)));
  relu_of(
      "permuted (NHWC)",
      stridedInput(
          {2, 8, 5, 6}, {240, 1, 48, 8}, declaredLayout({0, 2, 3, 1})));
  relu_of(
      "split, contiguous",
      stridedInput({12, 20}, {20, 1}, splitAxis(logicalLayout(2), 0, 4)));
  relu_of(
      "outer split",
      stridedInput(
          {12, 20}, {20, 1}, splitAxis(logicalLayout(2), 1, 5, false)));
  relu_of(
      "split then permuted",
      stridedInput({8, 12}, {1, 8}, splitAxis(declaredLayout({1, 0}), 1, 4)));
  relu_of(
      "merged", stridedInput({6, 10}, {10, 1}, mergeAxes(logicalLayout(2), 0)));
  relu_of(
      "narrowed view",
      stridedInput(
          {16, 30}, {33, 1}, logicalLayout(2), false, DataType::Float, 2));
  relu_of(
      "non-contiguous middle axis",
      stridedInput({4, 6, 8}, {70, 10, 1}, logicalLayout(3)));
  relu_of("inner step", stridedInput({16, 12}, {24, 2}, logicalLayout(2)));
  relu_of("stride 0", stridedInput({16, 12}, {0, 1}, logicalLayout(2)));
  relu_of(
      "size 1 with an odd stride",
      stridedInput({5, 1, 8}, {8, 37, 1}, logicalLayout(3)));
  relu_of(
      "default flags", stridedInput({8, 24}, {24, 1}, logicalLayout(2), true));
  cases.emplace_back("odd row stride 37", oddRowStrideCase(37));
  cases.emplace_back("merged output", mergedOutputCase());
  return cases;
}

} // namespace

TEST_F(LayoutPropertyTest, BiasOfStridedView) {
  const Case c = biasOfStridedViewCase();
  EXPECT_EQ(checkCaseOnInterpreter(c), "") << c.toString();
}

TEST_F(LayoutPropertyTest, BiasOfSplitAllocation) {
  const Case c = biasOfSplitAllocationCase();
  EXPECT_EQ(checkCaseOnInterpreter(c), "") << c.toString();
}

TEST_F(LayoutPropertyTest, BiasOfNhwcChannels) {
  const Case c = biasOfNhwcChannelsCase();
  EXPECT_EQ(checkCaseOnInterpreter(c), "") << c.toString();
}

TEST_F(LayoutPropertyTest, BiasOfRowsNotAMultipleOfTheWidth) {
  for (int64_t n : {9, 39}) {
    const Case c = biasOfOddRowsCase(n);
    EXPECT_EQ(checkCaseOnInterpreter(c), "") << c.toString();
  }
}

TEST_F(LayoutPropertyTest, NarrowedViewIsVectorizedWithinRows) {
  const Case c = narrowedViewCase();
  EXPECT_EQ(checkCaseOnInterpreter(c), "") << c.toString();
  // The rows are 256 elements, 300 apart: vectors of 4 floats fit.
  Fusion scheduled(*c.fusion);
  const auto tensors = random_fusion::makeInputs(c, at::kCPU, 1);
  RuntimeInfo info = makeRuntimeInfo(
      &scheduled, std::vector<c10::IValue>(tensors.begin(), tensors.end()),
      false);
  auto params = schedulerFor(SchedulerType::PointWise)
                    .computeHeuristics(&scheduled, info);
  EXPECT_EQ(dynamic_cast<const PointwiseParams&>(*params).vectorize, 4)
      << params->toString();
}

// Rows 36 floats apart keep 16-byte vectors aligned; 37 apart do not, so
// the scheduler does not vectorize rather than fail.
TEST_F(LayoutPropertyTest, OddRowStrideVectorizesOnlyWhenAligned) {
  for (auto [stride, width] : {std::pair{36, 4}, std::pair{37, 1}}) {
    const Case c = oddRowStrideCase(stride);
    EXPECT_EQ(checkCaseOnInterpreter(c), "") << c.toString();
    Fusion scheduled(*c.fusion);
    const auto tensors = random_fusion::makeInputs(c, at::kCPU, 1);
    RuntimeInfo info = makeRuntimeInfo(
        &scheduled, std::vector<c10::IValue>(tensors.begin(), tensors.end()),
        false);
    auto params = schedulerFor(SchedulerType::PointWise)
                      .computeHeuristics(&scheduled, info);
    EXPECT_EQ(dynamic_cast<const PointwiseParams&>(*params).vectorize, width)
        << params->toString();
  }
}

TEST_F(LayoutPropertyTest, MergedOutputAllocation) {
  const Case c = mergedOutputCase();
  EXPECT_EQ(checkCaseOnInterpreter(c), "") << c.toString();
}

TEST_F(LayoutPropertyTest, InnerBroadcastIsWrittenOnce) {
  const Case c = innerBroadcastCase();
  EXPECT_EQ(checkCaseOnInterpreter(c), "") << c.toString();
}

// Every class of valid layout is scheduled (PointWise), lowered and run on
// the interpreter without an error.
TEST_F(LayoutPropertyTest, NoLayoutClassMakesASchedulerFail) {
  for (const auto& [name, c] : layoutClassCases()) {
    EXPECT_EQ(checkCaseOnInterpreter(c), "") << name << "\n" << c.toString();
  }
}

TEST_F(LayoutPropertyGpuTest, RegressionCasesMatchATen) {
  std::vector<std::pair<std::string, Case>> cases;
  cases.emplace_back("bias of a strided view", biasOfStridedViewCase());
  cases.emplace_back("bias of a split allocation", biasOfSplitAllocationCase());
  cases.emplace_back("bias of rows of 9", biasOfOddRowsCase(9));
  cases.emplace_back("bias of NHWC channels", biasOfNhwcChannelsCase());
  cases.emplace_back("bias of rows of 39", biasOfOddRowsCase(39));
  cases.emplace_back("narrowed view", narrowedViewCase());
  cases.emplace_back("odd row stride 36", oddRowStrideCase(36));
  cases.emplace_back("inner broadcast", innerBroadcastCase());
  for (auto& entry : layoutClassCases()) {
    cases.push_back(std::move(entry));
  }
  for (const auto& [name, c] : cases) {
    EXPECT_EQ(checkCaseOnGpu(c), "") << name << "\n" << c.toString();
  }
}

// Every executor returns outputs in their declared allocation layout: the
// kernel (PointWise), ATen (ExprEval, here for a reduction whose output
// has an allocation domain, which the reduction scheduler declines) and
// NoOp (an empty output).
TEST_F(LayoutPropertyGpuTest, EveryExecutorReturnsTheDeclaredLayout) {
  // Column-major: the two logical axes merged, the second outer (a
  // reduction axis, taking no memory, goes last).
  auto column_major = [](TensorView* tv) {
    const auto& logical = tv->getLogicalDomain();
    std::vector<IterDomain*> allocation = {
        IterDomain::merge(logical[1], logical[0])};
    allocation.insert(allocation.end(), logical.begin() + 2, logical.end());
    tv->setAllocationDomain(allocation, true);
  };
  const auto options = at::TensorOptions().device(at::kCUDA);
  {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* in = makeContigTensor(2);
    fusion->addInput(in);
    TensorView* out = relu(in);
    fusion->addOutput(out);
    column_major(out);
    FusionExecutorCache fec(std::move(fusion));
    at::Tensor x = at::randn({24, 40}, options);
    at::Tensor y = fec.runFusionWithInputs({x})[0];
    EXPECT_EQ(
        fec.getMostRecentKernelRuntime()->schedulerType(),
        SchedulerType::PointWise);
    EXPECT_EQ(y.strides().vec(), (std::vector<int64_t>{1, 24}));
    EXPECT_TRUE(at::equal(y, at::relu(x)));
  }
  {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* in = makeContigTensor(3);
    fusion->addInput(in);
    TensorView* out = sum(in, {2});
    fusion->addOutput(out);
    column_major(out);
    FusionExecutorCache fec(std::move(fusion));
    at::Tensor x = at::randn({24, 40, 5}, options);
    at::Tensor y = fec.runFusionWithInputs({x})[0];
    EXPECT_EQ(
        fec.getMostRecentKernelRuntime()->schedulerType(),
        SchedulerType::ExprEval);
    EXPECT_EQ(y.strides().vec(), (std::vector<int64_t>{1, 24}));
    EXPECT_TRUE(at::allclose(y, x.sum({2}), 1e-5, 1e-5));
  }
  {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* in = makeContigTensor(2);
    fusion->addInput(in);
    TensorView* out = relu(in);
    fusion->addOutput(out);
    out->setAllocationDomain({out->axis(1), out->axis(0)}, true);
    FusionExecutorCache fec(std::move(fusion));
    at::Tensor y = fec.runFusionWithInputs({at::randn({0, 5}, options)})[0];
    EXPECT_EQ(
        fec.getMostRecentKernelRuntime()->schedulerType(), SchedulerType::NoOp);
    EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{0, 5}));
    // Allocated as [5, 0] and viewed back (a size 0 counts as 1).
    EXPECT_EQ(y.strides().vec(), (std::vector<int64_t>{1, 1}));
  }
}

} // namespace fuser
