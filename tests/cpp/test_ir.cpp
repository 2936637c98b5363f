// The IR itself: scalars, IterDomains, TensorDomains and TensorViews, domain
// validation, printing, cloning, dispatch and the scheduling API of
// TensorView. No GPU needed.

#include <fusion.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <ir/all_nodes.h>
#include <ir/cloner.h>
#include <ops/all_ops.h>
#include <tests/cpp/utils.h>

#include <memory>
#include <optional>
#include <sstream>
#include <vector>

namespace fuser {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::ThrowsMessage;

class IrTest : public FuserIrTest {};

// ---------------------------------------------------------------- scalars

TEST_F(IrTest, ConstantAndSymbolicScalars) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());

  Val* two = IrBuilder::create<Val>(2, DataType::Index);
  EXPECT_TRUE(two->isScalar());
  EXPECT_TRUE(two->isConst());
  EXPECT_TRUE(two->isConstInt());
  EXPECT_EQ(two->dtype(), DataType::Index);
  EXPECT_EQ(two->value(), 2);
  EXPECT_EQ(two->value(), 2.0);
  EXPECT_NE(two->value(), 3);
  EXPECT_EQ(two->constIntValue(), 2);
  EXPECT_EQ(two->definition(), nullptr);
  EXPECT_EQ(two->toString(), "2");

  Val* half = IrBuilder::create<Val>(0.5, DataType::Double);
  EXPECT_TRUE(half->isConst());
  EXPECT_FALSE(half->isConstInt());
  EXPECT_EQ(half->value(), 0.5);
  EXPECT_EQ(half->toString(), "0.5");
  EXPECT_EQ(IrBuilder::create<Val>(3.0)->toString(), "3.0");
  EXPECT_EQ(IrBuilder::create<Val>(3.0)->dtype(), DataType::Double);
  EXPECT_EQ(IrBuilder::create<Val>(3)->dtype(), DataType::Int);
  EXPECT_EQ(IrBuilder::create<Val>(true)->dtype(), DataType::Bool);
  EXPECT_EQ(IrBuilder::create<Val>(true)->toString(), "true");

  Val* sym = IrBuilder::create<Val>(DataType::Index);
  EXPECT_TRUE(sym->isScalar());
  EXPECT_FALSE(sym->isConst());
  EXPECT_FALSE(sym->value().hasValue());
  EXPECT_EQ(sym->toString(), "i" + std::to_string(sym->name()));
  EXPECT_EQ(
      IrBuilder::create<Val>(DataType::Float)->toString().substr(0, 1), "d");
  EXPECT_EQ(
      IrBuilder::create<Val>(DataType::Bool)->toString().substr(0, 1), "b");

  // Constants are structurally equal when their values are.
  EXPECT_TRUE(two->sameAs(IrBuilder::create<Val>(2, DataType::Index)));
  EXPECT_FALSE(two->sameAs(IrBuilder::create<Val>(3, DataType::Index)));
  EXPECT_FALSE(sym->sameAs(IrBuilder::create<Val>(DataType::Index)));
  EXPECT_TRUE(sym->sameAs(sym));

  // A double does not fit an integer type.
  EXPECT_THAT(
      []() { IrBuilder::create<Val>(2.5, DataType::Index); },
      ThrowsMessage<UserError>(
          HasSubstr("Constant 2.5 does not fit integer type index")));
}

TEST_F(IrTest, ScalarArithmeticFoldsConstants) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  Val* six = IrBuilder::create<Val>(6, DataType::Index);
  Val* four = IrBuilder::create<Val>(4, DataType::Index);
  EXPECT_EQ(IrBuilder::ceilDivExpr(six, four)->value(), 2);
  EXPECT_EQ(IrBuilder::mulExpr(six, four)->value(), 24);
  EXPECT_EQ(IrBuilder::modExpr(six, four)->value(), 2);

  Val* n = IrBuilder::create<Val>(DataType::Index);
  EXPECT_EQ(IrBuilder::mulExpr(fusion->oneVal(), n), n);
  EXPECT_EQ(IrBuilder::addExpr(n, fusion->zeroVal()), n);
  Val* q = IrBuilder::ceilDivExpr(n, four);
  ASSERT_NE(q->definition(), nullptr);
  ASSERT_TRUE(q->definition()->isA<BinaryOp>());
  EXPECT_EQ(q->definition()->as<BinaryOp>()->opType(), BinaryOpType::CeilDiv);
  EXPECT_EQ(q->dtype(), DataType::Index);
  EXPECT_EQ(q->toInlineString(), "ceilDiv(" + n->toString() + ", 4)");
  EXPECT_EQ(
      IrBuilder::addExpr(n, four)->toInlineString(),
      "( " + n->toString() + " + 4 )");
  EXPECT_EQ(n->uses().size(), 2u);
}

TEST_F(IrTest, NoActiveFusionIsAUserError) {
  ASSERT_EQ(FusionGuard::getCurFusion(), nullptr);
  EXPECT_THAT(
      []() { IrBuilder::create<Val>(DataType::Index); },
      ThrowsMessage<UserError>(HasSubstr("No active Fusion")));
  EXPECT_THAT(
      []() { makeContigConcreteTensor({2}); },
      ThrowsMessage<UserError>(HasSubstr("needs an active Fusion")));
}

// ---------------------------------------------------------------- tensors

TEST_F(IrTest, TensorViewDomains) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({6, 1, 4}, DataType::Half);

  EXPECT_EQ(tv->name(), 0);
  EXPECT_EQ(tv->dtype(), DataType::Half);
  EXPECT_EQ(tv->vtype(), ValType::TensorView);
  EXPECT_EQ(tv->nDims(), 3);
  EXPECT_EQ(tv->getMemoryType(), MemoryType::Local);
  EXPECT_FALSE(tv->hasRoot());
  EXPECT_FALSE(tv->hasAllocation());
  EXPECT_FALSE(tv->hasReduction());
  EXPECT_TRUE(tv->hasBroadcast());
  EXPECT_TRUE(tv->getRootDomain().empty());
  EXPECT_EQ(tv->getMaybeRootDomain(), tv->getLogicalDomain());
  EXPECT_EQ(tv->getMaybeAllocationDomain(), tv->getLogicalDomain());
  EXPECT_EQ(tv->getLoopDomain(), tv->getLogicalDomain());
  EXPECT_EQ(tv->domain()->logical(), tv->getLogicalDomain());
  EXPECT_EQ(tv->domain()->vtype(), ValType::TensorDomain);

  const auto& logical = tv->getLogicalDomain();
  ASSERT_EQ(logical.size(), 3u);
  EXPECT_TRUE(logical[0]->isIteration());
  EXPECT_TRUE(logical[1]->isBroadcast());
  EXPECT_TRUE(logical[2]->isIteration());
  EXPECT_EQ(logical[0]->extent()->value(), 6);
  EXPECT_EQ(logical[1]->extent()->value(), 1);
  EXPECT_TRUE(logical[0]->start()->isZeroInt());
  EXPECT_EQ(logical[0]->getParallelType(), ParallelType::Serial);
  EXPECT_EQ(logical[0]->dtype(), DataType::Index);
  // Broadcast IDs carry no contiguity flag.
  EXPECT_EQ(tv->getContiguity(), (Contiguity{true, std::nullopt, true}));

  EXPECT_EQ(tv->axis(-1), logical[2]);
  EXPECT_THAT(
      [&]() { tv->axis(3); },
      ThrowsMessage<UserError>(HasSubstr("Axis 3 is out of range")));
}

TEST_F(IrTest, SymbolicTensors) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* sym = makeSymbolicTensor(2);
  TensorView* contig = makeContigTensor(3, DataType::BFloat16);
  TensorView* concrete = makeConcreteTensor({5, -1});

  for (IterDomain* id : sym->getLogicalDomain()) {
    EXPECT_FALSE(id->extent()->isConst());
    EXPECT_EQ(id->extent()->dtype(), DataType::Index);
    EXPECT_TRUE(id->isIteration());
  }
  EXPECT_NE(sym->axis(0)->extent(), sym->axis(1)->extent());
  EXPECT_EQ(sym->getContiguity(), (Contiguity{false, false}));
  EXPECT_EQ(contig->getContiguity(), (Contiguity{true, true, true}));
  EXPECT_EQ(contig->dtype(), DataType::BFloat16);
  EXPECT_EQ(concrete->getContiguity(), (Contiguity{false, false}));
  EXPECT_EQ(concrete->axis(0)->extent()->value(), 5);
  EXPECT_FALSE(concrete->axis(1)->extent()->isConst());

  // Extents print as the symbolic scalar.
  IterDomain* id = sym->axis(0);
  EXPECT_EQ(id->toString(), "iS0{" + id->extent()->toString() + "}");
  EXPECT_EQ(id->extent()->toString(), "i0");
}

TEST_F(IrTest, DefinitionsAndUses) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({4});
  TensorView* tv1 = makeContigConcreteTensor({4});
  TensorView* tv2 = add(tv0, tv1);
  TensorView* tv3 = set(tv2);
  fusion->addInput(tv0);
  fusion->addInput(tv1);
  fusion->addOutput(tv3);

  ASSERT_NE(tv2->definition(), nullptr);
  ASSERT_TRUE(tv2->definition()->isA<BinaryOp>());
  auto* bop = tv2->definition()->as<BinaryOp>();
  EXPECT_EQ(bop->opType(), BinaryOpType::Add);
  EXPECT_EQ(bop->lhs(), tv0);
  EXPECT_EQ(bop->rhs(), tv1);
  EXPECT_EQ(bop->out(), tv2);
  EXPECT_EQ(bop->getOpString(), "BinaryOp");
  EXPECT_EQ(tv0->uses(), (std::vector<Expr*>{bop}));

  auto* ldst = tv3->definition()->as<LoadStoreOp>();
  EXPECT_EQ(ldst->opType(), LoadStoreOpType::Set);
  EXPECT_EQ(ldst->cacheOp(), CacheOp::Unspecified);
  EXPECT_EQ(ldst->in(), tv2);
  EXPECT_FALSE(tv3->definition()->isA<BinaryOp>());
  EXPECT_TRUE(tv3->definition()->isA<Expr>());

  EXPECT_EQ(fusion->exprs(), (std::vector<Expr*>{bop, ldst}));
  EXPECT_EQ(fusion->allTvs(), (std::vector<TensorView*>{tv0, tv1, tv2, tv3}));
  EXPECT_TRUE(tv0->isFusionInput());
  EXPECT_FALSE(tv2->isFusionInput());
  EXPECT_TRUE(tv3->isFusionOutput());
  EXPECT_TRUE(fusion->isInput(tv1));
  EXPECT_TRUE(fusion->isOutput(tv3));
  EXPECT_EQ(tv2->getMemoryType(), MemoryType::Local);
  EXPECT_EQ(tv0->getMemoryType(), MemoryType::Global);
  EXPECT_EQ(tv3->getMemoryType(), MemoryType::Global);
}

// An expr that reads a value twice is one use of it, and replacing that
// input replaces both operands.
TEST_F(IrTest, ValueReadTwiceIsOneUse) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({4});
  TensorView* tv1 = add(tv0, tv0);
  Expr* def = tv1->definition();
  EXPECT_EQ(def->inputs(), (std::vector<Val*>{tv0, tv0}));
  EXPECT_EQ(tv0->uses(), (std::vector<Expr*>{def}));

  TensorView* tv2 = makeContigConcreteTensor({4});
  fusion->replaceInput(def, tv0, tv2);
  EXPECT_EQ(def->inputs(), (std::vector<Val*>{tv2, tv2}));
  EXPECT_TRUE(tv0->uses().empty());
  EXPECT_EQ(tv2->uses(), (std::vector<Expr*>{def}));

  // Replacing one of two different inputs keeps the other's use.
  TensorView* tv3 = add(tv1, tv2);
  fusion->replaceInput(tv3->definition(), tv1, tv2);
  EXPECT_EQ(tv2->uses(), (std::vector<Expr*>{def, tv3->definition()}));
  EXPECT_TRUE(tv1->uses().empty());
}

TEST_F(IrTest, FusionInputOutputMisuse) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({4});
  TensorView* tv1 = set(tv0);
  fusion->addInput(tv0);
  fusion->addOutput(tv1);

  EXPECT_THAT(
      [&]() { fusion->addInput(tv0); },
      ThrowsMessage<UserError>(HasSubstr("is already an input")));
  EXPECT_THAT(
      [&]() { fusion->addInput(tv1); },
      ThrowsMessage<UserError>(
          HasSubstr("a fusion input must not have a definition")));
  EXPECT_THAT(
      [&]() { fusion->addOutput(IrBuilder::create<Val>(DataType::Float)); },
      ThrowsMessage<UserError>(HasSubstr("only tensors can be outputs")));
  // A second kernel parameter for the same tensor would not compile.
  EXPECT_THAT(
      [&]() { fusion->addOutput(tv1); },
      ThrowsMessage<UserError>(HasSubstr("is already an output")));
  EXPECT_THAT(
      [&]() { tv0->setMemoryType(MemoryType::Shared); },
      ThrowsMessage<UserError>(
          HasSubstr("fusion inputs and outputs live in global memory")));

  auto other = std::make_unique<Fusion>();
  {
    FusionGuard fg2(other.get());
    TensorView* foreign = makeContigConcreteTensor({4});
    EXPECT_THAT(
        [&]() { fusion->addInput(foreign); },
        ThrowsMessage<UserError>(HasSubstr("belongs to another Fusion")));
    // Ops check that their operands belong to the active fusion.
    EXPECT_THAT(
        [&]() { add(foreign, tv0); },
        ThrowsMessage<UserError>(HasSubstr("belongs to another Fusion")));
  }
  EXPECT_EQ(fusion->inputs().size(), 1u);
  EXPECT_EQ(fusion->outputs().size(), 1u);
}

// ---------------------------------------------------------------- IDs

TEST_F(IrTest, IterDomainSplitLeavesLoopAlone) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigTensor(1);
  IterDomain* id = tv->axis(0);

  auto [outer, inner] =
      IterDomain::split(id, IrBuilder::create<Val>(8, DataType::Index), true);
  EXPECT_EQ(tv->getLoopDomain(), (std::vector<IterDomain*>{id}));
  auto* split = outer->definition()->as<Split>();
  EXPECT_EQ(split->in(), id);
  EXPECT_EQ(split->getOpString(), "Split");
  EXPECT_EQ(inner->extent()->value(), 8);
  EXPECT_EQ(
      outer->extent()->toInlineString(),
      "ceilDiv(" + id->extent()->toString() + ", 8)");

  // Outer split: the factor is the outer extent.
  auto [o2, i2] =
      IterDomain::split(id, IrBuilder::create<Val>(8, DataType::Index), false);
  EXPECT_FALSE(o2->definition()->as<Split>()->innerSplit());
  EXPECT_EQ(o2->extent()->value(), 8);
  EXPECT_EQ(
      i2->extent()->toInlineString(),
      "ceilDiv(" + id->extent()->toString() + ", 8)");
  EXPECT_THAT(o2->definition()->toString(), HasSubstr("Outer split: "));
  EXPECT_EQ(id->uses().size(), 2u);

  // Splitting keeps the iteration type.
  auto* r = IrBuilder::create<IterDomain>(
      fusion->zeroVal(), IrBuilder::create<Val>(6, DataType::Index),
      IterType::Reduction);
  auto [ro, ri] =
      IterDomain::split(r, IrBuilder::create<Val>(2, DataType::Index), true);
  EXPECT_TRUE(ro->isReduction());
  EXPECT_TRUE(ri->isReduction());

  EXPECT_THAT(
      [&]() {
        IterDomain::split(id, IrBuilder::create<Val>(0, DataType::Index));
      },
      ThrowsMessage<UserError>(HasSubstr("must be positive; got 0")));
  EXPECT_THAT(
      [&]() { IterDomain::split(id, IrBuilder::create<Val>(2.0)); },
      ThrowsMessage<UserError>(HasSubstr("must be an integer scalar")));
}

TEST_F(IrTest, IterDomainMerge) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({3, 1, 5});
  IterDomain* i0 = tv->axis(0);
  IterDomain* b1 = tv->axis(1);
  IterDomain* i2 = tv->axis(2);

  IterDomain* m = IterDomain::merge(i0, i2);
  auto* merge = m->definition()->as<Merge>();
  EXPECT_EQ(merge->outer(), i0);
  EXPECT_EQ(merge->inner(), i2);
  EXPECT_EQ(merge->out(), m);
  EXPECT_EQ(m->extent()->value(), 15);
  EXPECT_TRUE(m->isIteration());
  EXPECT_EQ(merge->toString(), "Merge: iS0{3} and iS2{5} -> iS3{15}\n");

  EXPECT_TRUE(IterDomain::merge(i0, b1)->isIteration());
  auto* b = IrBuilder::create<IterDomain>(
      fusion->zeroVal(), fusion->oneVal(), IterType::Broadcast);
  EXPECT_TRUE(IterDomain::merge(b1, b)->isBroadcast());

  EXPECT_THAT(
      [&]() { IterDomain::merge(i0, i0); },
      ThrowsMessage<UserError>(HasSubstr("with itself")));
  auto* r = IrBuilder::create<IterDomain>(
      fusion->zeroVal(), IrBuilder::create<Val>(6, DataType::Index),
      IterType::Reduction);
  EXPECT_THAT(
      [&]() { IterDomain::merge(i0, r); },
      ThrowsMessage<UserError>(
          HasSubstr("Cannot merge reduction and iteration axes")));
}

TEST_F(IrTest, IterDomainParallelize) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({6, 8});
  IterDomain* id = tv->axis(0);
  EXPECT_FALSE(id->isParallelized());
  id->parallelize(ParallelType::TIDx);
  EXPECT_TRUE(id->isParallelized());
  EXPECT_TRUE(id->isThreadDim());
  EXPECT_TRUE(id->isThread());
  EXPECT_FALSE(id->isBlockDim());
  EXPECT_EQ(id->toString(), "iTIDx0{6}");
  tv->axis(1)->parallelize(ParallelType::BIDy);
  EXPECT_TRUE(tv->axis(1)->isBlockDim());
  EXPECT_EQ(tv->toString(), "T0_l_float[iTIDx0{6}, iBIDy1{8}]");
  id->parallelize(ParallelType::Serial);
  EXPECT_EQ(id->toString(), "iS0{6}");

  auto* r = IrBuilder::create<IterDomain>(
      fusion->zeroVal(), IrBuilder::create<Val>(6, DataType::Index),
      IterType::Reduction);
  EXPECT_THAT(
      [&]() { r->parallelize(ParallelType::Vectorize); },
      ThrowsMessage<UserError>(HasSubstr("Cannot vectorize reduction axis")));
}

// ---------------------------------------------------------------- validation

TEST_F(IrTest, SetLoopDomain) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({6, 4});
  TensorView* tv1 = set(tv0);
  fusion->addInput(tv0);
  fusion->addOutput(tv1);
  IterDomain* i0 = tv1->axis(0);
  IterDomain* i1 = tv1->axis(1);

  auto [outer, inner] =
      IterDomain::split(i0, IrBuilder::create<Val>(3, DataType::Index), true);
  tv1->setLoopDomain({inner, i1, outer});
  EXPECT_EQ(tv1->getLoopDomain(), (std::vector<IterDomain*>{inner, i1, outer}));
  EXPECT_EQ(tv1->nDims(), 3);
  EXPECT_EQ(tv1->getLogicalDomain(), (std::vector<IterDomain*>{i0, i1}));
  EXPECT_FALSE(tv1->hasAllocation());

  // Dropping an axis.
  EXPECT_THAT(
      ([&, outer = outer]() {
        tv1->setLoopDomain({outer, i1});
      }),
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Invalid loop domain"),
          HasSubstr("does not cover the logical domain; missing ["))));
  // Repeating one.
  EXPECT_THAT(
      [&]() {
        tv1->setLoopDomain({i0, i1, i1});
      },
      ThrowsMessage<UserError>(HasSubstr("appears more than once")));
  // Another tensor's axis.
  EXPECT_THAT(
      [&]() {
        tv1->setLoopDomain({i0, tv0->axis(1)});
      },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Invalid loop domain [iS2{6}, iS1{4}] for T1_g_float"),
          HasSubstr("[iS1{4}] is not derived from the logical domain"))));
  // A failed set keeps the previous loop domain.
  EXPECT_EQ(tv1->getLoopDomain(), (std::vector<IterDomain*>{inner, i1, outer}));
}

TEST_F(IrTest, ContiguityValidation) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv = makeContigConcreteTensor({3, 1});

  EXPECT_THAT(
      [&]() { tv->setContiguity(Contiguity{true}); },
      ThrowsMessage<UserError>(HasSubstr(
          "Contiguity of T0_l_float[iS0{3}, bS1{1}] needs one entry per "
          "allocation ID [iS0{3}, bS1{1}] (2), got 1.")));
  EXPECT_THAT(
      [&]() {
        tv->setContiguity(Contiguity{true, true});
      },
      ThrowsMessage<UserError>(
          HasSubstr("broadcast ID bS1{1} takes no contiguity flag "
                    "(std::nullopt), got true.")));
  EXPECT_THAT(
      [&]() {
        tv->setContiguity(Contiguity{std::nullopt, std::nullopt});
      },
      ThrowsMessage<UserError>(HasSubstr("iS0{3} needs a contiguity flag")));
  EXPECT_EQ(tv->getContiguity(), (Contiguity{true, std::nullopt}));

  tv->setContiguity(Contiguity{false, std::nullopt});
  EXPECT_EQ(tv->getContiguity(), (Contiguity{false, std::nullopt}));
  tv->setContiguity(true);
  EXPECT_EQ(tv->getContiguity(), (Contiguity{true, std::nullopt}));

  // A TensorDomain built directly is validated the same way.
  std::vector<IterDomain*> ids = tv->getLogicalDomain();
  EXPECT_THAT(
      [&]() { IrBuilder::create<TensorDomain>(ids, Contiguity{true}); },
      ThrowsMessage<UserError>(HasSubstr("(2), got 1")));
}

TEST_F(IrTest, SetDomainKeepsLogical) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({6});
  TensorView* tv1 = set(tv0);
  auto [outer, inner] = IterDomain::split(
      tv1->axis(0), IrBuilder::create<Val>(2, DataType::Index), true);
  auto* domain = IrBuilder::create<TensorDomain>(
      std::vector<IterDomain*>{}, tv1->getLogicalDomain(),
      std::vector<IterDomain*>{}, std::vector<IterDomain*>{outer, inner},
      Contiguity{true});
  tv1->setDomain(domain);
  EXPECT_EQ(tv1->domain(), domain);
  EXPECT_EQ(tv1->getLoopDomain(), (std::vector<IterDomain*>{outer, inner}));

  EXPECT_THAT(
      [&]() { tv1->setDomain(tv0->domain()); },
      ThrowsMessage<UserError>(
          HasSubstr("the new domain must keep the logical domain [iS1{6}]")));
}

// ---------------------------------------------------------------- scheduling

TEST_F(IrTest, ScheduleSplit) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({8, 12});
  TensorView* tv1 = set(tv0);
  fusion->addInput(tv0);
  fusion->addOutput(tv1);
  const std::vector<IterDomain*> logical = tv1->getLogicalDomain();

  // Inner split by an int: [8, 12] -> [8, 3, 4].
  EXPECT_EQ(tv1->split(1, 4), tv1);
  ASSERT_EQ(tv1->nDims(), 3);
  EXPECT_EQ(tv1->axis(1)->extent()->value(), 3);
  EXPECT_EQ(tv1->axis(2)->extent()->value(), 4);
  auto* s0 = tv1->axis(2)->definition()->as<Split>();
  EXPECT_TRUE(s0->innerSplit());
  EXPECT_EQ(s0->in(), logical[1]);
  EXPECT_EQ(s0->factor()->value(), 4);

  // Outer split with a negative axis: axis -3 is the 8; [2, 4, 3, 4].
  tv1->split(-3, 2, false);
  ASSERT_EQ(tv1->nDims(), 4);
  EXPECT_EQ(tv1->axis(0)->extent()->value(), 2);
  EXPECT_EQ(tv1->axis(1)->extent()->value(), 4);
  auto* s1 = tv1->axis(0)->definition()->as<Split>();
  EXPECT_FALSE(s1->innerSplit());
  EXPECT_EQ(s1->in(), logical[0]);

  // Split by a symbolic factor.
  Val* f = IrBuilder::create<Val>(DataType::Index);
  tv1->split(-1, f);
  ASSERT_EQ(tv1->nDims(), 5);
  EXPECT_EQ(tv1->axis(4)->extent(), f);
  EXPECT_EQ(
      tv1->axis(3)->extent()->toInlineString(),
      "ceilDiv(4, " + f->toString() + ")");
  EXPECT_EQ(tv1->axis(3)->definition()->as<Split>()->factor(), f);

  // The logical domain is untouched; the loop is reached from it.
  EXPECT_EQ(tv1->getLogicalDomain(), logical);
  EXPECT_FALSE(tv1->hasAllocation());
  EXPECT_THAT(
      tv1->domainsToString(),
      AllOf(
          HasSubstr("Split: iS3{12} by factor 4 -> "),
          HasSubstr("Outer split: iS2{8} by factor 2 -> ")));

  EXPECT_THAT(
      [&]() { tv1->split(5, 2); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Axis 5 is out of range for T1_g_float"),
          HasSubstr("with 5 loop axes"),
          HasSubstr("use an index in [-5, 5)"))));
  EXPECT_THAT(
      [&]() { tv1->split(-6, 2); },
      ThrowsMessage<UserError>(HasSubstr("Axis -6 is out of range")));
  EXPECT_THAT(
      [&]() { tv1->split(0, int64_t(0)); },
      ThrowsMessage<UserError>(HasSubstr("must be positive")));
  EXPECT_EQ(tv1->nDims(), 5);
}

TEST_F(IrTest, ScheduleMergeReorderParallelize) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({2, 3, 4});
  TensorView* tv1 = set(tv0);
  fusion->addInput(tv0);
  fusion->addOutput(tv1);
  const std::vector<IterDomain*> logical = tv1->getLogicalDomain();

  // reorder: old position -> new position; unnamed axes keep their order.
  tv1->reorder({{0, -1}});
  EXPECT_EQ(
      tv1->getLoopDomain(),
      (std::vector<IterDomain*>{logical[1], logical[2], logical[0]}));
  tv1->reorder({{2, 0}, {0, 2}});
  EXPECT_EQ(
      tv1->getLoopDomain(),
      (std::vector<IterDomain*>{logical[0], logical[2], logical[1]}));

  // merge(1) merges axes 1 and 2: [2, 4*3].
  EXPECT_EQ(tv1->merge(1), tv1);
  ASSERT_EQ(tv1->nDims(), 2);
  auto* m = tv1->axis(1)->definition()->as<Merge>();
  EXPECT_EQ(m->outer(), logical[2]);
  EXPECT_EQ(m->inner(), logical[1]);
  EXPECT_EQ(tv1->axis(1)->extent()->value(), 12);

  // merge(a, b) with a right of b: a is still the outer input.
  tv1->merge(-1, 0);
  ASSERT_EQ(tv1->nDims(), 1);
  auto* m2 = tv1->axis(0)->definition()->as<Merge>();
  EXPECT_EQ(m2->outer()->definition(), m);
  EXPECT_EQ(m2->inner(), logical[0]);
  EXPECT_EQ(tv1->axis(0)->extent()->value(), 24);

  tv1->split(0, 8);
  tv1->axis(0)->parallelize(ParallelType::BIDx);
  tv1->axis(1)->parallelize(ParallelType::TIDx);
  EXPECT_EQ(tv1->axis(0)->getParallelType(), ParallelType::BIDx);
  EXPECT_EQ(tv1->axis(1)->getParallelType(), ParallelType::TIDx);
  EXPECT_EQ(
      tv1->toString(), "T1_g_float[iBIDx" +
                           std::to_string(tv1->axis(0)->name()) + "{3}, iTIDx" +
                           std::to_string(tv1->axis(1)->name()) + "{8}]");
  EXPECT_EQ(tv1->getLogicalDomain(), logical);

  EXPECT_THAT(
      [&]() { tv1->merge(0, 2); },
      ThrowsMessage<UserError>(HasSubstr("Axis 2 is out of range")));
  EXPECT_THAT(
      [&]() { tv1->merge(1, 1); },
      ThrowsMessage<UserError>(HasSubstr("with itself")));
  EXPECT_THAT(
      [&]() {
        tv1->reorder({{3, 0}});
      },
      ThrowsMessage<UserError>(HasSubstr("Axis 3 is out of range")));
  EXPECT_THAT(
      [&]() {
        tv1->reorder({{0, 1}, {1, 1}});
      },
      ThrowsMessage<UserError>(HasSubstr("two axes are moved to position 1")));
  EXPECT_EQ(tv1->nDims(), 2);
}

TEST_F(IrTest, ScheduleReductionAxes) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({4, 6});
  TensorView* tv1 = sum(tv0, {1});
  fusion->addInput(tv0);
  fusion->addOutput(tv1);

  tv1->split(1, 2);
  EXPECT_TRUE(tv1->axis(1)->isReduction());
  EXPECT_TRUE(tv1->axis(2)->isReduction());
  tv1->merge(1, 2);
  EXPECT_TRUE(tv1->axis(1)->isReduction());
  EXPECT_THAT(
      [&]() { tv1->merge(0, 1); },
      ThrowsMessage<UserError>(
          HasSubstr("Cannot merge reduction and iteration axes")));
  EXPECT_THAT(
      [&]() { tv1->axis(1)->parallelize(ParallelType::Vectorize); },
      ThrowsMessage<UserError>(HasSubstr("Cannot vectorize reduction axis")));
  tv1->axis(1)->parallelize(ParallelType::TIDx);
  EXPECT_EQ(tv1->axis(1)->toString().substr(0, 5), "rTIDx");
}

// ---------------------------------------------------------------- printing

TEST_F(IrTest, PrintNames) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({6});
  EXPECT_EQ(tv0->axis(0)->toString(), "iS0{6}");
  EXPECT_EQ(tv0->toString(), "T0_l_float[iS0{6}]");
  fusion->addInput(tv0);
  EXPECT_EQ(tv0->toString(), "T0_g_float[iS0{6}]");

  TensorView* tv1 = makeContigConcreteTensor({6, 1}, DataType::Half);
  EXPECT_EQ(tv1->toString(), "T1_l_half[iS1{6}, bS2{1}]");
  TensorView* tv2 = sum(tv0, {0});
  EXPECT_EQ(tv2->toString(), "T2_l_float[rS3{6}]");
  TensorView* tv3 = makeContigConcreteTensor({2}, DataType::Int32);
  EXPECT_EQ(tv3->toString(), "T3_l_int32[iS4{2}]");
  EXPECT_EQ(tv3->toString(1), "  T3_l_int32[iS4{2}]");
  tv3->setMemoryType(MemoryType::Shared);
  EXPECT_EQ(tv3->toString(), "T3_s_int32[iS4{2}]");

  std::stringstream ss;
  ss << static_cast<Statement*>(tv0);
  EXPECT_EQ(ss.str(), "T0_g_float[iS0{6}]");
}

TEST_F(IrTest, PrintFusion) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({2, 3});
  TensorView* tv1 = permute(tv0, {1, 0});
  TensorView* tv2 = reshape(tv1, {6});
  TensorView* tv3 = neg(tv2);
  fusion->addInput(tv0);
  fusion->addOutput(tv3);
  tv3->split(0, 4);

  const std::string math = fusion->mathToString();
  EXPECT_EQ(
      math,
      "Inputs:\n"
      "  T0_g_float[iS0{2}, iS1{3}], float\n"
      "Outputs:\n"
      "  T3_g_float[iS8{2}, iS9{4}], float\n"
      "\n"
      "%kernel_math {\n"
      "  T1_l_float[iS3{3}, iS2{2}]\n"
      "     = Set(T0_g_float[iS0{2}, iS1{3}])\n"
      "  T2_l_float[iS6{6}]\n"
      "     = view(T1_l_float[iS3{3}, iS2{2}], 6)\n"
      "  T3_g_float[iS8{2}, iS9{4}]\n"
      "     = neg(T2_l_float[iS6{6}])\n"
      "} // %kernel_math\n");
  std::stringstream math_ss;
  fusion->printMath(math_ss);
  EXPECT_EQ(math_ss.str(), math);

  const std::string printed = fusion->toString();
  EXPECT_EQ(printed.substr(0, math.size()), math);
  // Permute: root in the input's order, logical permuted.
  EXPECT_THAT(
      printed, HasSubstr("  T1_l_float[iS3{3}, iS2{2}]\n"
                         "   root domain : [iS2{2}, iS3{3}]\n"
                         "   logical domain : [iS3{3}, iS2{2}]\n"
                         "   contiguity: t t\n"
                         "   loop domain : [iS3{3}, iS2{2}]\n"));
  // Reshape: root, the merge from root to logical, logical.
  EXPECT_THAT(
      printed, HasSubstr("  T2_l_float[iS6{6}]\n"
                         "   root domain : [iS4{3}, iS5{2}]\n"
                         "    Merge: iS4{3} and iS5{2} -> iS6{6}\n"
                         "   logical domain : [iS6{6}]\n"));
  // The scheduled output: the loop split printed under the loop domain.
  EXPECT_THAT(
      printed, HasSubstr("  T3_g_float[iS8{2}, iS9{4}]\n"
                         "   logical domain : [iS7{6}]\n"
                         "   contiguity: t\n"
                         "   loop domain : [iS8{2}, iS9{4}]\n"
                         "    Split: iS7{6} by factor 4 -> iS8{2}, iS9{4}\n"));
  EXPECT_THAT(printed, Not(HasSubstr("allocation domain")));
  EXPECT_THAT(printed, HasSubstr("%domains {\n"));
}

// ---------------------------------------------------------------- cloning

TEST_F(IrTest, FusionCopyKeepsEverything) {
  auto fusion = std::make_unique<Fusion>();
  int64_t shared_name = -1;
  {
    FusionGuard fg(fusion.get());
    TensorView* tv0 = makeContigConcreteTensor({4, 6}, DataType::Half);
    TensorView* tv1 = makeSymbolicTensor(2);
    TensorView* tv2 = add(tv0, tv1);
    TensorView* tv3 = permute(tv2, {1, 0});
    TensorView* tv4 = sum(tv3, {1});
    fusion->addInput(tv0);
    fusion->addInput(tv1);
    fusion->addOutput(tv4);
    tv2->setMemoryType(MemoryType::Shared);
    shared_name = tv2->name();
    tv4->split(1, 4);
    tv4->axis(0)->parallelize(ParallelType::BIDx);
    tv4->axis(-1)->parallelize(ParallelType::TIDx);
    auto [outer, inner] = IterDomain::split(
        tv1->axis(1), IrBuilder::create<Val>(3, DataType::Index), false);
    tv1->setAllocationDomain({outer, tv1->axis(0), inner}, {true, false, true});
  }

  Fusion copy(*fusion);
  EXPECT_EQ(copy.toString(), fusion->toString());
  ASSERT_EQ(copy.inputs().size(), 2u);
  ASSERT_EQ(copy.outputs().size(), 1u);
  ASSERT_EQ(copy.allTvs().size(), fusion->allTvs().size());

  for (size_t i = 0; i < copy.allTvs().size(); ++i) {
    TensorView* a = fusion->allTvs()[i];
    TensorView* b = copy.allTvs()[i];
    EXPECT_NE(a, b);
    EXPECT_EQ(b->fusion(), &copy);
    EXPECT_EQ(a->name(), b->name());
    EXPECT_EQ(a->dtype(), b->dtype());
    EXPECT_EQ(a->getMemoryType(), b->getMemoryType());
    EXPECT_EQ(a->getContiguity(), b->getContiguity());
    EXPECT_EQ(a->hasRoot(), b->hasRoot());
    EXPECT_EQ(a->hasAllocation(), b->hasAllocation());
    EXPECT_EQ(a->nDims(), b->nDims());
    for (int64_t j = 0; j < a->nDims(); ++j) {
      EXPECT_EQ(a->axis(j)->name(), b->axis(j)->name());
      EXPECT_EQ(a->axis(j)->getParallelType(), b->axis(j)->getParallelType());
      EXPECT_EQ(a->axis(j)->getIterType(), b->axis(j)->getIterType());
    }
  }
  int n_shared = 0;
  for (TensorView* tv : copy.allTvs()) {
    if (tv->getMemoryType() == MemoryType::Shared) {
      ++n_shared;
      EXPECT_EQ(tv->name(), shared_name);
    }
  }
  EXPECT_EQ(n_shared, 1);

  // The allocation of the copied tv1 is an outer split of its own logical
  // ID, with the factor copied.
  auto* tv1 = copy.inputs()[1]->as<TensorView>();
  ASSERT_EQ(tv1->getAllocationDomain().size(), 3u);
  auto* split = tv1->getAllocationDomain()[0]->definition()->as<Split>();
  EXPECT_EQ(split->in(), tv1->getLogicalDomain()[1]);
  EXPECT_EQ(split->inner(), tv1->getAllocationDomain()[2]);
  EXPECT_EQ(split->factor()->value(), 3);
  EXPECT_FALSE(split->innerSplit());
  EXPECT_EQ(split->fusion(), &copy);

  // The copied exprs connect the copied tensors.
  std::vector<Expr*> exprs = copy.exprs();
  ASSERT_EQ(exprs.size(), fusion->exprs().size());
  for (size_t i = 0; i < exprs.size(); ++i) {
    EXPECT_EQ(exprs[i]->getOpString(), fusion->exprs()[i]->getOpString());
    EXPECT_EQ(exprs[i]->fusion(), &copy);
  }
  auto* out = copy.outputs()[0]->as<TensorView>();
  ASSERT_TRUE(out->definition()->isA<ReductionOp>());
  auto* permuted = out->definition()->input(0)->as<TensorView>();
  ASSERT_TRUE(permuted->hasRoot());
  EXPECT_EQ(permuted->getRootDomain()[0], permuted->getLogicalDomain()[1]);

  // Scheduling the copy leaves the original alone.
  const std::string before = fusion->toString();
  out->split(0, 2);
  EXPECT_EQ(fusion->toString(), before);
  EXPECT_NE(copy.toString(), before);
}

TEST_F(IrTest, FusionCopyMapsNodes) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* tv0 = nullptr;
  TensorView* tv1 = nullptr;
  {
    FusionGuard fg(fusion.get());
    tv0 = makeContigConcreteTensor({6});
    tv1 = exp(tv0);
    fusion->addInput(tv0);
    fusion->addOutput(tv1);
  }
  Fusion copy;
  IrCloner cloner = Fusion::copy(fusion.get(), &copy);
  TensorView* tv0_copy = cloner.clone(tv0);
  TensorView* tv1_copy = cloner.clone(tv1);
  EXPECT_EQ(copy.inputs()[0], tv0_copy);
  EXPECT_EQ(copy.outputs()[0], tv1_copy);
  EXPECT_EQ(tv1_copy->definition()->input(0), tv0_copy);
  EXPECT_EQ(tv1_copy->definition()->as<UnaryOp>()->opType(), UnaryOpType::Exp);
  EXPECT_EQ(cloner.clone(tv0->axis(0)), tv0_copy->axis(0));

  // Assignment copies too.
  Fusion assigned;
  assigned = copy;
  EXPECT_EQ(assigned.toString(), fusion->toString());
  // New nodes in a copy do not reuse the names of copied ones.
  FusionGuard fg(&assigned);
  TensorView* tv2 = set(assigned.outputs()[0]->as<TensorView>());
  EXPECT_EQ(tv2->name(), 2);
}

TEST_F(IrTest, FusionCopyKeepsRootDomains) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* tv0 = makeContigConcreteTensor({2, 3, 4});
    TensorView* tv1 = reshape(tv0, {4, 6});
    fusion->addInput(tv0);
    fusion->addOutput(tv1);
    tv1->merge(0);
  }
  Fusion copy(*fusion);
  EXPECT_EQ(copy.toString(), fusion->toString());
  auto* tv1 = copy.outputs()[0]->as<TensorView>();
  ASSERT_TRUE(tv1->hasRoot());
  ASSERT_EQ(tv1->getRootDomain().size(), 3u);
  ASSERT_EQ(tv1->getLogicalDomain().size(), 2u);
  // root -> logical: two merges and a split, all in the copy.
  auto* split = tv1->getLogicalDomain()[1]->definition()->as<Split>();
  EXPECT_EQ(split->fusion(), &copy);
  EXPECT_EQ(split->factor()->value(), 6);
  auto* merge = split->in()->definition()->as<Merge>();
  EXPECT_EQ(merge->inner(), tv1->getRootDomain()[2]);
  // logical -> loop.
  auto* loop_merge = tv1->axis(0)->definition()->as<Merge>();
  EXPECT_EQ(loop_merge->outer(), tv1->getLogicalDomain()[0]);
  EXPECT_EQ(loop_merge->inner(), tv1->getLogicalDomain()[1]);
  EXPECT_EQ(tv1->axis(0)->extent()->value(), 24);
  ASSERT_TRUE(tv1->definition()->isA<ViewOp>());
  EXPECT_EQ(tv1->definition()->input(0), copy.inputs()[0]);
}

// ---------------------------------------------------------------- dispatch

namespace {

class NodeCounter : public OptOutDispatch {
 public:
  using OptOutDispatch::handle;

  void handle(TensorView*) override {
    ++tensors;
  }
  void handle(IterDomain*) override {
    ++ids;
  }
  void handle(Split*) override {
    ++splits;
  }
  void handle(Merge*) override {
    ++merges;
  }
  void handle(LoadStoreOp*) override {
    ++load_stores;
  }
  void handle(BinaryOp*) override {
    ++binary_ops;
  }
  // Every other Val (scalars, TensorDomains) and Expr lands here.
  void handle(Val* val) override {
    if (val->isScalar()) {
      ++scalars;
    } else {
      ++other_vals;
    }
  }
  void handle(Expr*) override {
    ++other_exprs;
  }

  int tensors = 0;
  int ids = 0;
  int splits = 0;
  int merges = 0;
  int load_stores = 0;
  int binary_ops = 0;
  int scalars = 0;
  int other_vals = 0;
  int other_exprs = 0;
};

// Only the catch-all: everything falls through to it.
class StatementCounter : public OptOutDispatch {
 public:
  using OptOutDispatch::handle;
  void handle(Statement*) override {
    ++count;
  }
  int count = 0;
};

} // namespace

TEST_F(IrTest, DispatchCountsNodeKinds) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({4, 6});
  TensorView* tv1 = mul(tv0, tv0);
  TensorView* tv2 = set(tv1);
  TensorView* tv3 = neg(tv2);
  fusion->addInput(tv0);
  fusion->addOutput(tv3);
  tv0->split(1, 2);
  tv3->merge(0);

  NodeCounter counter;
  for (Val* val : fusion->vals()) {
    counter.dispatch(val);
  }
  for (Expr* expr : fusion->unorderedExprs()) {
    counter.dispatch(expr);
  }
  EXPECT_EQ(counter.tensors, 4);
  // 2 logical IDs per tensor, 2 from the split, 1 from the merge.
  EXPECT_EQ(counter.ids, 11);
  EXPECT_EQ(counter.other_vals, 4); // TensorDomains
  EXPECT_GT(counter.scalars, 0);
  EXPECT_EQ(counter.splits, 1);
  EXPECT_EQ(counter.merges, 1);
  EXPECT_EQ(counter.load_stores, 1);
  EXPECT_EQ(counter.binary_ops, 1);
  EXPECT_EQ(counter.other_exprs, 1); // the UnaryOp

  StatementCounter all;
  for (Val* val : fusion->vals()) {
    all.dispatch(val);
  }
  for (Expr* expr : fusion->unorderedExprs()) {
    all.dispatch(expr);
  }
  EXPECT_EQ(
      all.count, static_cast<int>(
                     fusion->vals().size() + fusion->unorderedExprs().size()));
  EXPECT_EQ(
      counter.tensors + counter.ids + counter.scalars + counter.other_vals,
      static_cast<int>(fusion->vals().size()));
}

// Regression: an output taken out of the fusion's outputs (removeOutput, or
// replaced by replaceOutput) kept global memory, so a kernel indexed it as
// a global tensor that no launch allocates ("identifier T6 is undefined").
TEST_F(IrTest, FormerOutputsAreIntermediatesAgain) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = makeContigTensor(2);
  fusion.addInput(a);
  TensorView* b = relu(a);
  TensorView* c = neg(b);
  TensorView* d = neg(c);
  fusion.addOutput(b);
  fusion.addOutput(c);
  EXPECT_EQ(b->getMemoryType(), MemoryType::Global);
  fusion.removeOutput(b);
  EXPECT_EQ(b->getMemoryType(), MemoryType::Local);
  fusion.replaceOutput(c, d);
  EXPECT_EQ(c->getMemoryType(), MemoryType::Local);
  EXPECT_EQ(d->getMemoryType(), MemoryType::Global);
  EXPECT_EQ(a->getMemoryType(), MemoryType::Global);
}

} // namespace fuser
