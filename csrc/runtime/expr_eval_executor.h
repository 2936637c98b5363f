// Runs a segment op by op with ATen (runtime/aten_evaluator.h): the
// fallback for what no kernel scheduler takes. Outputs come back in their
// declared layout, as from every executor, except those of a segment that
// only views its inputs: ATen's views, as PyTorch returns them
// (segmentation/input_views.h), and the views it hands to later segments
// (runtime/handed_views.h).
#pragma once

#include <runtime/executor.h>
#include <runtime/handed_views.h>

#include <memory>
#include <optional>
#include <vector>

namespace fuser {

class ExprEvalExecutor : public Executor {
 public:
  using Executor::compile;
  void compile(
      const Fusion* fusion, const std::vector<c10::IValue>& inputs,
      const KnownLayouts& layouts) override;
  std::vector<at::Tensor> run(const std::vector<c10::IValue>& inputs) override;

  // Output `output` goes to later segments compiled for `view`
  // (runtime/handed_views.h): ATen's view where it matches, else a copy
  // laid out as `view`.
  void handOn(size_t output, const HandedView& view);

 private:
  std::unique_ptr<Fusion> fusion_;
  bool returns_views_ = false;
  std::vector<std::optional<HandedView>> handed_;
};

// How many tensors ExprEval executors of this process have copied to lay
// them out for later segments (dense, or as a handed view they did not
// match): tests count the copies of a run.
int64_t exprEvalLayoutCopyCount();

// Runs a segment that computes nothing: outputs that are inputs are
// returned as they are, the others (empty) are allocated in their layout.
class NoOpExecutor : public Executor {
 public:
  using Executor::compile;
  void compile(
      const Fusion* fusion, const std::vector<c10::IValue>& inputs,
      const KnownLayouts& layouts) override;
  std::vector<at::Tensor> run(const std::vector<c10::IValue>& inputs) override;

 private:
  std::unique_ptr<Fusion> fusion_;
};

} // namespace fuser
