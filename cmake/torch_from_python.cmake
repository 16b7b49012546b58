# Torch as the Python environment that will import _XLAC has it: the torch package found by
# Python3_EXECUTABLE decides headers, libraries, C++ ABI and pybind11, so the extension always
# matches the torch it is loaded next to.
#
# Defines: the INTERFACE target txla_torch (headers + libraries), TXLA_TORCH_PYTHON_LIBRARY
# (libtorch_python), TXLA_PYBIND11_INCLUDE_DIR, TXLA_TORCH_VERSION and TXLA_TORCH_LIBRARY_DIR.
execute_process(
  COMMAND "${Python3_EXECUTABLE}" -c
    "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.__version__); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
  OUTPUT_VARIABLE _txla_torch OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _txla_torch_rc)
if(NOT _txla_torch_rc EQUAL 0)
  message(FATAL_ERROR "${Python3_EXECUTABLE} cannot import torch: install the pinned torch first")
endif()
string(REPLACE "\n" ";" _txla_torch "${_txla_torch}")
list(GET _txla_torch 0 TXLA_TORCH_DIR)
list(GET _txla_torch 1 TXLA_TORCH_VERSION)
list(GET _txla_torch 2 _txla_torch_abi)
message(STATUS "torch ${TXLA_TORCH_VERSION} from ${TXLA_TORCH_DIR}")

add_library(txla_torch INTERFACE)
if(EXISTS "${TXLA_TORCH_DIR}/include/ATen/ATen.h")
  # A wheel (PyPI): headers, libraries and torch's own pybind11 are inside the package. Only the
  # CPU libraries are linked; the CUDA ones the wheel carries are never loaded by us.
  set(TXLA_TORCH_LIBRARY_DIR "${TXLA_TORCH_DIR}/lib")
  target_include_directories(txla_torch SYSTEM INTERFACE
    "${TXLA_TORCH_DIR}/include" "${TXLA_TORCH_DIR}/include/torch/csrc/api/include")
  target_link_libraries(txla_torch INTERFACE
    "${TXLA_TORCH_LIBRARY_DIR}/libtorch.so" "${TXLA_TORCH_LIBRARY_DIR}/libtorch_cpu.so"
    "${TXLA_TORCH_LIBRARY_DIR}/libc10.so")
  target_compile_definitions(txla_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${_txla_torch_abi})
  set(TXLA_TORCH_PYTHON_LIBRARY "${TXLA_TORCH_LIBRARY_DIR}/libtorch_python.so")
  set(TXLA_PYBIND11_INCLUDE_DIR "${TXLA_TORCH_DIR}/include")
else()
  # A distribution's torch (Debian's python3-torch with libtorch-dev): its CMake package.
  find_package(Torch REQUIRED)
  find_package(pybind11 CONFIG REQUIRED)
  target_include_directories(txla_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
  target_link_libraries(txla_torch INTERFACE ${TORCH_LIBRARIES})
  get_target_property(TXLA_PYBIND11_INCLUDE_DIR pybind11::headers INTERFACE_INCLUDE_DIRECTORIES)
  find_library(TXLA_TORCH_PYTHON_LIBRARY torch_python REQUIRED)
  get_filename_component(TXLA_TORCH_LIBRARY_DIR "${TXLA_TORCH_PYTHON_LIBRARY}" DIRECTORY)
endif()
