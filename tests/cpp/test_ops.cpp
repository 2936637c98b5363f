// The op builders of csrc/ops: the domains of each op's output, the exprs
// they create, type promotion, and the errors for misuse. No GPU needed.

#include <fusion.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/off_device_compile.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fuser {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class OpsTest : public FuserIrTest {};

namespace {

// "cast half->float", "add float,float->float", "Set", ...
std::string describe(const Expr* expr) {
  if (auto* uop = dynamic_cast<const UnaryOp*>(expr)) {
    if (uop->opType() == UnaryOpType::Cast) {
      return "cast " + toString(uop->in()->dtype()) + "->" +
             toString(uop->out()->dtype());
    }
    return toString(uop->opType()) + " " + toString(uop->in()->dtype()) + "->" +
           toString(uop->out()->dtype());
  }
  if (auto* bop = dynamic_cast<const BinaryOp*>(expr)) {
    return toString(bop->opType()) + " " + toString(bop->lhs()->dtype()) + "," +
           toString(bop->rhs()->dtype()) + "->" + toString(bop->out()->dtype());
  }
  if (auto* rop = dynamic_cast<const ReductionOp*>(expr)) {
    return "reduction " + toString(rop->opType()) + " " +
           toString(rop->in()->dtype()) + "->" + toString(rop->out()->dtype());
  }
  if (auto* ldst = dynamic_cast<const LoadStoreOp*>(expr)) {
    return toString(ldst->opType());
  }
  return expr->getOpString();
}

// The math of `fusion` in topological order, described.
std::vector<std::string> describeMath(const Fusion* fusion) {
  std::vector<std::string> result;
  for (Expr* expr : fusion->exprs()) {
    result.push_back(describe(expr));
  }
  return result;
}

} // namespace

// ---------------------------------------------------------------- set

TEST_F(OpsTest, SetOutputDomains) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeConcreteTensor({4, 1, -1}, DataType::BFloat16);
  in->split(0, 2); // scheduling the input does not shape the output
  TensorView* out = set(in);

  EXPECT_EQ(out->dtype(), DataType::BFloat16);
  ASSERT_EQ(out->getLogicalDomain().size(), 3u);
  EXPECT_FALSE(out->hasRoot());
  EXPECT_FALSE(out->hasAllocation());
  EXPECT_EQ(out->getLoopDomain(), out->getLogicalDomain());
  for (size_t i = 0; i < 3; ++i) {
    IterDomain* in_id = in->getLogicalDomain()[i];
    IterDomain* out_id = out->getLogicalDomain()[i];
    EXPECT_NE(in_id, out_id);
    EXPECT_EQ(out_id->definition(), nullptr);
    EXPECT_EQ(out_id->extent(), in_id->extent());
    EXPECT_EQ(out_id->getIterType(), in_id->getIterType());
  }
  EXPECT_TRUE(out->axis(1)->isBroadcast());
  // Outputs of ops are contiguous.
  EXPECT_EQ(out->getContiguity(), (Contiguity{true, std::nullopt, true}));

  ASSERT_TRUE(out->definition()->isA<LoadStoreOp>());
  auto* ldst = out->definition()->as<LoadStoreOp>();
  EXPECT_EQ(ldst->opType(), LoadStoreOpType::Set);
  EXPECT_EQ(ldst->cacheOp(), CacheOp::Unspecified);
  EXPECT_EQ(ldst->in(), in);
  EXPECT_EQ(ldst->out(), out);
}

// ---------------------------------------------------------------- unary

TEST_F(OpsTest, UnaryOps) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* f = makeContigConcreteTensor({4, 1});
  TensorView* i = makeContigConcreteTensor({4, 1}, DataType::Int32);

  TensorView* t0 = neg(f);
  ASSERT_TRUE(t0->definition()->isA<UnaryOp>());
  EXPECT_EQ(t0->definition()->as<UnaryOp>()->opType(), UnaryOpType::Neg);
  EXPECT_EQ(t0->definition()->as<UnaryOp>()->in(), f);
  EXPECT_EQ(t0->dtype(), DataType::Float);
  EXPECT_TRUE(t0->axis(0)->isIteration());
  EXPECT_TRUE(t0->axis(1)->isBroadcast());
  EXPECT_EQ(t0->axis(0)->extent()->value(), 4);

  TensorView* t1 = relu(i);
  EXPECT_EQ(t1->dtype(), DataType::Int32);
  EXPECT_EQ(t1->definition()->as<UnaryOp>()->in(), i);
  TensorView* t2 = abs(i);
  EXPECT_EQ(t2->dtype(), DataType::Int32);
  TensorView* t3 = logical_not(f);
  EXPECT_EQ(t3->dtype(), DataType::Bool);
  EXPECT_EQ(t3->definition()->as<UnaryOp>()->in(), f);

  // Unary ops on scalars give scalars.
  Val* s = IrBuilder::create<Val>(DataType::Double);
  Val* s_exp = exp(s);
  EXPECT_TRUE(s_exp->isScalar());
  EXPECT_EQ(s_exp->dtype(), DataType::Double);
  EXPECT_EQ(s_exp->definition()->as<UnaryOp>()->opType(), UnaryOpType::Exp);

  EXPECT_THAT(
      [&]() { neg(makeContigConcreteTensor({2}, DataType::Bool)); },
      ThrowsMessage<UserError>(HasSubstr("use logical_not instead")));
}

// ---------------------------------------------------------------- binary

TEST_F(OpsTest, BinaryOpBroadcastAxes) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeConcreteTensor({4, 1, 1});
  TensorView* tv1 = makeConcreteTensor({1, 5, 1});
  TensorView* tv2 = add(tv0, tv1);

  ASSERT_EQ(tv2->getLogicalDomain().size(), 3u);
  // broadcast + iteration -> iteration, with the iteration's extent.
  EXPECT_TRUE(tv2->axis(0)->isIteration());
  EXPECT_EQ(tv2->axis(0)->extent(), tv0->axis(0)->extent());
  EXPECT_TRUE(tv2->axis(1)->isIteration());
  EXPECT_EQ(tv2->axis(1)->extent(), tv1->axis(1)->extent());
  // broadcast + broadcast -> broadcast.
  EXPECT_TRUE(tv2->axis(2)->isBroadcast());
  EXPECT_EQ(tv2->axis(2)->extent()->value(), 1);
  EXPECT_EQ(tv2->getContiguity(), (Contiguity{true, true, std::nullopt}));
  EXPECT_EQ(tv2->dtype(), DataType::Float);

  auto* bop = tv2->definition()->as<BinaryOp>();
  EXPECT_EQ(bop->opType(), BinaryOpType::Add);
  EXPECT_EQ(bop->lhs(), tv0);
  EXPECT_EQ(bop->rhs(), tv1);

  // A known extent is preferred over a symbolic one.
  TensorView* sym = makeSymbolicTensor(2);
  TensorView* known = makeContigConcreteTensor({1, 7});
  TensorView* tv3 = mul(sym, known);
  EXPECT_EQ(tv3->axis(0)->extent(), sym->axis(0)->extent());
  EXPECT_EQ(tv3->axis(1)->extent()->value(), 7);
}

TEST_F(OpsTest, BinaryOpWithScalars) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({3});
  Val* two = IrBuilder::create<Val>(2.0);

  TensorView* t0 = mul(tv, two);
  EXPECT_EQ(t0->dtype(), DataType::Float);
  EXPECT_EQ(t0->definition()->as<BinaryOp>()->rhs(), two);
  TensorView* t1 = sub(two, tv);
  EXPECT_EQ(t1->definition()->as<BinaryOp>()->lhs(), two);
  EXPECT_EQ(t1->axis(0)->extent()->value(), 3);

  Val* a = IrBuilder::create<Val>(DataType::Int);
  Val* s = add(a, two);
  EXPECT_TRUE(s->isScalar());
  EXPECT_FALSE(s->isA<TensorView>());
  EXPECT_EQ(s->dtype(), DataType::Double);
  EXPECT_EQ(s->definition()->as<BinaryOp>()->opType(), BinaryOpType::Add);
}

TEST_F(OpsTest, BinaryOpMisuse) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({4, 5});
  TensorView* tv1 = makeContigConcreteTensor({5});
  TensorView* tv2 = makeContigConcreteTensor({4, 6});

  EXPECT_THAT(
      [&]() { mul(tv0, tv2); }, ThrowsMessage<UserError>(AllOf(
                                    HasSubstr("extents of axis 1 do not match"),
                                    HasSubstr("iS1{5} vs iS4{6}"))));
  EXPECT_THAT(
      [&]() { add(tv0, static_cast<Val*>(nullptr)); },
      ThrowsMessage<UserError>(HasSubstr("an operand is null")));
}

// Tensors of fewer axes get leading broadcast axes, as torch broadcasts;
// a 0-dim tensor promotes like a number of its type would (below tensors
// with axes, above Python numbers), as in PyTorch.
TEST_F(OpsTest, ElementwiseOpsBroadcastLowerRanksAsTorch) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* matrix = makeContigConcreteTensor({4, 5}, DataType::Half);
  TensorView* row = makeContigConcreteTensor({5}, DataType::Half);
  TensorView* zero_dim = makeContigConcreteTensor({}, DataType::Float);
  TensorView* ints = makeContigConcreteTensor({4, 5}, DataType::Int32);

  TensorView* sum = add(matrix, row);
  ASSERT_EQ(sum->nDims(), 2);
  EXPECT_EQ(sum->axis(1)->extent()->constIntValue(), 5);
  EXPECT_FALSE(sum->axis(0)->isBroadcast());
  EXPECT_EQ(sum->dtype(), DataType::Half);

  // half (axes) with a float 0-dim tensor stays half; int32 (axes) with a
  // float 0-dim tensor is float; a 0-dim tensor with a Python float keeps
  // its own type.
  EXPECT_EQ(mul(matrix, zero_dim)->dtype(), DataType::Half);
  EXPECT_EQ(mul(ints, zero_dim)->dtype(), DataType::Float);
  EXPECT_EQ(
      mul(zero_dim, IrBuilder::create<Val>(2.0, DataType::Double))->dtype(),
      DataType::Float);
  TensorView* picked = where(gt(row, zero_dim), matrix, zero_dim);
  EXPECT_EQ(picked->nDims(), 2);
  EXPECT_EQ(picked->dtype(), DataType::Half);
}

// truncDiv: integers divide as C's `/` (toward zero, nvFuser's div of
// integers), floats give trunc(a / b).
// An axis of size 1 that is not a broadcast axis (a reshape's) broadcasts
// against a longer one, as in torch (it once silently kept size 1).
TEST_F(OpsTest, SizeOneAxesOfAReshapeBroadcast) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(3);
  fusion->addInput(x);
  fusion->addInput(y);
  TensorView* viewed = reshape(x, std::vector<int64_t>{4, 1, 6});
  TensorView* sum = add(viewed, y);
  EXPECT_FALSE(sum->axis(1)->extent()->isConstInt());
  fusion->addOutput(sum);
  const at::Tensor tx = at::randn({4, 6});
  const at::Tensor ty = at::randn({4, 5, 6});
  const auto out = evaluateFusionWithATen(fusion.get(), {tx, ty});
  EXPECT_TRUE(at::allclose(out[0], tx.reshape({4, 1, 6}) + ty));
}

TEST_F(OpsTest, TruncDivRoundsTowardZero) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(1, DataType::Int32);
  TensorView* b = makeContigTensor(1, DataType::Int32);
  TensorView* x = makeContigTensor(1);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addInput(x);
  Val* q = truncDiv(a, b);
  EXPECT_EQ(q->dtype(), DataType::Int32);
  fusion->addOutput(q->as<TensorView>());
  fusion->addOutput(truncDiv(x, IrBuilder::create<Val>(2.0))->as<TensorView>());
  const at::Tensor ta = at::tensor({7, -7, 6, -1}, at::kInt);
  const at::Tensor tb = at::tensor({2, 2, -4, 3}, at::kInt);
  const at::Tensor tx = at::tensor({3.0f, -3.0f, 5.5f, -0.5f});
  const auto out = evaluateFusionWithATen(fusion.get(), {ta, tb, tx});
  EXPECT_TRUE(at::equal(out[0], at::tensor({3, -3, -1, 0}, at::kInt)));
  EXPECT_TRUE(at::equal(out[1], at::tensor({1.0f, -1.0f, 2.0f, -0.0f})));
  // truncDiv(a, b) and truncDiv(x, 2) share no axis: a kernel each.
  std::string code;
  for (const auto& segment : compileOffDevice(fusion.get(), {ta, tb, tx})) {
    EXPECT_EQ(segment.scheduler, SchedulerType::PointWise);
    EXPECT_EQ(segment.error, "");
    code += segment.code;
  }
  EXPECT_THAT(code, HasSubstr(" / "));
}

TEST_F(OpsTest, Where) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigConcreteTensor({4, 1});
  TensorView* y = makeContigConcreteTensor({1, 6});
  TensorView* cond = gt(x, IrBuilder::create<Val>(0.0));
  EXPECT_EQ(cond->dtype(), DataType::Bool);

  TensorView* out = where(cond, x, y);
  EXPECT_EQ(out->dtype(), DataType::Float);
  EXPECT_TRUE(out->axis(0)->isIteration());
  EXPECT_TRUE(out->axis(1)->isIteration());
  EXPECT_EQ(out->axis(1)->extent()->value(), 6);
  ASSERT_TRUE(out->definition()->isA<TernaryOp>());
  auto* top = out->definition()->as<TernaryOp>();
  EXPECT_EQ(top->opType(), TernaryOpType::Where);
  EXPECT_EQ(top->input(0), cond);
  EXPECT_EQ(top->input(1), x);
  EXPECT_EQ(top->input(2), y);

  // Scalar branches: the tensor condition makes the result a tensor; a
  // Python float makes it the default float type, as torch.where does.
  TensorView* s =
      where(cond, IrBuilder::create<Val>(1.0), IrBuilder::create<Val>(0.0));
  EXPECT_EQ(s->dtype(), DataType::Float);
  EXPECT_EQ(s->axis(0)->extent()->value(), 4);
  EXPECT_TRUE(s->axis(1)->isBroadcast());
  TensorView* si =
      where(cond, IrBuilder::create<Val>(1), IrBuilder::create<Val>(0));
  EXPECT_EQ(si->dtype(), DataType::Int);

  // A half tensor branch is computed in float and cast back.
  TensorView* h = makeContigConcreteTensor({4, 1}, DataType::Half);
  TensorView* wh = where(cond, h, IrBuilder::create<Val>(2.0));
  EXPECT_EQ(wh->dtype(), DataType::Half);
  fusion->addOutput(wh);
  EXPECT_THAT(
      describeMath(fusion.get()),
      ElementsAre(
          "gt float,double->bool", "cast half->float", "TernaryOp",
          "cast float->half"));

  EXPECT_THAT(
      [&]() { where(x, x, y); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("where: the condition must be bool"),
          HasSubstr("of type float"))));
}

// ---------------------------------------------------------------- cast

TEST_F(OpsTest, Cast) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({4});
  fusion->addInput(tv);

  TensorView* h = castOp(DataType::Half, tv);
  EXPECT_EQ(h->dtype(), DataType::Half);
  ASSERT_TRUE(h->definition()->isA<UnaryOp>());
  EXPECT_EQ(h->definition()->as<UnaryOp>()->opType(), UnaryOpType::Cast);
  EXPECT_EQ(h->definition()->as<UnaryOp>()->in(), tv);
  EXPECT_EQ(h->axis(0)->extent(), tv->axis(0)->extent());
  EXPECT_EQ(
      h->definition()->toString(),
      "T1_l_half[iS1{4}]\n   = cast(T0_g_float[iS0{4}], dtype=half)\n");

  // Casting to the same type is a copy.
  TensorView* same = cast(tv, DataType::Float);
  EXPECT_NE(same, tv);
  EXPECT_TRUE(same->definition()->isA<LoadStoreOp>());

  // Scalars are cast by an expr too, unless the type already matches.
  Val* s = IrBuilder::create<Val>(DataType::Double);
  EXPECT_EQ(castOp(DataType::Double, s), s);
  Val* si = castOp(DataType::Int, s);
  EXPECT_EQ(si->dtype(), DataType::Int);
  EXPECT_TRUE(si->isScalar());

  EXPECT_THAT(
      [&]() { castOp(DataType::Index, tv); },
      ThrowsMessage<UserError>(
          HasSubstr("cannot cast tensor T0_g_float[iS0{4}] to index")));
}

// ---------------------------------------------------------------- broadcast

TEST_F(OpsTest, Broadcast) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({4, 5});
  TensorView* out = broadcast(tv, {true, false, true, false});

  ASSERT_EQ(out->getLogicalDomain().size(), 4u);
  EXPECT_TRUE(out->axis(0)->isBroadcast());
  EXPECT_TRUE(out->axis(2)->isBroadcast());
  EXPECT_EQ(out->axis(0)->extent()->value(), 1);
  EXPECT_NE(out->axis(0), out->axis(2));
  EXPECT_TRUE(out->axis(1)->isIteration());
  EXPECT_EQ(out->axis(1)->extent(), tv->axis(0)->extent());
  EXPECT_NE(out->axis(1), tv->axis(0));
  EXPECT_EQ(out->axis(3)->extent(), tv->axis(1)->extent());
  EXPECT_EQ(
      out->getContiguity(),
      (Contiguity{std::nullopt, true, std::nullopt, true}));
  EXPECT_EQ(out->dtype(), DataType::Float);

  ASSERT_TRUE(out->definition()->isA<BroadcastOp>());
  auto* bop = out->definition()->as<BroadcastOp>();
  EXPECT_EQ(bop->in(), tv);
  EXPECT_EQ(
      bop->getBroadcastDimFlags(),
      (std::vector<bool>{true, false, true, false}));
  EXPECT_THAT(
      bop->toString(), HasSubstr("broadcast(T0_l_float[iS0{4}, iS1{5}], "
                                 "flags={true, false, true, false})"));

  // A broadcast axis combines with an iteration axis in a binary op.
  TensorView* other = makeContigConcreteTensor({3, 4, 2, 5});
  TensorView* sum_out = add(out, other);
  EXPECT_TRUE(sum_out->axis(0)->isIteration());
  EXPECT_EQ(sum_out->axis(0)->extent()->value(), 3);
  EXPECT_EQ(sum_out->axis(2)->extent()->value(), 2);

  EXPECT_THAT(
      [&]() {
        broadcast(tv, {true, false});
      },
      ThrowsMessage<UserError>(
          HasSubstr("2 axes need as many false flags, got 1 in 2 flags")));
}

// ---------------------------------------------------------------- reductions

TEST_F(OpsTest, SumOutputDomains) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({4, 5, 6});
  TensorView* out = sum(tv, {1});

  // The reduced axis stays in the logical domain as a Reduction ID.
  ASSERT_EQ(out->getLogicalDomain().size(), 3u);
  EXPECT_TRUE(out->axis(0)->isIteration());
  EXPECT_TRUE(out->axis(1)->isReduction());
  EXPECT_TRUE(out->axis(2)->isIteration());
  EXPECT_EQ(out->axis(1)->extent()->value(), 5);
  EXPECT_TRUE(out->hasReduction());
  EXPECT_EQ(out->dtype(), DataType::Float);
  EXPECT_EQ(out->toString(), "T1_l_float[iS3{4}, rS4{5}, iS5{6}]");

  ASSERT_TRUE(out->definition()->isA<ReductionOp>());
  auto* rop = out->definition()->as<ReductionOp>();
  EXPECT_EQ(rop->opType(), ReductionOpType::Sum);
  EXPECT_EQ(rop->in(), tv);
  EXPECT_TRUE(rop->init()->isConst());
  EXPECT_EQ(rop->init()->value(), 0.0);
  EXPECT_EQ(rop->init()->dtype(), DataType::Float);

  // Negative axes, several axes.
  TensorView* out2 = sum(tv, {-1, 0});
  EXPECT_TRUE(out2->axis(0)->isReduction());
  EXPECT_TRUE(out2->axis(1)->isIteration());
  EXPECT_TRUE(out2->axis(2)->isReduction());

  // A reduction of a reduction sees only the remaining axes.
  TensorView* out3 = sum(out, {1});
  ASSERT_EQ(out3->getLogicalDomain().size(), 2u);
  EXPECT_TRUE(out3->axis(0)->isIteration());
  EXPECT_TRUE(out3->axis(1)->isReduction());
  EXPECT_EQ(out3->axis(1)->extent()->value(), 6);

  // Adding a tensor to a reduction output ignores the reduction axes.
  TensorView* out4 = add(out, makeContigConcreteTensor({4, 6}));
  ASSERT_EQ(out4->getLogicalDomain().size(), 2u);
  EXPECT_EQ(out4->axis(1)->extent()->value(), 6);
}

TEST_F(OpsTest, ReductionKeepDim) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({4, 5, 6});
  TensorView* out = sum(tv, {0, 2}, /*keep_dim=*/true);

  ASSERT_EQ(out->getLogicalDomain().size(), 3u);
  EXPECT_TRUE(out->axis(0)->isBroadcast());
  EXPECT_TRUE(out->axis(1)->isIteration());
  EXPECT_TRUE(out->axis(2)->isBroadcast());
  EXPECT_FALSE(out->hasReduction());
  ASSERT_TRUE(out->definition()->isA<BroadcastOp>());
  EXPECT_EQ(
      out->definition()->as<BroadcastOp>()->getBroadcastDimFlags(),
      (std::vector<bool>{true, false, true}));
  auto* reduced = out->definition()->as<BroadcastOp>()->in()->as<TensorView>();
  EXPECT_TRUE(reduced->axis(0)->isReduction());
  EXPECT_TRUE(reduced->axis(2)->isReduction());
  EXPECT_TRUE(reduced->definition()->isA<ReductionOp>());
}

TEST_F(OpsTest, MaxMinMean) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({4, 5});

  TensorView* mx = max(tv, {1});
  auto* mx_op = mx->definition()->as<ReductionOp>();
  EXPECT_EQ(mx_op->opType(), ReductionOpType::Max);
  EXPECT_TRUE(std::isinf(mx_op->init()->value().asDouble()));
  EXPECT_LT(mx_op->init()->value().asDouble(), 0.0);
  EXPECT_TRUE(mx->axis(1)->isReduction());

  TensorView* mn = min(tv, {0}, true);
  EXPECT_TRUE(mn->axis(0)->isBroadcast());
  auto* mn_op = mn->definition()
                    ->as<BroadcastOp>()
                    ->in()
                    ->definition()
                    ->as<ReductionOp>();
  EXPECT_EQ(mn_op->opType(), ReductionOpType::Min);
  EXPECT_GT(mn_op->init()->value().asDouble(), 0.0);

  TensorView* mi = max(makeContigConcreteTensor({3}, DataType::Int32), {0});
  EXPECT_EQ(mi->dtype(), DataType::Int32);
  EXPECT_EQ(
      mi->definition()->as<ReductionOp>()->init()->value(),
      std::numeric_limits<int32_t>::min());

  // mean = sum / number of reduced elements.
  TensorView* avg = mean(tv, {1});
  fusion->addOutput(avg);
  EXPECT_EQ(avg->dtype(), DataType::Float);
  ASSERT_EQ(avg->getLogicalDomain().size(), 1u);
  EXPECT_TRUE(avg->axis(0)->isIteration());
  auto* div_op = avg->definition()->as<BinaryOp>();
  EXPECT_EQ(div_op->opType(), BinaryOpType::Div);
  EXPECT_EQ(div_op->rhs()->value(), 5);
  auto* total = div_op->lhs()->as<TensorView>();
  EXPECT_TRUE(total->axis(1)->isReduction());
  EXPECT_EQ(
      total->definition()->as<ReductionOp>()->opType(), ReductionOpType::Sum);

  TensorView* avg_keep = mean(tv, {0, 1}, true);
  EXPECT_TRUE(avg_keep->axis(0)->isBroadcast());
  EXPECT_TRUE(avg_keep->axis(1)->isBroadcast());
  EXPECT_EQ(avg_keep->definition()->as<BinaryOp>()->rhs()->value(), 20);

  // Symbolic extents: the count is their product.
  TensorView* sym = makeSymbolicTensor(2);
  TensorView* avg_sym = mean(sym, {0, 1});
  Val* count = avg_sym->definition()->as<BinaryOp>()->rhs();
  ASSERT_NE(count->definition(), nullptr);
  EXPECT_EQ(count->definition()->as<BinaryOp>()->opType(), BinaryOpType::Mul);
}

TEST_F(OpsTest, ReductionMisuse) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({4, 5});

  EXPECT_THAT(
      [&]() { sum(tv, {2}); },
      ThrowsMessage<UserError>(HasSubstr("axis 2 is out of range for rank 2")));
  EXPECT_THAT(
      [&]() { max(tv, {-3}); }, ThrowsMessage<UserError>(HasSubstr(
                                    "axis -3 is out of range for rank 2")));
  EXPECT_THAT(
      [&]() {
        sum(tv, {1, -1});
      },
      ThrowsMessage<UserError>(HasSubstr("axis 1 given twice")));
  EXPECT_THAT(
      [&]() { sum(tv, {}); },
      ThrowsMessage<UserError>(HasSubstr("no axes given")));
  EXPECT_THAT(
      [&]() { mean(makeContigConcreteTensor({4}, DataType::Int32), {0}); },
      ThrowsMessage<UserError>(
          HasSubstr("needs a floating-point tensor, got int32")));
}

// ---------------------------------------------------------------- permute

TEST_F(OpsTest, PermuteOutputDomains) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({2, 3, 4});
  TensorView* out = permute(tv, {2, 0, 1});

  ASSERT_TRUE(out->hasRoot());
  const auto& root = out->getRootDomain();
  const auto& logical = out->getLogicalDomain();
  ASSERT_EQ(root.size(), 3u);
  // Root in the input's order, fresh IDs with the input's extents.
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NE(root[i], tv->getLogicalDomain()[i]);
    EXPECT_EQ(root[i]->extent(), tv->getLogicalDomain()[i]->extent());
  }
  // Logical is the permutation of root; no exprs in between.
  EXPECT_EQ(logical, (std::vector<IterDomain*>{root[2], root[0], root[1]}));
  EXPECT_EQ(out->getLoopDomain(), logical);
  EXPECT_EQ(out->getMaybeRootDomain(), root);
  EXPECT_FALSE(out->hasAllocation());
  EXPECT_EQ(out->getContiguity(), (Contiguity{true, true, true}));
  ASSERT_TRUE(out->definition()->isA<LoadStoreOp>());
  EXPECT_EQ(out->definition()->as<LoadStoreOp>()->in(), tv);
  EXPECT_EQ(out->toString(), "T1_l_float[iS5{4}, iS3{2}, iS4{3}]");

  TensorView* t = transpose(tv, 0, -1);
  EXPECT_EQ(t->axis(0)->extent()->value(), 4);
  EXPECT_EQ(t->axis(1)->extent()->value(), 3);
  EXPECT_EQ(t->axis(2)->extent()->value(), 2);
  EXPECT_EQ(t->getRootDomain()[0]->extent()->value(), 2);

  EXPECT_THAT(
      [&]() {
        permute(tv, {1, 0});
      },
      ThrowsMessage<UserError>(HasSubstr("needs 3 axes, got 2")));
  EXPECT_THAT(
      [&]() {
        permute(tv, {0, 1, 1});
      },
      ThrowsMessage<UserError>(
          HasSubstr("axis 1 repeated; the axes must be a permutation")));
  EXPECT_THAT(
      [&]() {
        permute(tv, {0, 1, 3});
      },
      ThrowsMessage<UserError>(HasSubstr("axis 3 out of range for rank 3")));
  EXPECT_THAT(
      [&]() { transpose(tv, 0, 3); },
      ThrowsMessage<UserError>(HasSubstr("out of range for rank 3")));
}

// ---------------------------------------------------------------- reshape

TEST_F(OpsTest, ReshapeOutputDomains) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({2, 3, 4});
  TensorView* out = reshape(tv, {4, -1, 3});

  ASSERT_TRUE(out->hasRoot());
  const auto& root = out->getRootDomain();
  const auto& logical = out->getLogicalDomain();
  ASSERT_EQ(root.size(), 3u);
  ASSERT_EQ(logical.size(), 3u);
  EXPECT_EQ(root[0]->extent()->value(), 2);
  EXPECT_EQ(root[1]->extent()->value(), 3);
  EXPECT_EQ(root[2]->extent()->value(), 4);
  EXPECT_NE(root[0], tv->axis(0));
  // -1 is inferred: [4, 2, 3].
  EXPECT_EQ(logical[0]->extent()->value(), 4);
  EXPECT_EQ(logical[1]->extent()->value(), 2);
  EXPECT_EQ(logical[2]->extent()->value(), 3);
  EXPECT_EQ(out->getLoopDomain(), logical);
  EXPECT_EQ(out->getContiguity(), (Contiguity{true, true, true}));

  // logical[2] = inner of split(merge(merge(r0, r1), r2), 3);
  // logical[0], logical[1] = split(outer of that, 2).
  auto* last_split = logical[2]->definition()->as<Split>();
  EXPECT_EQ(last_split->factor()->value(), 3);
  EXPECT_TRUE(last_split->innerSplit());
  auto* first_split = logical[0]->definition()->as<Split>();
  EXPECT_EQ(logical[1]->definition(), first_split);
  EXPECT_EQ(first_split->factor()->value(), 2);
  EXPECT_EQ(first_split->in(), last_split->outer());
  EXPECT_EQ(first_split->in()->extent()->value(), 8);
  auto* merge_all = last_split->in()->definition()->as<Merge>();
  EXPECT_EQ(merge_all->out()->extent()->value(), 24);
  EXPECT_EQ(merge_all->inner(), root[2]);
  auto* merge01 = merge_all->outer()->definition()->as<Merge>();
  EXPECT_EQ(merge01->outer(), root[0]);
  EXPECT_EQ(merge01->inner(), root[1]);

  ASSERT_TRUE(out->definition()->isA<ViewOp>());
  EXPECT_EQ(out->definition()->as<ViewOp>()->in(), tv);

  EXPECT_THAT(
      [&]() {
        reshape(tv, {-1, -1});
      },
      ThrowsMessage<UserError>(HasSubstr("only one size may be -1")));
  EXPECT_THAT(
      [&]() {
        reshape(tv, {5, 5});
      },
      ThrowsMessage<UserError>(
          HasSubstr("24 elements cannot be viewed with 25 elements")));
  EXPECT_THAT(
      [&]() {
        reshape(tv, {5, -1});
      },
      ThrowsMessage<UserError>(HasSubstr("cannot infer -1")));
  EXPECT_THAT(
      [&]() {
        reshape(tv, {0, 24});
      },
      ThrowsMessage<UserError>(
          HasSubstr("24 elements cannot be viewed with 0 elements")));
  EXPECT_THAT(
      [&]() {
        reshape(tv, {-2, 24});
      },
      ThrowsMessage<UserError>(HasSubstr("must be 0 or more, or -1")));
}

// Unknown sizes: the -1 becomes the element count over the other sizes,
// and the view asks for the sizes as given.
TEST_F(OpsTest, ReshapeOfSymbolicSizes) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeSymbolicTensor(2);
  TensorView* flat = reshape(tv, {-1});
  ASSERT_EQ(flat->getLogicalDomain().size(), 1u);
  EXPECT_EQ(flat->axis(0)->extent()->toInlineString(), "( i0 * i2 )");
  TensorView* split = reshape(tv, {-1, 4});
  EXPECT_EQ(split->axis(1)->extent()->value(), 4);
  auto* view = split->definition()->as<ViewOp>();
  ASSERT_EQ(view->sizes().size(), 2u);
  EXPECT_EQ(view->sizes()[1]->value(), 4);
  EXPECT_EQ(view->sizes()[0]->toInlineString(), "( ( i0 * i2 ) / 4 )");
  EXPECT_THAT(
      [&]() { reshape(tv, std::vector<Val*>{tv}); },
      ThrowsMessage<UserError>(HasSubstr("must be an integer scalar")));
}

// ---------------------------------------------------------------- promotion

TEST_F(OpsTest, PromoteTypes) {
  EXPECT_EQ(promoteTypes(DataType::Half, DataType::BFloat16), DataType::Float);
  EXPECT_EQ(promoteTypes(DataType::BFloat16, DataType::Half), DataType::Float);
  EXPECT_EQ(promoteTypes(DataType::Int32, DataType::Int), DataType::Int);
  EXPECT_EQ(promoteTypes(DataType::Bool, DataType::Int32), DataType::Int32);
  EXPECT_EQ(promoteTypes(DataType::Int, DataType::Half), DataType::Half);
  EXPECT_EQ(promoteTypes(DataType::Half, DataType::Float), DataType::Float);
  EXPECT_EQ(promoteTypes(DataType::Double, DataType::Float), DataType::Double);
  EXPECT_EQ(promoteTypes(DataType::Bool, DataType::Bool), DataType::Bool);
  EXPECT_EQ(computeDataType(DataType::Half), DataType::Float);
  EXPECT_EQ(computeDataType(DataType::BFloat16), DataType::Float);
  EXPECT_EQ(computeDataType(DataType::Int32), DataType::Int32);
  EXPECT_EQ(floatResultType(DataType::Int), DataType::Float);
  EXPECT_EQ(floatResultType(DataType::Bool), DataType::Float);
  EXPECT_EQ(floatResultType(DataType::Half), DataType::Half);
}

TEST_F(OpsTest, TypePromotionOfTensors) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* h = makeContigConcreteTensor({4}, DataType::Half);
  TensorView* bf = makeContigConcreteTensor({4}, DataType::BFloat16);
  TensorView* i32 = makeContigConcreteTensor({4}, DataType::Int32);
  TensorView* i64 = makeContigConcreteTensor({4}, DataType::Int);
  TensorView* b = makeContigConcreteTensor({4}, DataType::Bool);
  TensorView* f = makeContigConcreteTensor({4}, DataType::Float);
  TensorView* d = makeContigConcreteTensor({4}, DataType::Double);

  EXPECT_EQ(computeTypePromotion({h, bf}), DataType::Float);
  EXPECT_EQ(add(h, bf)->dtype(), DataType::Float);
  EXPECT_EQ(add(i32, i64)->dtype(), DataType::Int);
  EXPECT_EQ(add(b, i32)->dtype(), DataType::Int32);
  EXPECT_EQ(add(b, b)->dtype(), DataType::Bool);
  EXPECT_EQ(mul(f, d)->dtype(), DataType::Double);
  EXPECT_EQ(mul(h, f)->dtype(), DataType::Float);
  EXPECT_EQ(sub(i64, h)->dtype(), DataType::Half);
  EXPECT_EQ(maximum(i32, f)->dtype(), DataType::Float);
}

TEST_F(OpsTest, TypePromotionWithScalars) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* h = makeContigConcreteTensor({4}, DataType::Half);
  TensorView* i32 = makeContigConcreteTensor({4}, DataType::Int32);
  TensorView* i64 = makeContigConcreteTensor({4}, DataType::Int);
  TensorView* b = makeContigConcreteTensor({4}, DataType::Bool);
  Val* dbl = IrBuilder::create<Val>(2.5);
  Val* int_scalar = IrBuilder::create<Val>(3);
  Val* index = IrBuilder::create<Val>(DataType::Index);

  // A scalar of a higher category gives that category's default type.
  EXPECT_EQ(add(i64, dbl)->dtype(), DataType::Float);
  EXPECT_EQ(add(dbl, i32)->dtype(), DataType::Float);
  EXPECT_EQ(add(b, int_scalar)->dtype(), DataType::Int);
  // Otherwise the tensor decides.
  EXPECT_EQ(add(h, dbl)->dtype(), DataType::Half);
  EXPECT_EQ(add(i32, int_scalar)->dtype(), DataType::Int32);
  EXPECT_EQ(mul(i32, index)->dtype(), DataType::Int32);
  // Scalars alone promote among themselves.
  EXPECT_EQ(add(int_scalar, dbl)->dtype(), DataType::Double);
  EXPECT_EQ(add(index, int_scalar)->dtype(), DataType::Index);
}

TEST_F(OpsTest, TypePromotionOfResults) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* h = makeContigConcreteTensor({4}, DataType::Half);
  TensorView* i32 = makeContigConcreteTensor({4}, DataType::Int32);
  TensorView* i64 = makeContigConcreteTensor({4}, DataType::Int);
  TensorView* f = makeContigConcreteTensor({4}, DataType::Float);

  // Comparisons give bool.
  EXPECT_EQ(lt(f, i32)->dtype(), DataType::Bool);
  EXPECT_EQ(eq(h, h)->dtype(), DataType::Bool);
  EXPECT_EQ(ge(i32, IrBuilder::create<Val>(1.5))->dtype(), DataType::Bool);
  EXPECT_EQ(logical_and(f, i32)->dtype(), DataType::Bool);
  // True division of integers gives float; mod keeps the integer type.
  EXPECT_EQ(div(i32, i64)->dtype(), DataType::Float);
  EXPECT_EQ(div(i32, IrBuilder::create<Val>(2))->dtype(), DataType::Float);
  EXPECT_EQ(mod(i32, i64)->dtype(), DataType::Int);
  EXPECT_EQ(div(h, h)->dtype(), DataType::Half);
  // Floating-point functions of integers give float.
  EXPECT_EQ(exp(i32)->dtype(), DataType::Float);
  EXPECT_EQ(sqrt(i64)->dtype(), DataType::Float);
  EXPECT_EQ(sigmoid(h)->dtype(), DataType::Half);
}

TEST_F(OpsTest, HalfComputedInFloat) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* h0 = makeContigConcreteTensor({4}, DataType::Half);
  TensorView* h1 = makeContigConcreteTensor({4}, DataType::Half);
  fusion->addInput(h0);
  fusion->addInput(h1);
  TensorView* out = mul(h0, h1);
  fusion->addOutput(out);

  EXPECT_EQ(out->dtype(), DataType::Half);
  EXPECT_THAT(
      describeMath(fusion.get()),
      ElementsAre(
          "cast half->float", "cast half->float", "mul float,float->float",
          "cast float->half"));
  auto* cast_out = out->definition()->as<UnaryOp>();
  EXPECT_EQ(cast_out->opType(), UnaryOpType::Cast);
  auto* bop = cast_out->in()->definition()->as<BinaryOp>();
  EXPECT_EQ(bop->lhs()->definition()->input(0), h0);
  EXPECT_EQ(bop->rhs()->definition()->input(0), h1);
}

TEST_F(OpsTest, MixedTypeExprs) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* h = makeContigConcreteTensor({4}, DataType::Half);
  TensorView* bf = makeContigConcreteTensor({4}, DataType::BFloat16);
  TensorView* i32 = makeContigConcreteTensor({4}, DataType::Int32);
  TensorView* i64 = makeContigConcreteTensor({4}, DataType::Int);
  TensorView* b = makeContigConcreteTensor({4}, DataType::Bool);

  auto math_of = [](TensorView* tv) {
    Fusion* f = tv->fusion();
    f->addOutput(tv);
    auto result = describeMath(f);
    f->removeOutput(tv);
    return result;
  };

  EXPECT_THAT(
      math_of(add(h, bf)), ElementsAre(
                               "cast half->float", "cast bfloat16->float",
                               "add float,float->float"));
  EXPECT_THAT(
      math_of(add(i32, i64)),
      ElementsAre("cast int32->int64", "add int64,int64->int64"));
  EXPECT_THAT(
      math_of(add(i64, IrBuilder::create<Val>(0.5))),
      ElementsAre("cast int64->float", "add float,double->float"));
  EXPECT_THAT(
      math_of(add(h, IrBuilder::create<Val>(0.5))),
      ElementsAre(
          "cast half->float", "add float,double->float", "cast float->half"));
  EXPECT_THAT(
      math_of(add(b, i32)),
      ElementsAre("cast bool->int32", "add int32,int32->int32"));
  EXPECT_THAT(
      math_of(lt(h, h)),
      ElementsAre(
          "cast half->float", "cast half->float", "lt float,float->bool"));
  EXPECT_THAT(
      math_of(div(i32, i32)),
      ElementsAre(
          "cast int32->float", "cast int32->float", "div float,float->float"));
  EXPECT_THAT(
      math_of(exp(i32)), ElementsAre("cast int32->float", "exp float->float"));
  EXPECT_THAT(
      math_of(exp(h)),
      ElementsAre("cast half->float", "exp float->float", "cast float->half"));
  EXPECT_THAT(
      math_of(sum(h, {0})),
      ElementsAre(
          "cast half->float", "reduction sum float->float",
          "cast float->half"));
  EXPECT_THAT(
      math_of(sum(i32, {0})),
      ElementsAre("cast int32->int64", "reduction sum int64->int64"));
  EXPECT_THAT(
      math_of(sum(b, {0})),
      ElementsAre("cast bool->int64", "reduction sum int64->int64"));
  EXPECT_THAT(
      math_of(sum(h, {0}, false, DataType::Float)),
      ElementsAre("cast half->float", "reduction sum float->float"));
}

} // namespace fuser
