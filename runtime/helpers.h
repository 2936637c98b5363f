// Device helpers the generated kernels call: integer math, the activation
// functions, casts between the floating types, and vector copies.
#ifndef FUSER_RUNTIME_HELPERS_H
#define FUSER_RUNTIME_HELPERS_H

__device__ __forceinline__ nvfuser_index_t
ceilDiv(nvfuser_index_t a, nvfuser_index_t b) {
  return (a + b - 1) / b;
}

// NaN propagates, as in PyTorch, for every floating type (the comparison
// alone would drop a NaN `a`); `x != x` is false for integers.
template <typename T>
__device__ __forceinline__ T fuserMax(T a, T b) {
  return (a != a) ? a : ((b != b) ? b : (a > b ? a : b));
}
__device__ __forceinline__ float fuserMax(float a, float b) {
  // NaN propagates, as in PyTorch: in one instruction since sm_80 (the
  // comparisons compile to branches inside a predicated statement).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a) ? a : ((b != b) ? b : fmaxf(a, b));
#endif
}
__device__ __forceinline__ double fuserMax(double a, double b) {
  return (a != a) ? a : ((b != b) ? b : fmax(a, b));
}

template <typename T>
__device__ __forceinline__ T fuserMin(T a, T b) {
  return (a != a) ? a : ((b != b) ? b : (a < b ? a : b));
}
__device__ __forceinline__ float fuserMin(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a) ? a : ((b != b) ? b : fminf(a, b));
#endif
}
__device__ __forceinline__ double fuserMin(double a, double b) {
  return (a != a) ? a : ((b != b) ? b : fmin(a, b));
}

template <typename T>
__device__ __forceinline__ T relu(T x) {
  return x > T(0) ? x : T(0);
}
__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}
__device__ __forceinline__ double sigmoid(double x) {
  return 1.0 / (1.0 + exp(-x));
}
// The exact (erf) GELU, PyTorch's default.
__device__ __forceinline__ float gelu(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
}
__device__ __forceinline__ double gelu(double x) {
  return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
}
__device__ __forceinline__ float silu(float x) {
  return x / (1.0f + expf(-x));
}
__device__ __forceinline__ double silu(double x) {
  return x / (1.0 + exp(-x));
}
__device__ __forceinline__ float reciprocal(float x) {
  return 1.0f / x;
}
__device__ __forceinline__ double reciprocal(double x) {
  return 1.0 / x;
}

// Casts; the 16-bit types convert through float.
template <typename To, typename From>
struct CastImpl {
  __device__ __forceinline__ static To apply(From x) {
    return static_cast<To>(x);
  }
};
// The 16-bit types' casts exist where the kernel includes their headers
// (the code generator defines FUSER_HAS_HALF / FUSER_HAS_BFLOAT16 for a
// kernel that uses them: each header costs NVRTC time).
#ifdef FUSER_HAS_HALF
template <typename From>
struct CastImpl<__half, From> {
  __device__ __forceinline__ static __half apply(From x) {
    return __float2half(static_cast<float>(x));
  }
};
template <typename To>
struct CastImpl<To, __half> {
  __device__ __forceinline__ static To apply(__half x) {
    return static_cast<To>(__half2float(x));
  }
};
template <>
struct CastImpl<__half, __half> {
  __device__ __forceinline__ static __half apply(__half x) {
    return x;
  }
};
#endif
#ifdef FUSER_HAS_BFLOAT16
template <typename From>
struct CastImpl<__nv_bfloat16, From> {
  __device__ __forceinline__ static __nv_bfloat16 apply(From x) {
    return __float2bfloat16(static_cast<float>(x));
  }
};
template <typename To>
struct CastImpl<To, __nv_bfloat16> {
  __device__ __forceinline__ static To apply(__nv_bfloat16 x) {
    return static_cast<To>(__bfloat162float(x));
  }
};
template <>
struct CastImpl<__nv_bfloat16, __nv_bfloat16> {
  __device__ __forceinline__ static __nv_bfloat16 apply(__nv_bfloat16 x) {
    return x;
  }
};
#endif
#if defined(FUSER_HAS_HALF) && defined(FUSER_HAS_BFLOAT16)
template <>
struct CastImpl<__half, __nv_bfloat16> {
  __device__ __forceinline__ static __half apply(__nv_bfloat16 x) {
    return __float2half(__bfloat162float(x));
  }
};
template <>
struct CastImpl<__nv_bfloat16, __half> {
  __device__ __forceinline__ static __nv_bfloat16 apply(__half x) {
    return __float2bfloat16(__half2float(x));
  }
};
#endif
#ifdef FUSER_HAS_FLOAT8
// The 8-bit floats convert through float (runtime/float8.h). A pair of
// two types that each have conversions of their own (an 8-bit float and
// a 16-bit or another 8-bit float) is spelled out, so that no two
// partial specializations match it.
#define FUSER_FLOAT8_CASTS(T, toFloat, fromFloat)                 \
  template <typename From>                                        \
  struct CastImpl<T, From> {                                      \
    __device__ __forceinline__ static T apply(From x) {           \
      return fromFloat(CastImpl<float, From>::apply(x));          \
    }                                                             \
  };                                                              \
  template <typename To>                                          \
  struct CastImpl<To, T> {                                        \
    __device__ __forceinline__ static To apply(T x) {             \
      return CastImpl<To, float>::apply(toFloat(x));              \
    }                                                             \
  };                                                              \
  template <>                                                     \
  struct CastImpl<T, T> {                                         \
    __device__ __forceinline__ static T apply(T x) {              \
      return x;                                                   \
    }                                                             \
  };
#define FUSER_FLOAT8_PAIR(To, From, toFloat, fromFloat)           \
  template <>                                                     \
  struct CastImpl<To, From> {                                     \
    __device__ __forceinline__ static To apply(From x) {          \
      return fromFloat(toFloat(x));                               \
    }                                                             \
  };
FUSER_FLOAT8_CASTS(fuser_float8_e4m3fn, fuserE4m3fnToFloat, fuserFloatToE4m3fn)
FUSER_FLOAT8_CASTS(fuser_float8_e5m2, fuserE5m2ToFloat, fuserFloatToE5m2)
FUSER_FLOAT8_PAIR(
    fuser_float8_e4m3fn, fuser_float8_e5m2, fuserE5m2ToFloat,
    fuserFloatToE4m3fn)
FUSER_FLOAT8_PAIR(
    fuser_float8_e5m2, fuser_float8_e4m3fn, fuserE4m3fnToFloat,
    fuserFloatToE5m2)
#ifdef FUSER_HAS_HALF
FUSER_FLOAT8_PAIR(__half, fuser_float8_e4m3fn, fuserE4m3fnToFloat, __float2half)
FUSER_FLOAT8_PAIR(__half, fuser_float8_e5m2, fuserE5m2ToFloat, __float2half)
FUSER_FLOAT8_PAIR(fuser_float8_e4m3fn, __half, __half2float, fuserFloatToE4m3fn)
FUSER_FLOAT8_PAIR(fuser_float8_e5m2, __half, __half2float, fuserFloatToE5m2)
#endif
#ifdef FUSER_HAS_BFLOAT16
FUSER_FLOAT8_PAIR(
    __nv_bfloat16, fuser_float8_e4m3fn, fuserE4m3fnToFloat, __float2bfloat16)
FUSER_FLOAT8_PAIR(
    __nv_bfloat16, fuser_float8_e5m2, fuserE5m2ToFloat, __float2bfloat16)
FUSER_FLOAT8_PAIR(
    fuser_float8_e4m3fn, __nv_bfloat16, __bfloat162float, fuserFloatToE4m3fn)
FUSER_FLOAT8_PAIR(
    fuser_float8_e5m2, __nv_bfloat16, __bfloat162float, fuserFloatToE5m2)
#endif
#undef FUSER_FLOAT8_PAIR
#undef FUSER_FLOAT8_CASTS
#endif
template <typename To, typename From>
__device__ __forceinline__ To castTo(From x) {
  return CastImpl<To, From>::apply(x);
}

// N elements of T moved as one access of sizeof(T) * N bytes; both
// pointers must be aligned to that (the runtime checks global pointers).
template <typename T, int N>
struct alignas(sizeof(T) * N) AlignedVector {
  T data[N];
};
// The unsigned integer (or CUDA vector of them) of a size.
template <int Bytes>
struct UnsignedOfSize;
template <>
struct UnsignedOfSize<1> {
  using type = unsigned char;
};
template <>
struct UnsignedOfSize<2> {
  using type = unsigned short;
};
template <>
struct UnsignedOfSize<4> {
  using type = unsigned int;
};
template <>
struct UnsignedOfSize<8> {
  using type = uint2;
};
template <>
struct UnsignedOfSize<16> {
  using type = uint4;
};

template <typename T, int N>
__device__ __forceinline__ void vectorizedCopy(T* dst, const T* src) {
  *reinterpret_cast<AlignedVector<T, N>*>(dst) =
      *reinterpret_cast<const AlignedVector<T, N>*>(src);
}

// A vector store to global memory as one st.global instruction, which
// the code generator prints for a vectorized copy into global memory
// (codegen/memory.cpp): NVVM split vectorizedCopy's struct copy into
// scalar stores where both branches of an unswitched nest store the same
// address (doc/design.md §5). Written in PTX: a plain (weak) store, as
// vectorizedCopy's was; __stwb's st.global.wb became a strong store
// (STG.E.128.STRONG.SM) in the SASS. Lowering admits vectors of a power of
// two up to 16 bytes (device_lower/analysis/vectorization.cpp); one or two
// bytes are one store anyway.
template <typename T, int N>
__device__ __forceinline__ void globalStore(T* dst, const T* src) {
  constexpr int kBytes = sizeof(T) * N;
  if constexpr (kBytes == 16) {
    const uint4 v = *reinterpret_cast<const uint4*>(src);
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(dst),
                 "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  } else if constexpr (kBytes == 8) {
    const uint2 v = *reinterpret_cast<const uint2*>(src);
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(dst), "r"(v.x),
                 "r"(v.y)
                 : "memory");
  } else if constexpr (kBytes == 4) {
    asm volatile("st.global.b32 [%0], %1;" ::"l"(dst),
                 "r"(*reinterpret_cast<const unsigned*>(src))
                 : "memory");
  } else {
    using Bits = typename UnsignedOfSize<kBytes>::type;
    *reinterpret_cast<Bits*>(dst) = *reinterpret_cast<const Bits*>(src);
  }
}

// Loads of N elements of T from global memory with a cache policy, as one
// access (alignment as for vectorizedCopy): streamingLoad is ld.global.cs,
// evict-first in L1 and L2, for data a kernel reads once (it then replaces
// its own lines, not other data in L2); l2OnlyLoad is ld.global.cg, which
// bypasses L1. A plain copy is the default policy (cache at all levels).
template <typename T, int N>
__device__ __forceinline__ void streamingLoad(T* dst, const T* src) {
  using Bits = typename UnsignedOfSize<sizeof(T) * N>::type;
  *reinterpret_cast<Bits*>(dst) = __ldcs(reinterpret_cast<const Bits*>(src));
}
template <typename T, int N>
__device__ __forceinline__ void l2OnlyLoad(T* dst, const T* src) {
  using Bits = typename UnsignedOfSize<sizeof(T) * N>::type;
  *reinterpret_cast<Bits*>(dst) = __ldcg(reinterpret_cast<const Bits*>(src));
}

#endif // FUSER_RUNTIME_HELPERS_H
