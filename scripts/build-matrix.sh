#!/usr/bin/env bash
# Every CMake build type with GCC and with Clang, warnings as errors: the
# libraries, providers and tools (what a packager builds), each in its own
# build directory under build-matrix/. CI's scripts/test.sh builds
# RelWithDebInfo with GCC and Debug with Clang (the whole tree), and runs
# this for GCC Release and MinSizeRel and Clang Release; about 2 minutes
# per combination on 2 cores.
#
# usage: scripts/build-matrix.sh [TYPE ...]   (default: Release RelWithDebInfo Debug MinSizeRel)
# env:   OPENND_MATRIX_COMPILERS="gcc clang"
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
types=("$@")
[ ${#types[@]} -gt 0 ] || types=(Release RelWithDebInfo Debug MinSizeRel)
jobs=$(nproc)
targets=(opennd opennd_kit ndsoft opennd_ndk opennd_smbd ndinfo ndinstall ndperf ndrping ndconformance ndksmbd ndbaseline)
# ndverbs is built where rdma-core's headers are (the configure step says so otherwise).
failed=()
for cc in ${OPENND_MATRIX_COMPILERS:-gcc clang}; do
  case $cc in
    gcc) env=(CC=gcc CXX=g++);;
    clang) env=(CC=clang CXX=clang++);;
    *) echo "build-matrix: unknown compiler $cc" >&2; exit 2;;
  esac
  for t in "${types[@]}"; do
    dir=build-matrix/$cc-$t
    echo "== $cc $t =="
    start=$SECONDS
    mkdir -p build-matrix
    all=("${targets[@]}")
    if env "${env[@]}" cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$t" -DOPENND_WERROR=ON -DOPENND_BUILD_TESTS=OFF \
         >"$dir.log" 2>&1; then
      help=$(cmake --build "$dir" --target help 2>/dev/null || true)
      if grep -qw ndverbs <<<"$help"; then all+=(ndverbs); fi
    fi
    if [ -f "$dir/CMakeCache.txt" ] && cmake --build "$dir" -j"$jobs" --target "${all[@]}" >>"$dir.log" 2>&1; then
      echo "   built in $((SECONDS - start)) s"
    else
      echo "   FAILED (log: $dir.log)"; grep -E 'error|warning' "$dir.log" | head -20
      failed+=("$cc-$t")
    fi
  done
done
if [ ${#failed[@]} -gt 0 ]; then echo "build-matrix: failed: ${failed[*]}"; exit 1; fi
echo "build-matrix: every combination built"
