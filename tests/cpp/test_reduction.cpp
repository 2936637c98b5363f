// Reductions (doc/reduction.md): the reduction ops and their PyTorch
// semantics, the reduction scheduler's choices (inner or outer by memory
// order, vectors, grid reductions), the kernels it makes (compiled with
// NVRTC on the CPU), and on the GPU their results against ATen.
#include <id_model/id_model.h>
#include <id_model/logical_domain_map.h>
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/reduction_harness.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;
using ::testing::Not;

class ReductionTest : public FuserIrTest {};
class ReductionGpuTest : public FuserTest {};

TEST_F(ReductionTest, RowSumIsAnInnerBlockReduction) {
  Case c = reductionCase({2048, 4096}, [](Fusion* f, TensorView* in) {
    f->addOutput(sum(in, {1}));
  });
  Scheduled s = scheduleCopy(c);
  ASSERT_EQ(s.type, SchedulerType::Reduction);
  EXPECT_TRUE(reduction(s).inner);
  EXPECT_EQ(reduction(s).vectorize, 4);
  EXPECT_EQ(reduction(s).grid_split, 1);
  EXPECT_THAT(s.code, HasSubstr("blockReduce<true, false, false>"));
  EXPECT_THAT(s.code, HasSubstr("streamingLoad<float, 4>(&"));
  EXPECT_THAT(s.code, ::testing::Not(HasSubstr("gridReduce")));
}

TEST_F(ReductionTest, ColumnSumIsAnOuterReduction) {
  Case c = reductionCase({4096, 2048}, [](Fusion* f, TensorView* in) {
    f->addOutput(sum(in, {0}));
  });
  Scheduled s = scheduleCopy(c);
  ASSERT_EQ(s.type, SchedulerType::Reduction);
  EXPECT_FALSE(reduction(s).inner);
  // Each thread's vector of 4 columns in one call.
  EXPECT_TRUE(reduction(s).grouped());
  EXPECT_THAT(s.code, HasSubstr("ReduceGroup<4, "));
}

// Columns that fill one wave of 1024-thread blocks (128 blocks on 132 SMs)
// are reduced within their blocks: no grid split, no step across blocks.
TEST_F(ReductionTest, WideColumnSumIsOneWaveOfWholeColumns) {
  for (DataType dtype : {DataType::Float, DataType::BFloat16}) {
    Case c = reductionCase(
        {8192, 8192},
        [](Fusion* f, TensorView* in) { f->addOutput(sum(in, {0})); }, dtype);
    Scheduled s = scheduleCopy(c);
    ASSERT_EQ(s.type, SchedulerType::Reduction);
    const ReductionParams& p = reduction(s);
    EXPECT_FALSE(p.inner);
    EXPECT_EQ(p.grid_split, 1);
    EXPECT_EQ(p.threads_x * p.threads_y, 1024);
    EXPECT_EQ(8192 / (p.vectorize * p.threads_x), 128) << p.toString();
    EXPECT_THAT(s.code, Not(HasSubstr("gridReduce")));
    // The compiler must fit 1024 threads in an SM's registers.
    EXPECT_THAT(s.code, HasSubstr("__launch_bounds__(1024) fuser_kernel"));
  }
  // 6000 columns would leave a third of the SMs idle: a grid split.
  Case narrow = reductionCase({8192, 6000}, [](Fusion* f, TensorView* in) {
    f->addOutput(sum(in, {0}));
  });
  EXPECT_GT(reduction(scheduleCopy(narrow)).grid_split, 1);
}

// A column sum of the product of two float inputs (a norm's weight
// gradient) at 1024 threads, 64 registers each: 8 vectors of 4 from each
// input would hold 64 floats in flight and spilled; the loads of both
// share the 32 registers one input had (4 vectors each).
TEST_F(ReductionTest, TwoInputsShareTheLoadsInFlight) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  fusion.addInput(x);
  fusion.addInput(y);
  fusion.addOutput(sum(mul(x, y), {0}));
  std::vector<c10::IValue> inputs{
      at::empty({8192, 4096}, at::kFloat), at::empty({8192, 4096}, at::kFloat)};
  CompiledSchedule s = scheduleAndCompile(fusion, inputs);
  ASSERT_EQ(s.type, SchedulerType::Reduction);
  Fusion copy(fusion);
  RuntimeInfo info = makeRuntimeInfo(&copy, inputs, /*require_cuda=*/false);
  auto params =
      chooseScheduler(&copy, info).scheduler->computeHeuristics(&copy, info);
  const auto& p = dynamic_cast<const ReductionParams&>(*params);
  ASSERT_EQ(p.threads_x * p.threads_y, 1024) << p.toString();
  EXPECT_EQ(p.unroll * p.vectorize, 16) << p.toString();
  const KernelInspection inspection = inspectForSm90a(s.code);
  FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection);
  EXPECT_TRUE(keepsEverythingInRegisters(inspection)) << p.toString();
}

// The heuristics of a float sum over `axis` of a tensor of `sizes`, on
// the runtime's defaults (132 multiprocessors); the input is never read,
// so gigabyte shapes cost nothing.
std::unique_ptr<HeuristicParams> sumParams(
    const std::vector<int64_t>& sizes, int64_t axis) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* in = makeContigTensor(static_cast<int64_t>(sizes.size()));
  fusion.addInput(in);
  fusion.addOutput(sum(in, {axis}));
  std::vector<c10::IValue> inputs{at::empty(sizes, at::kFloat)};
  RuntimeInfo info = makeRuntimeInfo(&fusion, inputs, /*require_cuda=*/false);
  SchedulerChoice choice = chooseScheduler(&fusion, info);
  EXPECT_EQ(choice.scheduler->type(), SchedulerType::Reduction);
  return choice.scheduler->computeHeuristics(&fusion, info);
}

// Rows take about 2 vectors per thread: rows of 1024 floats run 128
// threads of 2 vectors, 2 rows per block (not 32 threads of 8 vectors,
// which measured 3% slower). Long rows still load 8 vectors per thread
// at once through the unrolled serial loop.
TEST_F(ReductionTest, RowsTakeTwoVectorsPerThread) {
  EXPECT_EQ(
      sumParams({65536, 1024}, 1)->toString(),
      "Reduction: inner, kept [0], reduced [1], vectorize 4, threads 128 x "
      "2, grid split 1, unroll 2, evict-first loads");
  EXPECT_EQ(
      sumParams({8192, 8192}, 1)->toString(),
      "Reduction: inner, kept [0], reduced [1], vectorize 4, threads 256 x "
      "1, grid split 1, unroll 8, evict-first loads");
}

// 64 rows of 262144 floats: a grid reduction of one wave, 4 blocks of 256
// threads per SM (these kernels take about 53 registers): 64 x 8 blocks
// on 132 SMs, not the 64 x 16 that two waves would take.
TEST_F(ReductionTest, RowsSplitAcrossBlocksMakeOneWave) {
  EXPECT_EQ(
      sumParams({64, 262144}, 1)->toString(),
      "Reduction: inner, kept [0], reduced [1], vectorize 4, threads 256 x "
      "1, grid split 8, unroll 8, evict-first loads");
}

// 32768 float columns: 8192 vectors. Blocks of 32 x 8 threads would make
// 256 blocks of 256 threads (two per SM, a quarter of the threads an SM
// holds); 128 blocks of 64 x 16 make one wave of whole columns.
TEST_F(ReductionTest, WiderColumnSumIsOneWaveOfKilobyteRowSegments) {
  EXPECT_EQ(
      sumParams({8192, 32768}, 0)->toString(),
      "Reduction: outer, kept [1], reduced [0], vectorize 4, threads 64 x "
      "16, grid split 1, unroll 8, grouped, vectorized outputs");
}

// Few rows and long ones: the rows are split across blocks and reduced in
// one kernel.
TEST_F(ReductionTest, FewLongRowsUseAGridReduction) {
  Case c = reductionCase({8, 1 << 20}, [](Fusion* f, TensorView* in) {
    f->addOutput(sum(in, {1}));
  });
  Scheduled s = scheduleCopy(c);
  ASSERT_EQ(s.type, SchedulerType::Reduction);
  EXPECT_TRUE(reduction(s).inner);
  EXPECT_GT(reduction(s).grid_split, 1);
  EXPECT_THAT(s.code, HasSubstr("gridReduce<"));
}

// Few columns: the rows are split across blocks too, and each thread's
// vector of 4 columns is reduced across the grid in one grouped call.
TEST_F(ReductionTest, FewColumnsUseAGroupedGridReduction) {
  Case c = reductionCase({1 << 16, 128}, [](Fusion* f, TensorView* in) {
    f->addOutput(sum(in, {0}));
  });
  Scheduled s = scheduleCopy(c);
  ASSERT_EQ(s.type, SchedulerType::Reduction);
  EXPECT_FALSE(reduction(s).inner);
  EXPECT_GT(reduction(s).grid_split, 1);
  EXPECT_EQ(reduction(s).vectorize, 4);
  EXPECT_TRUE(reduction(s).grouped());
  EXPECT_THAT(s.code, HasSubstr("gridReduceGroup<4, false, true, false"));
  EXPECT_THAT(s.code, HasSubstr("streamingLoad<float, 4>(&"));
  // 256 threads fit any register count: no bound.
  EXPECT_THAT(s.code, Not(HasSubstr("__launch_bounds__")));
}

// NHWC reduced over N, H and W keeps C, the innermost axis in memory: an
// outer reduction by memory, though C is logical axis 1.
TEST_F(ReductionTest, NhwcPerChannelSumIsOuterByMemory) {
  Case c = reductionCase(
      {8, 64, 16, 16},
      [](Fusion* f, TensorView* in) {
        f->addOutput(sum(in, {0, 2, 3}));
      },
      DataType::Float, {0, 2, 3, 1});
  Scheduled s = scheduleCopy(c);
  ASSERT_EQ(s.type, SchedulerType::Reduction);
  EXPECT_FALSE(reduction(s).inner);
  EXPECT_EQ(reduction(s).kept_axes, std::vector<int64_t>{1});
  // N, H and W lie in memory as one axis and the loop merges them: the
  // load and its predicate index them as one, without a division
  // (doc/indexing.md §4, step 2b).
  const std::string kernel = s.code.substr(s.code.find("__global__"));
  EXPECT_THAT(kernel, Not(HasSubstr(" / T0.logical_size"))) << kernel;
  EXPECT_THAT(kernel, Not(HasSubstr(" % T0.logical_size"))) << kernel;
}

// bf16 in, float accumulation, bf16 out; and a product before the sum.
TEST_F(ReductionTest, PrologueAndEpilogueInTheSameKernel) {
  Case c = reductionCase(
      {256, 1024},
      [](Fusion* f, TensorView* in) { f->addOutput(sum(in, {1})); },
      DataType::BFloat16);
  Scheduled s = scheduleCopy(c);
  ASSERT_EQ(s.type, SchedulerType::Reduction);
  EXPECT_THAT(s.code, HasSubstr("__nv_bfloat16"));
  Case xy = reductionCase({256, 1024}, [](Fusion* f, TensorView* in) {
    f->addOutput(sum(mul(in, in), {1}));
  });
  EXPECT_EQ(scheduleCopy(xy).type, SchedulerType::Reduction);
}

// A row whose length the launch checks to be a multiple of the vector
// width is in range for all lanes of a vector or for none: the per-element
// exprs (the cast, the serial sum) are predicated on the vector's first
// index (doc/indexing.md §5), never on a lane's.
TEST_F(ReductionTest, ElementPredicatesAreVectorWide) {
  Case c = reductionCase(
      {256, 4096},
      [](Fusion* f, TensorView* in) {
        f->addOutput(sum(castOp(DataType::Float, in), {1}));
      },
      DataType::BFloat16);
  Scheduled s = scheduleCopy(c);
  ASSERT_EQ(reduction(s).vectorize, 8);
  ASSERT_THAT(s.code, HasSubstr("castTo<float>"));
  std::istringstream lines(s.code);
  int predicates_on_the_row = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("if (") == std::string::npos ||
        line.find("T0.logical_size[1]") == std::string::npos) {
      continue;
    }
    ++predicates_on_the_row;
    // "* 8) < T0.logical_size[1]": a vector's first index, not "+ iN)".
    EXPECT_THAT(line, HasSubstr("* 8) < T0.logical_size[1]")) << s.code;
  }
  EXPECT_GE(predicates_on_the_row, 3); // the load, the cast, the sum

  // Not a multiple of 8: no vectors, so every element is bounded alone.
  Case odd = reductionCase(
      {256, 4095},
      [](Fusion* f, TensorView* in) {
        f->addOutput(sum(castOp(DataType::Float, in), {1}));
      },
      DataType::BFloat16);
  Scheduled o = scheduleCopy(odd);
  EXPECT_EQ(reduction(o).vectorize, 1);
}

namespace {

// x [M, N] times w broadcast along `broadcast_axis` (w has the other
// axis), reduced over `axis`: w is read by every block (not streamed).
Case weightedSumCase(
    int64_t broadcast_axis, int64_t axis, int64_t columns = 1028) {
  const std::vector<int64_t> sizes = {1000, columns};
  Case c;
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(1);
  c.fusion->addInput(x);
  c.fusion->addInput(w);
  std::vector<bool> flags = {false, false};
  flags[static_cast<size_t>(broadcast_axis)] = true;
  c.fusion->addOutput(sum(mul(x, broadcast(w, flags)), {axis}));
  c.inputs = {
      at::randn(sizes),
      at::randn({sizes[static_cast<size_t>(1 - broadcast_axis)]})};
  return c;
}

} // namespace

// An input read once (it spans the reduction's axes) is loaded with the
// evict-first policy, in vectors or alone; one broadcast along the rows is
// read by every block and keeps the default policy (doc/reduction.md §5).
TEST_F(ReductionTest, InputsReadOnceAreStreamed) {
  for (int64_t columns : {1024, 1023}) {
    Case c = weightedSumCase(/*broadcast_axis=*/0, /*axis=*/1, columns);
    Scheduled s = scheduleCopy(c);
    ASSERT_EQ(s.type, SchedulerType::Reduction);
    const int64_t v = reduction(s).vectorize;
    EXPECT_EQ(v, columns % 4 == 0 ? 4 : 1);
    const std::string width = std::to_string(v);
    EXPECT_THAT(s.code, HasSubstr("streamingLoad<float, " + width + ">(&"))
        << s.code;
    // x (T0) is streamed into its cache; w (T1) is read by its broadcast.
    EXPECT_THAT(s.code, HasSubstr(", &T0[")) << s.code;
    EXPECT_THAT(s.code, Not(HasSubstr(", &T1["))) << s.code;
    EXPECT_THAT(s.code, HasSubstr(" = T1[")) << s.code;
  }
}

// Evict-first loads win while the inputs read once are up to about 5 L2s
// (300 MiB on the H200's 60 MiB) and lose beyond (doc/reduction.md §5.6):
// one row more than 300 MiB loads with the default policy.
TEST_F(ReductionTest, InputsOfUpToFiveL2sLoadEvictFirst) {
  for (int64_t rows : {int64_t{9600}, int64_t{9601}}) {
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* in = makeContigTensor(2);
    fusion.addInput(in);
    fusion.addOutput(sum(in, {1}));
    // 8192 floats (32 KiB) per row; never read on the CPU.
    const std::vector<c10::IValue> inputs{at::empty({rows, 8192}, at::kFloat)};
    RuntimeInfo info = makeRuntimeInfo(&fusion, inputs, /*require_cuda=*/false);
    ASSERT_EQ(info.l2Bytes(), 60 * 1024 * 1024);
    const bool streamed = rows == 9600;
    auto params = chooseScheduler(&fusion, info)
                      .scheduler->computeHeuristics(&fusion, info);
    EXPECT_EQ(dynamic_cast<ReductionParams&>(*params).stream_inputs, streamed);
    const CompiledSchedule s = scheduleAndCompile(fusion, inputs);
    ASSERT_EQ(s.type, SchedulerType::Reduction);
    // The load of x (T0) into its cache, a vector of 4 either way.
    const std::string load =
        streamed ? "streamingLoad<float, 4>(&" : "vectorizedCopy<float, 4>(&";
    EXPECT_THAT(s.code, HasSubstr(load)) << s.code;
    EXPECT_EQ(s.code.find("streamingLoad<") != std::string::npos, streamed)
        << s.code;
  }
}

TEST_F(ReductionTest, EveryOpAndKeepDim) {
  for (int op = 0; op < 4; ++op) {
    Case c = reductionCase({64, 300}, [op](Fusion* f, TensorView* in) {
      switch (op) {
        case 0:
          f->addOutput(max(in, {1}));
          break;
        case 1:
          f->addOutput(min(in, {1}, /*keep_dim=*/true));
          break;
        case 2:
          f->addOutput(prod(in, {1}));
          break;
        default:
          f->addOutput(mean(in, {0, 1}));
          break;
      }
    });
    Scheduled s = scheduleCopy(c);
    EXPECT_EQ(s.type, SchedulerType::Reduction) << op;
  }
}

// An epilogue may combine the result with tensors of its shape computed
// beside the reduction (a running statistic's update: running * 0.9 +
// mean * 0.1), inner or outer.
TEST_F(ReductionTest, EpiloguesMayReadTensorsOfTheResultsShape) {
  for (const std::vector<int64_t>& layout :
       {std::vector<int64_t>{}, std::vector<int64_t>{1, 0}}) {
    Case c = reductionCase(
        {256, 1024},
        [](Fusion* f, TensorView* in) {
          TensorView* running = makeContigTensor(1);
          f->addInput(running);
          TensorView* kept = mul(running, IrBuilder::create<Val>(0.9));
          TensorView* batch = mul(sum(in, {1}), IrBuilder::create<Val>(0.1));
          f->addOutput(add(kept, batch));
        },
        DataType::Float, layout);
    c.inputs.push_back(at::randn({256}));
    Scheduled s = scheduleCopy(c);
    EXPECT_EQ(s.type, SchedulerType::Reduction) << "layout " << layout.size();
  }
}

// A normalization (the reduction's result meets the input again) is not a
// reduction fusion.
TEST_F(ReductionTest, NormalizationIsDeclined) {
  Case c = reductionCase({64, 300}, [](Fusion* f, TensorView* in) {
    f->addOutput(sub(in, broadcast(sum(in, {1}), {false, true})));
  });
  std::string reason;
  EXPECT_FALSE(
      ReductionScheduler().canScheduleCompileTime(c.fusion.get(), &reason));
  EXPECT_THAT(reason, HasSubstr("normalization"));
}

// A sum over a broadcast axis reduces one element: the ID graph joins its
// reduced axis to none of the axes the broadcast stands for elsewhere (as a
// squeeze drops it), so no schedule gives its loop of one a row's splits
// or loops. Beside a sum of full axes, the reduction scheduler, which
// splits its reductions alike, declines; the inner persistent one takes
// both.
TEST_F(ReductionTest, OneElementReductionsJoinNoRowAxis) {
  Case c = reductionCase({256, 128}, [](Fusion* f, TensorView* in) {
    TensorView* stat = makeContigTensor(1);
    f->addInput(stat);
    TensorView* s = broadcast(stat, {false, true});
    TensorView* negated = neg(s);
    TensorView* one = sum(negated, {1});
    f->addOutput(add(one, sum(mul(s, in), {1})));
    // Only the rows' axis maps; the broadcast joins the row, the reduced
    // axis nothing.
    EXPECT_EQ(
        PairwiseLogicalDomainMap(negated, one).mapProducerToConsumer().size(),
        1u);
    IdModel ids(f);
    EXPECT_TRUE(ids.loopMapped(s->axis(1), in->axis(1)));
    EXPECT_FALSE(ids.loopMapped(one->axis(1), in->axis(1)));
    EXPECT_FALSE(ids.loopMapped(one->axis(1), s->axis(1)));
  });
  c.inputs.push_back(at::rand({256}));
  std::string reason;
  EXPECT_FALSE(
      ReductionScheduler().canScheduleCompileTime(c.fusion.get(), &reason));
  EXPECT_THAT(reason, HasSubstr("reduces one element"));
  EXPECT_EQ(scheduleCopy(c).type, SchedulerType::InnerPersistent);
}

// On the CPU interpreter (tests/cpp/reduction_harness.h): every output
// element written once, with the value and the input elements of its row.
TEST_F(ReductionTest, KernelsReduceEveryRowOnTheInterpreter) {
  auto sum_over = [](std::vector<int64_t> axes) {
    return [axes](Fusion* f, TensorView* in) { f->addOutput(sum(in, axes)); };
  };
  // sum(x) and sum(x * x) + sum(x), over `axes`.
  auto two_sums = [](std::vector<int64_t> axes) {
    return [axes](Fusion* f, TensorView* in) {
      TensorView* total = sum(in, axes);
      f->addOutput(total);
      f->addOutput(add(sum(mul(in, in), axes), total));
    };
  };
  auto sum_beside_operand = [](std::vector<int64_t> axes) {
    return [axes](Fusion* f, TensorView* in) {
      TensorView* squared = mul(in, in);
      f->addOutput(squared);
      // Beside it, a function of it the reduction does not read (a bf16
      // result beside the float sum).
      f->addOutput(neg(squared));
      f->addOutput(sum(squared, axes));
    };
  };
  const std::vector<std::pair<InterpretedCase, std::string>> cases = {
      {{"inner, one row per block", {9, 1000}, sum_over({1})}, "inner"},
      {{"inner, a thread per short row", {40, 8}, sum_over({1})},
       "threads 1 x 64"},
      {{"inner, part of a warp per row", {70, 32}, sum_over({1})},
       "threads 4 x 64"},
      {{"inner, grid", {2, 5000}, sum_over({1})}, "grid split"},
      {{"outer, block", {4, 2000}, sum_over({0})}, "outer"},
      {{"outer, grid", {600, 20}, sum_over({0})}, "grouped"},
      {{"outer, grid, one column per thread", {600, 7}, sum_over({0})},
       "grid split"},
      {{"full, grid", {50, 70}, sum_over({0, 1})}, "grid split"},
      {{"middle axis", {5, 30, 7}, sum_over({1})}, ""},
      {{"NHWC per channel", {2, 8, 5, 6}, sum_over({0, 2, 3}), {0, 2, 3, 1}},
       "outer"},
      {{"transposed input", {300, 40}, sum_over({0}), {1, 0}}, "inner"},
      {{"size-1 reduced axis", {1, 512}, sum_over({0})}, ""},
      {{"size-1 kept axis", {512, 1}, sum_over({1})}, ""},
      {{"max keep_dim",
        {30, 100},
        [](Fusion* f, TensorView* in) {
          f->addOutput(max(in, {1}, /*keep_dim=*/true));
        }},
       ""},
      {{"prod of a prologue",
        {30, 100},
        [](Fusion* f, TensorView* in) {
          f->addOutput(prod(mul(in, in), {0}));
        }},
       ""},
      {{"mean",
        {30, 100},
        [](Fusion* f, TensorView* in) { f->addOutput(mean(in, {1})); }},
       ""},
      {{"split allocation, inner", {32, 300}, sum_over({1}), {}, true}, ""},
      {{"split allocation, outer", {32, 300}, sum_over({0}), {}, true}, ""},
      // Several reductions of one set of axes in one kernel (a layer norm
      // backward's weight and bias gradients; batch norm backward's sums).
      {{"two sums, outer, grid", {600, 20}, two_sums({0})}, "grouped"},
      {{"two sums, outer, block", {4, 2000}, two_sums({0})}, "outer"},
      {{"two sums, inner", {9, 1000}, two_sums({1})}, "inner"},
      {{"two sums, inner, grid", {2, 5000}, two_sums({1})}, "grid split"},
      // A tensor the reduction reads is also an output (a GELU backward
      // beside its bias gradient): stored once from the same loops.
      {{"sum beside its operand, outer", {64, 200}, sum_beside_operand({0})},
       "outer"},
      {{"sum beside its operand, outer, grid",
        {600, 20},
        sum_beside_operand({0})},
       "grouped"},
      {{"sum beside its operand, inner", {9, 1000}, sum_beside_operand({1})},
       "inner"},
      {{"sum beside its operand, inner, grid",
        {2, 5000},
        sum_beside_operand({1})},
       "grid split"},
      {{"sum and max, NHWC per channel",
        {2, 8, 5, 6},
        [](Fusion* f, TensorView* in) {
          f->addOutput(sum(in, {0, 2, 3}));
          f->addOutput(max(mul(in, in), {0, 2, 3}));
        },
        {0, 2, 3, 1}},
       "outer"},
  };
  for (const auto& [ic, expected_params] : cases) {
    std::string params;
    const std::string failure = interpret(ic, &params);
    EXPECT_EQ(failure, "") << ic.name << "\n  " << params;
    EXPECT_THAT(params, HasSubstr(expected_params)) << ic.name;
  }
}

// ---- Every case below: on the CPU its kernel is scheduled and compiled
// with NVRTC; on the GPU its results are checked against ATen
// (testValidate's tolerances grow with the number of elements reduced).

namespace {

struct NamedCase {
  std::string name;
  Case c;
  SchedulerType expected = SchedulerType::Reduction;
};

Case sumCase(const std::vector<int64_t>& sizes, std::vector<int64_t> axes) {
  return reductionCase(sizes, [axes](Fusion* f, TensorView* in) {
    f->addOutput(sum(in, axes));
  });
}

std::string shapeName(const std::vector<int64_t>& shape) {
  std::string name = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    name += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return name + "]";
}

void addSums(std::vector<NamedCase>& cases) {
  // Short and long rows, few and many of them: block reductions, several
  // rows per block, and grid reductions in both directions.
  const std::vector<std::vector<int64_t>> shapes = {
      {512, 4096},   {4096, 100}, {3, 5},     {1000, 1}, {8, 1 << 18},
      {1 << 16, 96}, {77, 1031},  {1, 70000}, {1, 512},  {512, 1}};
  for (const auto& shape : shapes) {
    for (int64_t axis : {0, 1}) {
      cases.push_back(
          {"sum over " + std::to_string(axis) + " of " + shapeName(shape),
           sumCase(shape, {axis})});
    }
  }
  cases.push_back({"full sum", sumCase({300, 700}, {0, 1})});
  cases.push_back({"1-D sum", sumCase({1 << 20}, {0})});
  cases.push_back({"middle axis", sumCase({30, 40, 50}, {1})});
  cases.push_back({"outer two", sumCase({30, 40, 50}, {0, 2})});
  cases.push_back({"size-1 middle", sumCase({7, 1, 9}, {1})});
  cases.push_back({"all size 1", sumCase({1, 1}, {0, 1})});
  for (int64_t channels : {3, 64, 256}) {
    cases.push_back(
        {"NHWC per-channel sum, C = " + std::to_string(channels),
         reductionCase(
             {16, channels, 24, 24},
             [](Fusion* f, TensorView* in) {
               f->addOutput(sum(in, {0, 2, 3}));
             },
             DataType::Float, {0, 2, 3, 1})});
  }
}

void addBroadcastOperands(std::vector<NamedCase>& cases) {
  for (int64_t broadcast_axis : {0, 1}) {
    for (int64_t axis : {0, 1}) {
      cases.push_back(
          {"sum over " + std::to_string(axis) + " of x * w broadcast along " +
               std::to_string(broadcast_axis),
           weightedSumCase(broadcast_axis, axis)});
    }
  }
}

void addOps(std::vector<NamedCase>& cases) {
  const std::vector<
      std::pair<std::string, std::function<void(Fusion*, TensorView*)>>>
      ops = {
          {"max",
           [](Fusion* f, TensorView* in) { f->addOutput(max(in, {1})); }},
          {"min keep_dim",
           [](Fusion* f, TensorView* in) {
             f->addOutput(min(in, {0}, /*keep_dim=*/true));
           }},
          // Values near 1 keep the product finite.
          {"prod",
           [](Fusion* f, TensorView* in) {
             TensorView* near_one =
                 add(mul(in, IrBuilder::create<Val>(0.01)),
                     IrBuilder::create<Val>(1.0));
             f->addOutput(prod(near_one, {1}));
           }},
          {"full mean keep_dim",
           [](Fusion* f, TensorView* in) {
             f->addOutput(mean(in, {0, 1}, /*keep_dim=*/true));
           }},
          {"sum keep_dim", [](Fusion* f, TensorView* in) {
             f->addOutput(sum(in, {1}, /*keep_dim=*/true));
           }}};
  for (const auto& [name, build] : ops) {
    cases.push_back({name, reductionCase({100, 333}, build)});
  }
  // max and min propagate NaN, wherever in the row it is (another
  // thread's element, another block's part).
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{64, 4096}, std::vector<int64_t>{4, 1 << 18}}) {
    for (bool is_max : {true, false}) {
      for (int64_t axis : {0, 1}) {
        Case c =
            reductionCase(shape, [is_max, axis](Fusion* f, TensorView* in) {
              f->addOutput(is_max ? max(in, {axis}) : min(in, {axis}));
            });
        at::Tensor t = c.inputs[0];
        t.index_put_({1, shape[1] - 1}, NAN);
        t.index_put_({2, shape[1] / 2 + 3}, NAN);
        t.index_put_({shape[0] - 1, 0}, NAN);
        cases.push_back(
            {std::string(is_max ? "max" : "min") + " over " +
                 std::to_string(axis) + " with NaN " + shapeName(shape),
             std::move(c)});
      }
    }
  }
  // Also in bf16 and half, which max and min reduce in their own type
  // (a regression: the generic helper dropped a NaN on the left).
  for (DataType dtype : {DataType::BFloat16, DataType::Half}) {
    for (bool is_max : {true, false}) {
      Case c = reductionCase(
          {64, 4096},
          [is_max](Fusion* f, TensorView* in) {
            f->addOutput(is_max ? max(in, {1}) : min(in, {1}));
          },
          dtype);
      at::Tensor t = c.inputs[0];
      t.index_put_({1, 4095}, NAN);
      t.index_put_({2, 0}, NAN);
      cases.push_back(
          {std::string(is_max ? "max" : "min") + " with NaN in " +
               (dtype == DataType::BFloat16 ? "bf16" : "half"),
           std::move(c)});
    }
  }
  // An empty input is not a kernel: ATen gives the identity (NaN for a
  // mean), as PyTorch does.
  cases.push_back(
      {"empty axis",
       reductionCase(
           {0, 16},
           [](Fusion* f, TensorView* in) {
             f->addOutput(sum(in, {0}));
             f->addOutput(mean(in, {0}));
             f->addOutput(prod(in, {0}));
           }),
       SchedulerType::ExprEval});
}

// Integers accumulate in int64, as torch.sum does: an int32 sum past 2^31
// is exact.
void addIntegerAndHalfPrecision(std::vector<NamedCase>& cases) {
  for (bool is_sum : {true, false}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* in = makeContigTensor(2, DataType::Int32);
    fusion->addInput(in);
    fusion->addOutput(is_sum ? sum(in, {1}) : max(in, {0}));
    Case c;
    c.fusion = std::move(fusion);
    c.inputs.push_back(at::randint(
        1 << 30, std::numeric_limits<int32_t>::max(), {16, 3000}, at::kInt));
    cases.push_back(
        {is_sum ? "int32 sum in int64" : "int32 max", std::move(c)});
  }
  for (DataType dtype : {DataType::BFloat16, DataType::Half}) {
    cases.push_back(
        {"half-precision row sum",
         reductionCase(
             {256, 4096},
             [](Fusion* f, TensorView* in) { f->addOutput(sum(in, {1})); },
             dtype)});
    // cast(sum(x * x)) of a cast: prologue and epilogue in the kernel.
    cases.push_back(
        {"half-precision column sum of squares",
         reductionCase(
             {4096, 256},
             [dtype](Fusion* f, TensorView* in) {
               TensorView* x = castOp(DataType::Float, in);
               f->addOutput(castOp(dtype, sum(mul(x, x), {0})));
             },
             dtype)});
  }
}

void addLayouts(std::vector<NamedCase>& cases) {
  {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(2);
    TensorView* y = makeContigTensor(2);
    fusion->addInput(x);
    fusion->addInput(y);
    fusion->addOutput(sum(mul(x, y), {1}));
    Case c;
    c.fusion = std::move(fusion);
    c.inputs = {at::randn({1024, 2048}), at::randn({1024, 2048})};
    cases.push_back({"sum(x * y)", std::move(c)});
  }
  // Transposed, sliced (gaps between rows), strided and offset inputs.
  const std::vector<at::Tensor> views = {
      at::randn({700, 300}).t(), at::randn({300, 1000}).slice(1, 0, 700),
      at::randn({300, 1400}).slice(1, 1, 1400, 2),
      at::randn({301, 701}).slice(0, 1).slice(1, 1)};
  for (size_t v = 0; v < views.size(); ++v) {
    for (int64_t axis : {0, 1}) {
      auto fusion = std::make_unique<Fusion>();
      FusionGuard fg(fusion.get());
      TensorView* in = makeSymbolicTensor(2);
      fusion->addInput(in);
      fusion->addOutput(sum(in, {axis}));
      Case c;
      c.fusion = std::move(fusion);
      c.inputs.push_back(views[v]);
      cases.push_back(
          {"non-contiguous view " + std::to_string(v) + ", sum over " +
               std::to_string(axis),
           std::move(c)});
    }
  }
  // The seed's layout: [M, N] allocated as [M/4, 4, N], and as
  // [N, M/4, 4] (M innermost in memory).
  for (bool m_innermost : {false, true}) {
    for (int64_t axis : {0, 1}) {
      auto fusion = std::make_unique<Fusion>();
      FusionGuard fg(fusion.get());
      TensorView* in = makeContigTensor(2);
      fusion->addInput(in);
      fusion->addOutput(sum(in, {axis}));
      auto [outer, inner] = IterDomain::split(
          in->axis(0), IrBuilder::create<Val>(int64_t(4), DataType::Index),
          true);
      if (m_innermost) {
        in->setAllocationDomain({in->axis(1), outer, inner}, true);
      } else {
        in->setAllocationDomain({outer, inner, in->axis(1)}, true);
      }
      Case c;
      c.fusion = std::move(fusion);
      c.inputs.push_back(
          m_innermost ? at::randn({520, 1024}).t() : at::randn({1024, 520}));
      cases.push_back(
          {std::string("split allocation") +
               (m_innermost ? ", M innermost" : "") + ", sum over " +
               std::to_string(axis),
           std::move(c)});
    }
  }
}

// Welford: variance and mean in one pass, inner, outer, across blocks and
// by memory order (NHWC batch-norm statistics).
void addWelford(std::vector<NamedCase>& cases) {
  auto var_mean = [](std::vector<int64_t> axes, int64_t correction,
                     bool keep_dim) {
    return [=](Fusion* f, TensorView* in) {
      VarMeanResult r = varianceMean(in, axes, correction, keep_dim);
      f->addOutput(r.var);
      f->addOutput(r.mean);
    };
  };
  cases.push_back(
      {"var_mean of rows",
       reductionCase({256, 3000}, var_mean({1}, 1, false))});
  cases.push_back(
      {"var_mean of columns",
       reductionCase({3000, 256}, var_mean({0}, 0, true))});
  cases.push_back(
      {"var of few long rows",
       reductionCase({4, 1 << 18}, [](Fusion* f, TensorView* in) {
         f->addOutput(variance(in, {1}));
       })});
  cases.push_back(
      {"var of few columns",
       reductionCase({1 << 16, 20}, [](Fusion* f, TensorView* in) {
         f->addOutput(variance(in, {0}));
       })});
  cases.push_back(
      {"welford parts",
       reductionCase({64, 1000}, [](Fusion* f, TensorView* in) {
         WelfordResult w = welford(in, {1});
         f->addOutput(w.avg);
         f->addOutput(w.var_sum);
         f->addOutput(w.n);
       })});
  for (int64_t channels : {64, 256}) {
    cases.push_back(
        {"NHWC var_mean, C = " + std::to_string(channels),
         reductionCase(
             {16, channels, 20, 20}, var_mean({0, 2, 3}, 1, false),
             DataType::Float, {0, 2, 3, 1})});
  }
  cases.push_back(
      {"bf16 var_mean",
       reductionCase(
           {128, 2048}, var_mean({1}, 1, false), DataType::BFloat16)});
  // One element per row: n - correction is 0, the variance NaN.
  cases.push_back(
      {"var of one element", reductionCase({64, 1}, var_mean({1}, 1, false))});
}

std::vector<NamedCase> everyCase() {
  std::vector<NamedCase> cases;
  addWelford(cases);
  addSums(cases);
  addBroadcastOperands(cases);
  addOps(cases);
  addIntegerAndHalfPrecision(cases);
  addLayouts(cases);
  return cases;
}

} // namespace

TEST_F(ReductionTest, EveryCaseCompiles) {
  for (const NamedCase& named : everyCase()) {
    SCOPED_TRACE(named.name);
    EXPECT_EQ(scheduleCopy(named.c).type, named.expected);
  }
}

// Each case runs twice (compile, then a cache hit).
TEST_F(ReductionGpuTest, EveryCaseMatchesATen) {
  for (const NamedCase& named : everyCase()) {
    SCOPED_TRACE(named.name);
    std::vector<c10::IValue> inputs;
    for (const at::Tensor& t : named.c.inputs) {
      inputs.push_back(onDevice(t));
    }
    FusionExecutorCache fec(std::make_unique<Fusion>(*named.c.fusion));
    for (int run = 0; run < 2; ++run) {
      std::vector<at::Tensor> outputs = fec.runFusionWithInputs(inputs);
      EXPECT_EQ(
          fec.getMostRecentKernelRuntime()->schedulerType(), named.expected);
      testValidate(
          fec.fusion(), outputs, inputs, __LINE__, __FILE__,
          named.name + ", run " + std::to_string(run));
    }
  }
}

} // namespace fuser
