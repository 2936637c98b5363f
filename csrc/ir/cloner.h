// Deep copy of IR nodes into another Fusion. Each node class implements
// cloneWith(IrCloner&), calling clone() on the nodes it references.
#pragma once

#include <ir/base_nodes.h>

#include <unordered_map>
#include <vector>

namespace fuser {

class IrCloner {
 public:
  explicit IrCloner(Fusion* target) : target_(target) {}

  Statement* clone(const Statement* stmt);

  template <typename T>
  T* clone(const T* node) {
    if (node == nullptr) {
      return nullptr;
    }
    return clone(static_cast<const Statement*>(node))->template as<T>();
  }

  template <typename T>
  std::vector<T*> clone(const std::vector<T*>& nodes) {
    std::vector<T*> copies;
    copies.reserve(nodes.size());
    for (auto* node : nodes) {
      copies.push_back(clone(node));
    }
    return copies;
  }

  Fusion* target() const {
    return target_;
  }

  // Record a copy made outside clone() (e.g. by a node's cloneWith before it
  // recurses), so cycles resolve to it.
  void registerClone(const Statement* original, Statement* copy);

 private:
  Fusion* target_;
  std::unordered_map<const Statement*, Statement*> clones_;
};

} // namespace fuser
