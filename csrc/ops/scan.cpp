#include <ops/scan.h>

#include <ir/all_nodes.h>
#include <ops/utils.h>

namespace fuser {

namespace {

TensorView* scan(ScanOpType type, TensorView* tv, int64_t dim, DataType dtype) {
  const std::string op = toString(type);
  ops::checkTensorOperand(tv, op.c_str(), "the tensor");
  ops::checkNotFloat8({tv}, op.c_str());
  ops::checkNotComplex({tv}, op.c_str());
  dim = ops::normalizedDim(tv, dim, op.c_str());
  DataType out_type = dtype;
  if (out_type == DataType::Null) {
    out_type = isFloatingPointType(tv->dtype()) ? tv->dtype() : DataType::Int;
  }
  FUSER_CHECK(
      out_type != DataType::Bool && !isFloat8Type(out_type) &&
          out_type != DataType::Index,
      op, ": dtype ", out_type, " cannot hold a running ", op,
      "; ask for a number type.");
  TensorView* out = ops::newOutputTV({tv}, out_type);
  IrBuilder::create<ScanOp>(type, out, tv, dim);
  return out;
}

} // namespace

TensorView* cumsum(TensorView* tv, int64_t dim, DataType dtype) {
  return scan(ScanOpType::Sum, tv, dim, dtype);
}

TensorView* cumprod(TensorView* tv, int64_t dim, DataType dtype) {
  return scan(ScanOpType::Prod, tv, dim, dtype);
}

} // namespace fuser
