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

#define FUSER_DISPATCH_FOR_ALL_EXPRS(f)                                      \
  f(Split) f(Merge) f(LoadStoreOp) f(UnaryOp) f(BinaryOp) f(TernaryOp)       \
      f(BroadcastOp) f(ExpandOp) f(ReductionOp) f(ViewOp) f(MmaOp) f(FullOp) \
          f(IotaOp) f(RNGOp) f(ScanOp) f(IndexOp) f(ResizeOp) f(ExternalOp)

#define FUSER_FORWARD_DECLARE(T) class T;
FUSER_DISPATCH_FOR_ALL_VALS(FUSER_FORWARD_DECLARE)
FUSER_DISPATCH_FOR_ALL_EXPRS(FUSER_FORWARD_DECLARE)
#undef FUSER_FORWARD_DECLARE

// The kernel IR nodes (device_lower/kernel_ir.h; their default handlers
// are defined there, so that the IR does not depend on lowering).
namespace kir {
class TensorIndex;
class NamedScalar;
class ForLoop;
class IfThenElse;
class Allocate;
class BlockSync;
class ParallelReduction;
class MmaPipelineInit;
class MmaRoleStart;
class MmaTile;
} // namespace kir

#define FUSER_DISPATCH_FOR_ALL_KIR_VALS(f) \
  f(kir::TensorIndex) f(kir::NamedScalar)
#define FUSER_DISPATCH_FOR_ALL_KIR_EXPRS(f)                                  \
  f(kir::ForLoop) f(kir::IfThenElse) f(kir::Allocate) f(kir::BlockSync)      \
      f(kir::ParallelReduction) f(kir::MmaPipelineInit) f(kir::MmaRoleStart) \
          f(kir::MmaTile)

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
  FUSER_DISPATCH_FOR_ALL_KIR_EXPRS(FUSER_DECLARE_EXPR_HANDLER)
#undef FUSER_DECLARE_EXPR_HANDLER
#define FUSER_DECLARE_KIR_VAL_HANDLER(T) virtual void handle(T* node);
  FUSER_DISPATCH_FOR_ALL_KIR_VALS(FUSER_DECLARE_KIR_VAL_HANDLER)
#undef FUSER_DECLARE_KIR_VAL_HANDLER
};

} // namespace fuser
