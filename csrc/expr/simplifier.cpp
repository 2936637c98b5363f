// Rules and their preconditions: doc/indexing.md §"Simplification".
#include <expr/simplifier.h>

#include <expr/bound_prover.h>

#include <expr/evaluator.h>
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

using namespace simplify;

// Every rule shrinks the expression, so a node reaches its fixed point in a
// few steps; more means two rules undo each other, which is a bug.
constexpr int kMaxRewritesPerNode = 64;

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
  Val* rewriteQuotientBelow(Val* a, Val* c);
  Val* rewriteAdd(Val* a, Val* b, DataType dtype);
  Val* rewriteSub(Val* a, Val* b, DataType dtype);
  Val* rewriteMul(Val* a, Val* b, DataType dtype);
  Val* rewriteDivMod(bool is_div, Val* n, Val* f, DataType dtype);
  Val* rewriteMinMax(BinaryOpType op, Val* a, Val* b);
  Val* reassociateConstants(
      BinaryOpType op, const std::vector<Val*>& operands, DataType dtype);

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
    BinaryOpType op, const std::vector<Val*>& vals, DataType dtype) {
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
    BinaryOpType op, Val* a, Val* b, DataType dtype) {
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
    BinaryOpType op, Val* a, Val* b, DataType dtype) {
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
      return rewriteQuotientBelow(a, b);
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

// `x / f < c` -> `x < c * f` (doc/indexing.md, Rules): the predicate of
// an ID under merges, `(m / W) / H < N`, becomes `m < N * H * W`, one
// loop-invariant product instead of two divisions per element. Exact for
// x >= 0 and f > 0 (floor(x / f) < c iff x / f < c for an integer c).
// Index math only: c * f is then the extent of a merged or split ID, which
// the index type holds (the runtime leaves it a factor of two of room).
Val* Simplifier::rewriteQuotientBelow(Val* a, Val* c) {
  BinaryOp* div = integralDef(a, BinaryOpType::Div);
  if (div == nullptr) {
    return nullptr;
  }
  Val* x = div->lhs();
  Val* f = div->rhs();
  for (Val* v : {x, f, c}) {
    if (v->dtype() != DataType::Index || !prover_.nonNegative(v)) {
      return nullptr;
    }
  }
  return binary(
      BinaryOpType::Lt, x, binary(BinaryOpType::Mul, c, f, DataType::Index),
      DataType::Bool);
}

// Whether `inner` is x with `divisor` = f, or x / c with `divisor` = c * f
// for constants c, f > 0: then (x / divisor) * f + inner % f = inner.
bool splitsOf(Val* inner, Val* x, Val* divisor, Val* f) {
  if (sameValue(inner, x) && sameValue(divisor, f)) {
    return true;
  }
  auto* div = integralDef(inner, BinaryOpType::Div);
  auto c = div == nullptr ? std::nullopt : intConstant(div->rhs());
  auto whole = intConstant(divisor);
  auto factor = intConstant(f);
  if (!c || !whole || !factor || *c <= 0 || *factor <= 0 ||
      !sameValue(div->lhs(), x)) {
    return false;
  }
  auto product = arith(BinaryOpType::Mul, *c, *factor);
  return product.has_value() && *product == *whole;
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
  // every x and f != 0). Also its nested form, (x / (c * f)) * f +
  // (x / c) % f -> x / c for constants c, f > 0 (then x / (c * f) is
  // (x / c) / f): the index of a merge of three axes comes back to x.
  for (size_t i = 0; i < terms.size(); ++i) {
    auto* mul = integralDef(terms[i], BinaryOpType::Mul);
    if (mul == nullptr) {
      continue;
    }
    for (auto [quot, factor] :
         {std::pair(mul->lhs(), mul->rhs()),
          std::pair(mul->rhs(), mul->lhs())}) {
      auto* div = integralDef(quot, BinaryOpType::Div);
      if (div == nullptr) {
        continue;
      }
      for (size_t j = 0; j < terms.size(); ++j) {
        auto* mod = integralDef(terms[j], BinaryOpType::Mod);
        if (j == i || mod == nullptr || !sameValue(mod->rhs(), factor) ||
            !splitsOf(mod->lhs(), div->lhs(), div->rhs(), factor)) {
          continue;
        }
        terms[i] = mod->lhs();
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
    BinaryOpType op, const std::vector<Val*>& operands, DataType dtype) {
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
  if (c && (dtype != DataType::Int32 ||
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
