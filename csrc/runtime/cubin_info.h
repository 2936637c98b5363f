// What a cubin (an ELF file from NVRTC) says about the functions in it,
// read from the file itself: unlike ptxas's report in NVRTC's log, it is
// there also when the driver's compute cache served the compile (NVRTC
// then skips ptxas and its report).
#pragma once

#include <cstdint>
#include <vector>

namespace fuser {

// The largest stack frame, in bytes per thread, of a function in `cubin`
// (the EIATTR_FRAME_SIZE attributes of its .nv.info section): spilled
// registers and local arrays live there. 0 when no function has one;
// -1 when `cubin` is not an ELF file with that section.
int64_t largestStackFrameBytes(const std::vector<char>& cubin);

} // namespace fuser
