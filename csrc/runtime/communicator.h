// Communicator: this process's place among the processes of a multi-device
// run (doc/multidevice.md §5), backed by a c10d process group: NCCL between
// GPUs, Gloo on the CPU (or on GPUs sharing one device). Python hands it
// torch.distributed's default group; C++ programs hand it theirs. Without
// a group the run is one process: rank 0 of 1.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace fuser {

class Communicator {
 public:
  static Communicator& getInstance();

  // Takes the ranks and the collectives from `group` (nullptr: back to one
  // process). Without `own` the communicator only watches the group, whose
  // owner keeps it alive: torch.distributed's default group is handed over
  // so, and destroy_process_group then destroys it as usual (a group kept
  // past it aborted the process at exit now and then); after that the
  // communicator has no group.
  void setProcessGroup(
      c10::intrusive_ptr<c10d::ProcessGroup> group, bool own = true);
  bool hasProcessGroup() const;
  c10::intrusive_ptr<c10d::ProcessGroup> processGroup() const;

  // This process's rank, which is its device in a DeviceMesh.
  int64_t deviceId() const;
  int64_t size() const;
  // The rank among the processes of this host (torchrun's LOCAL_RANK; the
  // rank without it): which GPU the process uses.
  int64_t local_rank() const;
  // "gloo", "nccl", ...; empty without a group.
  std::string backend() const;
  // How long a collective may wait for the other ranks before it fails
  // (FUSER_COMM_TIMEOUT_S, 300 s by default).
  std::chrono::milliseconds timeout() const;

  // Every rank's `values` (the same count on each), rank by rank: the
  // agreement checks of runtime/multidevice_executor.h.
  std::vector<std::vector<int64_t>> allgatherValues(
      const std::vector<int64_t>& values) const;

 private:
  Communicator() = default;
  // The group, held or watched.
  c10::intrusive_ptr<c10d::ProcessGroup> groupLocked() const;
  mutable std::mutex mutex_;
  c10::intrusive_ptr<c10d::ProcessGroup> owned_;
  std::optional<c10::weak_intrusive_ptr<c10d::ProcessGroup>> watched_;
};

// Waits for `work` within the communicator's timeout; a user error naming
// `what` when the other ranks do not take part in time.
void waitFor(
    const c10::intrusive_ptr<c10d::Work>& work, const std::string& what);

} // namespace fuser
