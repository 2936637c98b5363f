// Statement, Val and Expr: the base of every IR node.
//
// A Fusion owns every Statement. Vals are values (scalars, IterDomains,
// TensorDomains, TensorViews); Exprs produce Vals from Vals. Each Val knows
// the Expr that defines it and the Exprs that use it. Nodes are created with
// IrBuilder::create<T>(...), which registers them with the active Fusion.
#pragma once

#include <base/exceptions.h>
#include <ir/scalar_value.h>
#include <ir/type.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fuser {

class Fusion;
class Expr;
class IrCloner;
class OptOutDispatch;
class TensorView;

class Statement {
 public:
  virtual ~Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Fusion* fusion() const {
    return fusion_;
  }
  // Unique per kind within a Fusion (T0, T1 for tensors; 0, 1 for IDs...).
  int64_t name() const {
    return name_;
  }

  virtual bool isVal() const {
    return false;
  }
  virtual bool isExpr() const {
    return false;
  }

  template <typename T>
  bool isA() const {
    return dynamic_cast<const T*>(this) != nullptr;
  }
  template <typename T>
  T* as() {
    auto* ptr = dynamic_cast<T*>(this);
    FUSER_INTERNAL_ASSERT(ptr != nullptr, "bad cast of ", toString());
    return ptr;
  }
  template <typename T>
  const T* as() const {
    auto* ptr = dynamic_cast<const T*>(this);
    FUSER_INTERNAL_ASSERT(ptr != nullptr, "bad cast of ", toString());
    return ptr;
  }

  // Multi-line form for Exprs; a short name for Vals.
  virtual std::string toString(int indent_size = 0) const = 0;
  // The form used when this node appears inside another's printout.
  virtual std::string toInlineString() const {
    return toString();
  }

  // Structural equality (same kind, same parameters, same inputs).
  virtual bool sameAs(const Statement* other) const {
    return this == other;
  }

  // Double dispatch for visitors (see dispatch.h).
  virtual void accept(OptOutDispatch& visitor) = 0;

  // Creates a copy of this node in the cloner's target Fusion; inputs and
  // referenced nodes are cloned through the cloner.
  virtual Statement* cloneWith(IrCloner& cloner) const = 0;

 protected:
  Statement() = default;

 private:
  friend class Fusion;
  Fusion* fusion_ = nullptr;
  int64_t name_ = -1;
};

// A value. Plain Vals are scalars, constant (with a value) or symbolic.
class Val : public Statement {
 public:
  // Symbolic scalar.
  explicit Val(DataType dtype);
  // Constant scalar.
  Val(ScalarValue value, DataType dtype);
  // Constant scalar, data type from the value (Int, Double or Bool).
  explicit Val(ScalarValue value);

  bool isVal() const override {
    return true;
  }

  ValType vtype() const {
    return vtype_;
  }
  DataType dtype() const {
    return dtype_;
  }
  // Only for scalars whose type is decided late (Index).
  void resetDataType(DataType dtype) {
    dtype_ = dtype;
  }

  Expr* definition() const {
    return definition_;
  }
  const std::vector<Expr*>& uses() const {
    return uses_;
  }

  bool isScalar() const {
    return vtype_ == ValType::Scalar;
  }
  bool isConst() const {
    return isScalar() && value_.hasValue();
  }
  bool isConstInt() const {
    return isConst() && (value_.isInt() || value_.isBool());
  }
  bool isZeroInt() const {
    return isConstInt() && value_.asInt() == 0;
  }
  bool isOneInt() const {
    return isConstInt() && value_.asInt() == 1;
  }
  const ScalarValue& value() const {
    return value_;
  }
  // For constant integer scalars.
  int64_t constIntValue() const {
    FUSER_INTERNAL_ASSERT(isConstInt(), toString(), " is not a constant int");
    return value_.asInt();
  }

  bool isFusionInput() const;
  bool isFusionOutput() const;

  std::string toString(int indent_size = 0) const override;
  std::string toInlineString() const override;
  bool sameAs(const Statement* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 protected:
  Val(ValType vtype, DataType dtype) : vtype_(vtype), dtype_(dtype) {}

 private:
  friend class Fusion;
  friend class Expr;
  ValType vtype_;
  DataType dtype_;
  ScalarValue value_;
  Expr* definition_ = nullptr;
  std::vector<Expr*> uses_;
};

// An operation. Inputs and outputs are Vals; parameters that are not data
// (a split factor, an op type) are attributes of the subclass.
class Expr : public Statement {
 public:
  bool isExpr() const override {
    return true;
  }

  const std::vector<Val*>& inputs() const {
    return inputs_;
  }
  const std::vector<Val*>& outputs() const {
    return outputs_;
  }
  Val* input(size_t i) const {
    FUSER_INTERNAL_ASSERT(i < inputs_.size(), "input ", i, " out of range");
    return inputs_[i];
  }
  Val* output(size_t i) const {
    FUSER_INTERNAL_ASSERT(i < outputs_.size(), "output ", i, " out of range");
    return outputs_[i];
  }

  // Name of the op, e.g. "Split", "BinaryOp".
  virtual std::string getOpString() const = 0;

  std::string toInlineString() const override;
  // Same op string, same attributes (attributesMatch) and same inputs.
  bool sameAs(const Statement* other) const override;
  // Compares subclass parameters; default: no parameters.
  virtual bool attributesMatch(const Expr* other) const {
    (void)other;
    return true;
  }
  // The axes this expr carries from its tensor input `producer` to its
  // outputs with the same extent, as (position among the producer's logical
  // axes without reductions, position in the output's root domain): what
  // the ID graph joins (id_model/logical_domain_map.h). Default: axis i to
  // axis i, for ops whose inputs and outputs have the same axes (pointwise
  // ops; reductions, which drop a reduced broadcast). Ops that add, drop,
  // move or resize axes override it.
  virtual std::vector<std::pair<size_t, size_t>> mappedAxes(
      const TensorView* producer) const;

 protected:
  Expr() = default;
  void addInput(Val* val);
  void addOutput(Val* val);

 private:
  friend class Fusion;
  std::vector<Val*> inputs_;
  std::vector<Val*> outputs_;
};

// Printing helpers.
std::ostream& operator<<(std::ostream& os, const Statement* stmt);
std::string indent(int size);

} // namespace fuser
