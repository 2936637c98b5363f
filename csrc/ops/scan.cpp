#include <ops/scan.h>

#include <ir/all_nodes.h>
#include <ops/utils.h>

namespace fuser {

namespace {

int64_t checkedScanDim(const std::string& op, TensorView* tv, int64_t dim) {
  ops::checkTensorOperand(tv, op.c_str(), "the tensor");
  ops::checkComputable({tv}, op.c_str());
  ops::checkNotComplex({tv}, op.c_str());
  return ops::normalizedDim(tv, dim, op.c_str());
}

ScanWithIndices extremeScan(
    ScanOpType values, ScanOpType indices, TensorView* tv, int64_t dim) {
  dim = checkedScanDim(toString(values), tv, dim);
  ScanWithIndices result;
  result.values = ops::newOutputTV({tv}, tv->dtype());
  IrBuilder::create<ScanOp>(values, result.values, tv, dim);
  result.indices = ops::newOutputTV({tv}, DataType::Int);
  IrBuilder::create<ScanOp>(indices, result.indices, tv, dim);
  return result;
}

TensorView* scan(ScanOpType type, TensorView* tv, int64_t dim, DataType dtype) {
  const std::string op = toString(type);
  dim = checkedScanDim(op, tv, dim);
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

ScanWithIndices cummax(TensorView* tv, int64_t dim) {
  return extremeScan(ScanOpType::Max, ScanOpType::MaxIndex, tv, dim);
}

ScanWithIndices cummin(TensorView* tv, int64_t dim) {
  return extremeScan(ScanOpType::Min, ScanOpType::MinIndex, tv, dim);
}

} // namespace fuser
