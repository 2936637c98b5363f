// The library ops (doc/ops.md, "Library ops"): ops fuser runs through a
// library kernel, ATen's, in a segment of their own (ir/external_op.h),
// with PyTorch's semantics and nvFuser's Python names.
#pragma once

#include <ir/interface_nodes.h>

#include <optional>

namespace fuser {

// torch.topk: the `k` largest (smallest unless `largest`) elements along
// `dim` and their int64 indices; sorted by value when `sorted`.
struct TopKResult {
  TensorView* values = nullptr;
  TensorView* indices = nullptr;
};
TopKResult topk(
    TensorView* tv, Val* k, int64_t dim, bool largest = true,
    bool sorted = true);

// torch.argsort: the int64 positions along `dim` that sort `tv`.
TensorView* argsort(
    TensorView* tv, int64_t dim, bool descending = false, bool stable = false);

// torch._grouped_mm: products of matrices in groups (`offsets`, int32, the
// end of each group along the axis the operands share):
//   [m, k] x [k, n]    -> [groups, m, n]  (groups split k)
//   [groups, m, k] x [k, n] -> ... as torch; [m, k] x [groups, k, n] ->
//   [m, n] (groups split m); [g, m, k] x [g, k, n] -> [g, m, n] (no offsets).
TensorView* groupedMm(TensorView* a, TensorView* b, TensorView* offsets);

// torch.nn.functional.embedding of `indices` into the rows of `weight`;
// with `max_norm`, rows read are first renormalized in place, as torch
// does.
TensorView* embedding(
    TensorView* indices, TensorView* weight,
    std::optional<int64_t> padding_idx = std::nullopt, Val* max_norm = nullptr,
    Val* norm_type = nullptr, bool scale_grad_by_freq = false,
    bool sparse = false);

// Flash attention (ATen's _scaled_dot_product_flash_attention) of q, k, v
// of [batch, heads, sequence, head size], half or bfloat16: the output,
// the float log-sum-exp of each query row ([batch, heads, q sequence]) and
// the state of the dropout's generator (philox seed: uint64 [2], offset:
// uint64 []) that the backward op replays. `scale`: null for
// 1 / sqrt(head size).
struct SdpaForwardResult {
  TensorView* output = nullptr;
  TensorView* logsumexp = nullptr;
  TensorView* philox_seed = nullptr;
  TensorView* philox_offset = nullptr;
};
SdpaForwardResult sdpfaForward(
    TensorView* q, TensorView* k, TensorView* v, Val* dropout_p, Val* is_causal,
    Val* scale = nullptr);

// Its gradients with respect to q, k and v.
struct SdpaBackwardResult {
  TensorView* grad_q = nullptr;
  TensorView* grad_k = nullptr;
  TensorView* grad_v = nullptr;
};
SdpaBackwardResult sdpfaBackward(
    TensorView* grad_output, TensorView* q, TensorView* k, TensorView* v,
    TensorView* output, TensorView* logsumexp, Val* dropout_p, Val* is_causal,
    TensorView* philox_seed, TensorView* philox_offset, Val* scale = nullptr);

} // namespace fuser
