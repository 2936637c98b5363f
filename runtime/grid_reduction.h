// Reductions across the blocks of a grid in one kernel (doc/reduction.md):
// each block reduces its threads (blockReduceValues), its segment leaders
// write the block's partials to a work buffer, and the last block of each
// segment of blocks to arrive (counted on a semaphore) reduces the partials
// of its segment. The result is valid in the leaders of that last block only;
// gridReduce returns whether this block is it. Every thread of every block
// must call it.
//
// Buffers (allocated by the runtime): `work` holds one T per thread of the
// grid and grouped value; `semaphores` one counter per segment of blocks,
// zero before the launch and zero again after it (the last block resets
// its counter). A kernel calls each reduction's helper once per thread
// (values of a loop are grouped into one call, ParallelType::Group): a
// second call could overwrite slots the last block of the first still
// reads.
#ifndef FUSER_RUNTIME_GRID_REDUCTION_H
#define FUSER_RUNTIME_GRID_REDUCTION_H

// The blocks reduced together (flags BX/BY/BZ) form a segment of the grid
// (runtime/block_reduction.h's Segment over blocks).
template <bool BX, bool BY, bool BZ>
struct GridSegment : Segment<BX, BY, BZ> {
  __device__ GridSegment() : Segment<BX, BY, BZ>(blockIdx, gridDim) {}
};

// Reads what another block wrote (after a fence), bypassing this SM's
// caches; a T of 2 bytes or of a multiple of 4 (a Welford state).
template <typename T>
__device__ T loadFromOtherBlock(const T* address) {
  if constexpr (sizeof(T) == 2) {
    unsigned short bits =
        *reinterpret_cast<const volatile unsigned short*>(address);
    return *reinterpret_cast<T*>(&bits);
  } else {
    static_assert(sizeof(T) % 4 == 0, "a T of 2 or 4k bytes");
    unsigned int words[sizeof(T) / 4];
    const volatile unsigned int* from =
        reinterpret_cast<const volatile unsigned int*>(address);
    for (unsigned k = 0; k < sizeof(T) / 4; ++k) {
      words[k] = from[k];
    }
    return *reinterpret_cast<T*>(words);
  }
}

// This block's partials of the N values: the thread's own (init where
// `read_pred` fails) reduced over the block's segment of threads (valid in
// its leader).
template <int N, bool X, bool Y, bool Z, typename T, typename Func>
__device__ void blockPartials(
    T* partials, const T* in, Func op, T* smem, bool read_pred, T init) {
  for (int k = 0; k < N; ++k) {
    partials[k] = read_pred ? in[k] : init;
  }
  if constexpr (X || Y || Z) {
    blockReduceValues<N, X, Y, Z>(partials, op, smem);
  }
}

// gridReduce of N values (out[0..N), in[0..N)) in one call: one arrival
// on the semaphore for all N. Work slots: N per (segment of blocks, block,
// segment of threads). `read_pred` and `write_pred` hold for all N.
template <
    int N, bool BX, bool BY, bool BZ, bool X, bool Y, bool Z, typename T,
    typename Func>
__device__ bool gridReduceGroup(
    T* out, const T* in, Func op, T* smem, T* work, long long* semaphores,
    bool read_pred, bool write_pred, T init) {
  const BlockSegment<X, Y, Z> seg;
  const GridSegment<BX, BY, BZ> grid;
  const unsigned segments = blockDim.x * blockDim.y * blockDim.z / seg.size;
  // Slot of value k of block b: ((k * grid.size) + b) * segments + segment.
  T* slots = work + grid.segment * grid.size * segments * N;
  T partials[N];
  blockPartials<N, X, Y, Z>(partials, in, op, smem, read_pred, init);
  if (seg.index == 0) {
    for (int k = 0; k < N; ++k) {
      slots[(k * grid.size + grid.index) * segments + seg.segment] =
          partials[k];
    }
  }
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const long long arrived = atomicAdd(
        reinterpret_cast<unsigned long long*>(&semaphores[grid.segment]), 1ull);
    last = arrived == static_cast<long long>(grid.size) - 1;
    if (last) {
      semaphores[grid.segment] = 0;
    }
  }
  __syncthreads();
  if (last) {
    __threadfence();
    T totals[N];
    for (int k = 0; k < N; ++k) {
      totals[k] = init;
    }
    // Partials of kBatch blocks per round, their loads in flight together
    // (about 128 bytes of registers per thread).
    constexpr unsigned kBytes = N * sizeof(T);
    constexpr unsigned kBatch =
        kBytes >= 64 ? 1 : (128 / kBytes > 8 ? 8 : 128 / kBytes);
    const unsigned stride = seg.size;
    unsigned b = seg.index;
    for (; b + (kBatch - 1) * stride < grid.size; b += kBatch * stride) {
      T values[kBatch][N];
#pragma unroll
      for (unsigned u = 0; u < kBatch; ++u) {
#pragma unroll
        for (int k = 0; k < N; ++k) {
          values[u][k] = loadFromOtherBlock(
              &slots
                  [(k * grid.size + b + u * stride) * segments + seg.segment]);
        }
      }
#pragma unroll
      for (unsigned u = 0; u < kBatch; ++u) {
#pragma unroll
        for (int k = 0; k < N; ++k) {
          op(totals[k], values[u][k]);
        }
      }
    }
    for (; b < grid.size; b += stride) {
      for (int k = 0; k < N; ++k) {
        op(totals[k],
           loadFromOtherBlock(
               &slots[(k * grid.size + b) * segments + seg.segment]));
      }
    }
    if constexpr (X || Y || Z) {
      blockReduceValues<N, X, Y, Z>(totals, op, smem);
    }
    if (seg.index == 0 && write_pred) {
      for (int k = 0; k < N; ++k) {
        op(out[k], totals[k]);
      }
    }
  }
  __syncthreads();
  return last;
}

// The first half of a reduction across a resident grid: this block's
// partials of the N values (its segments' leaders write value k of
// segment s at slot (s * grid.size + grid.index) * N + k), then a wait
// until every block of the segment of blocks has written its own. The
// semaphore counts two arrivals per block (leaveResidentGrid makes the
// second).
template <int N, bool X, bool Y, bool Z, typename T, typename Func>
__device__ void writePartialsAndWaitForGrid(
    T* slots, const T* in, Func op, T* smem, bool read_pred, T init,
    unsigned grid_index, unsigned grid_size,
    unsigned long long* counter) {
  const BlockSegment<X, Y, Z> seg;
  T partials[N];
  blockPartials<N, X, Y, Z>(partials, in, op, smem, read_pred, init);
  if (seg.index == 0) {
    for (int k = 0; k < N; ++k) {
      slots[(seg.segment * grid_size + grid_index) * N + k] = partials[k];
    }
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    atomicAdd(counter, 1ull);
    while (atomicAdd(counter, 0ull) < grid_size) {
    }
  }
  __syncthreads();
  __threadfence();
}

// The second arrival: the last block of the segment of blocks resets the
// semaphore (every block has left the first wait by then).
__device__ inline void leaveResidentGrid(
    unsigned grid_size, unsigned long long* counter) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const unsigned long long arrived = atomicAdd(counter, 1ull);
    if (arrived == 2ull * grid_size - 1) {
      atomicExch(counter, 0ull);
    }
  }
}

// gridReduceGroup for a grid whose blocks are all resident at once (a
// cooperative launch: the inner-outer persistent grid,
// doc/normalization.md §9). The last block alone would read every block's
// partials; here every block waits until all partials are written, and the
// segments of threads are shared out among the blocks, segment s to block
// s % grid.size, whose threads all read its grid.size * N partials (in
// rows of N, coalesced: work slots are segment-major) and combine them in
// shared memory. The result is valid in the leaders of segment s in that
// block; the call returns whether this thread's segment was combined in
// its block. The semaphore counts two arrivals per block, and the last
// one resets it.
template <
    int N, bool BX, bool BY, bool BZ, bool X, bool Y, bool Z, typename T,
    typename Func>
__device__ bool gridReduceGroupResident(
    T* out, const T* in, Func op, T* smem, T* work, long long* semaphores,
    bool read_pred, bool write_pred, T init) {
  const BlockSegment<X, Y, Z> seg;
  const GridSegment<BX, BY, BZ> grid;
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned segments = threads / seg.size;
  const unsigned tid =
      threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  // Slot of value k of segment s from block b: (s * grid.size + b) * N + k.
  T* slots = work + grid.segment * grid.size * segments * N;
  unsigned long long* counter =
      reinterpret_cast<unsigned long long*>(&semaphores[grid.segment]);
  writePartialsAndWaitForGrid<N, X, Y, Z>(
      slots, in, op, smem, read_pred, init, grid.index, grid.size, counter);
  // Rows of N threads, thread (row, k) reading value k of blocks row,
  // row + rows, ...
  const unsigned rows = threads / N;
  const unsigned row = tid / N;
  const unsigned k_of = tid % N;
  bool combined = false;
  for (unsigned s = grid.index; s < segments; s += grid.size) {
    T total = init;
    if (row < rows) {
      const T* from = slots + s * grid.size * N;
#pragma unroll 4
      for (unsigned b = row; b < grid.size; b += rows) {
        op(total, loadFromOtherBlock(&from[b * N + k_of]));
      }
    }
    __syncthreads();
    if (row < rows) {
      smem[tid] = total;
    }
    __syncthreads();
    if (seg.segment == s) {
      combined = true;
      if (seg.index == 0 && write_pred) {
        for (int k = 0; k < N; ++k) {
          T value = init;
          for (unsigned r = 0; r < rows; ++r) {
            op(value, smem[r * N + k]);
          }
          op(out[k], value);
        }
      }
    }
  }
  leaveResidentGrid(grid.size, counter);
  return combined;
}

// The reduction of N values over the threads `X, Y, Z` and the blocks
// `BX, BY, BZ` of a grid whose blocks are all resident at once (a
// cooperative launch: the outer persistent grid, doc/normalization.md
// §10), valid in every thread with `write_pred`: out[k] = op(out[k],
// total). Each block writes its partials, waits until every block of its
// segment has, then reads them all for its own segments of threads (the
// threads of a segment share out the blocks' partials and combine them
// in shared memory). The semaphore counts two arrivals per block, and the
// last one resets it (no block can still be waiting on the first count).
template <
    int N, bool BX, bool BY, bool BZ, bool X, bool Y, bool Z, typename T,
    typename Func>
__device__ void gridAllReduceResident(
    T* out, const T* in, Func op, T* smem, T* work, long long* semaphores,
    bool read_pred, bool write_pred, T init) {
  const BlockSegment<X, Y, Z> seg;
  const GridSegment<BX, BY, BZ> grid;
  const unsigned segments = blockDim.x * blockDim.y * blockDim.z / seg.size;
  // Slot of value k of segment s from block b: (s * grid.size + b) * N + k.
  T* slots = work + grid.segment * grid.size * segments * N;
  unsigned long long* counter =
      reinterpret_cast<unsigned long long*>(&semaphores[grid.segment]);
  writePartialsAndWaitForGrid<N, X, Y, Z>(
      slots, in, op, smem, read_pred, init, grid.index, grid.size, counter);
  // Thread i of the segment reads the partials of blocks i, i + size, ...
  T totals[N];
  for (int k = 0; k < N; ++k) {
    totals[k] = init;
  }
  const T* from = slots + seg.segment * grid.size * N;
  for (unsigned b = seg.index; b < grid.size; b += seg.size) {
    for (int k = 0; k < N; ++k) {
      op(totals[k], loadFromOtherBlock(&from[b * N + k]));
    }
  }
  if constexpr (X || Y || Z) {
    blockReduceValues<N, X, Y, Z, true>(totals, op, smem);
  }
  if (write_pred) {
    for (int k = 0; k < N; ++k) {
      op(out[k], totals[k]);
    }
  }
  leaveResidentGrid(grid.size, counter);
}

// gridReduce is the group of one.
template <
    bool BX, bool BY, bool BZ, bool X, bool Y, bool Z, typename T,
    typename Func>
__device__ bool gridReduce(
    T& out, const T& in, Func op, T* smem, T* work, long long* semaphores,
    bool read_pred, bool write_pred, T init) {
  return gridReduceGroup<1, BX, BY, BZ, X, Y, Z>(
      &out, &in, op, smem, work, semaphores, read_pred, write_pred, init);
}

#endif // FUSER_RUNTIME_GRID_REDUCTION_H
