// Every scheduler's kernels against inputs that lie inside larger buffers
// filled with NaN (doc/design.md §8): an out-of-bounds read that happens to
// land in valid memory reads NaN, which reaches the output and fails the
// comparison with ATen. Each case runs with the data 64 elements into its
// buffer (aligned: the vectorized paths) and 1 element in (misaligned: the
// scalar ones), through FusionExecutorCache.
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace fuser {

class NanPaddingGpuTest : public FuserTest {};

namespace {

// `t`'s values in a buffer of NaN, `pad` elements in from both ends, laid
// out with t's strides.
at::Tensor nanPadded(const at::Tensor& t, int64_t pad) {
  int64_t span = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    span += (t.size(d) - 1) * t.stride(d);
  }
  at::Tensor buffer = at::full(
      {span + 2 * pad}, std::numeric_limits<double>::quiet_NaN(), t.options());
  at::Tensor view = buffer.as_strided(t.sizes(), t.strides(), pad);
  view.copy_(t);
  return view;
}

struct PaddingCase {
  std::string name;
  std::function<void(Fusion*)> define; // adds inputs and outputs
  std::vector<std::vector<int64_t>> shapes;
  at::ScalarType dtype = at::kFloat;
  // Uniform [0, 1) inputs instead of normal ones, for a result that would
  // otherwise cancel to near zero, below the rounding of its terms.
  bool uniform = false;
};

TensorView* input(Fusion* fusion, int64_t rank, DataType dtype) {
  TensorView* tv = makeContigTensor(rank, dtype);
  fusion->addInput(tv);
  return tv;
}

std::vector<PaddingCase> cases() {
  std::vector<PaddingCase> list;
  list.push_back(
      {"pointwise",
       [](Fusion* f) {
         TensorView* a = input(f, 2, DataType::Float);
         TensorView* b = input(f, 2, DataType::Float);
         f->addOutput(relu(add(a, b)));
       },
       {{1000, 1027}, {1000, 1027}}});
  list.push_back(
      {"bias add",
       [](Fusion* f) {
         TensorView* x = input(f, 2, DataType::Float);
         TensorView* b = input(f, 1, DataType::Float);
         f->addOutput(add(x, broadcast(b, {true, false})));
       },
       {{777, 1024}, {1024}}});
  list.push_back(
      {"inner reduction",
       [](Fusion* f) { f->addOutput(sum(input(f, 2, DataType::Float), {1})); },
       {{300, 5003}}});
  list.push_back(
      {"outer reduction",
       [](Fusion* f) { f->addOutput(sum(input(f, 2, DataType::Float), {0})); },
       {{5003, 300}}});
  list.push_back(
      {"grid reduction",
       [](Fusion* f) { f->addOutput(max(input(f, 2, DataType::Float), {1})); },
       {{4, 200003}}});
  list.push_back(
      {"var_mean",
       [](Fusion* f) {
         auto vm = varianceMean(input(f, 2, DataType::Float), {1}, 1, false);
         f->addOutput(vm.var);
         f->addOutput(vm.mean);
       },
       {{128, 4097}}});
  list.push_back(
      {"softmax",
       [](Fusion* f) {
         f->addOutput(softmax(input(f, 2, DataType::Float), 1));
       },
       {{257, 4097}}});
  list.push_back(
      {"layer norm bf16",
       [](Fusion* f) {
         TensorView* x = input(f, 2, DataType::BFloat16);
         TensorView* w = input(f, 1, DataType::BFloat16);
         TensorView* b = input(f, 1, DataType::BFloat16);
         auto ln = layer_norm(x, {1}, w, b, IrBuilder::create<Val>(1e-5));
         f->addOutput(ln.output);
         f->addOutput(ln.invstd);
       },
       {{300, 1030}, {1030}, {1030}},
       at::kBFloat16});
  list.push_back(
      {"matmul bf16",
       [](Fusion* f) {
         TensorView* a = input(f, 2, DataType::BFloat16);
         TensorView* b = input(f, 2, DataType::BFloat16);
         f->addOutput(matmul(a, b));
       },
       {{511, 256}, {256, 768}},
       at::kBFloat16});
  list.push_back(
      {"segmented: reductions along two axes",
       [](Fusion* f) {
         TensorView* x = input(f, 2, DataType::Float);
         TensorView* rows = broadcast(sum(x, {1}), {false, true});
         f->addOutput(sum(mul(x, rows), {0}));
       },
       {{1000, 1500}},
       at::kFloat,
       /*uniform=*/true});
  return list;
}

} // namespace

TEST_F(NanPaddingGpuTest, EverySchedulerReadsOnlyItsInputs) {
  for (const PaddingCase& c : cases()) {
    for (int64_t pad : {64, 1}) {
      SCOPED_TRACE(c.name + ", padding " + std::to_string(pad));
      auto fusion = std::make_unique<Fusion>();
      {
        FusionGuard fg(fusion.get());
        c.define(fusion.get());
      }
      std::vector<c10::IValue> inputs;
      for (const auto& shape : c.shapes) {
        const auto options =
            at::TensorOptions().device(at::kCUDA).dtype(c.dtype);
        inputs.emplace_back(nanPadded(
            c.uniform ? at::rand(shape, options) : at::randn(shape, options),
            pad));
      }
      FusionExecutorCache fec(std::move(fusion));
      for (int run = 0; run < 2; ++run) {
        testValidate(
            fec.fusion(), fec.runFusionWithInputs(inputs), inputs, __LINE__,
            __FILE__);
      }
    }
  }
}

} // namespace fuser
