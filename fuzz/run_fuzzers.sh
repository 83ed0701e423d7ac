#!/usr/bin/env bash
# Builds fib's libFuzzer targets and its core unit tests with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz/, runs the unit tests (ctest -L core), then each fuzz
# target for SECONDS seconds (default 20) from a seed corpus made of the project's fixtures (and
# ../shared/corpus when it is there). Any crash, sanitizer report or failed property fails it.
# With FIB_FUZZ_PREBUILT=DIR it runs the targets of a build that has them already (CI: the
# `asan` preset's build-asan/, whose unit tests tests/run_sanitized.sh ran) and builds nothing.
#
#   bash fuzz/run_fuzzers.sh [SECONDS]       # its own build (no Python, no torch), 20 s a target
#   bash fuzz/run_fuzzers.sh 600             # a longer session
#   FIB_FUZZ_PREBUILT=build-asan bash fuzz/run_fuzzers.sh 20   # what CI runs
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-20}"
build="${FIB_FUZZ_PREBUILT:-${FIB_FUZZ_BUILD_DIR:-build-fuzz}}"
jobs="${FIB_JOBS:-2}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ -n "${FIB_FUZZ_PREBUILT:-}" ]; then
  if [ ! -x "$build/fuzz/fuzz_json_reader" ]; then
    echo "fuzz: $build has no fuzz targets (configure it with FIB_FUZZ=ON)" >&2
    exit 1
  fi
else
  cxx="$(command -v clang++ || command -v clang++-14 || true)"
  cc="$(command -v clang || command -v clang-14 || true)"
  if [ -z "$cxx" ]; then
    echo "fuzz: clang++ not found (Debian: apt-get install clang-14 libclang-rt-14-dev)" >&2
    exit 1
  fi
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  CC="$cc" CXX="$cxx" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFIB_DEV_MODE=ON \
    -DFIB_WITH_PYTHON=OFF -DFIB_WITH_TORCH=OFF -DFIB_SANITIZE=address,undefined -DFIB_FUZZ=ON \
    "${launcher[@]}" >/dev/null
  cmake --build "$build" -j "$jobs"
  ctest --test-dir "$build" -L core -j "$jobs" --output-on-failure
fi

seeds="$build/fuzz-seeds"
rm -rf "$seeds"
mkdir -p "$seeds"/{json_reader,definition,constraint,safetensors,text_diff,normalize}
i=0
while IFS= read -r -d '' file; do
  i=$((i + 1))
  cp "$file" "$seeds/json_reader/$i"
  cp "$file" "$seeds/definition/$i"
  cp "$file" "$seeds/normalize/$i"
done < <(find examples tests/cli/cases ../shared/corpus/dataset/definitions -maxdepth 4 \
  \( -name '*.json' -o -name '*.jsonl' \) -size -64k -print0 2>/dev/null | head -z -n 400)
for expression in 'batch_size * page_size <= num_pages * 8' 'len_indptr == batch_size + 1' \
  'max(1, n) // 2 in (0, 1, 2)' 'kv_indptr[-1].item() == num_kv_indices' 'not (n < 0 or n > 4)'; do
  i=$((i + 1))
  printf '%s' "$expression" > "$seeds/constraint/$i"
done
while IFS= read -r -d '' file; do
  i=$((i + 1))
  cp "$file" "$seeds/safetensors/$i"
done < <(find ../shared/corpus -name '*.safetensors' -size -256k -print0 2>/dev/null | head -z -n 20)
printf '\x08\x00\x00\x00\x00\x00\x00\x00{}      ' > "$seeds/safetensors/empty"
printf 'a\nb\nc\n\0a\nB\nc\nd' > "$seeds/text_diff/1"
printf 'x\0x\n' > "$seeds/text_diff/2"

for target in json_reader definition constraint safetensors text_diff normalize; do
  echo "fuzz: $target for ${seconds}s" >&2
  "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 "$seeds/$target" 2>"$build/fuzz-$target.log" || {
    tail -50 "$build/fuzz-$target.log" >&2
    echo "fuzz: $target failed (log: $build/fuzz-$target.log)" >&2
    exit 1
  }
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/fuzz-$target.log" >&2 || true
done
echo "fuzz: all targets ran ${seconds}s without a finding" >&2
