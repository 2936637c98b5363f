#include <layout/tma_layout.h>

#include <base/strings_and_math.h>
#include <ir/all_nodes.h>
#include <layout/vectorization.h>

#include <algorithm>
#include <sstream>

namespace fuser {

namespace {

enum class Part { Whole, Outer, Inner };

struct Origin {
  size_t logical_position = 0;
  Part part = Part::Whole;
  Split* split = nullptr;
};

// Which logical axis of `tv` the allocation axis `id` is, or a part of.
std::optional<Origin> originOf(const TensorView* tv, IterDomain* id) {
  const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
  auto position = [&](IterDomain* x) -> std::optional<size_t> {
    auto it = std::find(logical.begin(), logical.end(), x);
    if (it == logical.end()) {
      return std::nullopt;
    }
    return static_cast<size_t>(it - logical.begin());
  };
  if (auto p = position(id)) {
    return Origin{*p, Part::Whole, nullptr};
  }
  auto* split = dynamic_cast<Split*>(id->definition());
  if (split == nullptr) {
    return std::nullopt;
  }
  auto p = position(split->in());
  if (!p) {
    return std::nullopt;
  }
  return Origin{*p, split->outer() == id ? Part::Outer : Part::Inner, split};
}

} // namespace

std::string TensorMapGeometry::toString() const {
  std::stringstream ss;
  ss << dtype << " sizes [" << joinInts(sizes, ", ")
     << "] (innermost first), strides [" << joinInts(strides_bytes, ", ")
     << "] bytes, box [" << joinInts(box, ", ") << "], swizzle "
     << swizzle_bytes;
  return ss.str();
}

std::string tensorMapViolation(
    const TensorMapGeometry& geometry, int64_t pointer_alignment) {
  const size_t rank = geometry.sizes.size();
  const int64_t element = dataTypeSize(geometry.dtype);
  if (rank == 0 || rank > 5) {
    return "a tensor map has 1 to 5 dimensions, not " + std::to_string(rank);
  }
  if (geometry.box.size() != rank ||
      geometry.strides_bytes.size() + 1 != rank) {
    return "the box and strides do not match the rank";
  }
  if (pointer_alignment % 16 != 0) {
    return "the data pointer is aligned to " +
           std::to_string(pointer_alignment) + " bytes, not 16";
  }
  for (size_t d = 0; d < rank; ++d) {
    if (geometry.sizes[d] < 1 || geometry.sizes[d] > (int64_t(1) << 32)) {
      return "dimension " + std::to_string(d) + " has " +
             std::to_string(geometry.sizes[d]) + " elements";
    }
    if (geometry.box[d] < 1 || geometry.box[d] > 256) {
      return "the box spans " + std::to_string(geometry.box[d]) +
             " elements of dimension " + std::to_string(d) + " (1 to 256)";
    }
  }
  for (size_t d = 0; d + 1 < rank; ++d) {
    const int64_t stride = geometry.strides_bytes[d];
    if (stride % 16 != 0 || stride <= 0 || stride >= (int64_t(1) << 40)) {
      return "dimension " + std::to_string(d + 1) + " has a stride of " +
             std::to_string(stride) + " bytes (a multiple of 16 is needed)";
    }
  }
  const int64_t inner_bytes = geometry.box[0] * element;
  if (inner_bytes % 16 != 0 || inner_bytes > geometry.swizzle_bytes) {
    return "the box's inner extent spans " + std::to_string(inner_bytes) +
           " bytes (a multiple of 16, at most the swizzle span of " +
           std::to_string(geometry.swizzle_bytes) + ")";
  }
  return "";
}

std::optional<TmaOperandLayout> describeTmaOperand(
    const TensorView* operand, const std::vector<MmaRole>& roles,
    int64_t tile_mn, int64_t tile_k, std::string* reason, int64_t slices) {
  const MemoryAxes memory = memoryAxes(operand, /*within_logical=*/false);
  const std::string name = operand->toString();
  if (memory.axes.empty() || memory.axes.back().contiguous != true) {
    *reason = name + " has no contiguous innermost axis in memory";
    return std::nullopt;
  }
  // Batch axes are numbered in logical order.
  std::vector<int> batch_index(roles.size(), -1);
  int batches = 0;
  for (size_t p = 0; p < roles.size(); ++p) {
    if (roles[p] == MmaRole::Batch) {
      batch_index[p] = batches++;
    }
  }
  TmaOperandLayout layout;
  // The innermost dimension of each logical axis in memory carries its box.
  std::vector<bool> boxed(roles.size(), false);
  for (auto it = memory.axes.rbegin(); it != memory.axes.rend(); ++it) {
    const auto origin = originOf(operand, it->id);
    if (!origin) {
      *reason = "allocation axis " + it->id->toString() + " of " + name +
                " is neither a logical axis nor a part of a split of one";
      return std::nullopt;
    }
    TmaDim dim;
    dim.id = it->id;
    dim.stride_position = it->stride_position;
    const MmaRole role = roles[origin->logical_position];
    dim.role =
        role == MmaRole::K
            ? kTmaRoleK
            : (role == MmaRole::Batch
                   ? kTmaRoleBatch + batch_index[origin->logical_position]
                   : kTmaRoleMn);
    if (origin->part != Part::Whole) {
      Val* inner = origin->split->inner()->extent();
      (origin->part == Part::Outer ? dim.div : dim.mod) = inner;
    }
    if (dim.role < kTmaRoleBatch && !boxed[origin->logical_position]) {
      boxed[origin->logical_position] = true;
      layout.mn_major =
          layout.dims.empty() ? dim.role == kTmaRoleMn : layout.mn_major;
      dim.box = dim.role == kTmaRoleK
                    ? tile_k
                    : (layout.mn_major ? 64 : tile_mn / slices);
      if (origin->part == Part::Inner) {
        layout.divisible.emplace_back(dim.mod, dim.box);
      }
    }
    layout.dims.push_back(dim);
  }
  if (layout.dims.front().role >= kTmaRoleBatch) {
    *reason = "the innermost axis in memory of " + name + " is a batch axis";
    return std::nullopt;
  }
  for (const auto& [extent, box] : layout.divisible) {
    if (extent->isConstInt() && extent->constIntValue() % box != 0) {
      *reason = "a split part of " + std::to_string(extent->constIntValue()) +
                " elements of " + name + " is no multiple of the tile's " +
                std::to_string(box);
      return std::nullopt;
    }
  }
  const int64_t element = dataTypeSize(operand->dtype());
  layout.swizzle_bytes = layout.mn_major ? 128 : tile_k * element;
  layout.tile_bytes = tile_mn * tile_k * element;
  if (layout.swizzle_bytes != 128 && layout.swizzle_bytes != 64 &&
      layout.swizzle_bytes != 32) {
    *reason = "a K-major row of " + std::to_string(layout.swizzle_bytes) +
              " bytes has no swizzle mode";
    return std::nullopt;
  }
  // Each slice starts on the swizzle pattern's period of 1024 bytes.
  const bool whole_slices =
      layout.mn_major
          ? tile_mn % (64 * slices) == 0
          : tile_mn % slices == 0 &&
                (tile_mn / slices * layout.swizzle_bytes) % 1024 == 0;
  if (!whole_slices) {
    *reason = "a tile of " + std::to_string(tile_mn) + " rows of " + name +
              " does not split into " + std::to_string(slices) +
              " parts of whole swizzle periods";
    return std::nullopt;
  }
  return layout;
}

bool sameTileLayout(const TmaOperandLayout& a, const TmaOperandLayout& b) {
  if (a.dims.size() != b.dims.size() || a.mn_major != b.mn_major ||
      a.swizzle_bytes != b.swizzle_bytes) {
    return false;
  }
  for (size_t d = 0; d < a.dims.size(); ++d) {
    const TmaDim& x = a.dims[d];
    const TmaDim& y = b.dims[d];
    if (x.role != y.role || x.box != y.box ||
        (x.div == nullptr) != (y.div == nullptr) ||
        (x.mod == nullptr) != (y.mod == nullptr)) {
      return false;
    }
  }
  return true;
}

TensorMapGeometry tmaGeometry(
    const TmaOperandLayout& layout, DataType dtype,
    const std::vector<int64_t>& dim_sizes,
    const std::vector<int64_t>& allocation_strides) {
  TensorMapGeometry geometry;
  geometry.dtype = dtype;
  geometry.swizzle_bytes = layout.swizzle_bytes;
  const int64_t element = dataTypeSize(dtype);
  for (size_t d = 0; d < layout.dims.size(); ++d) {
    geometry.sizes.push_back(dim_sizes.at(d));
    geometry.box.push_back(layout.dims[d].box);
    if (d > 0) {
      geometry.strides_bytes.push_back(
          allocation_strides.at(layout.dims[d].stride_position) * element);
    }
  }
  return geometry;
}

} // namespace fuser
