// Slices, pads and cats read in place inside pointwise kernels (doc/ops.md,
// "Slicing, padding and concatenation"): which fusions the pointwise
// scheduler takes and why it declines the others, the segments around a
// resize, each kernel compiled with NVRTC and run on the kernel-IR
// interpreter (every output element written once, holding the input
// element its position falls in, or the pad value), and on the GPU against
// ATen over several layouts and types.
#include <codegen/codegen.h>
#include <device_lower/lower.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/fusion_kernel_runtime.h>
#include <runtime/input_binding.h>
#include <runtime/nvrtc_compile.h>
#include <runtime/segment_scheduling.h>
#include <scheduler/pointwise.h>
#include <scheduler/registry.h>
#include <segmentation/segmented_fusion.h>
#include <tests/cpp/kernel_ir_interpreter.h>
#include <tests/cpp/utils.h>
#include <transform/resize_to_inputs.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace fuser {

using kir_test::Coord;
using kir_test::Value;
using ::testing::HasSubstr;

class ResizeInPlaceTest : public FuserIrTest {};
class ResizeInPlaceGpuTest : public FuserTest {};

namespace {

Val* idx(int64_t v) {
  return IrBuilder::create<Val>(v, DataType::Index);
}

Val* number(double v) {
  return IrBuilder::create<Val>(v);
}

// The value the fusion computes at an output coordinate, from the input
// elements (kir_test::inputValue) it reads.
using Expected = std::function<Value(size_t output, const Coord&)>;

Value input(TensorView* tv, const Coord& c) {
  return kir_test::inputValue(tv->name(), c);
}

Value plus(const Value& v, double x) {
  return Value{v.number + x, v.sources};
}

Value times(const Value& v, double x) {
  return Value{v.number * x, v.sources};
}

// Schedules a copy of `fusion` for `inputs` as the runtime would (its
// resizes of computed tensors rewritten over the inputs; it must be one
// pointwise kernel), compiles its kernel with NVRTC, runs it on the
// interpreter and compares every output element with `expected`; "" or
// what went wrong.
std::string interpretPointwise(
    const Fusion& fusion, const std::vector<at::Tensor>& inputs,
    const Expected& expected) {
  Fusion scheduled(fusion);
  // As the runtime does before it cuts the fusion (doc/segmentation.md §7).
  resizesToInputs(&scheduled);
  std::unique_ptr<LoweredKernel> kernel;
  std::vector<c10::IValue> ivalues(inputs.begin(), inputs.end());
  try {
    RuntimeInfo info = makeRuntimeInfo(&scheduled, ivalues, false);
    SchedulerChoice choice = chooseScheduler(&scheduled, info);
    if (choice.scheduler->type() != SchedulerType::PointWise) {
      std::string why;
      for (const std::string& r : choice.rejections) {
        why += "\n    " + r;
      }
      return "scheduled by " + toString(choice.scheduler->type()) + why;
    }
    choice.scheduler->schedule(
        &scheduled, *choice.scheduler->computeHeuristics(&scheduled, info));
    compileToCubin(
        generateCudaKernel(&scheduled, DataType::Int32), "fuser_kernel", 90,
        true);
    kernel = GpuLower(&scheduled, DataType::Int32).run();
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what();
  }
  std::map<int64_t, kir_test::BufferLayout> layouts;
  ExpressionEvaluator ee;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto* tv = scheduled.inputs()[i]->as<TensorView>();
    layouts[tv->name()] = kir_test::stridedLayoutOf(inputs[i]);
    for (size_t a = 0; a < tv->getLogicalDomain().size(); ++a) {
      ee.bind(
          tv->getLogicalDomain()[a]->extent(),
          ScalarValue(inputs[i].size(static_cast<int64_t>(a))));
    }
  }
  const std::vector<kir_test::BufferLayout> output_layouts =
      kir_test::plainOutputLayouts(scheduled, ee, layouts);
  kir_test::KernelInterpreter interpreter(*kernel, layouts);
  if (std::string errors = kir_test::runReportingErrors(interpreter);
      !errors.empty()) {
    return errors;
  }
  std::stringstream failure;
  for (size_t o = 0; o < output_layouts.size(); ++o) {
    const int64_t name = scheduled.outputs()[o]->name();
    const auto& counts = interpreter.writeCounts(name);
    const auto& values = interpreter.storage(name);
    int64_t bad = 0;
    for (const auto& [offset, coord] : output_layouts[o].inverse()) {
      const auto k = static_cast<size_t>(offset);
      const Value want = expected(o, coord);
      if ((counts[k] != 1 || *values[k] != want) && bad++ < 4) {
        failure << "\n  output " << o << " element " << kir_test::str(coord)
                << " written " << counts[k] << " times";
        if (counts[k] > 0) {
          failure << ", holds " << kir_test::str(*values[k]) << ", expected "
                  << kir_test::str(want);
        }
      }
    }
    if (bad > 0) {
      failure << "\n  output " << o << ": " << bad << " wrong elements";
    }
  }
  return failure.str();
}

// Why the pointwise scheduler declines `fusion` ("" when it takes it).
std::string pointwiseDeclines(Fusion* fusion) {
  std::string reason;
  return PointWiseScheduler().canScheduleCompileTime(fusion, &reason) ? ""
                                                                      : reason;
}

} // namespace

// pad(x, (1, 2) on the last axis, (-1, 3) on the first) + 1 over a
// transposed input: one kernel; the output position (i, j) reads x at
// (i + 1, j - 1) where that lies in x, else holds the pad value.
TEST_F(ResizeInPlaceTest, PadIsReadThroughAPredicate) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeSymbolicTensor(2);
  fusion.addInput(x);
  fusion.addOutput(
      add(pad(x, {idx(1), idx(2), idx(-1), idx(3)}, number(0.5)), number(1.0)));
  const at::Tensor in = at::randn({9, 7}).t();
  EXPECT_EQ(
      interpretPointwise(
          fusion, {in},
          [&](size_t, const Coord& c) {
            const Coord at{c[0] + 1, c[1] - 1};
            const bool inside =
                at[0] >= 0 && at[0] < 7 && at[1] >= 0 && at[1] < 9;
            return inside ? plus(input(x, at), 1.0) : Value{1.5, {}};
          }),
      "");
}

// cat of three inputs (one transposed) along axis 0, times 2: each output
// row is read from the input whose rows it falls in.
TEST_F(ResizeInPlaceTest, CatReadsEachPositionFromItsInput) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = makeSymbolicTensor(2);
  TensorView* b = makeSymbolicTensor(2);
  TensorView* c = makeSymbolicTensor(2);
  fusion.addInput(a);
  fusion.addInput(b);
  fusion.addInput(c);
  fusion.addOutput(mul(cat({a, b, c}, 0), number(2.0)));
  const std::vector<at::Tensor> ins = {
      at::randn({3, 37}), at::randn({37, 4}).t(), at::randn({2, 37})};
  EXPECT_EQ(
      interpretPointwise(
          fusion, ins,
          [&](size_t, const Coord& p) {
            const Value v = p[0] < 3   ? input(a, p)
                            : p[0] < 7 ? input(b, {p[0] - 3, p[1]})
                                       : input(c, {p[0] - 7, p[1]});
            return times(v, 2.0);
          }),
      "");
}

// Along the innermost axis, with an empty input among them: the kernel
// never reads it.
TEST_F(ResizeInPlaceTest, CatAlongTheInnermostAxisSkipsEmptyInputs) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = makeContigTensor(2);
  TensorView* empty = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion.addInput(a);
  fusion.addInput(empty);
  fusion.addInput(b);
  fusion.addOutput(neg(cat({a, empty, b}, 1)));
  const std::vector<at::Tensor> ins = {
      at::randn({5, 33}), at::randn({5, 0}), at::randn({5, 6})};
  EXPECT_EQ(
      interpretPointwise(
          fusion, ins,
          [&](size_t, const Coord& p) {
            const Value v =
                p[1] < 33 ? input(a, p) : input(b, {p[0], p[1] - 33});
            return times(v, -1.0);
          }),
      "");
}

// A slice with a step and a negative start, followed by arithmetic: one
// kernel reading x at (1 + 2i, 4 + j).
TEST_F(ResizeInPlaceTest, SliceIsReadAtItsOffsetAndStep) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeSymbolicTensor(2);
  fusion.addInput(x);
  fusion.addOutput(
      mul(slice(x, {{idx(1), idx(-1), idx(2)}, {idx(-6), nullptr, nullptr}}),
          number(3.0)));
  const at::Tensor in = at::randn({10, 9});
  EXPECT_EQ(
      interpretPointwise(
          fusion, {in},
          [&](size_t, const Coord& p) {
            return times(input(x, {1 + 2 * p[0], 3 + p[1]}), 3.0);
          }),
      "");
}

// The rotation of rotary embeddings as traced from x[..., 16:]: PyTorch's
// stop "to the end" is INT64_MAX. The slice's extent is the input's less
// 16, with no such constant left for a kernel of 32-bit indices to
// truncate (it did: min(INT64_MAX, 32) became -1 there and dropped the
// first half of the rotation).
TEST_F(ResizeInPlaceTest, SliceToTheEndOfTracedCodeIsTheExtent) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeSymbolicTensor(3);
  fusion.addInput(x);
  constexpr int64_t kToTheEnd = std::numeric_limits<int64_t>::max();
  TensorView* second = slice(
      x, {{nullptr, nullptr, nullptr},
          {nullptr, nullptr, nullptr},
          {idx(16), idx(kToTheEnd), nullptr}});
  TensorView* first = slice(
      x, {{nullptr, nullptr, nullptr},
          {nullptr, nullptr, nullptr},
          {idx(0), idx(16), nullptr}});
  EXPECT_THAT(
      second->axis(2)->extent()->toInlineString(),
      ::testing::Not(HasSubstr(std::to_string(kToTheEnd))));
  fusion.addOutput(cat({mul(second, number(-1.0)), first}, 2));
  const at::Tensor in = at::randn({4, 6, 32});
  EXPECT_EQ(
      interpretPointwise(
          fusion, {in},
          [&](size_t, const Coord& p) {
            return p[2] < 16 ? times(input(x, {p[0], p[1], p[2] + 16}), -1.0)
                             : input(x, {p[0], p[1], p[2] - 16});
          }),
      "");
}

// pad and cat joined by an add: out = pad(x, 2 left, 2 right) + cat(y, z)
// along the last axis, with a second output of the same loops.
TEST_F(ResizeInPlaceTest, ResizesJoinedByArithmeticShareOneLoop) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  TensorView* z = makeContigTensor(2);
  fusion.addInput(x);
  fusion.addInput(y);
  fusion.addInput(z);
  TensorView* sum = add(pad(x, {idx(2), idx(2)}), cat({y, z}, 1));
  fusion.addOutput(sum);
  fusion.addOutput(relu(sum));
  const std::vector<at::Tensor> ins = {
      at::randn({6, 60}), at::randn({6, 30}), at::randn({6, 34})};
  EXPECT_EQ(
      interpretPointwise(
          fusion, ins,
          [&](size_t o, const Coord& p) {
            const bool inside = p[1] >= 2 && p[1] < 62;
            const Value padded =
                inside ? input(x, {p[0], p[1] - 2}) : Value{0.0, {}};
            const Value joined =
                p[1] < 30 ? input(y, p) : input(z, {p[0], p[1] - 30});
            Value v{padded.number + joined.number, padded.sources};
            v.sources.add(joined.sources);
            if (o == 1) {
              v.number = v.number > 0 ? v.number : 0.0;
            }
            return v;
          }),
      "");
}

// A rotation as rotary embeddings write it: x * 2 + cat(-x[:, h:],
// x[:, :h]). The cat of computed tensors is rewritten over shifted reads
// of x (transform/resize_to_inputs.h): one kernel reading x three ways.
TEST_F(ResizeInPlaceTest, CatOfComputedSlicesIsOneKernel) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeSymbolicTensor(2);
  fusion.addInput(x);
  TensorView* first =
      slice(x, {{nullptr, nullptr, nullptr}, {idx(0), idx(32)}});
  TensorView* second =
      slice(x, {{nullptr, nullptr, nullptr}, {idx(32), idx(64)}});
  fusion.addOutput(add(mul(x, number(2.0)), cat({neg(second), first}, 1)));
  const at::Tensor in = at::randn({64, 6}).t();
  EXPECT_EQ(
      interpretPointwise(
          fusion, {in},
          [&](size_t, const Coord& p) {
            const Value own = input(x, p);
            const Value other = p[1] < 32 ? input(x, {p[0], p[1] + 32})
                                          : input(x, {p[0], p[1] - 32});
            const double sign = p[1] < 32 ? -1.0 : 1.0;
            Value v{2.0 * own.number + sign * other.number, own.sources};
            v.sources.add(other.sources);
            return v;
          }),
      "");
}

// A pad of a computed tensor: where(inside, relu(pad(x)), value) - 1.
TEST_F(ResizeInPlaceTest, PadOfAComputedTensorIsOneKernel) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  fusion.addOutput(
      sub(pad(relu(x), {idx(1), idx(2), idx(0), idx(0)}, number(0.5)),
          number(1.0)));
  EXPECT_EQ(
      interpretPointwise(
          fusion, {at::randn({5, 40})},
          [&](size_t, const Coord& p) {
            if (p[1] < 1 || p[1] >= 41) {
              return Value{-0.5, {}};
            }
            const Value v = input(x, {p[0], p[1] - 1});
            return Value{std::max(v.number, 0.0) - 1.0, v.sources};
          }),
      "");
}

// A zero pad changes nothing: a copy of the input.
TEST_F(ResizeInPlaceTest, ZeroPadIsACopy) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  fusion.addOutput(mul(pad(x, {idx(0), idx(0)}), number(2.0)));
  EXPECT_EQ(
      interpretPointwise(
          fusion, {at::randn({3, 17})},
          [&](size_t, const Coord& p) { return times(input(x, p), 2.0); }),
      "");
}

// The kernel's code: the pad value chosen by C's `?:` (which reads only
// the operand it picks), the input read in place, no cache of it.
TEST_F(ResizeInPlaceTest, KernelReadsTheResizedInputInPlace) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2, DataType::BFloat16);
  fusion.addInput(x);
  fusion.addOutput(castOp(
      DataType::BFloat16,
      mul(castOp(DataType::Float, pad(x, {idx(1), idx(1)})), number(2.0))));
  const CompiledSchedule s =
      scheduleAndCompile(fusion, {at::randn({64, 126}).to(at::kBFloat16)});
  EXPECT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_THAT(s.code, HasSubstr(" ? T0["));
}

TEST_F(ResizeInPlaceTest, PointwiseDeclinesWhatItCannotReadInPlace) {
  {
    // Slices alone: ATen's views.
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = makeContigTensor(2);
    fusion.addInput(x);
    fusion.addOutput(slice(x, {{idx(1), idx(3)}}));
    EXPECT_THAT(pointwiseDeclines(&fusion), HasSubstr("only slices"));
  }
  {
    // A pad of a tensor the fusion computes.
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = makeContigTensor(2);
    fusion.addInput(x);
    fusion.addOutput(pad(relu(x), {idx(1), idx(1)}));
    EXPECT_THAT(
        pointwiseDeclines(&fusion), HasSubstr("which the fusion computes"));
  }
  {
    // A pad and the input itself to outputs of different shapes.
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = makeContigTensor(2);
    fusion.addInput(x);
    fusion.addOutput(pad(x, {idx(1), idx(1)}));
    fusion.addOutput(relu(x));
    EXPECT_THAT(pointwiseDeclines(&fusion), HasSubstr("is not joined"));
  }
  {
    // Two pads of one input, of different shapes: two loops.
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = makeContigTensor(2);
    fusion.addInput(x);
    fusion.addOutput(pad(x, {idx(1), idx(1)}));
    fusion.addOutput(pad(x, {idx(2), idx(0)}));
    EXPECT_THAT(pointwiseDeclines(&fusion), HasSubstr("is not joined"));
  }
}

// The runtime's segments (the rewrites before the cut included): a pad of
// a computed tensor is one kernel with it, a slice alone stays an ATen
// view, and a pad of a reduction's result goes with the kernel after the
// reduction, which reads the result in place.
TEST_F(ResizeInPlaceTest, SegmentsAroundResizes) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  TensorView* twice = mul(x, number(2.0));
  fusion.addOutput(add(pad(twice, {idx(1), idx(1)}), number(1.0)));
  fusion.addOutput(slice(x, {{idx(1), idx(3)}}));
  fusion.addOutput(add(pad(sum(x, {1}), {idx(1), idx(1)}), number(1.0)));
  SegmentedFusion segmented(&fusion);
  const std::vector<c10::IValue> in = {at::randn({16, 40})};
  RuntimeInfo info =
      makeRuntimeInfo(segmented.completeFusion(), in, /*require_cuda=*/false);
  segmentForInputs(segmented, in, info);
  std::vector<std::string> groups;
  for (const SegmentedGroup* group : segmented.groups()) {
    std::string ops;
    for (Expr* expr : group->exprs()) {
      if (expr->isA<ResizeOp>() || expr->isA<ReductionOp>() ||
          expr->isA<IotaOp>()) {
        ops += expr->getOpString() + " ";
      }
    }
    groups.push_back(ops);
  }
  EXPECT_THAT(
      groups, ::testing::UnorderedElementsAre(
                  "IotaOp ResizeOp ", "ResizeOp ", "ReductionOp ", "ResizeOp "))
      << segmented.toString();
}

// ---- On the GPU, against ATen.

namespace {

// Runs `fusion` through the runtime twice (compile, cache hit), checks the
// outputs against ATen and that it ran as one pointwise kernel.
void expectOneKernel(
    std::unique_ptr<Fusion> fusion, const std::vector<at::Tensor>& inputs) {
  Fusion* raw = fusion.get();
  FusionExecutorCache fec(std::move(fusion));
  std::vector<c10::IValue> ivalues(inputs.begin(), inputs.end());
  for (int run = 0; run < 2; ++run) {
    const auto out = fec.runFusionWithInputs(ivalues);
    testValidate(raw, out, ivalues, __LINE__, __FILE__);
  }
  FusionKernelRuntime* runtime = fec.getMostRecentKernelRuntime();
  ASSERT_EQ(runtime->segments().size(), 1u);
  EXPECT_EQ(runtime->schedulerType(0), SchedulerType::PointWise);
}

} // namespace

TEST_F(ResizeInPlaceGpuTest, PadAndCatOverLayoutsEqualATens) {
  const auto opts = at::TensorOptions().device(at::kCUDA);
  for (DataType dtype : {DataType::Float, DataType::BFloat16}) {
    const auto type = dtype == DataType::Float ? at::kFloat : at::kBFloat16;
    // Contiguous, transposed, a strided view, and a split allocation
    // [rows / 4, 4, cols].
    const at::Tensor dense = at::randn({128, 1000}, opts).to(type);
    const at::Tensor transposed = at::randn({1000, 128}, opts).to(type).t();
    const at::Tensor strided = at::randn({256, 1001}, opts)
                                   .to(type)
                                   .slice(0, 0, 256, 2)
                                   .slice(1, 1, 1001);
    for (const at::Tensor& in : {dense, transposed, strided}) {
      auto fusion = std::make_unique<Fusion>();
      FusionGuard fg(fusion.get());
      TensorView* x = makeSymbolicTensor(2, dtype);
      TensorView* y = makeSymbolicTensor(2, dtype);
      fusion->addInput(x);
      fusion->addInput(y);
      TensorView* padded = pad(x, {idx(3), idx(-2), idx(0), idx(1)});
      TensorView* joined = cat({y, x}, 0);
      fusion->addOutput(
          castOp(dtype, add(castOp(DataType::Float, padded), number(1.0))));
      fusion->addOutput(
          castOp(dtype, mul(castOp(DataType::Float, joined), number(2.0))));
      // Two loops (the pad's and the cat's): two kernels, each correct.
      Fusion* raw = fusion.get();
      FusionExecutorCache fec(std::move(fusion));
      const at::Tensor other = at::randn({5, 1000}, opts).to(type);
      const auto out = fec.runFusionWithInputs({in, other});
      testValidate(raw, out, {in, other}, __LINE__, __FILE__);
    }
  }
  {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(2);
    fusion->addInput(x);
    auto [outer, inner] = IterDomain::split(x->axis(0), idx(4), true);
    x->setAllocationDomain({outer, inner, x->axis(1)}, true);
    fusion->addOutput(relu(pad(x, {idx(1), idx(1), idx(2), idx(2)})));
    expectOneKernel(std::move(fusion), {at::randn({64, 300}, opts)});
  }
}

// Size-1 axes, an odd innermost size, and more than 2^31 elements.
TEST_F(ResizeInPlaceGpuTest, EdgeSizesEqualATens) {
  const auto opts = at::TensorOptions().device(at::kCUDA);
  {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(2);
    TensorView* y = makeContigTensor(2);
    fusion->addInput(x);
    fusion->addInput(y);
    fusion->addOutput(mul(cat({x, y}, 1), number(2.0)));
    expectOneKernel(
        std::move(fusion),
        {at::randn({1, 1}, opts), at::randn({1, 4097}, opts)});
  }
  {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(2, DataType::BFloat16);
    fusion->addInput(x);
    fusion->addOutput(
        neg(slice(x, {{idx(1), nullptr, nullptr}, {idx(0), idx(-1)}})));
    // Compared on the device, exactly: testValidate's copies in double on
    // the host would take some 100 GB.
    const int64_t rows = (int64_t{1} << 31) / 4096 + 2;
    const at::Tensor in = at::randn({rows, 4097}, opts.dtype(at::kBFloat16));
    FusionExecutorCache fec(std::move(fusion));
    const at::Tensor out = fec.runFusionWithInputs({in}).at(0);
    EXPECT_GT(out.numel(), int64_t{1} << 31);
    EXPECT_TRUE(at::equal(out, -in.slice(0, 1).slice(1, 0, -1)));
    EXPECT_EQ(
        fec.getMostRecentKernelRuntime()->schedulerType(),
        SchedulerType::PointWise);
  }
}

} // namespace fuser
