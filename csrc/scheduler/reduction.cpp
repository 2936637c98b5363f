#include <scheduler/reduction.h>

#include <base/register_file.h>
#include <base/strings_and_math.h>
#include <id_model/id_model.h>
#include <ir/all_nodes.h>
#include <scheduler/reduction_layout.h>
#include <scheduler/utils.h>
#include <scheduler/vectorize_helper.h>
#include <transform/inlining.h>
#include <transform/propagator.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace fuser {

namespace {

// Inputs read once of up to this many L2s of bytes are loaded evict-first.
constexpr int64_t kStreamingL2Multiple = 5;

// The full-rank fusion inputs `v` is computed from.
std::unordered_set<Val*> fullRankInputsOf(Val* v, int64_t rank) {
  std::unordered_set<Val*> inputs;
  for (Val* u : scheduler_utils::upstreamOf(v)) {
    auto* tv = dynamic_cast<TensorView*>(u);
    if (tv != nullptr && tv->isFusionInput() &&
        scheduler_utils::rankOf(tv) == rank) {
      inputs.insert(tv);
    }
  }
  return inputs;
}

// The fusion's reductions when one kernel can compute them all, else
// empty with `reason`: they reduce the same axes of tensors of one rank,
// and read a common input of that rank, through which the schedule of the
// first reaches the others (a layer norm backward's weight and bias
// gradients, sum(dy * xhat, 0) and sum(dy, 0); batch norm backward's two
// per-channel sums).
std::vector<ReductionOp*> reductionsOfOneKernel(
    Fusion* fusion, std::string* reason) {
  std::vector<ReductionOp*> reductions = scheduler_utils::reductionsOf(fusion);
  if (reductions.empty()) {
    *reason = "it has no reduction (sum, prod, max or min)";
    return {};
  }
  ReductionOp* first = reductions.front();
  const std::vector<int64_t> axes = scheduler_utils::reducedPositions(first);
  const auto rank = static_cast<int64_t>(
      first->out()->as<TensorView>()->getLogicalDomain().size());
  std::unordered_set<Val*> common = fullRankInputsOf(first->in(), rank);
  for (ReductionOp* rop : reductions) {
    auto* out = rop->out()->as<TensorView>();
    if (static_cast<int64_t>(out->getLogicalDomain().size()) != rank ||
        scheduler_utils::reducedPositions(rop) != axes) {
      *reason = out->toString() + " reduces other axes than " +
                first->out()->toString() +
                " (one kernel reduces one set of axes)";
      return {};
    }
    // All are split like the first (one of full axes, reductionsOf); a
    // loop of one element takes none of its splits (ReductionOp::mappedAxes).
    if (scheduler_utils::reducesOneElement(rop) !=
        scheduler_utils::reducesOneElement(first)) {
      *reason = out->toString() + " reduces one element (broadcast axes) " +
                "beside " + first->out()->toString() +
                " (one kernel splits its reductions alike)";
      return {};
    }
    // Each reads the input only: a reduction of what another's result
    // was combined with (softmax's sum of exp(x - max)) is a
    // normalization.
    const std::unordered_set<Val*> up = scheduler_utils::upstreamOf(rop->in());
    for (ReductionOp* other : reductions) {
      if (up.count(other->out())) {
        *reason = rop->out()->toString() + " reduces what derives from " +
                  other->out()->toString() + " (a normalization)";
        return {};
      }
    }
    const std::unordered_set<Val*> mine = fullRankInputsOf(rop->in(), rank);
    for (auto it = common.begin(); it != common.end();) {
      it = mine.count(*it) ? std::next(it) : common.erase(it);
    }
  }
  if (reductions.size() > 1 && common.empty()) {
    *reason = "its reductions read no common input of their rank";
    return {};
  }
  return reductions;
}

} // namespace

std::string ReductionParams::toString() const {
  std::stringstream ss;
  ss << "Reduction: " << (inner ? "inner" : "outer") << ", kept ["
     << joinInts(kept_axes) << "], reduced [" << joinInts(reduced_axes)
     << "], vectorize " << vectorize << ", threads " << threads_x << " x "
     << threads_y << ", grid split " << grid_split << ", unroll " << unroll
     << (grouped() ? ", grouped" : "")
     << (vectorize_output ? ", vectorized outputs" : "")
     << (stream_inputs ? ", evict-first loads" : "");
  return ss.str();
}

namespace {

// Whether `tv` has the shape of `reference`, axis by axis (exact-mapped, or
// both broadcasts): the loops over the reference's elements visit each of
// its elements once.
bool hasShapeOf(IdModel& model, TensorView* tv, TensorView* reference) {
  const auto axes = TensorDomain::noReductions(tv->getLogicalDomain());
  const auto ref = reference->getLogicalDomain();
  if (axes.size() != ref.size()) {
    return false;
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    const bool same = axes[i]->isBroadcast()
                          ? ref[i]->isBroadcast()
                          : model.exactMapped(axes[i], ref[i]);
    if (!same) {
      return false;
    }
  }
  return true;
}

} // namespace

bool ReductionScheduler::canScheduleCompileTime(
    Fusion* fusion, std::string* reason) {
  const std::vector<ReductionOp*> reductions =
      reductionsOfOneKernel(fusion, reason);
  if (reductions.empty()) {
    return false;
  }
  auto* reduced = reductions.front()->out()->as<TensorView>();
  const auto rank = static_cast<int64_t>(reduced->getLogicalDomain().size());
  const int64_t kept_rank = scheduler_utils::rankOf(reduced);
  std::unordered_set<Val*> down;
  std::unordered_set<Val*> feeds;
  // Of the input's shape, computed only from what the reductions read.
  std::unordered_set<Val*> beside;
  // The first reduction's input; its ID graph, built only when asked.
  auto* reference = reductions.front()->in()->as<TensorView>();
  std::unique_ptr<IdModel> id_model;
  auto model = [&]() -> IdModel& {
    if (!id_model) {
      id_model = std::make_unique<IdModel>(fusion);
    }
    return *id_model;
  };
  for (ReductionOp* rop : reductions) {
    for (Val* v : scheduler_utils::downstreamOf(fusion, rop->out())) {
      down.insert(v);
    }
    for (Val* v : scheduler_utils::upstreamOf(rop->in())) {
      feeds.insert(v);
    }
  }
  for (Expr* expr : fusion->exprs()) {
    if (expr->isA<ReductionOp>()) {
      continue;
    }
    if (!scheduler_utils::isPointwiseExpr(expr)) {
      *reason = "it has a " + expr->getOpString() +
                " besides the reduction (elementwise ops, copies and "
                "broadcasts only)";
      return false;
    }
    auto* out = dynamic_cast<TensorView*>(expr->output(0));
    if (out == nullptr) {
      continue;
    }
    if (feeds.count(out)) {
      // Before the reduction: elementwise on the input's shape (broadcasts
      // of smaller inputs included).
      if (scheduler_utils::rankOf(out) != rank) {
        *reason = out->toString() + " before the reduction has another rank";
        return false;
      }
      continue;
    }
    const bool from_what_they_read =
        !down.count(out) &&
        std::all_of(expr->inputs().begin(), expr->inputs().end(), [&](Val* in) {
          return !in->isA<TensorView>() || feeds.count(in) || beside.count(in);
        });
    if (from_what_they_read && scheduler_utils::rankOf(out) == rank &&
        hasShapeOf(model(), out, reference)) {
      // Beside the reductions, of the input's shape, from what they read
      // (a GELU backward's bf16 result beside its float bias gradient):
      // written from the same loops.
      beside.insert(out);
      continue;
    }
    // After the reductions, or beside them: what derives from the results,
    // combined with tensors of the results' shape only (a running
    // statistic's update, mean * momentum + running * (1 - momentum)); a
    // tensor of the input's shape joining them is a normalization.
    for (Val* in : expr->inputs()) {
      auto* tv = dynamic_cast<TensorView*>(in);
      if (tv != nullptr && !down.count(tv) &&
          scheduler_utils::rankOf(tv) != kept_rank) {
        *reason = out->toString() +
                  " combines the reduction's result with a tensor of another "
                  "shape that does not derive from it (a normalization)";
        return false;
      }
    }
  }
  for (Val* out : fusion->outputs()) {
    // A tensor of the input's shape computed before the reductions (a
    // GELU backward beside its bias gradient) is written by their loops.
    const bool before = !out->isFusionInput() &&
                        (feeds.count(out) || beside.count(out)) &&
                        scheduler_utils::rankOf(out->as<TensorView>()) == rank;
    if (!down.count(out) && !before) {
      *reason = "output " + out->toString() +
                " does not derive from a reduction, nor is it read by one";
      return false;
    }
    if (!scheduler_utils::hasDefaultLayout(out->as<TensorView>())) {
      *reason = "output " + out->toString() + " has an allocation domain";
      return false;
    }
  }
  return scheduler_utils::isUnscheduled(fusion, reason);
}

bool ReductionScheduler::canScheduleRunTime(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) {
  return !scheduler_utils::reductionInputIsEmpty(fusion, runtime_info, reason);
}

namespace {

// An inner reduction's blocks: about 2 vectors per thread, up to 256
// threads per row: more, smaller threads keep more warps resident than
// fewer threads loading 8 vectors each (measured, doc/reduction.md §5);
// short rows take part of a warp each (reduced by shuffles within it).
// Long rows get their loads in flight from the unrolled serial loop.
void chooseInnerBlocks(
    const ReductionLayout& layout, int64_t sms, ReductionParams& params) {
  const int64_t per_row = ceilDiv(layout.reduced_elements, layout.vectorize);
  params.threads_x = std::max<int64_t>(
      1, std::min<int64_t>(pow2Ceil(ceilDiv(per_row, 2)), 256));
  params.threads_y = std::max<int64_t>(
      1, std::min<int64_t>(
             256 / params.threads_x, pow2Ceil(layout.kept_elements)));
  const int64_t blocks = ceilDiv(layout.kept_elements, params.threads_y);
  const int64_t serial = ceilDiv(per_row, params.threads_x);
  if (blocks < 2 * sms && serial >= 8) {
    // One wave of 4 blocks per SM: these kernels take about 53
    // registers, so 4 blocks of 256 threads fit an SM, not 8, and 8 per
    // SM ran as two waves (doc/reduction.md §5).
    const int64_t one_wave = 4 * sms;
    params.grid_split = std::min<int64_t>(
        {std::max<int64_t>(1, one_wave / blocks), serial / 4, 65535});
  }
}

// An outer reduction's blocks. TIDx walks at least 128 bytes of a row
// (whole sectors) and at most a warp's worth, so that narrow tensors still
// give several blocks and TIDy reduces in the block what the grid would
// otherwise reduce.
void chooseOuterBlocks(
    const ReductionLayout& layout, int64_t sms, ReductionParams& params) {
  const int64_t reduced_elements = layout.reduced_elements;
  const int64_t columns = ceilDiv(layout.kept_elements, layout.vectorize);
  // Blocks of 256 threads without a grid reduction: 8 per SM fill it.
  const int64_t wanted_blocks = 8 * sms;
  const int64_t min_threads_x =
      std::max<int64_t>(1, 128 / (layout.vectorize * layout.max_bytes));
  params.threads_x = std::min<int64_t>(
      pow2Ceil(columns),
      std::max<int64_t>(
          min_threads_x, std::min<int64_t>(32, pow2Floor(columns / 4))));
  // At least 16 rows per thread: short columns take fewer TIDy threads,
  // and TIDx grows while the columns still give 8 blocks per SM.
  params.threads_y = std::max<int64_t>(
      1, std::min<int64_t>(
             256 / params.threads_x,
             pow2Floor(std::max<int64_t>(1, reduced_elements / 16))));
  while (params.threads_x * params.threads_y < 256 &&
         ceilDiv(columns, params.threads_x * 2) >= wanted_blocks) {
    params.threads_x *= 2;
  }
  // Short columns over many kept columns make many small blocks in one to
  // two waves, the last running part-empty. Where the columns fill one
  // wave of 1024 threads per SM with fewer TIDy threads (more rows each),
  // take that wave instead (doc/reduction.md §5).
  const int64_t wave_threads = 1024 * sms;
  const int64_t all_threads = columns * params.threads_y;
  if (all_threads > wave_threads && all_threads <= 2 * wave_threads &&
      columns < wave_threads) {
    params.threads_y = pow2Floor(wave_threads / columns);
    params.threads_x = std::min<int64_t>(
        pow2Ceil(columns),
        std::max<int64_t>(params.threads_x, 256 / params.threads_y));
  }
  // Columns too few for two waves of these blocks but enough for one
  // block of 1024 threads per SM, each row segment still 128 bytes to
  // 1 KiB: take that wave, and no step across blocks (a grid split's
  // partials and its last block's serial tail, §5).
  bool one_wave_of_wide_blocks = false;
  if (ceilDiv(columns, params.threads_x) < 2 * sms) {
    for (int64_t tx = 64; tx >= min_threads_x; tx /= 2) {
      const int64_t blocks = ceilDiv(columns, tx);
      if (blocks > sms) {
        break;
      }
      if (10 * blocks >= 9 * sms && reduced_elements / (1024 / tx) >= 16) {
        params.threads_x = tx;
        params.threads_y = 1024 / tx;
        one_wave_of_wide_blocks = true;
        break;
      }
    }
  }
  const int64_t blocks = ceilDiv(columns, params.threads_x);
  const int64_t serial = ceilDiv(reduced_elements, params.threads_y);
  if (blocks < 2 * sms && serial >= 16 && !one_wave_of_wide_blocks) {
    // Across blocks; a thread's `vectorize` columns are reduced in one
    // grouped call. One wave of blocks: 3 per SM fit up to 80 registers
    // per thread (these kernels take 64 to 72), and a block past the
    // wave would start a second one that ramps up and drains again.
    // The last block of a column reads every block's partials alone: at
    // most 4096 vectors (16 per thread).
    const int64_t one_wave = 3 * sms;
    const int64_t max_split = std::max<int64_t>(1, 4096 / params.threads_x);
    params.grid_split = std::max<int64_t>(
        1,
        std::min<int64_t>({one_wave / blocks, serial / 8, max_split, 65535}));
  }
}

// Whether an outer reduction writes every output in vectors: each
// output's layout follows the kept axes (outputs keep the reduction's kept
// axes in logical order) with a contiguous run the vector divides.
bool outputsTakeVectors(
    Fusion* fusion, const std::vector<IterDomain*>& logical,
    RuntimeInfo& runtime_info, const ReductionParams& params) {
  for (Val* out : fusion->outputs()) {
    auto* tv = out->as<TensorView>();
    const auto out_logical = TensorDomain::noReductions(tv->getLogicalDomain());
    std::vector<IterDomain*> ids;
    for (int64_t p : params.kept_axes) {
      int64_t kept_position = 0;
      for (int64_t q = 0; q < p; ++q) {
        kept_position += logical[static_cast<size_t>(q)]->isReduction() ? 0 : 1;
      }
      if (static_cast<size_t>(kept_position) >= out_logical.size() ||
          out_logical.size() != params.kept_axes.size()) {
        return false;
      }
      IterDomain* id = out_logical[static_cast<size_t>(kept_position)];
      ids.push_back(id->isBroadcast() ? nullptr : id);
    }
    const InnerRun run = contiguousInnerRun(tv, ids, runtime_info);
    if (run.elements % params.vectorize != 0 ||
        dataTypeSize(tv->dtype()) * params.vectorize > 16) {
      return false;
    }
  }
  return true;
}

// Loads in flight per thread: up to 8 vectors and 32 elements of each
// input (the computation widens elements to at least 4 bytes: 8 vectors of
// 8 bf16 would take 64 registers), no more than a thread's serial steps,
// and fewer where the loads of all inputs would take more than half of
// the registers the block's size leaves a thread (two float inputs at
// 1024 threads, 64 registers each: 64 elements spilled, doc/reduction.md
// §5).
int64_t chooseUnroll(
    const ReductionLayout& layout, const ReductionParams& params) {
  const int64_t threads = params.threads_x * params.threads_y;
  const int64_t registers =
      std::min<int64_t>(255, kRegistersPerSm / std::max<int64_t>(1, threads));
  int64_t elements = 32;
  while (elements > 1 &&
         elements * layout.registers_per_loaded_element > registers / 2) {
    elements /= 2;
  }
  const int64_t serial_per_thread =
      params.inner
          ? ceilDiv(
                ceilDiv(layout.reduced_elements, layout.vectorize),
                params.threads_x * params.grid_split)
          : ceilDiv(
                layout.reduced_elements, params.threads_y * params.grid_split);
  const int64_t max_unroll =
      std::max<int64_t>(1, std::min<int64_t>(8, elements / params.vectorize));
  int64_t unroll = 1;
  while (unroll * 2 <= std::min(serial_per_thread, max_unroll)) {
    unroll *= 2;
  }
  return unroll;
}

} // namespace

// Legality is canScheduleCompileTime and canScheduleRunTime; here the
// parameters are filled in order: the layout (reduction_layout.h), the
// loads' cache policy, the blocks and grid split of an inner or an outer
// reduction, the outputs' vectors and the unroll.
std::unique_ptr<HeuristicParams> ReductionScheduler::computeHeuristics(
    Fusion* fusion, RuntimeInfo& runtime_info) {
  auto params = std::make_unique<ReductionParams>();
  auto* out =
      scheduler_utils::reductionsOf(fusion).front()->out()->as<TensorView>();
  const ReductionLayout layout = reductionLayout(fusion, out, runtime_info);
  params->kept_axes = layout.kept_axes;
  params->reduced_axes = layout.reduced_axes;
  params->inner = layout.inner;
  params->vectorize = layout.vectorize;
  // Evict-first loads keep a reduction's input from replacing what a
  // previous kernel left in L2 (a write-back of dirty lines inside the
  // reduction's time). Measured, they win up to 18% up to 4.3 L2s read and
  // lose up to 4.4% from 6.4 (doc/reduction.md §5.6).
  params->stream_inputs =
      scheduler_utils::readOnceInputBytes(fusion, out, runtime_info) <=
      kStreamingL2Multiple * runtime_info.l2Bytes();
  const int64_t sms = runtime_info.multiprocessors();
  if (params->inner) {
    chooseInnerBlocks(layout, sms, *params);
  } else {
    chooseOuterBlocks(layout, sms, *params);
    if (params->vectorize > 1) {
      params->vectorize_output = outputsTakeVectors(
          fusion, out->getLogicalDomain(), runtime_info, *params);
    }
  }
  params->unroll = chooseUnroll(layout, *params);
  return params;
}

namespace {

// Positions of the named axes of a reduction output split by
// splitReduction (-1 for those it lacks).
struct ReductionAxes {
  int64_t kept = -1, grid = -1, serial = -1, unroll = -1, ty = -1, tx = -1,
          vec = -1;
  // The axes each thread accumulates first (rFactor).
  std::vector<int64_t> serial_axes;
};

// Reorders the loop domain of `tv` to `reference`'s: at each position of
// the reference, the first axis of `tv` not yet placed with the same
// parallel type and reduced or not (the finals of one schedule have the
// same kinds of axes, in an order propagation may change).
void matchLoopOrder(TensorView* tv, TensorView* reference) {
  const auto& want = reference->getLoopDomain();
  const auto& have = tv->getLoopDomain();
  FUSER_INTERNAL_ASSERT(
      want.size() == have.size(), tv->toString(), " and ",
      reference->toString(), " differ in their loops");
  std::unordered_map<int64_t, int64_t> old_to_new;
  std::vector<bool> placed(have.size(), false);
  for (size_t i = 0; i < want.size(); ++i) {
    size_t j = 0;
    while (j < have.size() &&
           (placed[j] ||
            have[j]->getParallelType() != want[i]->getParallelType() ||
            have[j]->isReduction() != want[i]->isReduction())) {
      ++j;
    }
    FUSER_INTERNAL_ASSERT(
        j < have.size(), "the loops of ", tv->toString(),
        " do not match those of ", reference->toString());
    placed[j] = true;
    old_to_new[static_cast<int64_t>(j)] = static_cast<int64_t>(i);
  }
  tv->reorder(old_to_new);
}

// Splits the reduction output `tv` (unscheduled) as `params` say.
ReductionAxes splitReduction(TensorView* tv, const ReductionParams& params) {
  // [kept..., reduced...] (inner) or [reduced..., kept...] (outer), each
  // group merged into one axis.
  const auto& first = params.inner ? params.kept_axes : params.reduced_axes;
  const auto& second = params.inner ? params.reduced_axes : params.kept_axes;
  mergeReductionAxes(tv, first, second);
  const bool has_kept = !params.kept_axes.empty();
  ReductionAxes axes;
  if (params.inner) {
    // [K, R] -> [K/ty, (gs), S, U, ty, tx, v]
    const int64_t r = has_kept ? 1 : 0;
    tv->split(r, params.vectorize);
    tv->split(r, params.threads_x);
    // [K, R/v/tx, tx, v]
    if (params.grid_split > 1) {
      tv->split(r, params.grid_split, /*inner_split=*/false);
    }
    const int64_t sr = r + (params.grid_split > 1 ? 1 : 0);
    tv->split(sr, params.unroll);
    // [K, (gs), S, U, tx, v]
    if (has_kept) {
      tv->split(0, params.threads_y);
      // [K/ty, ty, (gs), S, U, tx, v] -> move ty before tx
      const int64_t n = tv->nDims();
      tv->reorder({{1, n - 3}});
      axes.kept = 0;
      axes.ty = n - 3;
    }
    const int64_t base = has_kept ? 1 : 0;
    axes.grid = params.grid_split > 1 ? base : -1;
    axes.serial = base + (params.grid_split > 1 ? 1 : 0);
    axes.unroll = axes.serial + 1;
    axes.tx = tv->nDims() - 2;
    axes.vec = tv->nDims() - 1;
  } else {
    // [R, K] -> [K/v/tx, (gs), S, U, ty, tx, v]
    const int64_t k = 1;
    tv->split(k, params.vectorize);
    tv->split(k, params.threads_x);
    // [R, K/v/tx, tx, v]
    tv->split(0, params.threads_y);
    // [R/ty, ty, K/v/tx, tx, v]
    if (params.grid_split > 1) {
      tv->split(0, params.grid_split, /*inner_split=*/false);
    }
    const int64_t sr = params.grid_split > 1 ? 1 : 0;
    tv->split(sr, params.unroll);
    // [(gs), S, U, ty, K/v/tx, tx, v] -> K/v/tx first
    const int64_t kb = tv->nDims() - 3;
    tv->reorder({{kb, 0}});
    // [Kb, (gs), S, U, ty, tx, v]
    axes.kept = 0;
    axes.grid = params.grid_split > 1 ? 1 : -1;
    axes.serial = params.grid_split > 1 ? 2 : 1;
    axes.unroll = axes.serial + 1;
    axes.ty = axes.unroll + 1;
    axes.tx = axes.ty + 1;
    axes.vec = axes.tx + 1;
  }

  // Each thread accumulates its serial part first.
  axes.serial_axes = {axes.serial, axes.unroll};
  if (params.inner) {
    axes.serial_axes.push_back(axes.vec);
  }
  return axes;
}

} // namespace

void ReductionScheduler::schedule(Fusion* fusion, const HeuristicParams& hp) {
  const auto& params = dynamic_cast<const ReductionParams&>(hp);
  FusionGuard fg(fusion);
  auto* reduced =
      scheduler_utils::reductionsOf(fusion).front()->out()->as<TensorView>();
  // The input's rank (reduced axes included), before the output caches
  // take the reduction's axes.
  const auto full_rank =
      static_cast<int64_t>(reduced->getLogicalDomain().size());
  const std::vector<TensorView*> input_caches =
      scheduler_utils::cacheInputsReadOnce(
          fusion, reduced,
          params.stream_inputs ? CacheOp::Streaming : CacheOp::Unspecified);
  // An output a reduction reads is forked: its copy, of the input's
  // shape, is stored from the partial reduction's loops.
  std::vector<TensorView*> full_outputs;
  for (auto [cache, output] :
       scheduler_utils::cacheAndForkOutputs(fusion, /*unroll=*/true)) {
    if (cache == output->definition()->input(0) && !cache->hasReduction() &&
        scheduler_utils::rankOf(output) == full_rank) {
      full_outputs.push_back(output);
    }
  }
  // The reduction computes into the output's cache now.
  const std::vector<ReductionOp*> reductions =
      scheduler_utils::reductionsOf(fusion);
  // Every reduction split alike (they reduce the same axes of tensors of
  // one shape), each thread accumulating its serial part first.
  std::vector<TensorView*> finals;
  for (ReductionOp* rop : reductions) {
    finals.push_back(rop->out()->as<TensorView>());
  }
  ReductionAxes axes;
  for (TensorView* out : finals) {
    axes = splitReduction(out, params);
  }
  const bool has_kept = !params.kept_axes.empty();
  const int64_t kept = axes.kept, grid = axes.grid, unroll = axes.unroll,
                ty = axes.ty, tx = axes.tx;
  std::vector<TensorView*> partials;
  for (TensorView* out : finals) {
    partials.push_back(out->rFactor(axes.serial_axes));
  }
  TensorView* partial = partials.front();

  // The partial has every axis, at the positions above; the others take
  // its parallel types below (parallelizeAllLike).
  if (kept >= 0) {
    partial->axis(kept)->parallelize(
        has_kept ? ParallelType::BIDx : ParallelType::Serial);
  }
  if (grid >= 0) {
    partial->axis(grid)->parallelize(
        has_kept ? ParallelType::BIDy : ParallelType::BIDx);
  }
  if (ty >= 0) {
    partial->axis(ty)->parallelize(ParallelType::TIDy);
  }
  partial->axis(tx)->parallelize(ParallelType::TIDx);
  partial->axis(unroll)->parallelize(ParallelType::Unroll);

  TransformPropagator propagator(partial);
  MaxLogicalDomainInfoSpanningTree(partial).traverse(&propagator);
  scheduler_utils::parallelizeAllLike(
      partial, {},
      {ParallelType::BIDx, ParallelType::BIDy, ParallelType::TIDx,
       ParallelType::TIDy, ParallelType::Unroll});

  // The other reductions' loops in the first's order (propagation from
  // the first partial may move their reduced axes last): their producers
  // then inline into them, and the grouped axis below is innermost in
  // each.
  for (size_t i = 1; i < finals.size(); ++i) {
    matchLoopOrder(partials[i], partial);
    matchLoopOrder(finals[i], finals.front());
  }
  // Vector loads from the input caches; vector stores of the outputs.
  // An outer grid reduction reduces a thread's vector of columns in one
  // call: the innermost axis of each final reduction.
  if (params.grouped()) {
    for (TensorView* out : finals) {
      IterDomain* grouped = out->axis(-1);
      FUSER_INTERNAL_ASSERT(
          !grouped->isReduction() && grouped->extent()->isConstInt() &&
              grouped->extent()->constIntValue() == params.vectorize,
          "the grouped axis of ", out->toString());
      grouped->parallelize(ParallelType::Group);
    }
  }
  if (params.vectorize > 1) {
    // Tensors of the input's shape (the input caches, and the outputs of
    // that shape, stored from the same loops) move the vector axis whole.
    // Only copies are vectorized: an input read by its broadcast directly
    // (scheduler_utils::cacheInputsReadOnce) is read an element at a time.
    auto vectorize_like_input = [&](TensorView* tv) {
      IterDomain* last = tv->axis(-1);
      if (tv->nDims() == partial->nDims() && last->extent()->isConstInt() &&
          last->extent()->constIntValue() == params.vectorize) {
        last->parallelize(ParallelType::Vectorize);
      }
    };
    std::for_each(
        input_caches.begin(), input_caches.end(), vectorize_like_input);
    std::for_each(
        full_outputs.begin(), full_outputs.end(), vectorize_like_input);
    if (params.vectorize_output) {
      for (Val* out : fusion->outputs()) {
        auto* tv = out->as<TensorView>();
        if (std::find(full_outputs.begin(), full_outputs.end(), tv) ==
            full_outputs.end()) {
          tv->axis(-1)->parallelize(ParallelType::Vectorize);
        }
      }
    }
  }
  // The input caches (scheduler_utils::cacheInputsReadOnce) fill their
  // buffers before the partial reduction consumes them; the unrolled loop
  // is at `unroll`.
  scheduler_utils::inlineMostLoadingFirst(fusion, input_caches, unroll);
}

} // namespace fuser
