#include <ir/builder.h>

#include <ir/all_nodes.h>

namespace fuser {

namespace {

DataType promoteScalarType(Val* a, Val* b) {
  if (isFloatingPointType(a->dtype()) || isFloatingPointType(b->dtype())) {
    return DataType::Double;
  }
  if (a->dtype() == DataType::Index || b->dtype() == DataType::Index) {
    return DataType::Index;
  }
  return a->dtype() == DataType::Bool ? b->dtype() : a->dtype();
}

int64_t floorDiv(int64_t a, int64_t b) {
  // C++ truncates; indices here are non-negative, truncation suffices.
  return a / b;
}

} // namespace

Val* IrBuilder::indexConst(int64_t value) {
  return create<Val>(ScalarValue(value), DataType::Index);
}

Val* IrBuilder::binaryExpr(BinaryOpType op, Val* a, Val* b) {
  FUSER_INTERNAL_ASSERT(a != nullptr && b != nullptr, "null scalar operand");
  DataType dtype = promoteScalarType(a, b);
  if (isComparisonOp(op) || isLogicalOp(op)) {
    dtype = DataType::Bool;
  }
  // Fold integer constants.
  if (a->isConstInt() && b->isConstInt()) {
    int64_t x = a->constIntValue();
    int64_t y = b->constIntValue();
    switch (op) {
      case BinaryOpType::Add:
        return create<Val>(ScalarValue(x + y), dtype);
      case BinaryOpType::Sub:
        return create<Val>(ScalarValue(x - y), dtype);
      case BinaryOpType::Mul:
        return create<Val>(ScalarValue(x * y), dtype);
      case BinaryOpType::Div:
        if (y != 0) {
          return create<Val>(ScalarValue(floorDiv(x, y)), dtype);
        }
        break;
      case BinaryOpType::CeilDiv:
        if (y != 0) {
          return create<Val>(ScalarValue((x + y - 1) / y), dtype);
        }
        break;
      case BinaryOpType::Mod:
        if (y != 0) {
          return create<Val>(ScalarValue(x % y), dtype);
        }
        break;
      case BinaryOpType::Max:
        return create<Val>(ScalarValue(std::max(x, y)), dtype);
      case BinaryOpType::Min:
        return create<Val>(ScalarValue(std::min(x, y)), dtype);
      default:
        break;
    }
  }
  // Identities that keep index math readable.
  switch (op) {
    case BinaryOpType::Add:
      if (a->isZeroInt()) {
        return b;
      }
      if (b->isZeroInt()) {
        return a;
      }
      break;
    case BinaryOpType::Sub:
      if (b->isZeroInt()) {
        return a;
      }
      break;
    case BinaryOpType::Mul:
      if (a->isOneInt()) {
        return b;
      }
      if (b->isOneInt()) {
        return a;
      }
      if (a->isZeroInt() || b->isZeroInt()) {
        return create<Val>(ScalarValue(int64_t(0)), dtype);
      }
      break;
    case BinaryOpType::Div:
    case BinaryOpType::CeilDiv:
      if (b->isOneInt()) {
        return a;
      }
      break;
    case BinaryOpType::Mod:
      if (b->isOneInt()) {
        return create<Val>(ScalarValue(int64_t(0)), dtype);
      }
      break;
    default:
      break;
  }
  Val* out = create<Val>(dtype);
  create<BinaryOp>(op, out, a, b);
  return out;
}

Val* IrBuilder::addExpr(Val* a, Val* b) {
  return binaryExpr(BinaryOpType::Add, a, b);
}
Val* IrBuilder::subExpr(Val* a, Val* b) {
  return binaryExpr(BinaryOpType::Sub, a, b);
}
Val* IrBuilder::mulExpr(Val* a, Val* b) {
  return binaryExpr(BinaryOpType::Mul, a, b);
}
Val* IrBuilder::divExpr(Val* a, Val* b) {
  return binaryExpr(BinaryOpType::Div, a, b);
}
Val* IrBuilder::ceilDivExpr(Val* a, Val* b) {
  return binaryExpr(BinaryOpType::CeilDiv, a, b);
}
Val* IrBuilder::modExpr(Val* a, Val* b) {
  return binaryExpr(BinaryOpType::Mod, a, b);
}

} // namespace fuser
