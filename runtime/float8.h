// The 8-bit float types of PyTorch (torch.float8_e4m3fn, torch.float8_e5m2)
// and their conversions to and from float, with PyTorch's results: round to
// nearest even; e4m3fn, which has no infinity, gives NaN past its largest
// value (448) and for infinities; e5m2 gives infinity past 57344; NaN keeps
// its sign. The code generator includes this file only in kernels that use
// the types (doc/ops.md, "8-bit floats"). It is also compiled on the host by
// the CPU tests, which check every conversion against ATen's.
#ifndef FUSER_RUNTIME_FLOAT8_H
#define FUSER_RUNTIME_FLOAT8_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FUSER_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FUSER_HOST_DEVICE inline
#endif

struct alignas(1) fuser_float8_e4m3fn {
  unsigned char bits;
};
struct alignas(1) fuser_float8_e5m2 {
  unsigned char bits;
};

FUSER_HOST_DEVICE unsigned int fuserFloatBits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  unsigned int u;
  __builtin_memcpy(&u, &x, sizeof(u));
  return u;
#endif
}

FUSER_HOST_DEVICE float fuserFloatOfBits(unsigned int u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  __builtin_memcpy(&x, &u, sizeof(x));
  return x;
#endif
}

// A float rounded to the nearest value with `kMantissa` stored mantissa
// bits and exponent bias `kBias`, as the byte sign|exponent|mantissa. The
// magnitude code past the largest finite one is returned as is; the
// callers map it to NaN or infinity.
template <int kMantissa, int kBias>
FUSER_HOST_DEVICE unsigned int fuserRoundToFloat8(unsigned int magnitude) {
  const int exponent = static_cast<int>(magnitude >> 23) - 127;
  const int min_normal_exponent = 1 - kBias;
  if (exponent >= min_normal_exponent) {
    // Normal in the target: drop 23 - kMantissa mantissa bits, ties to
    // even, then rebias the exponent (a carry out of the mantissa moves
    // the exponent up, as it should).
    const int shift = 23 - kMantissa;
    const unsigned int rounded = magnitude + ((1u << (shift - 1)) - 1u) +
                                 ((magnitude >> shift) & 1u);
    return (rounded >> shift) -
           (static_cast<unsigned int>(127 - kBias) << kMantissa);
  }
  // Subnormal in the target: the value in units of its smallest step,
  // 2^(min_normal_exponent - kMantissa), rounded to nearest even. A float
  // subnormal (exponent field 0) is far below that step.
  if ((magnitude >> 23) == 0) {
    return 0;
  }
  const unsigned int mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  const int shift = 23 + min_normal_exponent - kMantissa - exponent;
  if (shift > 24) {
    return 0; // below half the smallest step
  }
  unsigned int q = mantissa >> shift;
  const unsigned int rest = mantissa & ((1u << shift) - 1u);
  const unsigned int half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1u))) {
    ++q;
  }
  return q;
}

FUSER_HOST_DEVICE fuser_float8_e4m3fn fuserFloatToE4m3fn(float x) {
  const unsigned int u = fuserFloatBits(x);
  const unsigned int sign = (u >> 24) & 0x80u;
  const unsigned int magnitude = u & 0x7fffffffu;
  unsigned int code = 0x7fu; // NaN, also for infinities
  if (magnitude < 0x7f800000u) {
    code = fuserRoundToFloat8<3, 7>(magnitude);
    code = code > 0x7eu ? 0x7fu : code;
  }
  return fuser_float8_e4m3fn{static_cast<unsigned char>(sign | code)};
}

FUSER_HOST_DEVICE fuser_float8_e5m2 fuserFloatToE5m2(float x) {
  const unsigned int u = fuserFloatBits(x);
  const unsigned int sign = (u >> 24) & 0x80u;
  const unsigned int magnitude = u & 0x7fffffffu;
  unsigned int code = 0x7fu; // NaN
  if (magnitude <= 0x7f800000u) {
    code = magnitude == 0x7f800000u ? 0x7cu
                                    : fuserRoundToFloat8<2, 15>(magnitude);
    code = code > 0x7cu ? 0x7cu : code;
  }
  return fuser_float8_e5m2{static_cast<unsigned char>(sign | code)};
}

// Every 8-bit value is exact in float.
template <int kMantissa, int kBias>
FUSER_HOST_DEVICE float fuserFloat8ToFloat(unsigned int bits) {
  const unsigned int sign = (bits & 0x80u) << 24;
  const unsigned int exponent = (bits & 0x7fu) >> kMantissa;
  const unsigned int mantissa = bits & ((1u << kMantissa) - 1u);
  if (exponent == 0) {
    // Subnormal: mantissa * 2^(1 - kBias - kMantissa), exact in float.
    const float step =
        fuserFloatOfBits(static_cast<unsigned int>(128 - kBias - kMantissa)
                         << 23);
    const float magnitude = static_cast<float>(mantissa) * step;
    return fuserFloatOfBits(sign | fuserFloatBits(magnitude));
  }
  return fuserFloatOfBits(
      sign | ((exponent + 127u - kBias) << 23) | (mantissa << (23 - kMantissa)));
}

FUSER_HOST_DEVICE float fuserE4m3fnToFloat(fuser_float8_e4m3fn x) {
  if ((x.bits & 0x7fu) == 0x7fu) {
    return fuserFloatOfBits(((x.bits & 0x80u) << 24) | 0x7fc00000u);
  }
  return fuserFloat8ToFloat<3, 7>(x.bits);
}

FUSER_HOST_DEVICE float fuserE5m2ToFloat(fuser_float8_e5m2 x) {
  if ((x.bits & 0x7cu) == 0x7cu) {
    // Exponent all ones: infinity, or NaN with a mantissa.
    const unsigned int sign = (x.bits & 0x80u) << 24;
    return fuserFloatOfBits(
        sign | ((x.bits & 0x3u) ? 0x7fc00000u : 0x7f800000u));
  }
  return fuserFloat8ToFloat<2, 15>(x.bits);
}

#endif // FUSER_RUNTIME_FLOAT8_H
