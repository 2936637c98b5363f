#include <ops/indexing.h>

#include <ir/all_nodes.h>
#include <ops/utils.h>

namespace fuser {

namespace {

std::vector<IterDomain*> axesOf(TensorView* tv) {
  return TensorDomain::noReductions(tv->getLogicalDomain());
}

void checkTensorOperand(TensorView* tv, const char* op, const char* what) {
  FUSER_CHECK(tv != nullptr, op, ": ", what, " is null.");
  FUSER_CHECK(
      tv->fusion() == FusionGuard::getCurFusion(), op, ": ", what, " ",
      tv->toString(), " belongs to another Fusion than the active one.");
}

// `dim` checked against `tv`'s rank and made non-negative.
int64_t normalizedDim(TensorView* tv, int64_t dim, const char* op) {
  const auto rank = static_cast<int64_t>(axesOf(tv).size());
  FUSER_CHECK(
      rank > 0 && dim >= -rank && dim < rank, op, " of ", tv->toString(),
      ": dim ", dim, " is out of range for a tensor of rank ", rank,
      " (expected -", rank, " <= dim < ", rank, ").");
  return dim < 0 ? dim + rank : dim;
}

void checkIndexTensor(
    TensorView* index, const char* op, int64_t rank, const char* rank_text) {
  checkTensorOperand(index, op, "the index");
  FUSER_CHECK(
      isIntegralType(index->dtype()), op, ": the index ", index->toString(),
      " is a ", index->dtype(), " tensor; indices are integers.");
  FUSER_CHECK(
      static_cast<int64_t>(axesOf(index).size()) == rank, op,
      ": the index must ", rank_text, "; got ", index->toString(), " of rank ",
      axesOf(index).size(), ".");
}

// A new tensor of `dtype` whose axes have the extents of `like`'s.
TensorView* tensorLike(const std::vector<IterDomain*>& like, DataType dtype) {
  std::vector<IterDomain*> ids = ops::freshCopies(like);
  auto* domain = IrBuilder::create<TensorDomain>(
      ids, TensorDomain::getContiguityFilledWith(ids, true));
  return IrBuilder::create<TensorView>(domain, dtype);
}

} // namespace

TensorView* select(TensorView* tv, int64_t dim, Val* index) {
  checkTensorOperand(tv, "select", "the tensor");
  dim = normalizedDim(tv, dim, "select");
  FUSER_CHECK(
      index != nullptr && index->isScalar() && isIntegralType(index->dtype()),
      "select: the index must be an integer scalar; got ",
      index == nullptr ? std::string("null") : index->toString(), ".");
  std::vector<IterDomain*> kept = axesOf(tv);
  kept.erase(kept.begin() + dim);
  TensorView* out = tensorLike(kept, tv->dtype());
  IrBuilder::create<IndexOp>(IndexOpType::Select, out, tv, index, dim);
  return out;
}

TensorView* indexSelect(TensorView* tv, int64_t dim, TensorView* index) {
  checkTensorOperand(tv, "index_select", "the tensor");
  dim = normalizedDim(tv, dim, "index_select");
  checkIndexTensor(index, "index_select", 1, "have rank 1");
  std::vector<IterDomain*> like = axesOf(tv);
  like[static_cast<size_t>(dim)] = axesOf(index)[0];
  TensorView* out = tensorLike(like, tv->dtype());
  IrBuilder::create<IndexOp>(IndexOpType::IndexSelect, out, tv, index, dim);
  return out;
}

TensorView* gather(TensorView* tv, int64_t dim, TensorView* index) {
  checkTensorOperand(tv, "gather", "the tensor");
  dim = normalizedDim(tv, dim, "gather");
  checkIndexTensor(
      index, "gather", static_cast<int64_t>(axesOf(tv).size()),
      "have the tensor's rank");
  TensorView* out = tensorLike(axesOf(index), tv->dtype());
  IrBuilder::create<IndexOp>(IndexOpType::Gather, out, tv, index, dim);
  return out;
}

TensorView* scatter(
    TensorView* tv, int64_t dim, TensorView* index, TensorView* src) {
  checkTensorOperand(tv, "scatter", "the tensor");
  dim = normalizedDim(tv, dim, "scatter");
  const auto rank = static_cast<int64_t>(axesOf(tv).size());
  checkIndexTensor(index, "scatter", rank, "have the tensor's rank");
  checkTensorOperand(src, "scatter", "the source");
  FUSER_CHECK(
      static_cast<int64_t>(axesOf(src).size()) == rank &&
          src->dtype() == tv->dtype(),
      "scatter: the source must have the tensor's rank and type (", tv->dtype(),
      "); got ", src->toString(), " of type ", src->dtype(),
      ". Cast it first.");
  TensorView* out = tensorLike(axesOf(tv), tv->dtype());
  IrBuilder::create<IndexOp>(IndexOpType::Scatter, out, tv, index, dim, src);
  return out;
}

} // namespace fuser
