#!/usr/bin/env bash
# The main job: install what is missing, build, and run a real ND ping-pong
# (and bandwidth) between two processes over the software provider.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target ndperf ndinfo ndsoft
echo
build/bin/ndinfo | sed -n '1,12p'
echo
echo "ND ping-pong and bandwidth between two processes (ndperf --local):"
build/bin/ndperf --local -t send_lat,write_lat,read_lat,send_bw,write_bw,read_bw -S 8,4096,1M "$@"
