#include <runtime/tensor_layout.h>

#include <layout/vectorization.h>
#include <runtime/input_binding.h>

#include <ATen/ATen.h>

#include <cstdint>

namespace fuser {

namespace {

int64_t product(c10::IntArrayRef values) {
  int64_t result = 1;
  for (int64_t value : values) {
    result *= value;
  }
  return result;
}

} // namespace

TensorLayout inputLayout(
    const TensorView* tv, const at::Tensor& tensor, ExpressionEvaluator& ee,
    int64_t input_position) {
  checkRank(tv, tensor, input_position);
  return stridedLayout(
      tv, tensor.sizes().vec(), tensor.strides().vec(), ee,
      [&](const std::string& problem, const std::string& expected,
          const std::string& fix) {
        failInput(tv, tensor, input_position, problem, expected, fix);
      });
}

bool admitsLayout(
    const TensorView* tv, const at::Tensor& tensor, ExpressionEvaluator& ee) {
  try {
    inputLayout(tv, tensor, ee, -1);
    return true;
  } catch (const UserError&) {
    return false;
  }
}

bool readableAsDense(const at::Tensor& tensor) {
  if (pointerAlignment(tensor.data_ptr()) != kMaxVectorBytes) {
    return false;
  }
  const int64_t item = tensor.element_size();
  for (int64_t d = 0; d < tensor.dim(); ++d) {
    if (tensor.size(d) != 1 && tensor.stride(d) != 1 &&
        (tensor.stride(d) * item) % kMaxVectorBytes != 0) {
      return false;
    }
  }
  return true;
}

at::Tensor allocateTensor(
    const TensorLayout& layout, const at::TensorOptions& options) {
  if (layout.buffer_numel == product(layout.sizes)) {
    return at::empty_strided(layout.sizes, layout.strides, options);
  }
  // A split that does not divide: the view of a padded buffer.
  return at::empty({layout.buffer_numel}, options)
      .as_strided(layout.sizes, layout.strides);
}

} // namespace fuser
