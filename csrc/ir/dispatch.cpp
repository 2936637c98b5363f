#include <ir/dispatch.h>

#include <ir/all_nodes.h>

namespace fuser {

void OptOutDispatch::dispatch(Statement* stmt) {
  stmt->accept(*this);
}

void OptOutDispatch::handle(Statement*) {}

void OptOutDispatch::handle(Val* val) {
  handle(static_cast<Statement*>(val));
}

void OptOutDispatch::handle(Expr* expr) {
  handle(static_cast<Statement*>(expr));
}

#define FUSER_DEFINE_VAL_HANDLER(T)      \
  void OptOutDispatch::handle(T* node) { \
    handle(static_cast<Val*>(node));     \
  }
FUSER_DISPATCH_FOR_ALL_VALS(FUSER_DEFINE_VAL_HANDLER)
#undef FUSER_DEFINE_VAL_HANDLER

#define FUSER_DEFINE_EXPR_HANDLER(T)     \
  void OptOutDispatch::handle(T* node) { \
    handle(static_cast<Expr*>(node));    \
  }
FUSER_DISPATCH_FOR_ALL_EXPRS(FUSER_DEFINE_EXPR_HANDLER)
#undef FUSER_DEFINE_EXPR_HANDLER

} // namespace fuser
