// Prints lowered kernel IR as CUDA C++ (doc/design.md §5). One printer walks
// the kernel; each family of nodes is printed in its own file, reached by
// dispatch (ir/dispatch.h): arithmetic (arith.cpp), memory (memory.cpp:
// copies, vector accesses, buffers), control flow (control_flow.cpp:
// loops, branches, barriers), reductions across threads and blocks
// (reduction.cpp), the matmul pipeline (mma.cpp).
#pragma once

#include <device_lower/lower.h>
#include <ir/dispatch.h>

#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fuser::codegen {

class KernelPrinter : public OptOutDispatch {
 public:
  explicit KernelPrinter(const LoweredKernel& kernel) : kernel_(kernel) {}

  // The __global__ function.
  std::string print();

 protected:
  using OptOutDispatch::handle;

  // arith.cpp
  void handle(UnaryOp* op) override;
  void handle(BinaryOp* op) override;
  void handle(TernaryOp* op) override;
  void handle(RNGOp* op) override;
  void handle(ReductionOp* op) override;
  // reduction.cpp
  void handle(kir::ParallelReduction* reduction) override;
  // memory.cpp
  void handle(LoadStoreOp* op) override;
  void handle(kir::Allocate* alloc) override;
  // mma.cpp
  void handle(kir::MmaPipelineInit* init) override;
  void handle(kir::MmaRoleStart* start) override;
  void handle(kir::MmaTile* tile) override;
  // control_flow.cpp
  void handle(kir::ForLoop* loop) override;
  void handle(kir::IfThenElse* branch) override;
  void handle(kir::BlockSync* sync) override;
  // Anything else has no CUDA form: an internal error.
  void handle(Expr* expr) override;

  // A value as a C++ expression: a tensor element, a named scalar, a
  // literal, or a scalar computed inline.
  std::string gen(Val* v);
  // `v` as an operand of arithmetic in `dtype` (cast when needed).
  std::string operand(Val* v, DataType dtype);
  // A random op's `index` as (base, lane): the index of lane_loop_ plus a
  // base proven a multiple of the lanes one Philox block serves, in a loop
  // whose trip count is one too; nullopt otherwise (arith.cpp).
  std::optional<std::pair<Val*, Val*>> laneOfIndex(
      Val* index, DataType compute) const;
  // The C++ expression of a scalar expr (arith.cpp).
  std::string inlineExpr(Expr* def);
  // The copy inside a vectorized loop, as one vector access (memory.cpp).
  void vectorizedCopy(const kir::ForLoop* loop);

  // mma.cpp: the pipeline's type (before the kernel function) and its
  // kernel parameters and constants (in its body).
  std::string mmaDeclarations() const;
  std::string mmaParameters() const;
  void mmaPreamble();

  void line(const std::string& text);
  // Prints `exprs` one level deeper.
  void block(const std::vector<Expr*>& exprs);

  const LoweredKernel& kernel_;
  std::stringstream os_;
  int depth_ = 1;
  // The caches of the random ops' Philox blocks (runtime/random.h), one
  // per op, named fuser_rng<k> in the order the ops are printed.
  std::unordered_map<const Expr*, size_t> rng_caches_;
  // The unrolled loop (constant bounds, from 0) whose body is printed now,
  // with no branch or other loop in between; nullptr elsewhere. A random
  // op directly in it may draw per lane (arith.cpp, handle(RNGOp*)).
  const kir::ForLoop* lane_loop_ = nullptr;
};

// The C++ literal of a constant scalar (arith.cpp).
std::string literal(const Val* v);

// The C++ expression of `x`, of type `from`, converted to `to`
// (arith.cpp): castTo, or the functions of runtime/complex.h.
std::string castExpr(const std::string& x, DataType from, DataType to);

// `a = a op b` for a reduction, the body of the reduction's lambda
// (reduction.cpp).
std::string reductionUpdate(
    ReductionOpType op, const std::string& a, const std::string& b);

} // namespace fuser::codegen
