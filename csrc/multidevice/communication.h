// The collectives a resharding expr lowers to (doc/multidevice.md §4): a
// `set` whose input and output are spread over the devices differently.
// This header describes them from the IR;
// runtime/communication_executor.h runs them through c10d.
#pragma once

#include <ir/device_mesh.h>
#include <ir/interface_nodes.h>

#include <cstdint>
#include <string>

namespace fuser {

enum class CommunicationType {
  Allgather,     // split -> whole
  Allreduce,     // partial -> whole
  ReduceScatter, // partial -> split
  Scatter,       // whole -> split: each device keeps its part, no transfer
  AllToAll,      // split on one axis -> split on another
  Broadcast,     // whole on one device -> whole on every device
};

std::string toString(CommunicationType type);

struct Communication {
  CommunicationType type = CommunicationType::Allgather;
  // The devices taking part (the output's mesh).
  DeviceMesh mesh;
  // The split axis of the input (Allgather, AllToAll) and of the output
  // (ReduceScatter, Scatter, AllToAll), as dimensions of the rank's
  // at::Tensor (logical axes without reductions); -1 when unused.
  int64_t in_axis = -1;
  int64_t out_axis = -1;
  // Broadcast: the device holding the data.
  int64_t root = -1;

  std::string toString() const;
};

// Whether `expr` moves data between devices: a set whose input and output
// are spread differently. Every other expr runs on each device's shards.
bool isResharding(const Expr* expr);

// The collective of a resharding `expr` (user error for resharding between
// meshes other than one device to many).
Communication communicationOf(const Expr* expr);

} // namespace fuser
