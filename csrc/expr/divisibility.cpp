#include <expr/divisibility.h>

#include <expr/bound_prover.h>

namespace fuser {

bool provenMultipleOf(const Val* v, int64_t m) {
  FUSER_INTERNAL_ASSERT(m > 0, "a multiple of ", m, " is not defined");
  if (m == 1) {
    return true;
  }
  if (auto c = simplify::intConstant(v)) {
    return *c % m == 0;
  }
  if (const Val* in = simplify::castInput(v)) {
    return provenMultipleOf(in, m);
  }
  if (auto* mul = simplify::integralDef(v, BinaryOpType::Mul)) {
    return provenMultipleOf(mul->lhs(), m) || provenMultipleOf(mul->rhs(), m);
  }
  for (BinaryOpType op : {BinaryOpType::Add, BinaryOpType::Sub}) {
    if (auto* bop = simplify::integralDef(v, op)) {
      return provenMultipleOf(bop->lhs(), m) && provenMultipleOf(bop->rhs(), m);
    }
  }
  return false;
}

} // namespace fuser
