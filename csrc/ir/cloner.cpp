#include <ir/cloner.h>

#include <fusion.h>

namespace fuser {

Statement* IrCloner::clone(const Statement* stmt) {
  if (stmt == nullptr) {
    return nullptr;
  }
  auto it = clones_.find(stmt);
  if (it != clones_.end()) {
    return it->second;
  }
  Statement* copy = stmt->cloneWith(*this);
  // Copies keep their names so printouts of a clone read the same.
  target_->setStatementName(copy, stmt->name());
  clones_[stmt] = copy;
  return copy;
}

void IrCloner::registerClone(const Statement* original, Statement* copy) {
  clones_[original] = copy;
}

} // namespace fuser
