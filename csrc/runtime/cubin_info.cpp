#include <runtime/cubin_info.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

namespace fuser {

namespace {

// The little-endian integer of `bytes` bytes at `offset`; -1 past the end.
int64_t readLe(const std::vector<char>& data, size_t offset, size_t bytes) {
  if (offset + bytes > data.size()) {
    return -1;
  }
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(data[offset + i]))
             << (8 * i);
  }
  return static_cast<int64_t>(value);
}

// The ELF64 section .nv.info as [offset, offset + size), or {0, 0}.
std::pair<size_t, size_t> nvInfoSection(const std::vector<char>& elf) {
  static const char kMagic[] = {0x7f, 'E', 'L', 'F', 2}; // 2: 64-bit
  if (elf.size() < 64 || std::memcmp(elf.data(), kMagic, 5) != 0) {
    return {0, 0};
  }
  const int64_t section_headers = readLe(elf, 0x28, 8);
  const int64_t header_size = readLe(elf, 0x3a, 2);
  const int64_t sections = readLe(elf, 0x3c, 2);
  const int64_t names_index = readLe(elf, 0x3e, 2);
  auto header = [&](int64_t i) {
    return static_cast<size_t>(section_headers + i * header_size);
  };
  const int64_t names = readLe(elf, header(names_index) + 0x18, 8);
  if (section_headers <= 0 || names < 0) {
    return {0, 0};
  }
  const std::string wanted = ".nv.info";
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t name = readLe(elf, header(i), 4);
    const size_t at = static_cast<size_t>(names + name);
    if (name < 0 || at + wanted.size() + 1 > elf.size() ||
        std::memcmp(elf.data() + at, wanted.c_str(), wanted.size() + 1) != 0) {
      continue;
    }
    const int64_t offset = readLe(elf, header(i) + 0x18, 8);
    const int64_t size = readLe(elf, header(i) + 0x20, 8);
    if (offset < 0 || size < 0 ||
        static_cast<size_t>(offset + size) > elf.size()) {
      return {0, 0};
    }
    return {static_cast<size_t>(offset), static_cast<size_t>(size)};
  }
  return {0, 0};
}

} // namespace

int64_t largestStackFrameBytes(const std::vector<char>& cubin) {
  const auto [begin, size] = nvInfoSection(cubin);
  if (size == 0) {
    return -1;
  }
  // Entries: a format byte, an attribute byte, then for the format
  // EIFMT_SVAL (4) a 16-bit size and that many bytes, for EIFMT_HVAL (3) a
  // 16-bit value, for EIFMT_BVAL (2) an 8-bit value and a pad byte, for
  // EIFMT_NVAL (1) two pad bytes. EIATTR_FRAME_SIZE (0x11) is an SVAL of
  // the function's symbol index and its frame size, 32 bits each.
  constexpr int kSval = 4;
  constexpr int kFrameSize = 0x11;
  int64_t largest = 0;
  size_t at = begin;
  while (at + 4 <= begin + size) {
    const int64_t format = readLe(cubin, at, 1);
    const int64_t attribute = readLe(cubin, at + 1, 1);
    if (format != kSval) {
      at += 4;
      continue;
    }
    const int64_t payload = readLe(cubin, at + 2, 2);
    if (attribute == kFrameSize && payload == 8) {
      largest = std::max(largest, readLe(cubin, at + 8, 4));
    }
    at += 4 + static_cast<size_t>(payload);
  }
  return largest;
}

} // namespace fuser
