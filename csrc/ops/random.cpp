#include <ops/random.h>

#include <ir/all_nodes.h>
#include <ops/factory.h>
#include <ops/utils.h>

namespace fuser {

namespace {

TensorView* randomTensor(
    RNGOpType type, const std::vector<Val*>& shape, Val* a, Val* b, Val* seed,
    Val* offset, DataType dtype) {
  const std::string op = toString(type);
  ops::activeFusion(op.c_str());
  FUSER_CHECK(
      isFloatingPointType(dtype) && !isFloat8Type(dtype), op,
      ": dtype must be a floating-point type (double, float, half or "
      "bfloat16); got ",
      dtype, ".");
  ops::integerScalar(seed, op.c_str(), "the seed");
  ops::integerScalar(offset, op.c_str(), "the offset");
  for (Val* value : {a, b}) {
    FUSER_CHECK(
        value != nullptr && value->isScalar() &&
            value->dtype() != DataType::Bool,
        op, ": its parameters must be number scalars; got ",
        value == nullptr ? std::string("null") : value->toString(), ".");
  }
  // The output is a tensor of `shape` like full's, defined by the RNGOp.
  TensorView* out = emptyTensor(shape, dtype, op.c_str());
  std::vector<Val*> extents;
  for (IterDomain* id : out->getLogicalDomain()) {
    extents.push_back(id->extent());
  }
  IrBuilder::create<RNGOp>(type, out, seed, offset, a, b, extents);
  return out;
}

} // namespace

TensorView* uniform(
    const std::vector<Val*>& shape, Val* low, Val* high, Val* seed, Val* offset,
    DataType dtype) {
  return randomTensor(
      RNGOpType::Uniform, shape, low, high, seed, offset, dtype);
}

TensorView* normal(
    const std::vector<Val*>& shape, Val* mean, Val* std, Val* seed, Val* offset,
    DataType dtype) {
  return randomTensor(RNGOpType::Normal, shape, mean, std, seed, offset, dtype);
}

} // namespace fuser
