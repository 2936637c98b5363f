// Fusions that real models (Thunder's Llama block) handed to fuser, cut
// into segments as the runtime cuts them, with every kernel segment run on
// the kernel-IR interpreter (tests/cpp/kernel_ir_interpreter.h) on the
// tensors the runtime would give it and compared element by element with
// ATen's evaluation of the same segment: a CPU twin of
// FUSER_ENABLE=validate_runs (doc/thunder.md §8).
#include <device_lower/lower.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <ops/external.h>
#include <runtime/aten_evaluator.h>
#include <runtime/expr_eval_executor.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/input_binding.h>
#include <runtime/segment_scheduling.h>
#include <runtime/tensor_layout.h>
#include <scheduler/registry.h>
#include <segmentation/segmented_fusion.h>
#include <tests/cpp/kernel_ir_interpreter.h>
#include <tests/cpp/property_harness.h>
#include <tests/cpp/segmentation_harness.h>
#include <tests/cpp/utils.h>
#include <transform/resize_to_inputs.h>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fuser {

using kir_test::Coord;

class ModelSegmentsTest : public FuserIrTest {};

namespace {

Val* idx(int64_t v) {
  return IrBuilder::create<Val>(v, DataType::Index);
}

// `t`'s sizes and strides with the interpreter's number for each element
// of the tensor named `name` (kir_test::inputNumber), so that ATen and the
// interpreter read the same values.
at::Tensor filledLike(const at::Tensor& t, int64_t name) {
  const kir_test::BufferLayout layout = kir_test::stridedLayoutOf(t);
  at::Tensor storage = at::zeros({layout.storageSize()}, at::kDouble);
  double* data = storage.data_ptr<double>();
  for (const Coord& c : layout.allCoords()) {
    data[*layout.offsetOf(c)] = kir_test::inputNumber(name, c);
  }
  return storage.to(t.scalar_type()).as_strided(t.sizes(), t.strides());
}

// `t`'s layout as the kernel is given it for `tv`: the strides in the
// order of tv's allocation axes where those permute its logical axes (the
// runtime passes allocation strides: runtime/kernel_executor.cpp), else
// in logical order.
kir_test::BufferLayout inputLayoutFor(
    const TensorView* tv, const at::Tensor& t) {
  kir_test::BufferLayout layout = kir_test::stridedLayoutOf(t);
  const std::vector<IterDomain*>& logical = tv->getLogicalDomain();
  const std::vector<IterDomain*>& allocation = tv->getMaybeAllocationDomain();
  std::vector<size_t> order;
  for (IterDomain* id : allocation) {
    auto it = std::find(logical.begin(), logical.end(), id);
    if (it == logical.end()) {
      return layout; // not a permutation: the test binds logical strides
    }
    order.push_back(static_cast<size_t>(it - logical.begin()));
  }
  if (order.size() != logical.size()) {
    return layout;
  }
  layout.alloc_sizes.clear();
  layout.alloc_strides.clear();
  for (size_t d : order) {
    layout.alloc_sizes.push_back(t.size(static_cast<int64_t>(d)));
    layout.alloc_strides.push_back(t.stride(static_cast<int64_t>(d)));
  }
  layout.to_alloc = [order](const Coord& c) {
    std::vector<int64_t> alloc;
    for (size_t d : order) {
      alloc.push_back(c[d]);
    }
    return std::optional(alloc);
  };
  return layout;
}

// Runs one kernel segment of `group` on the interpreter with the inputs
// the runtime gives it and compares its outputs with ATen's evaluation of
// the segment: "" or what differs.
std::string interpretSegment(
    const SegmentedGroup& group, InputSegmentScheduling& scheduling) {
  std::unique_ptr<Fusion> unscheduled = group.makeFusion();
  GroupInputs group_inputs = scheduling.groupInputs(group);
  std::vector<c10::IValue> values;
  std::map<int64_t, kir_test::BufferLayout> layouts;
  for (size_t i = 0; i < group_inputs.values.size(); ++i) {
    const c10::IValue& v = group_inputs.values[i];
    if (!v.isTensor()) {
      values.push_back(v);
      continue;
    }
    const int64_t name = unscheduled->inputs()[i]->name();
    values.emplace_back(filledLike(v.toTensor(), name));
    layouts[name] = inputLayoutFor(
        unscheduled->inputs()[i]->as<TensorView>(), values.back().toTensor());
  }
  Fusion scheduled(*unscheduled);
  RuntimeInfo info =
      makeRuntimeInfo(&scheduled, values, false, group_inputs.layouts);
  // The scheduler segmentation chose for the group, as the runtime asks.
  Scheduler& scheduler =
      segmentScheduler(&scheduled, info, scheduling.chosenFor(group));
  if (scheduler.type() == SchedulerType::ExprEval ||
      scheduler.type() == SchedulerType::NoOp) {
    return "";
  }
  const auto params = scheduleSegment(scheduler, &scheduled, info);
  std::unique_ptr<LoweredKernel> kernel =
      GpuLower(&scheduled, DataType::Int32, params->kernelFlags()).run();
  // The outputs as the runtime allocates them (runtime/kernel_executor.cpp).
  std::vector<kir_test::BufferLayout> output_layouts;
  for (Val* out : scheduled.outputs()) {
    const TensorLayout layout =
        denseLayout(out->as<TensorView>(), info.expressionEvaluator());
    output_layouts.push_back(
        kir_test::stridedLayout(layout.sizes, layout.strides));
    layouts[out->name()] = output_layouts.back();
  }
  kir_test::KernelInterpreter interpreter(*kernel, layouts);
  for (Val* in : scheduled.inputs()) {
    if (!in->isA<TensorView>()) {
      interpreter.bindScalar(
          in, info.expressionEvaluator().evaluateOrThrow(in).asInt());
    }
  }
  if (std::string errors = kir_test::runReportingErrors(interpreter);
      !errors.empty()) {
    return errors;
  }
  const std::vector<at::Tensor> expected =
      evaluateFusionWithATen(unscheduled.get(), values);
  std::stringstream failure;
  for (size_t o = 0; o < output_layouts.size(); ++o) {
    const int64_t name = scheduled.outputs()[o]->name();
    const at::Tensor want = expected.at(o).to(at::kDouble).contiguous();
    const kir_test::BufferLayout want_layout = kir_test::stridedLayoutOf(want);
    const double* want_data = want.data_ptr<double>();
    int64_t bad = 0;
    std::string first;
    for (const auto& [offset, coord] : output_layouts[o].inverse()) {
      const auto k = static_cast<size_t>(offset);
      const auto& got = interpreter.storage(name)[k];
      const double w = want_data[*want_layout.offsetOf(coord)];
      const bool ok = interpreter.writeCounts(name)[k] == 1 &&
                      got.has_value() && !got->poisoned &&
                      std::abs(got->number - w) <= 1e-5 * (1 + std::abs(w));
      if (!ok && bad++ == 0) {
        std::stringstream ss;
        ss << "T" << name << kir_test::str(coord) << " written "
           << interpreter.writeCounts(name)[k] << " times, "
           << (got.has_value() ? kir_test::str(*got) : "no value")
           << ", expected " << w;
        first = ss.str();
      }
    }
    if (bad > 0) {
      failure << "output " << o << ": " << bad << " elements differ; first "
              << first << "\n";
    }
  }
  return failure.str();
}

// Every kernel segment of `fusion` for `inputs` on the interpreter against
// ATen (the others are ATen already); the groups' count is returned.
size_t expectKernelSegmentsMatchATen(
    const Fusion& fusion, const std::vector<c10::IValue>& inputs) {
  SegmentedFusion segmented(&fusion);
  Fusion* complete = segmented.completeFusion();
  RuntimeInfo info = makeRuntimeInfo(complete, inputs, false);
  std::unique_ptr<InputSegmentScheduling> scheduling =
      segmentForInputs(segmented, inputs, info);
  for (SegmentedGroup* group : segmented.groups()) {
    SCOPED_TRACE(group->toString());
    EXPECT_EQ(interpretSegment(*group, *scheduling), "");
  }
  return segmented.groups().size();
}

// Thunder's backward of litgpt's apply_rope for q and k (sin and cos
// [128, 32], head size 32 split in halves), q, k and v permuted back to
// [B, T, H * D] and concatenated into the qkv gradient
// (tests/python/test_model_fusions.py's rope_backward, in C++).
std::unique_ptr<Fusion> ropeBackwardFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  auto bhtd = [&]() {
    TensorView* tv = makeContigConcreteTensor({2, 8, 128, 32});
    const auto& l = tv->getLogicalDomain();
    tv->setAllocationDomain({l[0], l[2], l[1], l[3]}, true);
    fusion->addInput(tv);
    return tv;
  };
  TensorView* sin = makeContigConcreteTensor({128, 32});
  fusion->addInput(sin);
  TensorView* dq = bhtd();
  TensorView* cos = makeContigConcreteTensor({128, 32});
  fusion->addInput(cos);
  TensorView* dk = bhtd();
  TensorView* dv = bhtd();
  Val* zero = IrBuilder::create<Val>(0.0);
  auto table = [&](TensorView* t) {
    t = reshape(broadcast(t, {true, false, false}), {1, 1, 128, 32});
    return expand(t, {idx(2), idx(8), idx(128), idx(32)});
  };
  // Thunder's pad widths: a pair for every axis, the last axis's first.
  auto lastAxisPad = [&](int64_t left, int64_t right) {
    std::vector<Val*> widths(8, idx(0));
    widths[0] = idx(left);
    widths[1] = idx(right);
    return widths;
  };
  auto half = [&](TensorView* t, int64_t lo, int64_t hi) {
    return slice(
        t, {{idx(0), idx(2)},
            {idx(0), idx(8)},
            {idx(0), idx(128)},
            {idx(lo), idx(hi)}});
  };
  TensorView* c = table(cos);
  TensorView* s = table(sin);
  TensorView* empty =
      pad(full({idx(2), idx(8), idx(128), idx(0)}, zero, DataType::Float),
          lastAxisPad(0, 32), zero);
  std::vector<TensorView*> grads;
  for (TensorView* g : {dq, dk}) {
    g = half(g, 0, 32);
    TensorView* by_sin = mul(s, g);
    TensorView* rotated =
        add(pad(neg(half(by_sin, 0, 16)), lastAxisPad(16, 0), zero),
            pad(half(by_sin, 16, 32), lastAxisPad(0, 16), zero));
    grads.push_back(add(empty, add(mul(c, g), rotated)));
  }
  std::vector<TensorView*> flat;
  for (TensorView* t : {grads[1], grads[0], dv}) {
    flat.push_back(reshape(permute(t, {0, 2, 1, 3}), {2, 128, 256}));
  }
  TensorView* qkv = cat(flat, -1);
  fusion->addOutput(qkv);
  fusion->addOutput(reshape(qkv, {256, 768}));
  return fusion;
}

std::vector<c10::IValue> ropeBackwardInputs() {
  auto bhtd = []() { return at::randn({2, 128, 8, 32}).transpose(1, 2); };
  return {at::randn({128, 32}), bhtd(), at::randn({128, 32}), bhtd(), bhtd()};
}

// The qkv gradient as litgpt's rope backward computes it, in ATen.
at::Tensor ropeBackwardReference(const std::vector<c10::IValue>& inputs) {
  const at::Tensor sin = inputs[0].toTensor();
  const at::Tensor cos = inputs[2].toTensor();
  auto one = [&](const at::Tensor& g) {
    const at::Tensor by_sin = sin * g;
    return cos * g + at::constant_pad_nd(-by_sin.slice(-1, 0, 16), {16, 0}) +
           at::constant_pad_nd(by_sin.slice(-1, 16, 32), {0, 16});
  };
  auto flat = [](const at::Tensor& t) {
    return t.permute({0, 2, 1, 3}).reshape({2, 128, 256});
  };
  return at::cat(
      {flat(one(inputs[3].toTensor())), flat(one(inputs[1].toTensor())),
       flat(inputs[4].toTensor())},
      -1);
}

} // namespace

// Thunder's Llama block got wrong q, k, v gradients from this fusion on
// the GPU (FUSER_ENABLE=validate_runs named it).
TEST_F(ModelSegmentsTest, RopeBackwardKernelsMatchATen) {
  std::unique_ptr<Fusion> fusion = ropeBackwardFusion();
  const size_t groups =
      expectKernelSegmentsMatchATen(*fusion, ropeBackwardInputs());
  EXPECT_GT(groups, 1u);
}

// The oracle of the test above and of validate_runs: ATen's evaluation of
// the whole fusion is the rope backward.
TEST_F(ModelSegmentsTest, RopeBackwardATenEvaluationIsTheRopeBackward) {
  std::unique_ptr<Fusion> fusion = ropeBackwardFusion();
  const std::vector<c10::IValue> inputs = ropeBackwardInputs();
  const std::vector<at::Tensor> outputs =
      evaluateFusionWithATen(fusion.get(), inputs);
  const at::Tensor expected = ropeBackwardReference(inputs);
  EXPECT_TRUE(at::allclose(outputs.at(0), expected));
  EXPECT_TRUE(at::allclose(outputs.at(1), expected.reshape({256, 768})));
}

namespace {

// The rotary embedding of q and k as torch.compile's graphs write it
// (Llama): the heads of a fused QKV input x [2, 8, 3 * 64] sliced,
// reshaped to [2, 8, 4, 16] and permuted to [2, 4, 8, 16], rotated from
// slices of that view (neg of the second half, cat with the first) and
// scaled by cos and sin [8, 16].
std::unique_ptr<Fusion> ropeOfAnInputsHeadsFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = makeContigConcreteTensor({2, 8, 192});
  TensorView* cos = makeContigConcreteTensor({8, 16});
  TensorView* sin = makeContigConcreteTensor({8, 16});
  for (TensorView* tv : {x, cos, sin}) {
    fusion->addInput(tv);
  }
  auto lastAxis = [](TensorView* t, int64_t lo, int64_t hi) {
    std::vector<SliceRange> ranges(
        t->getLogicalDomain().size() - 1, SliceRange{nullptr, nullptr});
    ranges.push_back({idx(lo), idx(hi)});
    return slice(t, ranges);
  };
  for (int64_t part = 0; part < 2; ++part) {
    TensorView* heads = permute(
        reshape(
            lastAxis(x, 64 * part, 64 * (part + 1)),
            std::vector<int64_t>{2, 8, 4, 16}),
        {0, 2, 1, 3});
    TensorView* rotated =
        cat({neg(lastAxis(heads, 8, 16)), lastAxis(heads, 0, 8)}, 3);
    fusion->addOutput(
        add(mul(heads, broadcast(cos, {true, true, false, false})),
            mul(rotated, broadcast(sin, {true, true, false, false}))));
  }
  return fusion;
}

} // namespace

// Before: the permute of each head tensor was a kernel that wrote it out
// (a view of what ATen computed, joined to a kernel), its halves were
// sliced by ATen from that copy and laid out densely, and the rotation
// took two more kernels: six kernels and five copies for q and k. Now the
// views stay ATen's (segmentation/segmenter.cpp) and reach the kernels
// through their strides (runtime/handed_views.h), and the cat of the
// halves reads them in place (transform/resize_to_inputs.h: a reshape of
// an input is read from memory): one kernel per head tensor, each read
// through the handed views as ATen reads them.
TEST_F(ModelSegmentsTest, RopeOfAnInputsHeadsIsOneKernelPerHeadTensor) {
  std::unique_ptr<Fusion> fusion = ropeOfAnInputsHeadsFusion();
  const std::vector<c10::IValue> inputs = {
      at::randn({2, 8, 192}), at::randn({8, 16}), at::randn({8, 16})};
  expectKernelSegmentsMatchATen(*fusion, inputs);

  SegmentedFusion segmented(fusion.get());
  RuntimeInfo info = makeRuntimeInfo(segmented.completeFusion(), inputs, false);
  std::unique_ptr<InputSegmentScheduling> scheduling =
      segmentForInputs(segmented, inputs, info);
  int64_t kernels = 0;
  for (SegmentedGroup* group : segmented.groups()) {
    if (scheduling->runByAten(*group)) {
      continue;
    }
    ++kernels;
    for (Val* in : group->inputs()) {
      if (segmented.isIntermediate(in)) {
        EXPECT_NE(scheduling->handedView(in), nullptr)
            << in->toString() << " is laid out densely for "
            << group->toString();
      }
    }
  }
  EXPECT_EQ(kernels, 2) << segmented.toString();
}

// A library op's result (here an embedding's rows) is read from memory
// like a product's: the slice and the cat of what is computed from it are
// rewritten over shifted reads of it, and the kernels read it in place.
TEST_F(ModelSegmentsTest, ResizesOfALibraryOpsResultReadItInPlace) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard guard(fusion.get());
    TensorView* indices = makeContigConcreteTensor({2, 8}, DataType::Int);
    TensorView* weight = makeContigConcreteTensor({32, 16});
    fusion->addInput(indices);
    fusion->addInput(weight);
    TensorView* rows =
        mul(embedding(indices, weight), IrBuilder::create<Val>(2.0));
    std::vector<SliceRange> first_half(2, SliceRange{nullptr, nullptr});
    first_half.push_back({idx(0), idx(8)});
    fusion->addOutput(rows);
    fusion->addOutput(neg(slice(rows, first_half)));
  }
  Fusion copy(*fusion);
  EXPECT_EQ(resizesToInputs(&copy), 1);
  const std::vector<c10::IValue> inputs = {
      at::randint(0, 32, {2, 8}, at::kLong), at::randn({32, 16})};
  expectKernelSegmentsMatchATen(*fusion, inputs);
}

// The q, k and v heads of a fused QKV product (ATen's), [2, 8, 4, 16]
// views with the product's row of 192 between tokens, read by one kernel
// each through those strides (runtime/handed_views.h).
TEST_F(ModelSegmentsTest, HeadsOfAProductAreReadThroughTheirStrides) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard guard(fusion.get());
    TensorView* x = makeContigConcreteTensor({2, 8, 64});
    TensorView* w = makeContigConcreteTensor({192, 64});
    fusion->addInput(x);
    fusion->addInput(w);
    TensorView* qkv = linear(x, w);
    for (int64_t part = 0; part < 3; ++part) {
      TensorView* heads = reshape(
          slice(
              qkv, {{nullptr, nullptr},
                    {nullptr, nullptr},
                    {idx(64 * part), idx(64 * (part + 1))}}),
          std::vector<int64_t>{2, 8, 4, 16});
      fusion->addOutput(mul(heads, IrBuilder::create<Val>(2.0)));
    }
  }
  const size_t groups = expectKernelSegmentsMatchATen(
      *fusion, {at::randn({2, 8, 64}), at::randn({192, 64})});
  EXPECT_EQ(groups, 4u);
}

namespace {

// A random head split of a float product [B, S, N] = linear(x, w): parts
// of H * D columns from `first` + part * H * D (an odd `first` or N
// misaligns them), each reshaped to [B, S, H, D], sometimes permuted to
// [B, H, S, D], and scaled in a kernel.
struct HeadSplitCase {
  int64_t b, s, k, h, d, parts, first, extra;
  bool permuted;

  explicit HeadSplitCase(std::mt19937_64& rng)
      : b(1 + pick(rng, 3)),
        s(std::vector<int64_t>{3, 4, 8}[pick(rng, 3)]),
        k(std::vector<int64_t>{8, 16}[pick(rng, 2)]),
        h(std::vector<int64_t>{1, 2, 4}[pick(rng, 3)]),
        d(std::vector<int64_t>{4, 6, 8, 16}[pick(rng, 4)]),
        parts(2 + pick(rng, 2)),
        first(pick(rng, 2)),
        extra(std::vector<int64_t>{0, 1, 3}[pick(rng, 3)]),
        permuted(pick(rng, 2) == 1) {}

  int64_t columns() const {
    return first + parts * h * d + extra;
  }

  std::unique_ptr<Fusion> fusion() const {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard guard(fusion.get());
    TensorView* x = makeContigConcreteTensor({b, s, k});
    TensorView* w = makeContigConcreteTensor({columns(), k});
    fusion->addInput(x);
    fusion->addInput(w);
    TensorView* product = linear(x, w);
    for (int64_t part = 0; part < parts; ++part) {
      const int64_t start = first + part * h * d;
      TensorView* heads = reshape(
          slice(
              product, {{nullptr, nullptr},
                        {nullptr, nullptr},
                        {idx(start), idx(start + h * d)}}),
          std::vector<int64_t>{b, s, h, d});
      if (permuted) {
        heads = permute(heads, {0, 2, 1, 3});
      }
      fusion->addOutput(
          add(mul(heads, IrBuilder::create<Val>(2.0)),
              IrBuilder::create<Val>(1.0)));
    }
    return fusion;
  }

  std::vector<c10::IValue> inputs() const {
    return {at::randn({b, s, k}), at::randn({columns(), k})};
  }
};

// Runs `check` on `count_variable` (else `fallback`) random cases from
// FUSER_PROPERTY_SEED, each traced with its seed and shape.
void forEachHeadSplitCase(
    const char* count_variable, int64_t fallback,
    const std::function<void(const HeadSplitCase&)>& check) {
  const int64_t n = envCount(count_variable, fallback);
  const uint64_t first = firstSeed();
  for (int64_t c = 0; c < n; ++c) {
    const uint64_t seed = first + static_cast<uint64_t>(c);
    std::mt19937_64 rng(seed);
    const HeadSplitCase split(rng);
    SCOPED_TRACE(
        "seed " + std::to_string(seed) + ": [" + std::to_string(split.b) +
        ", " + std::to_string(split.s) + ", " +
        std::to_string(split.columns()) + "] in " +
        std::to_string(split.parts) + " parts of " + std::to_string(split.h) +
        " x " + std::to_string(split.d) + " from " +
        std::to_string(split.first) + (split.permuted ? ", permuted" : ""));
    check(split);
  }
}

} // namespace

// Property: random head splits of a product, every kernel (reading ATen's
// views through their strides, whatever their offset and order) equal to
// ATen on the kernel-IR interpreter
// (FUSER_PROPERTY_HANDED_VIEW_CASES cases, default 12, from
// FUSER_PROPERTY_SEED).
TEST_F(ModelSegmentsTest, RandomHeadSplitsOfAProductMatchATen) {
  forEachHeadSplitCase(
      "FUSER_PROPERTY_HANDED_VIEW_CASES", 12, [](const HeadSplitCase& split) {
        std::unique_ptr<Fusion> fusion = split.fusion();
        // One ATen segment (the product and its views), a kernel per part.
        EXPECT_EQ(
            expectKernelSegmentsMatchATen(*fusion, split.inputs()),
            static_cast<size_t>(1 + split.parts));
      });
}

class ModelSegmentsGpuTest : public FuserTest {};

// The rotary embedding of an input's heads on the GPU: ATen's views reach
// the two kernels with no copy, and the outputs match ATen's.
TEST_F(ModelSegmentsGpuTest, RopeOfAnInputsHeadsRunsWithoutCopies) {
  FusionExecutorCache fec(ropeOfAnInputsHeadsFusion());
  const auto options = at::TensorOptions().device(at::kCUDA);
  const std::vector<c10::IValue> inputs = {
      at::randn({2, 8, 192}, options), at::randn({8, 16}, options),
      at::randn({8, 16}, options)};
  fec.runFusionWithInputs(inputs); // compiles
  const int64_t copies = exprEvalLayoutCopyCount();
  const std::vector<SchedulerType> types = runOnGpu(fec, inputs, __LINE__);
  EXPECT_EQ(
      std::count(types.begin(), types.end(), SchedulerType::PointWise), 2);
  EXPECT_EQ(exprEvalLayoutCopyCount(), copies);
}

// The random head splits on the GPU through the runtime: outputs equal
// ATen's, no layout copy (FUSER_PROPERTY_HANDED_VIEW_GPU_CASES, default
// 40).
TEST_F(ModelSegmentsGpuTest, RandomHeadSplitsOfAProductRunWithoutCopies) {
  forEachHeadSplitCase(
      "FUSER_PROPERTY_HANDED_VIEW_GPU_CASES", 40,
      [](const HeadSplitCase& split) {
        FusionExecutorCache fec(split.fusion());
        std::vector<c10::IValue> inputs;
        for (const c10::IValue& v : split.inputs()) {
          inputs.emplace_back(v.toTensor().cuda());
        }
        fec.runFusionWithInputs(inputs); // compiles
        const int64_t copies = exprEvalLayoutCopyCount();
        runOnGpu(fec, inputs, __LINE__);
        EXPECT_EQ(exprEvalLayoutCopyCount(), copies);
      });
}

} // namespace fuser
