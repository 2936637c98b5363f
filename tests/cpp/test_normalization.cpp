// The inner persistent scheduler (csrc/scheduler/normalization_inner.h,
// doc/normalization.md): which fusions it takes and with what parameters,
// its kernels compiled with NVRTC and run on the kernel-IR interpreter on
// the CPU, and on the GPU every case against ATen, as one kernel.
#include <scheduler/utils.h>
#include <tests/cpp/normalization_harness.h>

#include <algorithm>
#include <sstream>

namespace fuser {

using ::testing::HasSubstr;

namespace {

std::vector<NormCase> everyCase() {
  std::vector<NormCase> cases;
  const DataType f32 = DataType::Float;
  const DataType bf16 = DataType::BFloat16;
  // Softmax over hidden sizes from short rows (several per block) to
  // 16384, odd ones (1000: vectors of 4 with a padded warp; 4097: no
  // vectors), half precision, size-1 and 3-D shapes.
  for (auto [rows, hidden] : std::vector<std::pair<int64_t, int64_t>>{
           {300, 96},
           {128, 1024},
           {64, 4096},
           {32, 8192},
           {16, 16384},
           {33, 1000},
           {16, 4097},
           {1, 2048},
           {5, 7}}) {
    cases.push_back(normCase(
        "softmax " + shapeName({rows, hidden}), {randn({rows, hidden}, f32)},
        softmaxOf(1)));
  }
  cases.push_back(normCase(
      "softmax bf16 [64, 4096]", {randn({64, 4096}, bf16)}, softmaxOf(1)));
  cases.push_back(normCase(
      "softmax half [32, 2048]", {randn({32, 2048}, DataType::Half)},
      softmaxOf(1)));
  cases.push_back(normCase(
      "softmax 3-D [4, 1, 3, 512]", {randn({4, 1, 3, 512}, f32)},
      softmaxOf(3)));
  cases.push_back(normCase(
      "log_softmax [64, 1024]", {randn({64, 1024}, f32)},
      [](Fusion* f, const std::vector<TensorView*>& in) {
        f->addOutput(log_softmax(in[0], 1));
      }));
  // Layer norm with weight and bias, and with its statistics as outputs.
  for (auto [dtype, hidden] : std::vector<std::pair<DataType, int64_t>>{
           {f32, 1024}, {bf16, 4096}, {bf16, 5120}, {f32, 12288}}) {
    cases.push_back(normCase(
        std::string("layer_norm ") + (dtype == f32 ? "f32 " : "bf16 ") +
            shapeName({48, hidden}),
        {randn({48, hidden}, dtype), randn({hidden}, dtype),
         randn({hidden}, dtype)},
        layerNormOf(true, false)));
  }
  // A weight and a bias read an element at a time (every other element of
  // a longer tensor): no vectors for the row either.
  cases.push_back(normCase(
      "layer_norm bf16, strided weight and bias [48, 1024]",
      {randn({48, 1024}, bf16), randn({2048}, bf16).slice(0, 0, 2048, 2),
       randn({2048}, bf16).slice(0, 0, 2048, 2)},
      layerNormOf(true, false), /*symbolic=*/true));
  // 1000 threads, launched as 1024: the kernel declares its block size.
  cases.push_back(normCase(
      "layer_norm f32 [8, 20000]",
      {randn({8, 20000}, f32), randn({20000}, f32), randn({20000}, f32)},
      layerNormOf(true, false)));
  cases.push_back(normCase(
      "layer_norm with mean and invstd outputs", {randn({40, 2048}, f32)},
      layerNormOf(false, true)));
  for (auto [dtype, hidden] : std::vector<std::pair<DataType, int64_t>>{
           {bf16, 4096}, {f32, 8192}, {bf16, 1000}}) {
    cases.push_back(normCase(
        std::string("rms_norm ") + (dtype == f32 ? "f32 " : "bf16 ") +
            shapeName({48, hidden}),
        {randn({48, hidden}, dtype), randn({hidden}, dtype)}, rmsNormOf(true)));
  }
  // Backward passes for the input gradient.
  cases.push_back(normCase(
      "softmax_backward [64, 2048]",
      {randn({64, 2048}, f32), at::softmax(at::randn({64, 2048}), 1)},
      [](Fusion* f, const std::vector<TensorView*>& in) {
        f->addOutput(softmax_backward(in[0], in[1], 1));
      }));
  {
    at::Tensor x = at::randn({64, 1024});
    at::Tensor mean = x.mean({1});
    at::Tensor invstd = at::rsqrt(x.var({1}, false) + 1e-5);
    cases.push_back(normCase(
        "layer_norm_backward input gradient [64, 1024]",
        {at::randn({64, 1024}), x, mean, invstd, at::randn({1024})},
        [](Fusion* f, const std::vector<TensorView*>& in) {
          f->addOutput(layer_norm_backward(
                           in[0], in[1], {1}, in[2], in[3], in[4], nullptr)
                           .grad_input);
        }));
    cases.push_back(normCase(
        "rms_norm_backward input gradient [64, 1024]",
        {at::randn({64, 1024}), x, invstd, at::randn({1024})},
        [](Fusion* f, const std::vector<TensorView*>& in) {
          f->addOutput(
              rms_norm_backward(in[0], in[1], {1}, in[2], in[3]).grad_input);
        }));
  }
  // A tensor read after the reduction through an expr that does not
  // depend on it ((x + bias) - sum(x)), and parts of one fusion that share
  // no tensor (x's normalizations and the gradient of (dy, y)).
  cases.push_back(normCase(
      "(x + bias) - sum(x)", {randn({31, 47}, f32), randn({47}, f32)},
      [](Fusion* f, const std::vector<TensorView*>& in) {
        TensorView* biased = add(in[0], broadcast(in[1], {true, false}));
        f->addOutput(sub(biased, broadcast(sum(in[0], {1}), {false, true})));
      }));
  cases.push_back(normCase(
      "five normalizations in one fusion",
      {randn({64, 1000}, f32), randn({64, 1000}, f32),
       at::softmax(at::randn({64, 1000}), 1), randn({1000}, f32),
       randn({1000}, f32)},
      [](Fusion* f, const std::vector<TensorView*>& in) {
        f->addOutput(softmax(in[0], 1));
        f->addOutput(log_softmax(in[0], 1));
        f->addOutput(softmax_backward(in[1], in[2], 1));
        f->addOutput(layer_norm(in[0], {1}, in[3], in[4], eps()).output);
        f->addOutput(rms_norm(in[0], {1}, in[3], eps()).output);
      }));
  // Non-contiguous inputs: gaps between rows, a strided row, an offset.
  const std::vector<at::Tensor> views = {
      at::randn({64, 1100}).slice(1, 0, 1024),
      at::randn({64, 2048}).slice(1, 0, 2048, 2),
      at::randn({65, 1025}).slice(0, 1).slice(1, 1)};
  for (size_t v = 0; v < views.size(); ++v) {
    cases.push_back(normCase(
        "softmax of non-contiguous view " + std::to_string(v), {views[v]},
        softmaxOf(1), /*symbolic=*/true));
  }
  // The seed's layout: [M, N] allocated as [M/4, 4, N].
  {
    NormCase c = normCase(
        "softmax, split allocation", {at::randn({64, 1024})}, softmaxOf(1));
    FusionGuard fg(c.fusion.get());
    auto* in = c.fusion->inputs()[0]->as<TensorView>();
    auto [outer, inner] = IterDomain::split(
        in->axis(0), IrBuilder::create<Val>(int64_t(4), DataType::Index), true);
    in->setAllocationDomain({outer, inner, in->axis(1)}, true);
    cases.push_back(std::move(c));
  }
  return cases;
}

} // namespace

// ---- The rewrites before a persistent schedule (persistent_buffers.h),
// before and after.

namespace {

int64_t countExprs(Fusion* f, const std::function<bool(Expr*)>& pred) {
  int64_t n = 0;
  for (Expr* e : f->exprs()) {
    n += pred(e) ? 1 : 0;
  }
  return n;
}

std::vector<std::string> bufferNames(Fusion* f) {
  std::vector<std::string> names;
  for (TensorView* tv : persistentBuffers(f)) {
    names.push_back("T" + std::to_string(tv->name()));
  }
  return names;
}

} // namespace

TEST_F(NormalizationTest, BufferProjectionHoldsTheSmallerInput) {
  for (DataType dtype : {DataType::Float, DataType::BFloat16}) {
    Fusion f;
    FusionGuard fg(&f);
    TensorView* x = makeContigTensor(2, dtype);
    f.addInput(x);
    f.addOutput(softmax(x, 1));
    // Before: the input in float (for its max) and exp(x - max) (for its
    // sum) are held.
    const std::vector<TensorView*> before = persistentBuffers(&f);
    ASSERT_EQ(before.size(), 2u);
    projectPersistentBuffersToInputs(&f);
    const std::vector<TensorView*> after = persistentBuffers(&f);
    ASSERT_EQ(after.size(), 2u);
    if (dtype == DataType::Float) {
      // Recomputing from an input of the same size saves nothing.
      EXPECT_EQ(bufferNames(&f), std::vector<std::string>({"T0", "T4"}));
    } else {
      // The bf16 input replaces its float cast; exp is not recomputed.
      EXPECT_TRUE(after[0]->isFusionInput() || after[1]->isFusionInput());
      int64_t exps = countExprs(&f, [](Expr* e) {
        auto* u = dynamic_cast<UnaryOp*>(e);
        return u != nullptr && u->opType() == UnaryOpType::Exp;
      });
      EXPECT_EQ(exps, 1);
    }
  }
}

// A layer norm backward's g = dy * w feeds both row sums (sum(g) and
// sum(g * xhat)) and the gradient after them; projected, the gradient
// recomputes g from dy. Then g is read only before the rows' barriers
// (the second sum's partial is computed with the first's, expr_sort.cpp):
// no buffer of its own, dy and x (bf16) are the buffers.
TEST_F(NormalizationTest, LayerNormBackwardHoldsOnlyItsInputs) {
  NormCase c = bf16LayerNormBackward4096();
  Fusion* f = c.fusion.get();
  FusionGuard fg(f);
  projectPersistentBuffersToInputs(f);
  const std::vector<TensorView*> buffers = persistentBuffers(f);
  ASSERT_EQ(buffers.size(), 2u) << bufferNames(f).size();
  for (TensorView* tv : buffers) {
    EXPECT_TRUE(tv->isFusionInput()) << tv->toString();
    EXPECT_EQ(tv->dtype(), DataType::BFloat16) << tv->toString();
  }
  // In the fusion's input order, not in the order of their addresses (the
  // order picks which of two equal inputs goes to shared memory: it was
  // not the same from one process to the next).
  const auto& inputs = f->inputs();
  auto position = [&](TensorView* tv) {
    return std::find(inputs.begin(), inputs.end(), tv) - inputs.begin();
  };
  EXPECT_LT(position(buffers[0]), position(buffers[1])) << bufferNames(f)[0];
}

TEST_F(NormalizationTest, RowDivisionsBecomeReciprocalProducts) {
  Fusion f;
  FusionGuard fg(&f);
  TensorView* x = makeContigTensor(2);
  f.addInput(x);
  f.addOutput(softmax(x, 1));
  auto divides = [](Expr* e) {
    auto* b = dynamic_cast<BinaryOp*>(e);
    return b != nullptr && b->opType() == BinaryOpType::Div;
  };
  ASSERT_EQ(countExprs(&f, divides), 1);
  multiplyByRowReciprocals(&f);
  EXPECT_EQ(countExprs(&f, divides), 0);
  auto* out = f.outputs()[0]->as<TensorView>();
  auto* mul_op = dynamic_cast<BinaryOp*>(out->definition());
  ASSERT_NE(mul_op, nullptr);
  EXPECT_EQ(mul_op->opType(), BinaryOpType::Mul);
  auto* rcp = dynamic_cast<UnaryOp*>(mul_op->rhs()->definition());
  ASSERT_NE(rcp, nullptr);
  EXPECT_EQ(rcp->opType(), UnaryOpType::Reciprocal);
}

TEST_F(NormalizationTest, WelfordOverAHeldRowBecomesTwoSums) {
  Fusion f;
  FusionGuard fg(&f);
  TensorView* x = makeContigTensor(2);
  f.addInput(x);
  ForwardNormResult r = layer_norm(x, {1}, nullptr, nullptr, eps());
  f.addOutput(r.output);
  f.addOutput(r.mean);
  auto welfords = [](Expr* e) {
    auto* rop = dynamic_cast<ReductionOp*>(e);
    return rop != nullptr && rop->opType() == ReductionOpType::Welford;
  };
  auto sums = [](Expr* e) {
    auto* rop = dynamic_cast<ReductionOp*>(e);
    return rop != nullptr && rop->opType() == ReductionOpType::Sum;
  };
  ASSERT_EQ(countExprs(&f, welfords), 1);
  welfordToTwoPasses(&f);
  EXPECT_EQ(countExprs(&f, welfords), 0);
  EXPECT_EQ(countExprs(&f, sums), 2);
}

TEST_F(NormalizationTest, SideInputsAreBroadcastBeforeTheirCasts) {
  Fusion f;
  FusionGuard fg(&f);
  TensorView* x = makeContigTensor(2, DataType::BFloat16);
  TensorView* w = makeContigTensor(1, DataType::BFloat16);
  f.addInput(x);
  f.addInput(w);
  f.addOutput(rms_norm(x, {1}, w, eps()).output);
  auto cast_of_w = [w](Expr* e) {
    auto* u = dynamic_cast<UnaryOp*>(e);
    return u != nullptr && u->opType() == UnaryOpType::Cast && u->in() == w;
  };
  ASSERT_EQ(countExprs(&f, cast_of_w), 1);
  broadcastSideInputsFirst(&f);
  EXPECT_EQ(countExprs(&f, cast_of_w), 0);
  // w is read by its broadcast only (the old cast is dead code).
  auto reads_w = [w](Expr* e) {
    return std::find(e->inputs().begin(), e->inputs().end(), w) !=
           e->inputs().end();
  };
  EXPECT_EQ(countExprs(&f, reads_w), 1);
  EXPECT_EQ(
      countExprs(
          &f, [&](Expr* e) { return reads_w(e) && e->isA<BroadcastOp>(); }),
      1);
}

// A weight and a bias are read along the row in vectors, by their
// broadcasts (8 loads of 16 bytes per thread instead of 64 of 2), when
// their layout allows; else the row is read an element at a time.
TEST_F(NormalizationTest, WeightsAreReadInVectorsByTheirBroadcasts) {
  // Lines of the kernel (not of the runtime helpers before it) that read
  // `tv`, and those of them that are vector loads.
  auto reads_of = [](const std::string& code, const std::string& tv,
                     bool vectors_only) {
    int64_t n = 0;
    std::stringstream lines(code.substr(code.find("__global__")));
    for (std::string line; std::getline(lines, line);) {
      const bool reads = line.find(" " + tv + "[") != std::string::npos ||
                         line.find("&" + tv + "[") != std::string::npos;
      const bool vector =
          line.find("vectorizedCopy<__nv_bfloat16, 8>(") != std::string::npos;
      n += reads && (vector || !vectors_only) ? 1 : 0;
    }
    return n;
  };
  {
    std::string code;
    auto params = persistentKernel(bf16LayerNorm4096(), &code);
    ASSERT_NE(params, nullptr);
    EXPECT_EQ(persistentParams(*params).vectorize, 8);
    for (const char* tv : {"T1", "T2"}) {
      EXPECT_GT(reads_of(code, tv, true), 0) << tv << "\n" << code;
      EXPECT_EQ(reads_of(code, tv, true), reads_of(code, tv, false))
          << tv << "\n"
          << code;
    }
  }
  {
    NormCase c = normCase(
        "layer_norm",
        {randn({48, 4096}, DataType::BFloat16),
         randn({8192}, DataType::BFloat16).slice(0, 0, 8192, 2),
         randn({4096}, DataType::BFloat16)},
        layerNormOf(true, false), /*symbolic=*/true);
    SchedulerType type;
    std::string rejections, code;
    auto params = scheduleAndCompile(c, &type, &rejections, &code);
    ASSERT_EQ(type, SchedulerType::InnerPersistent) << rejections;
    EXPECT_EQ(persistentParams(*params).vectorize, 1);
    for (const char* vector_access : {"vectorizedCopy", "globalStore"}) {
      EXPECT_EQ(
          code.find(vector_access, code.find("__global__")), std::string::npos)
          << code;
    }
  }
}

// A persistent kernel declares the blocks per SM its register budget
// allows (64 per thread, or its buffers' when they need more; several
// buffers get 32 more while two blocks still fit), and the budget survives
// the copy lowering makes of the scheduled fusion.
TEST_F(NormalizationTest, RowStatisticWrittenBeforeTheRow) {
  for (const bool statistic_first : {true, false}) {
    auto build = [statistic_first](Fusion* f, TensorView* in) {
      TensorView* row_max = broadcast(max(in, {1}), {false, true});
      TensorView* e = exp(sub(in, row_max));
      TensorView* out = div(e, broadcast(sum(e, {1}), {false, true}));
      if (statistic_first) {
        f->addOutput(row_max);
      }
      f->addOutput(out);
      if (!statistic_first) {
        f->addOutput(row_max);
      }
    };
    InterpretedCase ic{
        statistic_first ? "[rows, 1] maxima, then softmax"
                        : "softmax, then [rows, 1] maxima",
        {2, 256},
        build};
    std::string params;
    EXPECT_EQ(interpret(ic, &params, SchedulerType::InnerPersistent), "")
        << ic.name << "\n"
        << params;
  }
}

namespace {

// A layer norm backward's shape of sums, as Thunder writes it: x [256, 128]
// and one statistic per row (s, broadcast along the row and joined to it by
// g = s * x); two row sums and a sum over the statistic's broadcast axis,
// one element per row: of the row sums' result (`of_rows`), or of the
// statistic alone, before them in the fusion's order.
NormCase oneElementBesideRows(bool of_rows) {
  return normCase(
      of_rows ? "one element of the rows' sums" : "one element of the input",
      {at::randn({256, 128}), at::rand({256})},
      [of_rows](Fusion* f, const std::vector<TensorView*>& in) {
        TensorView* x = in[0];
        TensorView* s = broadcast(in[1], {false, true});
        TensorView* one = of_rows ? nullptr : sum(neg(s), {1});
        TensorView* g = mul(s, x);
        TensorView* dot = sum(x, {1});
        TensorView* total = sum(g, {1});
        if (of_rows) {
          one = sum(mul(broadcast(dot, {false, true}), s), {1});
        }
        TensorView* c = broadcast(add(add(one, total), dot), {false, true});
        f->addOutput(add(g, mul(x, c)));
      });
}

} // namespace

// A sum over a broadcast axis reduces one element per row: its loop of one
// takes none of the row's splits, whichever tensor the schedule reaches it
// from (the ID graph joins it to no row axis), so it is added in a
// register, not across the threads. Split like the row, it was reduced
// over TIDx and lowering found no index for its loop. Before the rows'
// sums, it does not set the schedule either.
TEST_F(NormalizationTest, OneElementReductionsBesideRowsKeepALoopOfOne) {
  for (const bool of_rows : {true, false}) {
    NormCase c = oneElementBesideRows(of_rows);
    SCOPED_TRACE(c.name);
    std::vector<ReductionOp*> reductions =
        scheduler_utils::reductionsOf(c.fusion.get());
    ASSERT_EQ(reductions.size(), 3u);
    EXPECT_TRUE(scheduler_utils::reducesOneElement(reductions.back()));
    std::string code;
    ASSERT_NE(persistentKernel(c, &code), nullptr);
    // blockReduce or blockAllReduce: the two rows only.
    const std::string kernel = code.substr(code.find("__global__"));
    int64_t block_reductions = 0;
    for (size_t at = kernel.find("Reduce<"); at != std::string::npos;
         at = kernel.find("Reduce<", at + 1)) {
      ++block_reductions;
    }
    EXPECT_EQ(block_reductions, 2) << kernel;
  }
}

TEST_F(NormalizationTest, OuterNormalizationsAndHugeRowsFallBackToATen) {
  const std::vector<std::pair<NormCase, std::string>> declined = [] {
    std::vector<std::pair<NormCase, std::string>> v;
    v.emplace_back(
        normCase("outer", {at::randn({4096, 64})}, softmaxOf(0)),
        "not innermost in memory");
    v.emplace_back(
        normCase("huge row", {at::randn({2, 1 << 20})}, softmaxOf(1)),
        "shared-memory buffers are off");
    return v;
  }();
  for (const auto& [c, reason] : declined) {
    SchedulerType type;
    std::string rejections;
    scheduleAndCompile(c, &type, &rejections);
    EXPECT_EQ(type, SchedulerType::ExprEval) << c.name;
    EXPECT_THAT(rejections, HasSubstr("InnerPersistent (run time): "))
        << c.name;
    EXPECT_THAT(rejections, HasSubstr(reason)) << c.name;
  }
}

constexpr size_t kNormCases = 32; // one GPU test each (below)

TEST_F(NormalizationTest, EveryCaseCompiles) {
  ASSERT_EQ(everyCase().size(), kNormCases)
      << "update kNormCases, the count of GPU tests";
  for (const NormCase& c : everyCase()) {
    SCOPED_TRACE(c.name);
    SchedulerType type;
    std::string rejections;
    EXPECT_NO_THROW(scheduleAndCompile(c, &type, &rejections));
    EXPECT_EQ(type, c.expected) << rejections;
  }
}

// The index math, padding predicates and all-reduces of the kernels on the
// interpreter: every output element written once, with the value of its
// row (reduction_harness.h; one input, exact in double).
TEST_F(NormalizationTest, KernelsNormalizeEveryRowOnTheInterpreter) {
  auto softmax_over = [](int64_t dim) {
    return [dim](Fusion* f, TensorView* in) { f->addOutput(softmax(in, dim)); };
  };
  const std::vector<std::pair<InterpretedCase, std::string>> cases = {
      {{"softmax, padded warp", {1, 1000}, softmax_over(1)},
       "threads 125 (launched in multiples of 32)"},
      {{"softmax, 4 vectors per thread", {1, 1024}, softmax_over(1)},
       "batch 4"},
      {{"softmax, short rows share a block", {20, 64}, softmax_over(1)},
       "x 16"},
      {{"softmax, rows below a warp", {9, 3, 24}, softmax_over(2)},
       "launched in multiples of 8"},
      {{"softmax, no vectors", {4, 130}, softmax_over(1)}, "vectorize 2"},
      {{"log_softmax",
        {2, 512},
        [](Fusion* f, TensorView* in) { f->addOutput(log_softmax(in, 1)); }},
       ""},
      {{"rms_norm",
        {1, 768},
        [](Fusion* f, TensorView* in) {
          f->addOutput(rms_norm(in, {1}, nullptr, eps()).output);
        }},
       ""},
      {{"softmax, split allocation", {8, 100}, softmax_over(1), {}, true}, ""},
  };
  for (const auto& [ic, expected_params] : cases) {
    std::string params;
    const std::string failure =
        interpret(ic, &params, SchedulerType::InnerPersistent);
    EXPECT_EQ(failure, "") << ic.name << "\n  " << params;
    EXPECT_THAT(params, HasSubstr(expected_params)) << ic.name;
  }
}

// Each case runs twice (compile, then a cache hit), as one kernel. One
// test per case, so that gtest shards (and the sanitizer's) spread them.
class NormalizationCaseGpuTest : public NormalizationGpuTest,
                                 public ::testing::WithParamInterface<size_t> {
};

TEST_P(NormalizationCaseGpuTest, MatchesATen) {
  std::vector<NormCase> cases = everyCase();
  const NormCase& c = cases.at(GetParam());
  SCOPED_TRACE(c.name);
  std::vector<c10::IValue> inputs;
  for (const at::Tensor& t : c.inputs) {
    inputs.push_back(onDevice(t));
  }
  FusionExecutorCache fec(std::make_unique<Fusion>(*c.fusion));
  for (int run = 0; run < 2; ++run) {
    std::vector<at::Tensor> outputs = fec.runFusionWithInputs(inputs);
    const auto* runtime = fec.getMostRecentKernelRuntime();
    EXPECT_EQ(runtime->schedulerType(), c.expected);
    EXPECT_FALSE(runtime->isSegmented());
    testValidate(
        fec.fusion(), outputs, inputs, __LINE__, __FILE__,
        c.name + ", run " + std::to_string(run));
  }
}

// A count rather than everyCase().size(): gtest runs the generator when it
// registers the tests, whatever the filter (the ThreadSanitizer run's too),
// and building the cases there starts ATen's OpenMP threads, which
// ThreadSanitizer reports. EveryCaseCompiles checks the count.
INSTANTIATE_TEST_SUITE_P(
    EveryCase, NormalizationCaseGpuTest,
    ::testing::Range(size_t{0}, kNormCases));

// Rows held in shared memory, on the GPU against ATen (above 48 KiB of
// dynamic shared memory): x in shared memory, exp(x - max) in registers,
// with vectors of 4 (30000) and without (30001). At 36001 the two buffers
// fit neither way (144 KB each; 36 registers per thread at 1001 threads
// where the budget is 32) and the fusion is segmented
// (RowsBeyondSharedMemoryAreSegmented).
TEST_F(NormalizationGpuTest, RowsHeldInSharedMemoryMatchATen) {
  ScopedEnv enable("FUSER_ENABLE", "shared_buffers");
  for (const int64_t width : {30000, 30001}) {
    NormCase c = normCase(
        "softmax [64, " + std::to_string(width) + "]", {at::randn({64, width})},
        softmaxOf(1));
    expectOneKernel(c, SchedulerType::InnerPersistent, __FILE__, __LINE__);
  }
}

TEST_F(NormalizationGpuTest, RowsBeyondSharedMemoryAreSegmented) {
  ScopedEnv enable("FUSER_ENABLE", "shared_buffers");
  NormCase c = normCase(
      "softmax [64, 36001]", {at::randn({64, 36001}, at::kCUDA)}, softmaxOf(1));
  FusionExecutorCache fec(std::make_unique<Fusion>(*c.fusion));
  EXPECT_TRUE(runAndValidate(fec, c, __FILE__, __LINE__)->isSegmented());
}

// RowStatisticWrittenBeforeTheRow on the GPU against ATen.
TEST_F(NormalizationGpuTest, RowStatisticWrittenBeforeTheRow) {
  NormCase c = normCase(
      "[rows, 1] maxima, then softmax", {at::randn({256, 1000}, at::kCUDA)},
      [](Fusion* f, const std::vector<TensorView*>& in) {
        TensorView* row_max = broadcast(max(in[0], {1}), {false, true});
        TensorView* e = exp(sub(in[0], row_max));
        f->addOutput(row_max);
        f->addOutput(div(e, broadcast(sum(e, {1}), {false, true})));
      });
  expectOneKernel(c, SchedulerType::InnerPersistent, __FILE__, __LINE__);
}

// OneElementReductionsBesideRowsKeepALoopOfOne on the GPU against ATen.
TEST_F(NormalizationGpuTest, OneElementReductionsBesideRows) {
  for (const bool of_rows : {true, false}) {
    NormCase c = oneElementBesideRows(of_rows);
    expectOneKernel(c, SchedulerType::InnerPersistent, __FILE__, __LINE__);
  }
}

// 2^31 + 4096 elements: the kernel indexes in 64 bits.
TEST_F(NormalizationGpuTest, InputAbove2To31Elements) {
  NormCase c = normCase(
      "rms_norm of 2^31 + 4096 elements",
      {at::randn({(int64_t{1} << 19) + 1, 4096}, at::kCUDA).to(at::kBFloat16)},
      rmsNormOf(false));
  FusionExecutorCache fec(std::make_unique<Fusion>(*c.fusion));
  EXPECT_EQ(
      runAndValidate(fec, c, __FILE__, __LINE__)->schedulerType(),
      SchedulerType::InnerPersistent);
}

} // namespace fuser
