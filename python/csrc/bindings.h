// The Python extension fuser._C: pybind11 bindings over the fuser library.
// The Python package (python/fuser) builds FusionDefinition on top of them.
//
// Handles to IR nodes (Val, TensorView, IterDomain) never own their node:
// the Fusion does. Every handle keeps the Python object of its Fusion alive
// (return_value_policy::reference_internal), so a handle never dangles.
#pragma once

#include <pybind11/pybind11.h>

namespace fuser::python {

// Enums (DataType, ParallelType) and the exception classes.
void bindEnumsAndErrors(pybind11::module_& m);
// Fusion, Val, TensorView, IterDomain and the op builders.
void bindIr(pybind11::module_& m);
// The library ops (ops/external.h) as methods of Fusion (after bindIr).
void bindExternalOps(pybind11::module_& m);
// FusionExecutor: runs a fusion on torch.Tensors (FusionExecutorCache).
void bindRuntime(pybind11::module_& m);
// DeviceMesh, the communicator's process group, shard_tensor.
void bindMultiDevice(pybind11::module_& m);

} // namespace fuser::python
