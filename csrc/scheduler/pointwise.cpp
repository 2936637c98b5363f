#include <scheduler/pointwise.h>

#include <base/options.h>
#include <base/strings_and_math.h>
#include <id_model/id_model.h>
#include <ir/all_nodes.h>
#include <scheduler/resize_in_place.h>
#include <scheduler/utils.h>
#include <scheduler/vectorize_helper.h>
#include <transform/inlining.h>
#include <transform/propagator.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <sstream>

namespace fuser {

namespace {

// From the H200's pointwise benchmarks (benchmarks/results/pointwise.md): a
// tanh-GELU of 9 operations ran 9-12% faster unrolled by 4, fusions of at
// most 3 ran 1-5% slower.
constexpr int64_t kArithmeticOpsWorthUnrolling = 6;

// The bytes of loads a thread keeps in flight without unrolling in the
// fusions measured fast that way: one 16-byte vector (doc/pointwise.md §4).
constexpr int64_t kBytesInFlightPerThread = 16;

std::string joinFlags(const std::vector<bool>& values) {
  std::stringstream ss;
  for (size_t i = 0; i < values.size(); ++i) {
    ss << (values[i] ? "v" : "-");
  }
  return ss.str();
}

// Whether the order is a permutation that differs from identity.
bool isPermuted(const std::vector<int64_t>& order) {
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] != static_cast<int64_t>(i)) {
      return true;
    }
  }
  return false;
}

// doc/pointwise.md §3. Where a tensor of the loop's rank changes between full
// and broadcast along the loop order: 0 when it is full (or broadcast)
// throughout; b with `outer` when it is broadcast along [0, b) and full along
// [b, rank) (a bias); b without `outer` when full along [0, b) and broadcast
// along [b, rank) (a per-row scale); nullopt when it changes more than once.
struct BroadcastSplit {
  int64_t at = 0;
  bool outer = false;
};
std::optional<BroadcastSplit> broadcastSplit(
    const std::vector<IterDomain*>& logical,
    const std::vector<int64_t>& loop_order) {
  BroadcastSplit split;
  const auto rank = static_cast<int64_t>(loop_order.size());
  for (int64_t k = 1; k < rank; ++k) {
    const bool before =
        logical[static_cast<size_t>(loop_order[static_cast<size_t>(k - 1)])]
            ->isBroadcast();
    const bool here =
        logical[static_cast<size_t>(loop_order[static_cast<size_t>(k)])]
            ->isBroadcast();
    if (before == here) {
      continue;
    }
    if (split.at != 0) {
      return std::nullopt;
    }
    split = {k, before};
  }
  return split;
}

// The break point b > 0 for a 2-D schedule [outer = [0, b), inner =
// [b, rank)]: every input and every broadcast is full or broadcast
// throughout each part, so that no index computes a division or remainder
// by a run-time extent. Inputs may be broadcast along either part; a
// BroadcastOp may add outer axes only (a bias or a per-channel vector of
// an NHWC tensor), whose producer then runs over the inner part alone. 0
// when the 1-D schedule fits.
int64_t findBreakPoint(Fusion* fusion, const std::vector<int64_t>& loop_order) {
  const auto rank = static_cast<int64_t>(loop_order.size());
  int64_t break_point = 0;
  auto agree = [&](int64_t at) {
    if (break_point != 0 && break_point != at) {
      return false;
    }
    break_point = at;
    return true;
  };
  for (TensorView* tv : scheduler_utils::tensorInputs(fusion)) {
    if (rankOf(tv) != rank) {
      continue; // reaches the loop through a BroadcastOp, checked below
    }
    const std::optional<BroadcastSplit> split = broadcastSplit(
        TensorDomain::noReductions(tv->getLogicalDomain()), loop_order);
    if (!split.has_value() || (split->at != 0 && !agree(split->at))) {
      return 0;
    }
  }
  for (Expr* expr : fusion->exprs()) {
    auto* bop = dynamic_cast<BroadcastOp*>(expr);
    if (bop == nullptr) {
      continue;
    }
    const auto& flags = bop->getBroadcastDimFlags();
    if (std::find(flags.begin(), flags.end(), true) == flags.end()) {
      continue; // adds no axis
    }
    auto* out = bop->out()->as<TensorView>();
    if (rankOf(out) != rank) {
      return 0;
    }
    const std::optional<BroadcastSplit> split = broadcastSplit(
        TensorDomain::noReductions(out->getLogicalDomain()), loop_order);
    if (!split.has_value() || split->at == 0 || !split->outer ||
        !agree(split->at)) {
      return 0;
    }
  }
  return break_point;
}

// Threads of a 2-D block: the inner part's vectors across threadIdx.x (at
// most 128 threads, fewer when a row has fewer vectors), rows across
// threadIdx.y to fill 128 threads. Returns false, leaving `params` alone,
// when the inner part needs more blocks than gridDim.y allows.
bool setTwoDimensionalBlocks(
    PointwiseParams& params, int64_t outer_extent, int64_t inner_extent) {
  constexpr int64_t kThreads = 128;
  const int64_t vectors = ceilDiv(inner_extent, params.vectorize);
  int64_t tx = 1;
  while (tx < vectors && tx < kThreads) {
    tx *= 2;
  }
  if (ceilDiv(vectors, tx) > 65535) {
    return false;
  }
  params.threads_per_block = tx;
  params.rows_per_block =
      std::min(kThreads / tx, std::max<int64_t>(1, outer_extent));
  return true;
}

// The largest output, which the schedule follows.
int64_t referenceOutput(Fusion* fusion, RuntimeInfo& runtime_info) {
  const auto& outputs = fusion->outputs();
  int64_t reference = 0;
  int64_t largest = -1;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const int64_t n = runtime_info.numel(outputs[i]->as<TensorView>());
    if (n > largest) {
      largest = n;
      reference = static_cast<int64_t>(i);
    }
  }
  return reference;
}

// An axis of an output (broadcasts aside) that is none of `reference`'s
// axes, through the exact map and across a slice, pad or cat (from an
// input's axis to the output's); empty when there is none. Such an axis
// gets none of the reference's schedule: two parts of a fusion that share
// no axis (a * w and b * w with unrelated sizes of a and b) need two
// kernels.
std::string outputAxisOffReference(Fusion* fusion, TensorView* reference) {
  IdModel id_model(fusion);
  DisjointIdSets groups;
  auto group = [&](IterDomain* id) {
    return groups.find(id_model.exactGroup(id));
  };
  for (Expr* expr : fusion->exprs()) {
    auto* resize = dynamic_cast<ResizeOp*>(expr);
    if (resize == nullptr) {
      continue;
    }
    const auto out = TensorDomain::noReductions(
        resize->out()->as<TensorView>()->getLogicalDomain());
    for (Val* in : resize->tensors()) {
      const auto in_ids =
          TensorDomain::noReductions(in->as<TensorView>()->getLogicalDomain());
      for (size_t i = 0; i < out.size() && i < in_ids.size(); ++i) {
        groups.join(group(in_ids[i]), group(out[i]));
      }
    }
  }
  std::vector<IterDomain*> reference_groups;
  for (IterDomain* id :
       TensorDomain::noReductions(reference->getLogicalDomain())) {
    reference_groups.push_back(group(id));
  }
  for (Val* out : fusion->outputs()) {
    for (IterDomain* id : TensorDomain::noReductions(
             out->as<TensorView>()->getLogicalDomain())) {
      if (!id->isBroadcast() &&
          std::find(
              reference_groups.begin(), reference_groups.end(), group(id)) ==
              reference_groups.end()) {
        return id->toString() + " of output " + out->toString();
      }
    }
  }
  return "";
}

// Arithmetic operations between a fusion's inputs and outputs (casts and
// copies excluded), the measure of how much work a thread has between its
// loads and its stores.
int64_t arithmeticOps(Fusion* fusion) {
  int64_t count = 0;
  for (Expr* expr : fusion->exprs()) {
    // Scalar arithmetic (extents, constants) runs once, not per element.
    if (!expr->output(0)->isA<TensorView>()) {
      continue;
    }
    if (auto* unary = dynamic_cast<UnaryOp*>(expr)) {
      count += unary->opType() != UnaryOpType::Cast;
    } else {
      count += expr->isA<BinaryOp>() || expr->isA<TernaryOp>();
    }
  }
  return count;
}

// Bytes of loads from DRAM that one thread issues per iteration of the
// unrolled loop (doc/pointwise.md §4): the inputs read once
// (scheduler_utils::isReadOnce), in vectors or scalars. An input broadcast
// along some axis is read again by other threads, from L1 or L2, or once
// per thread outside a 2-D schedule's rows.
int64_t bytesLoadedPerIteration(
    const std::vector<TensorView*>& inputs, const PointwiseParams& params,
    TensorView* reference) {
  int64_t bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TensorView* tv = inputs[i];
    if (!tv->uses().empty() && scheduler_utils::isReadOnce(tv, reference)) {
      bytes += (params.vectorize_input[i] ? params.vectorize : 1) *
               dataTypeSize(tv->dtype());
    }
  }
  return bytes;
}

} // namespace

std::string PointwiseParams::toString() const {
  std::stringstream ss;
  ss << "PointWise: reference output " << reference_output << ", loop order ["
     << joinInts(loop_order) << "], "
     << (break_point == 0 ? std::string("1-D")
                          : "2-D at " + std::to_string(break_point))
     << ", vectorize " << vectorize << ", unroll " << unroll << ", "
     << threads_per_block << " threads";
  if (break_point > 0) {
    ss << " x " << rows_per_block << " rows, rows on "
       << (rows_on_grid_y ? "BIDy" : "BIDx");
  }
  ss << ", inputs " << joinFlags(vectorize_input) << ", outputs "
     << joinFlags(vectorize_output);
  for (const auto& [output, order] : output_layouts) {
    ss << ", output " << output << " laid out [" << joinInts(order) << "]";
  }
  return ss.str();
}

bool PointWiseScheduler::canScheduleCompileTime(
    Fusion* fusion, std::string* reason) {
  if (fusion->outputs().empty()) {
    *reason = "the fusion has no outputs";
    return false;
  }
  for (Expr* expr : fusion->exprs()) {
    if (expr->isA<ViewOp>()) {
      *reason = "it reshapes (ViewOp), which loops cannot follow yet";
      return false;
    }
    if (!scheduler_utils::isPointwiseExpr(expr) && !expr->isA<ResizeOp>()) {
      *reason = "it has a " + expr->getOpString() +
                "; pointwise fusions hold only elementwise ops, copies, "
                "broadcasts, slices, pads and cats (no reductions or matrix "
                "products)";
      return false;
    }
  }
  int64_t rank = -1;
  for (Val* out : fusion->outputs()) {
    auto* tv = out->as<TensorView>();
    if (tv->isFusionInput() || tv->definition() == nullptr) {
      *reason = "output " + tv->toString() + " is not computed";
      return false;
    }
    if (rank == -1) {
      rank = rankOf(tv);
    } else if (rankOf(tv) != rank) {
      *reason = "outputs have different ranks";
      return false;
    }
    if (tv->hasAllocation() && !allocationOrderOfLogical(tv).has_value()) {
      *reason = "output " + tv->toString() +
                " has an allocation that merges logical axes";
      return false;
    }
  }
  if (rank == 0) {
    *reason = "outputs are scalars (rank 0)";
    return false;
  }
  return scheduler_utils::resizesReadInPlace(fusion, reason) &&
         scheduler_utils::expandsShareLoopsWithOutputs(fusion, reason) &&
         scheduler_utils::isUnscheduled(fusion, reason);
}

bool PointWiseScheduler::canScheduleRunTime(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) {
  for (Val* out : fusion->outputs()) {
    if (runtime_info.numel(out->as<TensorView>()) == 0) {
      *reason = "an output is empty";
      return false;
    }
  }
  auto* reference =
      fusion->outputs()
          .at(static_cast<size_t>(referenceOutput(fusion, runtime_info)))
          ->as<TensorView>();
  const std::string off = outputAxisOffReference(fusion, reference);
  if (!off.empty()) {
    *reason = "axis " + off + " is none of the reference output " +
              reference->toString() + "'s axes (parts that share no axis)";
    return false;
  }
  return true;
}

namespace {

// The loop order: the reference's own layout, else that of the largest
// input of the same rank with a permuted layout, which outputs without a
// layout then take (params.output_layouts).
std::vector<int64_t> chooseLoopOrder(
    Fusion* fusion, TensorView* reference, RuntimeInfo& runtime_info,
    PointwiseParams& params) {
  const int64_t rank = rankOf(reference);
  std::vector<int64_t> order(static_cast<size_t>(rank));
  std::iota(order.begin(), order.end(), 0);
  if (reference->hasAllocation()) {
    return *allocationOrderOfLogical(reference);
  }
  int64_t best = -1;
  for (TensorView* tv : scheduler_utils::tensorInputs(fusion)) {
    auto input_order = allocationOrderOfLogical(tv);
    if (rankOf(tv) != rank || !input_order ||
        static_cast<int64_t>(input_order->size()) != rank ||
        !isPermuted(*input_order)) {
      continue;
    }
    const int64_t n = runtime_info.numel(tv);
    if (n > best) {
      best = n;
      order = *input_order;
    }
  }
  if (isPermuted(order)) {
    const auto& outputs = fusion->outputs();
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i]->as<TensorView>()->hasAllocation()) {
        params.output_layouts.emplace_back(static_cast<int64_t>(i), order);
      }
    }
  }
  return order;
}

// The 2-D break point (findBreakPoint), 0 where the reference is broadcast
// along the whole inner part (the threads of a 2-D schedule would have
// nothing to do).
int64_t chooseBreakPoint(
    Fusion* fusion, TensorView* reference, const std::vector<int64_t>& order) {
  const auto ref_logical =
      TensorDomain::noReductions(reference->getLogicalDomain());
  const int64_t break_point = findBreakPoint(fusion, order);
  for (int64_t k = break_point; k < rankOf(reference); ++k) {
    if (!ref_logical[static_cast<size_t>(order[static_cast<size_t>(k)])]
             ->isBroadcast()) {
      return break_point;
    }
  }
  return 0;
}

// The widest vector of at most 16 bytes that every vectorizable tensor
// allows (contiguous inner extent, pointer alignment) and that divides
// `inner_extent`; fills params.vectorize and which inputs and outputs are
// read and written in vectors (tensors broadcast along the innermost axis
// read scalars; a slice, pad or cat reads its input at shifted positions,
// an element at a time).
void chooseVectorization(
    Fusion* fusion, TensorView* reference, RuntimeInfo& runtime_info,
    int64_t inner_extent, PointwiseParams& params) {
  const auto ref_logical =
      TensorDomain::noReductions(reference->getLogicalDomain());
  const std::vector<int64_t>& order = params.loop_order;
  std::vector<std::pair<TensorView*, InnerRun>> candidates;
  int64_t max_bytes = 1;
  // Each tensor's logical ID at each loop position that is not a broadcast
  // of the reference (those have one position), through the exact map (so
  // permutes and broadcasts in between are followed); nullptr where the
  // tensor has none.
  IdModel id_model(fusion);
  auto loopIdsOf = [&](TensorView* tv) {
    std::vector<IterDomain*> ids;
    const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
    for (int64_t p : order) {
      IterDomain* ref_id = ref_logical[static_cast<size_t>(p)];
      if (ref_id->isBroadcast()) {
        continue;
      }
      IterDomain* match = nullptr;
      for (IterDomain* id : logical) {
        if (id->isBroadcast() == ref_id->isBroadcast() &&
            id_model.exactMapped(id, ref_id)) {
          match = id;
        }
      }
      ids.push_back(match);
    }
    return ids;
  };
  auto consider = [&](TensorView* tv, const InnerRun& run) {
    if (run.elements > 1) {
      candidates.emplace_back(tv, run);
      max_bytes = std::max(max_bytes, dataTypeSize(tv->dtype()));
    }
    return run.elements > 1;
  };
  for (TensorView* tv : scheduler_utils::tensorInputs(fusion)) {
    params.vectorize_input.push_back(
        !tv->uses().empty() && !scheduler_utils::isReadOnlyThroughResize(tv) &&
        consider(tv, contiguousInnerRun(tv, loopIdsOf(tv), runtime_info)));
  }
  // Outputs are allocated densely in their layout: the one they have, the
  // one chosen for the loops (the loop order itself), or the logical order.
  for (Val* out : fusion->outputs()) {
    auto* tv = out->as<TensorView>();
    const std::vector<IterDomain*> ids = loopIdsOf(tv);
    InnerRun run;
    if (tv->hasAllocation() || params.output_layouts.empty()) {
      run = contiguousInnerRun(tv, ids, runtime_info);
    } else if (ids.empty() || ids.back() == nullptr) {
      run.elements = 0;
    } else {
      for (IterDomain* id : ids) {
        run.elements *= id == nullptr ? 1 : runtime_info.extent(id);
      }
    }
    params.vectorize_output.push_back(consider(tv, run));
  }
  const int64_t width = candidates.empty() ? 1
                                           : widestVectorWidth(
                                                 16 / max_bytes, inner_extent,
                                                 candidates, runtime_info);
  params.vectorize = width;
  if (width == 1) {
    std::fill(
        params.vectorize_input.begin(), params.vectorize_input.end(), false);
    std::fill(
        params.vectorize_output.begin(), params.vectorize_output.end(), false);
  }
}

// The cost model of the grid: unroll only where a thread's loads of later
// iterations have something to overlap: heavy arithmetic, or scalar loads
// that keep few bytes in flight (and, with
// FUSER_ENABLE=narrow_load_unroll, a narrow stream beside the vectors that
// set the width: measured slower); then by 4 from four full waves of the
// device's multiprocessors (2048 resident threads each), by 2 from one.
// Otherwise more, shorter blocks: the last partial wave costs one block's
// time (doc/pointwise.md §4). A 2-D schedule puts consecutive blocks on
// consecutive slabs of a row when a row spans several blocks (the DRAM
// pages of a row are read together), and on consecutive rows otherwise;
// gridDim.y holds at most 65535.
void chooseUnrollAndGrid(
    Fusion* fusion, TensorView* reference, RuntimeInfo& runtime_info,
    int64_t outer_extent, int64_t inner_extent, PointwiseParams& params) {
  // One count for both schedules (1-D: one outer position, one row per
  // block).
  const int64_t inner_blocks = ceilDiv(
      ceilDiv(inner_extent, params.vectorize), params.threads_per_block);
  const int64_t blocks =
      ceilDiv(outer_extent, params.rows_per_block) * inner_blocks;
  const int64_t wave =
      runtime_info.multiprocessors() *
      (2048 / (params.threads_per_block * params.rows_per_block));
  bool narrow_loads = false;
  if (isEnabled(EnableOption::NarrowLoadUnroll)) {
    const int64_t streamed = bytesLoadedPerIteration(
        scheduler_utils::tensorInputs(fusion), params, reference);
    narrow_loads = streamed > 0 && streamed < kBytesInFlightPerThread;
  }
  const bool worth_unrolling =
      params.vectorize == 1 || narrow_loads ||
      arithmeticOps(fusion) >= kArithmeticOpsWorthUnrolling;
  params.unroll = !worth_unrolling     ? 1
                  : blocks >= 4 * wave ? 4
                  : blocks >= wave     ? 2
                                       : 1;
  params.rows_on_grid_y =
      params.break_point > 0 && inner_blocks > 1 &&
      ceilDiv(outer_extent, params.rows_per_block * params.unroll) <= 65535;
}

} // namespace

// Legality is canScheduleCompileTime and canScheduleRunTime; here the
// parameters are filled in order: the reference, the loop order, the 2-D
// split, the vectors, the blocks, and the cost model's unroll.
std::unique_ptr<HeuristicParams> PointWiseScheduler::computeHeuristics(
    Fusion* fusion, RuntimeInfo& runtime_info) {
  auto params = std::make_unique<PointwiseParams>();
  params->reference_output = referenceOutput(fusion, runtime_info);
  auto* reference = fusion->outputs()
                        .at(static_cast<size_t>(params->reference_output))
                        ->as<TensorView>();
  params->loop_order =
      chooseLoopOrder(fusion, reference, runtime_info, *params);
  params->break_point = chooseBreakPoint(fusion, reference, params->loop_order);
  const auto ref_logical =
      TensorDomain::noReductions(reference->getLogicalDomain());
  int64_t outer_extent = 1;
  int64_t inner_extent = 1;
  for (int64_t k = 0; k < rankOf(reference); ++k) {
    const int64_t e = runtime_info.extent(ref_logical[static_cast<size_t>(
        params->loop_order[static_cast<size_t>(k)])]);
    (k < params->break_point ? outer_extent : inner_extent) *= e;
  }
  chooseVectorization(fusion, reference, runtime_info, inner_extent, *params);
  if (params->break_point > 0 &&
      !setTwoDimensionalBlocks(*params, outer_extent, inner_extent)) {
    params->break_point = 0;
    inner_extent *= outer_extent;
    outer_extent = 1;
  }
  chooseUnrollAndGrid(
      fusion, reference, runtime_info, outer_extent, inner_extent, *params);
  return params;
}

void PointWiseScheduler::schedule(Fusion* fusion, const HeuristicParams& hp) {
  const auto& params = dynamic_cast<const PointwiseParams&>(hp);
  FusionGuard fg(fusion);
  const std::vector<Val*> outputs_before = fusion->outputs();
  for (const auto& [position, order] : params.output_layouts) {
    auto* tv = outputs_before[static_cast<size_t>(position)]->as<TensorView>();
    const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
    std::vector<IterDomain*> layout;
    for (int64_t p : order) {
      layout.push_back(logical[static_cast<size_t>(p)]);
    }
    tv->setAllocationDomain(layout, true);
  }
  const std::vector<TensorView*> inputs = scheduler_utils::tensorInputs(fusion);
  const std::vector<TensorView*> caches =
      scheduler_utils::cacheInputs(fusion, params.unroll > 1);
  scheduler_utils::cacheAndForkOutputs(fusion, params.unroll > 1);

  auto* reference =
      fusion->outputs()[static_cast<size_t>(params.reference_output)]
          ->as<TensorView>();
  const auto rank = static_cast<int64_t>(params.loop_order.size());
  std::unordered_map<int64_t, int64_t> old2new;
  for (int64_t k = 0; k < rank; ++k) {
    old2new[params.loop_order[static_cast<size_t>(k)]] = k;
  }
  reference->reorder(old2new);
  const int64_t b = params.break_point;
  // Inner part: merged into one axis; so is the outer part (2-D).
  for (int64_t k = b; k + 1 < rank; ++k) {
    reference->merge(b);
  }
  for (int64_t k = 0; k + 1 < b; ++k) {
    reference->merge(0);
  }
  if (b == 0) {
    // [blocks, unroll, threads, vector]
    reference->split(0, params.vectorize);
    reference->split(0, params.threads_per_block);
    reference->split(0, params.unroll);
    reference->axis(0)->parallelize(ParallelType::BIDx);
    reference->axis(1)->parallelize(ParallelType::Unroll);
    reference->axis(2)->parallelize(ParallelType::TIDx);
  } else {
    // [outer, inner] -> [inner blocks, row blocks, unroll, rows, threads,
    // vector], the blocks on (BIDy, BIDx) or (BIDx, BIDy): each index is a
    // product and a sum, never a division by a run-time extent; a tensor
    // broadcast along one part is read once per position of the other.
    reference->split(1, params.vectorize);
    reference->split(1, params.threads_per_block);
    reference->split(0, params.rows_per_block);
    reference->split(0, params.unroll);
    reference->reorder({{3, 0}, {0, 1}, {1, 2}, {2, 3}});
    reference->axis(0)->parallelize(
        params.rows_on_grid_y ? ParallelType::BIDx : ParallelType::BIDy);
    reference->axis(1)->parallelize(
        params.rows_on_grid_y ? ParallelType::BIDy : ParallelType::BIDx);
    reference->axis(2)->parallelize(ParallelType::Unroll);
    reference->axis(3)->parallelize(ParallelType::TIDy);
    reference->axis(4)->parallelize(ParallelType::TIDx);
  }

  TransformPropagator propagator(reference);
  MaxLogicalDomainInfoSpanningTree(reference).traverse(&propagator);
  scheduler_utils::parallelizeAllLike(
      reference, {},
      {ParallelType::BIDx, ParallelType::BIDy, ParallelType::TIDx,
       ParallelType::TIDy, ParallelType::Unroll});

  if (params.vectorize > 1) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!params.vectorize_input[i] || inputs[i]->uses().empty()) {
        continue;
      }
      // The cache is the input's one use that is not a resize.
      for (Expr* use : inputs[i]->uses()) {
        if (!use->isA<ResizeOp>()) {
          use->output(0)->as<TensorView>()->axis(-1)->parallelize(
              ParallelType::Vectorize);
        }
      }
    }
    for (size_t i = 0; i < fusion->outputs().size(); ++i) {
      if (params.vectorize_output[i]) {
        fusion->outputs()[i]->as<TensorView>()->axis(-1)->parallelize(
            ParallelType::Vectorize);
      }
    }
  }
  if (params.unroll == 1) {
    inlineMost(fusion);
    return;
  }
  // Unrolled, the caches of inputs read once load every iteration first
  // (doc/pointwise.md §4); an input broadcast along some axis may take
  // other threads' axes at the unrolled one, so it stays inlined.
  std::vector<TensorView*> loaded_first;
  for (TensorView* cache : caches) {
    auto* input = cache->definition()->input(0)->as<TensorView>();
    if (scheduler_utils::isReadOnce(input, reference)) {
      loaded_first.push_back(cache);
    }
  }
  scheduler_utils::inlineMostLoadingFirst(
      fusion, loaded_first, /*unrolled_axis=*/b == 0 ? 1 : 2);
}

} // namespace fuser
