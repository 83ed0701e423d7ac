#!/usr/bin/env bash
# Every unit test under AddressSanitizer and UndefinedBehaviorSanitizer: the `asan` preset
# (build-asan/, clang, Debug with line tables, FIB_SANITIZE=address,undefined, FIB_FUZZ=ON) with
# the embedded Python and, when libtorch is found, fib-worker, so the tests that drive the
# sandboxed worker and the `fib` binary run sanitized too. Any sanitizer report fails its test (the
# preset's ASAN_OPTIONS, UBSAN_OPTIONS and LSAN_OPTIONS; tests/support/lsan.supp lists the blocks
# libpython keeps). The same build holds the libFuzzer targets, which CI then runs with
# `FIB_FUZZ_PREBUILT=build-asan bash fuzz/run_fuzzers.sh 20`.
#
#   bash tests/run_sanitized.sh          # CI runs it after the README's test command
#
# Such a build does not cap the worker's address space (ASan's shadow is terabytes of virtual
# memory), so the one test of that cap skips (docs/building.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs="${FIB_JOBS:-2}"
cxx="${CXX:-$(command -v clang++ || command -v clang++-14 || true)}"
if [ -z "$cxx" ]; then
  echo "sanitized: clang++ not found (Debian: apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 1
fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
CXX="$cxx" cmake --preset asan "${launcher[@]}" >/dev/null
cmake --build --preset asan -j "$jobs"
ctest --preset asan -L unit -j "$jobs"
