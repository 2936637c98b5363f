// Fusion: owns every IR node of one program, its inputs and outputs.
// FusionGuard makes a Fusion the target of IrBuilder::create. doc/design.md §3.
#pragma once

#include <ir/base_nodes.h>

#include <iostream>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace fuser {

class IrCloner;
class TensorView;

class Fusion {
 public:
  Fusion() = default;
  ~Fusion();
  Fusion(const Fusion& other);
  Fusion& operator=(const Fusion& other);
  Fusion(Fusion&& other) = delete;

  // Deep-copies `from` into the empty `to`; returns the cloner so callers
  // can map nodes of `from` to their copies.
  static IrCloner copy(const Fusion* from, Fusion* to);

  void addInput(Val* input);
  void removeInput(Val* input);
  void addOutput(Val* output);
  void removeOutput(Val* output);
  void replaceOutput(Val* output, Val* replacement);

  const std::vector<Val*>& inputs() const {
    return inputs_;
  }
  const std::vector<Val*>& outputs() const {
    return outputs_;
  }
  bool isInput(const Val* val) const;
  bool isOutput(const Val* val) const;

  // Exprs needed to compute the outputs, in topological order. ID exprs
  // (Split/Merge) are not part of it: they describe domains.
  std::vector<Expr*> exprs() const;
  // Every tensor reachable from the outputs (inputs included), topological.
  std::vector<TensorView*> allTvs() const;
  // Every registered Val / Expr, in creation order.
  std::vector<Val*> vals() const;
  std::vector<Expr*> unorderedExprs() const;

  // Every domain of every tensor and the math.
  void print(std::ostream& os = std::cout) const;
  // Just the exprs, one per line.
  void printMath(std::ostream& os = std::cout) const;
  std::string toString() const;
  std::string mathToString() const;
  // Lowers the fusion as it is scheduled now and prints and returns its
  // CUDA C++ (csrc/codegen). Needs no GPU.
  std::string printKernel(std::ostream& os = std::cout) const;

  // Node management, used by IrBuilder and IR mutations.
  void registerStatement(Statement* stmt);
  void removeExpr(Expr* expr);
  bool inContainer(const Statement* stmt) const;
  // Replace `old_val` by `new_val` among `expr`'s inputs (uses updated).
  void replaceInput(Expr* expr, Val* old_val, Val* new_val);
  // Make `expr` define `new_val` instead of `old_val`.
  void replaceOutputOfExpr(Expr* expr, Val* old_val, Val* new_val);

  // Keeps a cloned node's name (IrCloner).
  void setStatementName(Statement* stmt, int64_t name);

  // Shared constants.
  Val* zeroVal();
  Val* oneVal();

 private:
  void clear();
  void demoteFormerOutput(Val* former);

  std::vector<std::unique_ptr<Statement>> statements_;
  std::unordered_map<const Statement*, size_t> statement_index_;
  std::vector<Val*> inputs_;
  std::vector<Val*> outputs_;
  std::unordered_map<int, int64_t> val_name_counters_;
  int64_t expr_name_counter_ = 0;
  Val* zero_val_ = nullptr;
  Val* one_val_ = nullptr;
};

// Makes a Fusion current for node creation within a scope.
class FusionGuard {
 public:
  explicit FusionGuard(Fusion* fusion);
  ~FusionGuard();
  FusionGuard(const FusionGuard&) = delete;
  FusionGuard& operator=(const FusionGuard&) = delete;

  static Fusion* getCurFusion();
  static void setCurFusion(Fusion* fusion);

 private:
  Fusion* prev_fusion_;
};

} // namespace fuser
