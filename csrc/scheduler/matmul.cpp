#include <scheduler/matmul.h>

#include <base/options.h>
#include <base/strings_and_math.h>
#include <ir/all_nodes.h>
#include <layout/tma_layout.h>
#include <layout/vectorization.h>
#include <scheduler/utils.h>
#include <scheduler/vectorize_helper.h>
#include <transform/inlining.h>
#include <transform/propagator.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_set>

namespace fuser {

namespace {

MmaOp* theMma(Fusion* fusion) {
  MmaOp* found = nullptr;
  for (Expr* expr : fusion->exprs()) {
    if (auto* mma = dynamic_cast<MmaOp*>(expr)) {
      if (found != nullptr) {
        return nullptr;
      }
      found = mma;
    }
  }
  return found;
}

int64_t countRole(const std::vector<MmaRole>& roles, MmaRole role) {
  return std::count(roles.begin(), roles.end(), role);
}

// The operand axis of a role (the first).
IterDomain* operandAxis(
    const MmaOp* mma, const TensorView* operand, MmaRole role) {
  const auto logical = TensorDomain::noReductions(operand->getLogicalDomain());
  const auto& roles = mma->roles(operand);
  for (size_t i = 0; i < roles.size(); ++i) {
    if (roles[i] == role) {
      return logical[i];
    }
  }
  return nullptr;
}

// The outputs laid out along N in memory (N their innermost allocation
// axis, contiguous): the epilogue may store each thread's column pair of
// them as one vector (doc/matmul.md §2).
std::vector<TensorView*> outputsAlongN(Fusion* fusion) {
  std::vector<TensorView*> along;
  for (Val* value : fusion->outputs()) {
    auto* out = value->as<TensorView>();
    const auto logical = TensorDomain::noReductions(out->getLogicalDomain());
    const MemoryAxes memory = memoryAxes(out);
    if (memory.contiguous_suffix > 0 && !logical.empty() &&
        memory.axes.back().id == logical.back()) {
      along.push_back(out);
    }
  }
  return along;
}

// 2 when every output along N may be written in column pairs for this run
// (N even, rows and data aligned to a pair), else 1.
int64_t epilogueVectorWidth(
    Fusion* fusion, int64_t n, RuntimeInfo& runtime_info) {
  std::vector<std::pair<TensorView*, InnerRun>> runs;
  for (TensorView* out : outputsAlongN(fusion)) {
    runs.emplace_back(
        out, contiguousInnerRun(
                 out, TensorDomain::noReductions(out->getLogicalDomain()),
                 runtime_info));
  }
  return runs.empty() ? 1 : widestVectorWidth(2, n, runs, runtime_info);
}

// Block tiles, largest first, with their throughput relative to the largest
// (a smaller tile re-reads operands more often per multiply-add and keeps
// fewer wgmmas in flight): doc/matmul.md §2.
struct TileCandidate {
  int64_t m;
  int64_t n;
  double efficiency;
};
constexpr TileCandidate kTileCandidates[] = {
    {128, 256, 1.0}, {128, 128, 0.88}, {64, 256, 0.8},
    {64, 128, 0.7},  {64, 64, 0.55},
};
// The dynamic shared memory a block of an sm_90 GPU may take.
constexpr int64_t kMaxSharedBytes = 232448;
constexpr int64_t kMaxStages = 6;

// Why the copy engine cannot read `operand`'s tiles of `layout` for this
// run ("" when it can).
std::string runtimeViolation(
    const TensorView* operand, const TmaOperandLayout& layout,
    RuntimeInfo& runtime_info) {
  const TensorRuntimeInfo* info = runtime_info.tensorInfo(operand);
  FUSER_INTERNAL_ASSERT(info != nullptr, "no run-time info of an operand");
  std::vector<int64_t> sizes;
  for (const TmaDim& dim : layout.dims) {
    sizes.push_back(runtime_info.extent(dim.id));
  }
  for (const auto& [extent, box] : layout.divisible) {
    const int64_t value =
        runtime_info.expressionEvaluator().evaluateOrThrow(extent).asInt();
    if (value % box != 0) {
      return "a split part of " + std::to_string(value) + " elements of " +
             operand->toString() + " is no multiple of the tile's " +
             std::to_string(box);
    }
  }
  const TensorMapGeometry geometry = tmaGeometry(
      layout, operand->dtype(), sizes, info->layout.allocation_strides);
  const std::string violation =
      tensorMapViolation(geometry, info->alignment_bytes);
  return violation.empty() ? violation
                           : operand->toString() + " (" + geometry.toString() +
                                 "): " + violation;
}

// Clusters of two blocks on adjacent M tiles of one N range, sharing the B
// tile (doc/matmul.md §3), where the walk of the tiles pairs them: an even
// number of M tiles, walked in groups of an even count, and an even grid,
// so that the blocks of a cluster always hold both tiles of a pair (or
// neither) and step through the same k-steps. Only when the copy engine
// can load B in halves.
void pairBlocks(
    MatmulParams& params, MmaOp* mma, int64_t m, RuntimeInfo& runtime_info) {
  const int64_t m_tiles = ceilDiv(m, params.tile.m);
  if (m_tiles % 2 != 0 || params.grid < 2 || params.grid % 2 != 0) {
    return;
  }
  std::string why;
  auto halves = describeTmaOperand(
      mma->b(), mma->bRoles(), params.tile.n, params.tile.k, &why, 2);
  if (!halves || !runtimeViolation(mma->b(), *halves, runtime_info).empty()) {
    return;
  }
  params.tile.cluster = 2;
  params.m_group = std::max<int64_t>(params.m_group, 2);
}

// The parameters for this run, or nullopt with the reason.
std::optional<MatmulParams> chooseParams(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) {
  if (runtime_info.computeCapability() != 90) {
    *reason =
        "the matmul kernel needs an sm_90 GPU (wgmma, the bulk copy "
        "engine); this one is sm_" +
        std::to_string(runtime_info.computeCapability());
    return std::nullopt;
  }
  MmaOp* mma = theMma(fusion);
  const int64_t m = runtime_info.extent(operandAxis(mma, mma->a(), MmaRole::M));
  const int64_t n = runtime_info.extent(operandAxis(mma, mma->b(), MmaRole::N));
  const int64_t k = runtime_info.extent(operandAxis(mma, mma->a(), MmaRole::K));
  int64_t batch = 1;
  for (IterDomain* id : mma->outputAxes(MmaRole::Batch)) {
    batch *= runtime_info.extent(id);
  }
  if (m == 0 || n == 0 || k == 0 || batch == 0) {
    *reason = "the product is empty (M, N, K, batch = " + std::to_string(m) +
              ", " + std::to_string(n) + ", " + std::to_string(k) + ", " +
              std::to_string(batch) + ")";
    return std::nullopt;
  }
  const int64_t sms = runtime_info.multiprocessors();
  std::optional<MatmulParams> best;
  double best_cost = 0.0;
  std::string why;
  for (const TileCandidate& tile : kTileCandidates) {
    for (int64_t tile_k : {64, 32, 16}) {
      std::string a_why, b_why;
      auto a =
          describeTmaOperand(mma->a(), mma->aRoles(), tile.m, tile_k, &a_why);
      auto b =
          describeTmaOperand(mma->b(), mma->bRoles(), tile.n, tile_k, &b_why);
      if (a) {
        a_why = runtimeViolation(mma->a(), *a, runtime_info);
      }
      if (b) {
        b_why = runtimeViolation(mma->b(), *b, runtime_info);
      }
      if (!a_why.empty() || !b_why.empty()) {
        why = !a_why.empty() ? a_why : b_why;
        continue;
      }
      const int64_t stage_bytes = a->tile_bytes + b->tile_bytes;
      const int64_t stages = std::min<int64_t>(
          kMaxStages, (kMaxSharedBytes - 1024 - 16 * kMaxStages) / stage_bytes);
      if (stages < 2) {
        why = "two stages of the tiles do not fit in shared memory";
        continue;
      }
      const int64_t tiles = ceilDiv(m, tile.m) * ceilDiv(n, tile.n) * batch;
      const double waves =
          std::ceil(static_cast<double>(tiles) / static_cast<double>(sms));
      const double cost = waves * static_cast<double>(tile.m * tile.n) *
                          static_cast<double>(tile_k == 64 ? 1.0 : 1.3) /
                          tile.efficiency;
      if (!best || cost < best_cost) {
        MatmulParams params;
        params.tile = {tile.m, tile.n, tile_k, stages};
        params.grid = std::min(tiles, sms);
        const int64_t m_tiles = ceilDiv(m, tile.m);
        params.m_group = 1;
        if (tiles > sms) {
          for (int64_t group : {16, 8, 4}) {
            if (m_tiles > group && m_tiles % group == 0) {
              params.m_group = group;
              break;
            }
          }
        }
        best = params;
        best_cost = cost;
      }
      break; // the widest k-step that works for this tile
    }
  }
  if (!best) {
    *reason = "the bulk copy engine cannot read the operands' tiles: " + why;
    return best;
  }
  if (isEnabled(EnableOption::MatmulCluster)) {
    pairBlocks(*best, mma, m, runtime_info);
  }
  best->vectorize = epilogueVectorWidth(fusion, n, runtime_info);
  return best;
}

Val* constant(int64_t value) {
  return IrBuilder::create<Val>(value, DataType::Index);
}

} // namespace

std::string MatmulParams::toString() const {
  std::stringstream ss;
  ss << "Matmul: tile " << tile.toString() << ", " << grid
     << " persistent blocks, M-tiles in groups of " << m_group;
  if (vectorize > 1) {
    ss << ", outputs in vectors of " << vectorize;
  }
  return ss.str();
}

namespace {

// Whether `tv`'s logical domain is made from its root by splits and
// merges (a reshape's result), not only reordered (a permute's) or
// resized (a slice's).
bool isReshaped(const TensorView* tv) {
  return tv->hasRoot() && std::any_of(
                              tv->getLogicalDomain().begin(),
                              tv->getLogicalDomain().end(), [](IterDomain* id) {
                                Expr* def = id->definition();
                                return def != nullptr &&
                                       (def->isA<Split>() || def->isA<Merge>());
                              });
}

} // namespace

bool MatmulScheduler::canScheduleCompileTime(
    Fusion* fusion, std::string* reason) {
  MmaOp* mma = theMma(fusion);
  if (mma == nullptr) {
    *reason = "it needs exactly one matrix product (MmaOp)";
    return false;
  }
  for (TensorView* operand : {mma->a(), mma->b()}) {
    if (!operand->isFusionInput()) {
      *reason = "operand " + operand->toString() +
                " is computed in the fusion; the kernel copies operands "
                "from memory";
      return false;
    }
    if (operand->dtype() != DataType::BFloat16 &&
        operand->dtype() != DataType::Half) {
      *reason = "operand " + operand->toString() + " is " +
                toString(operand->dtype()) + " (bfloat16 or half needed)";
      return false;
    }
    if (operand->uses().size() != 1) {
      *reason = "operand " + operand->toString() +
                " is read by other exprs than the product";
      return false;
    }
    // A segment input cut from a reshape: once its layout is fixed its
    // memory axes are the reshape's root, which the bulk copy engine's
    // tiles do not follow (layout/tma_layout.h); declined here, before
    // the layout is fixed, so that segmentation and the compile agree.
    // ATen's product reads it as it is.
    if (isReshaped(operand)) {
      *reason = "operand " + operand->toString() +
                " is a reshape's result, which the kernel's tiles do not "
                "follow; ATen's product reads it";
      return false;
    }
  }
  if (countRole(mma->aRoles(), MmaRole::M) != 1 ||
      countRole(mma->bRoles(), MmaRole::N) != 1) {
    *reason = "it needs one M axis and one N axis (a matrix times a matrix)";
    return false;
  }
  const auto a_logical =
      TensorDomain::noReductions(mma->a()->getLogicalDomain());
  const auto b_logical =
      TensorDomain::noReductions(mma->b()->getLogicalDomain());
  for (const auto& [roles, logical] :
       {std::pair{&mma->aRoles(), &a_logical},
        std::pair{&mma->bRoles(), &b_logical}}) {
    for (size_t i = 0; i < roles->size(); ++i) {
      if ((*roles)[i] == MmaRole::Batch && (*logical)[i]->isBroadcast()) {
        *reason = "a batch axis is broadcast in one operand";
        return false;
      }
    }
  }
  const std::unordered_set<Val*> down =
      scheduler_utils::downstreamOf(fusion, mma->out());
  const int64_t rank = scheduler_utils::rankOf(mma->out());
  for (Expr* expr : fusion->exprs()) {
    if (expr == mma) {
      continue;
    }
    if (!scheduler_utils::isPointwiseExpr(expr)) {
      *reason = "the epilogue has a " + expr->getOpString() +
                " (elementwise ops, copies and broadcasts only)";
      return false;
    }
    auto* out = dynamic_cast<TensorView*>(expr->output(0));
    if (out != nullptr && down.count(out) &&
        scheduler_utils::rankOf(out) != rank) {
      *reason = out->toString() + " in the epilogue changes the rank";
      return false;
    }
  }
  for (Val* out : fusion->outputs()) {
    if (!down.count(out)) {
      *reason =
          "output " + out->toString() + " does not derive from the product";
      return false;
    }
  }
  return scheduler_utils::isUnscheduled(fusion, reason);
}

bool MatmulScheduler::canScheduleRunTime(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) {
  return chooseParams(fusion, runtime_info, reason).has_value();
}

std::unique_ptr<HeuristicParams> MatmulScheduler::computeHeuristics(
    Fusion* fusion, RuntimeInfo& runtime_info) {
  std::string reason;
  auto params = chooseParams(fusion, runtime_info, &reason);
  FUSER_INTERNAL_ASSERT(params.has_value(), "matmul heuristics: ", reason);
  return std::make_unique<MatmulParams>(*params);
}

void MatmulScheduler::schedule(Fusion* fusion, const HeuristicParams& hp) {
  const auto& params = dynamic_cast<const MatmulParams&>(hp);
  FusionGuard fg(fusion);
  MmaOp* mma = theMma(fusion);
  const std::vector<TensorView*> vectorized_outputs = outputsAlongN(fusion);
  // The operand caches take the operands' layouts: the bulk copy engine
  // writes each tile into shared memory in the order it lies in global
  // memory (doc/matmul.md §4). The only scheduler that asks for it.
  scheduler_utils::cacheInputs(
      fusion, /*unroll=*/false, /*replay_allocation=*/true);
  for (TensorView* cache : {mma->a(), mma->b()}) {
    cache->setMemoryType(MemoryType::Shared);
    cache->definition()->as<LoadStoreOp>()->setOpType(
        LoadStoreOpType::CpAsyncBulkTensorTile);
  }
  // An output another epilogue op also reads is forked: the copy is the
  // output that stores, the tensor itself its cache.
  const std::unordered_set<TensorView*> along_n(
      vectorized_outputs.begin(), vectorized_outputs.end());
  std::vector<TensorView*> stored_outputs;
  for (auto [cache, output] :
       scheduler_utils::cacheAndForkOutputs(fusion, /*unroll=*/false)) {
    if (along_n.count(cache) || along_n.count(output)) {
      stored_outputs.push_back(output);
    }
  }
  mma->setTileConfig(params.tile);
  TensorView* acc = mma->out();

  // acc [batch..., M, N, rK] -> [T/G, G, thread, M-warpgroup, N/8, 2, 2,
  // rK/k, k] (doc/matmul.md §2): the tile loop, the wgmma register layout.
  // The thread axis comes before the warpgroup's, so that epilogue inputs
  // without an M axis (a bias) inline past it and index their N part from
  // the thread.
  const auto& logical = acc->getLogicalDomain();
  const size_t batches = logical.size() - 3;
  IterDomain* m = logical[batches];
  IterDomain* n = logical[batches + 1];
  IterDomain* k = logical[batches + 2];
  const MmaTileConfig& tile = params.tile;
  auto [m_tile, m_in] = IterDomain::split(m, constant(tile.m), true);
  auto [m_warpgroup, m64] = IterDomain::split(m_in, constant(64), true);
  auto [m_warp, m16] = IterDomain::split(m64, constant(16), true);
  auto [m_half, m_lane] = IterDomain::split(m16, constant(8), true);
  auto [n_tile, n_in] = IterDomain::split(n, constant(tile.n), true);
  auto [n_8, n8] = IterDomain::split(n_in, constant(8), true);
  auto [n_lane, n_pair] = IterDomain::split(n8, constant(2), true);
  auto [k_tile, k_in] = IterDomain::split(k, constant(tile.k), true);
  IterDomain* tiles = nullptr;
  for (size_t b = 0; b < batches; ++b) {
    tiles =
        tiles == nullptr ? logical[b] : IterDomain::merge(tiles, logical[b]);
  }
  if (params.m_group > 1) {
    auto [m_groups, m_in_group] =
        IterDomain::split(m_tile, constant(params.m_group), true);
    IterDomain* group_tiles =
        IterDomain::merge(IterDomain::merge(m_groups, n_tile), m_in_group);
    tiles =
        tiles == nullptr ? group_tiles : IterDomain::merge(tiles, group_tiles);
  } else {
    IterDomain* plane = IterDomain::merge(m_tile, n_tile);
    tiles = tiles == nullptr ? plane : IterDomain::merge(tiles, plane);
  }
  auto [tile_steps, tile_blocks] =
      IterDomain::split(tiles, constant(params.grid), true);
  IterDomain* thread =
      IterDomain::merge(IterDomain::merge(m_warp, m_lane), n_lane);
  acc->setLoopDomain(
      {tile_steps, tile_blocks, thread, m_warpgroup, n_8, m_half, n_pair,
       k_tile, k_in});
  tile_blocks->parallelize(ParallelType::BIDx);
  m_warpgroup->parallelize(ParallelType::TIDy);
  thread->parallelize(ParallelType::TIDx);
  for (IterDomain* id : {n_8, m_half, n_pair, k_tile, k_in}) {
    id->parallelize(ParallelType::Mma);
  }

  // The epilogue follows the accumulator's loops (its registers are read
  // at the same positions), without the tensor-core axes.
  // Listed in the fusion's order, producers first: the same kernel text in
  // every process (a set's order follows pointer hashing).
  std::vector<TensorView*> epilogue_tvs;
  for (TensorView* tv : fusion->allTvs()) {
    if (!tv->isFusionInput() && tv != mma->a() && tv != mma->b()) {
      epilogue_tvs.push_back(tv);
    }
  }
  std::unordered_set<TensorView*> epilogue(
      epilogue_tvs.begin(), epilogue_tvs.end());
  TransformPropagator propagator(acc);
  MaxLogicalDomainInfoSpanningTree(acc, &epilogue).traverse(&propagator);
  epilogue_tvs.erase(std::find(epilogue_tvs.begin(), epilogue_tvs.end(), acc));
  scheduler_utils::parallelizeAllLike(
      acc, epilogue_tvs,
      {ParallelType::BIDx, ParallelType::TIDy, ParallelType::TIDx});
  // A thread's two adjacent columns (the pair axis, innermost) in one store.
  if (params.vectorize > 1) {
    for (TensorView* out : stored_outputs) {
      IterDomain* pair = out->axis(-1);
      FUSER_INTERNAL_ASSERT(
          pair->extent()->isConstInt() &&
              pair->extent()->constIntValue() == params.vectorize,
          "the epilogue output ", out->toString(),
          " does not end in the column pair");
      pair->parallelize(ParallelType::Vectorize);
    }
  }
  inlineMost(epilogue_tvs);
  // The product fills every register of a tile at once: computed in the
  // tile's loops, read inside its consumers' register loops.
  acc->inlineAt(4);
}

} // namespace fuser
