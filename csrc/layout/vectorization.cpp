#include <layout/vectorization.h>

#include <ir/all_nodes.h>

#include <cstdint>
#include <sstream>

namespace fuser {

std::vector<size_t> MemoryAxes::stridesOutsideRun(size_t run_axes) const {
  // A contiguous axis's stride is the extent times the stride of the next
  // one, down to the run (a multiple of the width) or to a non-contiguous
  // axis: only the strides of non-contiguous axes need a look.
  std::vector<size_t> positions;
  for (size_t k = 0; k + run_axes < axes.size(); ++k) {
    if (axes[k].contiguous != true) {
      positions.push_back(axes[k].stride_position);
    }
  }
  return positions;
}

MemoryAxes memoryAxes(const TensorView* tv, bool within_logical) {
  MemoryAxes result;
  for (const FoldedAllocationAxis& axis :
       foldedAllocationAxes(tv, within_logical)) {
    if (!axis.id->isBroadcast() && !axis.id->isDeviceDim()) {
      result.axes.push_back(axis);
    }
  }
  while (result.contiguous_suffix < result.axes.size() &&
         result.axes[result.axes.size() - 1 - result.contiguous_suffix]
                 .contiguous == true) {
    ++result.contiguous_suffix;
  }
  return result;
}

int64_t alignmentOf(uint64_t bytes) {
  int64_t alignment = kMaxVectorBytes;
  while (alignment > 1 && bytes % static_cast<uint64_t>(alignment) != 0) {
    alignment /= 2;
  }
  return alignment;
}

int64_t pointerAlignment(const void* address) {
  return alignmentOf(reinterpret_cast<uintptr_t>(address));
}

std::string vectorAccessViolation(
    int64_t width, int64_t element_bytes, int64_t run,
    const StridedAxes& between_runs, int64_t pointer_alignment) {
  std::stringstream why;
  const int64_t bytes = width * element_bytes;
  if (width < 1 || (width & (width - 1)) != 0 || bytes > 16) {
    why << "a width of " << width << " x " << element_bytes
        << " bytes is not a power of two of at most 16 bytes";
  } else if (run % width != 0) {
    why << "the contiguous run of " << run
        << " elements it walks is not a multiple of " << width;
  } else if (pointer_alignment % bytes != 0) {
    why << "the data pointer is aligned to " << pointer_alignment
        << " bytes, not to the " << bytes << " of a vector";
  } else {
    for (size_t k = 0; k < between_runs.strides.size(); ++k) {
      const int64_t stride = between_runs.strides[k];
      if (between_runs.sizes.at(k) > 1 && stride % width != 0) {
        why << "the stride " << stride
            << " between contiguous runs is not a multiple of " << width;
        break;
      }
    }
  }
  return why.str();
}

} // namespace fuser
