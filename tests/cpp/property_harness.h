// Shared pieces of the property-based tests (test_reduction_properties.cpp,
// test_normalization_properties.cpp): case counts and the first seed from
// the environment, and random shapes with their memory orders.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

namespace fuser {

// Internal linkage: each test file that includes it has its own copy.
namespace {

// The value of the environment variable `variable`, else `fallback`.
int64_t envCount(const char* variable, int64_t fallback) {
  const char* value = std::getenv(variable);
  return value != nullptr ? std::atoll(value) : fallback;
}

// FUSER_PROPERTY_SEED, else 1: the first case's seed.
uint64_t firstSeed() {
  const char* value = std::getenv("FUSER_PROPERTY_SEED");
  return value != nullptr ? std::strtoull(value, nullptr, 10) : 1;
}

// A value in [0, n) from `rng`.
int64_t pick(std::mt19937_64& rng, int64_t n) {
  return static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
}

// A random shape and memory order: min_rank + pick(ranks) axes, each
// extent one of `extents`, the largest halved until the shape has at most
// `max_elements` elements; `order` gets the logical axes in a random
// memory order.
std::vector<int64_t> randomSizes(
    std::mt19937_64& rng, const std::vector<int64_t>& extents, int64_t min_rank,
    int64_t ranks, int64_t max_elements, std::vector<int64_t>* order) {
  const int64_t rank = min_rank + pick(rng, ranks);
  std::vector<int64_t> sizes;
  for (int64_t a = 0; a < rank; ++a) {
    sizes.push_back(extents[static_cast<size_t>(
        pick(rng, static_cast<int64_t>(extents.size())))]);
  }
  auto numel = [&] {
    return std::accumulate(
        sizes.begin(), sizes.end(), int64_t(1), std::multiplies<>());
  };
  while (numel() > max_elements) {
    auto largest = std::max_element(sizes.begin(), sizes.end());
    *largest = (*largest + 1) / 2;
  }
  order->resize(static_cast<size_t>(rank));
  std::iota(order->begin(), order->end(), 0);
  std::shuffle(order->begin(), order->end(), rng);
  return sizes;
}

} // namespace

} // namespace fuser
