// Elementwise math with PyTorch's semantics where CUDA's library has no
// function of its own or a different one (doc/ops.md): sign, the
// predicates on integers, frac, remainder with the divisor's sign, shifts
// by any amount, and gcd. The 16-bit float types compute in float, so
// only float, double and the integer types appear here.
#ifndef FUSER_RUNTIME_MATH_H
#define FUSER_RUNTIME_MATH_H

// -1, 0 or 1; 0 for NaN, as torch.sign.
template <typename T>
__device__ __forceinline__ T fuserSign(T x) {
  return static_cast<T>((T(0) < x) - (x < T(0)));
}
__device__ __forceinline__ bool fuserSign(bool x) {
  return x;
}

template <typename T>
__device__ __forceinline__ bool fuserSignbit(T x) {
  return x < T(0);
}
__device__ __forceinline__ bool fuserSignbit(float x) {
  return signbit(x);
}
__device__ __forceinline__ bool fuserSignbit(double x) {
  return signbit(x);
}

template <typename T>
__device__ __forceinline__ bool fuserIsNan(T x) {
  return x != x;
}
template <typename T>
__device__ __forceinline__ bool fuserIsInf(T) {
  return false;
}
__device__ __forceinline__ bool fuserIsInf(float x) {
  return isinf(x);
}
__device__ __forceinline__ bool fuserIsInf(double x) {
  return isinf(x);
}
template <typename T>
__device__ __forceinline__ bool fuserIsFinite(T) {
  return true;
}
__device__ __forceinline__ bool fuserIsFinite(float x) {
  return isfinite(x);
}
__device__ __forceinline__ bool fuserIsFinite(double x) {
  return isfinite(x);
}

__device__ __forceinline__ float fuserFrac(float x) {
  return x - truncf(x);
}
__device__ __forceinline__ double fuserFrac(double x) {
  return x - trunc(x);
}

// The remainder with the divisor's sign (Python's %).
template <typename T>
__device__ __forceinline__ T fuserRemainder(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__device__ __forceinline__ float fuserRemainder(float a, float b) {
  float r = fmodf(a, b);
  return (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) ? r + b : r;
}
__device__ __forceinline__ double fuserRemainder(double a, double b) {
  double r = fmod(a, b);
  return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r;
}

// Shifts by a negative amount or by the width or more are defined, as in
// PyTorch: 0 for left and logical right shifts, the sign fill for the
// arithmetic right shift.
__device__ __forceinline__ int fuserLeftShift(int a, int b) {
  return (b < 0 || b >= 32) ? 0
                            : static_cast<int>(static_cast<unsigned>(a) << b);
}
__device__ __forceinline__ long long fuserLeftShift(long long a, long long b) {
  return (b < 0 || b >= 64)
             ? 0
             : static_cast<long long>(static_cast<unsigned long long>(a) << b);
}
__device__ __forceinline__ int fuserRightShift(int a, int b) {
  return (b < 0 || b >= 31) ? (a >> 31) : (a >> b);
}
__device__ __forceinline__ long long fuserRightShift(long long a, long long b) {
  return (b < 0 || b >= 63) ? (a >> 63) : (a >> b);
}
__device__ __forceinline__ int fuserLogicalRightShift(int a, int b) {
  return (b < 0 || b >= 32) ? 0
                            : static_cast<int>(static_cast<unsigned>(a) >> b);
}
__device__ __forceinline__ long long fuserLogicalRightShift(
    long long a, long long b) {
  return (b < 0 || b >= 64)
             ? 0
             : static_cast<long long>(static_cast<unsigned long long>(a) >> b);
}

// Non-negative, gcd(0, 0) = 0, as torch.gcd.
template <typename T>
__device__ __forceinline__ T fuserGcd(T a, T b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (a != 0) {
    T c = a;
    a = b % a;
    b = c;
  }
  return b;
}

#endif // FUSER_RUNTIME_MATH_H
