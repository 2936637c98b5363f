// Bindings of multi-device support (doc/multidevice.md): DeviceMesh, the
// tensor methods that place a tensor on a mesh, the communicator's process
// group (torch.distributed's, handed over by fuser.multidevice) and
// shard_tensor.
#include "bindings.h"

#include <fusion.h>
#include <ir/all_nodes.h>
#include <runtime/communicator.h>
#include <ir/device_mesh.h>
#include <runtime/multidevice_executor.h>
#include <multidevice/sharding.h>

#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

namespace py = pybind11;

namespace fuser::python {

void bindMultiDevice(py::module_& m) {
  py::class_<DeviceMesh>(m, "DeviceMesh")
      .def(py::init<std::vector<int64_t>>(), py::arg("devices"))
      .def_static(
          "create_for_num_devices", &DeviceMesh::createForNumDevices,
          py::arg("n"))
      .def_property_readonly("size", &DeviceMesh::size)
      .def_property_readonly("devices", &DeviceMesh::vector)
      .def("idx_of", &DeviceMesh::idxOf, py::arg("device"))
      .def("__len__", &DeviceMesh::size)
      .def("__eq__", &DeviceMesh::operator==)
      .def("__repr__", &DeviceMesh::toString);

  m.def("_set_device_mesh", [](TensorView* tv, const DeviceMesh& mesh) {
    tv->setDeviceMesh(mesh);
  });
  m.def("_device_mesh", [](TensorView* tv) { return tv->getDeviceMesh(); });
  m.def(
      "_outer_split",
      [](Fusion& fusion, TensorView* tv, int64_t axis, int64_t factor) {
        FusionGuard fg(&fusion);
        tv->split(axis, factor, /*inner_split=*/false);
      });
  m.def("_is_multi_device", [](const Fusion& fusion) {
    return isMultiDevice(&fusion);
  });

  m.def(
      "_set_process_group",
      [](py::object group) {
        if (group.is_none()) {
          Communicator::getInstance().setProcessGroup({});
          return;
        }
        // Watched, not held: torch.distributed owns its groups.
        Communicator::getInstance().setProcessGroup(
            group.cast<c10::intrusive_ptr<c10d::ProcessGroup>>(),
            /*own=*/false);
      },
      py::arg("group"));
  m.def("_has_process_group", [] {
    return Communicator::getInstance().hasProcessGroup();
  });
  m.def("_rank", [] { return Communicator::getInstance().deviceId(); });
  m.def("_world_size", [] { return Communicator::getInstance().size(); });
  m.def("_shard_tensor", [](py::object tensor, TensorView* tv) {
    at::Tensor shard = shardTensor(THPVariable_Unpack(tensor.ptr()), tv);
    return py::reinterpret_steal<py::object>(THPVariable_Wrap(shard));
  });
}

} // namespace fuser::python
