// Reductions across the threads of a block (doc/reduction.md). Every
// thread of the block must call them (they synchronize). The threads that
// share the indices of the dimensions not reduced form a segment; the
// result of a segment lands in its leader, the thread whose reduced
// indices are all 0, as out = op(out, total).
#ifndef FUSER_RUNTIME_BLOCK_REDUCTION_H
#define FUSER_RUNTIME_BLOCK_REDUCTION_H

// Of a point `at` of a 3-D launch dimension `dims` (a thread in its block,
// or a block in its grid), with the dimensions X, Y, Z reduced: its position
// among the points of its segment (those that differ only in reduced
// dimensions), the segment's size, and the segment's index among segments.
template <bool X, bool Y, bool Z>
struct Segment {
  __device__ Segment(uint3 at, dim3 dims) {
    size = (X ? dims.x : 1u) * (Y ? dims.y : 1u) * (Z ? dims.z : 1u);
    index = (Z ? at.z : 0u);
    index = index * (Y ? dims.y : 1u) + (Y ? at.y : 0u);
    index = index * (X ? dims.x : 1u) + (X ? at.x : 0u);
    segment = (Z ? 0u : at.z);
    segment = segment * (Y ? 1u : dims.y) + (Y ? 0u : at.y);
    segment = segment * (X ? 1u : dims.x) + (X ? 0u : at.x);
  }
  unsigned index;
  unsigned size;
  unsigned segment;
};

// This thread's segment in its block.
template <bool X, bool Y, bool Z>
struct BlockSegment : Segment<X, Y, Z> {
  __device__ BlockSegment() : Segment<X, Y, Z>(threadIdx, blockDim) {}
};

// `value` of the lane `offset` above this one in the warp, and of the lane
// `lane` of the warp. Other types (runtime/welford.h) overload them.
template <typename T>
__device__ __forceinline__ T shuffleDown(T value, int offset) {
  return __shfl_down_sync(0xffffffffu, value, offset);
}
template <typename T>
__device__ __forceinline__ T shuffleFrom(T value, int lane) {
  return __shfl_sync(0xffffffffu, value, lane);
}

// Where a thread's value lives in `smem` while a segment is reduced: the
// threads of a warp at consecutive addresses, so that they hit distinct
// banks. When X is reduced, neighbouring lanes are neighbours within a
// segment (segment-major slots); otherwise they are in neighbouring
// segments (index-major slots).
template <bool X, bool Y, bool Z>
__device__ __forceinline__ unsigned reductionSlot(
    const Segment<X, Y, Z>& seg, unsigned index, unsigned segments) {
  return X ? seg.segment * seg.size + index : index * segments + seg.segment;
}

// The reductions of values[0..N) over the segment, in place, valid in the
// segment's leader (index 0), or with All in every thread of the segment
// (the same bits in each: they combine the same partials in the same
// order): all N together, so that they share the synchronizations. `smem`
// holds N T per thread of the block.
template <
    int N, bool X, bool Y, bool Z, bool All = false, typename T, typename Func>
__device__ void blockReduceValues(T* values, Func op, T* smem) {
  const BlockSegment<X, Y, Z> seg;
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned segments = threads / seg.size;
  if (X && !Y && !Z && blockDim.x <= 32 && (32 % blockDim.x) == 0 &&
      threads % 32 == 0) {
    // Segments of a power of two up to a warp (short rows): X is the
    // fastest dimension, so each segment is a group of lanes in one warp
    // and shuffles within it reduce it, without shared memory or a
    // barrier.
    // The segment is this thread's row of X: its leader is threadIdx.x
    // lanes below.
    const unsigned linear =
        threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int leader_lane = static_cast<int>(linear % 32u - threadIdx.x);
    for (int k = 0; k < N; ++k) {
      for (int offset = blockDim.x / 2; offset > 0; offset /= 2) {
        op(values[k], shuffleDown(values[k], offset));
      }
      if (All) {
        values[k] = shuffleFrom(values[k], leader_lane);
      }
    }
    return;
  }
  if (X && !Y && !Z && (blockDim.x % 32) == 0) {
    // The segment is a row of whole warps: shuffles within each warp, then
    // the warps' partials through shared memory.
    for (int k = 0; k < N; ++k) {
      for (int offset = 16; offset > 0; offset /= 2) {
        op(values[k], shuffleDown(values[k], offset));
      }
    }
    const unsigned warps = seg.size / 32;
    T* partials = smem + seg.segment * warps;
    if ((seg.index & 31u) == 0) {
      for (int k = 0; k < N; ++k) {
        partials[k * threads / 32 + seg.index / 32] = values[k];
      }
    }
    __syncthreads();
    if (All || seg.index == 0) {
      for (int k = 0; k < N; ++k) {
        values[k] = partials[k * threads / 32];
        for (unsigned w = 1; w < warps; ++w) {
          op(values[k], partials[k * threads / 32 + w]);
        }
      }
    }
    __syncthreads();
    return;
  }
  // Any shape: a tree in shared memory, one slot per thread and value.
  for (int k = 0; k < N; ++k) {
    smem[k * threads + reductionSlot(seg, seg.index, segments)] = values[k];
  }
  __syncthreads();
  unsigned active = seg.size;
  while (active > 1) {
    const unsigned half = (active + 1) / 2;
    if (seg.index < active / 2) {
      const unsigned mine = reductionSlot(seg, seg.index, segments);
      const unsigned other = reductionSlot(seg, seg.index + half, segments);
      for (int k = 0; k < N; ++k) {
        op(smem[k * threads + mine], smem[k * threads + other]);
      }
    }
    __syncthreads();
    active = half;
  }
  const unsigned leader = reductionSlot(seg, 0u, segments);
  for (int k = 0; k < N; ++k) {
    values[k] = smem[k * threads + leader];
  }
  __syncthreads();
}

// The reduction of `value` over the segment, valid in the segment's
// leader (index 0). `smem` holds one T per thread of the block.
template <bool X, bool Y, bool Z, typename T, typename Func>
__device__ T blockReduceValue(T value, Func op, T* smem) {
  blockReduceValues<1, X, Y, Z>(&value, op, smem);
  return value;
}

// out = op(out, the reduction over the segment of `in`), in the leader.
// Threads with read_pred false contribute `init`; the leader writes only
// with write_pred.
template <bool X, bool Y, bool Z, typename T, typename Func>
__device__ void blockReduce(
    T& out, const T& in, Func op, T* smem, bool read_pred, bool write_pred,
    T init) {
  const T total = blockReduceValue<X, Y, Z>(read_pred ? in : init, op, smem);
  if (write_pred && BlockSegment<X, Y, Z>().index == 0) {
    op(out, total);
  }
}

// out = op(out, the reduction over the segment of `in`) in every thread of
// the segment with write_pred (for normalizations: a reduced value used
// again by the threads that reduced it, doc/normalization.md).
template <bool X, bool Y, bool Z, typename T, typename Func>
__device__ void blockAllReduce(
    T& out, const T& in, Func op, T* smem, bool read_pred, bool write_pred,
    T init) {
  T total = read_pred ? in : init;
  blockReduceValues<1, X, Y, Z, true>(&total, op, smem);
  if (write_pred) {
    op(out, total);
  }
}

// blockReduce of N values (out[0..N), in[0..N)) at once, sharing the
// synchronizations; `smem` holds N T per thread.
template <int N, bool X, bool Y, bool Z, typename T, typename Func>
__device__ void blockReduceGroup(
    T* out, const T* in, Func op, T* smem, bool read_pred, bool write_pred,
    T init) {
  T totals[N];
  for (int k = 0; k < N; ++k) {
    totals[k] = read_pred ? in[k] : init;
  }
  blockReduceValues<N, X, Y, Z>(totals, op, smem);
  if (write_pred && BlockSegment<X, Y, Z>().index == 0) {
    for (int k = 0; k < N; ++k) {
      op(out[k], totals[k]);
    }
  }
}

// The value of the segment's leader, in every thread of the segment (for
// normalizations: a reduced value used again by the threads that reduced
// it). `smem` holds one T per segment of the block.
template <bool X, bool Y, bool Z, typename T>
__device__ T blockBroadcast(const T& value, T* smem) {
  const BlockSegment<X, Y, Z> seg;
  if (seg.index == 0) {
    smem[seg.segment] = value;
  }
  __syncthreads();
  const T result = smem[seg.segment];
  __syncthreads();
  return result;
}

#endif // FUSER_RUNTIME_BLOCK_REDUCTION_H
