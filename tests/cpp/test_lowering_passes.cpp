// Single lowering passes, before and after (doc/design.md §5): each test
// runs the passes before the one under test, checks the kernel IR it gets,
// runs that one pass and checks what it made of it. The lowering runs its
// analysis phase when it is constructed, so passes run one by one.
#include <device_lower/kernel_ir.h>
#include <device_lower/lower.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <tests/cpp/utils.h>
#include <transform/inlining.h>
#include <transform/propagator.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

namespace fuser {

class LoweringPassTest : public FuserIrTest {};

namespace {

// T2 = set(relu(T0)) over [8], split by 4, the relu inlined at 1: its
// buffer spans the inner 4. With `cached_input`, over [6] (the split
// leaves 2 lanes past the end), the relu reads a register copy of T0
// (inlined at 1 too): T3 = set(relu(set(T0))).
std::unique_ptr<Fusion> splitReluCopy(bool cached_input = false) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({cached_input ? 6 : 8});
  fusion->addInput(in);
  TensorView* cached = cached_input ? set(in) : in;
  TensorView* r = relu(cached);
  TensorView* out = set(r);
  fusion->addOutput(out);
  out->split(0, 4);
  TransformPropagator propagator(out);
  MaxLogicalDomainInfoSpanningTree(out).traverse(&propagator);
  if (cached_input) {
    cached->inlineAt(1);
  }
  r->inlineAt(1);
  return fusion;
}

// Runs the passes of `lower`'s list named `names` on `exprs` in order and
// prints the result.
std::string after(
    GpuLower& lower, const std::vector<std::string>& names,
    std::vector<Expr*>& exprs) {
  const auto passes = lower.passes();
  for (const std::string& name : names) {
    auto it = std::find_if(passes.begin(), passes.end(), [&](const auto& p) {
      return p.first == name;
    });
    if (it == passes.end()) {
      ADD_FAILURE() << "no pass " << name;
      return "";
    }
    exprs = it->second(exprs);
  }
  return kir::toString(exprs);
}

// `fusion`'s kernel IR after placePredicates and the passes before it.
std::string afterPlacePredicates(std::unique_ptr<Fusion> fusion) {
  GpuLower lower(fusion.get());
  FusionGuard fg(lower.fusion());
  std::vector<Expr*> exprs = lower.fusion()->exprs();
  after(
      lower, {"sortExprsForInlining", "generateLoopNests", "insertAllocations"},
      exprs);
  return after(lower, {"placePredicates"}, exprs);
}

} // namespace

// insertAllocations declares the relu's buffer at its inline depth, before
// the loop it is computed in, sized by the axes right of it. (The copy's
// inner loop runs over the relu's ID: loop promotion, same extent.)
TEST_F(LoweringPassTest, InsertAllocations) {
  std::unique_ptr<Fusion> fusion = splitReluCopy();
  GpuLower lower(fusion.get());
  FusionGuard fg(lower.fusion());
  std::vector<Expr*> exprs = lower.fusion()->exprs();
  const std::string before =
      after(lower, {"sortExprsForInlining", "generateLoopNests"}, exprs);
  EXPECT_EQ(
      before,
      "FOR i8 in iS5{2}:\n"
      "  FOR i9 in iS6{4}:\n"
      "    T1_l_float[iS5{2}, iS6{4}] ca_pos( 1 )\n"
      "       = relu(T0_g_float[iS7{2}, iS8{4}])\n"
      "  FOR i10 in iS6{4}:\n"
      "    T2_g_float[iS3{2}, iS4{4}] produce_pos( 1 )\n"
      "       = Set(T1_l_float[iS5{2}, iS6{4}] ca_pos( 1 ))\n")
      << before;
  const std::string after_pass = after(lower, {"insertAllocations"}, exprs);
  EXPECT_EQ(
      after_pass,
      "FOR i8 in iS5{2}:\n"
      "  ALLOCATE T1 Local float[4]\n"
      "  FOR i9 in iS6{4}:\n"
      "    T1_l_float[iS5{2}, iS6{4}] ca_pos( 1 )\n"
      "       = relu(T0_g_float[iS7{2}, iS8{4}])\n"
      "  FOR i10 in iS6{4}:\n"
      "    T2_g_float[iS3{2}, iS4{4}] produce_pos( 1 )\n"
      "       = Set(T1_l_float[iS5{2}, iS6{4}] ca_pos( 1 ))\n")
      << after_pass;
}

// placePredicates puts each tensor expr under a branch whose predicate
// comes later; buffers stay outside.
TEST_F(LoweringPassTest, PlacePredicates) {
  const std::string after_pass = afterPlacePredicates(splitReluCopy());
  EXPECT_EQ(
      after_pass,
      "FOR i8 in iS5{2}:\n"
      "  ALLOCATE T1 Local float[4]\n"
      "  FOR i9 in iS6{4}:\n"
      "    IF <pending>:\n"
      "      T1_l_float[iS5{2}, iS6{4}] ca_pos( 1 )\n"
      "         = relu(T0_g_float[iS7{2}, iS8{4}])\n"
      "  FOR i10 in iS6{4}:\n"
      "    IF <pending>:\n"
      "      T2_g_float[iS3{2}, iS4{4}] produce_pos( 1 )\n"
      "         = Set(T1_l_float[iS5{2}, iS6{4}] ca_pos( 1 ))\n")
      << after_pass;
}

// An expr computing registers from registers (the relu between a cached
// load and the store) goes without a predicate: lanes past the tensor's
// end compute values that nothing stores. The load and the store keep
// theirs.
TEST_F(LoweringPassTest, PlacePredicatesLeavesRegisterOnlyExprsBare) {
  const std::string after_pass =
      afterPlacePredicates(splitReluCopy(/*cached_input=*/true));
  EXPECT_EQ(
      after_pass,
      "FOR i10 in iS8{2}:\n"
      "  ALLOCATE T1 Local float[4]\n"
      "  FOR i11 in iS9{4}:\n"
      "    IF <pending>:\n"
      "      T1_l_float[iS8{2}, iS9{4}] ca_pos( 1 )\n"
      "         = Set(T0_g_float[iS10{2}, iS11{4}])\n"
      "  ALLOCATE T2 Local float[4]\n"
      "  FOR i12 in iS9{4}:\n"
      "    T2_l_float[iS6{2}, iS7{4}] ca_pos( 1 ) produce_pos( 1 )\n"
      "       = relu(T1_l_float[iS8{2}, iS9{4}] ca_pos( 1 ))\n"
      "  FOR i13 in iS9{4}:\n"
      "    IF <pending>:\n"
      "      T3_g_float[iS4{2}, iS5{4}] produce_pos( 1 )\n"
      "         = Set(T2_l_float[iS6{2}, iS7{4}] ca_pos( 1 ) produce_pos( "
      "1 ))\n")
      << after_pass;
}

// cleanUpKernel lifts the bodies of branches that are always true and
// drops loops and branches left empty. The input is written by hand.
TEST_F(LoweringPassTest, CleanUpKernel) {
  std::unique_ptr<Fusion> fusion = splitReluCopy();
  GpuLower lower(fusion.get());
  Fusion* kernel_fusion = lower.fusion();
  FusionGuard fg(kernel_fusion);
  TensorView* in = kernel_fusion->inputs()[0]->as<TensorView>();
  TensorView* out = kernel_fusion->outputs()[0]->as<TensorView>();
  IterDomain* id = out->axis(1);
  Val* i = IrBuilder::create<Val>(DataType::Index);
  auto* kept = IrBuilder::create<kir::ForLoop>(
      id, i, kernel_fusion->zeroVal(),
      IrBuilder::create<Val>(4L, DataType::Index));
  auto* always = IrBuilder::create<kir::IfThenElse>(
      IrBuilder::create<Val>(ScalarValue(true), DataType::Bool));
  always->thenBody().push_back(IrBuilder::create<LoadStoreOp>(
      LoadStoreOpType::Set, IrBuilder::create<kir::TensorIndex>(out, i),
      IrBuilder::create<kir::TensorIndex>(in, i)));
  kept->body().push_back(always);
  auto* empty_loop = IrBuilder::create<kir::ForLoop>(
      id, IrBuilder::create<Val>(DataType::Index), kernel_fusion->zeroVal(),
      IrBuilder::create<Val>(4L, DataType::Index));
  auto* empty_branch = IrBuilder::create<kir::IfThenElse>(
      IrBuilder::create<Val>(DataType::Bool));
  std::vector<Expr*> exprs = {kept, empty_loop, empty_branch};
  const std::string before = kir::toString(exprs);
  EXPECT_EQ(
      before, "FOR " + i->toString() + " in " + id->toString() + ":\n" +
                  "  IF true:\n" + "    T2[" + i->toString() + "]\n" +
                  "       = Set(T0[" + i->toString() + "])\n" + "FOR " +
                  empty_loop->index()->toString() + " in " + id->toString() +
                  ":\n" + "IF " + empty_branch->predicate()->toString() + ":\n")
      << before;
  const std::string after_pass = after(lower, {"cleanUpKernel"}, exprs);
  EXPECT_EQ(
      after_pass, "FOR " + i->toString() + " in " + id->toString() + ":\n" +
                      "  T2[" + i->toString() + "]\n" + "     = Set(T0[" +
                      i->toString() + "])\n")
      << after_pass;
}

namespace {

// T2 = set(relu(T0)), T0 of rank 1 or 2 (symbolic extents, so no bound is
// proven), scheduled by `schedule` and propagated; the relu inlined beside
// the copy, and the axes `schedule` unrolled unrolled in both.
std::unique_ptr<Fusion> unrolledReluCopy(
    int64_t rank, const std::function<void(TensorView*)>& schedule) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(rank);
  fusion->addInput(in);
  TensorView* r = relu(in);
  TensorView* out = set(r);
  fusion->addOutput(out);
  schedule(out);
  TransformPropagator propagator(out);
  MaxLogicalDomainInfoSpanningTree(out).traverse(&propagator);
  for (int64_t i = 0; i < out->nDims(); ++i) {
    r->axis(i)->parallelize(out->axis(i)->getParallelType());
  }
  inlineMost(fusion.get());
  return fusion;
}

std::vector<Expr*> predicatedKernel(GpuLower& lower) {
  std::vector<Expr*> exprs = lower.fusion()->exprs();
  after(
      lower,
      {"sortExprsForInlining", "generateLoopNests", "insertAllocations",
       "placePredicates", "lowerIndices", "generatePredicates"},
      exprs);
  return exprs;
}

int64_t count(const std::string& text, const std::string& what) {
  int64_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

} // namespace

// unswitchUnrolledLoops tests the predicates of an unrolled nest once, at
// its last iteration (index 3): when they hold, a copy of the nest without
// branches runs; else the predicated nest.
TEST_F(LoweringPassTest, UnswitchUnrolledLoops) {
  std::unique_ptr<Fusion> fusion = unrolledReluCopy(1, [](TensorView* tv) {
    tv->split(0, 4, /*inner_split=*/false);
    tv->axis(0)->parallelize(ParallelType::Unroll);
  });
  GpuLower lower(fusion.get());
  FusionGuard fg(lower.fusion());
  std::vector<Expr*> exprs = predicatedKernel(lower);
  const std::string before = kir::toString(exprs);
  EXPECT_EQ(count(before, "IF "), 2) << before;
  EXPECT_EQ(count(before, "ELSE"), 0) << before;
  const std::string after_pass = after(lower, {"unswitchUnrolledLoops"}, exprs);
  ASSERT_EQ(exprs.size(), 1u) << after_pass;
  auto* branch = dynamic_cast<kir::IfThenElse*>(exprs[0]);
  ASSERT_NE(branch, nullptr) << after_pass;
  // One test for the relu and the copy (the same predicate), at i = 3.
  const std::string test = branch->predicate()->toInlineString();
  EXPECT_NE(test.find("( 3 * "), std::string::npos) << test;
  EXPECT_EQ(count(test, "<"), 1) << test;
  const std::string fast = kir::toString(branch->thenBody().exprs());
  const std::string slow = kir::toString(branch->elseBody().exprs());
  EXPECT_EQ(count(fast, "IF "), 0) << fast;
  EXPECT_EQ(count(fast, "= relu("), 1) << fast;
  EXPECT_EQ(count(fast, "= Set("), 1) << fast;
  EXPECT_EQ(slow, before) << slow;
}

// An index that wraps around as the unrolled index grows (the inner part
// of a merge, `m % n`) may be in range at the last iteration and not at
// an earlier one: that nest keeps its predicates.
TEST_F(LoweringPassTest, UnswitchKeepsNestsWhoseIndicesWrapAround) {
  // [A, B] -> [A * ceilDiv(B, 4) / 2, 2 (unrolled), 4]: row b's last
  // vector may overrun B while the next one, on the next row, does not.
  std::unique_ptr<Fusion> fusion = unrolledReluCopy(2, [](TensorView* tv) {
    tv->split(1, 4);
    tv->merge(0);
    tv->split(0, 2);
    tv->axis(1)->parallelize(ParallelType::Unroll);
  });
  GpuLower lower(fusion.get());
  FusionGuard fg(lower.fusion());
  std::vector<Expr*> exprs = predicatedKernel(lower);
  const std::string before = kir::toString(exprs);
  ASSERT_NE(before.find("%"), std::string::npos) << before;
  EXPECT_EQ(after(lower, {"unswitchUnrolledLoops"}, exprs), before);
}

// A nest whose predicates test a row (threadIdx.y past the last row: the
// same at every iteration of the nest) and a column (varying with the
// unrolled index): the predicated copy is split on the row's test, so that
// each copy tests only what varies within it. The copy for a row past
// the last keeps its writes under a false predicate.
TEST_F(LoweringPassTest, UnswitchSplitsThePredicatedNestOnInvariantTests) {
  // [A, B] -> [A/2 (BIDx), 2 (TIDy), 4 (unrolled), B/4 (TIDx)].
  std::unique_ptr<Fusion> fusion = unrolledReluCopy(2, [](TensorView* tv) {
    tv->split(0, 2);
    tv->split(2, 4, /*inner_split=*/false);
    tv->axis(0)->parallelize(ParallelType::BIDx);
    tv->axis(1)->parallelize(ParallelType::TIDy);
    tv->axis(2)->parallelize(ParallelType::Unroll);
    tv->axis(3)->parallelize(ParallelType::TIDx);
  });
  GpuLower lower(fusion.get());
  FusionGuard fg(lower.fusion());
  std::vector<Expr*> exprs = predicatedKernel(lower);
  const std::string before = kir::toString(exprs);
  ASSERT_EQ(count(before, "ELSE"), 0) << before;
  const std::string after_pass = after(lower, {"unswitchUnrolledLoops"}, exprs);
  kir::IfThenElse* branch = nullptr;
  std::function<void(const std::vector<Expr*>&)> find =
      [&](const std::vector<Expr*>& scope) {
        for (Expr* e : scope) {
          if (auto* b = dynamic_cast<kir::IfThenElse*>(e)) {
            branch = branch == nullptr ? b : branch;
          } else if (auto* loop = dynamic_cast<kir::ForLoop*>(e)) {
            find(loop->body().exprs());
          }
        }
      };
  find(exprs);
  ASSERT_NE(branch, nullptr) << after_pass;
  EXPECT_EQ(count(kir::toString(branch->thenBody().exprs()), "IF "), 0)
      << after_pass;
  // The predicated copy: one test of the row around two copies of the nest.
  const std::vector<Expr*>& slow = branch->elseBody().exprs();
  ASSERT_EQ(slow.size(), 1u) << after_pass;
  auto* row = dynamic_cast<kir::IfThenElse*>(slow[0]);
  ASSERT_NE(row, nullptr) << after_pass;
  const std::string row_test = row->predicate()->toInlineString();
  EXPECT_NE(row_test.find("threadIdx.y"), std::string::npos) << row_test;
  EXPECT_EQ(row_test.find("threadIdx.x"), std::string::npos) << row_test;
  // Row in range: only the columns are tested, in each copy of the relu
  // and the copy.
  const std::string in_range = kir::toString(row->thenBody().exprs());
  EXPECT_EQ(count(in_range, "IF "), 2) << in_range;
  for (size_t at = in_range.find("IF "); at != std::string::npos;
       at = in_range.find("IF ", at + 1)) {
    const std::string test = in_range.substr(at, in_range.find('\n', at) - at);
    EXPECT_EQ(test.find("threadIdx.y"), std::string::npos) << in_range;
  }
  EXPECT_EQ(count(in_range, "= relu("), 1) << in_range;
  // Row past the last: the same writes, none of them run.
  const std::string past = kir::toString(row->elseBody().exprs());
  EXPECT_EQ(count(past, "IF false"), 2) << past;
  EXPECT_EQ(count(past, "= relu("), 1) << past;
}

} // namespace fuser
