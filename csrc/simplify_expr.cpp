// Rules and their preconditions: doc/indexing.md §"Simplification".
#include <simplify_expr.h>

#include <expr_evaluator.h>
#include <fusion.h>
#include <ir/all_nodes.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace fuser {

namespace {

// Index expressions are shallow; the limit only stops proofs that chase
// cyclic ranges (i in [j, ..), j in [i, ..)).
constexpr int kMaxProofDepth = 32;
// Every rule shrinks the expression, so a node reaches its fixed point in a
// few steps; more means two rules undo each other, which is a bug.
constexpr int kMaxRewritesPerNode = 64;

bool isIntegralScalar(const Val* v) {
  return v != nullptr && v->isScalar() && isIntegralType(v->dtype());
}

std::optional<int64_t> intConstant(const Val* v) {
  if (isIntegralScalar(v) && v->isConst()) {
    return v->value().asInt();
  }
  return std::nullopt;
}

bool isIntConstant(const Val* v, int64_t c) {
  auto value = intConstant(v);
  return value.has_value() && *value == c;
}

bool isBoolConstant(const Val* v, bool c) {
  return v->isConst() && v->dtype() == DataType::Bool &&
      v->value().asBool() == c;
}

// The integer BinaryOp of type `op` that defines v, or nullptr.
BinaryOp* integralDef(const Val* v, BinaryOpType op) {
  if (!isIntegralScalar(v) || v->definition() == nullptr) {
    return nullptr;
  }
  auto* bop = dynamic_cast<BinaryOp*>(v->definition());
  if (bop == nullptr || bop->opType() != op || !isIntegralScalar(bop->lhs()) ||
      !isIntegralScalar(bop->rhs())) {
    return nullptr;
  }
  return bop;
}

// The input of the integer-to-integer cast that defines v, or nullptr. Index
// math is assumed to fit the index type, as in the kernel, so a cast keeps
// bounds and order.
Val* castInput(const Val* v) {
  auto* uop = dynamic_cast<UnaryOp*>(v->definition());
  if (uop != nullptr && uop->opType() == UnaryOpType::Cast &&
      isIntegralScalar(uop->in())) {
    return uop->in();
  }
  return nullptr;
}

bool sameValue(const Val* a, const Val* b) {
  return a == b || a->sameAs(b);
}

// Integer `a op b` as the kernel computes it: C truncating division and
// remainder, ceilDiv(a, b) = (a + b - 1) / b as in the builder, the evaluator
// and the runtime. nullopt on int64 overflow, where C leaves the result
// undefined, or for other ops, so folding never bakes undefined behavior
// into a kernel.
std::optional<int64_t> arith(BinaryOpType op, int64_t a, int64_t b) {
  int64_t r = 0;
  const bool divisible =
      b != 0 && !(a == std::numeric_limits<int64_t>::min() && b == -1);
  switch (op) {
    case BinaryOpType::Add:
      return __builtin_add_overflow(a, b, &r) ? std::nullopt
                                              : std::optional<int64_t>(r);
    case BinaryOpType::Sub:
      return __builtin_sub_overflow(a, b, &r) ? std::nullopt
                                              : std::optional<int64_t>(r);
    case BinaryOpType::Mul:
      return __builtin_mul_overflow(a, b, &r) ? std::nullopt
                                              : std::optional<int64_t>(r);
    case BinaryOpType::Div:
      return divisible ? std::optional<int64_t>(a / b) : std::nullopt;
    case BinaryOpType::Mod:
      return divisible ? std::optional<int64_t>(a % b) : std::nullopt;
    case BinaryOpType::CeilDiv:
      if (__builtin_add_overflow(a, b, &r) ||
          __builtin_sub_overflow(r, 1, &r)) {
        return std::nullopt;
      }
      return arith(BinaryOpType::Div, r, b);
    case BinaryOpType::Max:
      return std::max(a, b);
    case BinaryOpType::Min:
      return std::min(a, b);
    default:
      return std::nullopt;
  }
}

using Bound = std::optional<int64_t>;

// arith over unknown-or-known values.
Bound arith(BinaryOpType op, Bound a, Bound b) {
  return a && b ? arith(op, *a, *b) : std::nullopt;
}

bool atLeast(Bound b, int64_t value) {
  return b.has_value() && *b >= value;
}

// ---------------------------------------------------------------------------
// Proofs. bounds() gives inclusive constant bounds [lo, hi] of an integer
// scalar by interval arithmetic; nullopt means unknown. Everything here must
// be sound: a wrong "proven" answer makes the simplifier produce wrong index
// math.
struct Interval {
  Bound lo;
  Bound hi;
};

class BoundProver {
 public:
  explicit BoundProver(const ValueRanges& ranges) : ranges_(ranges) {}

  Interval bounds(Val* v, int depth = 0);
  Bound lower(Val* v, int depth = 0) {
    return bounds(v, depth).lo;
  }
  Bound upper(Val* v, int depth = 0) {
    return bounds(v, depth).hi;
  }
  bool nonNegative(Val* v, int depth = 0) {
    return atLeast(lower(v, depth), 0);
  }
  // v < bound.
  bool lessThan(Val* v, Val* bound, int depth = 0);
  // a <= b.
  bool lessEqual(Val* a, Val* b, int depth = 0);

 private:
  const ValueRange* rangeOf(const Val* v) const {
    auto it = ranges_.find(v);
    return it == ranges_.end() ? nullptr : &it->second;
  }
  Interval computeBounds(Val* v, int depth);
  Interval binaryBounds(BinaryOpType op, Val* a, Val* b, int depth);
  bool isProductOf(Val* product, Val* x, Val* y);
  bool mergedIndexLessThan(Val* v, Val* bound, int depth);

  const ValueRanges& ranges_;
  // The bounds of a Val never change, so they are computed once per prover.
  std::unordered_map<const Val*, Interval> cache_;
};

Interval BoundProver::bounds(Val* v, int depth) {
  if (!isIntegralScalar(v) || depth > kMaxProofDepth) {
    return {};
  }
  if (auto it = cache_.find(v); it != cache_.end()) {
    return it->second;
  }
  Interval result = computeBounds(v, depth + 1);
  cache_[v] = result;
  return result;
}

Interval BoundProver::computeBounds(Val* v, int depth) {
  if (auto c = intConstant(v)) {
    return {c, c};
  }
  if (const ValueRange* range = rangeOf(v)) {
    return {
        lower(range->start, depth),
        arith(BinaryOpType::Sub, upper(range->stop, depth), Bound(1))};
  }
  if (Val* in = castInput(v)) {
    return bounds(in, depth);
  }
  if (v->definition() == nullptr) {
    // Assumption (doc/indexing.md §"Simplification"): a symbolic Index
    // scalar without definition is an extent, size, stride, parallel index
    // or loop index, all of which are >= 0. Int/Int32 scalars may be user
    // inputs of any sign.
    return {v->dtype() == DataType::Index ? Bound(0) : std::nullopt, {}};
  }
  auto* bop = dynamic_cast<BinaryOp*>(v->definition());
  if (bop == nullptr || !isIntegralScalar(bop->lhs()) ||
      !isIntegralScalar(bop->rhs())) {
    return {};
  }
  return binaryBounds(bop->opType(), bop->lhs(), bop->rhs(), depth);
}

Interval BoundProver::binaryBounds(BinaryOpType op, Val* a, Val* b, int depth) {
  const Interval x = bounds(a, depth);
  const Interval y = bounds(b, depth);
  const bool both_nonneg = atLeast(x.lo, 0) && atLeast(y.lo, 0);
  const Bound divisor = intConstant(b);
  switch (op) {
    case BinaryOpType::Add:
      return {arith(op, x.lo, y.lo), arith(op, x.hi, y.hi)};
    case BinaryOpType::Sub:
      return {arith(op, x.lo, y.hi), arith(op, x.hi, y.lo)};
    case BinaryOpType::Mul:
      if (both_nonneg) {
        return {arith(op, x.lo, y.lo), arith(op, x.hi, y.hi)};
      }
      return {};
    case BinaryOpType::Div:
    case BinaryOpType::CeilDiv:
      // Both are monotone in the dividend for a positive divisor.
      if (atLeast(divisor, 1)) {
        return {arith(op, x.lo, divisor), arith(op, x.hi, divisor)};
      }
      // y >= 0 and d >= 1 (d == 0 is undefined): 0 <= y / d <= y, and the
      // same for ceilDiv.
      if (both_nonneg) {
        Bound lo = 0;
        Bound hi = x.hi;
        if (op == BinaryOpType::Div && atLeast(y.hi, 1)) {
          lo = arith(op, x.lo, y.hi);
        }
        if (op == BinaryOpType::Div && atLeast(y.lo, 1)) {
          hi = arith(op, x.hi, y.lo);
        }
        return {lo, hi};
      }
      return {};
    case BinaryOpType::Mod: {
      // The C remainder takes the sign of the dividend, so y % m <= max(y, 0)
      // for any m, and y % m <= m - 1 for m >= 1.
      Interval result;
      if (atLeast(x.lo, 0)) {
        result.lo = 0;
      }
      if (x.hi) {
        result.hi = std::max<int64_t>(*x.hi, 0);
      }
      if (atLeast(y.lo, 1) && y.hi) {
        result.hi = result.hi ? std::min(*result.hi, *y.hi - 1) : *y.hi - 1;
      }
      return result;
    }
    case BinaryOpType::Max:
      // max(a, b) is at least each operand's lower bound.
      return {
          x.lo && y.lo ? arith(op, x.lo, y.lo) : (x.lo ? x.lo : y.lo),
          arith(op, x.hi, y.hi)};
    case BinaryOpType::Min:
      return {
          arith(op, x.lo, y.lo),
          x.hi && y.hi ? arith(op, x.hi, y.hi) : (x.hi ? x.hi : y.hi)};
    default:
      return {};
  }
}

// Whether `product` is x * y or y * x.
bool BoundProver::isProductOf(Val* product, Val* x, Val* y) {
  auto* mul = integralDef(product, BinaryOpType::Mul);
  if (mul == nullptr) {
    return false;
  }
  return (sameValue(mul->lhs(), x) && sameValue(mul->rhs(), y)) ||
      (sameValue(mul->lhs(), y) && sameValue(mul->rhs(), x));
}

// The index of a merge forward, v = q * D + r, against the merged extent
// B * D: with 0 <= q < B and 0 <= r < D, v <= (B - 1) * D + D - 1 < B * D.
bool BoundProver::mergedIndexLessThan(Val* v, Val* bound, int depth) {
  auto* add = integralDef(v, BinaryOpType::Add);
  auto* extent = integralDef(bound, BinaryOpType::Mul);
  if (add == nullptr || extent == nullptr) {
    return false;
  }
  const std::pair<Val*, Val*> extent_orders[] = {
      {extent->lhs(), extent->rhs()}, {extent->rhs(), extent->lhs()}};
  const std::pair<Val*, Val*> term_orders[] = {
      {add->lhs(), add->rhs()}, {add->rhs(), add->lhs()}};
  for (const auto& [outer_extent, inner_extent] : extent_orders) {
    for (const auto& [scaled, inner] : term_orders) {
      auto* mul = integralDef(scaled, BinaryOpType::Mul);
      if (mul == nullptr) {
        continue;
      }
      Val* outer = nullptr;
      if (sameValue(mul->rhs(), inner_extent)) {
        outer = mul->lhs();
      } else if (sameValue(mul->lhs(), inner_extent)) {
        outer = mul->rhs();
      } else {
        continue;
      }
      if (nonNegative(outer, depth) && lessThan(outer, outer_extent, depth) &&
          nonNegative(inner, depth) && lessThan(inner, inner_extent, depth)) {
        return true;
      }
    }
  }
  return false;
}

bool BoundProver::lessThan(Val* v, Val* bound, int depth) {
  if (depth > kMaxProofDepth || !isIntegralScalar(v) ||
      !isIntegralScalar(bound) || sameValue(v, bound)) {
    return false;
  }
  ++depth;
  const Bound uv = upper(v, depth);
  const Bound lb = lower(bound, depth);
  if (uv && lb && *uv < *lb) {
    return true;
  }
  if (const ValueRange* range = rangeOf(v)) {
    if (range->stop != nullptr && lessEqual(range->stop, bound, depth)) {
      return true;
    }
  }
  if (auto* mod = integralDef(v, BinaryOpType::Mod)) {
    Val* y = mod->lhs();
    Val* m = mod->rhs();
    // y % m < m for m >= 1; m == 0 is undefined, so m >= 0 suffices.
    if (nonNegative(m, depth) && lessEqual(m, bound, depth)) {
      return true;
    }
    // 0 <= y % m <= y for y >= 0.
    if (nonNegative(y, depth) && lessThan(y, bound, depth)) {
      return true;
    }
  }
  if (auto* div = integralDef(v, BinaryOpType::Div)) {
    Val* y = div->lhs();
    Val* d = div->rhs();
    if (nonNegative(y, depth) && nonNegative(d, depth)) {
      // y / d <= y for d >= 1.
      if (lessThan(y, bound, depth)) {
        return true;
      }
      // 0 <= y < bound * d implies y / d < bound (merge backward).
      const ValueRange* y_range = rangeOf(y);
      if (y_range != nullptr && isProductOf(y_range->stop, bound, d)) {
        return true;
      }
    }
  }
  if (auto* min = integralDef(v, BinaryOpType::Min)) {
    return lessThan(min->lhs(), bound, depth) ||
        lessThan(min->rhs(), bound, depth);
  }
  if (auto* max = integralDef(v, BinaryOpType::Max)) {
    return lessThan(max->lhs(), bound, depth) &&
        lessThan(max->rhs(), bound, depth);
  }
  if (mergedIndexLessThan(v, bound, depth)) {
    return true;
  }
  if (Val* in = castInput(v)) {
    return lessThan(in, bound, depth);
  }
  return false;
}

bool BoundProver::lessEqual(Val* a, Val* b, int depth) {
  if (depth > kMaxProofDepth || !isIntegralScalar(a) || !isIntegralScalar(b)) {
    return false;
  }
  if (sameValue(a, b)) {
    return true;
  }
  ++depth;
  auto ua = upper(a, depth);
  auto lb = lower(b, depth);
  if (ua && lb && *ua <= *lb) {
    return true;
  }
  return lessThan(a, b, depth);
}

// ---------------------------------------------------------------------------
// The rewriter. simplify() memoizes per Val; operands are simplified before
// the rules at a node run (bottom-up), and a node is rewritten until no rule
// applies (fixed point). Rules build nodes only once they are sure to apply,
// so an expression with nothing to simplify leaves the Fusion untouched.
class Simplifier {
 public:
  explicit Simplifier(const ValueRanges& ranges) : prover_(ranges) {}

  Val* simplify(Val* v);

 private:
  Val* rewriteOnce(Val* v);
  Val* rewriteBinary(BinaryOpType op, Val* a, Val* b, DataType dtype);
  Val* rewriteUnary(UnaryOpType op, Val* in, DataType dtype);
  Val* rewriteWhere(Val* cond, Val* a, Val* b);

  Val* foldConstants(BinaryOpType op, Val* a, Val* b, DataType dtype);
  Val* rewriteLogical(BinaryOpType op, Val* a, Val* b);
  Val* rewriteComparison(BinaryOpType op, Val* a, Val* b);
  Val* rewriteAdd(Val* a, Val* b, DataType dtype);
  Val* rewriteSub(Val* a, Val* b, DataType dtype);
  Val* rewriteMul(Val* a, Val* b, DataType dtype);
  Val* rewriteDivMod(bool is_div, Val* n, Val* f, DataType dtype);
  Val* rewriteMinMax(BinaryOpType op, Val* a, Val* b);
  Val* reassociateConstants(
      BinaryOpType op,
      const std::vector<Val*>& operands,
      DataType dtype);

  // Whether t == q * f exactly for an integer q; *q_nonneg says whether
  // q >= 0 is proven.
  bool isMultipleOf(Val* t, Val* f, bool* q_nonneg);
  // That q (builds nodes); only after isMultipleOf(t, f) said yes.
  Val* quotient(Val* t, Val* f, DataType dtype);
  // Whether 0 <= sum(terms) < f is proven.
  bool sumInRange(const std::vector<Val*>& terms, Val* f);

  Val* intConst(int64_t value, DataType dtype);
  Val* boolConst(bool value);
  Val* binary(BinaryOpType op, Val* a, Val* b, DataType dtype);
  Val* chain(BinaryOpType op, const std::vector<Val*>& vals, DataType dtype);
  Val* sum(const std::vector<Val*>& terms, DataType dtype) {
    return chain(BinaryOpType::Add, terms, dtype);
  }

  BoundProver prover_;
  std::unordered_map<Val*, Val*> memo_;
};

// Appends the addends of a chain of integer Adds.
void flatten(Val* v, BinaryOpType op, std::vector<Val*>& out) {
  if (auto* bop = integralDef(v, op)) {
    flatten(bop->lhs(), op, out);
    flatten(bop->rhs(), op, out);
    return;
  }
  out.push_back(v);
}

Val* Simplifier::intConst(int64_t value, DataType dtype) {
  return IrBuilder::create<Val>(ScalarValue(value), dtype);
}

Val* Simplifier::boolConst(bool value) {
  return IrBuilder::create<Val>(ScalarValue(value), DataType::Bool);
}

Val* Simplifier::binary(BinaryOpType op, Val* a, Val* b, DataType dtype) {
  Val* out = IrBuilder::create<Val>(dtype);
  IrBuilder::create<BinaryOp>(op, out, a, b);
  return out;
}

// Left-folds `op` (Add or Mul) over vals; the identity element when empty.
Val* Simplifier::chain(
    BinaryOpType op,
    const std::vector<Val*>& vals,
    DataType dtype) {
  if (vals.empty()) {
    return intConst(op == BinaryOpType::Mul ? 1 : 0, dtype);
  }
  Val* result = vals.front();
  for (size_t i = 1; i < vals.size(); ++i) {
    result = binary(op, result, vals[i], dtype);
  }
  return result;
}

Val* Simplifier::simplify(Val* v) {
  if (auto it = memo_.find(v); it != memo_.end()) {
    return it->second;
  }
  Val* current = v;
  for (int step = 0;; ++step) {
    FUSER_INTERNAL_ASSERT(
        step < kMaxRewritesPerNode, "simplifyExpr found no fixed point for ",
        v->toInlineString(), "; last form: ", current->toInlineString());
    Val* next = rewriteOnce(current);
    if (next == current) {
      break;
    }
    if (auto it = memo_.find(next); it != memo_.end()) {
      current = it->second;
      break;
    }
    current = next;
  }
  memo_[v] = current;
  memo_[current] = current;
  return current;
}

Val* Simplifier::rewriteOnce(Val* v) {
  if (!v->isScalar() || v->isConst() || v->definition() == nullptr) {
    return v;
  }
  Expr* def = v->definition();
  auto* bop = dynamic_cast<BinaryOp*>(def);
  auto* uop = dynamic_cast<UnaryOp*>(def);
  auto* top = dynamic_cast<TernaryOp*>(def);
  if (bop == nullptr && uop == nullptr && top == nullptr) {
    return v; // not scalar math
  }
  std::vector<Val*> in;
  for (Val* input : def->inputs()) {
    in.push_back(simplify(input));
  }
  Val* result = nullptr;
  if (bop != nullptr) {
    result = rewriteBinary(bop->opType(), in[0], in[1], v->dtype());
  } else if (uop != nullptr) {
    result = rewriteUnary(uop->opType(), in[0], v->dtype());
  } else if (top != nullptr && top->opType() == TernaryOpType::Where) {
    result = rewriteWhere(in[0], in[1], in[2]);
  }
  if (result != nullptr || in == def->inputs()) {
    return result != nullptr ? result : v;
  }
  // No rule at this node, but simpler operands: rebuild it around them.
  Val* out = IrBuilder::create<Val>(v->dtype());
  if (bop != nullptr) {
    IrBuilder::create<BinaryOp>(bop->opType(), out, in[0], in[1]);
  } else if (uop != nullptr) {
    IrBuilder::create<UnaryOp>(uop->opType(), out, in[0]);
  } else {
    IrBuilder::create<TernaryOp>(top->opType(), out, in[0], in[1], in[2]);
  }
  return out;
}

Val* Simplifier::rewriteBinary(
    BinaryOpType op,
    Val* a,
    Val* b,
    DataType dtype) {
  if (Val* folded = foldConstants(op, a, b, dtype)) {
    return folded;
  }
  if (isLogicalOp(op)) {
    return rewriteLogical(op, a, b);
  }
  // Everything below is integer index math.
  if (!isIntegralScalar(a) || !isIntegralScalar(b)) {
    return nullptr;
  }
  if (isComparisonOp(op)) {
    return rewriteComparison(op, a, b);
  }
  if (!isIntegralType(dtype)) {
    return nullptr;
  }
  switch (op) {
    case BinaryOpType::Add:
      return rewriteAdd(a, b, dtype);
    case BinaryOpType::Sub:
      return rewriteSub(a, b, dtype);
    case BinaryOpType::Mul:
      return rewriteMul(a, b, dtype);
    case BinaryOpType::Div:
      return rewriteDivMod(/*is_div=*/true, a, b, dtype);
    case BinaryOpType::Mod:
      return rewriteDivMod(/*is_div=*/false, a, b, dtype);
    case BinaryOpType::CeilDiv:
      if (isIntConstant(b, 1)) {
        return a;
      }
      // ceilDiv(0, f) = (f - 1) / f = 0 for f >= 1 (f == 0 is undefined).
      if (isIntConstant(a, 0) && prover_.nonNegative(b)) {
        return intConst(0, dtype);
      }
      return nullptr;
    case BinaryOpType::Max:
    case BinaryOpType::Min:
      return rewriteMinMax(op, a, b);
    default:
      return nullptr;
  }
}

Val* Simplifier::foldConstants(
    BinaryOpType op,
    Val* a,
    Val* b,
    DataType dtype) {
  if (!a->isConst() || !b->isConst()) {
    return nullptr;
  }
  if (isComparisonOp(op) || isLogicalOp(op)) {
    return boolConst(
        evaluateBinaryOp(op, a->value(), b->value(), DataType::Bool).asBool());
  }
  // Floating-point math is left alone (rounding would change with the
  // order of evaluation).
  auto x = intConstant(a);
  auto y = intConstant(b);
  if (!x || !y || !isIntegralType(dtype)) {
    return nullptr;
  }
  Bound result = arith(op, *x, *y);
  return result ? intConst(*result, dtype) : nullptr;
}

Val* Simplifier::rewriteLogical(BinaryOpType op, Val* a, Val* b) {
  if (a->dtype() != DataType::Bool || b->dtype() != DataType::Bool) {
    return nullptr;
  }
  const bool is_and = op == BinaryOpType::LogicalAnd;
  // The neutral element drops out: true && x, false || x.
  if (isBoolConstant(a, is_and)) {
    return b;
  }
  if (isBoolConstant(b, is_and)) {
    return a;
  }
  // The absorbing element wins: false && x, true || x (x has no effects).
  if (isBoolConstant(a, !is_and) || isBoolConstant(b, !is_and)) {
    return boolConst(!is_and);
  }
  return nullptr;
}

Val* Simplifier::rewriteComparison(BinaryOpType op, Val* a, Val* b) {
  // Normalize to `x < y` or `x <= y`; a proof of the opposite order decides
  // false. Only true facts are proven, never guessed.
  switch (op) {
    case BinaryOpType::Gt:
      std::swap(a, b);
      op = BinaryOpType::Lt;
      break;
    case BinaryOpType::Ge:
      std::swap(a, b);
      op = BinaryOpType::Le;
      break;
    default:
      break;
  }
  switch (op) {
    case BinaryOpType::Lt:
      if (prover_.lessThan(a, b)) {
        return boolConst(true);
      }
      if (prover_.lessEqual(b, a)) {
        return boolConst(false);
      }
      return nullptr;
    case BinaryOpType::Le:
      if (prover_.lessEqual(a, b)) {
        return boolConst(true);
      }
      if (prover_.lessThan(b, a)) {
        return boolConst(false);
      }
      return nullptr;
    case BinaryOpType::Eq:
    case BinaryOpType::Ne: {
      const bool is_eq = op == BinaryOpType::Eq;
      if (sameValue(a, b)) {
        return boolConst(is_eq);
      }
      if (prover_.lessThan(a, b) || prover_.lessThan(b, a)) {
        return boolConst(!is_eq);
      }
      return nullptr;
    }
    default:
      return nullptr;
  }
}

Val* Simplifier::rewriteAdd(Val* a, Val* b, DataType dtype) {
  if (isIntConstant(a, 0)) {
    return b;
  }
  if (isIntConstant(b, 0)) {
    return a;
  }
  std::vector<Val*> terms;
  flatten(a, BinaryOpType::Add, terms);
  flatten(b, BinaryOpType::Add, terms);

  // (x / f) * f + x % f -> x: a split forward then backward, anywhere in
  // the sum and in either order (C division and remainder satisfy this for
  // every x and f != 0).
  for (size_t i = 0; i < terms.size(); ++i) {
    auto* mul = integralDef(terms[i], BinaryOpType::Mul);
    if (mul == nullptr) {
      continue;
    }
    for (auto [quot, factor] :
         {std::pair(mul->lhs(), mul->rhs()),
          std::pair(mul->rhs(), mul->lhs())}) {
      auto* div = integralDef(quot, BinaryOpType::Div);
      if (div == nullptr || !sameValue(div->rhs(), factor)) {
        continue;
      }
      for (size_t j = 0; j < terms.size(); ++j) {
        auto* mod = integralDef(terms[j], BinaryOpType::Mod);
        if (j == i || mod == nullptr || !sameValue(mod->lhs(), div->lhs()) ||
            !sameValue(mod->rhs(), factor)) {
          continue;
        }
        terms[i] = div->lhs();
        terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(j));
        return sum(terms, dtype);
      }
    }
  }

  return reassociateConstants(BinaryOpType::Add, terms, dtype);
}

Val* Simplifier::rewriteSub(Val* a, Val* b, DataType dtype) {
  if (isIntConstant(b, 0)) {
    return a;
  }
  if (sameValue(a, b)) {
    return intConst(0, dtype);
  }
  // (p + q) - q -> p and (p + q) - p -> q.
  if (auto* add = integralDef(a, BinaryOpType::Add)) {
    if (sameValue(add->rhs(), b)) {
      return add->lhs();
    }
    if (sameValue(add->lhs(), b)) {
      return add->rhs();
    }
  }
  return nullptr;
}

Val* Simplifier::rewriteMul(Val* a, Val* b, DataType dtype) {
  if (isIntConstant(a, 1)) {
    return b;
  }
  if (isIntConstant(b, 1)) {
    return a;
  }
  if (isIntConstant(a, 0) || isIntConstant(b, 0)) {
    return intConst(0, dtype);
  }
  std::vector<Val*> factors;
  flatten(a, BinaryOpType::Mul, factors);
  flatten(b, BinaryOpType::Mul, factors);
  return reassociateConstants(BinaryOpType::Mul, factors, dtype);
}

// x + c1 + c2 -> x + (c1 + c2) and x * c1 * c2 -> x * (c1 * c2) over the
// flattened chain: one constant, placed last. nullptr with fewer than two
// constants or on overflow.
Val* Simplifier::reassociateConstants(
    BinaryOpType op,
    const std::vector<Val*>& operands,
    DataType dtype) {
  const int64_t identity = op == BinaryOpType::Mul ? 1 : 0;
  std::vector<Val*> symbolic;
  Bound constant = identity;
  int num_constants = 0;
  for (Val* operand : operands) {
    if (auto c = intConstant(operand)) {
      constant = arith(op, constant, c);
      ++num_constants;
    } else {
      symbolic.push_back(operand);
    }
  }
  if (num_constants < 2 || !constant.has_value()) {
    return nullptr;
  }
  if (op == BinaryOpType::Mul && *constant == 0) {
    return intConst(0, dtype);
  }
  if (*constant != identity) {
    symbolic.push_back(intConst(*constant, dtype));
  }
  return chain(op, symbolic, dtype);
}

bool Simplifier::isMultipleOf(Val* t, Val* f, bool* q_nonneg) {
  if (sameValue(t, f)) {
    *q_nonneg = true;
    return true;
  }
  auto tc = intConstant(t);
  auto fc = intConstant(f);
  if (tc && fc) {
    auto remainder = arith(BinaryOpType::Mod, *tc, *fc);
    if (remainder && *remainder == 0) {
      *q_nonneg = *tc / *fc >= 0;
      return true;
    }
    return false;
  }
  if (auto* mul = integralDef(t, BinaryOpType::Mul)) {
    bool nonneg = false;
    if (isMultipleOf(mul->lhs(), f, &nonneg)) {
      *q_nonneg = nonneg && prover_.nonNegative(mul->rhs());
      return true;
    }
    if (isMultipleOf(mul->rhs(), f, &nonneg)) {
      *q_nonneg = nonneg && prover_.nonNegative(mul->lhs());
      return true;
    }
  }
  return false;
}

Val* Simplifier::quotient(Val* t, Val* f, DataType dtype) {
  if (sameValue(t, f)) {
    return intConst(1, dtype);
  }
  auto tc = intConstant(t);
  auto fc = intConstant(f);
  if (tc && fc) {
    return intConst(*tc / *fc, dtype);
  }
  auto* mul = integralDef(t, BinaryOpType::Mul);
  FUSER_INTERNAL_ASSERT(
      mul != nullptr, t->toInlineString(), " is not a multiple of ",
      f->toInlineString());
  bool unused = false;
  // Same order as isMultipleOf, so the quotient is the one it vouched for.
  if (isMultipleOf(mul->lhs(), f, &unused)) {
    if (sameValue(mul->lhs(), f)) {
      return mul->rhs();
    }
    return binary(
        BinaryOpType::Mul, quotient(mul->lhs(), f, dtype), mul->rhs(), dtype);
  }
  if (sameValue(mul->rhs(), f)) {
    return mul->lhs();
  }
  return binary(
      BinaryOpType::Mul, mul->lhs(), quotient(mul->rhs(), f, dtype), dtype);
}

bool Simplifier::sumInRange(const std::vector<Val*>& terms, Val* f) {
  for (Val* term : terms) {
    if (!prover_.nonNegative(term)) {
      return false;
    }
  }
  if (terms.size() == 1) {
    return prover_.lessThan(terms.front(), f);
  }
  // Several terms: only constant bounds add up.
  Bound total = 0;
  for (Val* term : terms) {
    total = arith(BinaryOpType::Add, total, prover_.upper(term));
  }
  const Bound lf = prover_.lower(f);
  return total && lf && *total < *lf;
}

Val* Simplifier::rewriteDivMod(bool is_div, Val* n, Val* f, DataType dtype) {
  auto fc = intConstant(f);
  // A division by a literal zero stays visible rather than being folded
  // into something that hides it.
  if (fc && *fc == 0) {
    return nullptr;
  }
  if (fc && *fc == 1) {
    return is_div ? n : intConst(0, dtype);
  }
  if (isIntConstant(n, 0)) {
    return intConst(0, dtype);
  }
  if (is_div) {
    // (x / c1) / c2 -> x / (c1 * c2) for c1, c2 > 0; truncation composes
    // for positive divisors, whatever the sign of x.
    if (auto* inner = integralDef(n, BinaryOpType::Div)) {
      auto c1 = intConstant(inner->rhs());
      if (c1 && fc && *c1 > 0 && *fc > 0) {
        if (auto c = arith(BinaryOpType::Mul, *c1, *fc)) {
          return binary(
              BinaryOpType::Div, inner->lhs(), intConst(*c, dtype), dtype);
        }
      }
    }
  } else {
    // (x % (k * f)) % f -> x % f: x % (k * f) keeps x's sign and differs
    // from x by a multiple of f.
    if (auto* inner = integralDef(n, BinaryOpType::Mod)) {
      if (sameValue(inner->rhs(), f)) {
        return n;
      }
      bool unused = false;
      if (isMultipleOf(inner->rhs(), f, &unused)) {
        return binary(BinaryOpType::Mod, inner->lhs(), f, dtype);
      }
    }
  }

  // n = sum of terms; split them into exact multiples of f (with quotient
  // sum q) and the rest r, so n = q * f + r.
  std::vector<Val*> terms;
  flatten(n, BinaryOpType::Add, terms);
  std::vector<Val*> multiples;
  std::vector<Val*> rest;
  bool quotient_nonneg = true;
  for (Val* term : terms) {
    bool nonneg = false;
    if (isMultipleOf(term, f, &nonneg)) {
      multiples.push_back(term);
      quotient_nonneg = quotient_nonneg && nonneg;
    } else {
      rest.push_back(term);
    }
  }
  auto quotientSum = [&]() {
    std::vector<Val*> quotients;
    quotients.reserve(multiples.size());
    for (Val* term : multiples) {
      quotients.push_back(quotient(term, f, dtype));
    }
    return sum(quotients, dtype);
  };
  // n = q * f exactly: n / f = q and n % f = 0, whatever the signs.
  if (rest.empty()) {
    return is_div ? quotientSum() : intConst(0, dtype);
  }
  // n = q * f + r with q >= 0 and 0 <= r < f: then n >= 0, and C division
  // gives n / f = q and n % f = r. Without the bounds (say r unknown) the
  // expression stays as it is.
  if (!quotient_nonneg || !sumInRange(rest, f)) {
    return nullptr;
  }
  if (multiples.empty()) {
    return is_div ? intConst(0, dtype) : n;
  }
  return is_div ? quotientSum() : sum(rest, dtype);
}

Val* Simplifier::rewriteMinMax(BinaryOpType op, Val* a, Val* b) {
  if (sameValue(a, b)) {
    return a;
  }
  const bool is_max = op == BinaryOpType::Max;
  if (prover_.lessEqual(a, b)) {
    return is_max ? b : a;
  }
  if (prover_.lessEqual(b, a)) {
    return is_max ? a : b;
  }
  return nullptr;
}

Val* Simplifier::rewriteUnary(UnaryOpType op, Val* in, DataType dtype) {
  if (op == UnaryOpType::LogicalNot && in->isConst() &&
      in->dtype() == DataType::Bool) {
    return boolConst(!in->value().asBool());
  }
  if (op != UnaryOpType::Cast || !isIntegralScalar(in) ||
      !isIntegralType(dtype)) {
    return nullptr;
  }
  if (in->dtype() == dtype) {
    return in;
  }
  auto c = intConstant(in);
  if (c &&
      (dtype != DataType::Int32 ||
       (*c >= std::numeric_limits<int32_t>::min() &&
        *c <= std::numeric_limits<int32_t>::max()))) {
    return intConst(*c, dtype);
  }
  return nullptr;
}

Val* Simplifier::rewriteWhere(Val* cond, Val* a, Val* b) {
  if (cond->isConst()) {
    return cond->value().asBool() ? a : b;
  }
  if (sameValue(a, b)) {
    return a;
  }
  return nullptr;
}

} // namespace

Val* simplifyExpr(Val* value, const ValueRanges& ranges) {
  FUSER_INTERNAL_ASSERT(value != nullptr, "simplifyExpr of a null Val");
  if (!value->isScalar() || value->isConst() ||
      value->definition() == nullptr) {
    return value;
  }
  FUSER_INTERNAL_ASSERT(
      value->fusion() != nullptr, value->toString(), " belongs to no Fusion");
  FusionGuard fg(value->fusion());
  return Simplifier(ranges).simplify(value);
}

bool provenNonNegative(Val* v, const ValueRanges& ranges) {
  FUSER_INTERNAL_ASSERT(v != nullptr, "provenNonNegative of a null Val");
  return BoundProver(ranges).nonNegative(v);
}

bool provenLessThan(Val* v, Val* bound, const ValueRanges& ranges) {
  FUSER_INTERNAL_ASSERT(
      v != nullptr && bound != nullptr, "provenLessThan of a null Val");
  return BoundProver(ranges).lessThan(v, bound);
}

} // namespace fuser
