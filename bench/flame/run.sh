#!/usr/bin/env bash
# Flame-graph benchmark: kbench's flame graph against `go tool pprof -http`'s
# flame graph page, for the large public CPU profile and the Java collapsed
# stacks, in headless Chromium; then the embedded pprof UI's memory.
#
#   bash bench/flame/run.sh                       # 15 rounds, 20 variants
#   ROUNDS=3 VARIANTS=0 TRACE=0 bash bench/flame/run.sh   # quick look
#   KBENCH_BIN=/path/to/kbench bash bench/flame/run.sh    # a prebuilt candidate
#   bash bench/flame/run.sh -page DIR -page DIR2          # saved pages as well (pages.py)
#
# Everything listens on 127.0.0.1; see bench/README.md ("Flame graphs").
set -euo pipefail
cd "$(dirname "$0")/../.."

ROUNDS=${ROUNDS:-15}
VARIANTS=${VARIANTS:-20}
MODES=${MODES:-warm,cold}
TRACE=${TRACE:-1}
INPUTS=${INPUTS:-../shared/public-data/pprof-large-cpu.pb.gz,../shared/public-data/java-netty-collapsed.txt}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
OUT=${OUT:-bench/flame/out/$(date -u +%Y%m%dT%H%M%SZ)}
KBENCH_BIN=${KBENCH_BIN:-}

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing chromium"
    apt-get install -y chromium >/dev/null
  else
    log "FAILED: no Chromium at $CHROMIUM (apt-get install -y chromium)"
    exit 1
  fi
fi

TMP=$(mktemp -d -t kbench-flame-run.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [ -z "$KBENCH_BIN" ]; then
  log "building kbench"
  go build -o "$TMP/kbench" .
  KBENCH_BIN=$TMP/kbench
fi
log "building the benchmark"
go build -o "$TMP/flame" ./bench/flame

trace=true
[ "$TRACE" = 1 ] || trace=false
mkdir -p "$OUT"
log "results in $OUT"
"$TMP/flame" -kbench "$KBENCH_BIN" -chromium "$CHROMIUM" -rounds "$ROUNDS" -variants "$VARIANTS" \
  -modes "$MODES" -trace="$trace" -inputs "$INPUTS" -out "$OUT" "$@"
