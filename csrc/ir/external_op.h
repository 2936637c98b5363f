// ExternalOp: an op whose computation fuser does not generate. Each runs a
// library kernel (ATen's) in a segment of its own, as nvFuser runs its
// attention and top-k ops: the kernel schedulers decline it, the
// ExprEval scheduler evaluates it (runtime/aten_external_ops.cpp). The
// builders, shapes and semantics are in ops/external.h (doc/ops.md,
// "Library ops").
#pragma once

#include <ir/base_nodes.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fuser {

// The library ops. Inputs, attributes and outputs of each, in order
// (ops/external.h says what they mean):
//   TopK              in, k               | dim, largest, sorted | values,
//   indices ArgSort           in                  | dim, descending, stable |
//   indices GroupedMm         a, b, offsets       |                       | out
//   Embedding         indices, weight, max_norm?, norm_type?
//                     | padding_idx (or kNoPaddingIdx), has_max_norm,
//                       scale_grad_by_freq, sparse              | out
//   SdpaFlashForward  q, k, v, dropout_p, is_causal, scale?
//                     | has_scale            | out, logsumexp, philox_seed,
//                                              philox_offset
//   SdpaFlashBackward grad_out, q, k, v, out, logsumexp, dropout_p,
//                     is_causal, philox_seed, philox_offset, scale?
//                     | has_scale            | grad_q, grad_k, grad_v
enum class ExternalOpType {
  TopK,
  ArgSort,
  GroupedMm,
  Embedding,
  SdpaFlashForward,
  SdpaFlashBackward,
};
std::string toString(ExternalOpType type);

class ExternalOp : public Expr {
 public:
  static constexpr int64_t kNoPaddingIdx = INT64_MIN;

  ExternalOp(
      ExternalOpType type, const std::vector<Val*>& outputs,
      const std::vector<Val*>& inputs, std::vector<int64_t> attributes);

  ExternalOpType opType() const {
    return type_;
  }
  // The integer parameters, in the order of the table above.
  const std::vector<int64_t>& attributes() const {
    return attributes_;
  }
  int64_t attribute(size_t i) const;

  // Nothing: a library op's outputs share no loop with its inputs.
  std::vector<std::pair<size_t, size_t>> mappedAxes(
      const TensorView* producer) const override;

  std::string getOpString() const override {
    return "ExternalOp";
  }
  std::string toString(int indent_size = 0) const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  ExternalOpType type_;
  std::vector<int64_t> attributes_;
};

} // namespace fuser
