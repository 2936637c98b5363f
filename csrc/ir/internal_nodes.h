// Tensor and scalar exprs: LoadStoreOp, UnaryOp, BinaryOp, TernaryOp,
// BroadcastOp, ExpandOp, ReductionOp, ViewOp, ... Split and Merge live with
// IterDomain.
#pragma once

#include <ir/interface_nodes.h>

#include <utility>
#include <vector>

namespace fuser {

// A copy (set, cache, permute). A permute is a LoadStoreOp whose output has
// a root domain in the input's order and a permuted logical domain.
class LoadStoreOp : public Expr {
 public:
  LoadStoreOp(
      LoadStoreOpType op_type, Val* out, Val* in,
      CacheOp cache_op = CacheOp::Unspecified);

  Val* out() const {
    return output(0);
  }
  Val* in() const {
    return input(0);
  }
  LoadStoreOpType opType() const {
    return op_type_;
  }
  // Schedulers choose how a cache is filled (e.g. by the bulk copy engine).
  void setOpType(LoadStoreOpType op_type) {
    op_type_ = op_type;
  }
  CacheOp cacheOp() const {
    return cache_op_;
  }
  // How a load from global memory uses the caches (codegen/memory.cpp).
  void setCacheOp(CacheOp cache_op) {
    cache_op_ = cache_op;
  }

  std::string getOpString() const override {
    return "LoadStoreOp";
  }
  std::string toString(int indent_size = 0) const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  LoadStoreOpType op_type_;
  CacheOp cache_op_;
};

class UnaryOp : public Expr {
 public:
  UnaryOp(UnaryOpType op_type, Val* out, Val* in);

  Val* out() const {
    return output(0);
  }
  Val* in() const {
    return input(0);
  }
  UnaryOpType opType() const {
    return op_type_;
  }

  std::string getOpString() const override {
    return "UnaryOp";
  }
  std::string toString(int indent_size = 0) const override;
  std::string toInlineString() const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  UnaryOpType op_type_;
};

class BinaryOp : public Expr {
 public:
  BinaryOp(BinaryOpType op_type, Val* out, Val* lhs, Val* rhs);

  Val* out() const {
    return output(0);
  }
  Val* lhs() const {
    return input(0);
  }
  Val* rhs() const {
    return input(1);
  }
  BinaryOpType opType() const {
    return op_type_;
  }

  std::string getOpString() const override {
    return "BinaryOp";
  }
  std::string toString(int indent_size = 0) const override;
  std::string toInlineString() const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  BinaryOpType op_type_;
};

class TernaryOp : public Expr {
 public:
  TernaryOp(TernaryOpType op_type, Val* out, Val* in1, Val* in2, Val* in3);

  Val* out() const {
    return output(0);
  }
  TernaryOpType opType() const {
    return op_type_;
  }

  std::string getOpString() const override {
    return "TernaryOp";
  }
  std::string toString(int indent_size = 0) const override;
  std::string toInlineString() const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  TernaryOpType op_type_;
};

// Inserts broadcast axes: is_broadcast_dims[i] says whether output logical
// axis i is new.
class BroadcastOp : public Expr {
 public:
  BroadcastOp(Val* out, Val* in, std::vector<bool> is_broadcast_dims);

  Val* out() const {
    return output(0);
  }
  Val* in() const {
    return input(0);
  }
  // Every input axis, to the output axes that are not new broadcasts.
  std::vector<std::pair<size_t, size_t>> mappedAxes(
      const TensorView* producer) const override;
  const std::vector<bool>& getBroadcastDimFlags() const {
    return is_broadcast_dims_;
  }

  std::string getOpString() const override {
    return "BroadcastOp";
  }
  std::string toString(int indent_size = 0) const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  std::vector<bool> is_broadcast_dims_;
};

// torch.expand: the output has the input's axes, each broadcast axis that
// was given a size becoming an Iteration axis of that extent (the op's
// output domain holds the sizes; the op itself has no attributes). In a
// kernel it is a copy that reads the input's one element along the
// expanded axes; a fusion output made by it is written in full (doc/ops.md).
class ExpandOp : public Expr {
 public:
  ExpandOp(Val* out, Val* in);

  Val* out() const {
    return output(0);
  }
  Val* in() const {
    return input(0);
  }
  // The logical positions it expands: broadcast in its input, not in its
  // output (doc/ops.md "Expand").
  std::vector<int64_t> expandedAxes() const;

  std::string getOpString() const override {
    return "ExpandOp";
  }
  std::string toString(int indent_size = 0) const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;
};

// Reduces the axes that are Reduction IDs in the output's logical domain.
class ReductionOp : public Expr {
 public:
  ReductionOp(ReductionOpType op_type, Val* init, Val* out, Val* in);

  Val* out() const {
    return output(0);
  }
  Val* in() const {
    return input(0);
  }
  Val* init() const {
    return init_;
  }
  ReductionOpType opType() const {
    return op_type_;
  }
  // Every input axis but a reduced broadcast: reducing one element drops
  // the axis, as a squeeze does. Joined to the axis the broadcast stands
  // for elsewhere (a row), the reduction's loop of one would take that
  // axis's splits and share its loops (doc/reduction.md §1).
  std::vector<std::pair<size_t, size_t>> mappedAxes(
      const TensorView* producer) const override;

  std::string getOpString() const override {
    return "ReductionOp";
  }
  std::string toString(int indent_size = 0) const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  ReductionOpType op_type_;
  Val* init_;
};

// Reshape: the output's root mirrors the input's logical domain; its logical
// domain is derived from root by Split/Merge exprs.
// reshape: `out` views `in` with the sizes `sizes` asked for (integer
// scalars, inputs after `in`); the product must be `in`'s element count,
// which the evaluator checks (ops/alias.h).
class ViewOp : public Expr {
 public:
  ViewOp(Val* out, Val* in, const std::vector<Val*>& sizes);

  Val* out() const {
    return output(0);
  }
  Val* in() const {
    return input(0);
  }
  std::vector<Val*> sizes() const {
    return {inputs().begin() + 1, inputs().end()};
  }

  std::string getOpString() const override {
    return "ViewOp";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;
};

// A tensor with every element `fill_value()` (a scalar): `out`'s logical
// extents are the inputs after it (ops/factory.h).
class FullOp : public Expr {
 public:
  FullOp(Val* out, Val* fill_value);

  Val* out() const {
    return output(0);
  }
  Val* fillValue() const {
    return input(0);
  }

  std::string getOpString() const override {
    return "FullOp";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;
};

// The 1-D tensor start, start + step, ..., of `length()` elements in
// `out`'s type: element i is start + step * i (ops/factory.h).
class IotaOp : public Expr {
 public:
  IotaOp(Val* out, Val* length, Val* start, Val* step);

  Val* out() const {
    return output(0);
  }
  Val* length() const {
    return input(0);
  }
  Val* start() const {
    return input(1);
  }
  Val* step() const {
    return input(2);
  }

  std::string getOpString() const override {
    return "IotaOp";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;
};

// A random tensor (ops/random.h): element i, i its logical linear index, is
// drawn from the distribution `opType()` with parameters (a, b) (low and
// high, or mean and standard deviation) by the counter-based generator of
// runtime/random.h keyed by (seed, offset). The inputs after those four are
// the output's extents; after lowering, the element's linear index.
class RNGOp : public Expr {
 public:
  RNGOp(
      RNGOpType op_type, Val* out, Val* seed, Val* offset, Val* a, Val* b,
      const std::vector<Val*>& extra);

  Val* out() const {
    return output(0);
  }
  RNGOpType opType() const {
    return op_type_;
  }
  Val* seed() const {
    return input(0);
  }
  Val* offset() const {
    return input(1);
  }
  Val* a() const {
    return input(2);
  }
  Val* b() const {
    return input(3);
  }
  // The inputs after the four parameters.
  std::vector<Val*> extra() const {
    return {inputs().begin() + 4, inputs().end()};
  }

  std::string getOpString() const override {
    return "RNGOp";
  }
  std::string toString(int indent_size = 0) const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  RNGOpType op_type_;
};

// The running combination of `in` along logical axis `dim()`: element k of
// that axis is in[0] op ... op in[k] (torch.cumsum, torch.cumprod). No
// scheduler compiles it yet: it runs through ATen as a segment of its own
// (doc/ops.md, "Scans").
class ScanOp : public Expr {
 public:
  ScanOp(ScanOpType op_type, Val* out, Val* in, int64_t dim);

  Val* out() const {
    return output(0);
  }
  Val* in() const {
    return input(0);
  }
  ScanOpType opType() const {
    return op_type_;
  }
  int64_t dim() const {
    return dim_;
  }

  std::string getOpString() const override {
    return "ScanOp";
  }
  std::string toString(int indent_size = 0) const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  ScanOpType op_type_;
  int64_t dim_;
};

// Reads `in` at positions given by indices (ops/indexing.h): select (a
// scalar index along `dim()`), index_select (a 1-D index tensor along
// `dim()`), gather (an index tensor of the output's shape) and scatter (the
// output is `in` with `src()` written at `index()` along `dim()`). Inputs:
// in, index, then src for scatter. No scheduler compiles one yet: it runs
// through ATen as a segment of its own.
class IndexOp : public Expr {
 public:
  IndexOp(
      IndexOpType op_type, Val* out, Val* in, Val* index, int64_t dim,
      Val* src = nullptr);

  Val* out() const {
    return output(0);
  }
  Val* in() const {
    return input(0);
  }
  Val* index() const {
    return input(1);
  }
  Val* src() const {
    return inputs().size() > 2 ? input(2) : nullptr;
  }
  IndexOpType opType() const {
    return op_type_;
  }
  int64_t dim() const {
    return dim_;
  }
  // The axes the op does not index through.
  std::vector<std::pair<size_t, size_t>> mappedAxes(
      const TensorView* producer) const override;

  std::string getOpString() const override {
    return "IndexOp";
  }
  std::string toString(int indent_size = 0) const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  IndexOpType op_type_;
  int64_t dim_;
};

// slice, pad and cat (ops/resize.h): the output's axes are the input's,
// some resized. Inputs: the tensors (one, or cat's several), then the
// scalars (slice: start, stop, step per axis; pad: the value, then torch's
// pad widths, last axis first). `resized()[i]`: whether output axis i
// differs in extent from the inputs' axis i. A pointwise kernel reads its
// inputs in place (doc/ops.md); alone, or where no kernel takes it, it
// runs through ATen.
class ResizeOp : public Expr {
 public:
  ResizeOp(
      ResizeOpType op_type, Val* out, const std::vector<Val*>& tensors,
      const std::vector<Val*>& scalars, std::vector<bool> resized,
      int64_t dim = 0);

  Val* out() const {
    return output(0);
  }
  ResizeOpType opType() const {
    return op_type_;
  }
  // The tensor inputs, then the scalar ones.
  std::vector<Val*> tensors() const {
    return {inputs().begin(), inputs().begin() + num_tensors_};
  }
  std::vector<Val*> scalars() const {
    return {inputs().begin() + num_tensors_, inputs().end()};
  }
  const std::vector<bool>& resized() const {
    return resized_;
  }
  // cat's axis.
  int64_t dim() const {
    return dim_;
  }
  // The axes not resized.
  std::vector<std::pair<size_t, size_t>> mappedAxes(
      const TensorView* producer) const override;

  std::string getOpString() const override {
    return "ResizeOp";
  }
  std::string toString(int indent_size = 0) const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  ResizeOpType op_type_;
  std::vector<bool> resized_;
  int64_t dim_;
  std::ptrdiff_t num_tensors_;
};

} // namespace fuser
