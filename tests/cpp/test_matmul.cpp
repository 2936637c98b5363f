// Matrix products (doc/matmul.md): the ops and their ATen evaluation, the
// matmul scheduler's choices and refusals, the allocation knob of its
// operand caches, kernels compiled with NVRTC for sm_90a on the CPU, and
// on the GPU every layout, odd sizes, batches, linear, epilogues and split
// allocations against ATen.
#include <codegen/codegen.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <layout/tma_layout.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/input_binding.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/matmul.h>
#include <scheduler/registry.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;

namespace {

// Operand layouts by nvFuser's names (MmaLayout): the first letter for A
// ([M, K]), the second for B ([K, N]). A is "T" when K is contiguous
// (stored [M, K]), "N" when M is ([K, M]); B is "T" when N is contiguous
// (stored [K, N]), "N" when K is ([N, K], a linear layer's weight).
struct Layout {
  const char* name;
  bool a_m_major;
  bool b_n_major;
};
constexpr Layout kLayouts[] = {
    {"TT", false, true},
    {"TN", false, false},
    {"NT", true, true},
    {"NN", true, false},
};

// A [..., rows, cols] bfloat16 operand; `transposed` stores it as [...,
// cols, rows] (the last two axes swapped in memory).
TensorView* defineOperand(Fusion* fusion, bool transposed, int64_t rank = 2) {
  TensorView* tv = makeContigTensor(rank, DataType::BFloat16);
  fusion->addInput(tv);
  if (transposed) {
    std::vector<IterDomain*> allocation = tv->getLogicalDomain();
    std::swap(
        allocation[allocation.size() - 1], allocation[allocation.size() - 2]);
    tv->setAllocationDomain(allocation, true);
  }
  return tv;
}

at::Tensor makeOperand(
    std::vector<int64_t> sizes, bool transposed, bool cuda = false) {
  auto options = at::TensorOptions().dtype(at::kBFloat16);
  if (cuda) {
    options = options.device(at::kCUDA);
  }
  if (!transposed) {
    return at::randn(sizes, options);
  }
  std::swap(sizes[sizes.size() - 1], sizes[sizes.size() - 2]);
  return at::randn(sizes, options).transpose(-1, -2);
}

// A fusion and inputs for it (on the CPU; copied to the GPU to run).
struct MatmulCase {
  std::string name;
  std::unique_ptr<Fusion> fusion;
  std::vector<at::Tensor> inputs;
  // The scheduler the runtime must pick for these inputs on an H200.
  SchedulerType expected = SchedulerType::Matmul;
};

// a [m, k] x b [k, n] in `layout`, then `epilogue` of the product (the
// bfloat16 result of matmul) and the fusion; it adds the outputs.
MatmulCase layoutCase(
    const Layout& layout, int64_t m, int64_t n, int64_t k,
    SchedulerType expected = SchedulerType::Matmul) {
  MatmulCase c;
  c.name = std::string(layout.name) + " " + std::to_string(m) + "x" +
           std::to_string(n) + "x" + std::to_string(k);
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* a = defineOperand(c.fusion.get(), layout.a_m_major);
  TensorView* b = defineOperand(c.fusion.get(), !layout.b_n_major);
  c.fusion->addOutput(matmul(a, b));
  c.inputs = {
      makeOperand({m, k}, layout.a_m_major),
      makeOperand({k, n}, !layout.b_n_major)};
  c.expected = expected;
  return c;
}

// matmul(prologue(a), b) of contiguous operands of `dtype`, with CPU
// inputs of the given sizes.
MatmulCase contiguousCase(
    DataType dtype, const std::vector<int64_t>& a_sizes,
    const std::vector<int64_t>& b_sizes,
    const std::function<TensorView*(TensorView*)>& prologue =
        [](TensorView* a) { return a; }) {
  MatmulCase c;
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* a = makeContigTensor(2, dtype);
  TensorView* b = makeContigTensor(2, dtype);
  c.fusion->addInput(a);
  c.fusion->addInput(b);
  c.fusion->addOutput(matmul(prologue(a), b));
  const auto type = dtype == DataType::Half       ? at::kHalf
                    : dtype == DataType::BFloat16 ? at::kBFloat16
                                                  : at::kFloat;
  c.inputs = {at::randn(a_sizes).to(type), at::randn(b_sizes).to(type)};
  return c;
}

// linear(x, w, bias) of bfloat16 x [m, k] and w [n, k], then `epilogue`
// of it; the fusion adds the result as its output.
MatmulCase biasedLinearCase(
    int64_t m, int64_t n, int64_t k,
    const std::function<TensorView*(TensorView*)>& epilogue =
        [](TensorView* y) { return y; }) {
  MatmulCase c;
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* x = defineOperand(c.fusion.get(), false);
  TensorView* w = defineOperand(c.fusion.get(), false);
  TensorView* bias = makeContigTensor(1, DataType::BFloat16);
  c.fusion->addInput(bias);
  c.fusion->addOutput(epilogue(linear(x, w, bias)));
  c.inputs = {
      makeOperand({m, k}, false), makeOperand({n, k}, false),
      at::randn({n}).to(at::kBFloat16)};
  return c;
}

struct Scheduled {
  SchedulerType type = SchedulerType::ExprEval;
  std::vector<std::string> rejections;
  std::unique_ptr<Fusion> fusion;
  std::string params;
  // The kernel function and the pipeline's type, without the headers.
  std::string code;
  // What ptxas reported compiling it for sm_90a.
  KernelInspection inspection;
};

// Schedules a copy of `c` as the runtime would for its inputs on an H200
// (CPU tensors stand in for the GPU's) and, for the matmul scheduler,
// prints its kernel and compiles it with NVRTC for sm_90a.
Scheduled scheduleOnCpu(const MatmulCase& c) {
  Scheduled s;
  s.fusion = std::make_unique<Fusion>(*c.fusion);
  std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
  RuntimeInfo info =
      makeRuntimeInfo(s.fusion.get(), inputs, /*require_cuda=*/false);
  SchedulerChoice choice = chooseScheduler(s.fusion.get(), info);
  s.type = choice.scheduler->type();
  s.rejections = choice.rejections;
  auto params = choice.scheduler->computeHeuristics(s.fusion.get(), info);
  s.params = params->toString();
  choice.scheduler->schedule(s.fusion.get(), *params);
  if (s.type == SchedulerType::Matmul) {
    const std::string source =
        generateCudaKernel(s.fusion.get(), DataType::Int32);
    EXPECT_NO_THROW(s.inspection = inspectForSm90a(source))
        << c.name << ": " << s.params;
    // The generated part (the runtime headers come before it).
    s.code = source.substr(source.find("// ---- kernel"));
  }
  return s;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) {
    text += line + "\n";
  }
  return text;
}

// ||got - expected|| / ||expected|| against a float64 evaluation of the
// fusion (the product of the bfloat16 operands, exactly).
double relativeError(
    Fusion* fusion, const at::Tensor& got,
    const std::vector<c10::IValue>& inputs) {
  std::vector<c10::IValue> wide;
  for (const c10::IValue& input : inputs) {
    wide.push_back(
        input.isTensor() ? c10::IValue(input.toTensor().cpu()) : input);
  }
  Fusion copy(*fusion);
  at::Tensor expected =
      evaluateFusionWithATen(&copy, wide).at(0).to(at::kDouble);
  const at::Tensor g = got.cpu().to(at::kDouble);
  return (g - expected).norm().item<double>() /
         std::max(expected.norm().item<double>(), 1e-30);
}

} // namespace

// ---------------------------------------------------------------- the ops

class MatmulOpsTest : public FuserIrTest {};

TEST_F(MatmulOpsTest, ShapesFollowTorchMatmul) {
  struct Shapes {
    std::vector<int64_t> a, b, out;
  };
  const std::vector<Shapes> cases = {
      {{5, 3}, {3, 4}, {5, 4}},
      {{2, 5, 3}, {3, 4}, {2, 5, 4}},    // a's batch folds into its rows
      {{5, 3}, {2, 3, 4}, {2, 5, 4}},    // a is broadcast along b's batch
      {{2, 5, 3}, {2, 3, 4}, {2, 5, 4}}, // bmm
      {{6, 1, 5, 3}, {2, 3, 4}, {6, 2, 5, 4}},
      {{3}, {3, 4}, {4}},
      {{5, 3}, {3}, {5}},
      {{3}, {3}, {}},
  };
  for (const Shapes& s : cases) {
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* a = makeContigConcreteTensor(s.a, DataType::BFloat16);
    TensorView* b = makeContigConcreteTensor(s.b, DataType::BFloat16);
    fusion.addInput(a);
    fusion.addInput(b);
    TensorView* out = matmul(a, b);
    EXPECT_EQ(out->dtype(), DataType::BFloat16);
    const auto logical = TensorDomain::noReductions(out->getLogicalDomain());
    ASSERT_EQ(logical.size(), s.out.size()) << out->toString();
    for (size_t i = 0; i < logical.size(); ++i) {
      EXPECT_EQ(logical[i]->extent()->value(), s.out[i]) << out->toString();
    }
    // The product accumulates in float and keeps K as a reduction axis.
    auto* mma = out->definition()->input(0)->definition()->as<MmaOp>();
    EXPECT_EQ(mma->out()->dtype(), DataType::Float);
    EXPECT_TRUE(mma->out()->getLogicalDomain().back()->isReduction());
  }
}

TEST_F(MatmulOpsTest, LinearIsInputTimesWeightTransposedPlusBias) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigConcreteTensor({2, 7, 16}, DataType::BFloat16);
  TensorView* w = makeContigConcreteTensor({32, 16}, DataType::BFloat16);
  TensorView* bias = makeContigConcreteTensor({32}, DataType::BFloat16);
  for (TensorView* tv : {x, w, bias}) {
    fusion.addInput(tv);
  }
  TensorView* out = linear(x, w, bias);
  fusion.addOutput(out);
  const auto logical = out->getLogicalDomain();
  ASSERT_EQ(logical.size(), 3u);
  EXPECT_EQ(logical[2]->extent()->value(), 32);
  auto* mma = dynamic_cast<MmaOp*>(fusion.exprs().front());
  for (Expr* expr : fusion.exprs()) {
    if (auto* found = dynamic_cast<MmaOp*>(expr)) {
      mma = found;
    }
  }
  ASSERT_NE(mma, nullptr);
  EXPECT_EQ(
      mma->aRoles(),
      (std::vector<MmaRole>{MmaRole::M, MmaRole::M, MmaRole::K}));
  EXPECT_EQ(mma->bRoles(), (std::vector<MmaRole>{MmaRole::N, MmaRole::K}));
  at::Tensor tx = at::randn({2, 7, 16}).to(at::kBFloat16);
  at::Tensor tw = at::randn({32, 16}).to(at::kBFloat16);
  at::Tensor tb = at::randn({32}).to(at::kBFloat16);
  at::Tensor got = evaluateFusionWithATen(&fusion, {tx, tw, tb}).at(0);
  at::Tensor expected =
      at::linear(tx.to(at::kFloat), tw.to(at::kFloat), tb.to(at::kFloat))
          .to(at::kBFloat16);
  EXPECT_TRUE(
      at::allclose(got.to(at::kFloat), expected.to(at::kFloat), 1e-2, 1e-2));
}

TEST_F(MatmulOpsTest, AtenEvaluationMatchesTorch) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      cases = {
          {{5, 3}, {3, 4}},
          {{2, 5, 3}, {3, 4}},
          {{5, 3}, {2, 3, 4}},
          {{2, 5, 3}, {2, 3, 4}},
          {{6, 1, 5, 3}, {2, 3, 4}},
          {{3}, {3, 4}},
          {{5, 3}, {3}},
          {{3}, {3}}};
  for (const auto& [sa, sb] : cases) {
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* a = makeContigConcreteTensor(sa, DataType::Double);
    TensorView* b = makeContigConcreteTensor(sb, DataType::Double);
    fusion.addInput(a);
    fusion.addInput(b);
    fusion.addOutput(matmul(a, b));
    at::Tensor ta = at::randn(sa, at::kDouble);
    at::Tensor tb = at::randn(sb, at::kDouble);
    at::Tensor got = evaluateFusionWithATen(&fusion, {ta, tb}).at(0);
    at::Tensor expected = at::matmul(ta, tb);
    ASSERT_EQ(got.sizes(), expected.sizes());
    EXPECT_TRUE(at::allclose(got, expected, 1e-12, 1e-12));
  }
}

TEST_F(MatmulOpsTest, BadOperandsAreUserErrors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = makeContigConcreteTensor({4, 3}, DataType::BFloat16);
  TensorView* b = makeContigConcreteTensor({5, 6}, DataType::BFloat16);
  TensorView* h = makeContigConcreteTensor({3, 6}, DataType::Half);
  TensorView* i = makeContigConcreteTensor({3, 6}, DataType::Int);
  for (TensorView* tv : {a, b, h, i}) {
    fusion.addInput(tv);
  }
  EXPECT_THAT(
      [&]() { matmul(a, b); }, ::testing::ThrowsMessage<UserError>(
                                   HasSubstr("the K extents differ (3 vs 5)")));
  EXPECT_THAT(
      [&]() { matmul(a, h); },
      ::testing::ThrowsMessage<UserError>(HasSubstr("types differ")));
  EXPECT_THAT(
      [&]() {
        mma(i, i, {MmaRole::M, MmaRole::K}, {MmaRole::K, MmaRole::N});
      },
      ::testing::ThrowsMessage<UserError>(
          HasSubstr("cast it to a floating type")));
}

// ------------------------------------------------------- the scheduler

class MatmulSchedulerTest : public FuserIrTest {};

TEST_F(MatmulSchedulerTest, EveryLayoutIsAMatmulKernelForSm90a) {
  for (const Layout& layout : kLayouts) {
    MatmulCase c = layoutCase(layout, 4096, 4096, 4096);
    Scheduled s = scheduleOnCpu(c);
    ASSERT_EQ(s.type, SchedulerType::Matmul) << c.name << joined(s.rejections);
    EXPECT_EQ(
        s.params,
        "Matmul: tile 128 x 256 x 64, 4 stages, 132 persistent "
        "blocks, M-tiles in groups of 16, outputs in vectors of 2");
    // The pipeline's layout flags follow the operands' memory.
    const std::string type =
        std::string("fuser_mma::Matmul<__nv_bfloat16, 128, 256, 64, 4, ") +
        (layout.a_m_major ? "true" : "false") + ", " +
        (layout.b_n_major ? "true" : "false") + ", 2, 2, 1>";
    EXPECT_THAT(s.code, HasSubstr(type)) << c.name;
    EXPECT_THAT(
        s.code, HasSubstr("__launch_bounds__(FuserMatmul::kThreads, 1)"));
    EXPECT_THAT(s.code, HasSubstr("fuser_mma::claimRegisters<232>()"));
    // The accumulator stays in registers and the wgmmas overlap: nothing
    // but wgmma touches it inside the mainloop (before: the epilogue's
    // predicated writes into a register array kept a loop rolled, the
    // array went to the stack and ptxas serialized the wgmmas).
    FUSER_SKIP_WITHOUT_PTXAS_REPORT(s.inspection);
    EXPECT_TRUE(keepsEverythingInRegisters(s.inspection)) << c.name;
    EXPECT_THAT(s.inspection.ptxas_log, ::testing::Not(HasSubstr("serialized")))
        << c.name;
  }
}

TEST_F(MatmulSchedulerTest, HalfOperandsCompile) {
  Scheduled s =
      scheduleOnCpu(contiguousCase(DataType::Half, {1024, 512}, {512, 768}));
  ASSERT_EQ(s.type, SchedulerType::Matmul) << joined(s.rejections);
  EXPECT_THAT(s.code, HasSubstr("fuser_mma::Matmul<__half, "));
}

TEST_F(MatmulSchedulerTest, SmallProductsTakeSmallerTiles) {
  // 2048^2 in 128 x 256 tiles is one wave of 128 blocks.
  EXPECT_THAT(
      scheduleOnCpu(layoutCase(kLayouts[1], 2048, 2048, 2048)).params,
      HasSubstr("tile 128 x 256 x 64"));
  // 320 x 192: 64 x 64 tiles give 15 blocks instead of 2.
  Scheduled small = scheduleOnCpu(layoutCase(kLayouts[1], 320, 192, 1000));
  EXPECT_THAT(
      small.params, HasSubstr("tile 64 x 64 x 64, 6 stages, 15 persistent"));
  // One consumer warpgroup needs no register reconfiguration.
  EXPECT_THAT(small.code, ::testing::Not(HasSubstr("claimRegisters")));
  EXPECT_THAT(small.code, HasSubstr("Matmul<__nv_bfloat16, 64, 64, 64, 6"));
}

TEST_F(MatmulSchedulerTest, DeclinesWithReasons) {
  struct Declined {
    std::string what;
    std::function<MatmulCase()> make;
    std::string reason;
  };
  auto fp32 = []() {
    return contiguousCase(DataType::Float, {64, 32}, {32, 64});
  };
  auto prologue = []() {
    return contiguousCase(
        DataType::BFloat16, {64, 32}, {32, 64},
        [](TensorView* a) { return cast(relu(a), DataType::BFloat16); });
  };
  // A row of 4097 bfloat16 is 8194 bytes: no multiple of 16 (TMA).
  auto odd_row = []() { return layoutCase(kLayouts[0], 4095, 4097, 1000); };
  auto empty = []() { return layoutCase(kLayouts[1], 64, 64, 0); };
  const std::vector<Declined> cases = {
      {"fp32", fp32, "(bfloat16 or half needed)"},
      {"prologue", prologue, "is computed in the fusion"},
      {"odd row", odd_row, "has a stride of 8194 bytes (a multiple of 16"},
      {"empty", empty, "the product is empty"},
  };
  for (const Declined& d : cases) {
    Scheduled s = scheduleOnCpu(d.make());
    EXPECT_EQ(s.type, SchedulerType::ExprEval) << d.what;
    EXPECT_THAT(joined(s.rejections), HasSubstr("Matmul"));
    EXPECT_THAT(joined(s.rejections), HasSubstr(d.reason)) << d.what;
  }
  // Not on an sm_90 GPU.
  MatmulCase c = layoutCase(kLayouts[1], 256, 256, 256);
  std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
  RuntimeInfo info = makeRuntimeInfo(c.fusion.get(), inputs, false);
  info.setComputeCapability(80);
  std::string reason;
  EXPECT_FALSE(
      MatmulScheduler().canScheduleRunTime(c.fusion.get(), info, &reason));
  EXPECT_THAT(reason, HasSubstr("needs an sm_90 GPU"));
}

// doc/matmul.md §4: the knob. Only the matmul scheduler caches with
// replay_allocation, and its operand caches take the operands' layouts.
TEST_F(MatmulSchedulerTest, OnlyMatmulCachesReplayTheAllocation) {
  // Matmul with an M-major A: the shared-memory cache of A is laid out
  // [K, M] as A is; B's cache keeps its (logical) order.
  MatmulCase c = layoutCase(kLayouts[2], 512, 512, 512);
  Scheduled s = scheduleOnCpu(c);
  ASSERT_EQ(s.type, SchedulerType::Matmul);
  int shared = 0;
  for (TensorView* tv : s.fusion->allTvs()) {
    if (tv->getMemoryType() != MemoryType::Shared) {
      continue;
    }
    ++shared;
    auto* source = tv->definition()->input(0)->as<TensorView>();
    ASSERT_TRUE(source->isFusionInput());
    ASSERT_EQ(tv->hasAllocation(), source->hasAllocation()) << tv->toString();
    const auto& cache_alloc = tv->getMaybeAllocationDomain();
    const auto& source_alloc = source->getMaybeAllocationDomain();
    ASSERT_EQ(cache_alloc.size(), source_alloc.size());
    // The same logical positions in the same memory order.
    for (size_t i = 0; i < cache_alloc.size(); ++i) {
      const auto& cl = tv->getLogicalDomain();
      const auto& sl = source->getLogicalDomain();
      const auto cp =
          std::find(cl.begin(), cl.end(), cache_alloc[i]) - cl.begin();
      const auto sp =
          std::find(sl.begin(), sl.end(), source_alloc[i]) - sl.begin();
      EXPECT_EQ(cp, sp) << tv->toString();
    }
    EXPECT_EQ(tv->getContiguity(), source->getContiguity());
  }
  EXPECT_EQ(shared, 2);

  // The other schedulers' caches of permuted inputs have no layout.
  for (bool reduce : {false, true}) {
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* in = defineOperand(&fusion, /*transposed=*/true);
    TensorView* out = reduce ? sum(in, {1}) : relu(in);
    fusion.addOutput(out);
    MatmulCase other;
    other.fusion = std::make_unique<Fusion>(fusion);
    other.inputs = {makeOperand({64, 96}, true)};
    Scheduled t = scheduleOnCpu(other);
    EXPECT_EQ(
        t.type, reduce ? SchedulerType::Reduction : SchedulerType::PointWise);
    for (TensorView* tv : t.fusion->allTvs()) {
      if (tv->definition() != nullptr &&
          tv->definition()->input(0)->isFusionInput()) {
        EXPECT_FALSE(tv->hasAllocation()) << tv->toString();
      }
    }
  }
}

// Without the knob an M-major operand's cache would say K-major: the
// descriptors wgmma reads it with would address another layout than the
// one the copy engine writes. Lowering compares the two and refuses.
TEST_F(MatmulSchedulerTest, WithoutReplayTheCacheLayoutDisagrees) {
  MatmulCase c = layoutCase(kLayouts[2], 512, 512, 512);
  Scheduled s = scheduleOnCpu(c);
  ASSERT_EQ(s.type, SchedulerType::Matmul);
  TensorView* a_cache = nullptr;
  for (TensorView* tv : s.fusion->allTvs()) {
    if (tv->getMemoryType() == MemoryType::Shared &&
        tv->definition()->input(0) == s.fusion->inputs()[0]) {
      a_cache = tv;
    }
  }
  ASSERT_NE(a_cache, nullptr);
  const std::vector<MmaRole> roles = {MmaRole::M, MmaRole::K};
  std::string why;
  auto with_knob = describeTmaOperand(a_cache, roles, 128, 64, &why);
  ASSERT_TRUE(with_knob.has_value()) << why;
  EXPECT_TRUE(with_knob->mn_major);
  // What the cache is without replay_allocation: its logical order.
  a_cache->setAllocationDomain(a_cache->getLogicalDomain(), true);
  auto without = describeTmaOperand(a_cache, roles, 128, 64, &why);
  ASSERT_TRUE(without.has_value()) << why;
  EXPECT_FALSE(without->mn_major);
  EXPECT_FALSE(sameTileLayout(*with_knob, *without));
  EXPECT_THAT(
      [&]() { generateCudaKernel(s.fusion.get(), DataType::Int32); },
      ::testing::ThrowsMessage<UserError>(HasSubstr("replay_allocation")));
}

// Split allocations of an operand (the seed's layout applied to K; M split
// as a sharded operand's would be; K split into [K/D, D] outermost) fold
// back into one axis where their parts are contiguous; a split whose outer
// part is declared non-contiguous stays two tensor-map dimensions, with
// the tile's coordinate split by division and modulus.
TEST_F(MatmulSchedulerTest, SplitAllocationsReachTheTensorMaps) {
  struct Split {
    std::string what;
    // Sets a's allocation from its logical [M, K].
    std::function<void(TensorView*)> layout;
    std::string coordinates;
  };
  auto constant = [](int64_t v) {
    return IrBuilder::create<Val>(v, DataType::Index);
  };
  const std::vector<Split> cases = {
      {"seed [M, K/2, 2]",
       [&](TensorView* a) {
         auto [o, i] = IterDomain::split(a->axis(1), constant(2), true);
         a->setAllocationDomain({a->axis(0), o, i}, true);
       },
       "fuser_tile0 = {{1, 0}, {1, 1}, {0, 0}}"},
      {"shard-like [4, M/4, K]",
       [&](TensorView* a) {
         auto [o, i] = IterDomain::split(a->axis(0), constant(4), false);
         a->setAllocationDomain({o, i, a->axis(1)}, true);
       },
       "fuser_tile0 = {{1, 0}, {1, 1}, {0, 0}}"},
      {"[K/64, 64, M]",
       [&](TensorView* a) {
         auto [o, i] = IterDomain::split(a->axis(1), constant(64), true);
         a->setAllocationDomain({o, i, a->axis(0)}, true);
       },
       "fuser_tile0 = {{0, 1}, {1, 1}, {0, 0}}"},
      {"[M, K/64 (not contiguous), 64]",
       [&](TensorView* a) {
         auto [o, i] = IterDomain::split(a->axis(1), constant(64), true);
         a->setAllocationDomain({a->axis(0), o, i}, {true, false, true});
       },
       "fuser_tile0 = {{1, 1, 0}, {1, (int)(64), 1}, {(int)(64), 0, 0}}"},
  };
  for (const Split& split : cases) {
    MatmulCase c;
    c.fusion = std::make_unique<Fusion>();
    FusionGuard fg(c.fusion.get());
    TensorView* a = defineOperand(c.fusion.get(), false);
    TensorView* b = defineOperand(c.fusion.get(), true);
    split.layout(a);
    c.fusion->addOutput(matmul(a, b));
    at::Tensor ta = makeOperand({512, 1024}, false);
    if (split.what == "[K/64, 64, M]") {
      ta = makeOperand({512, 1024}, true);
    }
    c.inputs = {ta, makeOperand({1024, 384}, true)};
    Scheduled s = scheduleOnCpu(c);
    ASSERT_EQ(s.type, SchedulerType::Matmul) << split.what << "\n"
                                             << joined(s.rejections);
    EXPECT_THAT(s.code, HasSubstr(split.coordinates)) << split.what;
  }
}

// Regression: a bias [N] has no M axis, so its register cache could not
// share the thread axis of the tile (merged from M and N parts). It loaded
// its values in a loop of 4 threads (threadIdx.x < 4) that the other 124
// threads then read: NaNs on the GPU. The thread axis now precedes the
// warpgroup's, the cache is inlined past it and each thread loads the
// columns it owns (threadIdx.x % 4).
TEST_F(MatmulSchedulerTest, BiasIsLoadedByEveryThreadForItsColumns) {
  MatmulCase c = biasedLinearCase(1000, 640, 512);
  Scheduled s = scheduleOnCpu(c);
  ASSERT_EQ(s.type, SchedulerType::Matmul) << joined(s.rejections);
  const std::string bias_load = s.code.substr(s.code.find("= T2["));
  EXPECT_THAT(
      s.code, ::testing::Not(HasSubstr("((nvfuser_index_t)threadIdx.x) < 4")));
  EXPECT_THAT(
      bias_load.substr(0, bias_load.find(';')),
      HasSubstr("(((nvfuser_index_t)threadIdx.x) % 4)"));
}

TEST_F(MatmulSchedulerTest, EpilogueStoresColumnPairsWhereItMay) {
  // Row-major with N even: each thread's two adjacent columns in one store.
  Scheduled even = scheduleOnCpu(layoutCase(kLayouts[1], 512, 384, 256));
  EXPECT_THAT(even.params, HasSubstr("outputs in vectors of 2"));
  EXPECT_THAT(even.code, HasSubstr("globalStore<__nv_bfloat16, 2>(&T"));
  // N odd: a pair would cross from one row into the next.
  Scheduled odd = scheduleOnCpu(layoutCase(kLayouts[1], 512, 385, 256));
  EXPECT_THAT(odd.params, ::testing::Not(HasSubstr("vectors")));
  EXPECT_THAT(odd.code, ::testing::Not(HasSubstr("vectorizedCopy")));
  EXPECT_THAT(odd.code, ::testing::Not(HasSubstr("globalStore")));
  // Column-major output: the pair's columns are a row apart in memory.
  MatmulCase c = layoutCase(kLayouts[1], 512, 384, 256);
  TensorView* out = c.fusion->outputs()[0]->as<TensorView>();
  out->setAllocationDomain({out->axis(1), out->axis(0)}, true);
  Scheduled column_major = scheduleOnCpu(c);
  ASSERT_EQ(column_major.type, SchedulerType::Matmul);
  EXPECT_THAT(column_major.params, ::testing::Not(HasSubstr("vectors")));
  EXPECT_THAT(column_major.code, ::testing::Not(HasSubstr("vectorizedCopy")));
  EXPECT_THAT(column_major.code, ::testing::Not(HasSubstr("globalStore")));
}

TEST_F(MatmulSchedulerTest, ClustersShareBWhereTheTilesPair) {
  {
    // Off by default.
    Scheduled s = scheduleOnCpu(layoutCase(kLayouts[1], 4096, 4096, 4096));
    EXPECT_THAT(s.params, ::testing::Not(HasSubstr("clusters")));
    EXPECT_THAT(s.code, ::testing::Not(HasSubstr("__cluster_dims__")));
  }
  ScopedEnv enable("FUSER_ENABLE", "matmul_cluster");
  for (const Layout& layout : kLayouts) {
    Scheduled s = scheduleOnCpu(layoutCase(layout, 4096, 4096, 4096));
    EXPECT_THAT(s.params, HasSubstr("4 stages, clusters of 2 sharing B"))
        << layout.name;
    EXPECT_THAT(s.code, HasSubstr("__cluster_dims__(2, 1, 1)"));
    EXPECT_THAT(s.code, HasSubstr(", 2, 2, 2>;"));
    EXPECT_THAT(s.code, HasSubstr("FuserMatmul::finish();"));
  }
  // 2048^2 walks its 128 tiles row by row unpaired; paired, in groups of 2.
  EXPECT_THAT(
      scheduleOnCpu(layoutCase(kLayouts[1], 2048, 2048, 2048)).params,
      HasSubstr("128 persistent blocks, M-tiles in groups of 2"));
  // Three M tiles cannot pair.
  EXPECT_THAT(
      scheduleOnCpu(layoutCase(kLayouts[1], 384, 4096, 4096)).params,
      ::testing::Not(HasSubstr("clusters")));
}

TEST_F(MatmulSchedulerTest, TensorMapBoxesSpanOneSliceOfTheTile) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  const std::vector<MmaRole> roles = {MmaRole::N, MmaRole::K};
  std::string why;
  // K-major B [N, K]: the box spans half the rows.
  TensorView* k_major = defineOperand(&fusion, false);
  auto halves = describeTmaOperand(k_major, roles, 256, 64, &why, 2);
  ASSERT_TRUE(halves.has_value()) << why;
  EXPECT_EQ(halves->dims[1].box, 128);
  EXPECT_EQ(halves->tile_bytes, 256 * 64 * 2);
  // N-major: boxes of 64 N either way; the tile's chunks are split.
  TensorView* n_major = defineOperand(&fusion, true);
  auto chunks = describeTmaOperand(n_major, roles, 128, 64, &why, 2);
  ASSERT_TRUE(chunks.has_value()) << why;
  EXPECT_EQ(chunks->dims[0].box, 64);
  EXPECT_FALSE(describeTmaOperand(n_major, roles, 64, 64, &why, 2));
  EXPECT_THAT(why, HasSubstr("does not split into 2 parts"));
  // 16 rows of 32 bytes would not start on a 1024-byte swizzle period.
  EXPECT_FALSE(describeTmaOperand(k_major, roles, 64, 16, &why, 4));
}

TEST_F(MatmulSchedulerTest, EpiloguesAreInTheKernel) {
  // gelu(linear(x, w, bias)) + residual, written column-major.
  MatmulCase c;
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* x = defineOperand(c.fusion.get(), false);
  TensorView* w = defineOperand(c.fusion.get(), false);
  TensorView* bias = makeContigTensor(1, DataType::BFloat16);
  TensorView* residual = makeContigTensor(2, DataType::BFloat16);
  c.fusion->addInput(bias);
  c.fusion->addInput(residual);
  TensorView* y = add(gelu(linear(x, w, bias)), residual);
  TensorView* out = cast(y, DataType::BFloat16);
  out->setAllocationDomain({out->axis(1), out->axis(0)}, true);
  c.fusion->addOutput(out);
  c.inputs = {
      makeOperand({512, 256}, false), makeOperand({384, 256}, false),
      at::randn({384}).to(at::kBFloat16),
      at::randn({512, 384}).to(at::kBFloat16)};
  Scheduled s = scheduleOnCpu(c);
  ASSERT_EQ(s.type, SchedulerType::Matmul) << joined(s.rejections);
  EXPECT_THAT(s.code, HasSubstr("gelu("));
  EXPECT_THAT(s.code, HasSubstr("FuserMatmul::consume("));
}

// linear(x, w) returned and also read by a relu that is returned too (a
// forward that keeps its product for the backward). The product's cast is
// forked: its copy stores the output, in column pairs. Regression: the
// column pairs were asked of the cast itself ("only a copy moves a
// vector"), and the segment ran with ATen.
TEST_F(MatmulSchedulerTest, AnOutputAnotherEpilogueOpReadsIsStoredInPairs) {
  MatmulCase c;
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* x = defineOperand(c.fusion.get(), false);
  TensorView* w = defineOperand(c.fusion.get(), false);
  TensorView* y = linear(x, w, nullptr);
  c.fusion->addOutput(y);
  c.fusion->addOutput(relu(y));
  c.inputs = {makeOperand({512, 256}, false), makeOperand({384, 256}, false)};
  Scheduled s = scheduleOnCpu(c);
  ASSERT_EQ(s.type, SchedulerType::Matmul) << joined(s.rejections);
  EXPECT_THAT(s.params, HasSubstr("outputs in vectors of 2"));
  EXPECT_THAT(s.code, HasSubstr("globalStore<__nv_bfloat16, 2>(&T"));
}

// The tanh form of GELU as the benchmark writes it from primitives: the
// product, cast to float, has four consumers (y * y, y^3, y + c y^3,
// 0.5 y). Regression: at 4096^3 (128 x 256 tiles, column pairs stored as
// vectors) lowering failed with "T14 is inlined at position 7, but its
// consumer T17 cannot run inside the loops it is computed in", in the
// processes where the epilogue's pointer-keyed order put a producer before
// its consumer (InliningTest.VectorizedOutputCapsEveryProducerInAnyOrder
// checks the cause in any process).
TEST_F(MatmulSchedulerTest, TanhGeluFromPrimitivesIsInTheKernel) {
  auto tanh_gelu = [](TensorView* product) {
    auto constant = [](double v) {
      return IrBuilder::create<Val>(v, DataType::Double);
    };
    TensorView* y = castOp(DataType::Float, product);
    TensorView* cube = mul(mul(y, y), y);
    TensorView* inner = mul(
        add(y, mul(cube, constant(0.044715))), constant(0.7978845608028654));
    TensorView* out =
        mul(mul(y, constant(0.5)), add(tanh(inner), constant(1.0)));
    return castOp(DataType::BFloat16, out);
  };
  MatmulCase c = biasedLinearCase(4096, 4096, 4096, tanh_gelu);
  Scheduled s = scheduleOnCpu(c);
  ASSERT_EQ(s.type, SchedulerType::Matmul) << joined(s.rejections);
  EXPECT_THAT(s.code, HasSubstr("tanh("));
  EXPECT_THAT(s.code, HasSubstr("FuserMatmul::consume("));
}

// ------------------------------------------------------------ on the GPU

class MatmulGpuTest : public FuserTest {
 protected:
  void SetUp() override {
    FuserTest::SetUp();
    if (!IsSkipped() && at::cuda::getCurrentDeviceProperties()->major != 9) {
      GTEST_SKIP() << "the matmul kernel is for sm_90";
    }
  }

  // Why the schedulers before the one that took `c` declined it.
  static std::string whySchedulersDeclined(
      const MatmulCase& c, const std::vector<c10::IValue>& inputs) {
    Fusion copy(*c.fusion);
    RuntimeInfo info = makeRuntimeInfo(&copy, inputs, /*require_cuda=*/false);
    return joined(chooseScheduler(&copy, info).rejections);
  }

  // Runs `c` twice through a FusionExecutorCache (the second run is a
  // cache hit) and checks the scheduler and the outputs against ATen and,
  // for bfloat16 products, the relative error against float64.
  // `params` (when not empty) must be part of the schedule's parameters.
  void check(MatmulCase& c, int line, const std::string& params = "") {
    std::vector<c10::IValue> inputs;
    for (const at::Tensor& t : c.inputs) {
      inputs.emplace_back(t.cuda());
    }
    FusionExecutorCache fec(std::make_unique<Fusion>(*c.fusion));
    for (int run = 0; run < 2; ++run) {
      std::vector<at::Tensor> outputs = fec.runFusionWithInputs(inputs);
      FusionKernelRuntime* runtime = fec.getMostRecentKernelRuntime();
      // (The reasons are asked for only when the check fails.)
      EXPECT_EQ(runtime->schedulerType(), c.expected)
          << c.name << "\n"
          << whySchedulersDeclined(c, inputs);
      if (!params.empty()) {
        EXPECT_THAT(
            runtime->segments()[0].params->toString(), HasSubstr(params))
            << c.name;
      }
      testValidate(fec.fusion(), outputs, inputs, line, __FILE__, c.name);
      if (run == 0 && outputs[0].scalar_type() == at::kBFloat16) {
        EXPECT_LT(relativeError(c.fusion.get(), outputs[0], inputs), 1e-2)
            << c.name;
      }
    }
  }
};

TEST_F(MatmulGpuTest, EveryLayout) {
  for (const Layout& layout : kLayouts) {
    MatmulCase c = layoutCase(layout, 1024, 768, 512);
    check(c, __LINE__);
  }
}

TEST_F(MatmulGpuTest, OddSizes) {
  // Rows of 4095 or 4097 bfloat16 are no multiple of 16 bytes: those
  // layouts go to ExprEval (cuBLAS); the others run the kernel with partial
  // tiles in M, N and K.
  MatmulCase tn = layoutCase(kLayouts[1], 4095, 4097, 1000);
  check(tn, __LINE__);
  MatmulCase tt =
      layoutCase(kLayouts[0], 4095, 4097, 1000, SchedulerType::ExprEval);
  check(tt, __LINE__);
  MatmulCase tt_aligned = layoutCase(kLayouts[0], 4095, 4104, 1000);
  check(tt_aligned, __LINE__);
  MatmulCase nn = layoutCase(kLayouts[3], 4104, 4097, 1000);
  check(nn, __LINE__);
  MatmulCase tiny = layoutCase(kLayouts[1], 1, 8, 16);
  check(tiny, __LINE__);
}

TEST_F(MatmulGpuTest, BatchedMatmul) {
  for (bool a_m_major : {false, true}) {
    MatmulCase c;
    c.name = std::string("bmm, A ") + (a_m_major ? "M" : "K") + "-major";
    c.fusion = std::make_unique<Fusion>();
    FusionGuard fg(c.fusion.get());
    TensorView* a = defineOperand(c.fusion.get(), a_m_major, 3);
    TensorView* b = defineOperand(c.fusion.get(), false, 3);
    c.fusion->addOutput(matmul(a, b));
    c.inputs = {
        makeOperand({3, 256, 512}, a_m_major),
        makeOperand({3, 512, 384}, false)};
    check(c, __LINE__);
  }
}

TEST_F(MatmulGpuTest, LinearWithAndWithoutBias) {
  for (bool with_bias : {false, true}) {
    MatmulCase c;
    c.name = with_bias ? "linear with bias" : "linear";
    c.fusion = std::make_unique<Fusion>();
    FusionGuard fg(c.fusion.get());
    TensorView* x = defineOperand(c.fusion.get(), false);
    TensorView* w = defineOperand(c.fusion.get(), false);
    TensorView* bias = nullptr;
    if (with_bias) {
      bias = makeContigTensor(1, DataType::BFloat16);
      c.fusion->addInput(bias);
    }
    c.fusion->addOutput(linear(x, w, bias));
    c.inputs = {
        makeOperand({1000, 512}, false), makeOperand({640, 512}, false)};
    if (with_bias) {
      c.inputs.push_back(at::randn({640}).to(at::kBFloat16));
    }
    check(c, __LINE__);
  }
}

TEST_F(MatmulGpuTest, Epilogues) {
  struct Epilogue {
    std::string what;
    std::function<TensorView*(TensorView* product, TensorView* extra)> make;
    bool column_major_output = false;
  };
  const std::vector<Epilogue> cases = {
      {"bias + gelu",
       [](TensorView* p, TensorView* bias) {
         return cast(
             gelu(add(p, broadcast(bias, {true, false}))), DataType::BFloat16);
       }},
      {"silu", [](TensorView* p,
                  TensorView*) { return cast(silu(p), DataType::BFloat16); }},
      {"residual",
       [](TensorView* p, TensorView* r) {
         return cast(add(p, r), DataType::BFloat16);
       }},
      {"float output", [](TensorView* p, TensorView*) { return p; }},
      {"product and its relu",
       [](TensorView* p, TensorView*) {
         TensorView* y = cast(p, DataType::BFloat16);
         y->fusion()->addOutput(y);
         return relu(y);
       }},
      {"column-major output",
       [](TensorView* p, TensorView*) { return cast(p, DataType::BFloat16); },
       true},
  };
  for (const Epilogue& e : cases) {
    MatmulCase c;
    c.name = e.what;
    c.fusion = std::make_unique<Fusion>();
    FusionGuard fg(c.fusion.get());
    TensorView* a = defineOperand(c.fusion.get(), false);
    TensorView* b = defineOperand(c.fusion.get(), false);
    const int64_t m = 520, n = 392, k = 256;
    TensorView* extra = nullptr;
    at::Tensor extra_input;
    if (e.what == "bias + gelu") {
      extra = makeContigTensor(1, DataType::BFloat16);
      extra_input = at::randn({n}).to(at::kBFloat16);
    } else if (e.what == "residual") {
      extra = makeContigTensor(2, DataType::BFloat16);
      extra_input = at::randn({m, n}).to(at::kBFloat16);
    }
    if (extra != nullptr) {
      c.fusion->addInput(extra);
    }
    TensorView* product =
        mma(a, b, {MmaRole::M, MmaRole::K}, {MmaRole::N, MmaRole::K});
    TensorView* out = e.make(product, extra);
    if (e.column_major_output) {
      out->setAllocationDomain({out->axis(1), out->axis(0)}, true);
    }
    c.fusion->addOutput(out);
    c.inputs = {makeOperand({m, k}, false), makeOperand({n, k}, false)};
    if (extra != nullptr) {
      c.inputs.push_back(extra_input);
    }
    check(c, __LINE__);
  }
}

TEST_F(MatmulGpuTest, ClustersSharingB) {
  ScopedEnv enable("FUSER_ENABLE", "matmul_cluster");
  std::vector<MatmulCase> cases;
  for (const Layout& layout : kLayouts) {
    cases.push_back(layoutCase(layout, 2048, 1024, 512));
  }
  // Partial tiles in M, N and K; an N-major B split in chunks.
  cases.push_back(layoutCase(kLayouts[1], 4095, 4097, 1000));
  cases.push_back(layoutCase(kLayouts[0], 4095, 4104, 1000));
  // More tiles than blocks: pairs walk several tiles.
  cases.push_back(layoutCase(kLayouts[1], 8192, 4096, 1024));
  for (MatmulCase& c : cases) {
    check(c, __LINE__, "clusters of 2 sharing B");
  }
}

TEST_F(MatmulGpuTest, SplitAllocationOperands) {
  auto constant = [](int64_t v) {
    return IrBuilder::create<Val>(v, DataType::Index);
  };
  for (int variant = 0; variant < 3; ++variant) {
    MatmulCase c;
    c.fusion = std::make_unique<Fusion>();
    FusionGuard fg(c.fusion.get());
    TensorView* a = defineOperand(c.fusion.get(), false);
    TensorView* b = defineOperand(c.fusion.get(), true);
    if (variant == 0) {
      c.name = "seed [M, K/2, 2]";
      auto [o, i] = IterDomain::split(a->axis(1), constant(2), true);
      a->setAllocationDomain({a->axis(0), o, i}, true);
    } else if (variant == 1) {
      c.name = "shard-like [4, M/4, K]";
      auto [o, i] = IterDomain::split(a->axis(0), constant(4), false);
      a->setAllocationDomain({o, i, a->axis(1)}, true);
    } else {
      c.name = "[M, K/64 (not contiguous), 64]";
      auto [o, i] = IterDomain::split(a->axis(1), constant(64), true);
      a->setAllocationDomain({a->axis(0), o, i}, {true, false, true});
    }
    c.fusion->addOutput(matmul(a, b));
    c.inputs = {
        makeOperand({1000, 1024}, false), makeOperand({1024, 392}, true)};
    check(c, __LINE__);
  }
}

} // namespace fuser
