// The normalization ops (csrc/ops/normalization.h) against ATen's own
// softmax, layer norm, RMS norm and batch norm and their backward functions
// (autograd for RMS norm), evaluated op by op with ATen on CPU tensors (the
// ExprEval path; the fusion is what a scheduler sees).
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/aten_types.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class NormalizationOpsTest : public FuserIrTest {
 protected:
  void SetUp() override {
    FuserIrTest::SetUp();
    at::manual_seed(0);
  }
};

namespace {

// A fusion with one contiguous input per tensor of `inputs`; `build` adds
// the outputs. Evaluates it with ATen and checks it against `expected`.
void checkAgainst(
    const std::vector<at::Tensor>& inputs,
    const std::function<void(Fusion*, const std::vector<TensorView*>&)>& build,
    const std::vector<at::Tensor>& expected, int line) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  std::vector<TensorView*> tvs;
  for (const at::Tensor& t : inputs) {
    tvs.push_back(makeContigTensor(t.dim(), fromAtenType(t.scalar_type())));
    fusion.addInput(tvs.back());
  }
  build(&fusion, tvs);
  std::vector<c10::IValue> values(inputs.begin(), inputs.end());
  std::vector<at::Tensor> outputs = evaluateFusionWithATen(&fusion, values);
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_EQ(outputs[i].scalar_type(), expected[i].scalar_type())
        << "output " << i;
    EXPECT_EQ(outputs[i].sizes(), expected[i].sizes()) << "output " << i;
  }
  testValidate(&fusion, outputs, values, expected, line, __FILE__);
}

Val* scalar(double value) {
  return IrBuilder::create<Val>(value, DataType::Double);
}

} // namespace

TEST_F(NormalizationOpsTest, SoftmaxAndLogSoftmax) {
  // Large values: the max is subtracted before exp.
  at::Tensor x = at::randn({33, 1000}) * 30;
  x[3] = 1e4;
  for (int64_t dim : {1, 0, -1}) {
    checkAgainst(
        {x},
        [dim](Fusion* f, const std::vector<TensorView*>& in) {
          f->addOutput(softmax(in[0], dim));
          f->addOutput(log_softmax(in[0], dim));
        },
        {at::softmax(x, dim), at::log_softmax(x, dim)}, __LINE__);
  }
  // bf16 in and out, computed in float.
  at::Tensor h = at::randn({8, 257}).to(at::kBFloat16);
  checkAgainst(
      {h},
      [](Fusion* f, const std::vector<TensorView*>& in) {
        f->addOutput(softmax(in[0], -1));
        f->addOutput(log_softmax(in[0], -1));
      },
      {at::softmax(h, -1), at::log_softmax(h, -1)}, __LINE__);
  // A row of -inf is NaN, as in PyTorch.
  at::Tensor inf = at::randn({4, 16});
  inf[1] = -std::numeric_limits<float>::infinity();
  checkAgainst(
      {inf},
      [](Fusion* f, const std::vector<TensorView*>& in) {
        f->addOutput(softmax(in[0], 1));
      },
      {at::softmax(inf, 1)}, __LINE__);
}

TEST_F(NormalizationOpsTest, SoftmaxBackward) {
  for (at::ScalarType type : {at::kFloat, at::kBFloat16}) {
    at::Tensor x = at::randn({24, 300}).to(type);
    at::Tensor dy = at::randn({24, 300}).to(type);
    at::Tensor y = at::softmax(x, 1);
    at::Tensor log_y = at::log_softmax(x, 1);
    checkAgainst(
        {dy, y, log_y},
        [](Fusion* f, const std::vector<TensorView*>& in) {
          f->addOutput(softmax_backward(in[0], in[1], 1));
          f->addOutput(log_softmax_backward(in[0], in[2], -1));
        },
        {at::_softmax_backward_data(dy, y, 1, type),
         at::_log_softmax_backward_data(dy, log_y, 1, type)},
        __LINE__);
  }
}

TEST_F(NormalizationOpsTest, LayerNormForwardAndBackward) {
  for (at::ScalarType type : {at::kFloat, at::kBFloat16}) {
    const std::vector<int64_t> shape = {8, 64};
    at::Tensor x = at::randn({16, 8, 64}).to(type);
    at::Tensor w = at::randn(shape).to(type);
    at::Tensor b = at::randn(shape).to(type);
    at::Tensor y = std::get<0>(at::native_layer_norm(x, shape, w, b, 1e-5));
    // The statistics stay in float (as on CUDA; the CPU kernel rounds
    // them to bf16).
    auto [unused, mean, rstd] = at::native_layer_norm(
        x.to(at::kFloat), shape, w.to(at::kFloat), b.to(at::kFloat), 1e-5);
    checkAgainst(
        {x, w, b},
        [&](Fusion* f, const std::vector<TensorView*>& in) {
          ForwardNormResult r =
              layer_norm(in[0], shape, in[1], in[2], scalar(1e-5));
          f->addOutput(r.output);
          f->addOutput(r.mean);
          f->addOutput(r.invstd);
        },
        {y, mean, rstd}, __LINE__);
    // Without weight and bias.
    checkAgainst(
        {x},
        [&](Fusion* f, const std::vector<TensorView*>& in) {
          f->addOutput(
              layer_norm(in[0], {64}, nullptr, nullptr, scalar(1e-6)).output);
        },
        {at::layer_norm(x, {64}, {}, {}, 1e-6)}, __LINE__);

    at::Tensor dy = at::randn_like(x);
    // The reference in float, rounded to the inputs' type.
    auto [dx_float, dw_float, db_float] = at::native_layer_norm_backward(
        dy.to(at::kFloat), x.to(at::kFloat), shape, mean, rstd,
        w.to(at::kFloat), b.to(at::kFloat), {true, true, true});
    at::Tensor dx = dx_float.to(type);
    at::Tensor dw = dw_float.to(type);
    at::Tensor db = db_float.to(type);
    // The statistics as the forward returns them ([16, 1, 1]) and as the
    // outer axes only ([16]).
    for (bool outer_only : {false, true}) {
      at::Tensor m = outer_only ? mean.view({16}) : mean;
      at::Tensor r = outer_only ? rstd.view({16}) : rstd;
      Fusion fusion;
      FusionGuard fg(&fusion);
      TensorView* tdy = makeContigTensor(3, fromAtenType(type));
      TensorView* tx = makeContigTensor(3, fromAtenType(type));
      TensorView* tm = outer_only ? makeContigTensor(1)
                                  : makeContigConcreteTensor({-1, 1, 1});
      TensorView* tr = outer_only ? makeContigTensor(1)
                                  : makeContigConcreteTensor({-1, 1, 1});
      TensorView* tw = makeContigTensor(2, fromAtenType(type));
      TensorView* tb = makeContigTensor(2, fromAtenType(type));
      for (TensorView* tv : {tdy, tx, tm, tr, tw, tb}) {
        fusion.addInput(tv);
      }
      BackwardNormResult g =
          layer_norm_backward(tdy, tx, shape, tm, tr, tw, tb);
      fusion.addOutput(g.grad_input);
      fusion.addOutput(g.grad_weight);
      fusion.addOutput(g.grad_bias);
      std::vector<c10::IValue> inputs = {dy, x, m, r, w, b};
      std::vector<at::Tensor> outputs = evaluateFusionWithATen(&fusion, inputs);
      testValidate(&fusion, outputs, inputs, {dx, dw, db}, __LINE__, __FILE__);
    }
  }
}

TEST_F(NormalizationOpsTest, RmsNormForwardAndBackward) {
  for (at::ScalarType type : {at::kFloat, at::kBFloat16}) {
    at::Tensor x = at::randn({64, 96}).to(type);
    at::Tensor w = at::randn({96}).to(type);
    checkAgainst(
        {x, w},
        [](Fusion* f, const std::vector<TensorView*>& in) {
          f->addOutput(rms_norm(in[0], {96}, in[1], scalar(1e-6)).output);
        },
        {at::rms_norm(x, {96}, w, 1e-6)}, __LINE__);

    // Gradients by autograd, in double.
    at::Tensor xd = x.to(at::kDouble).requires_grad_(true);
    at::Tensor wd = w.to(at::kDouble).requires_grad_(true);
    at::Tensor dy = at::randn({64, 96}).to(type);
    at::rms_norm(xd, {96}, wd, 1e-6).backward(dy.to(at::kDouble));
    at::Tensor invstd =
        at::rsqrt(x.to(at::kFloat).square().mean({1}, true) + 1e-6);
    checkAgainst(
        {dy, x, invstd, w},
        [](Fusion* f, const std::vector<TensorView*>& in) {
          BackwardNormResult g =
              rms_norm_backward(in[0], in[1], {96}, in[2], in[3]);
          f->addOutput(g.grad_input);
          f->addOutput(g.grad_weight);
        },
        {xd.grad().to(type), wd.grad().to(type)}, __LINE__);
  }
}

// Training (batch statistics, running statistics updated by momentum
// with the unbiased variance) and evaluation (running statistics), NCHW
// and NHWC (channels_last), against ATen's batch norm in float.
TEST_F(NormalizationOpsTest, BatchNormTrainingAndEvaluation) {
  for (at::ScalarType type : {at::kFloat, at::kBFloat16}) {
    for (bool channels_last : {false, true}) {
      SCOPED_TRACE(channels_last ? "NHWC" : "NCHW");
      const at::Tensor x = at::randn({8, 6, 5, 4}).to(type);
      const at::Tensor w = at::randn({6}).to(type);
      const at::Tensor b = at::randn({6}).to(type);
      const at::Tensor rm = at::randn({6});
      const at::Tensor rv = at::rand({6}) + 0.5;
      const at::Tensor input =
          channels_last ? x.permute({0, 2, 3, 1}).contiguous() : x;
      auto layout = [&](const at::Tensor& nchw) {
        return (channels_last ? nchw.permute({0, 2, 3, 1}).contiguous() : nchw)
            .to(type);
      };
      for (bool training : {true, false}) {
        SCOPED_TRACE(training ? "training" : "evaluation");
        at::Tensor new_rm = rm.clone();
        at::Tensor new_rv = rv.clone();
        auto [out, mean, invstd] = at::native_batch_norm(
            x.to(at::kFloat), w.to(at::kFloat), b.to(at::kFloat), new_rm,
            new_rv, training, 0.1, 1e-5);
        std::vector<at::Tensor> expected = {layout(out)};
        if (training) {
          expected.insert(expected.end(), {mean, invstd, new_rm, new_rv});
        } else {
          expected.insert(expected.end(), {rm, at::rsqrt(rv + 1e-5)});
        }
        checkAgainst(
            {input, w, b, rm, rv},
            [&](Fusion* f, const std::vector<TensorView*>& in) {
              BatchNormResult r = batch_norm(
                  in[0], in[1], in[2], in[3], in[4], training, scalar(0.1),
                  scalar(1e-5), channels_last);
              f->addOutput(r.output);
              f->addOutput(r.mean);
              f->addOutput(r.invstd);
              if (training) {
                f->addOutput(r.running_mean);
                f->addOutput(r.running_var);
              } else {
                EXPECT_EQ(r.running_mean, nullptr);
              }
            },
            expected, __LINE__);
      }
    }
  }
}

// The gradients of batch norm in training (by the forward's saved mean and
// invstd) and in evaluation (by the running statistics), NCHW and NHWC,
// against ATen's native_batch_norm_backward in float.
TEST_F(NormalizationOpsTest, BatchNormBackward) {
  for (at::ScalarType type : {at::kFloat, at::kBFloat16}) {
    for (bool channels_last : {false, true}) {
      SCOPED_TRACE(channels_last ? "NHWC" : "NCHW");
      const at::Tensor x = at::randn({8, 6, 5, 4}).to(type);
      const at::Tensor dy = at::randn({8, 6, 5, 4}).to(type);
      const at::Tensor w = at::randn({6}).to(type);
      const at::Tensor rm = at::randn({6});
      const at::Tensor rv = at::rand({6}) + 0.5;
      const at::Tensor xf = x.to(at::kFloat);
      const at::Tensor save_mean = xf.mean({0, 2, 3});
      const at::Tensor save_invstd =
          at::rsqrt(xf.var({0, 2, 3}, /*unbiased=*/false) + 1e-5);
      auto layout = [&](const at::Tensor& nchw) {
        return channels_last ? nchw.permute({0, 2, 3, 1}).contiguous() : nchw;
      };
      for (bool training : {true, false}) {
        SCOPED_TRACE(training ? "training" : "evaluation");
        auto [dx, dw, db] = at::native_batch_norm_backward(
            dy.to(at::kFloat), xf, w.to(at::kFloat), rm, rv, save_mean,
            save_invstd, training, 1e-5, {true, true, true});
        checkAgainst(
            {layout(dy), layout(x), w, rm, rv, save_mean, save_invstd},
            [&](Fusion* f, const std::vector<TensorView*>& in) {
              BackwardNormResult g = batch_norm_backward(
                  in[0], in[1], in[2], in[3], in[4], in[5], in[6], training,
                  scalar(1e-5), channels_last);
              f->addOutput(g.grad_input);
              f->addOutput(g.grad_weight);
              f->addOutput(g.grad_bias);
            },
            {layout(dx).to(type), dw.to(type), db.to(type)}, __LINE__);
      }
    }
  }
}

TEST_F(NormalizationOpsTest, MisuseIsAUserError) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* w3 = makeContigTensor(3);
  TensorView* ints = makeContigTensor(2, DataType::Int);
  fusion.addInput(x);
  EXPECT_THAT(
      [&] {
        layer_norm(x, {4, 4, 4}, nullptr, nullptr, scalar(1e-5));
      },
      ThrowsMessage<UserError>(HasSubstr("normalized_shape names 3 trailing")));
  EXPECT_THAT(
      [&] { layer_norm(x, {4}, w3, nullptr, scalar(1e-5)); },
      ThrowsMessage<UserError>(
          HasSubstr("must have the rank of the normalized axes (1)")));
  EXPECT_THAT(
      [&] { rms_norm(x, {4}, nullptr, nullptr); },
      ThrowsMessage<UserError>(HasSubstr("eps must be a scalar")));
  EXPECT_THAT(
      [&] { softmax(ints, 1); },
      ThrowsMessage<UserError>(HasSubstr("needs a floating-point tensor")));
  EXPECT_THAT(
      [&] { softmax_backward(x, w3, 1); },
      ThrowsMessage<UserError>(HasSubstr("must have the same rank")));
  TensorView* c = makeContigTensor(1);
  fusion.addInput(c);
  EXPECT_THAT(
      [&] {
        batch_norm(
            c, nullptr, nullptr, nullptr, nullptr, true, nullptr, scalar(1e-5));
      },
      ThrowsMessage<UserError>(HasSubstr("needs a batch and a channel axis")));
  EXPECT_THAT(
      [&] {
        batch_norm(
            x, nullptr, nullptr, nullptr, nullptr, false, nullptr,
            scalar(1e-5));
      },
      ThrowsMessage<UserError>(
          HasSubstr("evaluation (training=false) normalizes by running_mean")));
  EXPECT_THAT(
      [&] {
        batch_norm(
            x, nullptr, nullptr, c, nullptr, true, scalar(0.1), scalar(1e-5));
      },
      ThrowsMessage<UserError>(
          HasSubstr("give both running_mean and running_var, or neither")));
  EXPECT_THAT(
      [&] {
        batch_norm(
            x, w3, nullptr, nullptr, nullptr, true, nullptr, scalar(1e-5));
      },
      ThrowsMessage<UserError>(
          HasSubstr("must have one axis, the channels; got rank 3")));
  EXPECT_THAT(
      [&] {
        batch_norm(x, nullptr, nullptr, c, c, true, nullptr, scalar(1e-5));
      },
      ThrowsMessage<UserError>(HasSubstr("needs momentum, a scalar")));
  EXPECT_THAT(
      [&] {
        batch_norm_backward(
            x, x, nullptr, nullptr, nullptr, nullptr, nullptr, true, nullptr);
      },
      ThrowsMessage<UserError>(
          HasSubstr("training needs save_mean and save_invstd")));
  EXPECT_THAT(
      [&] {
        batch_norm_backward(
            x, x, nullptr, c, c, nullptr, nullptr, false, nullptr);
      },
      ThrowsMessage<UserError>(HasSubstr("eps must be a scalar")));
}

} // namespace fuser
