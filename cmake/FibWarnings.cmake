# fib_warnings: the warning set every first-party target links privately.
add_library(fib_warnings INTERFACE)
target_compile_options(fib_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                              -Wno-sign-conversion -Wnon-virtual-dtor)
if(FIB_DEV_MODE)
  target_compile_options(fib_warnings INTERFACE -Werror)
endif()
