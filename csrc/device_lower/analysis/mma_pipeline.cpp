#include <device_lower/analysis/mma_pipeline.h>

#include <device_lower/lower.h>
#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>

#include <algorithm>
#include <sstream>

namespace fuser {

MmaPipeline::MmaPipeline(GpuLower& lower, Fusion* fusion) {
  LoweredKernel& kernel = lower.kernel();
  for (Expr* expr : fusion->exprs()) {
    if (auto* mma = dynamic_cast<MmaOp*>(expr)) {
      FUSER_CHECK(
          mma_ == nullptr, "A kernel computes one matrix product; ",
          mma->toString(), " is the second. Separate them with segment_set.");
      mma_ = mma;
    }
  }
  if (mma_ == nullptr) {
    return;
  }
  FUSER_CHECK(
      mma_->tileConfig().has_value(), "The matrix product ", mma_->toString(),
      " is not scheduled. The matmul scheduler tiles it (a "
      "FusionExecutorCache runs it); a schedule by hand calls "
      "MmaOp::setTileConfig and tiles the accumulator as doc/matmul.md §2 "
      "describes.");
  FUSER_CHECK(
      kernel.smem_bytes_per_thread == 0 && kernel.grid_buffers.empty(),
      "A kernel with a matrix product cannot also reduce across threads: "
      "both need the shared memory. Separate them with segment_set.");
  const MmaTileConfig& tile = *mma_->tileConfig();
  TensorView* acc = mma_->out();
  const auto& logical = acc->getLogicalDomain();
  const size_t batches = logical.size() - 3;
  batch_.assign(logical.begin(), logical.begin() + batches);
  m_tile_ = outerOfSplit(logical[batches]);
  n_tile_ = outerOfSplit(logical[batches + 1]);
  k_tile_ = outerOfSplit(logical[batches + 2]);
  const auto& loop = acc->getLoopDomain();
  FUSER_INTERNAL_ASSERT(
      loop.size() > 2 && loop[1]->getParallelType() == ParallelType::BIDx &&
          loop[1]->definition() != nullptr &&
          loop[1]->definition()->isA<Split>(),
      "the accumulator ", acc->toString(), " has no persistent tile loop");
  tiles_ = loop[1]->definition()->as<Split>()->in();

  const size_t first_map = kernel.tensor_maps.size();
  bookOperand(lower, mma_->a(), tile.m, 1);
  bookOperand(lower, mma_->b(), tile.n, tile.cluster);
  const TmaOperandLayout& a = kernel.tensor_maps[first_map].layout;
  const TmaOperandLayout& b = kernel.tensor_maps[first_map + 1].layout;

  LoweredKernel::MmaKernel info;
  info.consumers = tile.m / 64;
  info.cluster = tile.cluster;
  // runtime/hopper_matmul.h, Matmul::kSharedBytes (the kernel asserts the
  // two agree).
  info.shared_bytes =
      1024 + tile.stages * (a.tile_bytes + b.tile_bytes) + 16 * tile.stages;
  std::stringstream type;
  type << "fuser_mma::Matmul<" << cudaTypeName(mma_->a()->dtype()) << ", "
       << tile.m << ", " << tile.n << ", " << tile.k << ", " << tile.stages
       << ", " << (a.mn_major ? "true" : "false") << ", "
       << (b.mn_major ? "true" : "false") << ", " << a.dims.size() << ", "
       << b.dims.size() << ", " << tile.cluster << ">";
  info.pipeline_type = type.str();
  kernel.mma = info;
  // One more warpgroup than multiply: the producer (threadIdx.y ==
  // consumers).
  kernel.launch_extents[ParallelType::TIDy] =
      IrBuilder::create<Val>(info.consumers + 1, DataType::Index);
}

IterDomain* MmaPipeline::outerOfSplit(IterDomain* logical) const {
  TensorView* acc = mma_->out();
  for (Expr* expr :
       getExprsBetween(acc->getLogicalDomain(), acc->getLoopDomain())) {
    auto* split = dynamic_cast<Split*>(expr);
    if (split != nullptr && split->in() == logical) {
      return split->outer();
    }
  }
  FUSER_INTERNAL_ASSERT(
      false, "the accumulator's ", logical->toString(), " is not tiled");
  return nullptr;
}

void MmaPipeline::bookOperand(
    GpuLower& lower, TensorView* cache, int64_t tile_mn, int64_t slices) {
  LoweredKernel& kernel = lower.kernel();
  auto* copy = dynamic_cast<LoadStoreOp*>(cache->definition());
  FUSER_CHECK(
      cache->getMemoryType() == MemoryType::Shared && copy != nullptr &&
          copy->opType() == LoadStoreOpType::CpAsyncBulkTensorTile &&
          copy->in()->isFusionInput(),
      "The operand ", cache->toString(), " of ", mma_->toString(),
      " must be a shared-memory cache of a fusion input, filled by the bulk "
      "copy engine (LoadStoreOpType::CpAsyncBulkTensorTile).");
  auto* operand = copy->in()->as<TensorView>();
  const std::vector<MmaRole>& roles = mma_->roles(cache);
  const int64_t tile_k = mma_->tileConfig()->k;
  std::string why;
  auto global =
      describeTmaOperand(operand, roles, tile_mn, tile_k, &why, slices);
  FUSER_CHECK(
      global.has_value(), "The bulk copy engine cannot read tiles of ",
      operand->toString(), ": ", why, ".");
  auto shared = describeTmaOperand(cache, roles, tile_mn, tile_k, &why, slices);
  FUSER_CHECK(
      shared.has_value() && sameTileLayout(*global, *shared),
      "The shared-memory cache ", cache->toString(), " is laid out as ",
      idsToString(cache->getMaybeAllocationDomain()),
      ", but the bulk copy "
      "engine writes the tiles of ",
      operand->toString(), " in the order they lie in memory (",
      idsToString(operand->getMaybeAllocationDomain()),
      "). Cache the operands with replay_allocation "
      "(scheduler_utils::cacheInputs(fusion, unroll, true)) so that each "
      "cache takes its operand's layout.");
  bulk_copies_.insert(copy);
  LoweredKernel::TensorMapParameter map;
  auto it =
      std::find(kernel.parameters.begin(), kernel.parameters.end(), operand);
  FUSER_INTERNAL_ASSERT(
      it != kernel.parameters.end(), "operand not a parameter");
  map.parameter = static_cast<size_t>(it - kernel.parameters.begin());
  map.layout = *global;
  for (TmaDim& dim : map.layout.dims) {
    dim.div = lower.resolveExtent(dim.div);
    dim.mod = lower.resolveExtent(dim.mod);
    map.dim_extents.push_back(lower.resolveExtent(dim.id->extent()));
  }
  kernel.tensor_maps.push_back(map);
}

} // namespace fuser
