#include <fusion.h>

#include <ir/all_nodes.h>
#include <ir/cloner.h>

#include <algorithm>
#include <sstream>

namespace fuser {

namespace {
thread_local Fusion* active_fusion = nullptr;
} // namespace

FusionGuard::FusionGuard(Fusion* fusion) : prev_fusion_(active_fusion) {
  active_fusion = fusion;
}

FusionGuard::~FusionGuard() {
  active_fusion = prev_fusion_;
}

Fusion* FusionGuard::getCurFusion() {
  return active_fusion;
}

void FusionGuard::setCurFusion(Fusion* fusion) {
  active_fusion = fusion;
}

Fusion::~Fusion() {
  clear();
}

void Fusion::clear() {
  inputs_.clear();
  outputs_.clear();
  statement_index_.clear();
  // Exprs first: nothing refers back to them from Vals after this.
  statements_.clear();
  val_name_counters_.clear();
  expr_name_counter_ = 0;
  zero_val_ = nullptr;
  one_val_ = nullptr;
}

Fusion::Fusion(const Fusion& other) {
  Fusion::copy(&other, this);
}

Fusion& Fusion::operator=(const Fusion& other) {
  if (this != &other) {
    clear();
    Fusion::copy(&other, this);
  }
  return *this;
}

IrCloner Fusion::copy(const Fusion* from, Fusion* to) {
  FUSER_INTERNAL_ASSERT(
      to->statements_.empty(), "Fusion::copy needs an empty target");
  IrCloner cloner(to);
  // Vals first, then exprs, each in creation order, so names and the order
  // of uses are preserved.
  for (const auto& stmt : from->statements_) {
    if (stmt->isVal()) {
      cloner.clone(stmt.get());
    }
  }
  for (const auto& stmt : from->statements_) {
    if (stmt->isExpr()) {
      cloner.clone(stmt.get());
    }
  }
  for (Val* input : from->inputs_) {
    to->inputs_.push_back(cloner.clone(input));
  }
  for (Val* output : from->outputs_) {
    to->outputs_.push_back(cloner.clone(output));
  }
  if (from->zero_val_ != nullptr) {
    to->zero_val_ = cloner.clone(from->zero_val_);
  }
  if (from->one_val_ != nullptr) {
    to->one_val_ = cloner.clone(from->one_val_);
  }
  return cloner;
}

void Fusion::registerStatement(Statement* stmt) {
  FUSER_INTERNAL_ASSERT(stmt->fusion_ == nullptr, "statement registered twice");
  stmt->fusion_ = this;
  statement_index_[stmt] = statements_.size();
  statements_.emplace_back(stmt);
  if (auto* val = dynamic_cast<Val*>(stmt)) {
    stmt->name_ = val_name_counters_[static_cast<int>(val->vtype())]++;
    return;
  }
  auto* expr = static_cast<Expr*>(stmt);
  stmt->name_ = expr_name_counter_++;
  for (Val* input : expr->inputs()) {
    FUSER_INTERNAL_ASSERT(
        inContainer(input), "input of ", expr->getOpString(),
        " belongs to another Fusion");
    // An expr reading a value twice (add(tv, tv)) is one use of it.
    auto& uses = input->uses_;
    if (std::find(uses.begin(), uses.end(), expr) == uses.end()) {
      uses.push_back(expr);
    }
  }
  for (Val* output : expr->outputs()) {
    FUSER_INTERNAL_ASSERT(
        output->definition_ == nullptr, output->toString(),
        " already has a definition");
    output->definition_ = expr;
  }
}

void Fusion::setStatementName(Statement* stmt, int64_t name) {
  stmt->name_ = name;
  if (auto* val = dynamic_cast<Val*>(stmt)) {
    auto& counter = val_name_counters_[static_cast<int>(val->vtype())];
    counter = std::max(counter, name + 1);
  } else {
    expr_name_counter_ = std::max(expr_name_counter_, name + 1);
  }
}

bool Fusion::inContainer(const Statement* stmt) const {
  return stmt != nullptr && stmt->fusion() == this &&
         statement_index_.count(stmt) != 0;
}

void Fusion::removeExpr(Expr* expr) {
  FUSER_INTERNAL_ASSERT(inContainer(expr), "removing a foreign expr");
  for (Val* input : expr->inputs()) {
    auto& uses = input->uses_;
    uses.erase(std::remove(uses.begin(), uses.end(), expr), uses.end());
  }
  for (Val* output : expr->outputs()) {
    if (output->definition_ == expr) {
      output->definition_ = nullptr;
    }
  }
  size_t index = statement_index_.at(expr);
  statement_index_.erase(expr);
  statements_.erase(statements_.begin() + static_cast<int64_t>(index));
  for (size_t i = index; i < statements_.size(); ++i) {
    statement_index_[statements_[i].get()] = i;
  }
}

void Fusion::replaceInput(Expr* expr, Val* old_val, Val* new_val) {
  bool found = false;
  for (auto& input : expr->inputs_) {
    if (input == old_val) {
      input = new_val;
      found = true;
    }
  }
  FUSER_INTERNAL_ASSERT(found, old_val->toString(), " is not an input");
  auto& uses = old_val->uses_;
  uses.erase(std::remove(uses.begin(), uses.end(), expr), uses.end());
  auto& new_uses = new_val->uses_;
  if (std::find(new_uses.begin(), new_uses.end(), expr) == new_uses.end()) {
    new_uses.push_back(expr);
  }
}

void Fusion::replaceOutputOfExpr(Expr* expr, Val* old_val, Val* new_val) {
  bool found = false;
  for (auto& output : expr->outputs_) {
    if (output == old_val) {
      output = new_val;
      found = true;
    }
  }
  FUSER_INTERNAL_ASSERT(found, old_val->toString(), " is not an output");
  old_val->definition_ = nullptr;
  new_val->definition_ = expr;
}

void Fusion::addInput(Val* input) {
  FUSER_CHECK(
      inContainer(input), "addInput: ", input->toString(),
      " belongs to another Fusion.");
  FUSER_CHECK(
      input->definition() == nullptr, "addInput: ", input->toString(),
      " is computed by ", input->definition()->toString(),
      "; a fusion input must not have a definition.");
  FUSER_CHECK(
      !isInput(input), "addInput: ", input->toString(),
      " is already an input.");
  if (auto* tv = dynamic_cast<TensorView*>(input)) {
    tv->setMemoryType(MemoryType::Global);
  }
  inputs_.push_back(input);
}

void Fusion::addOutput(Val* output) {
  FUSER_CHECK(
      inContainer(output), "addOutput: ", output->toString(),
      " belongs to another Fusion.");
  FUSER_CHECK(
      output->isA<TensorView>(), "addOutput: only tensors can be outputs; got ",
      output->toString(), ".");
  FUSER_CHECK(
      !isOutput(output), "addOutput: ", output->toString(),
      " is already an output; a fusion returns each tensor once (use the "
      "returned tensor twice, or add a copy: set(tv)).");
  output->as<TensorView>()->setMemoryType(MemoryType::Global);
  outputs_.push_back(output);
}

void Fusion::removeInput(Val* input) {
  auto it = std::find(inputs_.begin(), inputs_.end(), input);
  FUSER_CHECK(
      it != inputs_.end(), "removeInput: ", input->toString(),
      " is not an input.");
  inputs_.erase(it);
}

void Fusion::removeOutput(Val* output) {
  auto it = std::find(outputs_.begin(), outputs_.end(), output);
  FUSER_CHECK(
      it != outputs_.end(), "removeOutput: ", output->toString(),
      " is not an output.");
  outputs_.erase(it);
  demoteFormerOutput(output);
}

// A tensor that is no longer an output (nor an input) is an intermediate
// again: it lives where lowering places intermediates, not in global
// memory no launch allocates.
void Fusion::demoteFormerOutput(Val* former) {
  auto* tv = dynamic_cast<TensorView*>(former);
  if (tv != nullptr && !isOutput(tv) && !isInput(tv)) {
    tv->setMemoryType(MemoryType::Local);
  }
}

void Fusion::replaceOutput(Val* output, Val* replacement) {
  auto it = std::find(outputs_.begin(), outputs_.end(), output);
  FUSER_CHECK(
      it != outputs_.end(), "replaceOutput: ", output->toString(),
      " is not an output.");
  *it = replacement;
  if (auto* tv = dynamic_cast<TensorView*>(replacement)) {
    tv->setMemoryType(MemoryType::Global);
  }
  demoteFormerOutput(output);
}

bool Fusion::isInput(const Val* val) const {
  return std::find(inputs_.begin(), inputs_.end(), val) != inputs_.end();
}

bool Fusion::isOutput(const Val* val) const {
  return std::find(outputs_.begin(), outputs_.end(), val) != outputs_.end();
}

std::vector<Expr*> Fusion::exprs() const {
  // Iterative post-order DFS from the outputs over definitions.
  std::vector<Expr*> order;
  std::unordered_set<const Statement*> visited;
  std::vector<std::pair<Statement*, bool>> stack;
  for (auto it = outputs_.rbegin(); it != outputs_.rend(); ++it) {
    stack.emplace_back(*it, false);
  }
  while (!stack.empty()) {
    auto [stmt, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      if (stmt->isExpr()) {
        order.push_back(static_cast<Expr*>(stmt));
      }
      continue;
    }
    if (!visited.insert(stmt).second) {
      continue;
    }
    stack.emplace_back(stmt, true);
    if (stmt->isExpr()) {
      const auto& inputs = static_cast<Expr*>(stmt)->inputs();
      for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) {
        if (!visited.count(*it)) {
          stack.emplace_back(*it, false);
        }
      }
    } else {
      Expr* def = static_cast<Val*>(stmt)->definition();
      if (def != nullptr && !visited.count(def) &&
          !isInput(static_cast<Val*>(stmt))) {
        stack.emplace_back(def, false);
      }
    }
  }
  return order;
}

std::vector<TensorView*> Fusion::allTvs() const {
  std::vector<TensorView*> tvs;
  std::unordered_set<Val*> seen;
  auto add = [&](Val* val) {
    if (auto* tv = dynamic_cast<TensorView*>(val)) {
      if (seen.insert(tv).second) {
        tvs.push_back(tv);
      }
    }
  };
  for (Val* input : inputs_) {
    add(input);
  }
  for (Expr* expr : exprs()) {
    for (Val* input : expr->inputs()) {
      add(input);
    }
    for (Val* output : expr->outputs()) {
      add(output);
    }
  }
  for (Val* output : outputs_) {
    add(output);
  }
  return tvs;
}

std::vector<Val*> Fusion::vals() const {
  std::vector<Val*> result;
  for (const auto& stmt : statements_) {
    if (stmt->isVal()) {
      result.push_back(static_cast<Val*>(stmt.get()));
    }
  }
  return result;
}

std::vector<Expr*> Fusion::unorderedExprs() const {
  std::vector<Expr*> result;
  for (const auto& stmt : statements_) {
    if (stmt->isExpr()) {
      result.push_back(static_cast<Expr*>(stmt.get()));
    }
  }
  return result;
}

std::string Fusion::mathToString() const {
  std::stringstream ss;
  ss << "Inputs:\n";
  for (Val* input : inputs_) {
    ss << "  " << input->toString() << ", " << input->dtype() << "\n";
  }
  ss << "Outputs:\n";
  for (Val* output : outputs_) {
    ss << "  " << output->toString() << ", " << output->dtype() << "\n";
  }
  ss << "\n%kernel_math {\n";
  for (Expr* expr : exprs()) {
    ss << expr->toString(1);
  }
  ss << "} // %kernel_math\n";
  return ss.str();
}

std::string Fusion::toString() const {
  std::stringstream ss;
  ss << mathToString();
  ss << "\n%domains {\n";
  for (TensorView* tv : allTvs()) {
    ss << tv->domainsToString(1);
  }
  ss << "} // %domains\n";
  return ss.str();
}

void Fusion::print(std::ostream& os) const {
  os << toString() << std::flush;
}

void Fusion::printMath(std::ostream& os) const {
  os << mathToString() << std::flush;
}

Val* Fusion::zeroVal() {
  if (zero_val_ == nullptr) {
    zero_val_ = IrBuilder::createInContainer<Val>(
        this, ScalarValue(int64_t(0)), DataType::Index);
  }
  return zero_val_;
}

Val* Fusion::oneVal() {
  if (one_val_ == nullptr) {
    one_val_ = IrBuilder::createInContainer<Val>(
        this, ScalarValue(int64_t(1)), DataType::Index);
  }
  return one_val_;
}

} // namespace fuser
