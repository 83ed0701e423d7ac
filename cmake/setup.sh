#!/usr/bin/env bash
# fib's one-step set-up for a fresh Debian 12 machine, run from anywhere inside the repository:
#
#   bash cmake/setup.sh example   install missing packages, build, validate the dataset in
#                                 examples/dataset (report on stdout, no files written)
#   bash cmake/setup.sh test      install missing packages, build (warnings as errors), run all tests
#
# Packages come from Debian only (nothing is downloaded at build time). apt-get runs only when a
# package is missing, as root or through sudo. FIB_BUILD_DIR (default: build) and FIB_JOBS
# (default: 2) tune the build.
set -euo pipefail

mode="${1:-}"
case "$mode" in
  example | test) ;;
  *)
    echo "usage: bash cmake/setup.sh example|test" >&2
    exit 2
    ;;
esac

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${FIB_BUILD_DIR:-build}"
jobs="${FIB_JOBS:-2}"

packages=(
  build-essential cmake ninja-build
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev
  libtomlplusplus-dev
  python3-dev pybind11-dev libtorch-dev python3-torch python3-numpy libopenblas0-pthread
  python3-jsonschema python3-yaml clang-format bubblewrap
)
# The sanitizer and fuzzing run of CI (fuzz/run_fuzzers.sh) builds with clang and libFuzzer.
if [ "$mode" = test ]; then
  packages+=(clang-14 libclang-rt-14-dev)
fi
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]} > 0)); then
  echo "fib setup: installing ${missing[*]}" >&2
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The browser test of `fib report html` (tests/html/check_site.py) loads the site in Debian's
# headless Chromium. It is optional: where it cannot be installed that test is skipped.
if [ "$mode" = test ] && ! command -v chromium >/dev/null 2>&1; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
  fi
  echo "fib setup: installing chromium (for the browser test of fib report html)" >&2
  if ! { "${sudo[@]}" apt-get update &&
         DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends \
           chromium; }; then
    echo "fib setup: chromium could not be installed; html.site_in_browser will be skipped" >&2
  fi
fi

# The embedded interpreter must be the Python that can import torch (Debian's), not a pyenv shim.
python_args=()
if [ -z "${FIB_PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then
  python_args=(-DPython3_EXECUTABLE=/usr/bin/python3)
fi

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFIB_DEV_MODE=ON -DFIB_WITH_TORCH=ON \
  "${python_args[@]}"
cmake --build "$build_dir" -j "$jobs"

if [ "$mode" = example ]; then
  "$build_dir/apps/fib/fib" validate --dataset examples/dataset --disable-gpu --outputs stdout
else
  ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
fi
