// Runs a segment op by op with ATen (runtime/aten_evaluator.h): the
// fallback for what no kernel scheduler takes. Outputs come back in their
// declared layout, as from every executor, except those of a segment that
// only views its inputs: ATen's views, as PyTorch returns them
// (segmentation/input_views.h).
#pragma once

#include <runtime/executor.h>

#include <memory>

namespace fuser {

class ExprEvalExecutor : public Executor {
 public:
  using Executor::compile;
  void compile(
      const Fusion* fusion, const std::vector<c10::IValue>& inputs,
      const KnownLayouts& layouts) override;
  std::vector<at::Tensor> run(const std::vector<c10::IValue>& inputs) override;

 private:
  std::unique_ptr<Fusion> fusion_;
  bool returns_views_ = false;
};

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
