// Property-based tests of the persistent schedulers (inner and outer,
// doc/normalization.md §4, §10): random shapes (rank 1 to 4, size-1 axes
// included), random memory orders of the input, random normalized axes
// and normalizations. On the CPU each kernel runs on the kernel-IR
// interpreter (every output element written once, with the value and the
// input elements it is made of); on the GPU, with larger shapes, against
// ATen. Cases neither persistent scheduler takes (a row too large to
// hold) are counted, and must be few.
//   FUSER_PROPERTY_NORMALIZATION_CASES      CPU cases (default 24)
//   FUSER_PROPERTY_NORMALIZATION_GPU_CASES  GPU cases (default 200)
//   FUSER_PROPERTY_SEED                     the first case's seed (default 1)
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/property_harness.h>
#include <tests/cpp/reduction_harness.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace fuser {

// The outer persistent scheduler is off by default (base/options.h).
class NormalizationPropertyTest : public FuserIrTest {
 protected:
  ScopedEnv enable_{"FUSER_ENABLE", "outer_persistent"};
};
class NormalizationPropertyGpuTest : public FuserTest {
 protected:
  ScopedEnv enable_{"FUSER_ENABLE", "outer_persistent"};
};

namespace {

struct RandomNormalization {
  std::vector<int64_t> sizes;
  std::vector<int64_t> order; // memory order of the input's logical axes
  std::vector<int64_t> axes;  // normalized, ascending, not all
  // x - sum(x); x - max(x); (x - mean) * sum((x - mean)^2) (two sums in a
  // row); x * sum(x) + sum(x * x) (two independent sums).
  int kind = 0;

  std::string toString() const {
    static const char* kinds[] = {
        "x - sum(x)", "x - max(x)", "(x - mean) * sum((x - mean)^2)",
        "x * sum(x) + sum(x * x)"};
    std::stringstream ss;
    ss << kinds[kind] << " over axes " << kir_test::str(axes) << " of "
       << kir_test::str(sizes) << " in memory order " << kir_test::str(order);
    return ss.str();
  }

  void build(Fusion* fusion, TensorView* in) const {
    std::vector<bool> flags(sizes.size(), false);
    for (int64_t a : axes) {
      flags[static_cast<size_t>(a)] = true;
    }
    auto back = [&](TensorView* r) { return broadcast(r, flags); };
    TensorView* out = nullptr;
    switch (kind) {
      case 0:
        out = sub(in, back(sum(in, axes)));
        break;
      case 1:
        out = sub(in, back(max(in, axes)));
        break;
      case 2: {
        TensorView* c = sub(in, back(mean(in, axes)));
        out = mul(c, back(sum(mul(c, c), axes)));
        break;
      }
      default:
        out = add(mul(in, back(sum(in, axes))), back(sum(mul(in, in), axes)));
        break;
    }
    fusion->addOutput(out);
  }
};

// At most `max_elements` elements.
RandomNormalization randomNormalization(uint64_t seed, int64_t max_elements) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t n) { return fuser::pick(rng, n); };
  static const std::vector<int64_t> extents = {
      1, 2, 3, 4, 5, 7, 8, 12, 16, 31, 32, 33, 64, 100, 128, 129, 255, 1000};
  RandomNormalization r;
  r.sizes = randomSizes(rng, extents, 2, 3, max_elements, &r.order);
  const auto rank = static_cast<int64_t>(r.sizes.size());
  // A non-empty proper subset of the axes.
  while (r.axes.empty() || static_cast<int64_t>(r.axes.size()) == rank) {
    r.axes.clear();
    for (int64_t a = 0; a < rank; ++a) {
      if (pick(2) == 1) {
        r.axes.push_back(a);
      }
    }
  }
  r.kind = static_cast<int>(pick(4));
  return r;
}

Case caseOf(const RandomNormalization& r, DataType dtype) {
  return reductionCase(
      r.sizes, [&r](Fusion* f, TensorView* in) { r.build(f, in); }, dtype,
      r.order);
}

// The scheduler that takes `c`, as the runtime would choose it.
SchedulerType chosenFor(const Case& c, int64_t multiprocessors) {
  Fusion copy(*c.fusion);
  std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
  RuntimeInfo info = makeRuntimeInfo(&copy, inputs, /*require_cuda=*/false);
  info.setMultiprocessors(multiprocessors);
  return chooseScheduler(&copy, info).scheduler->type();
}

bool isPersistent(SchedulerType type) {
  return type == SchedulerType::InnerPersistent ||
         type == SchedulerType::OuterPersistent;
}

} // namespace

TEST_F(NormalizationPropertyTest, RandomNormalizationsOnTheInterpreter) {
  const int64_t n = envCount("FUSER_PROPERTY_NORMALIZATION_CASES", 24);
  const uint64_t first = firstSeed();
  int64_t failures = 0;
  int64_t declined = 0;
  int64_t outer = 0;
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t seed = first + static_cast<uint64_t>(k);
    const RandomNormalization r = randomNormalization(seed, 2048);
    InterpretedCase ic(
        r.toString(), r.sizes,
        [r](Fusion* f, TensorView* in) { r.build(f, in); }, r.order);
    const SchedulerType type =
        chosenFor(caseOf(r, DataType::Float), ic.multiprocessors);
    if (!isPersistent(type)) {
      ++declined;
      continue;
    }
    outer += type == SchedulerType::OuterPersistent ? 1 : 0;
    std::string params;
    const std::string failure = interpret(ic, &params, type);
    if (!failure.empty()) {
      ++failures;
      ADD_FAILURE() << "seed " << seed << ": " << r.toString() << "\n  "
                    << params << "\n  " << failure;
    }
  }
  EXPECT_EQ(failures, 0) << "of " << n << " random normalizations";
  // Both schedulers are exercised; few cases are left to segmentation.
  EXPECT_GT(outer, 0);
  EXPECT_LT(outer, n - declined);
  EXPECT_LE(declined, n / 4) << "declined by both persistent schedulers";
}

TEST_F(NormalizationPropertyGpuTest, RandomNormalizationsMatchATen) {
  const int64_t n = envCount("FUSER_PROPERTY_NORMALIZATION_GPU_CASES", 200);
  const uint64_t first = firstSeed();
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t seed = first + static_cast<uint64_t>(k);
    const RandomNormalization r = randomNormalization(seed, int64_t(1) << 20);
    std::mt19937_64 rng(seed);
    const DataType dtype =
        rng() % 3 == 0 ? DataType::BFloat16 : DataType::Float;
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + r.toString());
    Case c = caseOf(r, dtype);
    std::vector<c10::IValue> inputs;
    for (const at::Tensor& t : c.inputs) {
      inputs.push_back(onDevice(t));
    }
    FusionExecutorCache fec(std::make_unique<Fusion>(*c.fusion));
    std::vector<at::Tensor> outputs = fec.runFusionWithInputs(inputs);
    testValidate(fec.fusion(), outputs, inputs, __LINE__, __FILE__);
    if (::testing::Test::HasFailure()) {
      break; // the first failure, in full, is enough
    }
  }
}

} // namespace fuser
