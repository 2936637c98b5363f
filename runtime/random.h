// Counter-based random numbers for the random ops (doc/ops.md, "Random
// numbers"): element i of a random tensor is a function of (seed, offset,
// i) alone, i its logical linear index, so a fusion gives the same values
// whatever its schedule (block size, vectorization, unrolling). The
// generator is Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel
// random numbers: as easy as 1, 2, 3", SC 2011): the counter is (i, offset),
// the key the seed. The code generator includes this file only in kernels
// with a random op; the CPU tests and the ATen evaluation compile it on the
// host, so both give the kernel's bits.
#ifndef FUSER_RUNTIME_RANDOM_H
#define FUSER_RUNTIME_RANDOM_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FUSER_RANDOM_FN __host__ __device__ __forceinline__
#else
#include <cmath>
#define FUSER_RANDOM_FN inline
#endif

struct FuserPhiloxBlock {
  unsigned int word[4];
};

// Philox4x32-10 of a 128-bit counter under a 64-bit key.
FUSER_RANDOM_FN FuserPhiloxBlock fuserPhilox4x32(
    FuserPhiloxBlock counter, unsigned int key0, unsigned int key1) {
  for (int round = 0; round < 10; ++round) {
    const unsigned long long p0 =
        static_cast<unsigned long long>(0xD2511F53u) * counter.word[0];
    const unsigned long long p1 =
        static_cast<unsigned long long>(0xCD9E8D57u) * counter.word[2];
    const unsigned int hi0 = static_cast<unsigned int>(p0 >> 32);
    const unsigned int hi1 = static_cast<unsigned int>(p1 >> 32);
    counter = FuserPhiloxBlock{
        {hi1 ^ counter.word[1] ^ key0, static_cast<unsigned int>(p1),
         hi0 ^ counter.word[3] ^ key1, static_cast<unsigned int>(p0)}};
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
  return counter;
}

// The block of element `index` of the random tensor of (seed, offset).
FUSER_RANDOM_FN FuserPhiloxBlock fuserRandomBlock(
    unsigned long long seed, unsigned long long offset,
    unsigned long long index) {
  return fuserPhilox4x32(
      FuserPhiloxBlock{
          {static_cast<unsigned int>(index),
           static_cast<unsigned int>(index >> 32),
           static_cast<unsigned int>(offset),
           static_cast<unsigned int>(offset >> 32)}},
      static_cast<unsigned int>(seed), static_cast<unsigned int>(seed >> 32));
}

// In [0, 1): 24 random bits for float, 53 for double.
FUSER_RANDOM_FN float fuserUnitFloat(unsigned int bits) {
  return static_cast<float>(bits >> 8) * 5.9604644775390625e-8f; // 2^-24
}
FUSER_RANDOM_FN double fuserUnitDouble(unsigned int high, unsigned int low) {
  const unsigned long long bits =
      (static_cast<unsigned long long>(high) << 21) ^ (low >> 11);
  return static_cast<double>(bits) * 1.1102230246251565e-16; // 2^-53
}

// Word k of a block, by selects rather than an indexed load: a block
// indexed by a value the compiler cannot fold would live in local memory.
FUSER_RANDOM_FN unsigned int fuserWord(
    const FuserPhiloxBlock& r, unsigned long long k) {
  const unsigned int low = (k & 1) ? r.word[1] : r.word[0];
  const unsigned int high = (k & 1) ? r.word[3] : r.word[2];
  return (k & 2) ? high : low;
}

// The last block a random op drew in this thread, and its counter. A
// block's four words serve four consecutive elements of a float tensor
// (two of a double one); an unrolled or vectorized loop asks for the same
// counter four times in a row, and the compiler does not see that
// (8t + k) / 4 repeats, so the kernel keeps one cache per random op and
// runs the ten rounds once per block (doc/ops.md, "Random numbers").
struct FuserPhiloxCache {
  unsigned long long counter = ~0ull; // no block drawn yet
  FuserPhiloxBlock block;
};

FUSER_RANDOM_FN const FuserPhiloxBlock& fuserCachedBlock(
    FuserPhiloxCache& cache, unsigned long long seed, unsigned long long offset,
    unsigned long long counter) {
  if (cache.counter != counter) {
    cache.block = fuserRandomBlock(seed, offset, counter);
    cache.counter = counter;
  }
  return cache.block;
}

// The block of `lane` in an unrolled loop over it (a constant once
// unrolled, from 0 in steps of one) at index `base + lane`, `base` and the
// trip count multiples of `per_block` (4 floats or 2 doubles): the lane
// that starts a block draws it, the others read it, and no run-time check
// is left for the compiler to fold (it does not fold fuserCachedBlock's).
// The cache's counter is kept true for the checked draws of the same op.
FUSER_RANDOM_FN const FuserPhiloxBlock& fuserLaneBlock(
    FuserPhiloxCache& cache, unsigned long long seed, unsigned long long offset,
    unsigned long long base, unsigned long long lane,
    unsigned long long per_block) {
  if (lane % per_block == 0) {
    cache.counter = (base + lane) / per_block;
    cache.block = fuserRandomBlock(seed, offset, cache.counter);
  }
  return cache.block;
}

// Uniform in [low, high) (float: computed in float; double: in double),
// one fused multiply-add on host and device alike: element k of block r,
// a float from word k, a double from words 2k and 2k + 1.
FUSER_RANDOM_FN float fuserUniformFloatIn(
    const FuserPhiloxBlock& r, unsigned long long k, float low, float high) {
  return fmaf(high - low, fuserUnitFloat(fuserWord(r, k)), low);
}
FUSER_RANDOM_FN double fuserUniformDoubleIn(
    const FuserPhiloxBlock& r, unsigned long long k, double low, double high) {
  return fma(
      high - low, fuserUnitDouble(fuserWord(r, 2 * k), fuserWord(r, 2 * k + 1)),
      low);
}

// Element `index` of the random tensor. The kernels pass their op's cache
// (or draw by lane, above); the host evaluation draws each block afresh
// (same bits).
FUSER_RANDOM_FN float fuserUniformFloat(
    FuserPhiloxCache& cache, unsigned long long seed, unsigned long long offset,
    unsigned long long index, float low, float high) {
  return fuserUniformFloatIn(
      fuserCachedBlock(cache, seed, offset, index >> 2), index & 3, low, high);
}
FUSER_RANDOM_FN double fuserUniformDouble(
    FuserPhiloxCache& cache, unsigned long long seed, unsigned long long offset,
    unsigned long long index, double low, double high) {
  return fuserUniformDoubleIn(
      fuserCachedBlock(cache, seed, offset, index >> 1), index & 1, low, high);
}
FUSER_RANDOM_FN float fuserUniformFloatOfLane(
    FuserPhiloxCache& cache, unsigned long long seed, unsigned long long offset,
    unsigned long long base, unsigned long long lane, float low, float high) {
  return fuserUniformFloatIn(
      fuserLaneBlock(cache, seed, offset, base, lane, 4), lane & 3, low, high);
}
FUSER_RANDOM_FN double fuserUniformDoubleOfLane(
    FuserPhiloxCache& cache, unsigned long long seed, unsigned long long offset,
    unsigned long long base, unsigned long long lane, double low, double high) {
  return fuserUniformDoubleIn(
      fuserLaneBlock(cache, seed, offset, base, lane, 2), lane & 1, low, high);
}
FUSER_RANDOM_FN float fuserUniformFloat(
    unsigned long long seed, unsigned long long offset,
    unsigned long long index, float low, float high) {
  FuserPhiloxCache fresh;
  return fuserUniformFloat(fresh, seed, offset, index, low, high);
}
FUSER_RANDOM_FN double fuserUniformDouble(
    unsigned long long seed, unsigned long long offset,
    unsigned long long index, double low, double high) {
  FuserPhiloxCache fresh;
  return fuserUniformDouble(fresh, seed, offset, index, low, high);
}

// Normal of mean `mean` and standard deviation `std` by the Box-Muller
// transform of two uniforms (the first in (0, 1], so its log is finite),
// computed in double for every output type: the host's and the device's
// double log, sqrt and cos agree far below a float's precision.
FUSER_RANDOM_FN double fuserNormalDouble(
    unsigned long long seed, unsigned long long offset,
    unsigned long long index, double mean, double std) {
  const FuserPhiloxBlock r = fuserRandomBlock(seed, offset, index);
  const double u1 = 1.0 - fuserUnitDouble(r.word[0], r.word[1]);
  const double u2 = fuserUnitDouble(r.word[2], r.word[3]);
  const double radius = sqrt(-2.0 * log(u1));
  return fma(std, radius * cos(6.283185307179586 * u2), mean);
}

#undef FUSER_RANDOM_FN
#endif // FUSER_RUNTIME_RANDOM_H
