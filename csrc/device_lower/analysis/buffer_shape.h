// The shape of a tensor's register or shared-memory buffer: which of its
// loop axes take room in it and how much (doc/indexing.md §4). The one
// place the allocation, the indexer and the vectorization check read it
// from, so that a buffer is indexed as it is allocated.
#pragma once

#include <ir/interface_nodes.h>

#include <vector>

namespace fuser {

class GpuLower;

struct BufferAxis {
  size_t position; // in the tensor's loop domain
  IterDomain* id;
  Val* extent;
};

// The axes of `tv`'s buffer, outermost first. The loop axes right of its
// inline position that take room (layout/buffer_axes.h); in shared memory
// also its thread-parallel axes left of it (the threads of a block share
// the buffer, each needs its own part). A thread axis of a shared buffer
// takes its launch bound (IterDomain::extentBound): a static shared
// array needs a constant size. Extents are `lower`'s (GpuLower::loopExtent).
std::vector<BufferAxis> bufferShape(GpuLower& lower, TensorView* tv);

} // namespace fuser
