// Entry point of the extension module fuser._C: enums, exception classes,
// and the IR and runtime bindings (ir.cpp, runtime.cpp).
#include "bindings.h"

#include <base/exceptions.h>
#include <ir/type.h>

namespace py = pybind11;

namespace fuser::python {

void bindEnumsAndErrors(py::module_& m) {
  // The data types a FusionDefinition can use (Index is internal).
  py::enum_<DataType>(m, "DataType")
      .value("Null", DataType::Null)
      .value("Bool", DataType::Bool)
      .value("Int8", DataType::Int8)
      .value("UInt8", DataType::UInt8)
      .value("Int16", DataType::Int16)
      .value("Int32", DataType::Int32)
      .value("Int", DataType::Int)
      .value("Float8_e4m3fn", DataType::Float8_e4m3fn)
      .value("Float8_e5m2", DataType::Float8_e5m2)
      .value("UInt64", DataType::UInt64)
      .value("Float4_e2m1fn_x2", DataType::Float4_e2m1fn_x2)
      .value("Half", DataType::Half)
      .value("BFloat16", DataType::BFloat16)
      .value("Float", DataType::Float)
      .value("Double", DataType::Double)
      .value("ComplexFloat", DataType::ComplexFloat)
      .value("ComplexDouble", DataType::ComplexDouble);

  py::enum_<ParallelType>(m, "ParallelType")
      .value("Serial", ParallelType::Serial)
      .value("BIDx", ParallelType::BIDx)
      .value("BIDy", ParallelType::BIDy)
      .value("BIDz", ParallelType::BIDz)
      .value("TIDx", ParallelType::TIDx)
      .value("TIDy", ParallelType::TIDy)
      .value("TIDz", ParallelType::TIDz)
      .value("Vectorize", ParallelType::Vectorize)
      .value("Unroll", ParallelType::Unroll)
      .value("Unswitch", ParallelType::Unswitch)
      .value("DIDx", ParallelType::DIDx)
      // nvFuser's name for the device axis of a one-dimensional mesh.
      .value("mesh_x", ParallelType::DIDx)
      .value("DIDy", ParallelType::DIDy)
      .value("DIDz", ParallelType::DIDz);

  // fuser::UserError (FUSER_CHECK: an invalid request) and
  // fuser::InternalError (a bug in fuser) keep their C++ message. Both
  // derive from RuntimeError, which is what nvFuser raises.
  py::register_local_exception<UserError>(m, "FuserError", PyExc_RuntimeError);
  py::register_local_exception<InternalError>(
      m, "FuserInternalError", PyExc_RuntimeError);
}

} // namespace fuser::python

PYBIND11_MODULE(_C, m) {
  m.doc() =
      "Bindings of the fuser C++ library. Use the fuser package "
      "(FusionDefinition) rather than this module directly.";
  fuser::python::bindEnumsAndErrors(m);
  fuser::python::bindIr(m);
  fuser::python::bindExternalOps(m);
  fuser::python::bindRuntime(m);
  fuser::python::bindMultiDevice(m);
}
