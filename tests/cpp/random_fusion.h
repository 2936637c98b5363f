// Random pointwise fusions over random valid layouts, for the property
// tests of test_layout_properties.cpp (test-only; not part of any library).
//
// A case is a full shape, up to three inputs and a small program of
// elementwise ops, broadcasts and casts over them, with one or two outputs.
// Every input is a strided view of a larger buffer that the test fills with
// NaN around the real elements: permuted memory orders, padded rows
// (narrowed views), an inner step, stride-0 (expanded) axes and size-1 axes
// with odd strides. Its declared allocation domain is a valid description
// of that memory, drawn at random: the logical order or the memory order,
// splits of axes by divisors, merges of axes that lie together in memory,
// and contiguity flags that are true only where the strides allow it (and
// false at random where they would allow it). Outputs get no layout, a
// permutation, a split or a merge.
//
// The test computes everything it checks against on its own, from what it
// built: the allocation sizes and strides the kernel must receive, the
// offset of every element, the strides of every output, and the value of
// every output element (evaluated on the unscheduled fusion in double, the
// way the kernel IR interpreter computes).
#pragma once

#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <tests/cpp/kernel_ir_interpreter.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace fuser::random_fusion {

using kir_test::Coord;

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  // Uniform in [lo, hi].
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen_);
  }
  bool chance(double p) {
    return std::uniform_real_distribution<double>(0.0, 1.0)(gen_) < p;
  }
  template <typename T>
  const T& pick(const std::vector<T>& values) {
    return values[static_cast<size_t>(
        uniform(0, static_cast<int64_t>(values.size()) - 1))];
  }
  std::vector<int64_t> permutation(int64_t n) {
    std::vector<int64_t> p(static_cast<size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), gen_);
    return p;
  }

 private:
  std::mt19937_64 gen_;
};

// One axis of a declared allocation domain: a logical axis, the outer or
// inner part of a split of one (the inner part has `inner_size` elements),
// or the merge of two other nodes.
struct Node {
  enum Kind { Logical, Outer, Inner, Merged } kind = Logical;
  int64_t logical = -1;
  int64_t inner_size = 0;
  bool inner_split = true;  // how the IR writes the split
  int64_t outer_child = -1; // Merged: node indices
  int64_t inner_child = -1;
};

// A declared layout over logical sizes: nodes and the allocation order.
struct Layout {
  std::vector<Node> nodes;
  std::vector<int64_t> order; // node indices, outermost first
  bool declared = false;      // false: no allocation domain (logical order)

  int64_t size(int64_t n, const std::vector<int64_t>& sizes) const {
    const Node& node = nodes[static_cast<size_t>(n)];
    switch (node.kind) {
      case Node::Logical:
        return sizes[static_cast<size_t>(node.logical)];
      case Node::Outer:
        return sizes[static_cast<size_t>(node.logical)] / node.inner_size;
      case Node::Inner:
        return node.inner_size;
      case Node::Merged:
        return size(node.outer_child, sizes) * size(node.inner_child, sizes);
    }
    return 0;
  }

  int64_t index(
      int64_t n, const std::vector<int64_t>& sizes, const Coord& c) const {
    const Node& node = nodes[static_cast<size_t>(n)];
    switch (node.kind) {
      case Node::Logical:
        return c[static_cast<size_t>(node.logical)];
      case Node::Outer:
        return c[static_cast<size_t>(node.logical)] / node.inner_size;
      case Node::Inner:
        return c[static_cast<size_t>(node.logical)] % node.inner_size;
      case Node::Merged:
        return index(node.outer_child, sizes, c) *
                   size(node.inner_child, sizes) +
               index(node.inner_child, sizes, c);
    }
    return 0;
  }

  // The stride of node `n` in memory where logical axis a has stride
  // logical_strides[a] (as input binding replays it).
  int64_t stride(
      int64_t n, const std::vector<int64_t>& sizes,
      const std::vector<int64_t>& logical_strides) const {
    const Node& node = nodes[static_cast<size_t>(n)];
    switch (node.kind) {
      case Node::Logical:
      case Node::Inner:
        return logical_strides[static_cast<size_t>(node.logical)];
      case Node::Outer:
        return logical_strides[static_cast<size_t>(node.logical)] *
               node.inner_size;
      case Node::Merged: {
        if (size(node.outer_child, sizes) == 1) {
          return stride(node.inner_child, sizes, logical_strides);
        }
        if (size(node.inner_child, sizes) == 1) {
          return stride(node.outer_child, sizes, logical_strides);
        }
        return stride(node.inner_child, sizes, logical_strides);
      }
    }
    return 0;
  }

  std::vector<int64_t> allocationSizes(
      const std::vector<int64_t>& sizes) const {
    std::vector<int64_t> result;
    for (int64_t n : order) {
      result.push_back(size(n, sizes));
    }
    return result;
  }

  std::vector<int64_t> allocationIndices(
      const std::vector<int64_t>& sizes, const Coord& c) const {
    std::vector<int64_t> result;
    for (int64_t n : order) {
      result.push_back(index(n, sizes, c));
    }
    return result;
  }

  // Logical strides of a tensor whose allocation axes have `alloc_strides`
  // (the inverse of stride(), for outputs allocated densely).
  std::vector<int64_t> logicalStrides(
      const std::vector<int64_t>& sizes,
      const std::vector<int64_t>& alloc_strides) const {
    std::vector<int64_t> strides(sizes.size(), 0);
    std::vector<int64_t> node_stride(nodes.size(), 0);
    for (size_t k = 0; k < order.size(); ++k) {
      node_stride[static_cast<size_t>(order[k])] = alloc_strides[k];
    }
    // Children of merges from their parents (parents come later in nodes).
    for (size_t n = nodes.size(); n-- > 0;) {
      const Node& node = nodes[n];
      if (node.kind == Node::Merged) {
        node_stride[static_cast<size_t>(node.inner_child)] = node_stride[n];
        node_stride[static_cast<size_t>(node.outer_child)] =
            node_stride[n] * size(node.inner_child, sizes);
      }
    }
    for (size_t n = 0; n < nodes.size(); ++n) {
      const Node& node = nodes[n];
      if (node.kind == Node::Logical || node.kind == Node::Inner) {
        strides[static_cast<size_t>(node.logical)] = node_stride[n];
      }
    }
    return strides;
  }

  std::string toString(const std::vector<int64_t>& sizes) const {
    std::stringstream ss;
    ss << "[";
    for (size_t k = 0; k < order.size(); ++k) {
      ss << (k ? ", " : "") << name(order[k]) << "{" << size(order[k], sizes)
         << "}";
    }
    ss << "]";
    return ss.str();
  }

  std::string name(int64_t n) const {
    const Node& node = nodes[static_cast<size_t>(n)];
    switch (node.kind) {
      case Node::Logical:
        return "a" + std::to_string(node.logical);
      case Node::Outer:
        return "a" + std::to_string(node.logical) + "/" +
               std::to_string(node.inner_size) +
               (node.inner_split ? "" : "(outer split)");
      case Node::Inner:
        return "a" + std::to_string(node.logical) + "%" +
               std::to_string(node.inner_size);
      case Node::Merged:
        return "(" + name(node.outer_child) + "*" + name(node.inner_child) +
               ")";
    }
    return "?";
  }
};

// The identity layout of `rank` logical axes.
inline Layout logicalLayout(int64_t rank) {
  Layout layout;
  for (int64_t a = 0; a < rank; ++a) {
    layout.nodes.push_back(Node{Node::Logical, a});
    layout.order.push_back(a);
  }
  return layout;
}

// A declared layout in the logical axes' order `order` (a permutation).
inline Layout declaredLayout(const std::vector<int64_t>& order) {
  Layout layout = logicalLayout(static_cast<int64_t>(order.size()));
  layout.order = order;
  layout.declared = true;
  return layout;
}

// Splits logical axis `axis` of `layout` in place into (outer, inner) with
// `inner_size` inner elements.
inline Layout splitAxis(
    Layout layout, int64_t axis, int64_t inner_size, bool inner_split = true) {
  Node outer{Node::Outer, axis, inner_size, inner_split};
  Node inner = outer;
  inner.kind = Node::Inner;
  layout.nodes.push_back(outer);
  layout.nodes.push_back(inner);
  const auto o = static_cast<int64_t>(layout.nodes.size()) - 2;
  auto it = std::find(layout.order.begin(), layout.order.end(), axis);
  *it = o;
  layout.order.insert(it + 1, o + 1);
  layout.declared = true;
  return layout;
}

// Merges allocation axes k and k + 1 of `layout`.
inline Layout mergeAxes(Layout layout, size_t k) {
  Node merged;
  merged.kind = Node::Merged;
  merged.outer_child = layout.order[k];
  merged.inner_child = layout.order[k + 1];
  layout.nodes.push_back(merged);
  layout.order[k] = static_cast<int64_t>(layout.nodes.size()) - 1;
  layout.order.erase(layout.order.begin() + static_cast<int64_t>(k) + 1);
  layout.declared = true;
  return layout;
}

// A fusion input as the test built it.
struct InputSpec {
  std::vector<int64_t> sizes;     // logical
  std::vector<bool> broadcast;    // declared IterType::Broadcast (size 1)
  std::vector<int64_t> full_axes; // which axes of the full shape it covers
  bool symbolic = true;           // symbolic extents (else constants)
  DataType dtype = DataType::Float;
  // Memory: strides of the logical axes, the view's offset into a buffer
  // of buffer_numel elements.
  std::vector<int64_t> strides;
  int64_t storage_offset = 0;
  int64_t buffer_numel = 0;
  // The declared allocation and its contiguity (none for broadcast).
  Layout layout;
  Contiguity contiguity;
  // What input binding must derive: allocation sizes and strides (a size-1
  // axis takes the stride it would have if it were contiguous).
  std::vector<int64_t> alloc_sizes;
  std::vector<int64_t> alloc_strides;
};

// A fusion output's declared layout (contiguous in allocation order).
struct OutputSpec {
  Layout layout;
};

struct Case {
  uint64_t seed = 0;
  std::vector<int64_t> shape; // the full shape
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;
  std::string program; // printable
  std::unique_ptr<Fusion> fusion;

  std::string toString() const;
};

inline std::string join(const std::vector<int64_t>& v) {
  std::stringstream ss;
  ss << "[";
  for (size_t i = 0; i < v.size(); ++i) {
    ss << (i ? ", " : "") << v[i];
  }
  ss << "]";
  return ss.str();
}

inline std::string Case::toString() const {
  std::stringstream ss;
  ss << "case seed " << seed << ", shape " << join(shape) << "\n";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec& in = inputs[i];
    ss << "  input " << i << ": " << in.dtype << " sizes " << join(in.sizes)
       << " strides " << join(in.strides) << " offset " << in.storage_offset
       << " (axes " << join(in.full_axes) << " of the full shape"
       << (in.symbolic ? "" : ", constant extents") << "), allocation "
       << (in.layout.declared ? in.layout.toString(in.sizes) : "(none)")
       << " contiguity [";
    for (size_t k = 0; k < in.contiguity.size(); ++k) {
      ss << (k ? " " : "")
         << (!in.contiguity[k] ? "n" : (*in.contiguity[k] ? "t" : "f"));
    }
    ss << "]\n";
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    ss << "  output " << o << ": allocation "
       << (outputs[o].layout.declared ? outputs[o].layout.toString(shape)
                                      : "(none)")
       << "\n";
  }
  ss << "  program: " << program;
  return ss.str();
}

struct Limits {
  int64_t max_rank = 4;
  int64_t max_numel = 4096;
};

namespace detail {

inline std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> result;
  for (int64_t d = 2; d < n; ++d) {
    if (n % d == 0) {
      result.push_back(d);
    }
  }
  return result;
}

inline std::vector<int64_t> randomShape(Rng& rng, const Limits& limits) {
  static const std::vector<int64_t> sizes = {1,  2,  3,  4,  5,  6,   7,  8,
                                             9,  12, 16, 17, 24, 31,  32, 33,
                                             36, 37, 39, 48, 64, 100, 128};
  const int64_t rank = rng.uniform(1, limits.max_rank);
  std::vector<int64_t> shape;
  int64_t numel = 1;
  for (int64_t a = 0; a < rank; ++a) {
    int64_t s = rng.pick(sizes);
    while (numel * s > limits.max_numel) {
      s = (s + 1) / 2;
    }
    shape.push_back(s);
    numel *= s;
  }
  return shape;
}

// Memory for a view of `sizes`: a permuted, possibly padded buffer, maybe
// with an inner step, stride-0 axes and odd strides on size-1 axes.
inline void randomMemory(Rng& rng, InputSpec& in) {
  const auto rank = static_cast<int64_t>(in.sizes.size());
  const std::vector<int64_t> perm =
      rng.chance(0.5) ? rng.permutation(rank) : [&] {
        std::vector<int64_t> p(static_cast<size_t>(rank));
        std::iota(p.begin(), p.end(), 0);
        return p;
      }();
  in.strides.assign(static_cast<size_t>(rank), 0);
  int64_t running = rng.chance(0.12) ? rng.uniform(2, 3) : 1; // inner step
  std::vector<int64_t> start(static_cast<size_t>(rank), 0);
  for (int64_t k = rank; k-- > 0;) {
    const auto a = static_cast<size_t>(perm[static_cast<size_t>(k)]);
    const int64_t pad = rng.chance(0.25) ? rng.uniform(1, 5) : 0;
    start[a] = pad > 0 ? rng.uniform(0, pad) : 0;
    in.strides[a] = running;
    running *= in.sizes[a] + pad;
  }
  for (int64_t a = 0; a < rank; ++a) {
    const auto i = static_cast<size_t>(a);
    if (in.sizes[i] == 1 && rng.chance(0.5)) {
      in.strides[i] = 2 * rng.uniform(0, 100) + 1; // odd, unrelated
    } else if (in.sizes[i] > 1 && !in.broadcast[i] && rng.chance(0.08)) {
      in.strides[i] = 0; // expanded
      start[i] = 0;
    }
  }
  in.storage_offset = 0;
  int64_t last = 0;
  for (int64_t a = 0; a < rank; ++a) {
    const auto i = static_cast<size_t>(a);
    in.storage_offset += start[i] * in.strides[i];
    last += (in.sizes[i] - 1) * in.strides[i];
  }
  in.buffer_numel = in.storage_offset + last + 1 + rng.uniform(0, 8);
}

// Fills in what input binding derives for `in`'s declared layout:
// allocation sizes, strides (a size-1 axis takes the stride it would have
// if it were contiguous) and contiguity flags, each chosen by
// `flag(fits)` where `fits` says whether the strides allow true (a size-1
// axis always fits).
inline void bindAllocation(
    InputSpec& in, const std::function<bool(bool)>& flag) {
  const Layout& layout = in.layout;
  auto is_broadcast = [&](int64_t n) {
    const Node& node = layout.nodes[static_cast<size_t>(n)];
    return node.kind == Node::Logical &&
           in.broadcast[static_cast<size_t>(node.logical)];
  };
  const size_t n = layout.order.size();
  in.alloc_sizes = layout.allocationSizes(in.sizes);
  in.alloc_strides.assign(n, 0);
  in.contiguity.assign(n, std::nullopt);
  bool has_inner = false;
  int64_t inner_size = 1;
  int64_t inner_stride = 1;
  for (size_t k = n; k-- > 0;) {
    const int64_t node = layout.order[k];
    int64_t stride = layout.stride(node, in.sizes, in.strides);
    if (is_broadcast(node)) {
      in.alloc_strides[k] = stride;
      continue;
    }
    const int64_t expected = has_inner ? inner_size * inner_stride : 1;
    const int64_t size = in.alloc_sizes[k];
    if (size == 1) {
      stride = expected;
    }
    in.contiguity[k] = flag(stride == expected);
    in.alloc_strides[k] = stride;
    has_inner = true;
    inner_size = size;
    inner_stride = stride;
  }
}

// A declared allocation of `in`'s memory and its contiguity flags.
inline void randomAllocation(Rng& rng, InputSpec& in) {
  const auto rank = static_cast<int64_t>(in.sizes.size());
  Layout& layout = in.layout;
  layout = logicalLayout(rank);
  layout.order.clear();
  layout.declared = rng.chance(0.75);
  // Axis order: the logical one, the memory order (largest stride first)
  // or any.
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  std::iota(axes.begin(), axes.end(), 0);
  if (layout.declared) {
    const int64_t how = rng.uniform(0, 2);
    if (how == 1) {
      std::stable_sort(axes.begin(), axes.end(), [&](int64_t x, int64_t y) {
        return in.strides[static_cast<size_t>(x)] >
               in.strides[static_cast<size_t>(y)];
      });
    } else if (how == 2) {
      axes = rng.permutation(rank);
    }
  }
  for (int64_t a : axes) {
    const auto i = static_cast<size_t>(a);
    const std::vector<int64_t> ds = divisors(in.sizes[i]);
    if (!layout.declared || in.broadcast[i] || ds.empty() ||
        !rng.chance(0.35)) {
      layout.order.push_back(a);
      continue;
    }
    Node outer{Node::Outer, a, rng.pick(ds), rng.chance(0.6)};
    Node inner = outer;
    inner.kind = Node::Inner;
    layout.nodes.push_back(outer);
    layout.nodes.push_back(inner);
    const auto o = static_cast<int64_t>(layout.nodes.size()) - 2;
    if (rng.chance(0.1)) {
      layout.order.push_back(o + 1); // inner first: valid, rarely contiguous
      layout.order.push_back(o);
    } else {
      layout.order.push_back(o);
      layout.order.push_back(o + 1);
    }
  }
  // Merges of neighbours that lie together in memory.
  auto is_broadcast = [&](int64_t n) {
    const Node& node = layout.nodes[static_cast<size_t>(n)];
    return node.kind == Node::Logical &&
           in.broadcast[static_cast<size_t>(node.logical)];
  };
  for (size_t k = 0; layout.declared && k + 1 < layout.order.size(); ++k) {
    const int64_t x = layout.order[k];
    const int64_t y = layout.order[k + 1];
    if (is_broadcast(x) || is_broadcast(y) || !rng.chance(0.3)) {
      continue;
    }
    const int64_t sx = layout.size(x, in.sizes);
    const int64_t sy = layout.size(y, in.sizes);
    if (sx != 1 && sy != 1 &&
        layout.stride(x, in.sizes, in.strides) !=
            layout.stride(y, in.sizes, in.strides) * sy) {
      continue;
    }
    Node merged;
    merged.kind = Node::Merged;
    merged.outer_child = x;
    merged.inner_child = y;
    layout.nodes.push_back(merged);
    layout.order[k] = static_cast<int64_t>(layout.nodes.size()) - 1;
    layout.order.erase(layout.order.begin() + static_cast<int64_t>(k) + 1);
  }
  bindAllocation(in, [&](bool fits) { return fits && rng.chance(0.8); });
}

inline Layout randomOutputLayout(Rng& rng, const std::vector<int64_t>& shape) {
  const auto rank = static_cast<int64_t>(shape.size());
  Layout layout = logicalLayout(rank);
  const int64_t how = rng.uniform(0, 9);
  if (how < 5) {
    return layout; // none
  }
  layout.declared = true;
  layout.order = rng.permutation(rank);
  if (how == 7 || how == 8) {
    // Split an axis by a divisor.
    for (int64_t k = 0; k < rank; ++k) {
      const int64_t a = layout.order[static_cast<size_t>(k)];
      const std::vector<int64_t> ds = divisors(shape[static_cast<size_t>(a)]);
      if (ds.empty()) {
        continue;
      }
      Node outer{Node::Outer, a, rng.pick(ds), rng.chance(0.6)};
      Node inner = outer;
      inner.kind = Node::Inner;
      layout.nodes.push_back(outer);
      layout.nodes.push_back(inner);
      const auto o = static_cast<int64_t>(layout.nodes.size()) - 2;
      layout.order[static_cast<size_t>(k)] = o;
      layout.order.insert(layout.order.begin() + k + 1, o + 1);
      break;
    }
  } else if (how == 9 && rank >= 2) {
    // Merge two neighbours (column-major for a 2-D permuted order).
    const int64_t k = rng.uniform(0, rank - 2);
    Node merged;
    merged.kind = Node::Merged;
    merged.outer_child = layout.order[static_cast<size_t>(k)];
    merged.inner_child = layout.order[static_cast<size_t>(k) + 1];
    layout.nodes.push_back(merged);
    layout.order[static_cast<size_t>(k)] =
        static_cast<int64_t>(layout.nodes.size()) - 1;
    layout.order.erase(layout.order.begin() + k + 1);
  }
  return layout;
}

// Builds the IterDomains of `layout` over `tv`'s logical domain and sets
// them as its allocation.
inline void declareAllocation(
    TensorView* tv, const Layout& layout, const std::vector<int64_t>& sizes,
    const Contiguity& contiguity) {
  const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
  std::vector<IterDomain*> ids(layout.nodes.size(), nullptr);
  for (size_t n = 0; n < layout.nodes.size(); ++n) {
    const Node& node = layout.nodes[n];
    if (node.kind == Node::Logical) {
      ids[n] = logical[static_cast<size_t>(node.logical)];
    } else if (node.kind == Node::Outer) {
      const int64_t s = sizes[static_cast<size_t>(node.logical)];
      const int64_t factor =
          node.inner_split ? node.inner_size : s / node.inner_size;
      auto [outer, inner] = IterDomain::split(
          logical[static_cast<size_t>(node.logical)],
          IrBuilder::create<Val>(factor, DataType::Index), node.inner_split);
      ids[n] = outer;
      ids[n + 1] = inner;
    } else if (node.kind == Node::Merged) {
      ids[n] = IterDomain::merge(
          ids[static_cast<size_t>(node.outer_child)],
          ids[static_cast<size_t>(node.inner_child)]);
    }
  }
  std::vector<IterDomain*> allocation;
  for (int64_t n : layout.order) {
    allocation.push_back(ids[static_cast<size_t>(n)]);
  }
  tv->setAllocationDomain(allocation, contiguity);
}

inline TensorView* declareInput(const InputSpec& in) {
  Fusion* fusion = FusionGuard::getCurFusion();
  std::vector<IterDomain*> ids;
  for (size_t a = 0; a < in.sizes.size(); ++a) {
    if (in.broadcast[a]) {
      ids.push_back(IrBuilder::create<IterDomain>(
          fusion->zeroVal(), fusion->oneVal(), IterType::Broadcast));
      continue;
    }
    Val* extent = in.symbolic ? IrBuilder::create<Val>(DataType::Index)
                              : IrBuilder::create<Val>(
                                    ScalarValue(in.sizes[a]), DataType::Index);
    ids.push_back(IrBuilder::create<IterDomain>(fusion->zeroVal(), extent));
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      ids, TensorDomain::getContiguityFilledWith(ids, false));
  auto* tv = IrBuilder::create<TensorView>(domain, in.dtype);
  if (in.layout.declared) {
    declareAllocation(tv, in.layout, in.sizes, in.contiguity);
  } else {
    tv->setContiguity(in.contiguity);
  }
  return tv;
}

} // namespace detail

// A random case (the fusion is built in `c.fusion`).
inline Case randomCase(uint64_t seed, const Limits& limits) {
  Rng rng(seed);
  Case c;
  c.seed = seed;
  c.shape = detail::randomShape(rng, limits);
  const auto rank = static_cast<int64_t>(c.shape.size());
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  std::stringstream program;

  const int64_t n_inputs = rng.uniform(1, 3);
  std::vector<TensorView*> values;
  for (int64_t i = 0; i < n_inputs; ++i) {
    InputSpec in;
    in.dtype = rng.pick(std::vector<DataType>{
        DataType::Float, DataType::Float, DataType::Half, DataType::BFloat16});
    in.symbolic = rng.chance(0.8);
    const bool bias = i > 0 && rank > 1 && rng.chance(0.5);
    for (int64_t a = 0; a < rank; ++a) {
      if (bias && rng.chance(0.5)) {
        continue; // a BroadcastOp adds this axis
      }
      in.full_axes.push_back(a);
    }
    if (in.full_axes.empty()) {
      in.full_axes.push_back(rng.uniform(0, rank - 1));
    }
    for (int64_t a : in.full_axes) {
      const int64_t s = c.shape[static_cast<size_t>(a)];
      // A full-rank input besides the first may be broadcast along an
      // axis (declared broadcast, size 1).
      const bool bcast =
          (s == 1 && rng.chance(0.5)) || (!bias && i > 0 && rng.chance(0.25));
      in.sizes.push_back(bcast ? 1 : s);
      in.broadcast.push_back(bcast);
    }
    detail::randomMemory(rng, in);
    detail::randomAllocation(rng, in);
    TensorView* tv = detail::declareInput(in);
    c.fusion->addInput(tv);
    program << "T" << tv->name() << " = input" << i << "; ";
    if (static_cast<int64_t>(in.full_axes.size()) < rank) {
      std::vector<bool> flags(static_cast<size_t>(rank), true);
      for (int64_t a : in.full_axes) {
        flags[static_cast<size_t>(a)] = false;
      }
      tv = broadcast(tv, flags);
      program << "T" << tv->name() << " = broadcast(T"
              << tv->definition()->input(0)->name() << "); ";
    }
    values.push_back(tv);
    c.inputs.push_back(std::move(in));
  }

  auto unary = [&](TensorView* x) {
    const int64_t op = rng.uniform(0, 5);
    TensorView* y = nullptr;
    std::string what;
    switch (op) {
      case 0:
        y = neg(x);
        what = "neg";
        break;
      case 1:
        y = abs(x);
        what = "abs";
        break;
      case 2:
        y = relu(x);
        what = "relu";
        break;
      case 3: {
        const DataType low =
            rng.chance(0.5) ? DataType::BFloat16 : DataType::Half;
        y = castOp(DataType::Float, castOp(low, x));
        what = "cast roundtrip through " + toString(low) + " of";
        break;
      }
      case 4:
        y = mul(x, IrBuilder::create<Val>(2.0));
        what = "2 *";
        break;
      default:
        y = add(x, IrBuilder::create<Val>(1.0));
        what = "1 +";
        break;
    }
    program << "T" << y->name() << " = " << what << " T" << x->name() << "; ";
    return y;
  };

  TensorView* acc = values[0];
  std::vector<TensorView*> intermediates;
  if (rng.chance(0.5)) {
    acc = unary(acc);
    intermediates.push_back(acc);
  }
  for (size_t i = 1; i < values.size(); ++i) {
    TensorView* a = acc;
    TensorView* b = values[i];
    if (rng.chance(0.5)) {
      std::swap(a, b);
    }
    const int64_t op = rng.uniform(0, 3);
    const char* names[] = {"add", "mul", "sub", "maximum"};
    switch (op) {
      case 0:
        acc = add(a, b);
        break;
      case 1:
        acc = mul(a, b);
        break;
      case 2:
        acc = sub(a, b);
        break;
      default:
        acc = maximum(a, b);
        break;
    }
    program << "T" << acc->name() << " = " << names[op] << "(T" << a->name()
            << ", T" << b->name() << "); ";
    intermediates.push_back(acc);
    if (rng.chance(0.3)) {
      acc = unary(acc);
      intermediates.push_back(acc);
    }
  }
  if (acc->isFusionInput() || acc->definition()->isA<BroadcastOp>()) {
    acc = unary(acc);
  }
  c.fusion->addOutput(acc);
  c.outputs.push_back({detail::randomOutputLayout(rng, c.shape)});
  program << "outputs: T" << acc->name();
  // A second output: an intermediate also read inside the fusion.
  std::vector<TensorView*> candidates;
  for (TensorView* tv : intermediates) {
    if (tv != acc && !tv->hasBroadcast()) {
      candidates.push_back(tv);
    }
  }
  if (!candidates.empty() && rng.chance(0.3)) {
    TensorView* second = rng.pick(candidates);
    c.fusion->addOutput(second);
    c.outputs.push_back({detail::randomOutputLayout(rng, c.shape)});
    program << ", T" << second->name();
  }
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    auto* tv = c.fusion->outputs()[o]->as<TensorView>();
    const Layout& layout = c.outputs[o].layout;
    if (layout.declared && !tv->hasBroadcast()) {
      const Contiguity contiguity(layout.order.size(), true);
      detail::declareAllocation(tv, layout, c.shape, contiguity);
    } else {
      c.outputs[o].layout = logicalLayout(rank);
    }
  }
  c.program = program.str();
  return c;
}

// Building a case by hand (the regression tests): an input of `sizes`
// viewed with `strides` into a buffer just large enough (after
// `storage_offset` elements), declared with `layout` (logicalLayout(rank)
// for none) and the contiguity flags the strides allow, or all false with
// `default_flags` (what makeSymbolicTensor declares).
inline InputSpec stridedInput(
    std::vector<int64_t> sizes, std::vector<int64_t> strides, Layout layout,
    bool default_flags = false, DataType dtype = DataType::Float,
    int64_t storage_offset = 0) {
  InputSpec in;
  in.sizes = std::move(sizes);
  in.broadcast.assign(in.sizes.size(), false);
  in.strides = std::move(strides);
  in.dtype = dtype;
  in.storage_offset = storage_offset;
  int64_t last = 0;
  for (size_t a = 0; a < in.sizes.size(); ++a) {
    last += (in.sizes[a] - 1) * in.strides[a];
  }
  in.buffer_numel = storage_offset + last + 1;
  in.layout = std::move(layout);
  detail::bindAllocation(in, [&](bool fits) { return fits && !default_flags; });
  return in;
}

// Adds `in` to `c` (whose fusion is current) as an input covering the
// full-shape axes `full_axes` (all when empty) and returns its tensor.
inline TensorView* addInput(
    Case& c, InputSpec in, std::vector<int64_t> full_axes = {}) {
  if (full_axes.empty()) {
    full_axes.resize(in.sizes.size());
    std::iota(full_axes.begin(), full_axes.end(), 0);
  }
  in.full_axes = std::move(full_axes);
  TensorView* tv = detail::declareInput(in);
  c.fusion->addInput(tv);
  c.inputs.push_back(std::move(in));
  return tv;
}

// Adds `tv` to `c` as an output laid out as `layout` (not declared: no
// allocation domain).
inline void addOutput(Case& c, TensorView* tv, Layout layout) {
  c.fusion->addOutput(tv);
  if (layout.declared) {
    const Contiguity contiguity(layout.order.size(), true);
    detail::declareAllocation(tv, layout, c.shape, contiguity);
  }
  c.outputs.push_back({std::move(layout)});
}

// The input tensors of `c` on `device`: views into NaN-filled buffers, the
// elements drawn from a normal distribution.
inline std::vector<at::Tensor> makeInputs(
    const Case& c, const at::Device& device, uint64_t seed) {
  at::manual_seed(seed);
  std::vector<at::Tensor> tensors;
  for (const InputSpec& in : c.inputs) {
    const auto type = in.dtype == DataType::Float  ? at::kFloat
                      : in.dtype == DataType::Half ? at::kHalf
                                                   : at::kBFloat16;
    at::Tensor buffer = at::full(
        {in.buffer_numel}, std::numeric_limits<double>::quiet_NaN(),
        at::TensorOptions().dtype(type).device(device));
    // Elements are written through a view without the stride-0 axes
    // (size 1 there), which alias.
    std::vector<int64_t> distinct = in.sizes;
    for (size_t a = 0; a < distinct.size(); ++a) {
      if (in.strides[a] == 0) {
        distinct[a] = 1;
      }
    }
    buffer.as_strided(distinct, in.strides, in.storage_offset)
        .copy_(at::randn(distinct, at::TensorOptions().dtype(at::kFloat))
                   .to(type)
                   .to(device));
    tensors.push_back(
        buffer.as_strided(in.sizes, in.strides, in.storage_offset));
  }
  return tensors;
}

// The interpreter's view of input `i`'s memory.
inline kir_test::BufferLayout inputLayout(const InputSpec& in) {
  kir_test::BufferLayout layout;
  layout.logical_sizes = in.sizes;
  layout.alloc_sizes = in.alloc_sizes;
  layout.alloc_strides = in.alloc_strides;
  const Layout declared = in.layout;
  const std::vector<int64_t> sizes = in.sizes;
  layout.to_alloc = [declared, sizes](const Coord& c) {
    return std::optional(declared.allocationIndices(sizes, c));
  };
  layout.may_alias =
      std::find(in.strides.begin(), in.strides.end(), 0) != in.strides.end();
  return layout;
}

// The interpreter's view of an output laid out densely as `layout` says.
inline kir_test::BufferLayout outputLayout(
    const Layout& layout, const std::vector<int64_t>& shape) {
  kir_test::BufferLayout result;
  result.logical_sizes = shape;
  result.alloc_sizes = layout.allocationSizes(shape);
  result.alloc_strides = kir_test::rowMajorStrides(result.alloc_sizes);
  // A size-1 axis is passed with the stride it would have if contiguous,
  // which rowMajorStrides already gives.
  result.to_alloc = [layout, shape](const Coord& c) {
    return std::optional(layout.allocationIndices(shape, c));
  };
  return result;
}

// The logical strides an output laid out densely as `layout` has; size-1
// axes are left out of comparisons (their stride means nothing).
inline std::vector<int64_t> expectedOutputStrides(
    const Layout& layout, const std::vector<int64_t>& shape) {
  return layout.logicalStrides(
      shape, kir_test::rowMajorStrides(layout.allocationSizes(shape)));
}

} // namespace fuser::random_fusion
