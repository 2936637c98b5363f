// How a tensor is spread over its device mesh (doc/multidevice.md §2), read
// from and written to its domains: one logical axis split by the mesh size
// with the outer part DIDx (in the allocation domain, and in the loop
// domain once propagated), or none. A partial tensor (a sum over a split
// axis, TensorView::isPartialSum) holds a partial sum on each device that
// a communication completes; a DIDx reduction axis says the same.
#pragma once

#include <fusion.h>
#include <ir/device_mesh.h>
#include <ir/interface_nodes.h>

#include <cstdint>
#include <string>

namespace fuser {

struct Sharding {
  DeviceMesh mesh;
  // Position in the logical domain (reductions counted) of the axis split
  // across the mesh; -1 when every device holds the whole tensor (or, for a
  // partial tensor, a partial sum of it).
  int64_t axis = -1;
  // Each device holds a partial sum of the whole tensor (axis is -1).
  bool partial = false;

  bool isSplit() const {
    return axis >= 0;
  }
  bool operator==(const Sharding& other) const {
    return mesh == other.mesh && axis == other.axis && partial == other.partial;
  }
  bool operator!=(const Sharding& other) const {
    return !(*this == other);
  }
  std::string toString() const;
};

// What `tv`'s mesh and domains say: a DIDx ID of its loop or allocation
// domain (an outer split of a logical ID by the mesh size, or a logical ID
// itself). User errors for DIDx without a mesh, a factor other than the
// mesh size, DIDy/DIDz, and a DIDx of anything but a logical ID.
Sharding shardingOf(const TensorView* tv);

// Gives `tv` the mesh and, for a split sharding, splits the logical axis by
// the mesh size with the outer part DIDx in the loop domain, and in the
// allocation domain of an input or a tensor that has one; a partial
// sharding only marks the tensor. A tensor already
// split keeps its IDs; a DIDx only in the allocation domain is added to the
// loop domain, and one only in the loop domain to the allocation domain.
void shard(TensorView* tv, const Sharding& sharding);

// The rank-local form of `tv`: no mesh, and the DIDx splits taken out of
// its allocation and loop domains, so that a kernel treats the rank's shard as
// a whole tensor (doc/multidevice.md §4).
void unshard(TensorView* tv);

// The position of `id` in `tv`'s logical domain; -1 if it is not there.
int64_t logicalPosition(const TensorView* tv, const IterDomain* id);

// The logical ID of `consumer` that `producer`'s split axis maps to
// through the expr defining `consumer` (broadcasts not mapped); nullptr
// when `producer` is not split or the axis does not reach a logical ID of
// `consumer` (reduced to nothing, or reshaped away).
IterDomain* splitAxisInConsumer(TensorView* producer, TensorView* consumer);

// The dimension of a rank's at::Tensor of `tv` that holds logical axis
// `axis` (reduction axes have none).
int64_t tensorDim(const TensorView* tv, int64_t axis);

// Whether any tensor of `fusion` is placed on a device mesh.
bool isMultiDevice(const Fusion* fusion);

} // namespace fuser
