// ExpressionEvaluator: host evaluation of scalar Vals (constants, bindings by
// Val and by name, BinaryOp/UnaryOp/TernaryOp chains), its C semantics for
// division and remainder, its errors, and its cache. No GPU needed.

#include <device_lower/kernel_ir.h>
#include <expr/evaluator.h>
#include <fusion.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <ir/all_nodes.h>
#include <tests/cpp/utils.h>

#include <cstdint>

namespace fuser {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class ExprEvaluatorTest : public FuserIrTest {
 protected:
  // A BinaryOp built directly, so that IrBuilder's folding cannot hide what
  // the evaluator computes.
  static Val* binary(BinaryOpType op, Val* a, Val* b, DataType dtype) {
    Val* out = IrBuilder::create<Val>(dtype);
    IrBuilder::create<BinaryOp>(op, out, a, b);
    return out;
  }
  static Val* index(BinaryOpType op, Val* a, Val* b) {
    return binary(op, a, b, DataType::Index);
  }
  static Val* boolean(BinaryOpType op, Val* a, Val* b) {
    return binary(op, a, b, DataType::Bool);
  }
  static Val* constant(int64_t value, DataType dtype = DataType::Index) {
    return IrBuilder::create<Val>(ScalarValue(value), dtype);
  }

  Fusion fusion_;
  FusionGuard fg_{&fusion_};
};

TEST_F(ExprEvaluatorTest, Constants) {
  ExpressionEvaluator ee;
  auto seven = ee.evaluate(constant(7));
  ASSERT_TRUE(seven.has_value());
  EXPECT_TRUE(seven->isInt());
  EXPECT_EQ(*seven, 7);

  auto half = ee.evaluate(IrBuilder::create<Val>(0.5, DataType::Double));
  ASSERT_TRUE(half.has_value());
  EXPECT_TRUE(half->isDouble());
  EXPECT_EQ(*half, 0.5);

  auto yes = ee.evaluate(IrBuilder::create<Val>(true));
  ASSERT_TRUE(yes.has_value());
  EXPECT_TRUE(yes->isBool());
  EXPECT_EQ(*yes, true);

  // Expressions over constants only need no binding.
  EXPECT_EQ(
      ee.evaluateOrThrow(index(
          BinaryOpType::Add, constant(2),
          index(BinaryOpType::Mul, constant(3), constant(4)))),
      14);
  EXPECT_FALSE(ee.evaluate(nullptr).has_value());
}

TEST_F(ExprEvaluatorTest, BoundSymbolicScalars) {
  Val* i = IrBuilder::create<Val>(DataType::Index);
  Val* j = IrBuilder::create<Val>(DataType::Index);
  Val* expr =
      index(BinaryOpType::Add, index(BinaryOpType::Mul, i, constant(10)), j);

  ExpressionEvaluator ee;
  ee.bind(i, 3);
  ee.bind(j, 4);
  EXPECT_EQ(ee.evaluateOrThrow(i), 3);
  EXPECT_EQ(ee.evaluateOrThrow(expr), 34);
  // A Val used twice is read once per use.
  EXPECT_EQ(ee.evaluateOrThrow(index(BinaryOpType::Mul, i, i)), 9);

  // Floating-point math keeps its fraction.
  Val* x = IrBuilder::create<Val>(DataType::Double);
  ee.bind(x, 1.5);
  EXPECT_EQ(
      ee.evaluateOrThrow(binary(
          BinaryOpType::Mul, x, IrBuilder::create<Val>(3.0), DataType::Double)),
      4.5);
}

TEST_F(ExprEvaluatorTest, BindByName) {
  Val* i = IrBuilder::create<Val>(DataType::Index);
  Val* j = IrBuilder::create<Val>(DataType::Index);
  ASSERT_EQ(i->toString(), "i0");
  ASSERT_EQ(j->toString(), "i1");
  Val* sum = index(BinaryOpType::Add, i, j);

  ExpressionEvaluator ee;
  ee.bind("i0", 5);
  ee.bind(j, 6);
  EXPECT_EQ(ee.evaluateOrThrow(i), 5);
  EXPECT_EQ(ee.evaluateOrThrow(sum), 11);

  // Kernel scalars such as tensor sizes are known to the runtime by name.
  auto* size = IrBuilder::create<kir::NamedScalar>(
      "T0.logical_size[1]", DataType::Index);
  Val* blocks = index(BinaryOpType::CeilDiv, size, constant(128));
  EXPECT_FALSE(ee.evaluate(blocks).has_value());
  ee.bind("T0.logical_size[1]", 1000);
  EXPECT_EQ(ee.evaluateOrThrow(blocks), 8);
}

TEST_F(ExprEvaluatorTest, UnboundInputs) {
  Val* i = IrBuilder::create<Val>(DataType::Index);
  Val* j = IrBuilder::create<Val>(DataType::Index);
  Val* expr =
      index(BinaryOpType::Add, index(BinaryOpType::Mul, i, constant(2)), j);

  ExpressionEvaluator ee;
  EXPECT_FALSE(ee.evaluate(i).has_value());
  EXPECT_FALSE(ee.evaluate(expr).has_value());
  EXPECT_THAT(
      [&]() { ee.evaluateOrThrow(expr); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Cannot evaluate ( ( i0 * 2 ) + i1 )"),
          HasSubstr("i0 is not bound"),
          HasSubstr("ExpressionEvaluator::bind"))));

  // With i bound, the error names the input still missing.
  ee.bind(i, 1);
  EXPECT_FALSE(ee.evaluate(expr).has_value());
  EXPECT_THAT(
      [&]() { ee.evaluateOrThrow(expr); },
      ThrowsMessage<UserError>(HasSubstr("i1 is not bound")));
  ee.bind(j, 1);
  EXPECT_EQ(ee.evaluateOrThrow(expr), 3);
}

TEST_F(ExprEvaluatorTest, DivisionRemainderAndCeilDiv) {
  Val* i = IrBuilder::create<Val>(DataType::Index);
  Val* div = index(BinaryOpType::Div, i, constant(4));
  Val* mod = index(BinaryOpType::Mod, i, constant(4));
  Val* ceil_div = index(BinaryOpType::CeilDiv, i, constant(4));

  ExpressionEvaluator ee;
  const int64_t expected[][4] = {
      // i, i / 4, i % 4, ceilDiv(i, 4)
      {0, 0, 0, 0}, {1, 0, 1, 1}, {4, 1, 0, 1}, {10, 2, 2, 3}, {12, 3, 0, 3},
  };
  for (const auto& row : expected) {
    ee.bind(i, row[0]);
    EXPECT_EQ(ee.evaluateOrThrow(div), row[1]) << "i = " << row[0];
    EXPECT_EQ(ee.evaluateOrThrow(mod), row[2]) << "i = " << row[0];
    EXPECT_EQ(ee.evaluateOrThrow(ceil_div), row[3]) << "i = " << row[0];
  }

  // C semantics, as in the kernel: division truncates toward zero and the
  // remainder takes the sign of the dividend.
  Val* n = IrBuilder::create<Val>(DataType::Int);
  ee.bind(n, -7);
  EXPECT_EQ(
      ee.evaluateOrThrow(binary(
          BinaryOpType::Div, n, constant(2, DataType::Int), DataType::Int)),
      -3);
  EXPECT_EQ(
      ee.evaluateOrThrow(binary(
          BinaryOpType::Mod, n, constant(3, DataType::Int), DataType::Int)),
      -1);

  // Division by zero is the user's error, not undefined behavior.
  ee.bind(i, 0);
  Val* by_i = index(BinaryOpType::Div, constant(8), i);
  EXPECT_THAT(
      [&]() { ee.evaluate(by_i); },
      ThrowsMessage<UserError>(HasSubstr("Division by zero")));
  EXPECT_THAT(
      [&]() { ee.evaluate(index(BinaryOpType::Mod, constant(8), i)); },
      ThrowsMessage<UserError>(HasSubstr("Modulo by zero")));
}

TEST_F(ExprEvaluatorTest, ComparisonsLogicAndSelection) {
  Val* i = IrBuilder::create<Val>(DataType::Index);
  Val* five = constant(5);
  ExpressionEvaluator ee;
  ee.bind(i, 3);

  auto check = [&](BinaryOpType op, bool expected) {
    auto result = ee.evaluate(boolean(op, i, five));
    ASSERT_TRUE(result.has_value()) << op;
    EXPECT_TRUE(result->isBool()) << op;
    EXPECT_EQ(*result, expected) << op;
  };
  check(BinaryOpType::Lt, true);
  check(BinaryOpType::Le, true);
  check(BinaryOpType::Gt, false);
  check(BinaryOpType::Ge, false);
  check(BinaryOpType::Eq, false);
  check(BinaryOpType::Ne, true);

  Val* in_range = boolean(
      BinaryOpType::LogicalAnd, boolean(BinaryOpType::Ge, i, constant(0)),
      boolean(BinaryOpType::Lt, i, five));
  EXPECT_EQ(ee.evaluateOrThrow(in_range), true);
  Val* outside = boolean(
      BinaryOpType::LogicalOr, boolean(BinaryOpType::Lt, i, constant(0)),
      boolean(BinaryOpType::Ge, i, five));
  EXPECT_EQ(ee.evaluateOrThrow(outside), false);

  EXPECT_EQ(ee.evaluateOrThrow(index(BinaryOpType::Max, i, five)), 5);
  EXPECT_EQ(ee.evaluateOrThrow(index(BinaryOpType::Min, i, five)), 3);

  Val* negated = IrBuilder::create<Val>(DataType::Index);
  IrBuilder::create<UnaryOp>(UnaryOpType::Neg, negated, i);
  EXPECT_EQ(ee.evaluateOrThrow(negated), -3);

  // where() evaluates only the branch it selects: the other may be unbound.
  Val* unbound = IrBuilder::create<Val>(DataType::Index);
  Val* selected = IrBuilder::create<Val>(DataType::Index);
  IrBuilder::create<TernaryOp>(
      TernaryOpType::Where, selected, boolean(BinaryOpType::Lt, i, five),
      constant(42), unbound);
  EXPECT_EQ(ee.evaluateOrThrow(selected), 42);
}

TEST_F(ExprEvaluatorTest, RebindingInvalidatesCachedResults) {
  Val* i = IrBuilder::create<Val>(DataType::Index);
  Val* twice = index(BinaryOpType::Mul, i, constant(2));
  Val* expr = index(BinaryOpType::Add, twice, constant(1));

  ExpressionEvaluator ee;
  ee.bind(i, 3);
  EXPECT_EQ(ee.evaluateOrThrow(expr), 7);
  ee.bind(i, 10);
  EXPECT_EQ(ee.evaluateOrThrow(twice), 20);
  EXPECT_EQ(ee.evaluateOrThrow(expr), 21);

  // Rebinding by name invalidates as well.
  ASSERT_EQ(i->toString(), "i0");
  ExpressionEvaluator by_name;
  by_name.bind("i0", 1);
  EXPECT_EQ(by_name.evaluateOrThrow(expr), 3);
  by_name.bind("i0", 5);
  EXPECT_EQ(by_name.evaluateOrThrow(expr), 11);

  // invalidateCache() forgets results but keeps bindings.
  by_name.invalidateCache();
  EXPECT_EQ(by_name.evaluateOrThrow(expr), 11);
}

} // namespace fuser
