// Hopper's asynchronous units as device functions (sm_90; wgmma and
// setmaxnreg need sm_90a): shared-memory barriers (mbarrier), the bulk
// tensor copy engine (TMA), and the fences between them and the tensor
// cores. doc/matmul.md §3 says how the matmul pipeline uses them.
#ifndef FUSER_RUNTIME_HOPPER_ASYNC_H
#define FUSER_RUNTIME_HOPPER_ASYNC_H

namespace fuser_mma {

// A CUtensorMap (the driver's 128-byte tensor map, cuTensorMapEncodeTiled),
// passed to a kernel by value as a __grid_constant__ parameter.
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned smemAddress(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// ---- mbarrier: a 64-bit barrier in shared memory with a phase bit.

__device__ __forceinline__ void mbarrierInit(
    unsigned long long* barrier, unsigned arrivals) {
  asm volatile(
      "mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smemAddress(barrier)),
      "r"(arrivals));
}

// Makes initialized barriers visible to the other threads and to the copy
// engine (before the block synchronizes).
__device__ __forceinline__ void fenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival that also announces `bytes` the copy engine will deliver.
__device__ __forceinline__ void mbarrierArriveExpectTx(
    unsigned long long* barrier, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                   smemAddress(barrier)),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbarrierArrive(unsigned long long* barrier) {
  asm volatile(
      "mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smemAddress(barrier))
      : "memory");
}

// Waits until the phase of parity `parity` has completed. A fresh barrier
// is in phase 0, so waiting for parity 1 returns at once (the "previous"
// phase counts as complete).
__device__ __forceinline__ void mbarrierWait(
    unsigned long long* barrier, unsigned parity) {
  const unsigned address = smemAddress(barrier);
  unsigned done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(address), "r"(parity)
        : "memory");
  } while (done == 0);
}

// ---- TMA: tiles of a global tensor into shared memory.

// Copies the box of `map` at coordinates `c` (innermost first) into `dst`;
// its bytes complete a transaction on `barrier`. Out-of-range elements
// arrive as zeros.
template <int kRank>
__device__ __forceinline__ void tmaLoad(
    void* dst, const TensorMap* map, unsigned long long* barrier,
    const int (&c)[kRank]);

// The same box written at `dst`'s offset into the shared memory of every
// block of the cluster in `cta_mask` (bit r: the block of rank r), each
// completing the bytes on its barrier at `barrier`'s offset.
template <int kRank>
__device__ __forceinline__ void tmaLoadMulticast(
    void* dst, const TensorMap* map, unsigned long long* barrier,
    const int (&c)[kRank], unsigned short cta_mask);

// The instructions per rank: COORDS and MC_COORDS name the coordinates'
// operands (from %3 on for tmaLoad, from %4 on for tmaLoadMulticast, whose
// %3 is the mask), the rest are the coordinates.
#define FUSER_TMA_LOAD(RANK, COORDS, MC_COORDS, ...)                          \
  template <>                                                                 \
  __device__ __forceinline__ void tmaLoad<RANK>(                              \
      void* dst, const TensorMap* map, unsigned long long* barrier,           \
      const int(&c)[RANK]) {                                                  \
    asm volatile(                                                             \
        "cp.async.bulk.tensor." #RANK                                         \
        "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], "   \
        "[%1, {" COORDS "}], [%2];" ::"r"(smemAddress(dst)),                  \
        "l"(map), "r"(smemAddress(barrier)), __VA_ARGS__                      \
        : "memory");                                                          \
  }                                                                           \
  template <>                                                                 \
  __device__ __forceinline__ void tmaLoadMulticast<RANK>(                     \
      void* dst, const TensorMap* map, unsigned long long* barrier,           \
      const int(&c)[RANK], unsigned short cta_mask) {                         \
    asm volatile("cp.async.bulk.tensor." #RANK                                \
                 "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" \
                 ".multicast::cluster [%0], [%1, {" MC_COORDS                 \
                 "}], [%2], %3;" ::"r"(smemAddress(dst)),                     \
                 "l"(map), "r"(smemAddress(barrier)), "h"(cta_mask),          \
                 __VA_ARGS__                                                  \
                 : "memory");                                                 \
  }

FUSER_TMA_LOAD(1, "%3", "%4", "r"(c[0]))
FUSER_TMA_LOAD(2, "%3, %4", "%4, %5", "r"(c[0]), "r"(c[1]))
FUSER_TMA_LOAD(3, "%3, %4, %5", "%4, %5, %6", "r"(c[0]), "r"(c[1]), "r"(c[2]))
FUSER_TMA_LOAD(
    4, "%3, %4, %5, %6", "%4, %5, %6, %7", "r"(c[0]), "r"(c[1]), "r"(c[2]),
    "r"(c[3]))
FUSER_TMA_LOAD(
    5, "%3, %4, %5, %6, %7", "%4, %5, %6, %7, %8", "r"(c[0]), "r"(c[1]),
    "r"(c[2]), "r"(c[3]), "r"(c[4]))
#undef FUSER_TMA_LOAD

// ---- Clusters: blocks that share shared memory and barriers.

// This block's rank in its cluster.
__device__ __forceinline__ unsigned clusterRank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Every thread of every block of the cluster arrives and waits: barrier
// initializations before it are visible to the cluster after it, and no
// block leaves while another may still write into its shared memory.
__device__ __forceinline__ void clusterSync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;" ::
          : "memory");
}

// One arrival on the barrier at `barrier`'s offset in the block of rank
// `cta` of the cluster (this block's own included), ordered after this
// thread's earlier memory accesses for the whole cluster.
__device__ __forceinline__ void mbarrierArriveCluster(
    unsigned long long* barrier, unsigned cta) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n"
      "}" ::"r"(smemAddress(barrier)),
      "r"(cta)
      : "memory");
}

// ---- Tensor cores (wgmma) around their asynchronous issue.

// Orders this warpgroup's register and shared-memory accesses before the
// wgmmas that follow.
__device__ __forceinline__ void wgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmmaCommitGroup() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// Waits until at most `kPending` committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wgmmaWaitGroup() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving accesses of an accumulator register across
// the asynchronous wgmmas that write it.
__device__ __forceinline__ void fenceRegister(float& value) {
  asm volatile("" : "+f"(value)::"memory");
}

// A shared-memory matrix descriptor (PTX ISA, "matrix descriptor"): the
// start address, the leading and stride byte offsets (16-byte units) and
// the swizzle mode (1: 128 bytes, 2: 64, 3: 32). Base offset 0: tiles start
// at 1024-byte boundaries.
__device__ __forceinline__ unsigned long long smemDescriptor(
    unsigned address, unsigned leading_bytes, unsigned stride_bytes,
    unsigned swizzle_mode) {
  return static_cast<unsigned long long>((address & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>((leading_bytes >> 4) & 0x3FFF)
          << 16) |
         (static_cast<unsigned long long>((stride_bytes >> 4) & 0x3FFF) << 32) |
         (static_cast<unsigned long long>(swizzle_mode) << 62);
}

// ---- Registers per warpgroup role (the kernel is launched with a cap:
// __launch_bounds__(threads, 1)).

template <int kRegisters>
__device__ __forceinline__ void releaseRegisters() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegisters));
}

template <int kRegisters>
__device__ __forceinline__ void claimRegisters() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegisters));
}

} // namespace fuser_mma

#endif // FUSER_RUNTIME_HOPPER_ASYNC_H
