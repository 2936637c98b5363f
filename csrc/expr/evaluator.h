// Evaluates scalar Vals on the host: constants, bound values, and
// expressions (BinaryOp/UnaryOp chains) over them. Used for launch
// parameters, allocation sizes, and to check index math in tests.
#pragma once

#include <ir/base_nodes.h>

#include <optional>
#include <string>
#include <unordered_map>

namespace fuser {

class ExpressionEvaluator {
 public:
  // Bind a symbolic scalar (overrides earlier bindings).
  void bind(const Val* value, ScalarValue concrete);
  // Bind by the name a Val prints as (e.g. "i3", "T0.logical_size[0]").
  void bind(const std::string& name, ScalarValue concrete);

  // The value, or nullopt when something it depends on is unbound.
  std::optional<ScalarValue> evaluate(const Val* value);
  // The value; a user-facing error naming the missing input otherwise.
  ScalarValue evaluateOrThrow(const Val* value);

  // Forget cached results of derived values (bindings stay).
  void invalidateCache() {
    cache_.clear();
  }

 private:
  std::unordered_map<const Val*, ScalarValue> bindings_;
  std::unordered_map<std::string, ScalarValue> named_bindings_;
  std::unordered_map<const Val*, ScalarValue> cache_;
};

// Applies a BinaryOp / UnaryOp to concrete scalars (shared with codegen
// tests and the simplifier's constant folding).
ScalarValue evaluateBinaryOp(
    BinaryOpType op, const ScalarValue& a, const ScalarValue& b,
    DataType out_type);
ScalarValue evaluateUnaryOp(
    UnaryOpType op, const ScalarValue& a, DataType out_type);

} // namespace fuser
