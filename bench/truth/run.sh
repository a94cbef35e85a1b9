#!/usr/bin/env bash
# Truth suite: re-measures what kbench reports, independently, from outside
# the run's process (broker high watermarks and committed offsets, a
# watermark poller, a /proc CPU sampler, /proc/PID/io, strace) and counts
# false flags between identical configurations through `kbench serve`'s
# API. See bench/README.md, "Truth suite".
#
#   bash bench/truth/run.sh                          # defaults, a few minutes
#   bash bench/truth/run.sh -only counts,syscalls    # some areas only
#   FF_N=10 FF_BATCHES=8 bash bench/truth/run.sh     # more identical-config comparisons
#   bash bench/truth/run.sh -raw-records 3000000 -wp-requests 100000   # longer runs
#
# Environment:
#   OUT          raw results (default bench/out/truth-<UTC time>); the
#                Markdown summary goes beside it, OUT.md
#   KBENCH_BIN   check this prebuilt kbench binary instead of building the
#                work tree's (built without -race either way)
#   STRACE       auto (default: trace when strace is there; as root, install
#                it with apt-get first), on (fail without it) or off
#   FF_N         runs per side of each identical-config comparison (default 5)
#   FF_BATCHES   identical-config comparisons (default 4)
# Other flags of bench/truth (after the script's arguments): run
# `go run ./bench/truth -h`.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/bench/out/truth-$STAMP}
STRACE=${STRACE:-auto}
FF_N=${FF_N:-5}
FF_BATCHES=${FF_BATCHES:-4}

WORK=$(mktemp -d -t kbench-truth.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [ "$STRACE" != off ] && ! command -v strace >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing strace with apt-get"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >"$WORK/apt.log" 2>&1; then
      log "apt-get install strace failed (see below); the strace checks will say skipped"
      tail -3 "$WORK/apt.log" >&2 || true
    fi
  else
    log "strace is not installed and this is not root with apt-get: the strace checks will say skipped"
  fi
fi

log "building kbench (no -race) and the suite into $WORK"
if [ -n "${KBENCH_BIN:-}" ]; then
  cp "$KBENCH_BIN" "$WORK/kbench"
  DESC="$KBENCH_BIN"
else
  go build -o "$WORK/kbench" .
  DESC="built from the work tree at $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- . 2>/dev/null || echo ' with local changes'), $(go version | cut -d' ' -f3)"
fi
go build -o "$WORK/truth" ./bench/truth

CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
CMD="bash bench/truth/run.sh${*:+ $*}"
[ "$FF_N" != 5 ] && CMD="FF_N=$FF_N $CMD"
[ "$FF_BATCHES" != 4 ] && CMD="FF_BATCHES=$FF_BATCHES $CMD"
[ "$STRACE" != auto ] && CMD="STRACE=$STRACE $CMD"

mkdir -p "$OUT"
"$WORK/truth" -kbench "$WORK/kbench" -out "$OUT" -summary "$OUT.md" -kbench-desc "$DESC" -command "$CMD" \
  -clk-tck "$CLK_TCK" -strace "$STRACE" -ff-n "$FF_N" -ff-batches "$FF_BATCHES" "$@" | tee "$OUT/checks.txt"
log "runs in $OUT; summary $OUT.md"
