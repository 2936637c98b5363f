// Walking and rewriting kernel IR (doc/indexing.md): every lowering pass
// that works on loop nests is an IrVisitor (reads) or an ExprMutator
// (rewrites scopes), which keep the stack of enclosing loops.
#pragma once

#include <device_lower/kernel_ir.h>

#include <vector>

namespace fuser::kir {

class IrVisitor {
 public:
  virtual ~IrVisitor() = default;

  // Visits `exprs` and everything nested in them, in order.
  void traverse(const std::vector<Expr*>& exprs);

 protected:
  // Pushes the loop, visits its body, pops it.
  virtual void handle(ForLoop* loop);
  // Visits the then-body, then the else-body.
  virtual void handle(IfThenElse* branch);
  // A reduction across threads: as any other expr by default.
  virtual void handle(ParallelReduction* reduction);
  // Every other expr (tensor exprs, Allocate, BlockSync): nothing.
  virtual void handle(Expr* expr);

  void dispatch(Expr* expr);
  // The loops enclosing the expr being visited, outermost first.
  const std::vector<ForLoop*>& forLoops() const {
    return for_loops_;
  }

  std::vector<ForLoop*> for_loops_;
};

// A visitor that rewrites the scopes it walks: the expr being visited may
// be replaced, and exprs inserted before one of its enclosing loops.
class ExprMutator : public IrVisitor {
 public:
  // Rewrites `exprs` (and the scopes nested in them) and returns the new
  // top level.
  std::vector<Expr*> mutate(const std::vector<Expr*>& exprs);

 protected:
  void handle(ForLoop* loop) override;
  void handle(IfThenElse* branch) override;
  using IrVisitor::handle;

  // The expr being visited is replaced by `replacement` (none: removed).
  void replaceCurrent(std::vector<Expr*> replacement);
  // Inserts `expr` right before the enclosing loop at `depth` (0: the
  // outermost), or before the expr being visited when `depth` is the number
  // of enclosing loops: it runs inside the first `depth` loops only.
  void insertBefore(size_t depth, Expr* expr);

 private:
  struct Frame {
    std::vector<Expr*> result;
    std::vector<Expr*> pending; // inserted before the current expr
    bool replaced = false;
    std::vector<Expr*> replacement;
  };
  void mutateScope(std::vector<Expr*>& scope);

  std::vector<Frame> frames_;
  // The frame each enclosing loop sits in.
  std::vector<size_t> loop_frames_;
};

} // namespace fuser::kir
