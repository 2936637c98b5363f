// What makes `width` lanes of a tensor in global memory one vector access
// (doc/indexing.md §5), in one place for the scheduler that picks a width,
// lowering that books the conditions a kernel relies on, and the runtime
// that checks them for the tensors of a launch.
#pragma once

#include <layout/allocation_folding.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fuser {

// The allocation axes of `tv` that take memory (folded; broadcast and
// device-parallel axes left out), outermost first, and how many of the
// innermost of them are contiguous: the unit-stride run a vector access
// may walk.
struct MemoryAxes {
  std::vector<FoldedAllocationAxis> axes;
  size_t contiguous_suffix = 0;

  // Stride positions (kernel argument alloc_stride[k]) of the
  // non-contiguous axes left of the contiguous run of the innermost
  // `run_axes` axes: the strides from one run to the next. (A contiguous
  // axis's stride follows from the axes right of it.)
  std::vector<size_t> stridesOutsideRun(size_t run_axes) const;
};
// `within_logical` (foldedAllocationAxes): axes of the logical domain or
// below, as loops over it meet them. Off, a segment input cut from a
// reshape is seen through the reshape's root, which no loop walks: the
// TMA operand check keeps that view, so that products of such inputs stay
// with ATen's matmul rather than move to fuser's without a measurement.
MemoryAxes memoryAxes(const TensorView* tv, bool within_logical = true);

// The widest vector access, in bytes (a 128-bit load or store).
constexpr int64_t kMaxVectorBytes = 16;

// The largest power of two, at most kMaxVectorBytes, that divides `bytes`
// (kMaxVectorBytes for 0): the alignment class of an address or offset.
int64_t alignmentOf(uint64_t bytes);

// alignmentOf the address.
int64_t pointerAlignment(const void* address);

// The axes a vector access steps over from one contiguous run to the next:
// their sizes and strides.
struct StridedAxes {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

// Whether `width` lanes of `element_bytes` each, lane 0 at a multiple of
// `width` along a unit-stride run of `run` elements, are one legal vector
// access: the width is a power of two of at most 16 bytes, the run is a
// multiple of the width (the lanes never leave it), and the data pointer
// (of alignment `pointer_alignment`) and the stride of every axis of
// `between_runs` that has more than one element are multiples of the
// vector. "" when legal, else what fails.
std::string vectorAccessViolation(
    int64_t width, int64_t element_bytes, int64_t run,
    const StridedAxes& between_runs, int64_t pointer_alignment);

} // namespace fuser
