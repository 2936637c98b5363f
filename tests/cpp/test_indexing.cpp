// Indexing and predicates of lowered kernels (doc/design.md §5,
// doc/indexing.md).
//
// The main check runs hand-scheduled fusions through the CPU interpreter of
// kernel_ir_interpreter.h: every loop point of every thread, with the
// kernel arguments bound from layouts these tests define on their own (the
// strides an at::Tensor with that allocation layout has, computed here,
// not by fuser). For each global output it asserts that
//   (1) every element is written exactly once and nothing is written off
//       the allocation (past its end or into the gaps of a strided layout);
//   (2) the element at logical coordinate c holds what the fusion computes
//       at c, from the input elements at c under each input's own layout
//       (the interpreter's values name the elements they were computed
//       from, and offsets of inputs and outputs are both inverted through
//       the test's layouts); and the offset written at a loop point is the
//       one the output's layout gives the logical coordinate the test's
//       schedule assigns to that point;
//   (3) a loop point is predicated off exactly when its logical coordinate
//       is out of range (or, for a parallel loop launched wider than its
//       extent, when the thread index is past the loop).
// The kernels also print as expected and compile with NVRTC for sm_90.

#include <codegen/codegen.h>
#include <device_lower/lower.h>
#include <expr/evaluator.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/utils.h>
#include <tests/cpp/indexing_harness.h>
#include <tests/cpp/kernel_ir_interpreter.h>
#include <tests/cpp/utils.h>
#include <transform/inlining.h>
#include <transform/propagator.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;
using ::testing::Not;

class IndexingTest : public FuserIrTest {};

namespace {
// ---------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------

// The seed (doc/design.md §1): in = [i6], allocation [i6/2, 2] by the static
// split, loop untouched; out = set(in). With `contiguous` false the outer
// allocation axis has its own stride: the [3, 2] slice of a [3, 5] buffer.
IndexingCase seedCase(bool contiguous) {
  IndexingCase c;
  c.name = contiguous ? "seed" : "seed, outer axis non-contiguous";
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* in = makeContigConcreteTensor({6});
  TensorView* out = set(in);
  c.fusion->addInput(in);
  c.fusion->addOutput(out);
  auto [outer, inner] = IterDomain::split(in->axis(0), indexConst(2), true);
  if (contiguous) {
    in->setAllocationDomain({outer, inner}, true);
  } else {
    in->setAllocationDomain({outer, inner}, Contiguity{false, true});
  }
  c.layouts[in->name()] = BufferLayout{
      {6},
      {3, 2},
      rowMajorStrides(
          contiguous ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{3, 5}),
      [](const Coord& x) {
        return std::optional(std::vector<int64_t>{x[0] / 2, x[0] % 2});
      }};
  c.layouts[out->name()] = plainLayout({6});
  c.outputs[out->name()] = {
      [](const std::vector<int64_t>& loop) { return Coord{loop.at(0)}; },
      [in](const Coord& x) { return element(in, x); }};
  return c;
}

// in = [M, N] with allocation [M/4, 4, N]; out = neg(in), loop untouched.
// Non-contiguous: the outer axis is the [2, 4, 6] slice of a [2, 5, 6]
// buffer.
IndexingCase splitAllocationCase(bool contiguous) {
  constexpr int64_t M = 8, N = 6;
  IndexingCase c;
  c.name = contiguous ? "[M/4, 4, N]" : "[M/4, 4, N], outer non-contiguous";
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = neg(in);
  c.fusion->addInput(in);
  c.fusion->addOutput(out);
  IterDomain* n = in->axis(1);
  auto [outer, inner] = IterDomain::split(in->axis(0), indexConst(4), true);
  if (contiguous) {
    in->setAllocationDomain({outer, inner, n}, true);
  } else {
    in->setAllocationDomain({outer, inner, n}, Contiguity{false, true, true});
  }
  c.layouts[in->name()] = BufferLayout{
      {M, N},
      {M / 4, 4, N},
      rowMajorStrides(
          contiguous ? std::vector<int64_t>{M / 4, 4, N}
                     : std::vector<int64_t>{M / 4, 5, N}),
      [](const Coord& x) {
        return std::optional(std::vector<int64_t>{x[0] / 4, x[0] % 4, x[1]});
      }};
  c.layouts[out->name()] = plainLayout({M, N});
  c.outputs[out->name()] = {
      [](const std::vector<int64_t>& loop) {
        return Coord{loop.at(0), loop.at(1)};
      },
      [in](const Coord& x) { return negOf(element(in, x)); }};
  return c;
}

// NCHW logical, NHWC allocation for the input (and, with `nhwc_output`,
// for the output too); out = relu(in), loop untouched.
IndexingCase nhwcCase(bool nhwc_output) {
  const std::vector<int64_t> sizes = {2, 3, 4, 5};
  IndexingCase c;
  c.name = nhwc_output ? "NHWC -> NHWC" : "NHWC -> NCHW";
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* in = makeContigTensor(4);
  TensorView* out = relu(in);
  c.fusion->addInput(in);
  c.fusion->addOutput(out);
  const auto l = in->getLogicalDomain();
  in->setAllocationDomain({l[0], l[2], l[3], l[1]}, true);
  BufferLayout nhwc{
      sizes,
      {sizes[0], sizes[2], sizes[3], sizes[1]},
      rowMajorStrides({sizes[0], sizes[2], sizes[3], sizes[1]}),
      [](const Coord& x) {
        return std::optional(std::vector<int64_t>{x[0], x[2], x[3], x[1]});
      }};
  c.layouts[in->name()] = nhwc;
  if (nhwc_output) {
    const auto o = out->getLogicalDomain();
    out->setAllocationDomain({o[0], o[2], o[3], o[1]}, true);
    c.layouts[out->name()] = nhwc;
  } else {
    c.layouts[out->name()] = plainLayout(sizes);
  }
  c.outputs[out->name()] = {
      [](const std::vector<int64_t>& loop) { return Coord(loop); },
      [in](const Coord& x) { return reluOf(element(in, x)); }};
  return c;
}

// out = set(in) with the output allocated as [M/4, N, 4] (a split of its
// logical M, the inner part moved innermost); loop untouched.
IndexingCase splitOutputAllocationCase() {
  constexpr int64_t M = 8, N = 6;
  IndexingCase c;
  c.name = "output allocation [M/4, N, 4]";
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = set(in);
  c.fusion->addInput(in);
  c.fusion->addOutput(out);
  IterDomain* n = out->axis(1);
  auto [outer, inner] = IterDomain::split(out->axis(0), indexConst(4), true);
  out->setAllocationDomain({outer, n, inner}, true);
  c.layouts[in->name()] = plainLayout({M, N});
  c.layouts[out->name()] = BufferLayout{
      {M, N},
      {M / 4, N, 4},
      rowMajorStrides({M / 4, N, 4}),
      [](const Coord& x) {
        return std::optional(std::vector<int64_t>{x[0] / 4, x[1], x[0] % 4});
      }};
  c.outputs[out->name()] = {
      [](const std::vector<int64_t>& loop) {
        return Coord{loop.at(0), loop.at(1)};
      },
      [in](const Coord& x) { return element(in, x); }};
  return c;
}

// The sharded input of doc/design.md §1: in = [M, N] with allocation
// [DIDx{D}, M/D, N] (an outer split by D), loop untouched; out = relu(in)
// sharded the same way in loop and allocation. The kernel runs on rank
// `rank`: logical sizes are global, each tensor holds the rank's M/D rows.
IndexingCase shardedCase(int64_t rank) {
  constexpr int64_t M = 8, N = 6, D = 2;
  IndexingCase c;
  c.name = "sharded [DIDx{D}, M/D, N], rank " + std::to_string(rank);
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = relu(in);
  c.fusion->addInput(in);
  c.fusion->addOutput(out);
  {
    IterDomain* n = in->axis(1);
    auto [did, local] = IterDomain::split(in->axis(0), indexConst(D), false);
    did->parallelize(ParallelType::DIDx);
    in->setAllocationDomain({did, local, n}, true);
  }
  out->split(0, D, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::DIDx);
  out->setAllocationDomain(out->getLoopDomain(), true);
  // The rank's shard: rows [rank * M/D, (rank + 1) * M/D).
  BufferLayout shard{
      {M, N},
      {1, M / D, N},
      rowMajorStrides({1, M / D, N}),
      [rank](const Coord& x) -> std::optional<std::vector<int64_t>> {
        if (x[0] / (M / D) != rank) {
          return std::nullopt;
        }
        return std::vector<int64_t>{0, x[0] % (M / D), x[1]};
      }};
  c.layouts[in->name()] = shard;
  c.layouts[out->name()] = shard;
  c.outputs[out->name()] = {
      // The device loop is this rank.
      [rank](const std::vector<int64_t>& loop) {
        EXPECT_EQ(loop.at(0), 0);
        return Coord{rank * (M / D) + loop.at(1), loop.at(2)};
      },
      [in](const Coord& x) { return reluOf(element(in, x)); }};
  return c;
}

// How the input of mergeSplit128Case and vectorizeCase is laid out.
enum class InputLayout {
  Plain,       // allocation = logical, contiguous
  SplitM,      // [M, N] allocated as [M/4, 4, N], contiguous
  Nhwc,        // [N, C, H, W] allocated as [N, H, W, C], contiguous
  StridedRows, // [M, N], rows 4 elements apart more than N (contiguity
               // {false, true})
};

// Gives `in` (of `sizes`) the allocation of `layout` and records the
// matching BufferLayout in `c`.
void setInputLayout(
    IndexingCase& c, TensorView* in, const std::vector<int64_t>& sizes,
    InputLayout layout) {
  switch (layout) {
    case InputLayout::Plain:
      c.layouts[in->name()] = plainLayout(sizes);
      return;
    case InputLayout::SplitM: {
      IterDomain* n = in->axis(1);
      auto [outer, inner] = IterDomain::split(in->axis(0), indexConst(4), true);
      in->setAllocationDomain({outer, inner, n}, true);
      c.layouts[in->name()] = BufferLayout{
          sizes,
          {sizes[0] / 4, 4, sizes[1]},
          rowMajorStrides({sizes[0] / 4, 4, sizes[1]}),
          [](const Coord& x) {
            return std::optional(
                std::vector<int64_t>{x[0] / 4, x[0] % 4, x[1]});
          }};
      return;
    }
    case InputLayout::Nhwc: {
      const auto l = in->getLogicalDomain();
      in->setAllocationDomain({l[0], l[2], l[3], l[1]}, true);
      c.layouts[in->name()] = BufferLayout{
          sizes,
          {sizes[0], sizes[2], sizes[3], sizes[1]},
          rowMajorStrides({sizes[0], sizes[2], sizes[3], sizes[1]}),
          [](const Coord& x) {
            return std::optional(std::vector<int64_t>{x[0], x[2], x[3], x[1]});
          }};
      return;
    }
    case InputLayout::StridedRows:
      in->setContiguity(Contiguity{false, true});
      // The [M, N] slice of an [M, N + 4] tensor.
      c.layouts[in->name()] = BufferLayout{
          sizes, sizes, rowMajorStrides({sizes[0], sizes[1] + 4}),
          [](const Coord& x) { return std::optional(x); }};
      return;
  }
}

std::string layoutName(InputLayout layout) {
  switch (layout) {
    case InputLayout::Plain:
      return "plain input";
    case InputLayout::SplitM:
      return "input [M/4, 4, N]";
    case InputLayout::Nhwc:
      return "NHWC input";
    case InputLayout::StridedRows:
      return "input with strided rows";
  }
  return "?";
}

// out = relu(in) * 2 with caches; the output is scheduled merge all ->
// split by 128 -> [BIDx, TIDx] and that schedule propagated, unlike the
// input's allocation. 300 elements: three blocks, a ragged last one.
IndexingCase mergeSplit128Case(InputLayout input_layout, bool caches) {
  IndexingCase c;
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  const std::vector<int64_t> sizes = input_layout == InputLayout::Nhwc
                                         ? std::vector<int64_t>{2, 3, 5, 10}
                                         : std::vector<int64_t>{12, 25};
  TensorView* in = makeContigTensor(static_cast<int64_t>(sizes.size()));
  TensorView* out = mul(relu(in), IrBuilder::create<Val>(2.0));
  c.fusion->addInput(in);
  c.fusion->addOutput(out);
  c.name = "merge/split 128, " + layoutName(input_layout) +
           (caches ? "" : ", no caches");
  setInputLayout(c, in, sizes, input_layout);
  c.layouts[out->name()] = plainLayout(sizes);
  if (caches) {
    scheduler_utils::cacheInputs(c.fusion.get(), false);
    scheduler_utils::cacheAndForkOutputs(c.fusion.get(), false);
  }
  while (out->nDims() > 1) {
    out->merge(0);
  }
  out->split(0, 128);
  out->axis(0)->parallelize(ParallelType::BIDx);
  out->axis(1)->parallelize(ParallelType::TIDx);
  propagateAndInline(c.fusion.get(), out);
  c.outputs[out->name()] = {
      [sizes](const std::vector<int64_t>& loop) {
        return unravel(loop.at(0) * 128 + loop.at(1), sizes);
      },
      [in](const Coord& x) { return relu2Of(element(in, x)); }};
  return c;
}

// Non-divisible loop splits: a 1-D extent 10 split by 4 (inner split,
// serial), the same as an outer split by 4, and a 2-D [3, 10] whose inner
// axis is split by 4 with the inner part on TIDx.
enum class RaggedSplit { Inner1D, Outer1D, Inner2DThreads };

IndexingCase nonDivisibleCase(RaggedSplit kind) {
  IndexingCase c;
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  const bool two_d = kind == RaggedSplit::Inner2DThreads;
  const std::vector<int64_t> sizes =
      two_d ? std::vector<int64_t>{3, 10} : std::vector<int64_t>{10};
  TensorView* in = makeContigTensor(static_cast<int64_t>(sizes.size()));
  TensorView* out = set(in);
  c.fusion->addInput(in);
  c.fusion->addOutput(out);
  c.layouts[in->name()] = plainLayout(sizes);
  c.layouts[out->name()] = plainLayout(sizes);
  std::function<Coord(const std::vector<int64_t>&)> logical_at;
  switch (kind) {
    case RaggedSplit::Inner1D:
      c.name = "10 split by 4";
      out->split(0, 4);
      logical_at = [](const std::vector<int64_t>& loop) {
        return Coord{loop.at(0) * 4 + loop.at(1)};
      };
      break;
    case RaggedSplit::Outer1D:
      c.name = "10 outer-split by 4";
      out->split(0, 4, /*inner_split=*/false); // [4, ceilDiv(10, 4) = 3]
      logical_at = [](const std::vector<int64_t>& loop) {
        return Coord{loop.at(0) * 3 + loop.at(1)};
      };
      break;
    case RaggedSplit::Inner2DThreads:
      c.name = "[3, 10], inner split by 4 on TIDx";
      out->split(1, 4);
      out->axis(2)->parallelize(ParallelType::TIDx);
      logical_at = [](const std::vector<int64_t>& loop) {
        return Coord{loop.at(0), loop.at(1) * 4 + loop.at(2)};
      };
      break;
  }
  c.outputs[out->name()] = {
      logical_at, [in](const Coord& x) { return element(in, x); }};
  return c;
}

// Two outputs computed in separate loop nests whose TIDx loops differ:
// out1 = neg(a), a = [10] split by 4, and out2 = neg(b), b = [12] split by
// 8, the inner parts on TIDx. The block is launched with 8 threads, so
// threads 4..7 must skip out1 even where 4 * i + threadIdx.x is in range.
IndexingCase differentThreadExtentsCase() {
  IndexingCase c;
  c.name = "two nests, TIDx{4} and TIDx{8}";
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* a = makeContigTensor(1);
  TensorView* b = makeContigTensor(1);
  c.fusion->addInput(a);
  c.fusion->addInput(b);
  TensorView* out1 = neg(a);
  TensorView* out2 = neg(b);
  c.fusion->addOutput(out1);
  c.fusion->addOutput(out2);
  out1->split(0, 4);
  out1->axis(1)->parallelize(ParallelType::TIDx);
  out2->split(0, 8);
  out2->axis(1)->parallelize(ParallelType::TIDx);
  c.layouts[a->name()] = plainLayout({10});
  c.layouts[b->name()] = plainLayout({12});
  c.layouts[out1->name()] = plainLayout({10});
  c.layouts[out2->name()] = plainLayout({12});
  c.outputs[out1->name()] = {
      [](const std::vector<int64_t>& loop) {
        return Coord{loop.at(0) * 4 + loop.at(1)};
      },
      [a](const Coord& x) { return negOf(element(a, x)); }};
  c.outputs[out2->name()] = {
      [](const std::vector<int64_t>& loop) {
        return Coord{loop.at(0) * 8 + loop.at(1)};
      },
      [b](const Coord& x) { return negOf(element(b, x)); }};
  return c;
}

// out[i, j] = a[i, j] + bias[j] (bias broadcast along i), with caches;
// scheduled 2-D with the inner axis split by 4.
//  - Not inner-first: [BIDx{M}, N/4, TIDx{4}]. The bias cache cannot be
//    inlined (its outer loop N/4 does not map to the broadcast's BIDx), so
//    it is computed in a loop nest of its own before the nest that the other
//    exprs share; sizes are concrete so that its register buffer (N/4 per
//    thread) has a constant size.
//  - Inner-first: [BIDx{N/4}, TIDx{4}, M] with symbolic sizes; everything,
//    the bias cache included, is inlined into one nest.
IndexingCase broadcastBiasCase(bool inner_first) {
  constexpr int64_t M = 5, N = 10;
  IndexingCase c;
  c.name = inner_first ? "a + broadcast(bias), [BIDx{N/4}, TIDx{4}, M]"
                       : "a + broadcast(bias), [BIDx{M}, N/4, TIDx{4}]";
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* a =
      inner_first ? makeContigTensor(2) : makeContigConcreteTensor({M, N});
  TensorView* bias =
      inner_first ? makeContigTensor(1) : makeContigConcreteTensor({N});
  c.fusion->addInput(a);
  c.fusion->addInput(bias);
  TensorView* b = broadcast(bias, {true, false});
  TensorView* out = add(a, b);
  c.fusion->addOutput(out);
  auto caches = scheduler_utils::cacheInputs(c.fusion.get(), false);
  scheduler_utils::cacheAndForkOutputs(c.fusion.get(), false);
  out->split(1, 4); // [M, ceilDiv(N, 4), 4]
  std::function<Coord(const std::vector<int64_t>&)> logical_at;
  if (inner_first) {
    out->reorder({{0, 2}}); // [ceilDiv(N, 4), 4, M]
    out->axis(0)->parallelize(ParallelType::BIDx);
    out->axis(1)->parallelize(ParallelType::TIDx);
    logical_at = [](const std::vector<int64_t>& loop) {
      return Coord{loop.at(2), loop.at(0) * 4 + loop.at(1)};
    };
  } else {
    out->axis(0)->parallelize(ParallelType::BIDx);
    out->axis(2)->parallelize(ParallelType::TIDx);
    logical_at = [](const std::vector<int64_t>& loop) {
      return Coord{loop.at(0), loop.at(1) * 4 + loop.at(2)};
    };
  }
  propagateAndInline(c.fusion.get(), out);
  EXPECT_EQ(caches.at(1)->getComputeAtPosition(), inner_first ? 2 : 0);
  c.layouts[a->name()] = plainLayout({M, N});
  c.layouts[bias->name()] = plainLayout({N});
  c.layouts[out->name()] = plainLayout({M, N});
  c.outputs[out->name()] = {logical_at, [a, bias](const Coord& x) {
                              return sumOf(
                                  element(a, x), element(bias, {x[1]}));
                            }};
  return c;
}

// The vectorize example: out = relu(in) over `sizes` elements, caches,
// out->split(0, 4)->split(0, 128) (after merging all axes), propagated,
// [BIDx, TIDx, V4] on the input cache and the output, inlineMost. 1200
// elements = 300 vectors: three blocks, a ragged last one.
IndexingCase vectorizeCase(
    const std::vector<int64_t>& sizes,
    InputLayout input_layout = InputLayout::Plain) {
  IndexingCase c;
  c.name = "vectorized, " + std::to_string(sizes.size()) + "-D, " +
           layoutName(input_layout);
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* in = makeContigTensor(static_cast<int64_t>(sizes.size()));
  TensorView* out = relu(in);
  c.fusion->addInput(in);
  c.fusion->addOutput(out);
  setInputLayout(c, in, sizes, input_layout);
  auto caches = scheduler_utils::cacheInputs(c.fusion.get(), false);
  scheduler_utils::cacheAndForkOutputs(c.fusion.get(), false);
  while (out->nDims() > 1) {
    out->merge(0);
  }
  out->split(0, 4)->split(0, 128); // [ceilDiv(ceilDiv(n, 4), 128), 128, 4]
  TransformPropagator propagator(out);
  MaxLogicalDomainInfoSpanningTree(out).traverse(&propagator);
  out->axis(0)->parallelize(ParallelType::BIDx);
  out->axis(1)->parallelize(ParallelType::TIDx);
  scheduler_utils::parallelizeAllLike(out);
  caches.at(0)->axis(2)->parallelize(ParallelType::Vectorize);
  out->axis(2)->parallelize(ParallelType::Vectorize);
  inlineMost(c.fusion.get());
  c.layouts[out->name()] = plainLayout(sizes);
  c.outputs[out->name()] = {
      [sizes](const std::vector<int64_t>& loop) {
        return unravel((loop.at(0) * 128 + loop.at(1)) * 4 + loop.at(2), sizes);
      },
      [in](const Coord& x) { return reluOf(element(in, x)); }};
  return c;
}

// Vectorizing along the rows of an input whose rows are strided
// (contiguity {false, true}, rows N + 4 apart): [M, N] -> [BIDx{M},
// TIDx{N/4}, V4]. The lanes walk the contiguous innermost axis, so this is
// legal.
IndexingCase vectorizeRowsCase() {
  constexpr int64_t M = 5, N = 24;
  IndexingCase c;
  c.name = "vectorized rows, " + layoutName(InputLayout::StridedRows);
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = relu(in);
  c.fusion->addInput(in);
  c.fusion->addOutput(out);
  setInputLayout(c, in, {M, N}, InputLayout::StridedRows);
  auto caches = scheduler_utils::cacheInputs(c.fusion.get(), false);
  scheduler_utils::cacheAndForkOutputs(c.fusion.get(), false);
  out->split(1, 4); // [M, ceilDiv(N, 4), 4]
  TransformPropagator propagator(out);
  MaxLogicalDomainInfoSpanningTree(out).traverse(&propagator);
  out->axis(0)->parallelize(ParallelType::BIDx);
  out->axis(1)->parallelize(ParallelType::TIDx);
  scheduler_utils::parallelizeAllLike(out);
  caches.at(0)->axis(2)->parallelize(ParallelType::Vectorize);
  out->axis(2)->parallelize(ParallelType::Vectorize);
  inlineMost(c.fusion.get());
  c.layouts[out->name()] = plainLayout({M, N});
  c.outputs[out->name()] = {
      [](const std::vector<int64_t>& loop) {
        return Coord{loop.at(0), loop.at(1) * 4 + loop.at(2)};
      },
      [in](const Coord& x) { return reluOf(element(in, x)); }};
  return c;
}

// out[i, j] = relu(a[i, j] + bias[j]) * 2 with caches, scheduled 1-D:
// merge all -> split by 128 -> [BIDx, TIDx], propagated (the broadcast's
// loop is a merge of its broadcast axis). 300 elements.
IndexingCase broadcastBiasMergedCase() {
  constexpr int64_t M = 12, N = 25;
  IndexingCase c;
  c.name = "a + broadcast(bias), merge/split 128";
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* a = makeContigTensor(2);
  TensorView* bias = makeContigTensor(1);
  c.fusion->addInput(a);
  c.fusion->addInput(bias);
  TensorView* b = broadcast(bias, {true, false});
  TensorView* out = mul(relu(add(a, b)), IrBuilder::create<Val>(2.0));
  c.fusion->addOutput(out);
  scheduler_utils::cacheInputs(c.fusion.get(), false);
  scheduler_utils::cacheAndForkOutputs(c.fusion.get(), false);
  out->merge(0)->split(0, 128);
  out->axis(0)->parallelize(ParallelType::BIDx);
  out->axis(1)->parallelize(ParallelType::TIDx);
  propagateAndInline(c.fusion.get(), out);
  c.layouts[a->name()] = plainLayout({M, N});
  c.layouts[bias->name()] = plainLayout({N});
  c.layouts[out->name()] = plainLayout({M, N});
  c.outputs[out->name()] = {
      [](const std::vector<int64_t>& loop) {
        return unravel(loop.at(0) * 128 + loop.at(1), {M, N});
      },
      [a, bias](const Coord& x) {
        return relu2Of(sumOf(element(a, x), element(bias, {x[1]})));
      }};
  return c;
}

// y[i, j] = x[i, j] - sum_k x[i, k] with caches, loops untouched, inlined
// as far as allowed: the sum is computed per row before the row's
// elements read it, so the cache of x is shared with the row loop only and
// holds the whole row (a constant N, so that the register buffer has a
// constant size).
IndexingCase normalizationCase() {
  constexpr int64_t M = 6, N = 10;
  IndexingCase c;
  c.name = "x - broadcast(sum(x, {1}))";
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* x = makeContigConcreteTensor({M, N});
  c.fusion->addInput(x);
  TensorView* s = sum(x, {1});
  TensorView* y = sub(x, broadcast(s, {false, true}));
  c.fusion->addOutput(y);
  auto caches = scheduler_utils::cacheInputs(c.fusion.get(), false);
  scheduler_utils::cacheAndForkOutputs(c.fusion.get(), false);
  inlineMost(c.fusion.get());
  // Shared with the row loop only: the sum's loop over the row ends before
  // the subtraction's begins.
  EXPECT_EQ(caches.at(0)->getComputeAtPosition(), 1);
  c.layouts[x->name()] = plainLayout({M, N});
  c.layouts[y->name()] = plainLayout({M, N});
  c.outputs[y->name()] = {
      [](const std::vector<int64_t>& loop) {
        return Coord{loop.at(0), loop.at(1)};
      },
      [x](const Coord& at) {
        Value row_sum{0.0, {}}; // summed in the kernel's order
        for (int64_t k = 0; k < N; ++k) {
          row_sum = sumOf(row_sum, element(x, {at[0], k}));
        }
        const Value here = element(x, at);
        return computed(here.number - row_sum.number, {here, row_sum});
      }};
  return c;
}

// Every case, for the NVRTC test.
std::vector<IndexingCase> allCases() {
  std::vector<IndexingCase> cases;
  cases.push_back(seedCase(true));
  cases.push_back(seedCase(false));
  cases.push_back(splitAllocationCase(true));
  cases.push_back(splitAllocationCase(false));
  cases.push_back(nhwcCase(false));
  cases.push_back(nhwcCase(true));
  cases.push_back(splitOutputAllocationCase());
  cases.push_back(shardedCase(1));
  for (InputLayout layout :
       {InputLayout::Plain, InputLayout::SplitM, InputLayout::Nhwc,
        InputLayout::StridedRows}) {
    cases.push_back(mergeSplit128Case(layout, true));
  }
  cases.push_back(mergeSplit128Case(InputLayout::SplitM, false));
  for (RaggedSplit kind :
       {RaggedSplit::Inner1D, RaggedSplit::Outer1D,
        RaggedSplit::Inner2DThreads}) {
    cases.push_back(nonDivisibleCase(kind));
  }
  cases.push_back(differentThreadExtentsCase());
  cases.push_back(broadcastBiasCase(false));
  cases.push_back(broadcastBiasCase(true));
  cases.push_back(broadcastBiasMergedCase());
  cases.push_back(normalizationCase());
  cases.push_back(vectorizeCase({1200}));
  cases.push_back(vectorizeCase({30, 40}));
  cases.push_back(vectorizeCase({12, 100}, InputLayout::SplitM));
  cases.push_back(vectorizeRowsCase());
  return cases;
}

std::string kernelFunction(Fusion* fusion) {
  GpuLower lower(fusion);
  std::unique_ptr<LoweredKernel> kernel = lower.run();
  return codegen::generateKernelFunction(*kernel);
}

} // namespace

// ---------------------------------------------------------------------------
// The harness on each case
// ---------------------------------------------------------------------------

// The interpreter's record of which input elements a value came from is a
// set: a union keeps each element once, whatever the order, and two values
// from different elements (or the same coordinate of another tensor) differ.
TEST(KernelIrValuesTest, ProvenanceIsASetOfInputElements) {
  using kir_test::Provenance;
  const Provenance a(0, {1, 2});
  const Provenance b(0, {2, 1});
  const Provenance c(1, {1, 2});
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, Provenance());
  EXPECT_EQ(Provenance(0, {1, 2}), a);

  Provenance ab = a;
  ab.add(b);
  Provenance ba = b;
  ba.add(a);
  EXPECT_EQ(ab.size(), 2u);
  EXPECT_EQ(ab, ba);
  ab.add(a);
  ab.add(ba);
  EXPECT_EQ(ab.size(), 2u);
  EXPECT_EQ(ab, ba);

  Provenance abc = ab;
  abc.add(c);
  EXPECT_EQ(abc.size(), 3u);
  EXPECT_NE(abc, ab);
  EXPECT_EQ(ab.size(), 2u); // adding to a copy leaves the original alone

  EXPECT_EQ(kir_test::str(Provenance(3, {4, 5})), "{T3(4, 5)}");
  const std::string printed = kir_test::str(abc);
  EXPECT_THAT(printed, HasSubstr("T0(1, 2)"));
  EXPECT_THAT(printed, HasSubstr("T0(2, 1)"));
  EXPECT_THAT(printed, HasSubstr("T1(1, 2)"));
}

TEST_F(IndexingTest, SeedSplitAllocation) {
  checkIndexing(seedCase(true));
}

TEST_F(IndexingTest, SeedSplitAllocationNonContiguousOuter) {
  checkIndexing(seedCase(false));
}

TEST_F(IndexingTest, SplitAllocation2D) {
  checkIndexing(splitAllocationCase(true));
}

TEST_F(IndexingTest, SplitAllocation2DNonContiguousOuter) {
  checkIndexing(splitAllocationCase(false));
}

TEST_F(IndexingTest, NhwcInput) {
  checkIndexing(nhwcCase(false));
}

TEST_F(IndexingTest, NhwcInputAndOutput) {
  checkIndexing(nhwcCase(true));
}

TEST_F(IndexingTest, SplitOutputAllocation) {
  checkIndexing(splitOutputAllocationCase());
}

TEST_F(IndexingTest, ShardedInputAndOutput) {
  checkIndexing(shardedCase(0));
  checkIndexing(shardedCase(1));
}

TEST_F(IndexingTest, MergeSplit128PlainInput) {
  checkIndexing(mergeSplit128Case(InputLayout::Plain, true));
}

TEST_F(IndexingTest, MergeSplit128SplitAllocationInput) {
  checkIndexing(mergeSplit128Case(InputLayout::SplitM, true));
  checkIndexing(mergeSplit128Case(InputLayout::SplitM, false));
}

TEST_F(IndexingTest, MergeSplit128NhwcInput) {
  checkIndexing(mergeSplit128Case(InputLayout::Nhwc, true));
}

TEST_F(IndexingTest, MergeSplit128StridedRowsInput) {
  checkIndexing(mergeSplit128Case(InputLayout::StridedRows, true));
}

TEST_F(IndexingTest, NonDivisibleSplit) {
  checkIndexing(nonDivisibleCase(RaggedSplit::Inner1D));
  checkIndexing(nonDivisibleCase(RaggedSplit::Outer1D));
}

TEST_F(IndexingTest, NonDivisibleSplit2DOnThreads) {
  checkIndexing(nonDivisibleCase(RaggedSplit::Inner2DThreads));
}

TEST_F(IndexingTest, ThreadIndexPastItsLoop) {
  IndexingCase c = differentThreadExtentsCase();
  std::unique_ptr<LoweredKernel> kernel = checkIndexing(c);
  ASSERT_NE(kernel, nullptr);
  ExpressionEvaluator ee;
  ee.bind(
      "T" + std::to_string(c.fusion->inputs()[0]->name()) + ".logical_size[0]",
      ScalarValue(int64_t{10}));
  ee.bind(
      "T" + std::to_string(c.fusion->inputs()[1]->name()) + ".logical_size[0]",
      ScalarValue(int64_t{12}));
  auto launch = ee.evaluate(kernel->launch_extents.at(ParallelType::TIDx));
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->asInt(), 8);
}

TEST_F(IndexingTest, BroadcastBias2DSplit) {
  checkIndexing(broadcastBiasCase(false));
}

TEST_F(IndexingTest, BroadcastBias2DSplitInnerFirst) {
  checkIndexing(broadcastBiasCase(true));
}

TEST_F(IndexingTest, Normalization) {
  checkIndexing(normalizationCase());
}

// The x - broadcast(sum(x)) schedule with the cache of x forced into both
// loops of its consumers (past what the inliner allows): the subtraction
// cannot run in the reduction's row loop, so lowering must refuse instead
// of reading a buffer that holds only the row's last element.
TEST_F(IndexingTest, BufferReadOutsideItsLoopsIsRejected) {
  IndexingCase c = normalizationCase();
  TensorView* cache = nullptr;
  for (TensorView* tv : c.fusion->allTvs()) {
    if (tv->definition() != nullptr &&
        tv->definition()->input(0) == c.fusion->inputs()[0]) {
      cache = tv;
    }
  }
  ASSERT_NE(cache, nullptr);
  EXPECT_THAT(
      [&]() { cache->inlineAt(2); },
      ::testing::ThrowsMessage<UserError>(HasSubstr("cannot share that loop")));
  cache->setComputeAt(2);
  for (Expr* use : cache->uses()) {
    use->output(0)->as<TensorView>()->setMaxProducer(2);
  }
  try {
    GpuLower lower(c.fusion.get());
    lower.run();
    ADD_FAILURE() << "lowering must reject the inconsistent inlining";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot run inside the loops"));
    EXPECT_THAT(e.what(), HasSubstr(cache->toString()));
    // The reduction shares the loops; the subtraction cannot.
    EXPECT_THAT(
        e.what(),
        HasSubstr(
            "its consumer " +
            c.fusion->outputs()[0]->definition()->input(0)->toString()));
  }
}

TEST_F(IndexingTest, BroadcastBiasMergedSplit128) {
  checkIndexing(broadcastBiasMergedCase());
}

// The input load and the output store of `c` are vectorized by 4.
void checkVectorized(const IndexingCase& c) {
  std::unique_ptr<LoweredKernel> kernel = checkIndexing(c);
  ASSERT_NE(kernel, nullptr);
  const std::string source = codegen::generateKernelFunction(*kernel);
  EXPECT_THAT(source, HasSubstr("vectorizedCopy<float, 4>")) << source;
  // Both get a runtime check of width 4.
  std::set<int64_t> checked;
  for (const VectorizationCheck& check : kernel->vectorization_checks) {
    EXPECT_EQ(check.width, 4);
    checked.insert(check.tv->name());
  }
  EXPECT_EQ(
      checked,
      (std::set<int64_t>{
          c.fusion->inputs()[0]->name(), c.fusion->outputs()[0]->name()}));
}

TEST_F(IndexingTest, Vectorized) {
  checkVectorized(vectorizeCase({1200}));
  checkVectorized(vectorizeCase({30, 40}));
}

// Lanes over the merged [M, N] are consecutive in [M/4, 4, N] too.
TEST_F(IndexingTest, VectorizedSplitAllocationInput) {
  checkVectorized(vectorizeCase({12, 100}, InputLayout::SplitM));
}

TEST_F(IndexingTest, VectorizedRowsOfStridedInput) {
  checkVectorized(vectorizeRowsCase());
}

// Lanes over the merged rows of a strided input stay within one row when
// the row length is a multiple of the width: the kernel books that check
// (the run of 40 elements) and the alignment of the row stride.
TEST_F(IndexingTest, VectorizedMergedRowsOfStridedInput) {
  IndexingCase c = vectorizeCase({30, 40}, InputLayout::StridedRows);
  std::unique_ptr<LoweredKernel> kernel = checkIndexing(c);
  ASSERT_NE(kernel, nullptr);
  const TensorView* in = c.fusion->inputs()[0]->as<TensorView>();
  bool checked = false;
  for (const VectorizationCheck& check : kernel->vectorization_checks) {
    if (check.tv->name() != in->name()) {
      continue;
    }
    checked = true;
    ExpressionEvaluator ee;
    ee.bind("T" + std::to_string(in->name()) + ".logical_size[1]", 40);
    EXPECT_EQ(ee.evaluateOrThrow(check.extent).asInt(), 40);
    EXPECT_EQ(check.strided_positions, std::vector<size_t>{0});
  }
  EXPECT_TRUE(checked);
}

// A vector access covers consecutive elements from its lane-0 offset: lanes
// that are not consecutive in memory (the logical W axis of an NHWC input)
// are a schedule error, not a wrong kernel.
TEST_F(IndexingTest, VectorizingNonConsecutiveLanesIsRejected) {
  for (auto [sizes, layout] :
       {std::pair{std::vector<int64_t>{2, 3, 10, 20}, InputLayout::Nhwc}}) {
    IndexingCase c = vectorizeCase(sizes, layout);
    SCOPED_TRACE(c.name);
    const std::string in = "T" + std::to_string(c.fusion->inputs()[0]->name());
    try {
      GpuLower lower(c.fusion.get());
      lower.run();
      ADD_FAILURE() << "lowering must reject the vectorized load";
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr("does not walk consecutive elements"));
      EXPECT_THAT(e.what(), HasSubstr(in));
    }
  }
}

// ---------------------------------------------------------------------------
// Printed form
// ---------------------------------------------------------------------------

// A contiguous [6/2, 2] allocation folds back into the plain linear index.
TEST_F(IndexingTest, ContiguousSeedPrintsLinearIndex) {
  IndexingCase c = seedCase(true);
  const std::string source = kernelFunction(c.fusion.get());
  EXPECT_THAT(source, Not(HasSubstr("/ 2"))) << source;
  EXPECT_THAT(source, Not(HasSubstr("% 2"))) << source;
  EXPECT_THAT(source, Not(HasSubstr("alloc_stride"))) << source;
}

// With the outer allocation axis non-contiguous its stride is the kernel
// argument.
TEST_F(IndexingTest, NonContiguousSeedUsesStrideArgument) {
  IndexingCase c = seedCase(false);
  const std::string in = "T" + std::to_string(c.fusion->inputs()[0]->name());
  const std::string source = kernelFunction(c.fusion.get());
  EXPECT_THAT(source, HasSubstr(in + ".alloc_stride[0]")) << source;
  EXPECT_THAT(source, Not(HasSubstr(in + ".alloc_stride[1]"))) << source;
}

// The stride in the input's index is a TensorParameterField naming the
// input and stride position 0, not just a name.
TEST_F(IndexingTest, NonContiguousSeedStrideIsTensorParameterField) {
  IndexingCase c = seedCase(false);
  GpuLower lower(c.fusion.get());
  std::unique_ptr<LoweredKernel> kernel = lower.run();
  auto* in = dynamic_cast<TensorView*>(kernel->parameters.at(0));
  ASSERT_NE(in, nullptr);

  // The index of every TensorIndex of the input, walked to its leaves.
  std::vector<kir::TensorParameterField*> strides;
  std::function<void(Val*)> walk = [&](Val* v) {
    if (auto* field = dynamic_cast<kir::TensorParameterField*>(v)) {
      if (field->field() == kir::TensorParameterField::Field::AllocStride) {
        strides.push_back(field);
      }
      return;
    }
    if (Expr* def = v->definition(); def != nullptr) {
      for (Val* input : def->inputs()) {
        walk(input);
      }
    }
  };
  for (Val* v : kernel->fusion->vals()) {
    auto* ti = dynamic_cast<kir::TensorIndex*>(v);
    if (ti != nullptr && ti->view() == in && ti->index() != nullptr) {
      walk(ti->index());
    }
  }
  ASSERT_FALSE(strides.empty());
  for (kir::TensorParameterField* stride : strides) {
    EXPECT_EQ(stride->tensor(), in);
    EXPECT_EQ(stride->position(), 0);
    EXPECT_EQ(
        stride->scalarName(),
        "T" + std::to_string(in->name()) + ".alloc_stride[0]");
  }
}

// ---------------------------------------------------------------------------
// NVRTC
// ---------------------------------------------------------------------------

// The generated CUDA of every case compiles for sm_90, on a machine
// without a GPU.
TEST_F(IndexingTest, GeneratedKernelsCompileWithNvrtc) {
  for (IndexingCase& c : allCases()) {
    SCOPED_TRACE(c.name);
    const std::string source = generateCudaKernel(c.fusion.get());
    try {
      CompiledModule module =
          compileToCubin(source, LoweredKernel{}.kernel_name, 90, false);
      EXPECT_FALSE(module.cubin.empty());
      EXPECT_EQ(module.arch, "sm_90");
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

} // namespace fuser
