#include <runtime/aten_external_ops.h>

#include <ir/all_nodes.h>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

namespace fuser {

namespace {

double doubleOf(ExpressionEvaluator& ee, const Val* v) {
  return ee.evaluateOrThrow(v).asDouble();
}

bool boolOf(ExpressionEvaluator& ee, const Val* v) {
  const ScalarValue value = ee.evaluateOrThrow(v);
  return value.isBool() ? value.asBool() : value.asInt() != 0;
}

std::optional<double> scaleOf(
    const ExternalOp* op, ExpressionEvaluator& ee, size_t position) {
  if (op->attribute(0) == 0) {
    return std::nullopt;
  }
  return doubleOf(ee, op->input(position));
}

// The philox state flash attention returns, in the IR's shapes (seed
// uint64 [2], offset uint64 []): ATen gives those when dropout draws
// numbers; the state is unused otherwise.
at::Tensor philoxState(const at::Tensor& state, const TensorView* out) {
  const auto rank = static_cast<int64_t>(out->getLogicalDomain().size());
  const int64_t numel = rank == 0 ? 1 : 2;
  if (state.defined() && state.dim() == rank && state.numel() == numel &&
      state.scalar_type() == at::kUInt64) {
    return state;
  }
  std::vector<int64_t> sizes;
  if (rank == 1) {
    sizes.push_back(2);
  }
  at::Tensor zeros =
      at::zeros(sizes, at::dtype(at::kLong).device(state.device()));
  if (state.defined() && state.numel() == numel) {
    zeros.copy_(state.reshape(sizes).to(at::kLong));
  }
  return zeros.to(at::kUInt64);
}

std::vector<at::Tensor> sdpaForward(
    const ExternalOp* op,
    const std::function<at::Tensor(const Val*)>& tensor_of,
    ExpressionEvaluator& ee) {
  auto [output, logsumexp, cum_q, cum_k, max_q, max_k, seed, offset, mask] =
      at::_scaled_dot_product_flash_attention(
          tensor_of(op->input(0)), tensor_of(op->input(1)),
          tensor_of(op->input(2)), doubleOf(ee, op->input(3)),
          boolOf(ee, op->input(4)), /*return_debug_mask=*/false,
          scaleOf(op, ee, 5));
  (void)cum_q;
  (void)cum_k;
  (void)max_q;
  (void)max_k;
  (void)mask;
  return {
      output, logsumexp, philoxState(seed, op->output(2)->as<TensorView>()),
      philoxState(offset, op->output(3)->as<TensorView>())};
}

std::vector<at::Tensor> sdpaBackward(
    const ExternalOp* op,
    const std::function<at::Tensor(const Val*)>& tensor_of,
    ExpressionEvaluator& ee) {
  const at::Tensor q = tensor_of(op->input(1));
  const at::Tensor k = tensor_of(op->input(2));
  auto [grad_q, grad_k, grad_v] =
      at::_scaled_dot_product_flash_attention_backward(
          tensor_of(op->input(0)), q, k, tensor_of(op->input(3)),
          tensor_of(op->input(4)), tensor_of(op->input(5)),
          /*cum_seq_q=*/at::Tensor(), /*cum_seq_k=*/at::Tensor(),
          /*max_q=*/q.size(2), /*max_k=*/k.size(2), doubleOf(ee, op->input(6)),
          boolOf(ee, op->input(7)), tensor_of(op->input(8)),
          tensor_of(op->input(9)), scaleOf(op, ee, 10));
  return {grad_q, grad_k, grad_v};
}

at::Tensor embedding(
    const ExternalOp* op,
    const std::function<at::Tensor(const Val*)>& tensor_of,
    ExpressionEvaluator& ee) {
  const at::Tensor indices = tensor_of(op->input(0));
  at::Tensor weight = tensor_of(op->input(1));
  const int64_t padding_idx = op->attribute(0);
  if (op->attribute(1) != 0) {
    // As torch.nn.functional.embedding: the rows read are renormalized in
    // place, outside autograd.
    c10::NoGradGuard no_grad;
    at::embedding_renorm_(
        weight, indices.contiguous(), doubleOf(ee, op->input(2)),
        doubleOf(ee, op->input(3)));
  }
  return at::embedding(
      weight, indices,
      padding_idx == ExternalOp::kNoPaddingIdx ? -1 : padding_idx,
      op->attribute(2) != 0, op->attribute(3) != 0);
}

} // namespace

std::vector<at::Tensor> evaluateExternalOp(
    const ExternalOp* op,
    const std::function<at::Tensor(const Val*)>& tensor_of,
    ExpressionEvaluator& ee) {
  switch (op->opType()) {
    case ExternalOpType::TopK: {
      auto [values, indices] = at::topk(
          tensor_of(op->input(0)), ee.evaluateOrThrow(op->input(1)).asInt(),
          op->attribute(0), op->attribute(1) != 0, op->attribute(2) != 0);
      return {values, indices};
    }
    case ExternalOpType::ArgSort:
      return {at::argsort(
          tensor_of(op->input(0)), op->attribute(2) != 0, op->attribute(0),
          op->attribute(1) != 0)};
    case ExternalOpType::GroupedMm: {
      std::optional<at::Tensor> offsets;
      if (op->inputs().size() > 2) {
        offsets = tensor_of(op->input(2)).to(at::kInt);
      }
      return {at::_grouped_mm(
          tensor_of(op->input(0)), tensor_of(op->input(1)), offsets)};
    }
    case ExternalOpType::Embedding:
      return {embedding(op, tensor_of, ee)};
    case ExternalOpType::SdpaFlashForward:
      return sdpaForward(op, tensor_of, ee);
    case ExternalOpType::SdpaFlashBackward:
      return sdpaBackward(op, tensor_of, ee);
  }
  FUSER_ERROR("unreachable ExternalOp type");
}

} // namespace fuser
