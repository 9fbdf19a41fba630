#!/usr/bin/env bash
# The test command (README, .ci/run): installs what is missing, builds, runs every test.
#   1. the main build (RelWithDebInfo) and all its ctest tests (unit, CLI, validation against PyTorch);
#   2. clang's thread-safety analysis (GUARDED_BY/REQUIRES) over every source that locks, errors fatal;
#   3. a sanitizer build (ASan+UBSan; TSan for the threaded suites) of the parts listed below;
#   4. a clang libFuzzer build whose fuzz targets each run briefly (also with -Werror=thread-safety).
# OOMGUARD_QUICK=1 skips 2 to 4.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
start=$(date +%s)

./scripts/install-deps.sh

step() { echo; echo "== $* ($(( $(date +%s) - start ))s)"; }

# Builds the listed targets that exist in build dir $1 (parts land one by one).
build_existing() {
  local dir=$1; shift
  local have=() t
  local all; all=$(cmake --build "$dir" --target help 2>/dev/null || true)
  for t in "$@"; do
    if grep -qE "(^| )$t( |$)" <<<"$all"; then have+=("$t"); fi
  done
  if [ ${#have[@]} -gt 0 ]; then cmake --build "$dir" -j"$JOBS" --target "${have[@]}"; fi
  echo "${have[*]}" >"$dir/.built_targets"
}

step "main build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$JOBS"
step "tests"
ctest --test-dir build --output-on-failure -j"$JOBS" --timeout 900

if [ "${OOMGUARD_QUICK:-0}" = 1 ]; then exit 0; fi

step "clang thread-safety analysis"
JOBS=$JOBS ./scripts/check_thread_safety.py build

# Parts whose tests also run under sanitizers: test binary and ctest label (explain_score: the explain
# label's corpus check, explain_healthy_dev, runs it).
asan_targets=(oomguard_mr_tests oomguard_feed_tests oomguard_explain_tests explain_score)
tsan_targets=(oomguard_mr_tests oomguard_feed_tests oomguard_doctor_tests oomguard_plan_tests oomguard_fit_tests)
# Under TSan: the guard's concurrency tests, feed's pipeline (reader, decoders, budget, cache), watch's
# sampler (Watcher) and the planner's option sets planned from several threads (fit's what-ifs), by
# test name. (A test of these labels whose binary is not built here must not match: it would be
# "Not Run".)
tsan_tests='Thread|Concurren|Parallel|^Feed\.|^FeedThreads\.|^ByteBudget\.|^BufferCache\.|^Watcher\.'

step "ASan+UBSan build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DOOMGUARD_SANITIZE=address >/dev/null
build_existing build-asan "${asan_targets[@]}"
labels=$(sed -e 's/oomguard_\([a-z]*\)_tests/\1/g' -e 's/ /|/g' build-asan/.built_targets)
if [ -n "$labels" ]; then
  ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j"$JOBS" -L "^($labels)\$" -LE tsan_skip
fi

step "TSan build"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DOOMGUARD_SANITIZE=thread >/dev/null
build_existing build-tsan "${tsan_targets[@]}"
labels=$(sed -e 's/oomguard_\([a-z]*\)_tests/\1/g' -e 's/ /|/g' build-tsan/.built_targets)
if [ -n "$labels" ]; then
  ctest --test-dir build-tsan --output-on-failure -j"$JOBS" -L "^($labels)\$" -R "$tsan_tests"
fi

step "libFuzzer build"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOOMGUARD_FUZZ=ON \
  -DOOMGUARD_BUILD_TESTS=OFF >/dev/null
fuzzers=$(cmake --build build-fuzz --target help | sed -n 's/^\.\.\. \([a-z_]*_fuzzer\)$/\1/p')
if [ -n "$fuzzers" ]; then
  # shellcheck disable=SC2086
  cmake --build build-fuzz -j"$JOBS" --target $fuzzers
  ctest --test-dir build-fuzz --output-on-failure -L fuzz
fi
step "all tests passed"
