// Lowering: a scheduled fusion -> kernel IR (doc/design.md §5).
//
// GpuLower copies the fusion (lowering adds nodes freely), runs the analysis
// phase (the IdModel, the extents of kernel arguments, loop promotion,
// launch sizes, the vectorized accesses and the run-time checks they need),
// then the ordered pass list of lower.cpp. Each pass is a free function in
// its own file under pass/ that takes the analyses it reads as arguments
// (there is no global "lowering in progress"); FUSER_DUMP=lower_passes
// times them, FUSER_DUMP=lower_ir prints the kernel IR after each
// (lower_ir:<pass> after one) and FUSER_DUMP=kernel_ir the result.
#pragma once

#include <device_lower/analysis/loop_promotion.h>
#include <device_lower/analysis/mma_pipeline.h>
#include <device_lower/analysis/parallel_reductions.h>
#include <device_lower/kernel_ir.h>
#include <fusion.h>
#include <id_model/id_model.h>
#include <ir/cloner.h>
#include <scheduler/kernel_flags.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace fuser {

// What the runtime must check before a vectorized access of a global
// tensor is legal (csrc/layout/vectorization.h): the contiguous run of `extent`
// elements the lanes walk is a multiple of the width, and the data pointer
// and the strides at `strided_positions` (kernel argument alloc_stride[k])
// are aligned to the vector.
struct VectorizationCheck {
  int64_t tensor_position = -1; // position among kernel tensor parameters
  TensorView* tv = nullptr;
  int64_t width = 1;
  Val* extent = nullptr;
  std::vector<size_t> strided_positions;
};

// A symbolic extent of a kernel tensor parameter, read in the kernel from
// the argument's logical sizes (`value` prints as T<n>.logical_size[dim]).
struct ParameterExtent {
  Val* value = nullptr;
  size_t parameter = 0; // position in LoweredKernel::parameters
  size_t dim = 0;
};

// The result of lowering, owned by one object: the lowered fusion copy and
// everything the code generator and runtime need.
struct LoweredKernel {
  std::unique_ptr<Fusion> fusion;
  std::vector<Expr*> exprs; // top-level kernel IR
  // Kernel parameters: fusion inputs then outputs, in the lowered copy.
  std::vector<Val*> parameters;
  // Launch extent of each used thread/block parallel type.
  std::map<ParallelType, Val*> launch_extents;
  // The most threads of each thread parallel type (0: unknown).
  std::map<ParallelType, int64_t> launch_bounds;
  // The scheduler's KernelFlags (scheduler/kernel_flags.h).
  int64_t max_registers_per_thread = 0;
  bool cooperative_launch = false;
  std::vector<VectorizationCheck> vectorization_checks;
  // What the runtime binds before evaluating launch sizes and checks.
  std::vector<ParameterExtent> parameter_extents;
  DataType index_type = DataType::Int;
  std::string kernel_name = "fuser_kernel";
  // Reductions across threads: the dynamic shared memory they need per
  // thread of a block (doc/reduction.md), after the shared buffers.
  int64_t smem_bytes_per_thread = 0;
  // Shared-memory buffers of tensors (doc/normalization.md §11): each one's
  // byte offset in the dynamic shared memory, by tensor name, and the bytes
  // they take together (a multiple of 16).
  std::map<int64_t, int64_t> shared_buffer_offsets;
  int64_t shared_buffer_bytes = 0;
  // Reductions across blocks: per reduction, a work buffer of `work_type`
  // (`work_elements` elements) and `semaphores` counters that are zero
  // before a launch and after it. Kernel parameters after the outputs.
  struct GridBuffer {
    DataType work_type;
    Val* work_elements;
    Val* semaphores;
    // Whether the last block holds the result (a flag in the kernel); an
    // all-reduce gives it to every block.
    bool last_block_flag = true;
  };
  std::vector<GridBuffer> grid_buffers;
  // A matrix product on the tensor cores (doc/matmul.md §3): the
  // fuser_mma::Matmul type of its pipeline (its tile is the MmaOp's), the
  // warpgroups that multiply, and the dynamic shared memory of its ring.
  struct MmaKernel {
    std::string pipeline_type;
    int64_t consumers = 2;
    int64_t shared_bytes = 0;
    // Blocks per cluster (MmaTileConfig::cluster): the kernel declares it.
    int64_t cluster = 1;
  };
  std::optional<MmaKernel> mma;
  // Tensor maps the runtime encodes for a tensor parameter
  // (an operand the bulk copy engine reads): kernel parameters after the
  // grid buffers. `dim_extents` are the extents of the layout's dims.
  struct TensorMapParameter {
    size_t parameter = 0;
    TmaOperandLayout layout;
    std::vector<Val*> dim_extents;
  };
  std::vector<TensorMapParameter> tensor_maps;
};

class GpuLower {
 public:
  // Copies `fusion` and runs the analysis phase; passes may then run one by
  // one (the tests of single passes do) or all with run().
  // `flags`: what the scheduler asked of the kernel beyond its loops.
  explicit GpuLower(
      const Fusion* fusion, DataType index_type = DataType::Int,
      KernelFlags flags = {});
  ~GpuLower();

  // Runs the pass list once.
  std::unique_ptr<LoweredKernel> run();

  // A pass of the ordered list, given the analyses it reads from this
  // lowering: kernel IR exprs in, kernel IR exprs out.
  using Pass = std::function<std::vector<Expr*>(const std::vector<Expr*>&)>;
  // The ordered pass list (doc/design.md §5), by name.
  std::vector<std::pair<std::string, Pass>> passes();

  Fusion* fusion() const {
    return kernel_->fusion.get();
  }
  LoweredKernel& kernel() {
    return *kernel_;
  }
  IdModel& idModel() {
    return *id_model_;
  }
  const LoopPromotion& loopPromotion() const {
    return *loop_promotion_;
  }
  const ParallelReductions& parallelReductions() const {
    return *parallel_reductions_;
  }
  const MmaPipeline& mmaPipeline() const {
    return *mma_pipeline_;
  }
  DataType indexType() const {
    return kernel_->index_type;
  }

  // `value` with every symbolic extent of a kernel tensor parameter replaced
  // by the argument field it is read from (T0.logical_size[1]).
  Val* resolveExtent(Val* value);

  // The extent a loop over `id` runs to.
  Val* loopExtent(IterDomain* id);

  // The launch size of a thread/block parallel type (nullptr if unused).
  Val* launchExtent(ParallelType pt) const;

  // The predicate of a lowered tensor expr, computed by index lowering with
  // the indexer of its indices and put in place by predicate generation.
  void recordPredicate(const Expr* lowered, Val* predicate);
  Val* predicateOf(const Expr* lowered) const;

  // A product of extents (as loopExtent gives them) that every launch
  // checks to be a multiple of `divisor`: the axes a vectorized access's
  // lanes walk (VectorizationCheck). Predicates use it (doc/indexing.md §5).
  void recordDivisibleProduct(std::vector<Val*> extents, int64_t divisor);
  // A divisor of `extent` that the records prove: its constant factors
  // times the largest record whose extents are all factors of it; 1 when
  // nothing is known.
  int64_t knownDivisor(Val* extent) const;

 private:
  void bindParameterExtents();
  // The name an earlier parameter's axis exact-mapped to `id` was given;
  // nullptr when there is none (or `id`'s extent is computed).
  Val* joinedParameterExtent(IterDomain* id) const;
  // The constant extent of an axis of the fusion exact-mapped to `id` (a
  // random op's or a factory's constant shape joined to an input's axis);
  // nullptr when there is none.
  Val* joinedConstantExtent(IterDomain* id) const;
  // Whether `value` is a constant or computed from substituted extents.
  bool computableFromParameters(const Val* value) const;
  // The analyses every pass may read.
  void analyze();

  std::unique_ptr<LoweredKernel> kernel_;
  std::unique_ptr<IdModel> id_model_;
  std::unique_ptr<LoopPromotion> loop_promotion_;
  std::unique_ptr<ParallelReductions> parallel_reductions_;
  std::unique_ptr<MmaPipeline> mma_pipeline_;
  std::unordered_map<const Expr*, Val*> predicates_;
  std::vector<std::pair<std::vector<Val*>, int64_t>> divisible_products_;
  // Parameter axes with the name their extent was given.
  std::vector<std::pair<IterDomain*, Val*>> named_parameter_ids_;
  // The constant extent of each exact set that has one (by its
  // representative), found by bindParameterExtents.
  std::unordered_map<IterDomain*, Val*> constant_extents_;
  std::unordered_map<const Val*, Val*> extent_substitutions_;
  std::unordered_map<const Val*, Val*> resolved_;
};

} // namespace fuser
