#!/usr/bin/env bash
# What keeping every latency's whole histogram costs (issue 26): the
# window's in result.json, the 1 s intervals in histograms.hlog and the
# series points' percentiles. Client CPU seconds per million records and
# the bytes of result.json and histograms.hlog of a throttled
# `kbench run producer --mode raw --profile none` built from HEAD against
# the same built from BASE (default: the commit before the runner kept
# histograms in result.json), paired by round through bench/cost/pair.sh
# (its environment applies: ROUNDS, DURATION, THROUGHPUT, PAIRING, SIZE,
# OUT). Merge time: go test -run - -bench DecodeMerge100 ./internal/hdr.
# See bench/README.md, section "Whole histograms".
#
#   bash bench/cost/histograms.sh
#   BASE=abc1234 ROUNDS=5 bash bench/cost/histograms.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
# The commit that made the runner keep histograms, and so the one before.
KEEP=$(git log --format=%h -1 --grep='every latency a run measures goes to result.json whole')
BASE=${BASE:-${KEEP:+$KEEP~1}}
[ -n "$BASE" ] || { echo "cost/histograms.sh: no BASE commit (give BASE=REV)" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kbench-cost-hist.XXXXXX")
cleanup() { git worktree remove --force "$WORK/base" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
git worktree add -q --detach "$WORK/base" "$BASE"
(cd "$WORK/base" && go build -o "$WORK/kbench-base" .)
go build -o "$WORK/kbench-head" .
A_NAME=histograms A_BIN=$WORK/kbench-head A_ARGS="--profile none" \
B_NAME=before B_BIN=$WORK/kbench-base B_ARGS="--profile none" \
TITLE="kbench: whole and interval histograms ($(git rev-parse --short HEAD)) against $(git rev-parse --short "$BASE")" \
OUT=${OUT:-$ROOT/bench/out/cost-histograms-$(date -u +%Y%m%dT%H%M%SZ)} \
  bash bench/cost/pair.sh
