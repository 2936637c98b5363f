// Which loop axes of a tensor in a register or shared-memory buffer take
// room in it (doc/indexing.md §4): not reductions, broadcasts or
// device-parallel axes; in a register buffer not thread- or block-parallel
// axes (each thread has its own), in shared memory not block-parallel ones
// (each block has its own). The buffer of a tensor inlined at k spans the
// axes right of k that take room.
#pragma once

#include <ir/interface_nodes.h>

namespace fuser {

bool occupiesBuffer(const IterDomain* id, MemoryType memory_type);

} // namespace fuser
