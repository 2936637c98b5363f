// How the bulk tensor copy engine (TMA) reads tiles of a matmul operand
// (doc/matmul.md §4), in one place for the scheduler that decides whether
// an operand can be copied so, the lowering that writes the copies and the
// runtime that encodes the tensor maps.
//
// The map's dimensions are the operand's allocation axes, folded
// (layout/allocation_folding.h) and innermost first. Each is a logical axis
// of the operand, or one part of a split of one, so that a tile's
// coordinate along it follows from the tile's M (or N), K and batch
// indices: index / div for an outer part, index % mod for an inner part
// (both the split's inner extent). A tile is one box: kTileK along the
// innermost part of K, the tile's rows along the innermost part of M (N),
// one element along everything else. The innermost axis in memory decides
// how the tile lies in shared memory: K innermost is "K-major" (rows of
// kTileK elements), M (N) innermost "MN-major" (boxes of 64 M (N) elements
// by kTileK, 128-byte rows); both are what wgmma reads, swizzled by the
// row's bytes.
#pragma once

#include <ir/mma_op.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fuser {

// A tensor map's shape, free of any pointer: elements and the box per
// dimension (innermost first), byte strides of dimensions 1.. (dimension 0
// has unit stride), and the swizzle span.
struct TensorMapGeometry {
  DataType dtype = DataType::BFloat16;
  std::vector<int64_t> sizes;
  std::vector<int64_t> box;
  std::vector<int64_t> strides_bytes;
  int64_t swizzle_bytes = 128;

  std::string toString() const;
};

// Why `geometry` cannot be a tensor map (at most 5 dimensions, byte strides
// multiples of 16 below 2^40, boxes of 1 to 256 elements whose innermost
// extent spans a multiple of 16 bytes and at most the swizzle span, a data
// pointer aligned to 16 bytes); "" when it can.
std::string tensorMapViolation(
    const TensorMapGeometry& geometry, int64_t pointer_alignment);

// The role of a map dimension in TileCoordinates (runtime/hopper_matmul.h).
constexpr int kTmaRoleMn = 0;
constexpr int kTmaRoleK = 1;
constexpr int kTmaRoleBatch = 2; // + the batch axis's index

struct TmaDim {
  IterDomain* id = nullptr;   // the folded allocation axis
  size_t stride_position = 0; // its stride: allocation stride k
  int role = kTmaRoleMn;
  // The inner extent of the split this dimension is a part of (null for a
  // whole logical axis): the divisor of an outer part, the modulus of an
  // inner one.
  Val* div = nullptr;
  Val* mod = nullptr;
  int64_t box = 1;
};

struct TmaOperandLayout {
  std::vector<TmaDim> dims; // innermost first
  bool mn_major = false;
  int64_t swizzle_bytes = 128;
  // Bytes of the tile in shared memory.
  int64_t tile_bytes = 0;
  // Split extents that must be multiples of a box (checked at run time
  // when they are not constants): a tile never straddles two parts.
  std::vector<std::pair<Val*, int64_t>> divisible;
};

// How the copy engine reads `tile_mn` x `tile_k` tiles of `operand`, whose
// logical axes have `roles` in a matrix product, or nullopt with `reason`.
// `operand` may also be a shared-memory cache of one: its allocation then
// says how the tile lies in shared memory. With `slices` > 1 the blocks of
// a cluster each load 1 / `slices` of the tile along M (N) and multicast
// it (runtime/hopper_matmul.h): a K-major box spans one slice's rows.
std::optional<TmaOperandLayout> describeTmaOperand(
    const TensorView* operand, const std::vector<MmaRole>& roles,
    int64_t tile_mn, int64_t tile_k, std::string* reason, int64_t slices = 1);

// Whether two descriptions put a tile in shared memory the same way (the
// same roles, parts and boxes per dimension).
bool sameTileLayout(const TmaOperandLayout& a, const TmaOperandLayout& b);

// The geometry of `layout` for one run: `dim_sizes` the evaluated extents
// of its dims' IDs, `allocation_strides` the operand's allocation strides
// in elements.
TensorMapGeometry tmaGeometry(
    const TmaOperandLayout& layout, DataType dtype,
    const std::vector<int64_t>& dim_sizes,
    const std::vector<int64_t>& allocation_strides);

} // namespace fuser
