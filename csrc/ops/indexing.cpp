#include <ops/indexing.h>

#include <ir/all_nodes.h>
#include <ops/alias.h>
#include <ops/utils.h>

namespace fuser {

namespace {

std::vector<IterDomain*> axesOf(TensorView* tv) {
  return TensorDomain::noReductions(tv->getLogicalDomain());
}

void checkIndexTensor(
    TensorView* index, const char* op, int64_t rank, const char* rank_text) {
  ops::checkTensorOperand(index, op, "the index");
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
  ops::checkTensorOperand(tv, "select", "the tensor");
  dim = ops::normalizedDim(tv, dim, "select");
  ops::integerScalar(index, "select", "the index");
  std::vector<IterDomain*> kept = axesOf(tv);
  kept.erase(kept.begin() + dim);
  TensorView* out = tensorLike(kept, tv->dtype());
  IrBuilder::create<IndexOp>(IndexOpType::Select, out, tv, index, dim);
  return out;
}

TensorView* indexSelect(TensorView* tv, int64_t dim, TensorView* index) {
  ops::checkTensorOperand(tv, "index_select", "the tensor");
  dim = ops::normalizedDim(tv, dim, "index_select");
  if (index != nullptr && axesOf(index).empty()) {
    // A 0-dim index picks one entry and keeps the axis, of size 1, as
    // torch.index_select does.
    ops::checkTensorOperand(index, "index_select", "the index");
    index = broadcast(index, {true});
  }
  checkIndexTensor(index, "index_select", 1, "have rank 1 (or 0)");
  std::vector<IterDomain*> like = axesOf(tv);
  like[static_cast<size_t>(dim)] = axesOf(index)[0];
  TensorView* out = tensorLike(like, tv->dtype());
  IrBuilder::create<IndexOp>(IndexOpType::IndexSelect, out, tv, index, dim);
  return out;
}

TensorView* gather(TensorView* tv, int64_t dim, TensorView* index) {
  ops::checkTensorOperand(tv, "gather", "the tensor");
  dim = ops::normalizedDim(tv, dim, "gather");
  checkIndexTensor(
      index, "gather", static_cast<int64_t>(axesOf(tv).size()),
      "have the tensor's rank");
  TensorView* out = tensorLike(axesOf(index), tv->dtype());
  IrBuilder::create<IndexOp>(IndexOpType::Gather, out, tv, index, dim);
  return out;
}

TensorView* scatter(
    TensorView* tv, int64_t dim, TensorView* index, TensorView* src) {
  ops::checkTensorOperand(tv, "scatter", "the tensor");
  dim = ops::normalizedDim(tv, dim, "scatter");
  const auto rank = static_cast<int64_t>(axesOf(tv).size());
  checkIndexTensor(index, "scatter", rank, "have the tensor's rank");
  ops::checkTensorOperand(src, "scatter", "the source");
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
