// Kernel IR of the matmul pipeline (doc/matmul.md §3): the setup of its
// barriers, the start of a warpgroup's role, and one output tile of a
// matrix product, copied in by the producer or multiplied by a consumer.
// Codegen prints them as calls of runtime/hopper_matmul.h.
#pragma once

#include <device_lower/kernel_ir.h>

#include <vector>

namespace fuser::kir {

// Initializes the ring's barriers; a BlockSync follows.
class MmaPipelineInit : public Expr {
 public:
  MmaPipelineInit() = default;
  std::string getOpString() const override {
    return "MmaPipelineInit";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;
};

// The start of the producer's or a consumer's code: its register budget
// and its position in the ring.
class MmaRoleStart : public Expr {
 public:
  explicit MmaRoleStart(bool producer) : producer_(producer) {}
  bool producer() const {
    return producer_;
  }
  std::string getOpString() const override {
    return "MmaRoleStart";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  bool producer_;
};

// One output tile at (m0, n0, batch): the producer copies its operand
// tiles of every k-step into the ring, a consumer multiplies them into the
// accumulator buffer `acc`. Both run only where `valid` (the tile exists);
// every thread of a warpgroup reaches it.
class MmaTile : public Expr {
 public:
  enum class Role { Load, Compute };

  MmaTile(
      Role role, TensorView* acc, Val* m0, Val* n0, std::vector<Val*> batch,
      Val* k_tiles, Val* valid);

  Role role() const {
    return role_;
  }
  TensorView* acc() const {
    return acc_;
  }
  Val* m0() const {
    return m0_;
  }
  Val* n0() const {
    return n0_;
  }
  const std::vector<Val*>& batch() const {
    return batch_;
  }
  Val* kTiles() const {
    return k_tiles_;
  }
  Val* valid() const {
    return valid_;
  }
  // The same tile in another role.
  MmaTile* withRole(Role role) const;

  std::string getOpString() const override {
    return "MmaTile";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  Role role_;
  TensorView* acc_;
  Val* m0_;
  Val* n0_;
  std::vector<Val*> batch_;
  Val* k_tiles_;
  Val* valid_;
};

} // namespace fuser::kir
