#include <scheduler/runtime_info.h>

namespace fuser {

int64_t RuntimeInfo::extent(const IterDomain* id) {
  if (id->isBroadcast()) {
    return 1;
  }
  return ee_.evaluateOrThrow(id->extent()).asInt();
}

int64_t RuntimeInfo::numel(const TensorView* tv) {
  int64_t n = 1;
  for (IterDomain* id : TensorDomain::noReductions(tv->getLogicalDomain())) {
    n *= extent(id);
  }
  return n;
}

} // namespace fuser
