// The values and tensor layouts of the kernel-IR interpreter
// (kernel_ir_interpreter.h): what each element holds, how a test lays out
// a global tensor, and the record of each write to one.
//
// Each value carries a number and its provenance. The element of a global
// input at logical coordinate c holds inputValue(input, c), a pseudo-random
// number, with provenance {(input, c)}; an op computes its number from its
// operands' (in double precision) and its provenance is the union of
// theirs. So after the run an output element holds the number the fusion
// computes from the input elements it was read from, and names those
// elements; the test compares both with what the fusion computes at that
// element's logical coordinate.
#pragma once

#include <expr/evaluator.h>
#include <ir/all_nodes.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fuser::kir_test {

using Coord = std::vector<int64_t>;

inline std::string str(const Coord& c) {
  std::stringstream ss;
  ss << "(";
  for (size_t i = 0; i < c.size(); ++i) {
    ss << (i ? ", " : "") << c[i];
  }
  ss << ")";
  return ss.str();
}

// The global input elements a value was computed from: a set of (tensor
// name, logical coordinate). Interpreted reductions union the sources of
// thousands of elements step by step, so the set is a shared, immutable
// sorted vector of 64-bit keys (one per element; distinct elements get
// distinct keys with overwhelming probability): copying a value copies a
// pointer, and a union is one pass over two contiguous arrays. The
// coordinates behind the keys are kept aside for printing.
class Provenance {
 public:
  Provenance() = default;
  Provenance(int64_t tensor, const Coord& coord)
      : keys_(std::make_shared<const std::vector<uint64_t>>(
            std::vector<uint64_t>{remember(tensor, coord)})) {}

  // Adds `other`'s elements.
  void add(const Provenance& other) {
    if (other.size() == 0 || keys_ == other.keys_) {
      return;
    }
    if (size() == 0) {
      keys_ = other.keys_;
      return;
    }
    std::vector<uint64_t> merged;
    merged.reserve(size() + other.size());
    std::set_union(
        keys_->begin(), keys_->end(), other.keys_->begin(), other.keys_->end(),
        std::back_inserter(merged));
    if (merged.size() == size()) {
      return; // `other` added nothing: keep sharing this set
    }
    if (merged.size() == other.size()) {
      keys_ = other.keys_;
      return;
    }
    keys_ = std::make_shared<const std::vector<uint64_t>>(std::move(merged));
  }

  size_t size() const {
    return keys_ ? keys_->size() : 0;
  }

  bool operator==(const Provenance& other) const {
    return keys_ == other.keys_ || (size() == 0 && other.size() == 0) ||
           (keys_ && other.keys_ && *keys_ == *other.keys_);
  }
  bool operator!=(const Provenance& other) const {
    return !(*this == other);
  }

  // The elements as (tensor name, coordinate), in key order.
  std::vector<std::pair<int64_t, Coord>> elements() const {
    std::vector<std::pair<int64_t, Coord>> result;
    if (keys_) {
      std::lock_guard<std::mutex> lock(registryMutex());
      for (uint64_t key : *keys_) {
        result.push_back(registry().at(key));
      }
    }
    return result;
  }

 private:
  static uint64_t keyOf(int64_t tensor, const Coord& coord) {
    uint64_t h = 0xcbf29ce484222325ull ^ static_cast<uint64_t>(tensor);
    auto mix = [&h](uint64_t x) {
      h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h *= 0x100000001b3ull;
      h ^= h >> 29;
    };
    for (int64_t x : coord) {
      mix(static_cast<uint64_t>(x));
    }
    mix(coord.size());
    return h;
  }

  static std::unordered_map<uint64_t, std::pair<int64_t, Coord>>& registry() {
    static std::unordered_map<uint64_t, std::pair<int64_t, Coord>> map;
    return map;
  }
  static std::mutex& registryMutex() {
    static std::mutex mutex;
    return mutex;
  }
  static uint64_t remember(int64_t tensor, const Coord& coord) {
    const uint64_t key = keyOf(tensor, coord);
    std::lock_guard<std::mutex> lock(registryMutex());
    registry().emplace(key, std::make_pair(tensor, coord));
    return key;
  }

  std::shared_ptr<const std::vector<uint64_t>> keys_;
};

inline std::string str(const Provenance& p) {
  std::stringstream ss;
  ss << "{";
  bool first = true;
  for (const auto& [name, coord] : p.elements()) {
    ss << (first ? "" : ", ") << "T" << name << str(coord);
    first = false;
  }
  ss << "}";
  return ss.str();
}

// What a value is: a number and the global input elements it was computed
// from.
struct Value {
  double number = 0.0;
  Provenance sources;
  // Computed from a local buffer element never written.
  bool poisoned = false;

  bool operator==(const Value& other) const {
    return number == other.number && sources == other.sources &&
           poisoned == other.poisoned;
  }
  bool operator!=(const Value& other) const {
    return !(*this == other);
  }
};

inline std::string str(const Value& v) {
  std::stringstream ss;
  ss.precision(17);
  ss << v.number << " from " << str(v.sources);
  return ss.str();
}

// The number held by the element of input `tensor` at logical coordinate
// `c`: a deterministic pseudo-random number in [-1, 1), distinct for
// distinct elements with overwhelming probability.
inline double inputNumber(int64_t tensor, const Coord& c) {
  uint64_t h = 1469598103934665603ull ^ static_cast<uint64_t>(tensor + 17);
  auto mix = [&h](uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 1099511628211ull;
  };
  for (int64_t x : c) {
    mix(static_cast<uint64_t>(x));
  }
  mix(c.size());
  // 30 random bits, exactly representable: sums stay exact.
  return static_cast<double>(static_cast<int64_t>(h >> 34) - (1 << 29)) /
         static_cast<double>(1 << 29);
}

// The binary op a reduction combines two values with (not Welford, whose
// states the interpreter does not model).
inline BinaryOpType combiningOp(ReductionOpType op) {
  switch (op) {
    case ReductionOpType::Prod:
      return BinaryOpType::Mul;
    case ReductionOpType::Max:
      return BinaryOpType::Max;
    case ReductionOpType::Min:
      return BinaryOpType::Min;
    default:
      return BinaryOpType::Add;
  }
}

// The value of input `tensor`'s element at `c`.
inline Value inputValue(int64_t tensor, const Coord& c) {
  return Value{inputNumber(tensor, c), Provenance(tensor, c)};
}

// Row-major strides of `buffer_sizes`: the strides of an at::Tensor that is
// a slice (of the leading `sizes`) of a contiguous tensor of that shape.
// With buffer_sizes == sizes these are the contiguous strides.
inline std::vector<int64_t> rowMajorStrides(
    const std::vector<int64_t>& buffer_sizes) {
  std::vector<int64_t> strides(buffer_sizes.size(), 1);
  for (size_t k = buffer_sizes.size(); k-- > 1;) {
    strides[k - 1] = strides[k] * buffer_sizes[k];
  }
  return strides;
}

// How a global tensor lies in memory, as the test defines it: the logical
// sizes (kernel argument T<n>.logical_size; for a sharded tensor the global
// size), the sizes of the allocation axes in this buffer (a device axis has
// size 1), their strides (kernel argument T<n>.alloc_stride), and the map
// from a logical coordinate to allocation indices (nullopt: the element is
// not in this buffer, e.g. another rank's shard).
struct BufferLayout {
  Coord logical_sizes;
  std::vector<int64_t> alloc_sizes;
  std::vector<int64_t> alloc_strides;
  std::function<std::optional<std::vector<int64_t>>(const Coord&)> to_alloc;
  // Whether several elements may share an offset (an input with a stride-0
  // axis): each offset then stands for the first of its elements.
  bool may_alias = false;

  bool inLogicalRange(const Coord& c) const {
    if (c.size() != logical_sizes.size()) {
      return false;
    }
    for (size_t i = 0; i < c.size(); ++i) {
      if (c[i] < 0 || c[i] >= logical_sizes[i]) {
        return false;
      }
    }
    return true;
  }

  // The memory offset of logical coordinate `c`; nullopt when `c` is out
  // of range or not in this buffer.
  std::optional<int64_t> offsetOf(const Coord& c) const {
    if (!inLogicalRange(c)) {
      return std::nullopt;
    }
    std::optional<std::vector<int64_t>> alloc = to_alloc(c);
    if (!alloc.has_value()) {
      return std::nullopt;
    }
    if (alloc->size() != alloc_sizes.size() ||
        alloc_strides.size() != alloc_sizes.size()) {
      throw std::logic_error("BufferLayout: rank mismatch");
    }
    int64_t offset = 0;
    for (size_t k = 0; k < alloc->size(); ++k) {
      if ((*alloc)[k] < 0 || (*alloc)[k] >= alloc_sizes[k]) {
        throw std::logic_error("BufferLayout: allocation index out of range");
      }
      offset += (*alloc)[k] * alloc_strides[k];
    }
    return offset;
  }

  // Elements spanned in memory: 1 + sum (size - 1) * stride.
  int64_t storageSize() const {
    int64_t size = 1;
    for (size_t k = 0; k < alloc_sizes.size(); ++k) {
      if (alloc_sizes[k] == 0) {
        return 0;
      }
      size += (alloc_sizes[k] - 1) * alloc_strides[k];
    }
    return size;
  }

  std::vector<Coord> allCoords() const {
    std::vector<Coord> result;
    for (int64_t s : logical_sizes) {
      if (s == 0) {
        return result;
      }
    }
    Coord c(logical_sizes.size(), 0);
    while (true) {
      result.push_back(c);
      size_t d = c.size();
      while (d > 0) {
        --d;
        if (++c[d] < logical_sizes[d]) {
          break;
        }
        c[d] = 0;
        if (d == 0) {
          return result;
        }
      }
      if (c.empty()) {
        return result;
      }
    }
  }

  // offset -> logical coordinate for every element of this buffer (the
  // first one when elements alias). Throws when two elements share an
  // offset and the layout does not allow it (a bad test layout).
  std::map<int64_t, Coord> inverse() const {
    std::map<int64_t, Coord> result;
    for (const Coord& c : allCoords()) {
      std::optional<int64_t> offset = offsetOf(c);
      if (!offset.has_value()) {
        continue;
      }
      if (!result.emplace(*offset, c).second && !may_alias) {
        throw std::logic_error(
            "BufferLayout: two elements at offset " + std::to_string(*offset));
      }
    }
    return result;
  }
};

// The layout of a tensor whose allocation is its logical domain.
inline BufferLayout plainLayout(const Coord& sizes) {
  return BufferLayout{sizes, sizes, rowMajorStrides(sizes), [](const Coord& c) {
                        return std::optional(c);
                      }};
}

// The layout of a tensor whose allocation is its logical domain with
// these strides (an at::Tensor's sizes and strides).
inline BufferLayout stridedLayout(
    const Coord& sizes, const std::vector<int64_t>& strides) {
  return BufferLayout{
      sizes, sizes, strides, [](const Coord& c) { return std::optional(c); }};
}

// The same for a tensor (an at::Tensor: anything with sizes() and
// strides()).
template <typename Tensor>
BufferLayout stridedLayoutOf(const Tensor& t) {
  return stridedLayout(t.sizes().vec(), t.strides().vec());
}

// One execution of a tensor expr that writes a global tensor, or one that
// its predicate turned off.
struct WriteEvent {
  int64_t tensor = -1; // name of the written tensor
  // The index of each enclosing loop (outermost first; the lane for a
  // vectorized copy) and whether each lies inside its loop's [start, stop)
  // (a thread index can exceed its loop when the launch is larger).
  std::vector<int64_t> loop_values;
  bool loops_in_extent = true;
  bool executed = false;
  int64_t offset = -1; // the offset written, when executed
};

// Dense row-major layouts of `fusion`'s outputs, of the sizes their logical
// extents evaluate to in `ee` (a broadcast axis has size 1), also entered
// in `layouts` by name.
inline std::vector<BufferLayout> plainOutputLayouts(
    Fusion& fusion, ExpressionEvaluator& ee,
    std::map<int64_t, BufferLayout>& layouts) {
  std::vector<BufferLayout> result;
  for (Val* out : fusion.outputs()) {
    Coord sizes;
    for (IterDomain* id : TensorDomain::noReductions(
             out->as<TensorView>()->getLogicalDomain())) {
      sizes.push_back(
          id->isBroadcast() ? 1 : ee.evaluateOrThrow(id->extent()).asInt());
    }
    result.push_back(plainLayout(sizes));
    layouts[out->name()] = result.back();
  }
  return result;
}

} // namespace fuser::kir_test
