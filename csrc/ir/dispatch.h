// Visitors over IR nodes by double dispatch: `stmt->accept(visitor)` calls
// the most specific `handle` overload. Unhandled node kinds fall back to
// their base class's handler, ending at handle(Statement*).
#pragma once

namespace fuser {

class Statement;
class Val;
class Expr;

#define FUSER_DISPATCH_FOR_ALL_VALS(f) \
  f(IterDomain) f(TensorDomain) f(TensorView)

#define FUSER_DISPATCH_FOR_ALL_EXPRS(f)                                \
  f(Split) f(Merge) f(LoadStoreOp) f(UnaryOp) f(BinaryOp) f(TernaryOp) \
      f(BroadcastOp) f(ReductionOp) f(ViewOp)

#define FUSER_FORWARD_DECLARE(T) class T;
FUSER_DISPATCH_FOR_ALL_VALS(FUSER_FORWARD_DECLARE)
FUSER_DISPATCH_FOR_ALL_EXPRS(FUSER_FORWARD_DECLARE)
#undef FUSER_FORWARD_DECLARE

class OptOutDispatch {
 public:
  virtual ~OptOutDispatch() = default;

  void dispatch(Statement* stmt);

  virtual void handle(Statement* stmt);
  virtual void handle(Val* val);
  virtual void handle(Expr* expr);

#define FUSER_DECLARE_VAL_HANDLER(T) virtual void handle(T* node);
  FUSER_DISPATCH_FOR_ALL_VALS(FUSER_DECLARE_VAL_HANDLER)
#undef FUSER_DECLARE_VAL_HANDLER
#define FUSER_DECLARE_EXPR_HANDLER(T) virtual void handle(T* node);
  FUSER_DISPATCH_FOR_ALL_EXPRS(FUSER_DECLARE_EXPR_HANDLER)
#undef FUSER_DECLARE_EXPR_HANDLER
};

} // namespace fuser
