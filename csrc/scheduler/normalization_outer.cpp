#include <scheduler/normalization_outer.h>

#include <base/options.h>
#include <base/register_file.h>
#include <base/strings_and_math.h>
#include <ir/all_nodes.h>
#include <scheduler/normalization_inner.h>
#include <scheduler/persistent_buffers.h>
#include <scheduler/reduction_layout.h>
#include <scheduler/utils.h>
#include <transform/inlining.h>
#include <transform/propagator.h>

#include <algorithm>
#include <sstream>

namespace fuser {

namespace {

// Threads along the kept axes: a warp covers whole rows of up to 64
// vectors, and the rest of the block holds more rows.
constexpr int64_t kMaxThreadsX = 64;
constexpr int64_t kBlockThreads = 256;
// Rows a thread holds at most (its buffers' vectors, one per row).
constexpr int64_t kMaxBatch = 16;
// Registers a thread keeps beside its buffers: the partial sums (a
// vector per reduction), the statistics, the indices of its rows
// (doc/normalization.md §10).
constexpr int64_t kOtherRegisters = 64;

// The reference loop domain: [Kb, G, ty, S, tx, v].
constexpr int64_t kBlocksY = 0;
constexpr int64_t kBlocksX = 1;
constexpr int64_t kThreadsY = 2;
constexpr int64_t kBatch = 3;
constexpr int64_t kThreadsX = 4;

} // namespace

std::string OuterPersistentParams::toString() const {
  std::stringstream ss;
  ss << "OuterPersistent: kept [" << joinInts(kept_axes) << "], reduced ["
     << joinInts(reduced_axes) << "], vectorize " << vectorize << ", batch "
     << batch << ", threads " << threads_x << " x " << threads_y << ", blocks "
     << blocks_x << " x " << blocks_y
     << " (all resident), persistent buffers {";
  for (size_t i = 0; i < persistent_buffers.size(); ++i) {
    ss << (i ? ", " : "") << persistent_buffers[i];
  }
  ss << "} in " << persistent_registers << " registers per thread, cap "
     << registers;
  return ss.str();
}

std::optional<OuterPersistentParams> outerPersistentHeuristics(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) {
  auto* reduced =
      scheduler_utils::reductionsOf(fusion).front()->out()->as<TensorView>();
  const ReductionLayout layout =
      persistentRowLayout(fusion, reduced, runtime_info);
  if (layout.inner) {
    *reason =
        "the reduced axes are innermost in memory (the inner persistent "
        "scheduler's)";
    return std::nullopt;
  }
  OuterPersistentParams params;
  params.kept_axes = layout.kept_axes;
  params.reduced_axes = layout.reduced_axes;
  params.vectorize = layout.vectorize;

  const HeldBuffers held = heldBuffers(fusion);
  params.persistent_buffers = held.names;
  const int64_t buffer_bytes = held.bytes(); // per element
  if (buffer_bytes == 0) {
    *reason =
        "no reduction's result is used again on the tensor it reduces "
        "(nothing to hold: reduction kernels serve it)";
    return std::nullopt;
  }
  const int64_t v = params.vectorize;
  const int64_t vectors = ceilDiv(layout.kept_elements, v);
  const int64_t rows = layout.reduced_elements;
  params.threads_x = std::min(vectors, kMaxThreadsX);
  params.blocks_y = ceilDiv(vectors, params.threads_x);
  params.threads_y = std::max<int64_t>(
      1, std::min(pow2Floor(kBlockThreads / params.threads_x), pow2Ceil(rows)));
  const int64_t threads = params.threads_x * params.threads_y;
  // The fewest rows per thread (the most blocks) that the resident grid
  // holds.
  for (int64_t batch = 1; batch <= kMaxBatch; ++batch) {
    const int64_t buffers = ceilDiv(batch * v * buffer_bytes, 4);
    const int64_t cap = ceilDiv(buffers + kOtherRegisters, 8) * 8;
    if (cap > 255) {
      break;
    }
    const int64_t per_sm = std::min<int64_t>(
        {blocksWithinRegisters(
             runtime_info.device().registers_per_sm, threads, cap),
         2048 / threads, 32});
    const int64_t blocks_x = ceilDiv(rows, params.threads_y * batch);
    if (per_sm >= 1 &&
        blocks_x * params.blocks_y <= runtime_info.multiprocessors() * per_sm) {
      params.batch = batch;
      params.blocks_x = blocks_x;
      params.persistent_registers = buffers;
      params.registers = cap;
      return params;
    }
  }
  std::stringstream ss;
  ss << "the reduced axes hold " << rows << " x " << layout.kept_elements
     << " elements, more than the registers of the blocks the device holds "
        "at once keep ("
     << kMaxBatch << " rows per thread at most); segmented instead";
  *reason = ss.str();
  return std::nullopt;
}

bool OuterPersistentScheduler::canScheduleCompileTime(
    Fusion* fusion, std::string* reason) {
  // Off by default: measured slower than the segments it replaces
  // (doc/normalization.md §10).
  if (!isEnabled(EnableOption::OuterPersistent)) {
    *reason =
        "off by default (FUSER_ENABLE=outer_persistent turns it on; "
        "measured slower than the segments that serve it otherwise)";
    return false;
  }
  return persistentRowsCompileTimeCheck(fusion, /*with_outer=*/false, reason);
}

bool OuterPersistentScheduler::canScheduleRunTime(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) {
  if (scheduler_utils::reductionInputIsEmpty(fusion, runtime_info, reason)) {
    return false;
  }
  return outerPersistentHeuristics(fusion, runtime_info, reason).has_value();
}

std::unique_ptr<HeuristicParams> OuterPersistentScheduler::computeHeuristics(
    Fusion* fusion, RuntimeInfo& runtime_info) {
  std::string reason;
  auto params = outerPersistentHeuristics(fusion, runtime_info, &reason);
  FUSER_INTERNAL_ASSERT(
      params.has_value(),
      "computeHeuristics after the run-time check: ", reason);
  return std::make_unique<OuterPersistentParams>(*params);
}

namespace {

// [R, K] -> [Kb (BIDy), G (BIDx), ty (TIDy), S (unrolled), tx (TIDx), v].
void splitReference(TensorView* reference, const OuterPersistentParams& p) {
  mergeReductionAxes(reference, p.reduced_axes, p.kept_axes);
  reference->split(1, p.vectorize);
  reference->split(1, p.threads_x);
  // [R, Kb, tx, v] -> [R/S, S, Kb, tx, v] -> [G, ty, S, Kb, tx, v]
  reference->split(0, p.batch);
  reference->split(0, p.threads_y);
  reference->reorder({{3, kBlocksY}});
  reference->axis(kBlocksY)->parallelize(ParallelType::BIDy);
  reference->axis(kBlocksX)->parallelize(ParallelType::BIDx);
  reference->axis(kThreadsY)->parallelize(ParallelType::TIDy);
  reference->axis(kBatch)->parallelize(ParallelType::Unroll);
  reference->axis(kThreadsX)->parallelize(ParallelType::TIDx);
}

} // namespace

void OuterPersistentScheduler::schedule(
    Fusion* fusion, const HeuristicParams& hp) {
  const auto& params = dynamic_cast<const OuterPersistentParams&>(hp);
  FusionGuard fg(fusion);
  prepareForPersistence(fusion);
  auto* reduced =
      scheduler_utils::reductionsOf(fusion).front()->out()->as<TensorView>();
  const std::vector<TensorView*> input_caches =
      scheduler_utils::cacheInputsReadOnce(fusion, reduced, CacheOp::Streaming);
  scheduler_utils::cacheAndForkOutputs(fusion, /*unroll=*/true);
  // References: the reductions' inputs, of the input's shape with every
  // axis an iteration (normalization_inner.cpp's schedulePersistentRows
  // says why).
  std::vector<TensorView*> references;
  for (ReductionOp* rop : scheduler_utils::reductionsOf(fusion)) {
    auto* reference = rop->in()->as<TensorView>();
    if (reference->getLoopDomain() != reference->getLogicalDomain()) {
      continue; // reached from an earlier reference
    }
    splitReference(reference, params);
    TransformPropagator propagator(reference);
    MaxLogicalDomainInfoSpanningTree(reference).traverse(&propagator);
    references.push_back(reference);
  }
  // Each thread sums its rows first; the rest crosses TIDy and the
  // blocks, a vector of columns per call (Group).
  std::vector<TensorView*> finals;
  for (ReductionOp* rop : scheduler_utils::reductionsOf(fusion)) {
    auto* out = rop->out()->as<TensorView>();
    out->rFactor({kBatch});
    finals.push_back(out);
  }
  for (TensorView* reference : references) {
    scheduler_utils::parallelizeAllLike(
        reference, {},
        {ParallelType::BIDx, ParallelType::BIDy, ParallelType::TIDy,
         ParallelType::TIDx, ParallelType::Unroll});
  }
  for (TensorView* out : finals) {
    if (params.vectorize > 1) {
      out->axis(-1)->parallelize(ParallelType::Group);
    }
  }
  const int64_t n_dims = references.front()->nDims();
  const auto rank =
      static_cast<int64_t>(references.front()->getLogicalDomain().size());
  scheduler_utils::vectorizeLastAxes(
      fusion, input_caches, n_dims, rank, params.vectorize);
  // One value per column (a statistic's broadcast, rsqrt(var + eps)) is
  // computed once per block of columns, not for each row a thread holds.
  auto [per_column, per_element] = scheduler_utils::splitByBroadcastAxes(
      fusion, n_dims, kBlocksX, kThreadsX);
  inlineMost(per_element);
  for (TensorView* tv : per_column) {
    tv->inlineAt(kBlocksX, /*best_effort=*/true);
  }
}

} // namespace fuser
