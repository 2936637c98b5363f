// Device-side view of a tensor kernel argument.
//
// Every fusion input and output is passed to the kernel by value as a
// Tensor<T, LogicalRank, AllocRank>:
//   - data:          pointer to the first element of the allocation,
//   - logical_size:  extents of the logical domain (the at::Tensor's sizes),
//   - alloc_stride:  strides, in elements, of the allocation domain, outermost
//                    first (for a device-sharded tensor, of the local shard).
// Sizes and strides use nvfuser_index_t, the index type of the kernel (int32_t
// or int64_t), which the kernel preamble defines before this header.
//
// The host builds the argument with the same layout: the pointer at offset 0,
// then LogicalRank sizes, then AllocRank strides, the whole padded to the
// alignment of a pointer. A rank-0 tensor is only its pointer.
#ifndef FUSER_RUNTIME_TENSOR_H
#define FUSER_RUNTIME_TENSOR_H

template <typename T, int LogicalRank, int AllocRank>
struct Tensor {
  static_assert(
      LogicalRank > 0 && AllocRank > 0,
      "a tensor with rank 0 has neither sizes nor strides");

  __device__ T& operator[](nvfuser_index_t linear_index) {
    return data[linear_index];
  }
  __device__ const T& operator[](nvfuser_index_t linear_index) const {
    return data[linear_index];
  }

  __device__ nvfuser_index_t size(int dim) const {
    return logical_size[dim];
  }
  __device__ nvfuser_index_t stride(int dim) const {
    return alloc_stride[dim];
  }

  // Number of elements of the logical domain.
  __device__ nvfuser_index_t numel() const {
    nvfuser_index_t n = 1;
#pragma unroll
    for (int i = 0; i < LogicalRank; ++i) {
      n *= logical_size[i];
    }
    return n;
  }

  T* data;
  nvfuser_index_t logical_size[LogicalRank];
  nvfuser_index_t alloc_stride[AllocRank];
};

// A 0-dim tensor: a single element, no sizes and no strides.
template <typename T>
struct Tensor<T, 0, 0> {
  __device__ T& operator[](nvfuser_index_t) {
    return *data;
  }
  __device__ const T& operator[](nvfuser_index_t) const {
    return *data;
  }

  __device__ nvfuser_index_t numel() const {
    return 1;
  }

  T* data;
};

#endif // FUSER_RUNTIME_TENSOR_H
