// simplifyExpr and its proof helpers (doc/indexing.md §"Simplification").
// Every rewrite is checked three ways: the structure of the result, its
// printed form, and equality of the original and simplified values under
// ExpressionEvaluator over a grid of inputs that respects the ranges given to
// the simplifier. Cases whose preconditions fail must come back untouched.
// No GPU needed.

#include <expr/evaluator.h>
#include <expr/simplifier.h>
#include <fusion.h>
#include <gtest/gtest.h>
#include <ir/all_nodes.h>
#include <tests/cpp/utils.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <vector>

namespace fuser {

namespace {

// One input of an equivalence grid: var takes start, start + 1, ... up to
// `stop` (exclusive) or, when stop_var is set, up to the current value of
// that earlier axis (for b in [0, f)).
struct Axis {
  Val* var;
  int64_t start;
  int64_t stop;
  Val* stop_var = nullptr;
};

} // namespace

class ExprSimplifierTest : public FuserIrTest {
 protected:
  // Scalar ops built directly, without IrBuilder's folding, so that the
  // simplifier is what removes the redundancy.
  static Val* binary(BinaryOpType op, Val* a, Val* b) {
    DataType dtype = DataType::Index;
    if (isComparisonOp(op) || isLogicalOp(op)) {
      dtype = DataType::Bool;
    } else if (a->dtype() != DataType::Index && b->dtype() != DataType::Index) {
      dtype = a->dtype();
    }
    Val* out = IrBuilder::create<Val>(dtype);
    IrBuilder::create<BinaryOp>(op, out, a, b);
    return out;
  }
  static Val* add(Val* a, Val* b) {
    return binary(BinaryOpType::Add, a, b);
  }
  static Val* sub(Val* a, Val* b) {
    return binary(BinaryOpType::Sub, a, b);
  }
  static Val* mul(Val* a, Val* b) {
    return binary(BinaryOpType::Mul, a, b);
  }
  static Val* div(Val* a, Val* b) {
    return binary(BinaryOpType::Div, a, b);
  }
  static Val* mod(Val* a, Val* b) {
    return binary(BinaryOpType::Mod, a, b);
  }
  static Val* ceilDiv(Val* a, Val* b) {
    return binary(BinaryOpType::CeilDiv, a, b);
  }
  static Val* lt(Val* a, Val* b) {
    return binary(BinaryOpType::Lt, a, b);
  }
  static Val* symbol(DataType dtype = DataType::Index) {
    return IrBuilder::create<Val>(dtype);
  }
  static Val* c(int64_t value, DataType dtype = DataType::Index) {
    return IrBuilder::create<Val>(ScalarValue(value), dtype);
  }
  static Val* boolConst(bool value) {
    return IrBuilder::create<Val>(ScalarValue(value), DataType::Bool);
  }
  // [0, stop)
  ValueRange upTo(Val* stop) {
    return ValueRange{c(0), stop};
  }

  // Simplifies and checks the result is a fixed point: simplifying it again
  // changes nothing and creates no node.
  Val* simplify(Val* value, const ValueRanges& ranges = {}) {
    Val* result = simplifyExpr(value, ranges);
    const size_t num_vals = fusion_.vals().size();
    EXPECT_EQ(simplifyExpr(result, ranges), result)
        << result->toInlineString() << " is not a fixed point";
    EXPECT_EQ(fusion_.vals().size(), num_vals);
    return result;
  }

  // Expects `value` to come back as itself, with no node created.
  void expectUnchanged(Val* value, const ValueRanges& ranges = {}) {
    const size_t num_vals = fusion_.vals().size();
    EXPECT_EQ(simplifyExpr(value, ranges), value)
        << value->toInlineString() << " became "
        << simplifyExpr(value, ranges)->toInlineString();
    EXPECT_EQ(fusion_.vals().size(), num_vals);
  }

  // Evaluates both at every grid point and expects equal values.
  static void expectSameValues(
      Val* original, Val* simplified, const std::vector<Axis>& grid) {
    ExpressionEvaluator ee;
    std::unordered_map<const Val*, int64_t> point;
    int64_t points = 0;
    bool failed = false;
    std::function<void(size_t)> visit = [&](size_t d) {
      if (failed) {
        return;
      }
      if (d == grid.size()) {
        ++points;
        auto expected = ee.evaluate(original);
        auto actual = ee.evaluate(simplified);
        if (!expected.has_value() || !actual.has_value() ||
            *expected != *actual) {
          std::stringstream where;
          for (const Axis& axis : grid) {
            where << axis.var->toString() << "=" << point[axis.var] << " ";
          }
          ADD_FAILURE() << original->toInlineString() << " vs "
                        << simplified->toInlineString() << " at " << where.str()
                        << ": " << (expected ? *expected : ScalarValue())
                        << " vs " << (actual ? *actual : ScalarValue());
          failed = true;
        }
        return;
      }
      const Axis& axis = grid[d];
      const int64_t stop =
          axis.stop_var != nullptr ? point.at(axis.stop_var) : axis.stop;
      for (int64_t v = axis.start; v < stop; ++v) {
        point[axis.var] = v;
        ee.bind(axis.var, v);
        visit(d + 1);
      }
    };
    visit(0);
    EXPECT_GT(points, 0) << "empty grid";
  }

  Fusion fusion_;
  FusionGuard fg_{&fusion_};
};

// ---------------------------------------------------------------- folding

TEST_F(ExprSimplifierTest, FoldsIntegerConstants) {
  struct Case {
    BinaryOpType op;
    int64_t a;
    int64_t b;
    int64_t expected;
  };
  const Case cases[] = {
      {BinaryOpType::Add, 7, 3, 10},
      {BinaryOpType::Sub, 7, 3, 4},
      {BinaryOpType::Mul, 7, 3, 21},
      {BinaryOpType::Div, 7, 3, 2},
      {BinaryOpType::CeilDiv, 7, 3, 3},
      {BinaryOpType::Mod, 7, 3, 1},
      {BinaryOpType::Max, 7, 3, 7},
      {BinaryOpType::Min, 7, 3, 3},
      // C semantics, as in the kernel: truncation, remainder with the sign
      // of the dividend.
      {BinaryOpType::Div, -7, 2, -3},
      {BinaryOpType::Mod, -7, 2, -1},
  };
  for (const Case& test : cases) {
    Val* expr = binary(test.op, c(test.a), c(test.b));
    Val* result = simplify(expr);
    ASSERT_TRUE(result->isConst()) << expr->toInlineString();
    EXPECT_EQ(result->value(), test.expected) << expr->toInlineString();
    EXPECT_EQ(result->dtype(), DataType::Index);
    EXPECT_EQ(result->toInlineString(), std::to_string(test.expected));
    expectSameValues(expr, result, {});
  }

  // Nested constants fold bottom-up.
  Val* nested = mul(add(c(2), c(3)), sub(c(10), c(6)));
  EXPECT_EQ(simplify(nested)->toInlineString(), "20");

  // Comparisons of constants fold to booleans.
  Val* less = simplify(lt(c(3), c(5)));
  EXPECT_EQ(less->dtype(), DataType::Bool);
  EXPECT_EQ(less->toInlineString(), "true");
  EXPECT_EQ(
      simplify(binary(BinaryOpType::Ge, c(3), c(5)))->toInlineString(),
      "false");
  EXPECT_EQ(
      simplify(binary(BinaryOpType::Eq, c(4), c(4, DataType::Int)))
          ->toInlineString(),
      "true");
}

TEST_F(ExprSimplifierTest, LeavesUndefinedAndOverflowingConstantMath) {
  // A literal division by zero stays visible; so does math that overflows.
  expectUnchanged(div(c(7), c(0)));
  expectUnchanged(mod(c(7), c(0)));
  expectUnchanged(add(c(std::numeric_limits<int64_t>::max()), c(1)));
  expectUnchanged(mul(c(std::numeric_limits<int64_t>::max()), c(2)));
}

TEST_F(ExprSimplifierTest, FloatingPointAndBooleanMath) {
  Val* x = symbol(DataType::Double);
  Val* b = symbol(DataType::Bool);
  Val* half = IrBuilder::create<Val>(0.5);
  Val* quarter = IrBuilder::create<Val>(0.25);

  // Floating-point arithmetic is not folded or rewritten.
  expectUnchanged(binary(BinaryOpType::Add, half, quarter));
  expectUnchanged(binary(BinaryOpType::Mul, x, IrBuilder::create<Val>(1.0)));
  expectUnchanged(binary(BinaryOpType::Add, x, IrBuilder::create<Val>(0.0)));

  // Comparisons and logic of constants fold, whatever the type.
  EXPECT_EQ(simplify(lt(half, quarter))->toInlineString(), "false");
  EXPECT_EQ(
      simplify(
          binary(BinaryOpType::LogicalAnd, boolConst(true), boolConst(false)))
          ->toInlineString(),
      "false");

  // The neutral element of && and || drops out.
  EXPECT_EQ(simplify(binary(BinaryOpType::LogicalAnd, boolConst(true), b)), b);
  EXPECT_EQ(simplify(binary(BinaryOpType::LogicalAnd, b, boolConst(true))), b);
  EXPECT_EQ(simplify(binary(BinaryOpType::LogicalOr, boolConst(false), b)), b);
  EXPECT_EQ(simplify(binary(BinaryOpType::LogicalOr, b, boolConst(false))), b);
  // The absorbing element wins.
  EXPECT_EQ(
      simplify(binary(BinaryOpType::LogicalAnd, b, boolConst(false)))
          ->toInlineString(),
      "false");
  EXPECT_EQ(
      simplify(binary(BinaryOpType::LogicalOr, boolConst(true), b))
          ->toInlineString(),
      "true");
  expectUnchanged(binary(BinaryOpType::LogicalAnd, b, symbol(DataType::Bool)));
}

// ---------------------------------------------------------------- identities

TEST_F(ExprSimplifierTest, Identities) {
  Val* x = symbol();
  Val* y = symbol();
  ASSERT_EQ(x->toString(), "i0");
  ASSERT_EQ(y->toString(), "i1");
  const std::vector<Axis> grid = {{x, 1, 40}};

  for (Val* expr :
       {mul(x, c(1)), mul(c(1), x), add(x, c(0)), add(c(0), x), sub(x, c(0)),
        div(x, c(1)), ceilDiv(x, c(1))}) {
    EXPECT_EQ(simplify(expr), x) << expr->toInlineString();
    expectSameValues(expr, x, grid);
  }
  for (Val* expr :
       {mod(x, c(1)), mul(x, c(0)), mul(c(0), x), div(c(0), x), mod(c(0), x),
        sub(x, x)}) {
    Val* result = simplify(expr);
    EXPECT_TRUE(result->isConst()) << expr->toInlineString();
    EXPECT_EQ(result->toInlineString(), "0") << expr->toInlineString();
    expectSameValues(expr, result, grid);
  }

  // (p + q) - q -> p and (p + q) - p -> q.
  Val* sum = add(x, mul(y, c(3)));
  EXPECT_EQ(simplify(sub(sum, x))->toInlineString(), "( i1 * 3 )");
  EXPECT_EQ(simplify(sub(sum, mul(y, c(3)))), x);
  expectSameValues(sub(sum, x), simplify(sub(sum, x)), {{x, 0, 5}, {y, 0, 5}});
}

TEST_F(ExprSimplifierTest, IdentitiesHoldForNegativeValues) {
  // Int scalars may be negative; these rules need no sign.
  Val* x = symbol(DataType::Int);
  const std::vector<Axis> grid = {{x, -20, 20}};
  Val* split = add(mul(div(x, c(4)), c(4)), mod(x, c(4)));
  EXPECT_EQ(simplify(split), x);
  expectSameValues(split, x, grid);

  Val* scaled = div(mul(x, c(12)), c(4));
  Val* result = simplify(scaled);
  EXPECT_EQ(result->toInlineString(), "( i0 * 3 )");
  expectSameValues(scaled, result, grid);

  Val* nested_div = div(div(x, c(4)), c(3));
  result = simplify(nested_div);
  EXPECT_EQ(result->toInlineString(), "( i0 / 12 )");
  expectSameValues(nested_div, result, grid);

  Val* nested_mod = mod(mod(x, c(12)), c(4));
  result = simplify(nested_mod);
  EXPECT_EQ(result->toInlineString(), "( i0 % 4 )");
  expectSameValues(nested_mod, result, grid);
}

// The linear index of a merge of three axes, taken apart and put back:
// ((g / (A * B)) * B + (g / A) % B) * A + g % A is g, whatever g's sign
// (the inner sum is (g / A) / B * B + (g / A) % B = g / A).
TEST_F(ExprSimplifierTest, ThreeAxesSplitBackwardAreTheIndex) {
  Val* g = symbol(DataType::Int);
  Val* outer = add(mul(div(g, c(12)), c(4)), mod(div(g, c(3)), c(4)));
  Val* index = add(mul(outer, c(3)), mod(g, c(3)));
  EXPECT_EQ(simplify(index), g);
  expectSameValues(index, g, {{g, -40, 40}});
  // A divisor that is not the product stays: (g / 8) * 4 + (g / 3) % 4.
  Val* other = add(mul(div(g, c(8)), c(4)), mod(div(g, c(3)), c(4)));
  expectSameValues(other, simplify(other), {{g, -40, 40}});
  EXPECT_NE(simplify(other)->toInlineString(), "( i0 / 3 )");
}

// ------------------------------------------------ split backward, then / %

TEST_F(ExprSimplifierTest, DivModOfSplitBackwardSymbolicFactor) {
  Val* a = symbol();
  Val* f = symbol();
  Val* b = symbol();
  ASSERT_EQ(b->toString(), "i2");
  ValueRanges ranges{{b, upTo(f)}};
  const std::vector<Axis> grid = {
      {a, 0, 6}, {f, 1, 7}, {b, 0, 0, /*stop_var=*/f}};

  for (Val* n :
       {add(mul(a, f), b), add(b, mul(a, f)), add(mul(f, a), b),
        add(b, mul(f, a))}) {
    Val* quotient = div(n, f);
    EXPECT_EQ(simplify(quotient, ranges), a) << quotient->toInlineString();
    expectSameValues(quotient, a, grid);

    Val* remainder = mod(n, f);
    EXPECT_EQ(simplify(remainder, ranges), b) << remainder->toInlineString();
    expectSameValues(remainder, b, grid);
  }

  // (a * f) / f -> a and (a * f) % f -> 0 need no range at all.
  EXPECT_EQ(simplify(div(mul(a, f), f)), a);
  Val* zero = simplify(mod(mul(f, a), f));
  EXPECT_EQ(zero->toInlineString(), "0");
  expectSameValues(mod(mul(f, a), f), zero, {{a, 0, 6}, {f, 1, 7}});

  // b / f -> 0 and b % f -> b for b in [0, f).
  EXPECT_EQ(simplify(div(b, f), ranges)->toInlineString(), "0");
  EXPECT_EQ(simplify(mod(b, f), ranges), b);
  expectSameValues(div(b, f), simplify(div(b, f), ranges), grid);
}

TEST_F(ExprSimplifierTest, DivModOfSplitBackwardConstantFactor) {
  Val* a = symbol();
  Val* b = symbol();
  ValueRanges ranges{{b, upTo(c(4))}};
  const std::vector<Axis> grid = {{a, 0, 10}, {b, 0, 4}};

  Val* n = add(mul(a, c(4)), b);
  ASSERT_EQ(n->toInlineString(), "( ( i0 * 4 ) + i1 )");
  Val* quotient = div(n, c(4));
  EXPECT_EQ(simplify(quotient, ranges), a);
  expectSameValues(quotient, a, grid);
  Val* remainder = mod(n, c(4));
  EXPECT_EQ(simplify(remainder, ranges), b);
  expectSameValues(remainder, b, grid);

  // A multiple of the factor in the coefficient: (a * 8 + b) / 4.
  Val* scaled = div(add(mul(a, c(8)), b), c(4));
  Val* result = simplify(scaled, ranges);
  EXPECT_EQ(result->toInlineString(), "( i0 * 2 )");
  expectSameValues(scaled, result, grid);

  // Several remainder terms with constant bounds: 2 * b + d <= 2 * 3 + 1 < 8.
  Val* d = symbol();
  ValueRanges two_terms{{b, upTo(c(4))}, {d, upTo(c(2))}};
  Val* three_terms = add(add(mul(a, c(8)), mul(b, c(2))), d);
  result = simplify(div(three_terms, c(8)), two_terms);
  EXPECT_EQ(result, a);
  expectSameValues(
      div(three_terms, c(8)), result, {{a, 0, 5}, {b, 0, 4}, {d, 0, 2}});
  result = simplify(mod(three_terms, c(8)), two_terms);
  EXPECT_EQ(result->toInlineString(), "( ( i1 * 2 ) + " + d->toString() + " )");
  expectSameValues(
      mod(three_terms, c(8)), result, {{a, 0, 5}, {b, 0, 4}, {d, 0, 2}});
  // With b in [0, 5) the remainder can reach 9 and nothing is proven.
  ValueRanges too_wide{{b, upTo(c(5))}, {d, upTo(c(2))}};
  expectUnchanged(div(three_terms, c(8)), too_wide);

  // A range with a smaller constant stop is enough: b in [0, 3) < 4.
  ValueRanges narrower{{b, upTo(c(3))}};
  EXPECT_EQ(simplify(mod(add(b, mul(c(4), a)), c(4)), narrower), b);

  // A constant remainder: (a * 4 + 3) / 4 -> a, % 4 -> 3.
  EXPECT_EQ(simplify(div(add(mul(a, c(4)), c(3)), c(4))), a);
  EXPECT_EQ(
      simplify(mod(add(mul(a, c(4)), c(3)), c(4)))->toInlineString(), "3");
}

TEST_F(ExprSimplifierTest, DivModWithoutProofStayUnchanged) {
  Val* a = symbol();
  Val* b = symbol();
  Val* f = symbol();

  // b of unknown range: (a * 4 + b) % 4 is not b (b = 5 gives 1).
  Val* remainder = mod(add(mul(a, c(4)), b), c(4));
  expectUnchanged(remainder);
  expectUnchanged(div(add(mul(a, c(4)), b), c(4)));
  {
    ExpressionEvaluator ee;
    ee.bind(a, 2);
    ee.bind(b, 5);
    EXPECT_EQ(ee.evaluateOrThrow(remainder), 1);
  }

  // A range that is too wide: b in [0, 5) against 4.
  ValueRanges too_wide{{b, upTo(c(5))}};
  expectUnchanged(remainder, too_wide);
  // A range whose start may be negative: b in [-1, 4).
  ValueRanges negative_start{{b, ValueRange{c(-1), c(4)}}};
  expectUnchanged(remainder, negative_start);
  expectUnchanged(div(b, c(4)), negative_start);
  // A range against a different extent: b in [0, f) says nothing about 4.
  ValueRanges other_extent{{b, upTo(f)}};
  expectUnchanged(remainder, other_extent);

  // The quotient may be negative: Int scalars are not assumed >= 0, and
  // (-1 * 4 + 1) / 4 is 0 in C, not -1.
  Val* n = symbol(DataType::Int);
  ValueRanges b_in_range{{b, upTo(c(4))}};
  Val* signed_quotient = div(add(mul(n, c(4)), b), c(4));
  expectUnchanged(signed_quotient, b_in_range);
  {
    ExpressionEvaluator ee;
    ee.bind(n, -1);
    ee.bind(b, 1);
    EXPECT_EQ(ee.evaluateOrThrow(signed_quotient), 0);
  }

  // Same with the sign hidden in another factor of the multiple:
  // (a * 4 * n + b) / 4 is 0, not a * n = -1, for a = 1, n = -1, b = 1.
  Val* hidden_sign = div(add(mul(mul(a, c(4)), n), b), c(4));
  expectUnchanged(hidden_sign, b_in_range);
  {
    ExpressionEvaluator ee;
    ee.bind(a, 1);
    ee.bind(n, -1);
    ee.bind(b, 1);
    EXPECT_EQ(ee.evaluateOrThrow(hidden_sign), 0);
  }

  // Not the same factor.
  expectUnchanged(div(mul(a, f), b));
  expectUnchanged(mod(mul(a, c(6)), c(4)));
}

// ---------------------------------------------------------------- split

TEST_F(ExprSimplifierTest, SplitForwardThenBackward) {
  Val* x = symbol();
  Val* y = symbol();
  Val* f = symbol();
  const std::vector<Axis> grid = {{x, 0, 30}, {f, 1, 6}};

  // Every order of the addends and of the product.
  for (Val* expr :
       {add(mul(div(x, f), f), mod(x, f)), add(mod(x, f), mul(div(x, f), f)),
        add(mul(f, div(x, f)), mod(x, f)), add(mod(x, f), mul(f, div(x, f)))}) {
    EXPECT_EQ(simplify(expr), x) << expr->toInlineString();
    expectSameValues(expr, x, grid);
  }

  // Constant factors, with distinct (and differently typed) constant Vals.
  Val* constant_split =
      add(mul(div(x, c(4)), c(4, DataType::Int)), mod(x, c(4)));
  EXPECT_EQ(simplify(constant_split), x);

  // Anywhere in a longer sum: ((x / 4) * 4 + y) + x % 4 -> x + y.
  Val* in_sum = add(add(mul(div(x, c(4)), c(4)), y), mod(x, c(4)));
  Val* result = simplify(in_sum);
  EXPECT_EQ(result->toInlineString(), "( i0 + i1 )");
  auto* bop = dynamic_cast<BinaryOp*>(result->definition());
  ASSERT_NE(bop, nullptr);
  EXPECT_EQ(bop->opType(), BinaryOpType::Add);
  EXPECT_EQ(bop->lhs(), x);
  EXPECT_EQ(bop->rhs(), y);
  expectSameValues(in_sum, result, {{x, 0, 20}, {y, 0, 3}});

  // The parts must match.
  expectUnchanged(add(mul(div(x, c(4)), c(4)), mod(x, c(8))));
  expectUnchanged(add(mul(div(x, c(4)), c(4)), mod(y, c(4))));
  expectUnchanged(add(mul(div(x, f), c(4)), mod(x, f)));
}

TEST_F(ExprSimplifierTest, NestedDivisionAndRemainder) {
  Val* x = symbol();
  Val* f = symbol();
  const std::vector<Axis> grid = {{x, 0, 100}, {f, 1, 5}};

  Val* nested = div(div(x, c(4)), c(8));
  Val* result = simplify(nested);
  EXPECT_EQ(result->toInlineString(), "( i0 / 32 )");
  auto* bop = dynamic_cast<BinaryOp*>(result->definition());
  ASSERT_NE(bop, nullptr);
  EXPECT_EQ(bop->opType(), BinaryOpType::Div);
  EXPECT_EQ(bop->lhs(), x);
  expectSameValues(nested, result, grid);

  // Only positive constant divisors combine.
  expectUnchanged(div(div(x, c(4)), f));
  expectUnchanged(div(div(x, c(-4)), c(2)));

  // (x % (k * f)) % f -> x % f.
  Val* mod_mod = mod(mod(x, mul(c(3), f)), f);
  result = simplify(mod_mod);
  EXPECT_EQ(result->toInlineString(), "( i0 % i1 )");
  expectSameValues(mod_mod, result, grid);
  Val* same = mod(x, f);
  EXPECT_EQ(simplify(mod(same, f)), same);
  result = simplify(mod(mod(x, c(12)), c(4)));
  EXPECT_EQ(result->toInlineString(), "( i0 % 4 )");
  expectUnchanged(mod(mod(x, c(12)), c(5)));
}

TEST_F(ExprSimplifierTest, ConstantReassociation) {
  Val* x = symbol();
  Val* y = symbol();
  const std::vector<Axis> grid = {{x, 0, 10}, {y, 0, 10}};

  Val* product = mul(mul(x, c(3)), c(4));
  Val* result = simplify(product);
  EXPECT_EQ(result->toInlineString(), "( i0 * 12 )");
  expectSameValues(product, result, grid);
  EXPECT_EQ(simplify(mul(c(3), mul(x, c(4))))->toInlineString(), "( i0 * 12 )");
  Val* mixed = mul(mul(mul(x, c(3)), y), c(4));
  result = simplify(mixed);
  EXPECT_EQ(result->toInlineString(), "( ( i0 * i1 ) * 12 )");
  expectSameValues(mixed, result, grid);

  Val* sum = add(add(x, c(3)), c(4));
  result = simplify(sum);
  EXPECT_EQ(result->toInlineString(), "( i0 + 7 )");
  expectSameValues(sum, result, grid);
  EXPECT_EQ(simplify(add(add(x, c(3)), c(-3))), x);

  // One constant is already canonical.
  expectUnchanged(mul(x, c(3)));
  expectUnchanged(add(c(3), x));
}

// ------------------------------------------------- composed index formulas

TEST_F(ExprSimplifierTest, ContiguousSplitIndexesAsTheOriginal) {
  // doc/design.md §5: [i / 2, 2] contiguous indexes as i, not (i / 2) * 2 + i
  // % 2.
  Val* i = symbol();
  Val* linear =
      add(mul(mul(div(i, c(2)), c(2)), c(1)), mul(mod(i, c(2)), c(1)));
  EXPECT_EQ(simplify(linear), i);
  expectSameValues(linear, i, {{i, 0, 50}});
}

TEST_F(ExprSimplifierTest, SplitOfSplitForward) {
  // i split by 4, its outer split by 2: loops i0 in [0, e), i1 in [0, 2),
  // i2 in [0, 4); backward i = (i0 * 2 + i1) * 4 + i2. Going forward again
  // gives each loop index back.
  Val* i0 = symbol();
  Val* i1 = symbol();
  Val* i2 = symbol();
  Val* e = symbol();
  ValueRanges ranges{{i0, upTo(e)}, {i1, upTo(c(2))}, {i2, upTo(c(4))}};
  const std::vector<Axis> grid = {
      {e, 1, 4}, {i0, 0, 0, /*stop_var=*/e}, {i1, 0, 2}, {i2, 0, 4}};
  Val* i = add(mul(add(mul(i0, c(2)), i1), c(4)), i2);

  Val* outer_outer = div(div(i, c(4)), c(2));
  EXPECT_EQ(simplify(outer_outer, ranges), i0);
  expectSameValues(outer_outer, i0, grid);
  Val* outer_inner = mod(div(i, c(4)), c(2));
  EXPECT_EQ(simplify(outer_inner, ranges), i1);
  expectSameValues(outer_inner, i1, grid);
  Val* inner = mod(i, c(4));
  EXPECT_EQ(simplify(inner, ranges), i2);
  expectSameValues(inner, i2, grid);
}

TEST_F(ExprSimplifierTest, MergeForwardThenBackward) {
  // o = a * ext(b) + b; backward a = o / ext(b), b = o % ext(b).
  Val* a = symbol();
  Val* b = symbol();
  Val* ea = symbol();
  Val* eb = symbol();
  ValueRanges ranges{{a, upTo(ea)}, {b, upTo(eb)}};
  const std::vector<Axis> grid = {
      {ea, 1, 4}, {eb, 1, 5}, {a, 0, 0, ea}, {b, 0, 0, eb}};
  Val* o = add(mul(a, eb), b);
  Val* a_again = div(o, eb);
  Val* b_again = mod(o, eb);
  EXPECT_EQ(simplify(a_again, ranges), a);
  EXPECT_EQ(simplify(b_again, ranges), b);
  expectSameValues(a_again, a, grid);
  expectSameValues(b_again, b, grid);

  // Predicates: the merged index stays below the merged extent.
  Val* in_bounds = lt(o, mul(ea, eb));
  Val* result = simplify(in_bounds, ranges);
  EXPECT_EQ(result->toInlineString(), "true");
  expectSameValues(in_bounds, result, grid);
  EXPECT_TRUE(provenLessThan(o, mul(eb, ea), ranges));
}

// ---------------------------------------------------------------- predicates

TEST_F(ExprSimplifierTest, Comparisons) {
  Val* i = symbol();
  Val* e = symbol();
  Val* j = symbol();
  ValueRanges ranges{{i, upTo(e)}};
  const std::vector<Axis> grid = {{e, 1, 6}, {i, 0, 0, e}, {j, 0, 6}};

  auto expectDecided = [&](Val* expr, bool expected) {
    Val* result = simplify(expr, ranges);
    EXPECT_EQ(result->toInlineString(), expected ? "true" : "false")
        << expr->toInlineString();
    expectSameValues(expr, result, grid);
  };
  expectDecided(lt(i, e), true);
  expectDecided(binary(BinaryOpType::Le, i, e), true);
  expectDecided(binary(BinaryOpType::Gt, e, i), true);
  expectDecided(binary(BinaryOpType::Ge, i, c(0)), true);
  expectDecided(binary(BinaryOpType::Ge, i, e), false);
  expectDecided(binary(BinaryOpType::Eq, i, e), false);
  expectDecided(binary(BinaryOpType::Ne, i, e), true);
  expectDecided(binary(BinaryOpType::Eq, mul(j, c(2)), mul(j, c(2))), true);
  expectDecided(lt(mod(j, c(4)), c(4)), true);
  expectDecided(lt(mod(j, e), e), true);
  // A loop index with a true condition folds away inside a conjunction.
  Val* guard = binary(BinaryOpType::LogicalAnd, lt(i, e), lt(j, e));
  Val* result = simplify(guard, ranges);
  EXPECT_EQ(result->toInlineString(), "( i2 < i1 )");
  expectSameValues(guard, result, grid);

  // Nothing is known about j against e, or about i against e - 1.
  expectUnchanged(lt(j, e), ranges);
  expectUnchanged(lt(i, sub(e, c(1))), ranges);
  expectUnchanged(lt(add(i, c(1)), e), ranges);
  // Without the range, i < e is unknown too.
  expectUnchanged(lt(i, e));
}

// The predicate of an ID under two merges, (m / W) / H < N, becomes one
// comparison with the product of the extents: no division is left.
TEST_F(ExprSimplifierTest, QuotientBelowABoundIsAProduct) {
  Val* m = symbol();
  Val* w = symbol();
  Val* h = symbol();
  Val* n = symbol();
  const std::vector<Axis> grid = {{w, 1, 4}, {h, 1, 4}, {n, 0, 4}, {m, 0, 50}};
  Val* predicate = lt(div(div(m, w), h), n);
  Val* result = simplify(predicate);
  const std::string printed = result->toInlineString();
  EXPECT_EQ(printed.find('/'), std::string::npos) << printed;
  EXPECT_NE(printed.find(" * "), std::string::npos) << printed;
  expectSameValues(predicate, result, grid);

  // A dividend that may be negative: floor and truncation differ.
  Val* signed_x = symbol(DataType::Int);
  expectUnchanged(lt(div(signed_x, w), n));
  // Without a proof that the dividend is non-negative (x - 3).
  expectUnchanged(lt(div(sub(m, c(3)), w), n));
}

TEST_F(ExprSimplifierTest, MaxMinWhereAndCast) {
  Val* i = symbol();
  Val* e = symbol();
  Val* j = symbol();
  ValueRanges ranges{{i, upTo(e)}};

  EXPECT_EQ(simplify(binary(BinaryOpType::Max, i, e), ranges), e);
  EXPECT_EQ(simplify(binary(BinaryOpType::Min, e, i), ranges), i);
  EXPECT_EQ(simplify(binary(BinaryOpType::Max, j, j)), j);
  expectUnchanged(binary(BinaryOpType::Min, i, j), ranges);

  // An operand that simplifies rebuilds the node around it.
  Val* max = binary(BinaryOpType::Max, mul(i, c(1)), j);
  Val* result = simplify(max);
  EXPECT_EQ(result->toInlineString(), "maximum(i0, i2)");
  expectSameValues(max, result, {{i, 0, 4}, {j, 0, 4}});

  Val* selected = symbol();
  IrBuilder::create<TernaryOp>(
      TernaryOpType::Where, selected, lt(c(1), c(2)), add(i, c(0)), j);
  EXPECT_EQ(simplify(selected), i);

  Val* cast = symbol();
  IrBuilder::create<UnaryOp>(
      UnaryOpType::Cast, cast, mul(c(3, DataType::Int), c(4, DataType::Int)));
  result = simplify(cast);
  EXPECT_TRUE(result->isConst());
  EXPECT_EQ(result->dtype(), DataType::Index);
  EXPECT_EQ(result->toInlineString(), "12");
}

// ------------------------------------------------------------ proof helpers

TEST_F(ExprSimplifierTest, ProvenNonNegative) {
  Val* extent = symbol();
  Val* user = symbol(DataType::Int);
  Val* i = symbol();
  const ValueRanges none;
  ValueRanges ranges{{i, upTo(extent)}};

  EXPECT_TRUE(provenNonNegative(c(0), none));
  EXPECT_FALSE(provenNonNegative(c(-1), none));
  // The documented assumption: Index scalars without definition (extents,
  // sizes, loop indices) are >= 0; Int user scalars are not.
  EXPECT_TRUE(provenNonNegative(extent, none));
  EXPECT_FALSE(provenNonNegative(user, none));
  EXPECT_TRUE(provenNonNegative(i, ranges));
  ValueRanges negative{{i, ValueRange{c(-2), extent}}};
  EXPECT_FALSE(provenNonNegative(i, negative));

  EXPECT_TRUE(provenNonNegative(add(mul(i, extent), c(3)), ranges));
  EXPECT_TRUE(provenNonNegative(div(i, c(4)), ranges));
  EXPECT_TRUE(provenNonNegative(mod(i, extent), ranges));
  EXPECT_TRUE(provenNonNegative(ceilDiv(extent, c(4)), ranges));
  EXPECT_FALSE(provenNonNegative(sub(i, c(1)), ranges));
  EXPECT_FALSE(provenNonNegative(mul(user, c(2)), none));
  EXPECT_FALSE(provenNonNegative(mod(user, c(2)), none));
  EXPECT_TRUE(provenNonNegative(sub(add(i, c(1)), c(1)), ranges));
}

TEST_F(ExprSimplifierTest, ProvenLessThan) {
  Val* i = symbol();
  Val* e = symbol();
  Val* j = symbol();
  ValueRanges ranges{{i, upTo(e)}, {j, upTo(c(8))}};

  EXPECT_TRUE(provenLessThan(c(3), c(4), ranges));
  EXPECT_FALSE(provenLessThan(c(4), c(4), ranges));
  EXPECT_TRUE(provenLessThan(i, e, ranges));
  EXPECT_FALSE(provenLessThan(e, e, ranges));
  EXPECT_FALSE(provenLessThan(i, j, ranges));
  EXPECT_TRUE(provenLessThan(j, c(8), ranges));
  EXPECT_TRUE(provenLessThan(j, c(100), ranges));
  EXPECT_FALSE(provenLessThan(j, c(7), ranges));
  EXPECT_TRUE(provenLessThan(add(j, c(2)), c(10), ranges));
  // 10 - j ranges over [3, 10].
  EXPECT_TRUE(provenNonNegative(sub(c(10), j), ranges));
  EXPECT_TRUE(provenLessThan(sub(c(10), j), c(11), ranges));
  EXPECT_FALSE(provenLessThan(sub(c(10), j), c(10), ranges));
  EXPECT_FALSE(provenLessThan(add(j, c(2)), c(9), ranges));
  // y % m < m; y % m <= y; y / d <= y.
  EXPECT_TRUE(provenLessThan(mod(e, c(16)), c(16), ranges));
  EXPECT_TRUE(provenLessThan(mod(i, c(16)), e, ranges));
  EXPECT_TRUE(provenLessThan(div(i, c(16)), e, ranges));
  EXPECT_TRUE(provenLessThan(div(j, c(2)), c(4), ranges));
  EXPECT_FALSE(provenLessThan(div(j, c(2)), c(3), ranges));
  // i in [0, e * 4) gives i / 4 < e (merge backward).
  Val* k = symbol();
  ValueRanges merged{{k, upTo(mul(e, c(4)))}};
  EXPECT_TRUE(provenLessThan(div(k, c(4)), e, merged));
  EXPECT_FALSE(provenLessThan(div(k, c(2)), e, merged));
  // y % m < m needs m >= 0: Int scalars may be negative, and 1 % -3 is 1.
  Val* m = symbol(DataType::Int);
  EXPECT_FALSE(provenLessThan(mod(j, m), m, ranges));
  EXPECT_TRUE(provenLessThan(mod(j, e), e, ranges));
  // Nothing about unbounded symbols.
  EXPECT_FALSE(provenLessThan(e, j, ranges));
  EXPECT_FALSE(provenLessThan(k, e, ranges));
}

// ---------------------------------------------------------------- driver

TEST_F(ExprSimplifierTest, ReachesAFixedPointAndReusesResults) {
  Val* x = symbol();
  // Needs several rounds: 2 * 2 folds, the product divides by 4, then the
  // + 0 and * 1 disappear.
  Val* expr = mul(add(div(mul(mul(x, c(2)), c(2)), c(4)), c(0)), c(1));
  EXPECT_EQ(simplify(expr), x);
  expectSameValues(expr, x, {{x, 0, 20}});

  // A shared subexpression is simplified once, into one new node.
  Val* shared = add(mul(mul(x, c(2)), c(3)), c(0));
  Val* twice = binary(BinaryOpType::Max, add(shared, c(2)), add(shared, c(3)));
  Val* result = simplify(twice);
  EXPECT_EQ(
      result->toInlineString(),
      "maximum(( ( i0 * 6 ) + 2 ), ( ( i0 * 6 ) + 3 ))");
  auto* bop = dynamic_cast<BinaryOp*>(result->definition());
  ASSERT_NE(bop, nullptr);
  Val* six_x = bop->lhs()->definition()->input(0);
  EXPECT_EQ(six_x->toInlineString(), "( i0 * 6 )");
  EXPECT_EQ(bop->rhs()->definition()->input(0), six_x);
  expectSameValues(twice, result, {{x, 0, 10}});

  // Values that cannot be simplified come back as they are.
  expectUnchanged(x);
  expectUnchanged(c(5));
  expectUnchanged(add(mul(x, c(4)), c(1)));
  expectUnchanged(ceilDiv(x, c(4)));
}

} // namespace fuser
