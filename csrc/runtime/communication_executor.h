// Runs a communication segment (multidevice/communication.h) on the rank's
// shard through the communicator's c10d process group, on the current
// stream (doc/multidevice.md §5). A process group that cannot move device
// tensors for a collective (Gloo: only broadcast and allreduce) gets them
// staged through pinned host memory, with a warning the first time.
#pragma once

#include <multidevice/communication.h>
#include <runtime/executor.h>

namespace fuser {

class CommunicationExecutor : public Executor {
 public:
  // `fusion`: one resharding set.
  using Executor::compile;
  void compile(
      const Fusion* fusion, const std::vector<c10::IValue>& inputs,
      const KnownLayouts& layouts) override;
  std::vector<at::Tensor> run(const std::vector<c10::IValue>& inputs) override;

  const Communication& communication() const {
    return communication_;
  }

 private:
  Communication communication_;
};

// The collective on this rank's `shard`; returns the rank's result.
at::Tensor communicate(const Communication& comm, const at::Tensor& shard);

} // namespace fuser
