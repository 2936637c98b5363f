#include <runtime/expr_eval_executor.h>

#include <ir/all_nodes.h>
#include <runtime/aten_evaluator.h>
#include <runtime/aten_types.h>
#include <runtime/communication_executor.h>
#include <runtime/input_binding.h>
#include <runtime/kernel_executor.h>
#include <runtime/tensor_layout.h>
#include <segmentation/input_views.h>

#include <algorithm>
#include <atomic>

namespace fuser {

namespace {

std::atomic<int64_t> layout_copies{0};

// A tensor laid out anew, `source` copied into it.
at::Tensor copiedInto(at::Tensor laid_out, const at::Tensor& source) {
  laid_out.copy_(source);
  ++layout_copies;
  return laid_out;
}

// A slice's or a reshape's output whose contiguity claims less than a
// dense layout: no later segment reads it (those are dense), so it may
// keep ATen's view of its input.
bool mayBeView(const TensorView* tv) {
  auto* resize = dynamic_cast<ResizeOp*>(tv->definition());
  const bool view_op =
      (resize != nullptr && resize->opType() == ResizeOpType::Slice) ||
      dynamic_cast<ViewOp*>(tv->definition()) != nullptr;
  const Contiguity& contiguity = tv->getContiguity();
  return view_op &&
         std::any_of(
             contiguity.begin(), contiguity.end(),
             [](const std::optional<bool>& c) { return c == false; });
}

} // namespace

int64_t exprEvalLayoutCopyCount() {
  return layout_copies.load();
}

const std::string& Executor::kernelCode() const {
  static const std::string no_kernel;
  return no_kernel;
}

std::unique_ptr<Executor> makeExecutor(SchedulerType type) {
  switch (type) {
    case SchedulerType::NoOp:
      return std::make_unique<NoOpExecutor>();
    case SchedulerType::ExprEval:
      return std::make_unique<ExprEvalExecutor>();
    case SchedulerType::Communication:
      return std::make_unique<CommunicationExecutor>();
    default:
      return std::make_unique<KernelExecutor>();
  }
}

void ExprEvalExecutor::compile(
    const Fusion* fusion, const std::vector<c10::IValue>&,
    const KnownLayouts&) {
  fusion_ = std::make_unique<Fusion>(*fusion);
  returns_views_ = onlyViews(fusion_->exprs(), fusion_->outputs());
}

std::vector<at::Tensor> ExprEvalExecutor::run(
    const std::vector<c10::IValue>& inputs) {
  FUSER_INTERNAL_ASSERT(fusion_ != nullptr, "run before compile");
  ExpressionEvaluator ee;
  // Permutes and expands inside the segment stay ATen's views (a permuted
  // operand of a product is read transposed, not copied first).
  std::vector<at::Tensor> outputs =
      evaluateFusionWithATen(fusion_.get(), inputs, ee, AtenViews::Alias);
  if (returns_views_) {
    // ATen's views of the inputs, as PyTorch returns them
    // (segmentation/input_views.h).
    return outputs;
  }
  // ATen picks its own strides. A view handed on to later segments comes
  // back as the view they were compiled for (runtime/handed_views.h); a
  // tensor that claims a dense layout (SegmentedFusion makes every other
  // one a later segment reads dense) comes back with the strides and the
  // alignment of the fresh tensor that the kernels after this segment
  // were compiled for (runtime/fusion_kernel_runtime.cpp); a slice or a
  // reshape the fusion returns stays ATen's view of its input where its
  // tensor admits it (doc/ops.md "Slicing, padding and concatenation").
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto* tv = dynamic_cast<TensorView*>(fusion_->outputs()[i]);
    if (tv == nullptr || tv->isFusionInput()) {
      continue;
    }
    if (!outputs[i].is_cuda()) {
      // Made without a tensor input (a factory): ATen evaluated it on the
      // CPU; a run's outputs live on the current CUDA device.
      outputs[i] = outputs[i].to(at::kCUDA);
    }
    if (i < handed_.size() && handed_[i].has_value()) {
      if (!matchesHandedView(outputs[i], *handed_[i])) {
        outputs[i] = copiedInto(
            allocateHandedView(*handed_[i], outputs[i].options()), outputs[i]);
      }
      continue;
    }
    const TensorLayout layout = denseLayout(tv, ee);
    const bool keep = mayBeView(tv)
                          ? admitsLayout(tv, outputs[i], ee)
                          : outputs[i].strides().vec() == layout.strides &&
                                readableAsDense(outputs[i]);
    if (keep) {
      continue;
    }
    outputs[i] =
        copiedInto(allocateTensor(layout, outputs[i].options()), outputs[i]);
  }
  return outputs;
}

void ExprEvalExecutor::handOn(size_t output, const HandedView& view) {
  if (handed_.size() <= output) {
    handed_.resize(output + 1);
  }
  handed_[output] = view;
}

void NoOpExecutor::compile(
    const Fusion* fusion, const std::vector<c10::IValue>&,
    const KnownLayouts&) {
  fusion_ = std::make_unique<Fusion>(*fusion);
}

std::vector<at::Tensor> NoOpExecutor::run(
    const std::vector<c10::IValue>& inputs) {
  FUSER_INTERNAL_ASSERT(fusion_ != nullptr, "run before compile");
  ExpressionEvaluator ee;
  bindFusionInputs(fusion_.get(), inputs, ee, /*require_cuda=*/true);
  at::Device device(at::kCUDA);
  for (const auto& input : inputs) {
    if (input.isTensor()) {
      device = input.toTensor().device();
      break;
    }
  }
  const auto& fusion_inputs = fusion_->inputs();
  std::vector<at::Tensor> outputs;
  for (Val* out : fusion_->outputs()) {
    auto it = std::find(fusion_inputs.begin(), fusion_inputs.end(), out);
    if (it != fusion_inputs.end()) {
      outputs.push_back(
          inputs[static_cast<size_t>(it - fusion_inputs.begin())].toTensor());
      continue;
    }
    auto* tv = out->as<TensorView>();
    outputs.push_back(allocateTensor(
        denseLayout(tv, ee),
        at::TensorOptions().device(device).dtype(toAtenType(tv->dtype()))));
  }
  return outputs;
}

} // namespace fuser
