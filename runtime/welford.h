// Welford's one-pass mean and variance (doc/reduction.md §4): a state
// holds the mean of the elements seen, the sum of their squared deviations
// from it (var_sum) and their count; two states merge exactly (Chan et
// al.'s pairwise update), so serial, block and grid reductions combine them
// like sums.
#ifndef FUSER_RUNTIME_WELFORD_H
#define FUSER_RUNTIME_WELFORD_H

// The count has the kernel's index type: a count never exceeds the
// elements of a tensor, which that type indexes, and a 32-bit count keeps
// the per-element update in 32-bit integer math.
template <typename T>
struct Welford {
  T avg;
  T var_sum;
  nvfuser_index_t n;
  __device__ Welford() : avg(0), var_sum(0), n(0) {}
  __device__ Welford(T mean, T m2, nvfuser_index_t count)
      : avg(mean), var_sum(m2), n(count) {}
};

// One element as a state.
__device__ __forceinline__ Welford<float> welfordInit(float x) {
  return Welford<float>(x, 0.0f, 1);
}
__device__ __forceinline__ Welford<double> welfordInit(double x) {
  return Welford<double>(x, 0.0, 1);
}

// nb / n, the weight of the merged-in state. In float the fast division
// (2 ulp, as torch.compile's Welford uses): the state is merged once per
// element, and a correctly rounded division costs several times the rest
// of the update. Counts stay far below 2^126, where it would break down.
__device__ __forceinline__ float welfordWeight(float nb, float n) {
  return __fdividef(nb, n);
}
__device__ __forceinline__ double welfordWeight(double nb, double n) {
  return nb / n;
}

// The var_sum update delta^2 * na * nb / n is written as
// delta * (b.avg - avg) * nb (equal, since b.avg - avg = delta * na / n):
// an empty `a` (all zero) then yields `b` without a branch, and merging one
// element (nb = 1, known after inlining welfordInit) costs one division.
template <typename T>
__device__ __forceinline__ Welford<T> welfordCombine(
    const Welford<T>& a, const Welford<T>& b) {
  if (b.n == 0) {
    return a;
  }
  const nvfuser_index_t n = a.n + b.n;
  const T nb = static_cast<T>(b.n);
  const T delta = b.avg - a.avg;
  const T avg = a.avg + delta * welfordWeight(nb, static_cast<T>(n));
  return Welford<T>(avg, a.var_sum + b.var_sum + delta * (b.avg - avg) * nb, n);
}

// For the warp reductions of runtime/block_reduction.h.
template <typename T>
__device__ __forceinline__ Welford<T> shuffleDown(
    const Welford<T>& value, int offset) {
  return Welford<T>(
      __shfl_down_sync(0xffffffffu, value.avg, offset),
      __shfl_down_sync(0xffffffffu, value.var_sum, offset),
      __shfl_down_sync(0xffffffffu, value.n, offset));
}
template <typename T>
__device__ __forceinline__ Welford<T> shuffleFrom(
    const Welford<T>& value, int lane) {
  return Welford<T>(
      __shfl_sync(0xffffffffu, value.avg, lane),
      __shfl_sync(0xffffffffu, value.var_sum, lane),
      __shfl_sync(0xffffffffu, value.n, lane));
}

#endif // FUSER_RUNTIME_WELFORD_H
