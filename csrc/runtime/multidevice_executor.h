// MultiDeviceExecutor: runs a fusion whose tensors are spread over a device
// mesh, one process per device (SPMD; doc/multidevice.md). The fusion is
// written in global shapes; each rank passes its shards and gets its
// shards back. Sharding is propagated from the inputs
// (multidevice/propagation.h), resharding exprs become communications
// (multidevice/resharding.h), and the fusion is cut into stages: the
// rank-local computations between communications, each a fusion over the
// rank's shards run by its own FusionExecutorCache (kernels, segments,
// everything a single-device fusion gets), and the communications
// (runtime/communication_executor.h).
#pragma once

#include <fusion.h>
#include <multidevice/communication.h>
#include <runtime/communication_executor.h>
#include <scheduler/scheduler_types.h>
#include <segmentation/segmented_fusion.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <memory>
#include <string>
#include <vector>

namespace fuser {

class FusionExecutorCache;

struct MultiDeviceStage {
  // Communication, or ExprEval for a rank-local computation (its own
  // FusionExecutorCache picks the schedulers of its segments).
  SchedulerType type() const {
    return communication != nullptr ? SchedulerType::Communication
                                    : SchedulerType::ExprEval;
  }
  // Its exprs in the complete fusion, and the values it reads and writes.
  std::unique_ptr<SegmentedGroup> group;
  // A computation: the rank-local fusion (no mesh, no DIDx), run by
  // `cache` on CUDA tensors and through ATen on CPU tensors.
  std::unique_ptr<FusionExecutorCache> cache;
  std::unique_ptr<CommunicationExecutor> communication;
};

class MultiDeviceExecutor {
 public:
  // Propagates, inserts the communications and cuts the stages of a copy
  // of `fusion`; checks that the meshes fit the communicator's ranks and
  // that every rank defined the same fusion (a collective: every rank
  // makes its executors in the same order).
  explicit MultiDeviceExecutor(const Fusion* fusion);
  ~MultiDeviceExecutor();

  // `inputs`: this rank's shards (whole tensors for replicated inputs) and
  // scalars, in fusion->inputs() order. Returns this rank's shards of the
  // outputs.
  std::vector<at::Tensor> run(const std::vector<c10::IValue>& inputs);

  // The fusion with shardings propagated and communications inserted.
  Fusion* completeFusion() const {
    return complete_.get();
  }
  const std::vector<MultiDeviceStage>& stages() const {
    return stages_;
  }
  // The communications, in run order.
  std::vector<Communication> communications() const;
  // The stages (FUSER_DUMP=segmented_fusion).
  std::string toString() const;

 private:
  void makeStages();
  // Every rank passes shards of the same sizes (one small allgather per
  // run).
  void checkSizesAgree(const std::vector<c10::IValue>& inputs);

  std::unique_ptr<Fusion> complete_;
  std::vector<MultiDeviceStage> stages_;
};

// This rank's shard of `tensor` (the whole, global tensor) as `tv` is
// spread over its mesh: its part of the split axis, or the tensor itself.
at::Tensor shardTensor(const at::Tensor& tensor, const TensorView* tv);

} // namespace fuser
