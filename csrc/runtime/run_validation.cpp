#include <runtime/run_validation.h>

#include <base/exceptions.h>
#include <runtime/aten_evaluator.h>

#include <ATen/ATen.h>

#include <sstream>

namespace fuser {

namespace {

double tolerance(at::ScalarType type) {
  switch (type) {
    case at::kDouble:
    case at::kComplexDouble:
      return 1e-9;
    case at::kHalf:
      return 2e-2;
    case at::kBFloat16:
      return 5e-2;
    default:
      return 1e-3;
  }
}

// "" when `got` matches `want`, else what differs. `want` may live on
// another device: ATen evaluates a factory with no tensor input (an iota's
// positions) on the CPU.
std::string mismatch(const at::Tensor& got, const at::Tensor& want_anywhere) {
  const at::Tensor want = want_anywhere.to(got.device());
  std::stringstream ss;
  if (got.sizes() != want.sizes() || got.scalar_type() != want.scalar_type()) {
    ss << "sizes " << got.sizes() << " " << got.scalar_type() << ", expected "
       << want.sizes() << " " << want.scalar_type();
    return ss.str();
  }
  if (got.numel() == 0) {
    return "";
  }
  if (!at::isFloatingType(got.scalar_type()) &&
      !at::isComplexType(got.scalar_type())) {
    return at::equal(got, want) ? "" : "integer values differ";
  }
  const double tol = tolerance(got.scalar_type());
  const at::Tensor g = got.to(at::kComplexDouble);
  const at::Tensor w = want.to(at::kComplexDouble);
  const at::Tensor bad = at::logical_or(
      at::isnan(g) != at::isnan(w),
      at::logical_and(
          at::logical_not(at::isnan(w)), (g - w).abs() > tol + tol * w.abs()));
  const int64_t count = bad.sum().item<int64_t>();
  if (count == 0) {
    return "";
  }
  const int64_t at_flat = bad.flatten().nonzero()[0].item<int64_t>();
  ss << count << " of " << got.numel() << " elements differ beyond " << tol
     << "; element " << at_flat << " (flat) is "
     << got.flatten()[at_flat].item() << ", expected "
     << want.flatten()[at_flat].item();
  return ss.str();
}

// Throws an InternalError when an output of `fusion` differs from its ATen
// evaluation on `inputs`; `who` leads the message ("" or "segment 2 of 5
// (PointWise): "), `of_what` follows "the ATen evaluation" and `context`
// ends it.
void checkAgainstATen(
    Fusion* fusion, const std::vector<c10::IValue>& inputs,
    const std::vector<at::Tensor>& outputs, const std::string& who,
    const std::string& of_what, const std::string& context) {
  const std::vector<at::Tensor> expected =
      evaluateFusionWithATen(fusion, inputs);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string what = mismatch(outputs[i], expected.at(i));
    FUSER_INTERNAL_ASSERT(
        what.empty(), "validate_runs: ", who, "output ", i, " (",
        fusion->outputs()[i]->toString(), ") differs from the ATen evaluation",
        of_what, ": ", what, context, fusion->toString(),
        "Reproduce with FUSER_DUMP=segmented_fusion,scheduled_ir,cuda_kernel.");
  }
}

// The sizes and strides of the tensors among `inputs`: a kernel compiled
// for one layout reads another wrongly, and this shows which it got.
std::string tensorLayouts(const std::vector<c10::IValue>& inputs) {
  std::stringstream ss;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].isTensor()) {
      const at::Tensor& t = inputs[i].toTensor();
      ss << "\n  input " << i << ": sizes " << t.sizes() << " strides "
         << t.strides() << " offset " << t.storage_offset();
    }
  }
  return ss.str();
}

} // namespace

void validateSegmentWithATen(
    Fusion* segment, const std::vector<c10::IValue>& inputs,
    const std::vector<at::Tensor>& outputs, const std::string& which) {
  checkAgainstATen(
      segment, inputs, outputs, which + ": ",
      " of the segment on the inputs it got",
      "\nThe segment's tensor inputs:" + tensorLayouts(inputs) +
          "\nThe segment:\n");
}

void validateRunWithATen(
    Fusion* fusion, const std::vector<c10::IValue>& inputs,
    const std::vector<at::Tensor>& outputs, const std::string& segments) {
  checkAgainstATen(
      fusion, inputs, outputs, "", "",
      "\nThe fusion ran as: " + segments + "\n");
}

} // namespace fuser
