# Choose the Python to embed. Never trust PATH: the first candidate that can `import torch` wins
# (the execution layer needs that interpreter), else the first one that runs at all.
# Candidates, in order: $FIB_PYTHON, $VIRTUAL_ENV/bin/python3, /usr/bin/python3, python3 on PATH.
# The chosen path is cached as Python3_EXECUTABLE and baked into the binary as FIB_PYTHON_EXECUTABLE;
# at run time $FIB_PYTHON overrides it (see docs/architecture.md).
#
# FIB_WITH_PYTHON=OFF: nothing is embedded (no fib_python, fib or fib-worker). Only an
# interpreter is looked for, optionally, for the Python scripts the test suite runs.
if(NOT FIB_WITH_PYTHON)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    message(STATUS "fib: FIB_WITH_PYTHON=OFF; test scripts run with ${Python3_EXECUTABLE}")
  else()
    message(STATUS "fib: FIB_WITH_PYTHON=OFF and no Python interpreter found")
  endif()
  return()
endif()

if(NOT Python3_EXECUTABLE)
  set(_fib_candidates)
  if(DEFINED ENV{FIB_PYTHON} AND NOT "$ENV{FIB_PYTHON}" STREQUAL "")
    list(APPEND _fib_candidates "$ENV{FIB_PYTHON}")
  endif()
  if(DEFINED ENV{VIRTUAL_ENV} AND NOT "$ENV{VIRTUAL_ENV}" STREQUAL "")
    list(APPEND _fib_candidates "$ENV{VIRTUAL_ENV}/bin/python3")
  endif()
  list(APPEND _fib_candidates /usr/bin/python3)
  find_program(_fib_path_python python3 NO_CACHE)
  if(_fib_path_python)
    list(APPEND _fib_candidates "${_fib_path_python}")
  endif()
  set(_fib_first_working "")
  set(_fib_with_torch "")
  foreach(_cand IN LISTS _fib_candidates)
    if(NOT EXISTS "${_cand}")
      continue()
    endif()
    execute_process(COMMAND "${_cand}" -c "import sys; print(sys.version_info[0])"
                    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(NOT _rc EQUAL 0)
      continue()
    endif()
    if(_fib_first_working STREQUAL "")
      set(_fib_first_working "${_cand}")
    endif()
    execute_process(COMMAND "${_cand}" -c "import torch"
                    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(_fib_with_torch "${_cand}")
      break()
    endif()
  endforeach()
  if(NOT _fib_with_torch STREQUAL "")
    set(Python3_EXECUTABLE "${_fib_with_torch}" CACHE FILEPATH "Python to embed")
  elseif(NOT _fib_first_working STREQUAL "")
    message(WARNING "fib: no Python candidate can `import torch`; embedding ${_fib_first_working}")
    set(Python3_EXECUTABLE "${_fib_first_working}" CACHE FILEPATH "Python to embed")
  endif()
endif()

find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Embed)
find_package(pybind11 2.6 REQUIRED CONFIG)
message(STATUS "fib: embedding Python ${Python3_VERSION} (${Python3_EXECUTABLE}); "
               "libpython ${Python3_LIBRARIES}")
