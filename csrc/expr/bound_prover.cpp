#include <expr/bound_prover.h>

namespace fuser::simplify {

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

} // namespace fuser::simplify
