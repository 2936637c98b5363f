// The rewrites of a complete fusion before it is cut into segments, in the
// order they run (doc/segmentation.md §7). Each belongs to a stage of the
// runtime's path: the sharding passes when a multi-device executor takes
// the fusion, the expand and resize rewrites once the input extents are
// checked, the forwarding of pointwise chains when the fusion is cut into
// several kernels, and the merge of what those copies left twice in one
// segment on each segment's own fusion. FUSER_DUMP=preseg_ir prints the
// fusion after each pass (preseg_ir:<name> after the passes named; a
// segment's passes only where they changed it).
#pragma once

#include <fusion.h>

#include <cstdint>
#include <vector>

namespace fuser {

enum class PreSegmentationStage {
  MultiDevice,    // MultiDeviceExecutor, before it cuts stages
  BeforeCut,      // FusionKernelRuntime, after checkJoinedInputExtents
  SeveralKernels, // SegmentedFusion::segment, when one kernel cannot run all
  EachSegment,    // SegmentedGroup::makeFusion, on a segment's own fusion
};

struct PreSegmentationPass {
  const char* name;
  PreSegmentationStage stage;
  // Returns the number of changes it made (the sharding passes count
  // none: nothing reads it at their stage).
  int64_t (*run)(Fusion*);
};

// Every pass, in order.
const std::vector<PreSegmentationPass>& preSegmentationPasses();

// Runs the passes of `stage` in order on `fusion`; returns the sum of their
// changes.
int64_t runPreSegmentationPasses(Fusion* fusion, PreSegmentationStage stage);

} // namespace fuser
