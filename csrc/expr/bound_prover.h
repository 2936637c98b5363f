// Interval bounds of integer index scalars, for the simplifier's
// preconditions (doc/indexing.md §"Simplification"): which values are
// proven non-negative or below a bound. Everything here must be sound: a
// wrong "proven" answer makes the simplifier produce wrong index math.
#pragma once

#include <expr/simplifier.h>

#include <ir/all_nodes.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>

namespace fuser::simplify {

// Index expressions are shallow; the limit only stops proofs that chase
// cyclic ranges (i in [j, ..), j in [i, ..)).
constexpr int kMaxProofDepth = 32;

inline bool isIntegralScalar(const Val* v) {
  return v != nullptr && v->isScalar() && isIntegralType(v->dtype());
}

inline std::optional<int64_t> intConstant(const Val* v) {
  if (isIntegralScalar(v) && v->isConst()) {
    return v->value().asInt();
  }
  return std::nullopt;
}

inline bool isIntConstant(const Val* v, int64_t c) {
  auto value = intConstant(v);
  return value.has_value() && *value == c;
}

inline bool isBoolConstant(const Val* v, bool c) {
  return v->isConst() && v->dtype() == DataType::Bool &&
         v->value().asBool() == c;
}

// The integer BinaryOp of type `op` that defines v, or nullptr.
inline BinaryOp* integralDef(const Val* v, BinaryOpType op) {
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
inline Val* castInput(const Val* v) {
  auto* uop = dynamic_cast<UnaryOp*>(v->definition());
  if (uop != nullptr && uop->opType() == UnaryOpType::Cast &&
      isIntegralScalar(uop->in())) {
    return uop->in();
  }
  return nullptr;
}

inline bool sameValue(const Val* a, const Val* b) {
  return a == b || a->sameAs(b);
}

// Integer `a op b` as the kernel computes it: C truncating division and
// remainder, ceilDiv(a, b) = (a + b - 1) / b as in the builder, the evaluator
// and the runtime. nullopt on int64 overflow, where C leaves the result
// undefined, or for other ops, so folding never bakes undefined behavior
// into a kernel.
inline std::optional<int64_t> arith(BinaryOpType op, int64_t a, int64_t b) {
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
inline Bound arith(BinaryOpType op, Bound a, Bound b) {
  return a && b ? arith(op, *a, *b) : std::nullopt;
}

inline bool atLeast(Bound b, int64_t value) {
  return b.has_value() && *b >= value;
}

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

} // namespace fuser::simplify
