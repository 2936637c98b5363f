// Schedule propagation (TransformPropagator), parallel-type propagation,
// inlining limits, and rFactor.
#include <fusion.h>
#include <id_model/id_model.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <scheduler/utils.h>
#include <tests/cpp/utils.h>
#include <transform/inlining.h>
#include <transform/propagator.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fuser {

using ::testing::HasSubstr;

class InliningTest : public FuserIrTest {};

TEST_F(InliningTest, PropagateMergedSplitParallelizedReference) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  // out[i, j] = relu(a[i, j] + broadcast(bias[j])) * 2
  TensorView* a = makeContigTensor(2);
  TensorView* bias = makeContigTensor(1);
  fusion->addInput(a);
  fusion->addInput(bias);
  TensorView* b = broadcast(bias, {true, false});
  TensorView* sum_tv = add(a, b);
  TensorView* act = relu(sum_tv);
  TensorView* out = mul(act, IrBuilder::create<Val>(2.0));
  fusion->addOutput(out);

  auto caches = scheduler_utils::cacheInputs(fusion.get(), false);
  auto outputs = scheduler_utils::cacheAndForkOutputs(fusion.get(), false);
  ASSERT_EQ(caches.size(), 2u);
  ASSERT_EQ(outputs.size(), 1u);

  TensorView* reference = out;
  reference->merge(0)->split(0, 128);
  reference->axis(0)->parallelize(ParallelType::BIDx);
  reference->axis(1)->parallelize(ParallelType::TIDx);

  TransformPropagator propagator(reference);
  MaxLogicalDomainInfoSpanningTree(reference).traverse(&propagator);
  scheduler_utils::parallelizeAllLike(reference);

  for (TensorView* tv : fusion->allTvs()) {
    if (tv->isFusionInput()) {
      continue;
    }
    ASSERT_EQ(tv->nDims(), 2) << tv->toString();
    auto* split = tv->axis(0)->definition();
    ASSERT_NE(split, nullptr) << tv->toString();
    ASSERT_TRUE(split->isA<Split>()) << tv->toString();
    EXPECT_EQ(split->as<Split>()->factor()->value(), 128);
    EXPECT_EQ(tv->axis(0)->getParallelType(), ParallelType::BIDx)
        << tv->toString();
    EXPECT_EQ(tv->axis(1)->getParallelType(), ParallelType::TIDx)
        << tv->toString();
  }
  // The 1-D bias cache: the merge with the broadcast forwarded, so its
  // split applies directly to its only axis.
  TensorView* bias_cache = caches[1];
  EXPECT_EQ(
      bias_cache->axis(0)->definition()->as<Split>()->in(),
      bias_cache->getLogicalDomain()[0]);

  inlineMost(fusion.get());
  EXPECT_EQ(a->getComputeAtPosition(), 0); // inputs are not computed
  EXPECT_EQ(caches[0]->getComputeAtPosition(), 2);
  EXPECT_EQ(b->getComputeAtPosition(), 2);
  EXPECT_EQ(sum_tv->getComputeAtPosition(), 2);
  EXPECT_EQ(outputs[0].first->getComputeAtPosition(), 2);
  EXPECT_EQ(out->getMaxProducerPosition(), 2);
  EXPECT_THAT(out->toString(), HasSubstr("produce_pos( 2 )"));
}

TEST_F(InliningTest, NoInliningAcrossReduction) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  TensorView* r = sum(in, {1});
  TensorView* out = relu(r);
  fusion->addOutput(out);
  TensorView* c = in->cacheAfter();
  inlineMost(fusion.get());
  // The producer of the reduction shares both loops with it.
  EXPECT_EQ(c->getComputeAtPosition(), 2);
  // The reduction output cannot share its reduction loop.
  EXPECT_EQ(r->getComputeAtPosition(), 1);
  EXPECT_EQ(getMaxInlinePosition(r), 1);
  try {
    r->inlineAt(2);
    FAIL() << "inlining a reduction axis must be rejected";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("reduction axis"));
    EXPECT_THAT(e.what(), HasSubstr(r->toString()));
  }
}

// A reduction stopped at its reduction axis caps no producer: the
// producer runs inside the loop it reduces, constant extents or not.
// Capped at constant extents, the producers of an inner-outer kernel's
// column partial left the loop over the rows whose buffers they read, and
// lowering failed (doc/normalization.md §9).
TEST_F(InliningTest, ReductionProducersStayInsideTheReducedLoop) {
  for (bool concrete : {false, true}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* in =
        concrete ? makeContigConcreteTensor({8, 64}) : makeContigTensor(2);
    fusion->addInput(in);
    TensorView* r = sum(in, {1});
    fusion->addOutput(relu(r));
    TensorView* c = in->cacheAfter();
    inlineMost(fusion.get());
    EXPECT_EQ(r->getComputeAtPosition(), 1) << concrete;
    EXPECT_EQ(c->getComputeAtPosition(), 2) << concrete;
  }
}

TEST_F(InliningTest, NoInliningAcrossUnmappedAxes) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  TensorView* c = relu(in);
  TensorView* out = permute(c, {1, 0});
  fusion->addOutput(out);
  EXPECT_EQ(getMaxInlinePosition(c), 0);
  try {
    c->inlineAt(1);
    FAIL() << "inlining unmapped axes must be rejected";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("does not map"));
  }
  c->inlineAt(1, /*best_effort=*/true);
  EXPECT_EQ(c->getComputeAtPosition(), 0);
}

// in -> t1 -> t2 -> t3 -> out, out's inner axis vectorized: t3 stops
// above it, and so must t2 and t1 (their inner loop would otherwise be
// shared with exprs that t3's own loop separates). The cap travels two
// producers up; the order the tensors are given in must not matter.
// Regression: the matmul scheduler listed its epilogue from a pointer-keyed
// set, one cap was missed, and lowering failed for the benchmark's tanh
// GELU epilogue.
TEST_F(InliningTest, VectorizedOutputCapsEveryProducerInAnyOrder) {
  for (bool reversed : {false, true}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* in = makeContigTensor(2);
    fusion->addInput(in);
    TensorView* t1 = relu(in);
    TensorView* t2 = neg(t1);
    TensorView* t3 = abs(t2);
    TensorView* out = set(t3);
    fusion->addOutput(out);
    out->split(1, 2);
    TransformPropagator propagator(out);
    MaxLogicalDomainInfoSpanningTree(out).traverse(&propagator);
    out->axis(2)->parallelize(ParallelType::Vectorize);
    // Reversed, the last pass visits t1 before t2 is capped.
    std::vector<TensorView*> tvs = {t1, t2, t3, out};
    if (reversed) {
      tvs = {t2, t1, t3, out};
    }
    inlineMost(tvs);
    EXPECT_EQ(t3->getComputeAtPosition(), 2) << reversed;
    EXPECT_EQ(t2->getComputeAtPosition(), 2) << reversed;
    EXPECT_EQ(t1->getComputeAtPosition(), 2) << reversed;
    EXPECT_EQ(t2->getMaxProducerPosition(), 2) << reversed;
  }
}

TEST_F(InliningTest, InlinedAxesCannotBeTransformed) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  TensorView* c = relu(in);
  TensorView* out = neg(c);
  fusion->addOutput(out);
  c->inlineAt(-1);
  EXPECT_EQ(c->getComputeAtPosition(), 2);
  try {
    c->split(0, 4);
    FAIL() << "splitting an inlined axis must be rejected";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("inlined"));
  }
}

TEST_F(InliningTest, RFactorOfSum) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  TensorView* out = sum(in, {1});
  fusion->addOutput(out);
  IterDomain* i0 = out->getLogicalDomain()[0];
  out->split(1, 128); // [i0, r1/128, r128]
  TensorView* partial = out->rFactor({1});

  // The partial sum reduces the outer part.
  ASSERT_TRUE(partial->definition()->isA<ReductionOp>());
  EXPECT_EQ(partial->definition()->input(0), in);
  ASSERT_TRUE(partial->hasRoot());
  const auto& pl = partial->getLogicalDomain();
  ASSERT_EQ(pl.size(), 3u);
  EXPECT_TRUE(pl[0]->isIteration());
  EXPECT_TRUE(pl[1]->isReduction());
  EXPECT_TRUE(pl[2]->isIteration());
  auto* split = pl[1]->definition()->as<Split>();
  EXPECT_EQ(split->in(), partial->getRootDomain()[1]);
  EXPECT_EQ(split->factor()->value(), 128);
  EXPECT_EQ(partial->nDims(), 3);

  // The final sum reduces the 128 partial results; its iteration axis and
  // so its shape are unchanged.
  ASSERT_TRUE(out->definition()->isA<ReductionOp>());
  EXPECT_EQ(out->definition()->input(0), partial);
  const auto& ol = out->getLogicalDomain();
  ASSERT_EQ(ol.size(), 2u);
  EXPECT_EQ(ol[0], i0);
  EXPECT_TRUE(ol[1]->isReduction());
  EXPECT_EQ(ol[1]->extent()->value(), 128);
  EXPECT_EQ(out->nDims(), 2);
  EXPECT_TRUE(fusion->isOutput(out));

  // Rejected requests.
  try {
    out->rFactor({0});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is not a reduction axis"));
  }
  try {
    out->rFactor({1});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("at least one reduction axis"));
  }
}

TEST_F(InliningTest, IdModelMapsBroadcastOnlyInLoopMap) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  TensorView* bias = makeContigConcreteTensor({1, -1});
  fusion->addInput(a);
  fusion->addInput(bias);
  TensorView* out = add(a, bias);
  fusion->addOutput(out);
  IdModel id_model(fusion.get());
  IterDomain* bcast = bias->getLogicalDomain()[0];
  IterDomain* out0 = out->getLogicalDomain()[0];
  EXPECT_TRUE(bcast->isBroadcast());
  EXPECT_TRUE(id_model.loopMapped(bcast, out0));
  EXPECT_FALSE(id_model.exactMapped(bcast, out0));
  EXPECT_TRUE(id_model.exactMapped(
      a->getLogicalDomain()[1], out->getLogicalDomain()[1]));
}

} // namespace fuser
