#!/usr/bin/env bash
# What --profile-windows costs: client CPU seconds per million records of
# `kbench run producer --mode raw --profile cpu` with the CPU profile in
# windows (--profile-windows on) against one profile of the whole window
# (--profile-windows off), paired by round, through bench/cost/pair.sh
# (throttled, timed runs of six 2 s windows; its environment applies:
# ROUNDS, DURATION, THROUGHPUT, PAIRING, SIZE, OUT). See bench/README.md,
# section "CPU profile windows".
#
#   bash bench/cost/windows.sh                 # 15 rounds of 12 s runs, both sides at once
#   PAIRING=interleaved bash bench/cost/windows.sh
#   ROUNDS=3 DURATION=6 bash bench/cost/windows.sh
#
#   KBENCH_BIN   measure this prebuilt kbench binary instead of building
#                the work tree's
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kbench-cost-windows.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
bin=${KBENCH_BIN:-}
if [ -z "$bin" ]; then
  bin=$WORK/kbench
  go build -o "$bin" .
fi
A_NAME=on A_BIN=$bin A_ARGS="--profile cpu --profile-windows on" \
B_NAME=off B_BIN=$bin B_ARGS="--profile cpu --profile-windows off" \
TITLE="kbench --profile-windows cost ($(git rev-parse --short HEAD 2>/dev/null || echo unknown))" \
OUT=${OUT:-$ROOT/bench/out/cost-windows-$(date -u +%Y%m%dT%H%M%SZ)} \
  bash bench/cost/pair.sh
