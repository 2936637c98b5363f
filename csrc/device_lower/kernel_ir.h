// Kernel IR: the loop-nest form a fusion is lowered to (doc/design.md §5).
//
// Kernel IR nodes live in the lowered copy of the fusion next to the fusion
// IR nodes they refer to. Tensor exprs keep their fusion IR classes
// (UnaryOp, LoadStoreOp, ...) but read and write TensorIndex operands after
// index lowering. Structure (loops, branches, allocations) is expressed with
// the nodes below; they have no data inputs or outputs.
#pragma once

#include <ir/all_nodes.h>

#include <string>
#include <vector>

namespace fuser::kir {

// Element `index` of a tensor, in the tensor's memory (global: the linear
// offset from the allocation domain; local/shared: the buffer offset).
class TensorIndex : public Val {
 public:
  TensorIndex(TensorView* view, Val* index);

  TensorView* view() const {
    return view_;
  }
  Val* index() const {
    return index_;
  }

  std::string toString(int indent_size = 0) const override;
  std::string toInlineString() const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  TensorView* view_;
  Val* index_;
};

// A scalar known to the generated code by name: threadIdx.x, blockDim.x,
// last_block0, ... and, as TensorParameterField below, the size and stride
// fields of a tensor's kernel argument.
class NamedScalar : public Val {
 public:
  NamedScalar(std::string name, DataType dtype);

  const std::string& scalarName() const {
    return name_;
  }

  // threadIdx, blockIdx, blockDim or gridDim: CUDA's unsigned launch
  // variables.
  bool isLaunchVariable() const;

  std::string toString(int indent_size = 0) const override;
  std::string toInlineString() const override;
  bool sameAs(const Statement* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  std::string name_;
};

// A field of a tensor's kernel argument: its logical size along logical
// axis `position` (prints as T<n>.logical_size[position]) or its stride
// along allocation axis `position`, counted without reductions
// (T<n>.alloc_stride[position]). It is a NamedScalar under that name, so
// codegen, the expression evaluator and the simplifier treat it as the leaf
// they always did; analyses read the tensor and position from it instead of
// parsing the name.
class TensorParameterField : public NamedScalar {
 public:
  enum class Field { LogicalSize, AllocStride };

  TensorParameterField(TensorView* tensor, Field field, int64_t position);

  TensorView* tensor() const {
    return tensor_;
  }
  Field field() const {
    return field_;
  }
  int64_t position() const {
    return position_;
  }

  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  TensorView* tensor_;
  Field field_;
  int64_t position_;
};

// A list of exprs; loops and branches own one.
class Scope {
 public:
  const std::vector<Expr*>& exprs() const {
    return exprs_;
  }
  std::vector<Expr*>& mutableExprs() {
    return exprs_;
  }
  void push_back(Expr* expr) {
    exprs_.push_back(expr);
  }
  bool empty() const {
    return exprs_.empty();
  }

 private:
  std::vector<Expr*> exprs_;
};

// One loop of the nest, made for a loop IterDomain. Thread- and
// block-parallel loops print no `for`: their index is threadIdx/blockIdx.
// The loop's parallel type is that of the expr that opened it, which may
// differ from its ID's when loop promotion gave it another tensor's ID
// (doc/indexing.md §1).
class ForLoop : public Expr {
 public:
  ForLoop(IterDomain* iter_domain, Val* index, Val* start, Val* stop);
  ForLoop(
      IterDomain* iter_domain, ParallelType parallel_type, Val* index,
      Val* start, Val* stop);

  // The ID whose extent the loop runs over and whose chain its index
  // follows (doc/indexing.md §1).
  IterDomain* iterDomain() const {
    return iter_domain_;
  }
  Val* index() const {
    return index_;
  }
  void setIndex(Val* index) {
    index_ = index;
  }
  Val* start() const {
    return start_;
  }
  Val* stop() const {
    return stop_;
  }
  void setStop(Val* stop) {
    stop_ = stop;
  }
  ParallelType parallelType() const {
    return parallel_type_;
  }
  bool isThreadParallel() const {
    return isParallelTypeThreadDim(parallel_type_) ||
           isParallelTypeBlockDim(parallel_type_);
  }
  bool isDeviceParallel() const {
    return isParallelTypeDeviceDim(parallel_type_);
  }
  // Loops that the codegen does not emit as a `for`.
  bool isTrivial() const;

  Scope& body() {
    return body_;
  }
  const Scope& body() const {
    return body_;
  }

  std::string getOpString() const override {
    return "ForLoop";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  IterDomain* iter_domain_;
  ParallelType parallel_type_;
  Val* index_;
  Val* start_;
  Val* stop_;
  Scope body_;
};

class IfThenElse : public Expr {
 public:
  explicit IfThenElse(Val* predicate);

  Val* predicate() const {
    return predicate_;
  }
  void setPredicate(Val* predicate) {
    predicate_ = predicate;
  }
  Scope& thenBody() {
    return then_body_;
  }
  const Scope& thenBody() const {
    return then_body_;
  }
  Scope& elseBody() {
    return else_body_;
  }
  const Scope& elseBody() const {
    return else_body_;
  }

  std::string getOpString() const override {
    return "IfThenElse";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  Val* predicate_;
  Scope then_body_;
  Scope else_body_;
};

// A register or shared-memory buffer for a tensor that is not global.
class Allocate : public Expr {
 public:
  Allocate(TensorView* buffer, MemoryType memory_type, Val* size);

  TensorView* buffer() const {
    return buffer_;
  }
  MemoryType memoryType() const {
    return memory_type_;
  }
  Val* size() const {
    return size_;
  }

  std::string getOpString() const override {
    return "Allocate";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  TensorView* buffer_;
  MemoryType memory_type_;
  Val* size_;
};

// __syncthreads().
class BlockSync : public Expr {
 public:
  BlockSync() = default;
  std::string getOpString() const override {
    return "BlockSync";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;
};

// The thread and block dimensions a reduction spans.
struct ReducedDims {
  bool threads[3] = {false, false, false}; // x, y, z
  bool blocks[3] = {false, false, false};
  bool anyThread() const {
    return threads[0] || threads[1] || threads[2];
  }
  bool anyBlock() const {
    return blocks[0] || blocks[1] || blocks[2];
  }
};

// A reduction across threads (and blocks) of the value each one holds
// (runtime/block_reduction.h, runtime/grid_reduction.h): out = op(out,
// reduction of in over `dims`), valid in the leaders of each segment (and,
// across blocks, of the last block of each group, which `last_block` then
// says), or, within a block, in every thread of the segment when they use
// it again (resultInEveryThread: a normalization). Every thread must reach it:
// it is never under a branch; its predicate is an argument (lanes outside it
// contribute `init`).
class ParallelReduction : public Expr {
 public:
  ParallelReduction(
      ReductionOpType op_type, Val* init, Val* out, Val* in, ReducedDims dims,
      Val* last_block, int64_t buffer_index);

  ReductionOpType opType() const {
    return op_type_;
  }
  Val* init() const {
    return init_;
  }
  Val* out() const {
    return output(0);
  }
  Val* in() const {
    return input(0);
  }
  const ReducedDims& dims() const {
    return dims_;
  }
  // Across blocks: the flag it sets and the position of its buffers in
  // LoweredKernel::grid_buffers; nullptr and -1 within a block.
  Val* lastBlock() const {
    return last_block_;
  }
  int64_t bufferIndex() const {
    return buffer_index_;
  }
  Val* predicate() const {
    return predicate_;
  }
  void setPredicate(Val* predicate) {
    predicate_ = predicate;
  }
  // Values reduced by this one call (ParallelType::Group): out and in are
  // then the first of `groupSize()` consecutive register elements.
  int64_t groupSize() const {
    return group_size_;
  }
  void setGroupSize(int64_t size) {
    group_size_ = size;
  }
  bool resultInEveryThread() const {
    return result_in_every_thread_;
  }
  void setResultInEveryThread(bool every_thread) {
    result_in_every_thread_ = every_thread;
  }

  std::string getOpString() const override {
    return "ParallelReduction";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  ReductionOpType op_type_;
  Val* init_;
  ReducedDims dims_;
  Val* last_block_;
  int64_t buffer_index_;
  Val* predicate_ = nullptr;
  int64_t group_size_ = 1;
  bool result_in_every_thread_ = false;
};

// Names of the special scalars codegen prints for parallel indices and
// extents (threadIdx.x, blockDim.x, ...).
Val* parallelIndex(ParallelType pt);
Val* parallelExtent(ParallelType pt);

// Prints a list of kernel IR exprs, one line each, nested by scope.
std::string toString(const std::vector<Expr*>& exprs);

} // namespace fuser::kir
