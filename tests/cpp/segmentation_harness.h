// What the segmentation tests share: the runtime's segmentation and
// compilation of a fusion on the CPU, the checks of a segmentation, and a
// GPU run through FusionExecutorCache against ATen
// (tests/cpp/test_segmentation.cpp, test_segmentation_expands.cpp).
#pragma once

#include <codegen/codegen.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <runtime/aten_types.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/input_binding.h>
#include <runtime/nvrtc_compile.h>
#include <runtime/segment_scheduling.h>
#include <runtime/tensor_layout.h>
#include <scheduler/registry.h>
#include <segmentation/segmented_fusion.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <unordered_set>
#include <vector>

namespace fuser {

// What the runtime does on a cache miss, on the CPU: segments `fusion` for
// `inputs`, then schedules each group for the tensors it reads (the fusion
// inputs, and dense stand-ins for intermediates) and compiles its kernel
// with NVRTC. The groups' scheduler types are set as the runtime sets them.
inline std::unique_ptr<SegmentedFusion> segmentAndCompile(
    const Fusion* fusion, const std::vector<c10::IValue>& inputs) {
  auto segmented = std::make_unique<SegmentedFusion>(fusion);
  Fusion* complete = segmented->completeFusion();
  RuntimeInfo info = makeRuntimeInfo(complete, inputs, /*require_cuda=*/false);
  checkJoinedInputExtents(complete, info.expressionEvaluator());
  std::unique_ptr<InputSegmentScheduling> scheduling =
      segmentForInputs(*segmented, inputs, info);
  for (SegmentedGroup* group : segmented->groups()) {
    std::unique_ptr<Fusion> part = group->makeFusion();
    const GroupInputs part_inputs = scheduling->groupInputs(*group);
    RuntimeInfo info = makeRuntimeInfo(
        part.get(), part_inputs.values, false, part_inputs.layouts);
    // The group's inputs fix its outputs' sizes (the runtime allocates
    // them from nothing else).
    for (Val* out : part->outputs()) {
      for (IterDomain* id : TensorDomain::noReductions(
               out->as<TensorView>()->getLogicalDomain())) {
        EXPECT_TRUE(info.expressionEvaluator().evaluate(id->extent()))
            << group->toString() << ": the size " << id->toString() << " of "
            << out->toString() << " is not given to the group";
      }
    }
    Scheduler& scheduler =
        segmentScheduler(part.get(), info, scheduling->chosenFor(*group));
    group->setSchedulerType(scheduler.type());
    if (scheduler.type() == SchedulerType::ExprEval ||
        scheduler.type() == SchedulerType::NoOp) {
      continue;
    }
    const std::string math = part->mathToString();
    try {
      scheduler.schedule(
          part.get(), *scheduler.computeHeuristics(part.get(), info));
      compileToCubin(generateCudaKernel(part.get()), "fuser_kernel", 90, true);
    } catch (const std::exception& e) {
      ADD_FAILURE() << group->toString() << "\n"
                    << math << "\nfailed: " << e.what();
    }
  }
  return segmented;
}

inline std::vector<SchedulerType> schedulerTypes(
    const SegmentedFusion& segmented) {
  std::vector<SchedulerType> types;
  for (const SegmentedGroup* group : segmented.groups()) {
    types.push_back(group->schedulerType());
  }
  return types;
}

// Every tensor expr of the complete fusion lies in exactly one group; a
// group reads only fusion inputs and outputs of earlier groups (so the
// groups form no cycle); every fusion output is computed by some group.
inline void expectValidSegmentation(const SegmentedFusion& segmented) {
  Fusion* complete = segmented.completeFusion();
  std::unordered_map<const Expr*, int> seen;
  std::unordered_set<const Val*> available(
      complete->inputs().begin(), complete->inputs().end());
  for (const SegmentedGroup* group : segmented.groups()) {
    for (Expr* expr : group->exprs()) {
      ++seen[expr];
    }
    for (Val* in : group->inputs()) {
      // A size the input signature fixes is given to any group.
      const bool size = !in->isA<TensorView>() && in->definition() == nullptr;
      EXPECT_TRUE(available.count(in) || size)
          << group->toString() << " reads " << in->toString()
          << " before a group computes it";
    }
    available.insert(group->outputs().begin(), group->outputs().end());
  }
  for (Expr* expr : complete->exprs()) {
    if (expr->output(0)->isA<TensorView>()) {
      EXPECT_EQ(seen[expr], 1) << expr->toString();
    }
  }
  for (Val* out : complete->outputs()) {
    EXPECT_TRUE(available.count(out)) << out->toString();
  }
}

// The segmentation of `fusion` for `inputs`, checked as above, with each
// group's kernel compiled.
inline std::unique_ptr<SegmentedFusion> checkedSegments(
    const Fusion* fusion, const std::vector<c10::IValue>& inputs) {
  auto segmented = segmentAndCompile(fusion, inputs);
  expectValidSegmentation(*segmented);
  return segmented;
}

// Runs `fusion` twice through one FusionExecutorCache on `inputs` (CUDA),
// checks both runs against ATen (failures name the caller's `line` and
// file), and returns the scheduler types of the segments the runtime ran.
inline std::vector<SchedulerType> runOnGpu(
    FusionExecutorCache& fec, const std::vector<c10::IValue>& inputs, int line,
    const char* file = __builtin_FILE()) {
  for (int run = 0; run < 2; ++run) {
    std::vector<at::Tensor> outputs = fec.runFusionWithInputs(inputs);
    testValidate(fec.fusion(), outputs, inputs, line, file);
  }
  FusionKernelRuntime* runtime = fec.getMostRecentKernelRuntime();
  std::vector<SchedulerType> types = schedulerTypes(*runtime->fusionSegments());
  EXPECT_EQ(runtime->executors().size(), types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    EXPECT_EQ(runtime->schedulerType(i), types[i]);
    const bool kernel =
        types[i] != SchedulerType::ExprEval && types[i] != SchedulerType::NoOp;
    EXPECT_EQ(runtime->kernelCode(i).empty(), !kernel) << i;
  }
  return types;
}

} // namespace fuser
