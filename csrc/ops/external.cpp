#include <ops/external.h>

#include <ir/all_nodes.h>
#include <ops/factory.h>
#include <ops/utils.h>

namespace fuser {

namespace {

std::vector<IterDomain*> axesOf(TensorView* tv) {
  return TensorDomain::noReductions(tv->getLogicalDomain());
}

std::vector<Val*> extentsOf(TensorView* tv) {
  std::vector<Val*> extents;
  for (IterDomain* id : axesOf(tv)) {
    extents.push_back(id->extent());
  }
  return extents;
}

void checkRank(TensorView* tv, int64_t rank, const char* op, const char* what) {
  ops::checkTensorOperand(tv, op, what);
  FUSER_CHECK(
      rankOf(tv) == rank, op, ": ", what, " ", tv->toString(),
      " must have rank ", rank, "; it has rank ", rankOf(tv), ".");
}

void checkScalarOperand(Val* v, const char* op, const char* what) {
  FUSER_CHECK(
      v != nullptr && v->isScalar(), op, ": ", what, " must be a scalar; got ",
      v == nullptr ? std::string("null") : v->toString(), ".");
}

std::vector<Val*> withOptional(std::vector<Val*> inputs, Val* optional) {
  if (optional != nullptr) {
    inputs.push_back(optional);
  }
  return inputs;
}

} // namespace

TopKResult topk(
    TensorView* tv, Val* k, int64_t dim, bool largest, bool sorted) {
  const char* op = "topk";
  ops::checkTensorOperand(tv, op, "the tensor");
  ops::checkComputable({tv}, op);
  ops::checkNotComplex({tv}, op);
  ops::integerScalar(k, op, "k");
  dim = ops::normalizedDimOfAnyRank(tv, dim, op);
  std::vector<Val*> extents = extentsOf(tv);
  if (!extents.empty()) {
    extents[dim] = k;
  }
  TopKResult result;
  result.values = emptyTensor(extents, tv->dtype(), op);
  result.indices = emptyTensor(extents, DataType::Int, op);
  IrBuilder::create<ExternalOp>(
      ExternalOpType::TopK, std::vector<Val*>{result.values, result.indices},
      std::vector<Val*>{tv, k}, std::vector<int64_t>{dim, largest, sorted});
  return result;
}

TensorView* argsort(TensorView* tv, int64_t dim, bool descending, bool stable) {
  const char* op = "argsort";
  ops::checkTensorOperand(tv, op, "the tensor");
  ops::checkComputable({tv}, op);
  ops::checkNotComplex({tv}, op);
  dim = ops::normalizedDimOfAnyRank(tv, dim, op);
  TensorView* out = emptyTensor(extentsOf(tv), DataType::Int, op);
  IrBuilder::create<ExternalOp>(
      ExternalOpType::ArgSort, std::vector<Val*>{out}, std::vector<Val*>{tv},
      std::vector<int64_t>{dim, descending, stable});
  return out;
}

TensorView* groupedMm(TensorView* a, TensorView* b, TensorView* offsets) {
  const char* op = "grouped_mm";
  ops::checkTensorOperand(a, op, "a");
  ops::checkTensorOperand(b, op, "b");
  const int64_t ra = rankOf(a);
  const int64_t rb = rankOf(b);
  FUSER_CHECK(
      (ra == 2 || ra == 3) && (rb == 2 || rb == 3), op,
      ": the operands must have rank 2 or 3; got ", a->toString(), " and ",
      b->toString(), ".");
  FUSER_CHECK(
      a->dtype() == b->dtype() && isFloatingPointType(a->dtype()), op,
      ": the operands must be floating-point tensors of one type; got ",
      a->dtype(), " and ", b->dtype(), ".");
  const std::vector<Val*> ea = extentsOf(a);
  const std::vector<Val*> eb = extentsOf(b);
  std::vector<Val*> extents;
  std::vector<Val*> inputs{a, b};
  if (ra == 3 && rb == 3) {
    FUSER_CHECK(
        offsets == nullptr, op,
        ": [groups, m, k] x [groups, k, n] takes no offsets (each group is "
        "one matrix).");
    extents = {ea[0], ea[1], eb[2]};
  } else {
    FUSER_CHECK(
        offsets != nullptr, op, ": rank ", ra, " x rank ", rb,
        " operands need the offsets of the groups.");
    checkRank(offsets, 1, op, "offsets");
    FUSER_CHECK(
        isIntegralType(offsets->dtype()), op,
        ": offsets must be integers; got ", offsets->dtype(), ".");
    inputs.push_back(offsets);
    Val* groups = axesOf(offsets)[0]->extent();
    if (ra == 2 && rb == 2) {
      extents = {groups, ea[0], eb[1]};
    } else if (ra == 2) {
      extents = {ea[0], eb[2]};
    } else {
      extents = {ea[1], eb[1]};
    }
  }
  TensorView* out = emptyTensor(extents, a->dtype(), op);
  IrBuilder::create<ExternalOp>(
      ExternalOpType::GroupedMm, std::vector<Val*>{out}, inputs,
      std::vector<int64_t>{});
  return out;
}

TensorView* embedding(
    TensorView* indices, TensorView* weight, std::optional<int64_t> padding_idx,
    Val* max_norm, Val* norm_type, bool scale_grad_by_freq, bool sparse) {
  const char* op = "embedding";
  ops::checkTensorOperand(indices, op, "indices");
  checkRank(weight, 2, op, "weight");
  FUSER_CHECK(
      isIntegralType(indices->dtype()), op, ": indices must be integers; got ",
      indices->dtype(), ".");
  if (max_norm != nullptr) {
    checkScalarOperand(max_norm, op, "max_norm");
  }
  if (norm_type != nullptr) {
    checkScalarOperand(norm_type, op, "norm_type");
  }
  std::vector<Val*> extents = extentsOf(indices);
  extents.push_back(axesOf(weight)[1]->extent());
  TensorView* out = emptyTensor(extents, weight->dtype(), op);
  std::vector<Val*> inputs{indices, weight};
  if (max_norm != nullptr) {
    inputs.push_back(max_norm);
    inputs.push_back(
        norm_type != nullptr ? norm_type
                             : IrBuilder::create<Val>(2.0, DataType::Double));
  }
  IrBuilder::create<ExternalOp>(
      ExternalOpType::Embedding, std::vector<Val*>{out}, inputs,
      std::vector<int64_t>{
          padding_idx.value_or(ExternalOp::kNoPaddingIdx), max_norm != nullptr,
          scale_grad_by_freq, sparse});
  return out;
}

SdpaForwardResult sdpfaForward(
    TensorView* q, TensorView* k, TensorView* v, Val* dropout_p, Val* is_causal,
    Val* scale) {
  const char* op = "sdpfa_fwd";
  checkRank(q, 4, op, "query");
  checkRank(k, 4, op, "key");
  checkRank(v, 4, op, "value");
  for (TensorView* tv : {q, k, v}) {
    FUSER_CHECK(
        tv->dtype() == DataType::Half || tv->dtype() == DataType::BFloat16, op,
        ": flash attention takes half or bfloat16 tensors; ", tv->toString(),
        " is ", tv->dtype(), ".");
  }
  checkScalarOperand(dropout_p, op, "dropout_p");
  checkScalarOperand(is_causal, op, "is_causal");
  if (scale != nullptr) {
    checkScalarOperand(scale, op, "scale");
  }
  const std::vector<Val*> eq = extentsOf(q);
  const std::vector<Val*> ev = extentsOf(v);
  SdpaForwardResult result;
  result.output = emptyTensor({eq[0], eq[1], eq[2], ev[3]}, q->dtype(), op);
  result.logsumexp = emptyTensor({eq[0], eq[1], eq[2]}, DataType::Float, op);
  result.philox_seed = emptyTensor(
      {IrBuilder::create<Val>(int64_t(2), DataType::Index)}, DataType::UInt64,
      op);
  result.philox_offset = emptyTensor({}, DataType::UInt64, op);
  IrBuilder::create<ExternalOp>(
      ExternalOpType::SdpaFlashForward,
      std::vector<Val*>{
          result.output, result.logsumexp, result.philox_seed,
          result.philox_offset},
      withOptional({q, k, v, dropout_p, is_causal}, scale),
      std::vector<int64_t>{scale != nullptr});
  return result;
}

SdpaBackwardResult sdpfaBackward(
    TensorView* grad_output, TensorView* q, TensorView* k, TensorView* v,
    TensorView* output, TensorView* logsumexp, Val* dropout_p, Val* is_causal,
    TensorView* philox_seed, TensorView* philox_offset, Val* scale) {
  const char* op = "sdpfa_bwd";
  checkRank(grad_output, 4, op, "grad_output");
  checkRank(q, 4, op, "query");
  checkRank(k, 4, op, "key");
  checkRank(v, 4, op, "value");
  checkRank(output, 4, op, "output");
  checkRank(logsumexp, 3, op, "logsumexp");
  ops::checkTensorOperand(philox_seed, op, "philox_seed");
  ops::checkTensorOperand(philox_offset, op, "philox_offset");
  checkScalarOperand(dropout_p, op, "dropout_p");
  checkScalarOperand(is_causal, op, "is_causal");
  if (scale != nullptr) {
    checkScalarOperand(scale, op, "scale");
  }
  SdpaBackwardResult result;
  result.grad_q = emptyTensor(extentsOf(q), q->dtype(), op);
  result.grad_k = emptyTensor(extentsOf(k), k->dtype(), op);
  result.grad_v = emptyTensor(extentsOf(v), v->dtype(), op);
  IrBuilder::create<ExternalOp>(
      ExternalOpType::SdpaFlashBackward,
      std::vector<Val*>{result.grad_q, result.grad_k, result.grad_v},
      withOptional(
          {grad_output, q, k, v, output, logsumexp, dropout_p, is_causal,
           philox_seed, philox_offset},
          scale),
      std::vector<int64_t>{scale != nullptr});
  return result;
}

} // namespace fuser
