# FIB_SANITIZE (e.g. "address,undefined", the `asan` preset): compile and link every target with
# those sanitizers. UBSan findings abort (-fno-sanitize-recover) so that a test fails on them.
if(NOT FIB_SANITIZE STREQUAL "")
  add_compile_options(-fsanitize=${FIB_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${FIB_SANITIZE})
  message(STATUS "fib: sanitizers ${FIB_SANITIZE}")
endif()
