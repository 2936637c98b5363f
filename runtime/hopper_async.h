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

template <>
__device__ __forceinline__ void tmaLoad<1>(
    void* dst, const TensorMap* map, unsigned long long* barrier,
    const int (&c)[1]) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::"
      "complete_tx::bytes [%0], [%1, {%3}], [%2];" ::"r"(smemAddress(dst)),
      "l"(map), "r"(smemAddress(barrier)), "r"(c[0])
      : "memory");
}

template <>
__device__ __forceinline__ void tmaLoad<2>(
    void* dst, const TensorMap* map, unsigned long long* barrier,
    const int (&c)[2]) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::"
      "complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(smemAddress(dst)),
      "l"(map), "r"(smemAddress(barrier)), "r"(c[0]), "r"(c[1])
      : "memory");
}

template <>
__device__ __forceinline__ void tmaLoad<3>(
    void* dst, const TensorMap* map, unsigned long long* barrier,
    const int (&c)[3]) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::"
      "complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(
          smemAddress(dst)),
      "l"(map), "r"(smemAddress(barrier)), "r"(c[0]), "r"(c[1]), "r"(c[2])
      : "memory");
}

template <>
__device__ __forceinline__ void tmaLoad<4>(
    void* dst, const TensorMap* map, unsigned long long* barrier,
    const int (&c)[4]) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::"
      "complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];" ::"r"(
          smemAddress(dst)),
      "l"(map), "r"(smemAddress(barrier)), "r"(c[0]), "r"(c[1]), "r"(c[2]),
      "r"(c[3])
      : "memory");
}

template <>
__device__ __forceinline__ void tmaLoad<5>(
    void* dst, const TensorMap* map, unsigned long long* barrier,
    const int (&c)[5]) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::"
      "complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];" ::"r"(
          smemAddress(dst)),
      "l"(map), "r"(smemAddress(barrier)), "r"(c[0]), "r"(c[1]), "r"(c[2]),
      "r"(c[3]), "r"(c[4])
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
