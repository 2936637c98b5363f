// Property-based tests of the reduction scheduler: random shapes (rank 1
// to 4, size-1 axes included), random memory orders of the input, random
// reduced axes, ops, keep_dim, prologues and epilogues, and a second
// reduction of the same axes in the same kernel. On the CPU each kernel
// runs on the kernel-IR interpreter (every output element written
// once, with the value and the input elements of its row); on the GPU,
// with larger shapes and bf16/half inputs too, against ATen.
//   FUSER_PROPERTY_REDUCTION_CASES      CPU cases (default 40)
//   FUSER_PROPERTY_REDUCTION_GPU_CASES  GPU cases (default 300)
//   FUSER_PROPERTY_SEED                 the first case's seed (default 1)
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/property_harness.h>
#include <tests/cpp/reduction_harness.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace fuser {

class ReductionPropertyTest : public FuserIrTest {};
class ReductionPropertyGpuTest : public FuserTest {};

namespace {

struct RandomReduction {
  std::vector<int64_t> sizes;
  std::vector<int64_t> order; // memory order of the input's logical axes
  std::vector<int64_t> axes;  // reduced, ascending, not empty
  int op = 0;                 // sum, max, min, mean
  bool keep_dim = false;
  int prologue = 0;      // none, x * x, x + 1.5
  bool epilogue = false; // the result times 2
  bool second = false;   // also sum(x * x) over the same axes, in one kernel
  DataType dtype = DataType::Float;

  std::string toString() const {
    static const char* ops[] = {"sum", "max", "min", "mean"};
    static const char* prologues[] = {"x", "x * x", "x + 1.5"};
    std::stringstream ss;
    ss << ops[op] << "(" << prologues[prologue] << ", axes "
       << kir_test::str(axes) << (keep_dim ? ", keep_dim" : "") << ")"
       << (epilogue ? " * 2" : "") << (second ? " and sum(x * x)" : "")
       << " of " << kir_test::str(sizes) << " in memory order "
       << kir_test::str(order) << ", " << dtype;
    return ss.str();
  }

  void build(Fusion* fusion, TensorView* in) const {
    TensorView* x = in;
    if (prologue == 1) {
      x = mul(in, in);
    } else if (prologue == 2) {
      x = add(in, IrBuilder::create<Val>(1.5));
    }
    TensorView* r = nullptr;
    switch (op) {
      case 0:
        r = sum(x, axes, keep_dim);
        break;
      case 1:
        r = max(x, axes, keep_dim);
        break;
      case 2:
        r = min(x, axes, keep_dim);
        break;
      default:
        r = mean(x, axes, keep_dim);
        break;
    }
    fusion->addOutput(epilogue ? mul(r, IrBuilder::create<Val>(2.0)) : r);
    if (second) {
      fusion->addOutput(sum(mul(x, x), axes, keep_dim));
    }
  }
};

// At most `max_elements` elements; `dtypes` to draw the input's from.
RandomReduction randomReduction(
    uint64_t seed, int64_t max_elements, const std::vector<DataType>& dtypes) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t n) { return fuser::pick(rng, n); };
  static const std::vector<int64_t> extents = {
      1,  2,  3,   4,   5,   7,   8,   12,   16,   31,   32,
      33, 64, 100, 128, 129, 255, 256, 1000, 1024, 4096, 10000};
  RandomReduction r;
  r.sizes = randomSizes(rng, extents, 1, 4, max_elements, &r.order);
  const auto rank = static_cast<int64_t>(r.sizes.size());
  for (int64_t a = 0; a < rank; ++a) {
    if (pick(2) == 1) {
      r.axes.push_back(a);
    }
  }
  if (r.axes.empty()) {
    r.axes.push_back(pick(rank));
  }
  r.op = static_cast<int>(pick(4));
  r.keep_dim = pick(4) == 0;
  r.prologue = static_cast<int>(pick(3));
  r.epilogue = pick(3) == 0;
  r.second = pick(4) == 0;
  r.dtype =
      dtypes[static_cast<size_t>(pick(static_cast<int64_t>(dtypes.size())))];
  return r;
}

// The GPU variant's case for `seed`: up to 1M elements, float, bf16 or half.
RandomReduction gpuCase(uint64_t seed) {
  return randomReduction(
      seed, int64_t(1) << 20,
      {DataType::Float, DataType::Float, DataType::BFloat16, DataType::Half});
}

Case caseOf(const RandomReduction& r) {
  return reductionCase(
      r.sizes, [&r](Fusion* f, TensorView* in) { r.build(f, in); }, r.dtype,
      r.order);
}

} // namespace

TEST_F(ReductionPropertyTest, RandomReductionsOnTheInterpreter) {
  const int64_t n = envCount("FUSER_PROPERTY_REDUCTION_CASES", 40);
  const uint64_t first = firstSeed();
  int64_t failures = 0;
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t seed = first + static_cast<uint64_t>(k);
    const RandomReduction r = randomReduction(seed, 4096, {DataType::Float});
    InterpretedCase ic(
        r.toString(), r.sizes,
        [r](Fusion* f, TensorView* in) { r.build(f, in); }, r.order);
    std::string params;
    const std::string failure = interpret(ic, &params);
    if (!failure.empty()) {
      ++failures;
      ADD_FAILURE() << "seed " << seed << ": " << r.toString() << "\n  "
                    << params << "\n  " << failure;
    }
  }
  EXPECT_EQ(failures, 0) << "of " << n << " random reductions";
}

// The GPU variant's first cases, scheduled for their real sizes and
// compiled with NVRTC on the CPU: every one is a Reduction kernel.
TEST_F(ReductionPropertyTest, RandomGpuCasesCompile) {
  const uint64_t first = firstSeed();
  for (int64_t k = 0; k < 20; ++k) {
    const uint64_t seed = first + static_cast<uint64_t>(k);
    const RandomReduction r = gpuCase(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + r.toString());
    const Scheduled s = scheduleCopy(caseOf(r));
    EXPECT_EQ(s.type, SchedulerType::Reduction);
    EXPECT_FALSE(s.code.empty());
  }
}

TEST_F(ReductionPropertyGpuTest, RandomReductionsMatchATen) {
  const int64_t n = envCount("FUSER_PROPERTY_REDUCTION_GPU_CASES", 300);
  const uint64_t first = firstSeed();
  int64_t failures = 0;
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t seed = first + static_cast<uint64_t>(k);
    const RandomReduction r = gpuCase(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + r.toString());
    Case c = caseOf(r);
    std::vector<c10::IValue> inputs;
    for (const at::Tensor& t : c.inputs) {
      inputs.push_back(onDevice(t));
    }
    FusionExecutorCache fec(std::make_unique<Fusion>(*c.fusion));
    std::vector<at::Tensor> outputs = fec.runFusionWithInputs(inputs);
    const SchedulerType type =
        fec.getMostRecentKernelRuntime()->schedulerType();
    EXPECT_EQ(type, SchedulerType::Reduction);
    testValidate(fec.fusion(), outputs, inputs, __LINE__, __FILE__);
    failures += ::testing::Test::HasFailure() ? 1 : 0;
    if (failures > 0) {
      break; // the first failure, in full, is enough
    }
  }
}

} // namespace fuser
