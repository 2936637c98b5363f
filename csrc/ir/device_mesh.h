// DeviceMesh: the devices a tensor lives on (doc/multidevice.md §1). A
// device is a rank of the communicator (one process per GPU); a tensor
// sharded on a mesh of D devices holds, on the mesh's i-th device, the i-th
// of D equal parts of its sharded axis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fuser {

class DeviceMesh {
 public:
  // An empty mesh: the tensor is not placed on devices.
  DeviceMesh() = default;
  // `devices`: distinct non-negative ranks (a user error otherwise).
  explicit DeviceMesh(std::vector<int64_t> devices);
  // The mesh {0, 1, ..., n - 1}.
  static DeviceMesh createForNumDevices(int64_t n);

  int64_t size() const {
    return static_cast<int64_t>(devices_.size());
  }
  bool empty() const {
    return devices_.empty();
  }
  const std::vector<int64_t>& vector() const {
    return devices_;
  }
  bool has(int64_t device) const {
    return idxOf(device) >= 0;
  }
  // The position of `device` in the mesh (its shard's index); -1 if absent.
  int64_t idxOf(int64_t device) const;

  bool operator==(const DeviceMesh& other) const {
    return devices_ == other.devices_;
  }
  bool operator!=(const DeviceMesh& other) const {
    return !(*this == other);
  }
  std::string toString() const;

 private:
  std::vector<int64_t> devices_;
};

} // namespace fuser
