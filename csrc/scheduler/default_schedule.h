// A simple schedule for fusions nobody scheduled, used by the runtime until
// the scheduler registry chooses one: merge all axes of the first output,
// split by 128, bind BIDx/TIDx, propagate to every tensor and inline.
// Fusions with reductions or outputs of different ranks keep the serial
// (unscheduled) form, which is valid, only slow.
#pragma once

#include <fusion.h>

namespace fuser {

// Returns whether a parallel schedule was applied.
bool scheduleDefault(Fusion* fusion);

} // namespace fuser
