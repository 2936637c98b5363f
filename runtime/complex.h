// Complex numbers of float or double parts, laid out as torch.complex64 and
// torch.complex128 (real part first, aligned to their size, so a vector of
// them is one access), and the arithmetic of doc/ops.md "Complex numbers".
// The code generator includes this header only in kernels that use the
// types, and spells casts to and from them with the functions at the end
// (a CastImpl of runtime/helpers.h for them would be ambiguous with those
// of the 16-bit and 8-bit types).
#ifndef FUSER_RUNTIME_COMPLEX_H
#define FUSER_RUNTIME_COMPLEX_H

template <typename T>
struct alignas(2 * sizeof(T)) fuser_complex {
  T re;
  T im;
};

template <typename T>
__device__ __forceinline__ fuser_complex<T> makeComplex(T re, T im) {
  fuser_complex<T> z;
  z.re = re;
  z.im = im;
  return z;
}

template <typename T>
__device__ __forceinline__ fuser_complex<T> operator+(
    fuser_complex<T> a, fuser_complex<T> b) {
  return makeComplex(a.re + b.re, a.im + b.im);
}

template <typename T>
__device__ __forceinline__ fuser_complex<T> operator-(
    fuser_complex<T> a, fuser_complex<T> b) {
  return makeComplex(a.re - b.re, a.im - b.im);
}

template <typename T>
__device__ __forceinline__ fuser_complex<T> operator-(fuser_complex<T> a) {
  return makeComplex(-a.re, -a.im);
}

template <typename T>
__device__ __forceinline__ fuser_complex<T> operator*(
    fuser_complex<T> a, fuser_complex<T> b) {
  return makeComplex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}

// Smith's division: the divisor's larger part scales the other, so that no
// intermediate squares a part (which over- or underflows long before the
// quotient does). A zero divisor gives infinities and NaNs as IEEE
// division of the parts does.
template <typename T>
__device__ __forceinline__ fuser_complex<T> operator/(
    fuser_complex<T> a, fuser_complex<T> b) {
  const T abs_re = b.re < T(0) ? -b.re : b.re;
  const T abs_im = b.im < T(0) ? -b.im : b.im;
  if (abs_re == T(0) && abs_im == T(0)) {
    return makeComplex(a.re / abs_re, a.im / abs_im);
  }
  if (abs_re >= abs_im) {
    const T ratio = b.im / b.re;
    const T scale = T(1) / (b.re + b.im * ratio);
    return makeComplex(
        (a.re + a.im * ratio) * scale, (a.im - a.re * ratio) * scale);
  }
  const T ratio = b.re / b.im;
  const T scale = T(1) / (b.im + b.re * ratio);
  return makeComplex(
      (a.re * ratio + a.im) * scale, (a.im * ratio - a.re) * scale);
}

template <typename T>
__device__ __forceinline__ bool operator==(
    fuser_complex<T> a, fuser_complex<T> b) {
  return a.re == b.re && a.im == b.im;
}

template <typename T>
__device__ __forceinline__ bool operator!=(
    fuser_complex<T> a, fuser_complex<T> b) {
  return !(a == b);
}

__device__ __forceinline__ float fuserComplexAbs(fuser_complex<float> z) {
  return hypotf(z.re, z.im);
}
__device__ __forceinline__ double fuserComplexAbs(fuser_complex<double> z) {
  return hypot(z.re, z.im);
}

template <typename T>
__device__ __forceinline__ T fuserReal(fuser_complex<T> z) {
  return z.re;
}

template <typename T>
__device__ __forceinline__ T fuserImag(fuser_complex<T> z) {
  return z.im;
}

template <typename T>
__device__ __forceinline__ fuser_complex<T> fuserConj(fuser_complex<T> z) {
  return makeComplex(z.re, -z.im);
}

// A real value of the part type as a complex one, and a complex value in
// parts of another precision.
template <typename T>
__device__ __forceinline__ fuser_complex<T> fuserToComplex(T x) {
  return makeComplex(x, T(0));
}

template <typename To, typename From>
__device__ __forceinline__ fuser_complex<To> fuserComplexCast(
    fuser_complex<From> z) {
  return makeComplex(static_cast<To>(z.re), static_cast<To>(z.im));
}

#endif // FUSER_RUNTIME_COMPLEX_H
