# Finds what the Python extension fuser._C needs (included at directory scope
# by the top-level CMakeLists.txt, after torch is found):
#   Python3::Module             the Python development headers (FindPython3)
#   torch's pybind11 headers    torch/include/pybind11: the extension uses
#                               torch's casters (torch/csrc/utils/pybind.h),
#                               which must be compiled with the same pybind11
#                               as torch, so a separately installed pybind11
#                               is never mixed in
#   FUSER_TORCH_PYTHON_LIBRARY  libtorch_python (THPVariable_Wrap/Unpack)
# Sets FUSER_PYTHON_AVAILABLE (ON/OFF) and FUSER_PYTHON_MISSING (a list).

# The interpreter: the one given (Python3_EXECUTABLE, which scikit-build-core
# sets), else python3 on PATH resolved through sys.executable so that shims
# (pyenv) lead to the real installation and its headers.
if(NOT Python3_EXECUTABLE)
  find_program(_fuser_python3 NAMES python3 python)
  if(_fuser_python3)
    execute_process(
      COMMAND "${_fuser_python3}" -c "import sys; print(sys.executable)"
      OUTPUT_VARIABLE _fuser_python3_real
      OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET)
    if(_fuser_python3_real)
      set(Python3_EXECUTABLE "${_fuser_python3_real}" CACHE FILEPATH
        "Python interpreter for the fuser extension")
    endif()
    unset(_fuser_python3_real)
  endif()
  unset(_fuser_python3 CACHE)
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)

find_library(FUSER_TORCH_PYTHON_LIBRARY torch_python
  PATHS "${TORCH_INSTALL_PREFIX}/lib" NO_DEFAULT_PATH)

set(FUSER_PYTHON_MISSING "")
if(NOT Python3_Development.Module_FOUND)
  list(APPEND FUSER_PYTHON_MISSING
    "the Python development headers (Python.h; on Debian: python3-dev)")
endif()
if(NOT EXISTS "${TORCH_INSTALL_PREFIX}/include/pybind11/pybind11.h" OR
   NOT EXISTS "${TORCH_INSTALL_PREFIX}/include/torch/csrc/utils/pybind.h")
  list(APPEND FUSER_PYTHON_MISSING
    "torch's pybind11 headers under ${TORCH_INSTALL_PREFIX}/include")
endif()
if(NOT FUSER_TORCH_PYTHON_LIBRARY)
  list(APPEND FUSER_PYTHON_MISSING "libtorch_python in ${TORCH_INSTALL_PREFIX}/lib")
endif()

if(FUSER_PYTHON_MISSING)
  set(FUSER_PYTHON_AVAILABLE OFF)
else()
  set(FUSER_PYTHON_AVAILABLE ON)
endif()
