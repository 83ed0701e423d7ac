# The libtorch execution layer (FIB_WITH_TORCH = AUTO | ON | OFF): Torch and libtorch_python for
# the `fib-worker` executable, the only binary that loads libtorch. The main `fib` never links it.
#
# Torch belongs to the embedded Python (FibPython.cmake picks the interpreter that can import
# torch). A pip/conda torch announces its CMake package through torch.utils.cmake_prefix_path;
# Debian's points at a directory that does not exist, and the default prefix finds
# /usr/lib/<triplet>/cmake/Torch instead. libtorch_python (THPVariable) is not in
# TORCH_LIBRARIES: it is looked up beside libtorch.
set(FIB_HAVE_TORCH OFF)
if(NOT FIB_WITH_PYTHON AND NOT FIB_WITH_TORCH STREQUAL "OFF")
  # The worker embeds Python (torch's own), so it needs what FIB_WITH_PYTHON=OFF leaves out.
  if(FIB_WITH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "fib: FIB_WITH_TORCH=ON needs FIB_WITH_PYTHON=ON (fib-worker embeds Python)")
  endif()
  message(STATUS "fib: FIB_WITH_PYTHON=OFF; fib-worker (reference execution) is not built")
elseif(NOT FIB_WITH_TORCH STREQUAL "OFF")
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c
            "import os, torch, torch.utils; p = torch.utils.cmake_prefix_path; print(p if os.path.isdir(p) else '')"
    RESULT_VARIABLE _fib_torch_rc OUTPUT_VARIABLE _fib_torch_prefix ERROR_QUIET
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_fib_torch_rc EQUAL 0 AND NOT _fib_torch_prefix STREQUAL "")
    list(PREPEND CMAKE_PREFIX_PATH "${_fib_torch_prefix}")
  endif()
  find_package(Torch QUIET CONFIG)
  if(Torch_FOUND)
    get_filename_component(_fib_torch_dir "${TORCH_LIBRARY}" DIRECTORY)
    find_library(FIB_TORCH_PYTHON_LIBRARY torch_python HINTS "${_fib_torch_dir}")
  endif()
  if(Torch_FOUND AND FIB_TORCH_PYTHON_LIBRARY AND _fib_torch_rc EQUAL 0)
    set(FIB_HAVE_TORCH ON)
    message(STATUS "fib: torch ${Torch_VERSION} (${TORCH_LIBRARY}); torch_python "
                   "${FIB_TORCH_PYTHON_LIBRARY}")
  elseif(FIB_WITH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "fib: FIB_WITH_TORCH=ON but torch was not found (Torch_FOUND=${Torch_FOUND}, "
                        "torch_python=${FIB_TORCH_PYTHON_LIBRARY}, `import torch` in "
                        "${Python3_EXECUTABLE}: rc ${_fib_torch_rc}); install libtorch-dev "
                        "python3-torch or use FIB_WITH_TORCH=AUTO|OFF")
  else()
    message(STATUS "fib: torch not found; fib-worker (reference execution) is not built")
  endif()
endif()
