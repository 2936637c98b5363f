// IrBuilder::create<T>(args...) constructs a node in the current Fusion
// (FusionGuard) and registers it (naming it; wiring definition/uses).
#pragma once

#include <base/exceptions.h>
#include <fusion.h>

#include <utility>

namespace fuser {

class IrBuilder {
 public:
  template <typename T, typename... Args>
  static T* create(Args&&... args) {
    Fusion* fusion = FusionGuard::getCurFusion();
    FUSER_CHECK(
        fusion != nullptr,
        "No active Fusion: create a `FusionGuard fg(fusion.get());` before "
        "building IR nodes.");
    return createInContainer<T>(fusion, std::forward<Args>(args)...);
  }

  template <typename T, typename... Args>
  static T* createInContainer(Fusion* fusion, Args&&... args) {
    T* node = new T(std::forward<Args>(args)...);
    fusion->registerStatement(node);
    return node;
  }

  // Scalar arithmetic that folds constants, for extents and indices.
  static Val* addExpr(Val* a, Val* b);
  static Val* subExpr(Val* a, Val* b);
  static Val* mulExpr(Val* a, Val* b);
  static Val* divExpr(Val* a, Val* b);
  static Val* ceilDivExpr(Val* a, Val* b);
  static Val* modExpr(Val* a, Val* b);
  static Val* binaryExpr(BinaryOpType op, Val* a, Val* b);
  static Val* indexConst(int64_t value);
};

} // namespace fuser
