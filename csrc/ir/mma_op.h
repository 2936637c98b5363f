// MmaOp: a matrix product, out = a x b summed over the K axis
// (doc/matmul.md §1). Each logical axis of an operand has a role: Batch
// (both operands have it, paired in order; one side may be a broadcast),
// M (only a), N (only b) or K (exactly one in each, reduced). The output's
// logical domain is [Batch..., M..., N..., rK] and it accumulates in float
// (double for double operands); matmul and linear (ops/matmul.h) build it
// and cast the result.
#pragma once

#include <ir/interface_nodes.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fuser {

enum class MmaRole { Batch, M, N, K };
std::string toString(MmaRole role);

// How the matmul scheduler tiles an MmaOp (doc/matmul.md §2): the output
// tile of a block (m x n, m = 64 per consumer warpgroup), the k-step, and
// the shared-memory stages of the operand ring.
struct MmaTileConfig {
  int64_t m = 128;
  int64_t n = 256;
  int64_t k = 64;
  int64_t stages = 4;
  // Blocks per cluster along M: 2 share each B tile, loading half each and
  // multicasting it to both (runtime/hopper_matmul.h).
  int64_t cluster = 1;
  bool operator==(const MmaTileConfig& other) const {
    return m == other.m && n == other.n && k == other.k &&
           stages == other.stages && cluster == other.cluster;
  }
  std::string toString() const;
};

class MmaOp : public Expr {
 public:
  MmaOp(
      Val* out, Val* a, Val* b, std::vector<MmaRole> a_roles,
      std::vector<MmaRole> b_roles);

  TensorView* out() const {
    return output(0)->as<TensorView>();
  }
  TensorView* a() const {
    return input(0)->as<TensorView>();
  }
  TensorView* b() const {
    return input(1)->as<TensorView>();
  }
  // One role per logical axis (without reductions) of a and b.
  const std::vector<MmaRole>& aRoles() const {
    return a_roles_;
  }
  const std::vector<MmaRole>& bRoles() const {
    return b_roles_;
  }
  const std::vector<MmaRole>& roles(const TensorView* operand) const;
  // The position in out's logical domain of each logical axis (without
  // reductions) of `operand`.
  std::vector<int64_t> outputPositions(const TensorView* operand) const;
  // Each operand axis, to the output axis of its role.
  std::vector<std::pair<size_t, size_t>> mappedAxes(
      const TensorView* producer) const override;
  // out's logical axes of a role, in order.
  std::vector<IterDomain*> outputAxes(MmaRole role) const;

  // Set by the matmul scheduler; lowering reads it.
  const std::optional<MmaTileConfig>& tileConfig() const {
    return tile_config_;
  }
  void setTileConfig(const MmaTileConfig& config) {
    tile_config_ = config;
  }

  std::string getOpString() const override {
    return "MmaOp";
  }
  std::string toString(int indent_size = 0) const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  std::vector<MmaRole> a_roles_;
  std::vector<MmaRole> b_roles_;
  std::optional<MmaTileConfig> tile_config_;
};

class UnaryOp;

// The cast that rounds `mma`'s product to its operands' type (a bf16 or
// half linear as the frontends write it), when it is the product's only
// reader; nullptr otherwise. Run by ATen, the two are one product in that
// type, which cuBLAS writes rounded (doc/matmul.md §1).
UnaryOp* onlyNarrowingCast(const MmaOp* mma);

// The expr through which a product reaches the fusion as the frontends
// write it, when it is the product's only reader: the cast that rounds it
// (onlyNarrowingCast), or the copy that the cast to the operands' own type
// is for a float product (castOp of a tensor to its type is a set).
// nullptr otherwise. Run by ATen, either is the product itself.
Expr* onlyResultExpr(const MmaOp* mma);

} // namespace fuser
