// The warp-specialized matmul pipeline on Hopper (doc/matmul.md §3).
//
// A block of kBM / 64 consumer warpgroups and one producer warpgroup
// computes one kBM x kBN output tile at a time (a persistent kernel walks
// several). The producer's first thread loads the operands' kBM x kBK and
// kBN x kBK tiles of each k-step into a ring of kStages shared-memory
// stages with the bulk tensor copy engine; each stage has a "full" barrier
// (the copies landed) and an "empty" one (every consumer warp is done
// reading it). Each consumer warpgroup multiplies its 64 rows of A by all of
// B with wgmma, keeping one k-step of wgmmas in flight, and ends with the
// tile in its accumulator registers (runtime/hopper_gmma.h gives their
// layout); the generated kernel then runs the epilogue from them.
//
// Producer and consumers step through the same k-steps of the same tiles
// in the same order (the generated kernel runs the same tile loop in both
// roles), each with its own State: a position in the ring and its phase.
//
// With kCluster = 2 the blocks come in clusters of two whose tiles share
// their N range (two adjacent M tiles): each block's producer loads half
// of the B tile and the copy engine writes it into both blocks' stages
// (multicast), so each block reads a third less from L2. A stage may then
// be refilled only when the consumers of both blocks are done with it:
// every consumer warp arrives on the empty barrier of both blocks.
#ifndef FUSER_RUNTIME_HOPPER_MATMUL_H
#define FUSER_RUNTIME_HOPPER_MATMUL_H

namespace fuser_mma {

// Where a tile of an operand lies in its tensor map. For each dimension
// of the map (innermost first), the coordinate is
// (index of the dimension's role / div) % mod (no modulus when mod is 0):
// role 0 is the operand's M (or N) axis, 1 its K axis, 2 + b batch axis b.
// A dimension that is the inner part of a split axis has mod = the split
// factor; the outer part has div = the factor.
template <int kRank>
struct TileCoordinates {
  int role[kRank];
  int div[kRank];
  int mod[kRank];

  __device__ __forceinline__ void at(
      int (&c)[kRank], int mn, int k, const int* batch) const {
#pragma unroll
    for (int d = 0; d < kRank; ++d) {
      int v = role[d] == 0 ? mn : (role[d] == 1 ? k : batch[role[d] - 2]);
      v /= div[d];
      c[d] = mod[d] != 0 ? v % mod[d] : v;
    }
  }
};

// The pipeline of one kernel. T: the operand type (__nv_bfloat16 or
// __half). kAMnMajor / kBMnMajor: whether the operand's M (N) axis is the
// contiguous one in shared memory (chunks of 64 elements of 128 bytes, K
// rows apart; otherwise rows of kBK elements, one per M (N) index).
template <
    typename T, int kBM, int kBN, int kBK, int kStages, bool kAMnMajor,
    bool kBMnMajor, int kARank, int kBRank, int kCluster = 1>
struct Matmul {
  static_assert(sizeof(T) == 2, "16-bit operands");
  static_assert(kBM % 64 == 0 && kBM <= 128, "64 rows per warpgroup");
  static_assert(kBK % 16 == 0 && kBK * 2 <= 128, "k-steps of 16");
  static_assert(!kAMnMajor || kBM % 64 == 0, "M-major chunks of 64");
  static_assert(!kBMnMajor || kBN % 64 == 0, "N-major chunks of 64");
  static_assert(kCluster == 1 || kCluster == 2, "clusters of one or two");

  static constexpr int kConsumers = kBM / 64;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kABytes = kBM * kBK * 2;
  static constexpr int kBBytes = kBN * kBK * 2;
  static constexpr int kStageBytes = kABytes + kBBytes;
  // Bytes of a swizzled row: the swizzle span.
  static constexpr int kARowBytes = kAMnMajor ? 128 : kBK * 2;
  static constexpr int kBRowBytes = kBMnMajor ? 128 : kBK * 2;
  // The part of the B tile each block of a cluster loads: rows of a
  // K-major tile, chunks of an N-major one. Parts start on the swizzle
  // pattern's 1024-byte period.
  static constexpr int kBSliceRows = kBN / kCluster;
  static constexpr int kBSliceChunks = kBN / 64 / kCluster;
  static_assert(
      kCluster == 1 || (kBMnMajor ? kBSliceChunks * kCluster * 64 == kBN
                                  : (kBSliceRows * kBRowBytes) % 1024 == 0),
      "the B tile splits into whole parts per block of the cluster");
  // The ring, its barriers, and room to start the ring at 1024 bytes.
  static constexpr int kSharedBytes =
      1024 + kStages * kStageBytes + 2 * kStages * 8;

  struct State {
    int stage = 0;
    unsigned phase = 0;
    __device__ __forceinline__ void advance() {
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
  };

  static __device__ __forceinline__ unsigned swizzleMode(int row_bytes) {
    return row_bytes == 128 ? 1 : (row_bytes == 64 ? 2 : 3);
  }

  // Stages start at 1024 bytes: the swizzle pattern repeats there, and the
  // descriptors' base offset is 0.
  static __device__ __forceinline__ char* ring(char* smem) {
    const unsigned misalignment = smemAddress(smem) & 1023;
    return smem + ((1024 - misalignment) & 1023);
  }
  static __device__ __forceinline__ unsigned long long* fullBarriers(
      char* smem) {
    return reinterpret_cast<unsigned long long*>(
        ring(smem) + kStages * kStageBytes);
  }
  static __device__ __forceinline__ unsigned long long* emptyBarriers(
      char* smem) {
    return fullBarriers(smem) + kStages;
  }

  // By every thread, followed by a __syncthreads(). In a cluster the
  // other block's copies and arrivals may reach this block's barriers
  // only after they are initialized: the whole cluster waits here.
  static __device__ __forceinline__ void init(char* smem) {
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      for (int s = 0; s < kStages; ++s) {
        mbarrierInit(&fullBarriers(smem)[s], 1);
        mbarrierInit(&emptyBarriers(smem)[s], 4 * kConsumers * kCluster);
      }
      fenceBarrierInit();
    }
    if (kCluster > 1) {
      clusterSync();
    }
  }

  // By every thread at the end of the kernel: in a cluster, no block
  // leaves while the other may still arrive on its barriers.
  static __device__ __forceinline__ void finish() {
    if (kCluster > 1) {
      clusterSync();
    }
  }

  // The producer warpgroup: the copies of one tile's k-steps (issued by
  // its first thread).
  static __device__ __forceinline__ void produce(
      const TensorMap* map_a, const TileCoordinates<kARank>& tile_a,
      const TensorMap* map_b, const TileCoordinates<kBRank>& tile_b, int m0,
      int n0, const int* batch, int k_tiles, State& state, char* smem) {
    if (threadIdx.x != 0) {
      return;
    }
    unsigned long long* full = fullBarriers(smem);
    unsigned long long* empty = emptyBarriers(smem);
    for (int kt = 0; kt < k_tiles; ++kt) {
      mbarrierWait(&empty[state.stage], state.phase ^ 1);
      unsigned long long* barrier = &full[state.stage];
      mbarrierArriveExpectTx(barrier, kStageBytes);
      char* a_tile = ring(smem) + state.stage * kStageBytes;
      char* b_tile = a_tile + kABytes;
      const int k0 = kt * kBK;
      loadTile<kAMnMajor, kBM>(a_tile, map_a, tile_a, m0, k0, batch, barrier);
      if (kCluster == 1) {
        loadTile<kBMnMajor, kBN>(b_tile, map_b, tile_b, n0, k0, batch, barrier);
      } else {
        loadBSlice(b_tile, map_b, tile_b, n0, k0, batch, barrier);
      }
      state.advance();
    }
  }

  // A consumer warpgroup (threadIdx.y): its 64 x kBN part of the tile into
  // `acc` (overwritten).
  static __device__ __forceinline__ void consume(
      float (&acc)[kBN / 2], int k_tiles, State& state, char* smem) {
    unsigned long long* full = fullBarriers(smem);
    unsigned long long* empty = emptyBarriers(smem);
    const int warpgroup = threadIdx.y;
    int previous = 0;
    for (int kt = 0; kt < k_tiles; ++kt) {
      mbarrierWait(&full[state.stage], state.phase);
      char* a_tile = ring(smem) + state.stage * kStageBytes;
      char* b_tile = a_tile + kABytes;
      fenceAccumulators(acc);
      wgmmaFence();
#pragma unroll
      for (int kk = 0; kk < kBK / 16; ++kk) {
        Gmma<kBN, T, kAMnMajor ? 1 : 0, kBMnMajor ? 1 : 0>::mma(
            acc, descriptorA(a_tile, warpgroup, kk), descriptorB(b_tile, kk),
            (kt > 0 || kk > 0) ? 1 : 0);
      }
      wgmmaCommitGroup();
      fenceAccumulators(acc);
      if (kt > 0) {
        // The previous k-step's wgmmas are done: its stage may refill.
        wgmmaWaitGroup<1>();
        release(&empty[previous]);
      }
      previous = state.stage;
      state.advance();
    }
    wgmmaWaitGroup<0>();
    fenceAccumulators(acc);
    if (k_tiles > 0) {
      release(&empty[previous]);
    }
  }

 private:
  static __device__ __forceinline__ void fenceAccumulators(
      float (&acc)[kBN / 2]) {
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) {
      fenceRegister(acc[i]);
    }
  }

  // One arrival per consumer warp, on the barrier of each block of the
  // cluster.
  static __device__ __forceinline__ void release(unsigned long long* empty) {
    if (kCluster == 1) {
      if (threadIdx.x % 32 == 0) {
        mbarrierArrive(empty);
      }
    } else if (threadIdx.x % 32 < kCluster) {
      mbarrierArriveCluster(empty, threadIdx.x % 32);
    }
  }

  // This block's part of the B tile, into the same place of every block
  // of the cluster.
  template <int kRank>
  static __device__ __forceinline__ void loadBSlice(
      char* tile, const TensorMap* map, const TileCoordinates<kRank>& where,
      int n0, int k0, const int* batch, unsigned long long* barrier) {
    constexpr unsigned short kAll = (1 << kCluster) - 1;
    const int rank = static_cast<int>(clusterRank());
    int c[kRank];
    if (!kBMnMajor) {
      where.at(c, n0 + rank * kBSliceRows, k0, batch);
      tmaLoadMulticast<kRank>(
          tile + rank * kBSliceRows * kBRowBytes, map, barrier, c, kAll);
    } else {
#pragma unroll
      for (int i = 0; i < kBSliceChunks; ++i) {
        const int j = rank * kBSliceChunks + i;
        where.at(c, n0 + 64 * j, k0, batch);
        tmaLoadMulticast<kRank>(tile + j * kBK * 128, map, barrier, c, kAll);
      }
    }
  }

  // K-major: one box of kBK x kRows. MN-major: kRows / 64 boxes of 64 x
  // kBK, each a chunk of kBK rows of 128 bytes.
  template <bool kMnMajor, int kRows, int kRank>
  static __device__ __forceinline__ void loadTile(
      char* tile, const TensorMap* map, const TileCoordinates<kRank>& where,
      int mn0, int k0, const int* batch, unsigned long long* barrier) {
    int c[kRank];
    if (!kMnMajor) {
      where.at(c, mn0, k0, batch);
      tmaLoad<kRank>(tile, map, barrier, c);
    } else {
#pragma unroll
      for (int j = 0; j < kRows / 64; ++j) {
        where.at(c, mn0 + 64 * j, k0, batch);
        tmaLoad<kRank>(tile + j * kBK * 128, map, barrier, c);
      }
    }
  }

  // Warpgroup `w`'s 64 rows of A at k-step kk.
  static __device__ __forceinline__ unsigned long long descriptorA(
      char* tile, int w, int kk) {
    const unsigned base = smemAddress(tile);
    if (kAMnMajor) {
      // Chunk w (its 64 M-indices); 16 K rows per k-step. Leading: from
      // one chunk to the next; stride: 8 K rows.
      return smemDescriptor(
          base + w * kBK * 128 + kk * 16 * 128, kBK * 128, 8 * 128,
          swizzleMode(128));
    }
    // Rows of kBK; 32 bytes per k-step; stride: 8 rows.
    return smemDescriptor(
        base + w * 64 * kARowBytes + kk * 32, 16, 8 * kARowBytes,
        swizzleMode(kARowBytes));
  }

  static __device__ __forceinline__ unsigned long long descriptorB(
      char* tile, int kk) {
    const unsigned base = smemAddress(tile);
    if (kBMnMajor) {
      return smemDescriptor(
          base + kk * 16 * 128, kBK * 128, 8 * 128, swizzleMode(128));
    }
    return smemDescriptor(
        base + kk * 32, 16, 8 * kBRowBytes, swizzleMode(kBRowBytes));
  }
};

} // namespace fuser_mma

#endif // FUSER_RUNTIME_HOPPER_MATMUL_H
