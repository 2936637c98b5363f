// The kinds of scheduler (doc/design.md §2, csrc/scheduler/registry.h).
#pragma once

#include <ostream>
#include <string>

namespace fuser {

enum class SchedulerType {
  NoOp,
  PointWise,
  Reduction,
  InnerPersistent,
  InnerOuterPersistent,
  OuterPersistent,
  Matmul,
  ExprEval,
  // A collective between devices (multidevice/communication.h): chosen by
  // the multi-device runtime, never by the segmenter.
  Communication,
};

std::string toString(SchedulerType type);
std::ostream& operator<<(std::ostream& os, SchedulerType type);

} // namespace fuser
