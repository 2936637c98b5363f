// The inner persistent scheduler's heuristics (doc/normalization.md §4,
// §11): the threads and batch per row, the register cap its kernels
// declare, where the buffers live, and the options that change them.
#include <tests/cpp/normalization_harness.h>

namespace fuser {

using ::testing::HasSubstr;

TEST_F(NormalizationTest, KernelsDeclareTheirRegisterBudget) {
  {
    std::string code;
    auto params = persistentKernel(bf16LayerNorm4096(), &code);
    ASSERT_NE(params, nullptr);
    // 128 x 2 threads at 64 registers: 4 blocks of the 65536 registers.
    EXPECT_EQ(launchBoundsOf(code), "__launch_bounds__(256, 4)");
  }
  {
    // A longer row, more threads per block: the blocks per SM follow
    // from the block size and the budget.
    NormCase c = normCase("softmax", {at::randn({64, 16384})}, softmaxOf(1));
    SchedulerType type;
    std::string rejections, code;
    auto params = scheduleAndCompile(c, &type, &rejections, &code);
    ASSERT_EQ(type, SchedulerType::InnerPersistent) << rejections;
    const auto& p = persistentParams(*params);
    const int64_t threads = p.threads_x * p.threads_y;
    // 32 registers beyond its buffers' would leave one block per SM.
    ASSERT_GT((p.persistent_registers + 32) * threads, 65536 / 2)
        << p.toString();
    const int64_t budget = std::max<int64_t>(64, p.persistent_registers);
    EXPECT_EQ(
        launchBoundsOf(code),
        "__launch_bounds__(" + std::to_string(threads) + ", " +
            std::to_string(65536 / (threads * budget)) + ")")
        << p.toString();
  }
  {
    // A layer norm backward holds dy and x in bf16 (32 registers): with a
    // register per element of the thread's 32 for their float values and
    // 32 others, 96: five blocks of one row of 128 threads (two of two rows
    // would keep 512 resident, FewerRowsPerBlockKeepMoreThreadsResident).
    std::string code;
    auto params = persistentKernel(bf16LayerNormBackward4096(), &code);
    ASSERT_NE(params, nullptr);
    const auto& p = persistentParams(*params);
    ASSERT_EQ(p.persistent_buffers.size(), 2u) << p.toString();
    ASSERT_EQ(p.persistent_registers, 32) << p.toString();
    ASSERT_TRUE(p.narrow_buffers) << p.toString();
    EXPECT_EQ(launchBoundsOf(code), "__launch_bounds__(128, 5)");
    // The printed parameters say what those bounds allow.
    EXPECT_THAT(
        p.toString(),
        HasSubstr("capped at 96 registers per thread (its launch bounds, 5 "
                  "blocks of 128 per SM, allow 96)"));
  }
  {
    // An RMS norm backward holds only bf16 buffers (dy and x, 32 registers):
    // the float values computed from them take a register per element of
    // the thread's 32 beside the 32 others (it spilled at 64): 96, five
    // blocks of one row of 128.
    const DataType bf16 = DataType::BFloat16;
    std::string code;
    auto params = persistentKernel(
        normCase(
            "rms_norm_backward bf16 [64, 4096]",
            {randn({64, 4096}, bf16), randn({64, 4096}, bf16), at::rand({64}),
             randn({4096}, bf16)},
            [](Fusion* f, const std::vector<TensorView*>& in) {
              f->addOutput(rms_norm_backward(in[0], in[1], {1}, in[2], in[3])
                               .grad_input);
            }),
        &code);
    ASSERT_NE(params, nullptr);
    const auto& p = persistentParams(*params);
    ASSERT_EQ(p.persistent_registers, 32) << p.toString();
    ASSERT_TRUE(p.narrow_buffers) << p.toString();
    ASSERT_EQ(p.batch * p.vectorize, 32) << p.toString();
    EXPECT_EQ(launchBoundsOf(code), "__launch_bounds__(128, 5)");
  }
  {
    // bf16 softmax holds exp(x - max) in float: no register per element on
    // top; 48 + 32 = 80 keeps three blocks of 256 per SM.
    std::string code;
    auto params = persistentKernel(
        normCase(
            "softmax bf16 [64, 4096]", {randn({64, 4096}, DataType::BFloat16)},
            softmaxOf(1)),
        &code);
    ASSERT_NE(params, nullptr);
    const auto& p = persistentParams(*params);
    ASSERT_FALSE(p.narrow_buffers) << p.toString();
    ASSERT_EQ(p.persistent_registers, 48) << p.toString();
    EXPECT_EQ(launchBoundsOf(code), "__launch_bounds__(256, 3)");
    // The cap travels with the parameters (HeuristicParams::kernelFlags),
    // not with the fusion.
    EXPECT_EQ(params->kernelFlags().max_registers_per_thread, p.registers);
    EXPECT_FALSE(params->kernelFlags().cooperative_launch);
  }
}

// The backward kernels load each row's inputs before the first of the
// rows' barriers and combine both sums after the last partial (the
// kernel's expr order, device_lower/pass/expr_sort.cpp), and ptxas fits
// them in the 96 registers their heuristics count on (32 for dy and x, 32
// for their float values, 32 others; the launch bounds allow 128) without
// spilling: the copy of each nest for the last row group tests the row
// once (device_lower/pass/unswitch.cpp). Before both, the layer norm
// backward's kernel took 162 registers unbounded and 128 under its bounds.
TEST_F(NormalizationTest, BackwardKernelsLoadRowsFirstAndDoNotSpill) {
  const DataType bf16 = DataType::BFloat16;
  std::vector<NormCase> cases;
  cases.push_back(bf16LayerNormBackward4096());
  cases.push_back(normCase(
      "rms_norm_backward bf16 [64, 4096]",
      {randn({64, 4096}, bf16), randn({64, 4096}, bf16), at::rand({64}),
       randn({4096}, bf16)},
      [](Fusion* f, const std::vector<TensorView*>& in) {
        f->addOutput(
            rms_norm_backward(in[0], in[1], {1}, in[2], in[3]).grad_input);
      }));
  for (const NormCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::string code;
    auto params = persistentKernel(c, &code);
    ASSERT_NE(params, nullptr);
    const std::string kernel = code.substr(code.find("__global__"));
    const size_t first_barrier = kernel.find("blockAllReduce<");
    ASSERT_NE(first_barrier, std::string::npos);
    for (const char* input : {"&T0[", "&T1["}) {
      const size_t load = kernel.find(input);
      ASSERT_NE(load, std::string::npos) << input;
      EXPECT_LT(load, first_barrier) << input << "\n" << kernel;
    }
    const KernelInspection inspection = inspectForSm90a(code);
    FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection);
    EXPECT_TRUE(keepsEverythingInRegisters(inspection)) << params->toString();
    const size_t used = inspection.ptxas_log.find("Used ");
    ASSERT_NE(used, std::string::npos) << inspection.ptxas_log;
    EXPECT_LE(std::stoi(inspection.ptxas_log.substr(used + 5)), 96)
        << inspection.ptxas_log;
  }
}

TEST_F(NormalizationTest, SoftmaxHoldsItsRowInRegisters) {
  NormCase c = normCase("softmax", {at::randn({1024, 8192})}, softmaxOf(1));
  const InnerPersistentParams p = innerPersistentParamsOf(c);
  // 8192 floats: vectors of 4, 8 per thread, 256 threads per row; the
  // input (for its max) and exp(x - max) (for its sum) are held.
  EXPECT_EQ(p.vectorize, 4);
  EXPECT_EQ(p.batch, 8);
  EXPECT_EQ(p.threads_x, 256);
  EXPECT_EQ(p.threads_y, 1);
  EXPECT_EQ(p.persistent_buffers.size(), 2u) << p.toString();
  EXPECT_EQ(p.persistent_registers, 64);
}

TEST_F(NormalizationTest, ShortRowsShareABlockAndOddRowsPadTheWarp) {
  {
    NormCase c = normCase("short", {at::randn({4096, 96})}, softmaxOf(1));
    const InnerPersistentParams p = innerPersistentParamsOf(c);
    // 24 vectors: one per thread, in segments of 32 lanes, 8 rows a block.
    EXPECT_EQ(p.batch, 1);
    EXPECT_EQ(p.threads_x, 24);
    EXPECT_EQ(p.paddedMultiple(), 32);
    EXPECT_EQ(p.threads_y, 8);
  }
  {
    NormCase c = normCase("odd", {at::randn({64, 1000})}, softmaxOf(1));
    const InnerPersistentParams p = innerPersistentParamsOf(c);
    // 250 vectors of 4: 2 per thread, 125 threads launched as 128.
    EXPECT_EQ(p.batch, 2);
    EXPECT_EQ(p.threads_x, 125);
    EXPECT_EQ(p.paddedMultiple(), 32);
  }
  {
    // 4097 = 17 x 241 elements (no vectors): 17 per thread, no thread
    // with a part past the row's end (doubling gave 20 per thread on 205
    // threads, the last three of them partly past it in every row).
    NormCase c = normCase(
        "odd, no vectors", {randn({16, 4097}, DataType::BFloat16)},
        softmaxOf(1));
    const InnerPersistentParams p = innerPersistentParamsOf(c);
    EXPECT_EQ(p.vectorize, 1);
    EXPECT_EQ(p.batch, 17);
    EXPECT_EQ(p.threads_x, 241);
  }
}

// Rows that do not fit the registers keep their inputs' buffers in shared
// memory (doc/normalization.md §11): softmax over 30000 floats holds x
// and exp(x - max), 64 registers per thread at 938 threads (the budget is
// 32); with x in 120 KiB of shared memory, exp(x - max) takes 32. Each use
// reads the buffer through registers, a vector at a time, and the block
// reduction's workspace follows the buffer.
TEST_F(NormalizationTest, RowsBeyondTheRegistersAreHeldInSharedMemory) {
  NormCase c =
      normCase("softmax [2, 30000]", {at::randn({2, 30000})}, softmaxOf(1));
  SchedulerType type;
  std::string rejections;
  std::string code;
  // Off by default (until run on a GPU): declined, with how to turn it on.
  scheduleAndCompile(c, &type, &rejections);
  EXPECT_NE(type, SchedulerType::InnerPersistent);
  EXPECT_THAT(
      rejections, HasSubstr("shared-memory buffers are off "
                            "(FUSER_ENABLE=shared_buffers turns them on)"));

  ScopedEnv enable("FUSER_ENABLE", "shared_buffers");
  rejections.clear();
  const auto params = scheduleAndCompile(c, &type, &rejections, &code);
  ASSERT_EQ(type, SchedulerType::InnerPersistent) << rejections;
  const auto& p = persistentParams(*params);
  EXPECT_EQ(p.shared_inputs, std::vector<int64_t>{0}) << p.toString();
  EXPECT_EQ(p.persistent_registers, 32) << p.toString();
  EXPECT_THAT(
      p.toString(), HasSubstr("the buffers of inputs [0] in shared memory"));
  // 8 vectors of 4 floats per thread, 960 threads launched.
  EXPECT_EQ(p.shared_bytes, 8 * 4 * 4 * 960) << p.toString();
  EXPECT_THAT(code, HasSubstr("reinterpret_cast<float*>(fuser_smem + 0)"));
  EXPECT_THAT(code, HasSubstr("reinterpret_cast<float*>(fuser_smem + 122880)"));
  // The reads from shared memory are vectors.
  EXPECT_THAT(
      code, ::testing::ContainsRegex(
                "vectorizedCopy<float, 4>\\(&T[0-9]+\\[0\\], &T[0-9]+\\[\\("));

  // A row too large for shared memory too is declined with both counts.
  NormCase huge = normCase("huge row", {at::randn({2, 1 << 20})}, softmaxOf(1));
  rejections.clear();
  scheduleAndCompile(huge, &type, &rejections);
  EXPECT_EQ(type, SchedulerType::ExprEval);
  EXPECT_THAT(
      rejections, HasSubstr("with the inputs' buffers in shared memory, "));
}

// Shared buffers on the interpreter, on a device of few registers so that
// short rows take the shared path: every element of a shared buffer is
// read only by the thread that wrote it (no barrier between them), and
// every output element is right. x / sum(x) holds only its input (all of
// it in shared memory at a budget of 0 registers: 8192 / 256 - 32);
// softmax also holds exp(x - max), which stays in registers (a budget of
// 4 at 256 threads: 9216 / 256 - 32) and an odd row pads its last warp;
// several rows per block share the buffer, read from a split allocation.
TEST_F(NormalizationTest, SharedBuffersOnTheInterpreter) {
  auto normalize = [](Fusion* f, TensorView* in) {
    f->addOutput(div(in, broadcast(sum(in, {1}), {false, true})));
  };
  auto softmax = [](Fusion* f, TensorView* in) {
    TensorView* max_x = max(in, {1});
    TensorView* e = exp(sub(in, broadcast(max_x, {false, true})));
    f->addOutput(div(e, broadcast(sum(e, {1}), {false, true})));
  };
  InterpretedCase x_over_sum{"x / sum(x) [3, 1024]", {3, 1024}, normalize};
  x_over_sum.registers_per_sm = 8192;
  InterpretedCase odd_softmax{"softmax [2, 1000]", {2, 1000}, softmax};
  odd_softmax.registers_per_sm = 9216;
  // Rows of 64 threads, 4 per block (the buffer spans TIDy too), of an
  // input allocated as [2, 4, 1024].
  InterpretedCase split{
      "x / sum(x) [8, 1024], allocated [2, 4, 1024]",
      {8, 1024},
      normalize,
      {},
      /*split_allocation=*/true};
  split.registers_per_sm = 8192;
  ScopedEnv enable("FUSER_ENABLE", "shared_buffers");
  for (const InterpretedCase& ic : {x_over_sum, odd_softmax, split}) {
    std::string params;
    const std::string failure =
        interpret(ic, &params, SchedulerType::InnerPersistent);
    EXPECT_EQ(failure, "") << ic.name << "\n" << params;
    EXPECT_THAT(params, HasSubstr("the buffers of inputs [0] in shared memory"))
        << ic.name;
    // Several rows per block (TIDy), each thread's part of its own row.
    EXPECT_THAT(params, ::testing::ContainsRegex("\\) x [24],")) << ic.name;
  }
}

// A softmax that also writes its row maxima as [rows, 1], that output
// first: the output's copy, read by nothing, was computed past its share
// position in loops over its own broadcast IDs, and the row's exprs after
// it took those loops (loop-mapped to theirs) and found no index for their
// columns ("no path from the loops"); with the output last, the row's
// loops came first. An expr no longer shares a loop over a broadcast ID
// where its own loop runs over a full axis
// (device_lower/pass/loop_nests.cpp). Both orders, on the interpreter:
// every element of both outputs written once and right.

// FUSER_ENABLE=warp_per_row (off by default until measured,
// doc/normalization.md §4): a row of at most 32 elements per thread on one
// warp, its sums in shuffles only, where the default keeps two warps.
TEST_F(NormalizationTest, WarpPerRowGivesShortRowsOneWarp) {
  auto softmax_case = [](int64_t hidden) {
    return normCase(
        "softmax", {randn({64, hidden}, DataType::Float)}, softmaxOf(1));
  };
  auto bf16_layer_norm = [] {
    const DataType bf16 = DataType::BFloat16;
    return normCase(
        "layer_norm",
        {randn({64, 1024}, bf16), randn({1024}, bf16), randn({1024}, bf16)},
        layerNormOf(true, false));
  };
  const InnerPersistentParams by_default =
      innerPersistentParamsOf(softmax_case(1024));
  EXPECT_EQ(by_default.threads_x, 64) << by_default.toString();
  EXPECT_EQ(by_default.batch, 4) << by_default.toString();

  ScopedEnv enable("FUSER_ENABLE", "warp_per_row");
  const InnerPersistentParams softmax_1024 =
      innerPersistentParamsOf(softmax_case(1024));
  EXPECT_EQ(softmax_1024.threads_x, 32) << softmax_1024.toString();
  EXPECT_EQ(softmax_1024.batch, 8) << softmax_1024.toString();
  const InnerPersistentParams layer_norm =
      innerPersistentParamsOf(bf16_layer_norm());
  EXPECT_EQ(layer_norm.vectorize, 8) << layer_norm.toString();
  EXPECT_EQ(layer_norm.threads_x, 32) << layer_norm.toString();
  // 250 vectors: no batch up to 8 that fills one warp divides them; 5
  // does, on 50 threads (launched as 64).
  const InnerPersistentParams odd = innerPersistentParamsOf(softmax_case(1000));
  EXPECT_EQ(odd.batch, 5) << odd.toString();
  EXPECT_EQ(odd.threads_x, 50) << odd.toString();

  auto softmax_over_rows = [](Fusion* f, TensorView* in) {
    f->addOutput(softmax(in, 1));
  };
  for (const InterpretedCase& ic :
       {InterpretedCase{"softmax [2, 1024]", {2, 1024}, softmax_over_rows},
        InterpretedCase{"softmax [3, 1000]", {3, 1000}, softmax_over_rows}}) {
    std::string params;
    EXPECT_EQ(interpret(ic, &params, SchedulerType::InnerPersistent), "")
        << ic.name << "\n"
        << params;
  }
}

// FUSER_ENABLE=tight_register_caps (off by default until measured): the
// cap is rounded down to what the blocks per SM it implies leave each
// thread, where launch bounds would round it up.
TEST_F(NormalizationTest, TightRegisterCapsLandOnAnOccupancyBoundary) {
  ScopedEnv enable("FUSER_ENABLE", "tight_register_caps");
  {
    // 96 at 256 threads is 2.67 blocks: 3 blocks leave 85, 80 in whole
    // granules (the default's __launch_bounds__(256, 2) allows 128).
    std::string code;
    auto params = persistentKernel(bf16LayerNormBackward4096(), &code);
    ASSERT_NE(params, nullptr);
    const auto& p = persistentParams(*params);
    EXPECT_EQ(p.registers, 80) << p.toString();
    EXPECT_EQ(launchBoundsOf(code), "__launch_bounds__(256, 3)");
  }
  {
    // A cap on a boundary stays: 64 at 256 threads is 4 blocks.
    std::string code;
    auto params = persistentKernel(bf16LayerNorm4096(), &code);
    ASSERT_NE(params, nullptr);
    const auto& p = persistentParams(*params);
    const int64_t threads = p.threads_x * p.threads_y;
    EXPECT_EQ(65536 % (threads * p.registers), 0) << p.toString();
  }
}

// A block holds fewer rows when that keeps more threads resident at the
// kernel's cap (FUSER_DISABLE=fewer_rows_per_block keeps the rows). The layer
// norm backward's cap of 96 holds 2 blocks of 2 rows of 128 threads (512
// threads, 128 registers each) but 5 blocks of one row (640 threads, 96
// registers); ptxas fits its kernel in those 96 without spilling. A cap on both
// sizes' boundary keeps its rows: 64 holds 4 blocks of 256 and 8 of 128, 1024
// threads either way.
TEST_F(NormalizationTest, FewerRowsPerBlockKeepMoreThreadsResident) {
  {
    ScopedEnv disable("FUSER_DISABLE", "fewer_rows_per_block");
    std::string code;
    auto params = persistentKernel(bf16LayerNormBackward4096(), &code);
    ASSERT_NE(params, nullptr);
    EXPECT_EQ(persistentParams(*params).threads_y, 2);
  }
  {
    std::string code;
    auto params = persistentKernel(bf16LayerNormBackward4096(), &code);
    ASSERT_NE(params, nullptr);
    const auto& p = persistentParams(*params);
    EXPECT_EQ(p.threads_x, 128) << p.toString();
    EXPECT_EQ(p.threads_y, 1) << p.toString();
    EXPECT_EQ(p.registers, 96) << p.toString();
    EXPECT_EQ(launchBoundsOf(code), "__launch_bounds__(128, 5)");
    EXPECT_THAT(
        p.toString(),
        HasSubstr("capped at 96 registers per thread (its launch bounds, 5 "
                  "blocks of 128 per SM, allow 96)"));
    const KernelInspection inspection = inspectForSm90a(code);
    FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection);
    EXPECT_TRUE(keepsEverythingInRegisters(inspection)) << p.toString() << "\n"
                                                        << inspection.ptxas_log;
  }
  {
    std::string code;
    auto params = persistentKernel(bf16LayerNorm4096(), &code);
    ASSERT_NE(params, nullptr);
    EXPECT_EQ(persistentParams(*params).threads_y, 2);
    EXPECT_EQ(launchBoundsOf(code), "__launch_bounds__(256, 4)");
  }
  // Numerics on the kernel-IR interpreter, where a small register file
  // puts a short row in the same place: softmax over 1024 floats (cap 64,
  // rows of 64 threads) holds one block of 4 rows per SM of 24576
  // registers, or 3 blocks of 2 rows.
  auto softmax = [](Fusion* f, TensorView* in) {
    f->addOutput(::fuser::softmax(in, 1));
  };
  InterpretedCase two_rows{"softmax [4, 1024]", {4, 1024}, softmax};
  two_rows.registers_per_sm = 24576;
  std::string params;
  EXPECT_EQ(interpret(two_rows, &params, SchedulerType::InnerPersistent), "")
      << params;
  EXPECT_THAT(
      params, HasSubstr("threads 64 (launched in multiples of 32) x 2,"));
}

// The options' kernels against ATen, each a single persistent kernel: the
// short rows one warp takes (softmax 1024 and 1000, a bf16 layer norm
// 1024) and the caps they tighten (a layer norm backward, softmax 16384).
TEST_F(NormalizationGpuTest, OptionsMatchATen) {
  const DataType bf16 = DataType::BFloat16;
  for (const char* option : {"warp_per_row", "tight_register_caps"}) {
    ScopedEnv enable("FUSER_ENABLE", option);
    std::vector<NormCase> cases;
    for (const int64_t hidden : {1024, 1000, 16384}) {
      cases.push_back(normCase(
          std::string(option) + " softmax " + std::to_string(hidden),
          {randn({96, hidden}, DataType::Float)}, softmaxOf(1)));
    }
    cases.push_back(normCase(
        std::string(option) + " bf16 layer_norm 1024",
        {randn({96, 1024}, bf16), randn({1024}, bf16), randn({1024}, bf16)},
        layerNormOf(true, false)));
    cases.push_back(bf16LayerNormBackward4096());
    for (const NormCase& c : cases) {
      FusionExecutorCache fec(std::make_unique<Fusion>(*c.fusion));
      const FusionKernelRuntime* runtime =
          runAndValidate(fec, c, __FILE__, __LINE__);
      EXPECT_EQ(runtime->schedulerType(), SchedulerType::InnerPersistent)
          << option << " " << c.name;
      EXPECT_FALSE(runtime->isSegmented()) << option << " " << c.name;
    }
  }
}

} // namespace fuser
