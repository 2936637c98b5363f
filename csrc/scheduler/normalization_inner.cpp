#include <scheduler/normalization_inner.h>

#include <base/options.h>
#include <base/register_file.h>
#include <base/strings_and_math.h>
#include <ir/all_nodes.h>
#include <ops/arith.h>
#include <scheduler/persistent_buffers.h>
#include <scheduler/reduction_layout.h>
#include <scheduler/utils.h>
#include <transform/inlining.h>
#include <transform/propagator.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <sstream>
#include <unordered_set>

namespace fuser {

namespace {

// A row's threads launch in whole warps, or in the power of two above
// their count below a warp (doc/normalization.md §3).
int64_t paddedMultipleOf(int64_t threads) {
  return std::min<int64_t>(32, pow2Ceil(threads));
}

int64_t launchedThreads(int64_t threads) {
  return ceilDiv(threads, paddedMultipleOf(threads)) *
         paddedMultipleOf(threads);
}

constexpr int64_t kMaxThreadsPerRow = 1024;
// The register budget of a thread of a persistent kernel (measured on the
// H200, doc/normalization.md §4).
constexpr int64_t kRegistersPerThread = 64;
// Registers a thread keeps for everything but the persistent buffers.
constexpr int64_t kOtherRegisters = 32;

using Device = RuntimeInfo::Device;

// The registers per thread the buffers may take at `threads` per block.
int64_t bufferRegisterBudget(int64_t threads, const Device& device) {
  return std::min<int64_t>(255, device.registers_per_sm / threads) -
         kOtherRegisters;
}

// Registers an inner-outer kernel keeps for everything but its buffers and
// partials: the loop over the rows, the partials' and the rows' indices.
// With 32, a bf16 layer norm backward (8 elements per thread) spilled 56
// million local-memory requests on the H200 (doc/normalization.md §9).
constexpr int64_t kInnerOuterOtherRegisters = 64;

// The register cap of an inner-outer kernel whose buffers and partials
// take `buffer_registers`: those and the other registers, in the
// allocation granule of 8.
int64_t innerOuterRegisters(int64_t buffer_registers) {
  return std::min<int64_t>(
      255, ceilDiv(buffer_registers + kInnerOuterOtherRegisters, 8) * 8);
}

// The threads of a block of `params`.
int64_t blockThreads(const InnerPersistentParams& params) {
  return launchedThreads(params.threads_x) * params.threads_y;
}

// The register cap of an inner persistent kernel: at least the budget and
// the buffers. Several buffers (a backward's gradient and input, and a
// product of them) keep their loads, the weights and both reductions'
// values live beside them: they get the 32 other registers the heuristics
// left (bufferRegisterBudget) too, while two blocks still fit per SM (one
// block's loads then overlap another's reductions). Buffers all narrower
// than float also leave the float values computed from them (dy * w, x *
// invstd) out of the buffers: those get a register per element of the
// thread's row part on top. Measured on the H200 (doc/normalization.md
// §4): a bf16 layer norm backward, three buffers (one float) in 64
// registers, blocks of 256, spilled 46 million local-memory requests
// capped at 64 (925 GB/s) and ran at 2983 GB/s at 96; a bf16 RMS norm
// backward, two bf16 buffers in 32 registers and 32 elements per thread,
// spilled 22 million at 64 (1525 GB/s, 506 us) and ran at 3770 GB/s at 96
// (no spills); softmax over 16384 floats, two buffers in 64 registers,
// blocks of 512, ran at 3817 GB/s at 64 (two blocks per SM) and 2882 at
// 96 (one); bf16 softmax over 4096 (a float buffer) fell from 2971 to
// 2352 GB/s at 112 (two blocks per SM instead of three at 80).
int64_t innerRegisters(
    const InnerPersistentParams& params, const Device& device) {
  const int64_t row_values =
      params.narrow_buffers ? params.batch * params.vectorize : 0;
  const int64_t with_others = std::min<int64_t>(
      255,
      ceilDiv(params.persistent_registers + kOtherRegisters + row_values, 8) *
          8);
  const bool add_others =
      params.persistent_buffers.size() > 1 &&
      blocksWithinRegisters(
          device.registers_per_sm, blockThreads(params), with_others) >= 2;
  const int64_t cap = std::max(
      {kRegistersPerThread, params.persistent_registers,
       add_others ? with_others : int64_t{0}});
  if (!isEnabled(EnableOption::TightRegisterCaps)) {
    return cap;
  }
  // The cap's blocks per SM rounded up: the cap rounded down to what that
  // many blocks leave each thread, in the allocation granule of 8 (the
  // launch bounds otherwise give the compiler the registers up to the
  // next boundary, doc/normalization.md §4).
  const int64_t threads = blockThreads(params);
  const int64_t blocks = ceilDiv(device.registers_per_sm, threads * cap);
  return std::max<int64_t>(
      8, registersPerThreadAt(device.registers_per_sm, threads, blocks));
}

// The shared memory an SM reserves for each of its blocks (sm_90).
constexpr int64_t kSharedBytesReservedPerBlock = 1024;

// The blocks of `params` an SM holds at once at the kernel's register cap
// and shared memory (its buffers and, inner-outer, the partials'
// workspace).
int64_t blocksPerSm(const InnerPersistentParams& params, const Device& device) {
  const int64_t threads = blockThreads(params);
  const int64_t shared = params.shared_bytes + params.partial_workspace_bytes +
                         kSharedBytesReservedPerBlock;
  return std::max<int64_t>(
      1, std::min<int64_t>(
             {blocksWithinRegisters(
                  device.registers_per_sm, threads, params.registers),
              2048 / threads, device.shared_bytes_per_sm / shared, 32}));
}

int64_t residentThreads(
    const InnerPersistentParams& params, const Device& device) {
  return blocksPerSm(params, device) * blockThreads(params);
}

// The registers beyond the kernel's cap that its launch bounds leave a
// thread: the bounds name the blocks per SM the cap allows
// (codegen/kernel_printer.cpp), and the compiler may take what those
// blocks leave, in the allocation granule of 8.
int64_t registerSlack(
    const InnerPersistentParams& params, const Device& device) {
  const int64_t threads = blockThreads(params);
  const int64_t blocks = std::max<int64_t>(
      1, blocksWithinRegisters(
             device.registers_per_sm, threads, params.registers));
  return registersPerThreadAt(device.registers_per_sm, threads, blocks) -
         params.registers;
}

// Where a persistent kernel keeps its buffers, per element of a row: bytes
// in registers and in shared memory, and the inputs whose buffers are in
// shared memory.
struct Placement {
  int64_t register_bytes = 0;
  int64_t shared_bytes = 0;
  std::vector<int64_t> inputs;
};

// Every buffer in registers first, then the inputs' buffers moved to
// shared memory one by one, the largest first (doc/normalization.md §11).
// Partials and computed buffers stay in registers.
std::vector<Placement> sharedPlacements(
    const HeldBuffers& held, int64_t buffer_bytes) {
  std::vector<std::pair<int64_t, int64_t>> movable; // (bytes, input)
  for (size_t i = 0; i < held.names.size(); ++i) {
    if (held.input_positions[i] >= 0) {
      movable.emplace_back(held.element_bytes[i], held.input_positions[i]);
    }
  }
  std::stable_sort(
      movable.begin(), movable.end(),
      [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Placement> placements = {{buffer_bytes, 0, {}}};
  for (const auto& [bytes, input] : movable) {
    Placement next = placements.back();
    next.register_bytes -= bytes;
    next.shared_bytes += bytes;
    next.inputs.push_back(input);
    placements.push_back(next);
  }
  return placements;
}

// Inner-outer: as many blocks as the device holds at once at the
// kernel's register cap, each looping over its share of the rows; fewer
// blocks leave fewer partials for the outer reductions to combine
// (doc/normalization.md §9).
int64_t innerOuterGridBlocks(
    const InnerPersistentParams& params, int64_t kept_elements,
    const Device& device) {
  return std::max<int64_t>(
      1, std::min(
             device.multiprocessors * blocksPerSm(params, device),
             ceilDiv(std::max<int64_t>(1, kept_elements), params.threads_y)));
}

// The cost model of a row schedule: for a batch (vectors of a row per
// thread) and a placement of the held buffers, the threads, registers and
// shared memory it takes, and whether the device fits it.
class RowCosts {
 public:
  RowCosts(
      const ReductionLayout& layout, const RowReductions& rows,
      std::vector<Placement> placements, int64_t partial_bytes,
      bool shared_enabled, const Device& device)
      : layout_(layout),
        rows_(rows),
        placements_(std::move(placements)),
        partial_bytes_(partial_bytes),
        shared_enabled_(shared_enabled),
        device_(device),
        vectors_(ceilDiv(layout.reduced_elements, layout.vectorize)) {}

  const std::vector<Placement>& placements() const {
    return placements_;
  }
  bool sharedEnabled() const {
    return shared_enabled_;
  }
  int64_t vectorize() const {
    return layout_.vectorize;
  }
  int64_t vectors() const {
    return vectors_;
  }
  int64_t threads(int64_t batch) const {
    return ceilDiv(vectors_, batch);
  }
  int64_t launched(int64_t batch) const {
    return launchedThreads(threads(batch));
  }
  // Short rows share a block over TIDy: about 256 threads per block.
  int64_t rowsPerBlock(int64_t batch) const {
    return std::max<int64_t>(
        1, std::min<int64_t>(
               256 / launched(batch),
               pow2Ceil(std::max<int64_t>(1, layout_.kept_elements))));
  }
  int64_t registers(int64_t batch, const Placement& place) const {
    return ceilDiv(batch * layout_.vectorize * place.register_bytes, 4);
  }
  int64_t shared(
      int64_t batch, const Placement& place, int64_t block_rows) const {
    return batch * layout_.vectorize * place.shared_bytes * launched(batch) *
           block_rows;
  }
  // The reductions' shared memory beside the buffers: a slot per thread
  // and value reduced together (the partials' group, or one value of up
  // to 8 bytes).
  int64_t workspace(int64_t batch) const {
    return std::max<int64_t>(8, partial_bytes_ * batch * layout_.vectorize) *
           launched(batch) * rowsPerBlock(batch);
  }
  bool fits(int64_t batch, const Placement& place) const {
    return registers(batch, place) <=
               bufferRegisterBudget(launched(batch), device_) &&
           shared(batch, place, rowsPerBlock(batch)) + workspace(batch) <=
               device_.shared_bytes_per_block &&
           (!innerOuterShared() || capAllowed(batch, place));
  }
  // Inner-outer with shared buffers: the kernel's register cap (the
  // buffers and the others, innerOuterRegisters) is also one its block's
  // threads can have (at 1024 threads, 64 each).
  bool innerOuterShared() const {
    return !rows_.outer.empty() && shared_enabled_;
  }
  // The first placement that fits at `batch`, or placements().end().
  std::vector<Placement>::const_iterator firstFit(int64_t batch) const {
    return std::find_if(
        placements_.begin(), placements_.end(),
        [&](const Placement& place) { return fits(batch, place); });
  }
  // The parameters of `base` at this batch, placement and rows per block.
  InnerPersistentParams withBatch(
      const InnerPersistentParams& base, int64_t batch, const Placement& place,
      int64_t block_rows) const {
    InnerPersistentParams p = base;
    p.batch = batch;
    p.threads_x = threads(batch);
    p.persistent_registers = registers(batch, place);
    p.shared_inputs = place.inputs;
    p.shared_bytes = shared(batch, place, block_rows);
    p.threads_y = block_rows;
    if (rows_.outer.empty()) {
      p.registers = innerRegisters(p, device_);
    } else {
      p.registers = innerOuterRegisters(p.persistent_registers);
      p.partial_workspace_bytes = workspace(batch);
      p.grid_blocks = innerOuterGridBlocks(p, layout_.kept_elements, device_);
    }
    return p;
  }
  // Why no placement fits at `batch`.
  std::string whyNothingFits(int64_t batch) const {
    const Placement& most_shared = placements_.back();
    std::stringstream ss;
    ss << "a row of " << layout_.reduced_elements << " elements needs "
       << registers(batch, placements_.front())
       << " registers per thread for its persistent buffers at "
       << threads(batch) << " threads (the budget is "
       << bufferRegisterBudget(launched(batch), device_) << ")";
    if (placements_.size() > 1) {
      ss << "; with the inputs' buffers in shared memory, "
         << registers(batch, most_shared) << " registers and "
         << shared(batch, most_shared, rowsPerBlock(batch)) + workspace(batch)
         << " bytes of shared memory per block (at most "
         << device_.shared_bytes_per_block << ")";
    } else if (!shared_enabled_) {
      ss << "; shared-memory buffers are off (FUSER_ENABLE=shared_buffers "
            "turns them on)";
    } else {
      ss << "; no input's buffer can move to shared memory";
    }
    return ss.str();
  }

 private:
  bool capAllowed(int64_t batch, const Placement& place) const {
    return innerOuterRegisters(registers(batch, place)) <=
           std::min<int64_t>(
               255, device_.registers_per_sm /
                        (launched(batch) * rowsPerBlock(batch)));
  }

  const ReductionLayout& layout_;
  const RowReductions& rows_;
  std::vector<Placement> placements_;
  int64_t partial_bytes_;
  bool shared_enabled_;
  const Device& device_;
  int64_t vectors_;
};

// An inner normalization's batch, from the fewest vectors per thread that
// fit (`batch` at `place`): more (up to 32 elements, loads in flight and
// fewer warps to combine) while two warps share a row, or one with
// FUSER_ENABLE=warp_per_row (the row's sums then cross no shared memory);
// then the rows of a block.
InnerPersistentParams innerBatch(
    const RowCosts& costs, const InnerPersistentParams& base, int64_t batch,
    const Placement& place, const Device& device) {
  const int64_t v = costs.vectorize();
  const int64_t min_row_threads = isEnabled(EnableOption::WarpPerRow) ? 32 : 64;
  const int64_t fewest = batch;
  while (batch * 2 * v <= 32 && costs.threads(batch * 2) >= min_row_threads &&
         costs.fits(batch * 2, place)) {
    batch *= 2;
  }
  // A batch that divides the row's vectors leaves no thread a part of a
  // vector past the row's end: with a remainder, the warp holding the
  // row's end runs the predicated copy of every nest after the copy
  // without predicates (doc/indexing.md §6), for every row, and the
  // block waits for it. The largest such batch, when one keeps two
  // warps per row (4097 = 17 x 241: 241 threads of 17, where doubling
  // gives 205 of 20).
  if (costs.vectors() % batch != 0) {
    for (int64_t b = 32 / v; b >= fewest; --b) {
      if (costs.vectors() % b == 0 && costs.threads(b) >= min_row_threads &&
          costs.threads(b) <= kMaxThreadsPerRow && costs.fits(b, place)) {
        batch = b;
        break;
      }
    }
  }
  // Unless FUSER_DISABLE=fewer_rows_per_block, the block's rows halved
  // while that keeps more threads resident at the kernel's register
  // cap: smaller blocks take the register file in finer steps (a cap of
  // 96 holds 2 blocks of 256 threads, 512, but 5 of 128, 640;
  // doc/normalization.md §4).
  InnerPersistentParams best =
      costs.withBatch(base, batch, place, costs.rowsPerBlock(batch));
  if (!isDisabled(DisableOption::FewerRowsPerBlock)) {
    for (int64_t fewer_rows = best.threads_y / 2; fewer_rows >= 1;
         fewer_rows /= 2) {
      InnerPersistentParams fewer =
          costs.withBatch(base, batch, place, fewer_rows);
      if (residentThreads(fewer, device) > residentThreads(best, device)) {
        best = fewer;
      }
    }
  }
  return best;
}

// Inner-outer: each block runs its row groups one after another, a load,
// a reduction and a store each, so the latencies are hidden only by the
// threads resident on an SM: the batch that keeps the most resident wins
// (on a tie, the rule below, then the larger; doc/normalization.md §9).
InnerPersistentParams innerOuterBatch(
    const RowCosts& costs, const InnerPersistentParams& base, int64_t batch,
    const Placement& place, const Device& device) {
  InnerPersistentParams best =
      costs.withBatch(base, batch, place, costs.rowsPerBlock(batch));
  // On a tie of buffers all in registers, a cap its launch bounds give
  // exactly (no slack beyond the estimated 64 other registers) loses: the
  // benchmark's bf16 RMS norm backward over 4096 columns spilled 620 bytes
  // per thread at batch 4, cap 128 at 256 threads, and ran at half
  // nvFuser's speed (doc/normalization.md §9); at batch 2 its cap of 96
  // has 128.
  auto has_slack = [&](const InnerPersistentParams& p) {
    return !p.shared_inputs.empty() || registerSlack(p, device) > 0;
  };
  auto consider = [&](const InnerPersistentParams& candidate) {
    const int64_t resident = residentThreads(candidate, device);
    const int64_t best_resident = residentThreads(best, device);
    const bool slack = has_slack(candidate);
    const bool best_slack = has_slack(best);
    if (resident > best_resident ||
        (resident == best_resident &&
         (slack > best_slack ||
          (slack == best_slack && candidate.batch > best.batch)))) {
      best = candidate;
    }
  };
  // With shared buffers, every placement at every batch: dy and x of a
  // bf16 layer norm backward over 4096 columns in shared memory leave the
  // registers to the partials, at batch 4 (32 elements of a row per
  // thread) 4 rows in flight per SM where the registers hold 2 at batch 2
  // (doc/normalization.md §11). Registers only: the larger batches while
  // they fit.
  for (int64_t b = batch; b * costs.vectorize() <= 32; b *= 2) {
    for (const Placement& p : costs.placements()) {
      if (!costs.fits(b, p)) {
        if (!costs.sharedEnabled()) {
          return best;
        }
        continue;
      }
      consider(costs.withBatch(base, b, p, costs.rowsPerBlock(b)));
    }
  }
  return best;
}

} // namespace

// Legality first (the reduced axes innermost in memory, a batch whose
// buffers fit), then the cost model (RowCosts) picks the batch, the
// placement of the buffers and the block's rows, which fill the
// parameters.
std::optional<InnerPersistentParams> innerPersistentHeuristics(
    Fusion* fusion, RuntimeInfo& runtime_info, const RowReductions& rows,
    std::string* reason) {
  InnerPersistentParams params;
  const Device& device = runtime_info.device();
  auto* reduced = rows.inner.front()->out()->as<TensorView>();
  const ReductionLayout layout =
      persistentRowLayout(fusion, reduced, runtime_info);
  if (!layout.inner) {
    *reason =
        "the reduced axes are not innermost in memory (an outer "
        "normalization; no outer persistent scheduler yet)";
    return std::nullopt;
  }
  params.kept_axes = layout.kept_axes;
  params.reduced_axes = layout.reduced_axes;
  params.vectorize = layout.vectorize;

  // The buffers of the fusion as schedule() rewrites it.
  const HeldBuffers held = heldBuffers(fusion);
  params.persistent_buffers = held.names;
  params.narrow_buffers = held.narrow();
  int64_t buffer_bytes = held.bytes(); // per element of a row
  // An outer reduction accumulates its thread's columns of the rows it
  // visits (doc/normalization.md §9).
  int64_t partial_bytes = 0;
  for (ReductionOp* rop : rows.outer) {
    params.persistent_buffers.push_back("partial " + rop->out()->toString());
    buffer_bytes += dataTypeSize(rop->out()->dtype());
    partial_bytes = std::max(partial_bytes, dataTypeSize(rop->out()->dtype()));
  }
  // Shared buffers are off by default until run on a GPU (§11).
  const bool shared_enabled = isEnabled(EnableOption::SharedBuffers);
  std::vector<Placement> placements = sharedPlacements(held, buffer_bytes);
  if (!shared_enabled) {
    placements.resize(1); // every buffer in registers
  }
  const RowCosts costs(
      layout, rows, std::move(placements), partial_bytes, shared_enabled,
      device);
  // The fewest vectors per thread that a row of up to 1024 threads allows:
  // buffers in registers, or else the fewest inputs' buffers in shared
  // memory that leave the rest fitting the registers
  // (doc/normalization.md §11); inner-outer with shared buffers, fewer
  // threads when the cap needs them.
  const int64_t v = layout.vectorize;
  int64_t batch =
      std::max<int64_t>(1, ceilDiv(costs.vectors(), kMaxThreadsPerRow));
  auto placement = costs.firstFit(batch);
  while (costs.innerOuterShared() && placement == costs.placements().end() &&
         batch * 2 * v <= 32) {
    batch *= 2;
    placement = costs.firstFit(batch);
  }
  if (placement == costs.placements().end()) {
    *reason = costs.whyNothingFits(batch);
    return std::nullopt;
  }
  return rows.outer.empty()
             ? innerBatch(costs, params, batch, *placement, device)
             : innerOuterBatch(costs, params, batch, *placement, device);
}

RowReductions rowReductions(
    Fusion* fusion, const std::vector<int64_t>& reduced_axes) {
  std::vector<int64_t> inner_positions = reduced_axes;
  std::sort(inner_positions.begin(), inner_positions.end());
  RowReductions rows;
  for (ReductionOp* rop : scheduler_utils::reductionsOf(fusion)) {
    (scheduler_utils::reducedPositions(rop) == inner_positions ? rows.inner
                                                               : rows.outer)
        .push_back(rop);
  }
  return rows;
}

int64_t InnerPersistentParams::paddedMultiple() const {
  return paddedMultipleOf(threads_x);
}

std::string InnerPersistentParams::toString() const {
  std::stringstream ss;
  ss << (grid_blocks > 0 ? "InnerOuterPersistent" : "InnerPersistent")
     << ": kept [" << joinInts(kept_axes) << "], reduced ["
     << joinInts(reduced_axes) << "], vectorize " << vectorize << ", batch "
     << batch << ", threads " << threads_x << " (launched in multiples of "
     << paddedMultiple() << ") x " << threads_y;
  if (grid_blocks > 0) {
    ss << ", " << grid_blocks << " blocks looping over the rows";
  }
  ss << ", persistent buffers {";
  for (size_t i = 0; i < persistent_buffers.size(); ++i) {
    ss << (i ? ", " : "") << persistent_buffers[i];
  }
  ss << "} in " << persistent_registers << " registers per thread";
  if (!shared_inputs.empty()) {
    ss << ", the buffers of inputs [" << joinInts(shared_inputs)
       << "] in shared memory (" << shared_bytes << " bytes per block)";
  }
  ss << "; the kernel capped at " << registers << " registers per thread";
  // What the launch bounds the cap becomes give a thread
  // (codegen/kernel_printer.cpp).
  const int64_t threads = launchedThreads(threads_x) * threads_y;
  const int64_t blocks =
      registers > 0 ? blocksWithinRegisters(kRegistersPerSm, threads, registers)
                    : 0;
  if (blocks >= 1) {
    ss << " (its launch bounds, " << blocks << " blocks of " << threads
       << " per SM, allow "
       << registersPerThreadAt(kRegistersPerSm, threads, blocks) << ")";
  }
  return ss.str();
}

namespace {

// Whether an expand repeats a value along axes a reduction reduces (a
// statistic repeated over the row and read other than beside it:
// bypassRedundantExpands took the rest). Its expanded axis maps exactly to
// no axis of the row, so neither the vectorization check nor the indexer
// reaches it from the row's loops; the segments write it in a kernel of
// its own (doc/ops.md "Expand").
bool expandsAlongReducedAxes(
    Fusion* fusion, const std::vector<std::vector<int64_t>>& reduced_sets,
    std::string* reason) {
  for (Expr* expr : fusion->exprs()) {
    auto* expand = dynamic_cast<ExpandOp*>(expr);
    if (expand == nullptr) {
      continue;
    }
    for (int64_t p : expand->expandedAxes()) {
      for (const std::vector<int64_t>& set : reduced_sets) {
        if (std::find(set.begin(), set.end(), p) != set.end()) {
          *reason = expand->out()->toString() + " expands axis " +
                    std::to_string(p) +
                    ", which a reduction reduces (a statistic repeated "
                    "over the row, read other than beside it)";
          return true;
        }
      }
    }
  }
  return false;
}

} // namespace

bool persistentRowsCompileTimeCheck(
    Fusion* fusion, bool with_outer, std::string* reason) {
  const std::vector<ReductionOp*> reductions =
      scheduler_utils::reductionsOf(fusion);
  if (reductions.empty()) {
    *reason = "it has no reduction";
    return false;
  }
  auto* first = reductions.front()->out()->as<TensorView>();
  const int64_t rank = static_cast<int64_t>(first->getLogicalDomain().size());
  // The sets of axes the reductions reduce.
  std::vector<std::vector<int64_t>> reduced_sets;
  for (ReductionOp* rop : reductions) {
    auto* out = rop->out()->as<TensorView>();
    if (static_cast<int64_t>(out->getLogicalDomain().size()) != rank) {
      *reason = out->toString() + " has another rank than " + first->toString();
      return false;
    }
    const std::vector<int64_t> reduced = scheduler_utils::reducedPositions(rop);
    if (std::find(reduced_sets.begin(), reduced_sets.end(), reduced) ==
        reduced_sets.end()) {
      reduced_sets.push_back(reduced);
    }
  }
  if (!with_outer && reduced_sets.size() != 1) {
    *reason =
        "its reductions reduce different axes (one set of normalized "
        "axes; the inner-outer scheduler takes two complementary sets)";
    return false;
  }
  if (with_outer) {
    // Two sets that together hold each axis once.
    std::vector<int64_t> both;
    for (const std::vector<int64_t>& set : reduced_sets) {
      both.insert(both.end(), set.begin(), set.end());
    }
    std::sort(both.begin(), both.end());
    std::vector<int64_t> every_axis(static_cast<size_t>(rank));
    std::iota(every_axis.begin(), every_axis.end(), 0);
    if (reduced_sets.size() != 2 || both != every_axis) {
      *reason =
          "its reductions do not reduce two complementary sets of axes "
          "(the rows' and the columns')";
      return false;
    }
  }
  if (expandsAlongReducedAxes(fusion, reduced_sets, reason)) {
    return false;
  }
  const auto n_reduced = static_cast<int64_t>(reduced_sets.front().size());
  for (Expr* expr : fusion->exprs()) {
    if (!expr->isA<ReductionOp>() && !scheduler_utils::isPointwiseExpr(expr)) {
      *reason = "it has a " + expr->getOpString() +
                " (reductions, elementwise ops, copies and broadcasts only)";
      return false;
    }
    for (Val* out : expr->outputs()) {
      auto* tv = dynamic_cast<TensorView*>(out);
      if (tv == nullptr) {
        continue;
      }
      // The input's shape, the reduced one, or the normalized axes alone
      // (a weight before its broadcast, or an outer reduction's result).
      const int64_t r = scheduler_utils::rankOf(tv);
      if (r != rank && r != rank - n_reduced && r != n_reduced) {
        *reason = tv->toString() + " has rank " + std::to_string(r) +
                  ", neither the input's, the reduced one's nor the "
                  "normalized axes'";
        return false;
      }
    }
  }
  for (Val* out : fusion->outputs()) {
    if (!scheduler_utils::hasDefaultLayout(out->as<TensorView>())) {
      *reason = "output " + out->toString() + " has an allocation domain";
      return false;
    }
  }
  return scheduler_utils::isUnscheduled(fusion, reason);
}

bool InnerPersistentScheduler::canScheduleCompileTime(
    Fusion* fusion, std::string* reason) {
  return persistentRowsCompileTimeCheck(fusion, /*with_outer=*/false, reason);
}

bool InnerPersistentScheduler::canScheduleRunTime(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) {
  if (scheduler_utils::reductionInputIsEmpty(fusion, runtime_info, reason)) {
    return false;
  }
  ReductionOp* first = scheduler_utils::reductionsOf(fusion).front();
  return innerPersistentHeuristics(
             fusion, runtime_info,
             rowReductions(fusion, scheduler_utils::reducedPositions(first)),
             reason)
      .has_value();
}

std::unique_ptr<HeuristicParams> InnerPersistentScheduler::computeHeuristics(
    Fusion* fusion, RuntimeInfo& runtime_info) {
  std::string reason;
  ReductionOp* first = scheduler_utils::reductionsOf(fusion).front();
  auto params = innerPersistentHeuristics(
      fusion, runtime_info,
      rowReductions(fusion, scheduler_utils::reducedPositions(first)), &reason);
  FUSER_INTERNAL_ASSERT(
      params.has_value(),
      "computeHeuristics after the run-time check: ", reason);
  return std::make_unique<InnerPersistentParams>(*params);
}

void InnerPersistentScheduler::schedule(
    Fusion* fusion, const HeuristicParams& hp) {
  schedulePersistentRows(
      fusion, dynamic_cast<const InnerPersistentParams&>(hp));
}

namespace {

// An outer reduction's output, split like the row ([G(r), S(r), ty(r),
// batch, tx, v]) and its thread's partial over S computed first
// (rFactor), reduces across TIDy and the blocks in one grouped call per
// thread: [G, ty, tx, batch * v], the group last (doc/normalization.md §9).
void groupOuterReduction(TensorView* out, int64_t batch_axis) {
  // [G, ty, batch, tx, v] -> [G, ty, tx, batch, v] -> [G, ty, tx, batch*v]
  out->reorder({{batch_axis - 1, batch_axis}, {batch_axis, batch_axis - 1}});
  out->merge(batch_axis);
  out->axis(batch_axis)->parallelize(ParallelType::Group);
}

} // namespace

void schedulePersistentRows(
    Fusion* fusion, const InnerPersistentParams& params) {
  FusionGuard fg(fusion);
  const bool inner_outer = params.grid_blocks > 0;
  // Two copies of each unrolled nest (doc/indexing.md §6) leave the
  // compiler taking registers for the predicated one that the one without
  // predicates does not need; capped, it spills in the rarely run copy
  // and keeps more blocks per SM (doc/normalization.md §4). Never below
  // the buffers themselves; with outer partials, the grid's blocks were
  // counted for the buffers and the other registers together.
  FUSER_INTERNAL_ASSERT(params.registers > 0, "no register cap was set");
  prepareForPersistence(fusion);
  const RowReductions rows = rowReductions(fusion, params.reduced_axes);
  if (inner_outer) {
    recomputeReductionInputs(fusion, rows.outer);
    if (!params.shared_inputs.empty()) {
      for (ReductionOp* rop : rows.inner) {
        recomputeReductionInputs(fusion, {rop});
      }
    }
    scheduler_utils::removeDeadExprs(fusion);
  }
  const std::vector<TensorView*> input_caches =
      scheduler_utils::cacheInputsReadOnce(
          fusion, rows.inner.front()->out()->as<TensorView>(),
          // Evict-first at every size: with the default policy a bf16 RMS
          // norm ran 1.5x slower (softmax 2-5% faster), doc/normalization.md
          // §4.
          CacheOp::Streaming);
  scheduler_utils::cacheAndForkOutputs(fusion, /*unroll=*/true);
  // Buffers in shared memory (doc/normalization.md §11): each thread
  // writes and reads the same elements of its block's array (the loads and
  // their consumers share the thread axes), so no barrier is needed. Each
  // use reads through a register copy of its own, a vector at a time
  // (element reads, 2 bytes each 16 bytes apart across the threads, would
  // take four times the wavefronts each and eight times the instructions).
  std::vector<TensorView*> vectorized_caches = input_caches;
  for (int64_t position : params.shared_inputs) {
    Val* input = fusion->inputs().at(static_cast<size_t>(position));
    auto cache = std::find_if(
        input_caches.begin(), input_caches.end(),
        [&](TensorView* tv) { return tv->definition()->input(0) == input; });
    FUSER_INTERNAL_ASSERT(
        cache != input_caches.end(), "no cache of the held input ",
        input->toString());
    (*cache)->setMemoryType(MemoryType::Shared);
    const std::vector<Expr*> uses = (*cache)->uses();
    for (Expr* use : uses) {
      TensorView* read = set(*cache);
      fusion->replaceInput(use, *cache, read);
      vectorized_caches.push_back(read);
    }
  }
  // A reference is a reduction's input: a tensor of the row's shape with
  // every axis an iteration, so that propagation from it reaches every
  // tensor of that shape with the whole schedule (from a reduction, the
  // reduced axes would reach the tensors after it only through their
  // broadcasts, which carry nothing). Tensors that no propagation from the
  // first reached (a part of the fusion that shares no tensor with it)
  // take the next reduction's input.
  const bool has_kept = !params.kept_axes.empty();
  // Inner-outer: [G, S, ty, batch, tx, v]; inner: [K/ty, ty, batch, tx, v]
  // or [batch, tx, v].
  const int64_t batch_axis = inner_outer ? 3 : (has_kept ? 2 : 0);
  const int64_t tx = batch_axis + 1;
  const int64_t vec = batch_axis + 2;
  std::vector<TensorView*> references;
  for (ReductionOp* rop : scheduler_utils::reductionsOf(fusion)) {
    auto* reference = rop->in()->as<TensorView>();
    if (reference->getLoopDomain() != reference->getLogicalDomain()) {
      continue; // reached from an earlier reference
    }
    FUSER_INTERNAL_ASSERT(
        !reference->isFusionInput(), "the reduction reads an uncached input");
    mergeReductionAxes(reference, params.kept_axes, params.reduced_axes);
    // [K, R] -> [K/ty, ty, batch, tx, v]
    const int64_t r = has_kept ? 1 : 0;
    reference->split(r, params.vectorize);
    reference->split(r, params.batch, /*inner_split=*/false);
    if (has_kept) {
      reference->split(0, params.threads_y);
      if (inner_outer) {
        // [K/ty, ...] -> [G, S, ...]: each block loops over its rows.
        reference->split(0, params.grid_blocks, /*inner_split=*/false);
      }
      reference->axis(0)->parallelize(ParallelType::BIDx);
      reference->axis(batch_axis - 1)->parallelize(ParallelType::TIDy);
    }
    reference->axis(tx)->parallelize(ParallelType::TIDx);
    reference->axis(tx)->padToMultipleOf(params.paddedMultiple());
    reference->axis(tx)->setExtentBound(launchedThreads(params.threads_x));
    reference->axis(batch_axis)->parallelize(ParallelType::Unroll);
    TransformPropagator propagator(reference);
    MaxLogicalDomainInfoSpanningTree(reference).traverse(&propagator);
    references.push_back(reference);
  }

  // Each inner reduction, now split alike, reduces its thread's batch of
  // vectors first; each outer one its thread's columns of the rows its
  // block visits.
  std::vector<TensorView*> outer_outs;
  for (ReductionOp* rop : rows.outer) {
    outer_outs.push_back(rop->out()->as<TensorView>());
  }
  const int64_t scheduled_dims = references.front()->nDims();
  for (ReductionOp* rop : rows.inner) {
    auto* out = rop->out()->as<TensorView>();
    // A reduction of one element per row (over a size-1 axis: the value a
    // gather picked, or a broadcast, which the ID graph joins to no axis of
    // the row) shares only the row's axes with the reference; its serial
    // loop of one is all there is to reduce.
    if (out->nDims() == scheduled_dims) {
      out->rFactor({batch_axis, vec});
    }
  }
  for (TensorView* out : outer_outs) {
    if (out->nDims() == scheduled_dims) {
      out->rFactor({1});
    }
  }
  for (TensorView* reference : references) {
    scheduler_utils::parallelizeAllLike(
        reference, {},
        {ParallelType::BIDx, ParallelType::TIDy, ParallelType::TIDx,
         ParallelType::Unroll});
  }
  for (TensorView* out : outer_outs) {
    groupOuterReduction(out, batch_axis);
  }
  const int64_t n_dims = references.front()->nDims();
  const auto row_rank =
      static_cast<int64_t>(references.front()->getLogicalDomain().size());

  // A weight read along the row by its broadcast lowers to a copy too: 64
  // scalar loads of a bf16 layer norm's weight and bias per thread become
  // 8.
  scheduler_utils::vectorizeLastAxes(
      fusion, vectorized_caches, n_dims, row_rank, params.vectorize);
  // One value per row (a statistic's broadcast, rsqrt(var + eps), a
  // reciprocal) is computed once per row, at the row's loops, not for
  // each element the loops below it visit.
  auto [per_row, per_element] =
      scheduler_utils::splitByBroadcastAxes(fusion, n_dims, batch_axis, n_dims);
  // Inner-outer: the inputs' caches are buffers of the row, loaded above
  // the batch loop. An input read towards a row's reduction and a
  // column's (dy in dy * w and in sum(dy, 0)) inlined deeper would make
  // all its consumers share one batch loop, which the row's reduction
  // ends, while the kernel's expr order may put a column's product after
  // that reduction (doc/normalization.md §9).
  std::vector<TensorView*> row_buffers;
  if (inner_outer) {
    const std::unordered_set<TensorView*> caches(
        input_caches.begin(), input_caches.end());
    auto is_cache = [&](TensorView* tv) { return caches.count(tv) != 0; };
    per_element.erase(
        std::remove_if(per_element.begin(), per_element.end(), is_cache),
        per_element.end());
    row_buffers = input_caches;
  }
  inlineMost(per_element);
  for (TensorView* tv : per_row) {
    tv->inlineAt(batch_axis, /*best_effort=*/true);
  }
  for (TensorView* cache : row_buffers) {
    cache->inlineAt(batch_axis);
  }
}

} // namespace fuser
