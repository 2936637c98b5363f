// Allocation domains: how a tensor's bytes lie in memory, reached from its
// logical domain by its own Split/Merge exprs, independent of the loop
// domain (doc/design.md §1).
//
// AllocationDomainIrTest holds the IR-level tests; they need no GPU.
// AllocationDomainTest runs fusions on the GPU (skipped without one).

#include <codegen/codegen.h>
#include <device_lower/lower.h>
#include <fusion.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>

#include <memory>
#include <optional>
#include <vector>

namespace fuser {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class AllocationDomainIrTest : public FuserIrTest {};

namespace {

// A contiguity vector of plain flags, for comparisons.
Contiguity flags(std::initializer_list<std::optional<bool>> values) {
  return Contiguity(values);
}

} // namespace

// The seed case: in = [i6] with allocation [i6/2, 2] made by the static
// IterDomain::split, which leaves the loop domain alone.
TEST_F(AllocationDomainIrTest, SplitInputAllocation) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({6});
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  auto [outer, inner] = IterDomain::split(
      in->axis(0), IrBuilder::create<Val>(2, DataType::Index), true);
  in->setAllocationDomain({outer, inner}, true);

  IterDomain* i6 = in->getLogicalDomain().at(0);
  ASSERT_TRUE(in->hasAllocation());
  EXPECT_EQ(
      in->getAllocationDomain(), (std::vector<IterDomain*>{outer, inner}));
  EXPECT_EQ(
      in->getMaybeAllocationDomain(), (std::vector<IterDomain*>{outer, inner}));

  // The allocation is a split of the logical ID.
  ASSERT_NE(outer->definition(), nullptr);
  ASSERT_TRUE(outer->definition()->isA<Split>());
  EXPECT_EQ(inner->definition(), outer->definition());
  auto* split = outer->definition()->as<Split>();
  EXPECT_EQ(split->in(), i6);
  EXPECT_EQ(split->outer(), outer);
  EXPECT_EQ(split->inner(), inner);
  EXPECT_TRUE(split->factor()->isConst());
  EXPECT_EQ(split->factor()->value(), 2);
  EXPECT_TRUE(split->innerSplit());
  ASSERT_TRUE(outer->extent()->isConstInt());
  ASSERT_TRUE(inner->extent()->isConstInt());
  EXPECT_EQ(outer->extent()->value(), 3);
  EXPECT_EQ(inner->extent()->value(), 2);
  EXPECT_TRUE(outer->isIteration());
  EXPECT_TRUE(inner->isIteration());
  // IDs are used by ID exprs only; the Set uses the tensor.
  EXPECT_EQ(i6->uses(), (std::vector<Expr*>{split}));
  EXPECT_EQ(in->uses(), (std::vector<Expr*>{out->definition()}));

  // The loop domain is still the single logical ID.
  EXPECT_EQ(in->getLoopDomain(), (std::vector<IterDomain*>{i6}));
  EXPECT_EQ(in->nDims(), 1);
  EXPECT_EQ(in->axis(0), i6);
  EXPECT_EQ(in->getLogicalDomain().size(), 1u);
  EXPECT_FALSE(in->hasRoot());

  // One contiguity flag per allocation ID, all true.
  EXPECT_EQ(in->getContiguity(), flags({true, true}));

  // The output's allocation is unset, i.e. equal to its logical domain.
  EXPECT_FALSE(out->hasAllocation());
  EXPECT_TRUE(out->getAllocationDomain().empty());
  EXPECT_EQ(out->getMaybeAllocationDomain(), out->getLogicalDomain());
  EXPECT_EQ(out->getContiguity(), flags({true}));

  // Fusion inputs and outputs live in global memory.
  EXPECT_EQ(in->getMemoryType(), MemoryType::Global);
  EXPECT_EQ(out->getMemoryType(), MemoryType::Global);
}

TEST_F(AllocationDomainIrTest, SplitInputAllocationPrinted) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({6});
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  auto [outer, inner] = IterDomain::split(
      in->axis(0), IrBuilder::create<Val>(2, DataType::Index), true);
  in->setAllocationDomain({outer, inner}, true);

  EXPECT_EQ(outer->toString(), "iS2{3}");
  EXPECT_EQ(inner->toString(), "iS3{2}");
  EXPECT_EQ(
      outer->definition()->toString(),
      "Split: iS0{6} by factor 2 -> iS2{3}, iS3{2}\n");

  const std::string domains = in->domainsToString();
  EXPECT_THAT(domains, HasSubstr("logical domain : [iS0{6}]"));
  EXPECT_THAT(domains, HasSubstr("allocation domain : [iS2{3}, iS3{2}]"));
  EXPECT_THAT(domains, HasSubstr("Split: iS0{6} by factor 2"));
  EXPECT_THAT(domains, HasSubstr("contiguity: t t"));
  EXPECT_THAT(domains, HasSubstr("loop domain : [iS0{6}]"));

  const std::string printed = fusion->toString();
  EXPECT_THAT(
      printed, HasSubstr("T0_g_float[iS0{6}]\n"
                         "   logical domain : [iS0{6}]\n"
                         "   allocation domain : [iS2{3}, iS3{2}]\n"
                         "    Split: iS0{6} by factor 2 -> iS2{3}, iS3{2}\n"
                         "   contiguity: t t\n"
                         "   loop domain : [iS0{6}]\n"));
  // The output has no allocation line.
  EXPECT_THAT(
      printed, HasSubstr("T1_g_float[iS1{6}]\n"
                         "   logical domain : [iS1{6}]\n"
                         "   contiguity: t\n"
                         "   loop domain : [iS1{6}]\n"));
  // Fusion::print writes the same text.
  std::stringstream ss;
  fusion->print(ss);
  EXPECT_EQ(ss.str(), printed);
}

TEST_F(AllocationDomainIrTest, AllocationIndependentOfLoop) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({6});
  fusion->addInput(in);
  fusion->addOutput(set(in));
  IterDomain* i6 = in->axis(0);

  // Loop: split by 3; allocation: split by 2, both of the same logical ID.
  in->split(0, 3);
  auto [outer, inner] =
      IterDomain::split(i6, IrBuilder::create<Val>(2, DataType::Index), true);
  in->setAllocationDomain({outer, inner}, true);

  ASSERT_EQ(in->nDims(), 2);
  EXPECT_EQ(in->axis(0)->extent()->value(), 2);
  EXPECT_EQ(in->axis(1)->extent()->value(), 3);
  EXPECT_EQ(
      in->getAllocationDomain(), (std::vector<IterDomain*>{outer, inner}));
  EXPECT_NE(in->axis(0)->definition(), outer->definition());
  EXPECT_EQ(in->getLogicalDomain(), (std::vector<IterDomain*>{i6}));
  // i6 feeds two splits: one for the loop, one for the allocation.
  EXPECT_EQ(i6->uses().size(), 2u);
}

TEST_F(AllocationDomainIrTest, AllocationDroppingAnAxisIsRejected) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({4, 5});
  fusion->addInput(in);
  fusion->addOutput(set(in));

  EXPECT_THAT(
      [&]() { in->setAllocationDomain({in->axis(0)}, true); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Invalid allocation domain [iS0{4}]"),
          HasSubstr("does not cover the logical domain; missing [iS1{5}]"))));

  // Dropping the inner half of a split also leaves part of it uncovered.
  auto [outer, inner] = IterDomain::split(
      in->axis(1), IrBuilder::create<Val>(2, DataType::Index), true);
  EXPECT_THAT(
      ([&, outer = outer]() {
        in->setAllocationDomain({in->axis(0), outer}, true);
      }),
      ThrowsMessage<UserError>(HasSubstr(
          "does not cover the logical domain; missing [" + inner->toString() +
          "]")));

  // A rejected allocation leaves the tensor as it was.
  EXPECT_FALSE(in->hasAllocation());
  EXPECT_EQ(in->getContiguity(), flags({true, true}));
}

TEST_F(AllocationDomainIrTest, AllocationRepeatingAnAxisIsRejected) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({4, 5});
  fusion->addInput(in);
  fusion->addOutput(set(in));
  IterDomain* i0 = in->axis(0);
  IterDomain* i1 = in->axis(1);

  EXPECT_THAT(
      [&]() {
        in->setAllocationDomain({i0, i1, i0}, true);
      },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Invalid allocation domain"),
          HasSubstr("iS0{4} appears more than once"))));

  // An ID together with the IDs split from it covers it twice.
  auto [outer, inner] =
      IterDomain::split(i1, IrBuilder::create<Val>(5, DataType::Index), true);
  EXPECT_THAT(
      ([&, outer = outer, inner = inner]() {
        in->setAllocationDomain({i0, i1, outer, inner}, true);
      }),
      ThrowsMessage<UserError>(
          HasSubstr("iS1{5} is used more than once (it appears together with "
                    "IDs derived from it)")));

  // Two splits of the same ID cannot both be part of the allocation.
  auto [outer2, inner2] =
      IterDomain::split(i1, IrBuilder::create<Val>(1, DataType::Index), true);
  EXPECT_THAT(
      ([&, outer = outer, outer2 = outer2, inner2 = inner2]() {
        in->setAllocationDomain({i0, outer, outer2, inner2}, true);
      }),
      ThrowsMessage<UserError>(
          HasSubstr("iS1{5} is used more than once (it feeds several IDs of "
                    "the list)")));
  EXPECT_FALSE(in->hasAllocation());
}

TEST_F(AllocationDomainIrTest, AllocationWithAnotherTensorsAxisIsRejected) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({4, 5});
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);

  EXPECT_THAT(
      [&]() {
        in->setAllocationDomain({in->axis(0), out->axis(1)}, true);
      },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr(
              "Invalid allocation domain [iS0{4}, iS3{5}] for T0_g_float"),
          HasSubstr("[iS3{5}] is not derived from the logical domain of T0"),
          HasSubstr("IterDomain::split/merge"))));

  // A split of another tensor's axis is not derived from this one either.
  auto [outer, inner] = IterDomain::split(
      out->axis(0), IrBuilder::create<Val>(2, DataType::Index), true);
  EXPECT_THAT(
      ([&, outer = outer, inner = inner]() {
        in->setAllocationDomain({outer, inner, in->axis(1)}, true);
      }),
      ThrowsMessage<UserError>(
          HasSubstr("[iS2{4}] is not derived from the logical domain of T0")));

  // A freshly made ID is not derived from anything.
  auto* fresh = IrBuilder::create<IterDomain>(
      fusion->zeroVal(), IrBuilder::create<Val>(4, DataType::Index));
  EXPECT_THAT(
      [&]() {
        in->setAllocationDomain({fresh, in->axis(1)}, true);
      },
      ThrowsMessage<UserError>(HasSubstr("is not derived from the logical")));
  EXPECT_FALSE(in->hasAllocation());
}

TEST_F(AllocationDomainIrTest, AllocationContiguityMustMatch) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({4, 1, 5});
  fusion->addInput(in);
  fusion->addOutput(set(in));
  IterDomain* i0 = in->axis(0);
  IterDomain* b1 = in->axis(1);
  IterDomain* i2 = in->axis(2);
  ASSERT_TRUE(b1->isBroadcast());

  // One flag per allocation ID.
  EXPECT_THAT(
      [&]() {
        in->setAllocationDomain({i2, b1, i0}, flags({true, std::nullopt}));
      },
      ThrowsMessage<UserError>(HasSubstr(
          "needs one entry per allocation ID [iS2{5}, bS1{1}, iS0{4}] (3), "
          "got 2")));
  // Broadcast IDs take no flag.
  EXPECT_THAT(
      [&]() {
        in->setAllocationDomain({i2, b1, i0}, flags({true, false, true}));
      },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("broadcast ID bS1{1} takes no contiguity flag"),
          HasSubstr("got false"))));
  // Other IDs need one.
  EXPECT_THAT(
      [&]() {
        in->setAllocationDomain(
            {i2, b1, i0}, flags({std::nullopt, std::nullopt, true}));
      },
      ThrowsMessage<UserError>(
          HasSubstr("iS2{5} needs a contiguity flag (true or false)")));
  EXPECT_FALSE(in->hasAllocation());

  in->setAllocationDomain({i2, b1, i0}, flags({false, std::nullopt, true}));
  EXPECT_EQ(in->getAllocationDomain(), (std::vector<IterDomain*>{i2, b1, i0}));
  EXPECT_EQ(in->getContiguity(), flags({false, std::nullopt, true}));
  EXPECT_THAT(in->domainsToString(), HasSubstr("contiguity: f n t"));

  // The bool overload leaves broadcast IDs without a flag.
  in->setAllocationDomain({i0, b1, i2}, true);
  EXPECT_EQ(in->getContiguity(), flags({true, std::nullopt, true}));
  in->setContiguity(false);
  EXPECT_EQ(in->getContiguity(), flags({false, std::nullopt, false}));
}

// NHWC: logical [N, C, H, W], allocation [N, H, W, C].
TEST_F(AllocationDomainIrTest, PermutedAllocationMixedContiguity) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({2, 3, 4, 5});
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  const std::vector<IterDomain*> logical = in->getLogicalDomain();
  IterDomain* n = logical[0];
  IterDomain* c = logical[1];
  IterDomain* h = logical[2];
  IterDomain* w = logical[3];

  in->setAllocationDomain({n, h, w, c}, {true, false, true, true});

  EXPECT_TRUE(in->hasAllocation());
  EXPECT_EQ(in->getAllocationDomain(), (std::vector<IterDomain*>{n, h, w, c}));
  EXPECT_EQ(in->getContiguity(), flags({true, false, true, true}));
  // A permutation creates no exprs: the allocation IDs are the logical ones.
  for (IterDomain* id : in->getAllocationDomain()) {
    EXPECT_EQ(id->definition(), nullptr);
  }
  EXPECT_EQ(in->getLogicalDomain(), logical);
  EXPECT_EQ(in->getLoopDomain(), logical);
  EXPECT_FALSE(out->hasAllocation());

  const std::string domains = in->domainsToString();
  EXPECT_THAT(
      domains,
      HasSubstr("allocation domain : [iS0{2}, iS2{4}, iS3{5}, iS1{3}]\n"
                " contiguity: t f t t\n"
                " loop domain : [iS0{2}, iS1{3}, iS2{4}, iS3{5}]\n"));

  // Changing only the contiguity keeps the order.
  in->setContiguity({false, true, true, false});
  EXPECT_EQ(in->getAllocationDomain(), (std::vector<IterDomain*>{n, h, w, c}));
  EXPECT_EQ(in->getContiguity(), flags({false, true, true, false}));
  EXPECT_THAT(
      [&]() {
        in->setContiguity({true, true});
      },
      ThrowsMessage<UserError>(HasSubstr("(4), got 2")));
}

TEST_F(AllocationDomainIrTest, MergedAllocation) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({3, 4});
  fusion->addInput(in);
  fusion->addOutput(set(in));
  IterDomain* merged = IterDomain::merge(in->axis(1), in->axis(0));
  in->setAllocationDomain({merged}, true);

  ASSERT_TRUE(merged->definition()->isA<Merge>());
  auto* merge = merged->definition()->as<Merge>();
  EXPECT_EQ(merge->outer(), in->getLogicalDomain()[1]);
  EXPECT_EQ(merge->inner(), in->getLogicalDomain()[0]);
  EXPECT_EQ(merge->out(), merged);
  EXPECT_EQ(merged->extent()->value(), 12);
  EXPECT_EQ(in->getContiguity(), flags({true}));
  EXPECT_EQ(in->getLoopDomain(), in->getLogicalDomain());
  EXPECT_THAT(
      in->domainsToString(),
      HasSubstr("allocation domain : [iS4{12}]\n"
                "  Merge: iS1{4} and iS0{3} -> iS4{12}\n"));
}

TEST_F(AllocationDomainIrTest, SymbolicSplitAllocation) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  fusion->addOutput(set(in));
  IterDomain* i0 = in->axis(0);
  IterDomain* i1 = in->axis(1);
  ASSERT_FALSE(i1->extent()->isConst());

  auto [outer, inner] =
      IterDomain::split(i1, IrBuilder::create<Val>(4, DataType::Index), true);
  in->setAllocationDomain({outer, i0, inner}, {false, true, true});

  // The outer extent is ceilDiv(extent, 4), a scalar expression.
  Expr* def = outer->extent()->definition();
  ASSERT_NE(def, nullptr);
  ASSERT_TRUE(def->isA<BinaryOp>());
  EXPECT_EQ(def->as<BinaryOp>()->opType(), BinaryOpType::CeilDiv);
  EXPECT_EQ(def->as<BinaryOp>()->lhs(), i1->extent());
  EXPECT_EQ(def->as<BinaryOp>()->rhs()->value(), 4);
  EXPECT_EQ(inner->extent()->value(), 4);

  const std::string e1 = i1->extent()->toString();
  EXPECT_EQ(outer->toString(), "iS4{ceilDiv(" + e1 + ", 4)}");
  EXPECT_THAT(
      in->domainsToString(),
      HasSubstr(
          "allocation domain : [iS4{ceilDiv(" + e1 + ", 4)}, iS0{" +
          i0->extent()->toString() + "}, iS5{4}]"));
  EXPECT_EQ(in->getContiguity(), flags({false, true, true}));
  EXPECT_EQ(in->getLoopDomain(), (std::vector<IterDomain*>{i0, i1}));
}

// The sharded-input case of doc/design.md §1: allocation [iDIDx{D}, iM/D, iN]
// is an outer split of logical, and the loop domain stays [iM, iN].
TEST_F(AllocationDomainIrTest, DeviceSplitAllocation) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  fusion->addOutput(set(in));
  IterDomain* m = in->axis(0);
  IterDomain* n = in->axis(1);

  auto [did, local] =
      IterDomain::split(m, IrBuilder::create<Val>(4, DataType::Index), false);
  did->parallelize(ParallelType::DIDx);
  in->setAllocationDomain({did, local, n}, true);

  auto* split = did->definition()->as<Split>();
  EXPECT_FALSE(split->innerSplit());
  EXPECT_EQ(did->extent()->value(), 4);
  EXPECT_TRUE(did->isDeviceDim());
  EXPECT_EQ(did->getParallelType(), ParallelType::DIDx);
  ASSERT_NE(local->extent()->definition(), nullptr);
  EXPECT_EQ(
      local->extent()->definition()->as<BinaryOp>()->opType(),
      BinaryOpType::CeilDiv);
  EXPECT_EQ(in->getLoopDomain(), (std::vector<IterDomain*>{m, n}));
  EXPECT_FALSE(m->isParallelized());
  EXPECT_EQ(did->toString(), "iDIDx4{4}");
  EXPECT_THAT(
      in->domainsToString(),
      HasSubstr("Outer split: " + m->toString() + " by factor 4 -> iDIDx4{4}"));
}

TEST_F(AllocationDomainIrTest, AllocationSurvivesFusionCopy) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* in = makeContigConcreteTensor({6, 4});
    TensorView* out = set(in);
    fusion->addInput(in);
    fusion->addOutput(out);
    auto [outer, inner] = IterDomain::split(
        in->axis(0), IrBuilder::create<Val>(2, DataType::Index), true);
    in->setAllocationDomain({in->axis(1), outer, inner}, {false, true, true});
    out->split(1, 2);
  }

  Fusion copy(*fusion);
  ASSERT_EQ(copy.inputs().size(), 1u);
  ASSERT_EQ(copy.outputs().size(), 1u);
  auto* in = copy.inputs()[0]->as<TensorView>();
  auto* out = copy.outputs()[0]->as<TensorView>();
  auto* orig_in = fusion->inputs()[0]->as<TensorView>();
  EXPECT_NE(in, orig_in);
  EXPECT_EQ(in->fusion(), &copy);

  ASSERT_EQ(in->getAllocationDomain().size(), 3u);
  IterDomain* outer = in->getAllocationDomain()[1];
  IterDomain* inner = in->getAllocationDomain()[2];
  EXPECT_EQ(in->getAllocationDomain()[0], in->getLogicalDomain()[1]);
  ASSERT_NE(outer->definition(), nullptr);
  ASSERT_TRUE(outer->definition()->isA<Split>());
  auto* split = outer->definition()->as<Split>();
  EXPECT_EQ(split->fusion(), &copy);
  EXPECT_EQ(split->in(), in->getLogicalDomain()[0]);
  EXPECT_EQ(split->inner(), inner);
  EXPECT_EQ(split->factor()->value(), 2);
  EXPECT_TRUE(split->innerSplit());
  EXPECT_EQ(in->getContiguity(), flags({false, true, true}));
  EXPECT_EQ(in->getLoopDomain(), in->getLogicalDomain());
  EXPECT_EQ(in->getMemoryType(), MemoryType::Global);
  EXPECT_EQ(out->getLoopDomain().size(), 3u);
  EXPECT_FALSE(out->hasAllocation());
  ASSERT_TRUE(out->definition()->isA<LoadStoreOp>());
  EXPECT_EQ(out->definition()->as<LoadStoreOp>()->in(), in);

  // The printouts of the copy and the original are the same.
  EXPECT_EQ(copy.toString(), fusion->toString());
}

TEST_F(AllocationDomainIrTest, UnshardedConsumerOfShardedInputIsRejected) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  auto [did, local] = IterDomain::split(
      in->axis(0), IrBuilder::create<Val>(2, DataType::Index), false);
  did->parallelize(ParallelType::DIDx);
  in->setAllocationDomain({did, local, in->axis(1)}, true);
  // The output is not sharded: every device would need all rows.
  EXPECT_THAT(
      [&] { generateCudaKernel(fusion.get()); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("is sharded across devices"),
          HasSubstr("needs a collective"))));
}

// ----------------------------------------------------------------------------
// On the GPU: fusions with split, permuted and sharded allocations run
// through FusionExecutorCache and match ATen.

class AllocationDomainTest : public FuserTest {};

namespace {

template <typename F>
std::string runtimeErrorOf(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no user error>";
}

} // namespace

TEST_F(AllocationDomainTest, InputAllocationIsSplit_Concrete) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());

  TensorView* in = makeContigConcreteTensor({6});
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);

  auto [outer, inner] = IterDomain::split(
      in->axis(0), IrBuilder::create<Val>(2, DataType::Index), true);
  in->setAllocationDomain({outer, inner}, true);

  FusionExecutorCache executor_cache(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor in_tensor = at::randn({6}, options);
  auto out_tensors = executor_cache.runFusionWithInputs({in_tensor});

  testValidate(
      executor_cache.fusion(), out_tensors, {in_tensor}, __LINE__, __FILE__);
}

TEST_F(AllocationDomainTest, SymbolicInputAllocationSplitByFour) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(1);
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  auto [outer, inner] = IterDomain::split(
      in->axis(0), IrBuilder::create<Val>(4, DataType::Index), true);
  in->setAllocationDomain({outer, inner}, true);

  FusionExecutorCache executor_cache(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  for (int64_t size : {int64_t(8), int64_t(4096), int64_t(1) << 20}) {
    at::Tensor in_tensor = at::randn({size}, options);
    auto outputs = executor_cache.runFusionWithInputs({in_tensor});
    testValidate(
        executor_cache.fusion(), outputs, {in_tensor}, __LINE__, __FILE__);
    EXPECT_TRUE(at::equal(outputs[0], in_tensor));
  }
}

TEST_F(AllocationDomainTest, TwoDimensionalSplitAllocationPointwise) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2); // [M, N]
  fusion->addInput(in);
  TensorView* out =
      add(mul(in, IrBuilder::create<Val>(2.0)), IrBuilder::create<Val>(1.0));
  fusion->addOutput(out);
  const auto& l = in->getLogicalDomain();
  auto [outer, inner] =
      IterDomain::split(l[0], IrBuilder::create<Val>(4, DataType::Index), true);
  in->setAllocationDomain({outer, inner, l[1]}, true); // [M/4, 4, N]

  FusionExecutorCache executor_cache(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor in_tensor = at::randn({64, 33}, options);
  auto outputs = executor_cache.runFusionWithInputs({in_tensor});
  testValidate(
      executor_cache.fusion(), outputs, {in_tensor}, __LINE__, __FILE__);
}

TEST_F(AllocationDomainTest, OutputAllocationIsSplit) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = relu(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  auto [outer, inner] = IterDomain::split(
      out->axis(1), IrBuilder::create<Val>(8, DataType::Index), true);
  out->setAllocationDomain({out->axis(0), outer, inner}, true);

  FusionExecutorCache executor_cache(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor in_tensor = at::randn({5, 64}, options);
  auto outputs = executor_cache.runFusionWithInputs({in_tensor});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].sizes(), in_tensor.sizes());
  EXPECT_TRUE(outputs[0].is_contiguous());
  testValidate(
      executor_cache.fusion(), outputs, {in_tensor}, __LINE__, __FILE__);
}

TEST_F(AllocationDomainTest, NhwcInput) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(4); // NCHW logical
  TensorView* out = relu(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  const auto& l = in->getLogicalDomain();
  in->setAllocationDomain({l[0], l[2], l[3], l[1]}, true);

  FusionExecutorCache executor_cache(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor nhwc = at::randn({2, 3, 4, 5}, options)
                        .contiguous(at::MemoryFormat::ChannelsLast);
  auto outputs = executor_cache.runFusionWithInputs({nhwc});
  testValidate(executor_cache.fusion(), outputs, {nhwc}, __LINE__, __FILE__);

  at::Tensor nchw = at::randn({2, 3, 4, 5}, options);
  std::string message =
      runtimeErrorOf([&] { executor_cache.runFusionWithInputs({nchw}); });
  EXPECT_THAT(message, HasSubstr("Input 0"));
  EXPECT_THAT(message, HasSubstr("channels_last"));
  // The cache is still usable.
  outputs = executor_cache.runFusionWithInputs({nhwc});
  testValidate(executor_cache.fusion(), outputs, {nhwc}, __LINE__, __FILE__);
}

TEST_F(AllocationDomainTest, NonDivisibleSplitRejectedThenValidRuns) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(1);
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  auto [outer, inner] = IterDomain::split(
      in->axis(0), IrBuilder::create<Val>(4, DataType::Index), true);
  in->setAllocationDomain({outer, inner}, true);

  FusionExecutorCache executor_cache(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor bad = at::randn({10}, options);
  std::string message =
      runtimeErrorOf([&] { executor_cache.runFusionWithInputs({bad}); });
  EXPECT_THAT(message, HasSubstr("divisible"));
  EXPECT_THAT(message, HasSubstr("Input 0"));
  at::Tensor good = at::randn({12}, options);
  auto outputs = executor_cache.runFusionWithInputs({good});
  testValidate(executor_cache.fusion(), outputs, {good}, __LINE__, __FILE__);
}

TEST_F(AllocationDomainTest, RankAndDtypeMismatchRejected) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = neg(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  FusionExecutorCache executor_cache(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  std::string rank_message = runtimeErrorOf([&] {
    executor_cache.runFusionWithInputs({at::randn({4, 4, 4}, options)});
  });
  EXPECT_THAT(rank_message, HasSubstr("rank"));
  std::string dtype_message = runtimeErrorOf([&] {
    executor_cache.runFusionWithInputs(
        {at::randn({4, 4}, options.dtype(at::kHalf))});
  });
  EXPECT_THAT(dtype_message, HasSubstr("dtype"));
  at::Tensor good = at::randn({4, 4}, options);
  auto outputs = executor_cache.runFusionWithInputs({good});
  testValidate(executor_cache.fusion(), outputs, {good}, __LINE__, __FILE__);
}

TEST_F(AllocationDomainTest, SameSignatureReusesRuntime) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addOutput(add(a, b));
  FusionExecutorCache executor_cache(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor a0 = at::randn({32, 48}, options);
  at::Tensor b0 = at::randn({32, 48}, options);
  auto out0 = executor_cache.runFusionWithInputs({a0, b0});
  FusionKernelRuntime* first = executor_cache.getMostRecentKernelRuntime();
  at::Tensor a1 = at::randn({32, 48}, options);
  at::Tensor b1 = at::randn({32, 48}, options);
  auto out1 = executor_cache.runFusionWithInputs({a1, b1});
  EXPECT_EQ(executor_cache.getMostRecentKernelRuntime(), first);
  EXPECT_EQ(executor_cache.numRuntimes(), 1u);
  EXPECT_EQ(first->runCount(), 2);
  testValidate(executor_cache.fusion(), out1, {a1, b1}, __LINE__, __FILE__);
  EXPECT_FALSE(first->kernelCode().empty());
}

TEST_F(AllocationDomainTest, ShardedInputRankLocalShard) {
  // One rank's view of logical [M, N] sharded on DIDx{2}: the kernel sees
  // the local M/2 rows and writes the local M/2 rows of the output.
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  for (TensorView* tv : {in, out}) {
    auto [did, local] = IterDomain::split(
        tv->axis(0), IrBuilder::create<Val>(2, DataType::Index), false);
    did->parallelize(ParallelType::DIDx);
    tv->setAllocationDomain({did, local, tv->axis(1)}, true);
  }
  out->split(0, 2, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::DIDx);

  FusionExecutorCache executor_cache(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor shard = at::randn({4, 6}, options); // M = 8 globally
  auto outputs = executor_cache.runFusionWithInputs({shard});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].sizes(), shard.sizes());
  EXPECT_TRUE(at::equal(outputs[0], shard));
}

} // namespace fuser
