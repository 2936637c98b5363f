#include <ir/device_mesh.h>

#include <base/exceptions.h>

#include <algorithm>
#include <sstream>

namespace fuser {

DeviceMesh::DeviceMesh(std::vector<int64_t> devices)
    : devices_(std::move(devices)) {
  FUSER_CHECK(
      !devices_.empty(), "A DeviceMesh needs at least one device; got none.");
  for (size_t i = 0; i < devices_.size(); ++i) {
    FUSER_CHECK(
        devices_[i] >= 0, "DeviceMesh ", toString(), ": device ", devices_[i],
        " is negative; devices are ranks 0, 1, ...");
    FUSER_CHECK(
        std::find(devices_.begin(), devices_.begin() + i, devices_[i]) ==
            devices_.begin() + i,
        "DeviceMesh ", toString(), " lists device ", devices_[i],
        " twice; each device holds one shard.");
  }
}

DeviceMesh DeviceMesh::createForNumDevices(int64_t n) {
  FUSER_CHECK(
      n > 0, "DeviceMesh::createForNumDevices(", n,
      "): the number of devices must be positive.");
  std::vector<int64_t> devices(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    devices[static_cast<size_t>(i)] = i;
  }
  return DeviceMesh(std::move(devices));
}

int64_t DeviceMesh::idxOf(int64_t device) const {
  auto it = std::find(devices_.begin(), devices_.end(), device);
  return it == devices_.end() ? -1
                              : static_cast<int64_t>(it - devices_.begin());
}

std::string DeviceMesh::toString() const {
  std::stringstream ss;
  ss << "DeviceMesh{";
  for (size_t i = 0; i < devices_.size(); ++i) {
    ss << (i ? " " : "") << devices_[i];
  }
  ss << "}";
  return ss.str();
}

} // namespace fuser
