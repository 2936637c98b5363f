#include <layout/buffer_axes.h>

namespace fuser {

bool occupiesBuffer(const IterDomain* id, MemoryType memory_type) {
  if (id->isReduction() || id->isBroadcast() || id->isDeviceDim()) {
    return false;
  }
  if (memory_type == MemoryType::Local && id->isThread()) {
    return false;
  }
  if (memory_type == MemoryType::Shared && id->isBlockDim()) {
    return false;
  }
  return true;
}

} // namespace fuser
