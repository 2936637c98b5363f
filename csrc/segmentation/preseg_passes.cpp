#include <segmentation/preseg_passes.h>

#include <base/options.h>
#include <multidevice/propagation.h>
#include <multidevice/resharding.h>
#include <transform/duplicate_exprs.h>
#include <transform/input_forwarding.h>
#include <transform/redundant_expands.h>
#include <transform/resize_to_inputs.h>
#include <transform/shared_factories.h>

#include <algorithm>
#include <iostream>
#include <string>

namespace fuser {

const std::vector<PreSegmentationPass>& preSegmentationPasses() {
  using Stage = PreSegmentationStage;
  static const std::vector<PreSegmentationPass> passes = {
      {"propagateShardings", Stage::MultiDevice,
       [](Fusion* fusion) -> int64_t {
         propagateShardings(fusion);
         return 0;
       }},
      {"insertReshardings", Stage::MultiDevice,
       [](Fusion* fusion) -> int64_t {
         insertReshardings(fusion);
         return 0;
       }},
      {"bypassRedundantExpands", Stage::BeforeCut, bypassRedundantExpands},
      {"copySharedFactories", Stage::BeforeCut, copySharedFactories},
      {"resizesToInputs", Stage::BeforeCut, resizesToInputs},
      {"forwardPointwiseChainsFromInputs", Stage::SeveralKernels,
       forwardPointwiseChainsFromInputs},
      {"mergeDuplicateExprs", Stage::EachSegment, mergeDuplicateExprs},
  };
  return passes;
}

int64_t runPreSegmentationPasses(Fusion* fusion, PreSegmentationStage stage) {
  int64_t changes = 0;
  for (const PreSegmentationPass& pass : preSegmentationPasses()) {
    if (pass.stage != stage) {
      continue;
    }
    const int64_t made = pass.run(fusion);
    changes += made;
    // A segment's fusion is made for every trial of the segmenter: its
    // passes print only what they changed.
    const bool quiet = stage == PreSegmentationStage::EachSegment && made == 0;
    if (!quiet && isDebugDumpEnabledFor(DebugDumpOption::PreSegIr, pass.name)) {
      std::cout << "[preseg_ir] after " << pass.name << " (" << made
                << " changes):\n";
      fusion->printMath(std::cout);
      std::cout << std::flush;
    }
  }
  return changes;
}

} // namespace fuser
