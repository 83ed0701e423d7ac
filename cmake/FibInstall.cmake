# `cmake --install` (docs/building.md), the GNU layout under CMAKE_INSTALL_PREFIX:
#   bin/fib
#   libexec/fib/fib-worker                the worker; fib finds it relative to its own executable
#   share/fib/schemas/*.schema.json       the JSON Schemas
#   share/doc/fib/README.md, LICENSE, docs/*.md  (README's links stay valid)
# Nothing installed refers to the build tree: the only path baked in is the embedded Python's.

# fib looks for the worker at <directory of fib>/FIB_WORKER_FROM_BINDIR (find_worker_executable).
file(RELATIVE_PATH FIB_WORKER_FROM_BINDIR "${CMAKE_INSTALL_FULL_BINDIR}"
     "${CMAKE_INSTALL_FULL_LIBEXECDIR}/fib/fib-worker")
set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/exec/worker_client.cpp
             DIRECTORY ${PROJECT_SOURCE_DIR}/src
             APPEND PROPERTY COMPILE_DEFINITIONS FIB_WORKER_FROM_BINDIR="${FIB_WORKER_FROM_BINDIR}")

# A library outside the system directories (a pip or conda torch, a venv's libpython) stays
# findable from the installed binaries.
if(TARGET fib)
  set_target_properties(fib PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
  install(TARGETS fib RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET fib-worker)
  set_target_properties(fib-worker PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
  install(TARGETS fib-worker RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/fib)
endif()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/fib/schemas
        FILES_MATCHING PATTERN "*.schema.json")
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md")
