#!/usr/bin/env bash
# Builds and runs every OpenND test: the normal build (GCC), the same suite
# under ASan+UBSan in a Clang build of every target, the concurrency tests
# under TSan, the install checks, the Debian packages, a short fuzzing run,
# the build types the others do not build, the interop run with Linux siw
# in a VM, and the verbs provider's conformance on rxe and siw in a VM.
# Exit 0 only if all pass. This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$SECONDS
jobs=$(nproc)
OPENND_DEPS_EXTRA="python3-matplotlib" bash scripts/deps.sh  # the chart test (tests/bench) draws

step() { printf '\n== %s (%ds so far) ==\n' "$*" $((SECONDS - start)); }
# vm_stage TITLE NAME SCRIPT ARGS...: a stage in the rdma-vm VM; 77 from the
# script means this machine cannot run it (skipped), anything else fails.
vm_stage() {
  local title=$1 name=$2 rc=0
  shift 2
  step "$title"
  RDMA_VM_RUN=$runvm timeout 2400 bash "$@" || rc=$?
  if [ $rc = 77 ]; then
    echo "$name stage skipped: this machine cannot run the VM"
  elif [ $rc != 0 ]; then
    echo "$name stage failed (status $rc)"
    exit 1
  fi
}

step "build (RelWithDebInfo)"
# (The test programs' own code at -O0: half the compile time, and what they
# test, the libraries, providers and tools, is built RelWithDebInfo.)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPENND_WERROR=ON -DOPENND_OPTIMIZE_TESTS=OFF >/dev/null
cmake --build build -j"$jobs"
step "tests"
ctest --test-dir build --output-on-failure -j"$jobs" --timeout 300 || { bash scripts/failure-summary.sh build; exit 1; }

step "install and packaging checks"
bash scripts/check-install.sh build

# The Debian packages (debian/): built, lintian-clean, installed, used and
# removed, then installed and used in a fresh Debian 12 root (debootstrap).
# At -O0 here (noopt) to save CI minutes: what is checked is the packaging;
# the code is the suite's business above and below.
step "Debian packages (build, lintian, install, use, remove; a fresh Debian 12 root)"
OPENND_DEPS_EXTRA="debhelper lintian man-db debootstrap" bash scripts/deps.sh
rc=0
OPENND_DEB_OPTIONS="noopt noautodbgsym" bash scripts/check-deb.sh || rc=$?
[ $rc = 77 ] && echo "Debian packages: skipped (needs root)"
[ $rc = 0 ] || [ $rc = 77 ] || exit 1

# With Clang: the suite under ASan+UBSan, and so every target but the
# benchmarks built by the other compiler with warnings as errors, in one
# build (the suite runs under GCC above): a construct one compiler takes and
# the other refuses fails here, not in a user's build. (One build instead of
# a GCC ASan build and a plain Clang one: ~4 min less. The benchmarks, whose
# timing guards a sanitizer's slowdown trips, build with both compilers in
# scripts/build-matrix.sh.)
step "build with Clang, AddressSanitizer + UndefinedBehaviorSanitizer (Debug, warnings as errors)"
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DOPENND_WERROR=ON \
  -DOPENND_SANITIZE=address,undefined -DOPENND_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs"
step "tests under ASan+UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" --timeout 600 ||
  { bash scripts/failure-summary.sh build-asan; exit 1; }

step "build with ThreadSanitizer"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DOPENND_WERROR=ON -DOPENND_SANITIZE=thread -DOPENND_BUILD_BENCH=OFF >/dev/null
cmake --build build-tsan -j"$jobs" --target test_win32 test_kit test_soft test_soft_engine ndsoft test_ndk ndksmbd
step "concurrency tests under TSan"
# The two-process test runs on the cross-memory-attach path only: on the
# copy path the target's progress thread places RDMA Writes into memory the
# peer process synchronises through shared rings, which TSan cannot see
# across processes (what hardware DMA does invisibly), so it reports a race.
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0 \
  ctest --test-dir build-tsan --output-on-failure -j"$jobs" --timeout 600 \
  -R '^(Win32|Overlapped|CompletionQueue|CqModeration|Unknown|DirectDelivery|ReaderGate|KitConnection|Progress|test_kit_no_membarrier|Port|Event|Wait|EngineBarrier|Hostile|Ndk|Smbd|LargeSend)|CrossMemoryAttach|_Tcp|ListenerLimits' ||
  { bash scripts/failure-summary.sh build-tsan; exit 1; }

# The iWARP decoders and engine fed hostile bytes (fuzz/README.md): a short
# libFuzzer run from the checked-in corpus, ASan+UBSan and the harness's
# oracles on. A finding fails the stage and is left in build-fuzz/.
fuzz_seconds=${OPENND_FUZZ_SECONDS:-60}
step "fuzz the iWARP decoders and engine (libFuzzer, ${fuzz_seconds} s)"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPENND_WERROR=ON -DOPENND_BUILD_FUZZ=ON \
  -DOPENND_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target iwarp_fuzzer
fuzz_work=$(mktemp -d)
rc=0
build-fuzz/bin/iwarp_fuzzer -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$root/build-fuzz/" "$fuzz_work" fuzz/corpus 2>&1 | tail -n 25 || rc=$?
rm -rf "$fuzz_work"
if [ $rc != 0 ]; then
  echo "fuzzing found a failure: the input is in build-fuzz/ (crash-*, leak-*, timeout-*); replay it with"
  echo "build-fuzz/bin/iwarp_fuzzer <file>"
  exit 1
fi

# The build types the stages above do not build, as a packager builds
# them (libraries, providers, tools), warnings as errors: GCC Release and
# MinSizeRel, whose warnings move with the optimiser (-O3's -Wrestrict in
# std::string broke a Release build once), and Clang Release, whose
# warnings are the front end's, the same at every -O, so one NDEBUG cell
# covers its assert-only code. scripts/build-matrix.sh with no arguments
# builds every combination.
step "other build types (GCC Release and MinSizeRel, Clang Release; warnings as errors)"
OPENND_MATRIX_COMPILERS=gcc bash scripts/build-matrix.sh Release MinSizeRel
OPENND_MATRIX_COMPILERS=clang bash scripts/build-matrix.sh Release

# Interoperability with Linux soft-iWARP (siw) in a VM (tests/interop,
# docs/interop.md): needs root, /dev/net/tun and the rdma-vm tool next to the
# checkout; installs qemu & co. itself. ~1 minute once its cache is warm.
runvm=${RDMA_VM_RUN:-$root/../shared/tools/rdma-vm/run-vm.sh}
if [ "${OPENND_SKIP_INTEROP:-0}" = 1 ]; then
  step "interop with Linux siw: skipped (OPENND_SKIP_INTEROP=1)"
elif [ "$(id -u)" != 0 ] || [ ! -c /dev/net/tun ] || [ ! -x "$runvm" ]; then
  step "interop with Linux siw: skipped (needs root, /dev/net/tun and $runvm)"
else
  vm_stage "interop with Linux siw in a VM (rping <-> ndrping, verbs_bulk <-> ndrping --bulk)" interop \
    tests/interop/siw_interop.sh build
fi

# The verbs provider (ndverbs) on rxe and siw in a VM (tests/verbs,
# docs/verbs.md): the conformance suite, a device's known failures left out.
# Runs as any user once the VM's packages are there (the stage above).
if [ "${OPENND_SKIP_INTEROP:-0}" != 1 ] && [ -x "$runvm" ]; then
  vm_stage "the verbs provider in a VM (ndconformance on rxe, and its passing groups on siw)" verbs \
    tests/verbs/vm_conformance.sh build
  vm_stage "the link going down under ND connections on siw in a VM (Disconnect.LinkDownUnderAConnection)" \
    verbs-faults tests/verbs/vm_conformance.sh build --device siw --fault-link --filter '*LinkDown*'
  vm_stage "ND code against verbs code on one device in a VM (ndrping <-> rping, ndrping --bulk <-> verbs_bulk, ndksmbd over NDK; rxe, siw)" \
    verbs-interop tests/verbs/vm_interop.sh build
else
  step "the verbs provider in a VM: skipped (OPENND_SKIP_INTEROP=1 or no $runvm)"
fi

echo
echo "all test stages passed"
