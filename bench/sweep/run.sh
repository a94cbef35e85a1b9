#!/usr/bin/env bash
# A full latency-vs-throughput sweep through a real `kbench serve` (SQLite
# in a fresh data directory, runs on the embedded broker): POST
# /api/presets/sweep, wait for both phases, print each configuration's
# maximum rate and the table of points (target %, target and achieved
# records/s, p50/p99/p99.9 ms, run). Not run by the tests. See
# bench/README.md.
#
#   bash bench/sweep/run.sh                           # e2e linger.ms=0 vs 5, 10 s runs, 3 repetitions
#   DURATION=2 REPS=1 RATES='[25,50,100]' bash bench/sweep/run.sh   # quick
#   CONFIGS='[{"label":"trunk","params":{"workload":"producer","duration":10,"profile":["none"]}}]' bash bench/sweep/run.sh
#
# Environment:
#   DURATION  seconds of each run (default 10), for the default CONFIGS
#   SIZE      record size (default 100), for the default CONFIGS
#   CONFIGS   the request's "configs" (JSON); default: e2e at linger.ms=0 and 5
#   RATES     the request's "rates_pct" (JSON; default: the preset's 10…110)
#   REPS      repetitions (default 3)
#   PORT      the server's loopback port (default: a free one)
#   OUT       output directory (default bench/out/sweep-<UTC time>)
#   KBENCH_BIN  measure this prebuilt kbench binary instead of building the work tree's
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

DURATION=${DURATION:-10}
SIZE=${SIZE:-100}
REPS=${REPS:-3}
RATES=${RATES:-null}
CONFIGS=${CONFIGS:-"[{\"label\":\"linger0\",\"params\":{\"workload\":\"e2e\",\"duration\":$DURATION,\"record-size\":$SIZE,\"producer-props\":{\"linger.ms\":\"0\"},\"profile\":[\"none\"]}},{\"label\":\"linger5\",\"params\":{\"workload\":\"e2e\",\"duration\":$DURATION,\"record-size\":$SIZE,\"producer-props\":{\"linger.ms\":\"5\"},\"profile\":[\"none\"]}}]"}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/bench/out/sweep-$STAMP}
mkdir -p "$OUT"

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
for c in jq curl; do command -v "$c" >/dev/null || { echo "sweep/run.sh: needs $c" >&2; exit 2; }; done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kbench-sweep.XXXXXX")
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -INT "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "building kbench into $WORK"
if [ -n "${KBENCH_BIN:-}" ]; then cp "$KBENCH_BIN" "$WORK/kbench"; else go build -o "$WORK/kbench" .; fi
PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
URL=http://127.0.0.1:$PORT
"$WORK/kbench" serve --listen "127.0.0.1:$PORT" --data "$WORK/data" >"$OUT/serve.out" 2>"$OUT/serve.err" &
SERVER_PID=$!
for _ in $(seq 1 100); do
  curl -fsS -o /dev/null "$URL/sweeps" 2>/dev/null && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$OUT/serve.err" >&2; exit 1; }
  sleep 0.2
done

BODY=$(jq -cn --argjson configs "$CONFIGS" --argjson rates "$RATES" --argjson reps "$REPS" \
  '{configs: $configs, repetitions: $reps} + (if $rates == null then {} else {rates_pct: $rates} end)')
echo "$BODY" >"$OUT/request.json"
ANSWER=$(curl -sS -X POST -H 'Content-Type: application/json' --data "$BODY" "$URL/api/presets/sweep")
ID=$(echo "$ANSWER" | jq -r '.sweep // empty')
[ -n "$ID" ] || { echo "sweep/run.sh: refused: $ANSWER" >&2; exit 1; }
log "sweep $ID: $URL/sweeps/$ID"

# Both phases: at most 6 hours (a sweep of 20 rates × 10 repetitions of long runs fits).
deadline=$(( $(date +%s) + 6 * 3600 ))
while :; do
  curl -fsS "$URL/api/sweeps/$ID" >"$OUT/sweep.json"
  phase=$(jq -r .phase "$OUT/sweep.json")
  left=$(jq '[.runs[] | select(.status | IN("succeeded","failed","canceled","interrupted") | not)] | length' "$OUT/sweep.json")
  if [ "$phase" != max-rate ] && [ "$left" -eq 0 ]; then break; fi
  [ "$(date +%s)" -lt "$deadline" ] || { echo "sweep/run.sh: still unfinished after 6 h" >&2; exit 1; }
  log "phase $phase: $left runs unfinished"
  sleep 5
done

{
  echo "kbench sweep $STAMP ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)); $(nproc) cores"
  echo "request: $BODY"
  echo
  echo "maximum rates (median of the unthrottled runs):"
  jq -r '.configs[] | "  \(.label) (\(.workload)): \(.max_rate.records_per_sec // 0 | floor) records/s from \(.max_rate.runs // 0) runs\(if .max_rate.note then " — " + .max_rate.note else "" end); achieved = \(.metrics.throughput), latency = \(.metrics.p50)/\(.metrics.p99)/\(.metrics.p999)"' "$OUT/sweep.json"
  echo
  printf '%-10s %7s %12s %12s %10s %10s %10s %6s\n' label "rate%" "target/s" "achieved/s" "p50 ms" "p99 ms" "p99.9 ms" run
  jq -r '.points | sort_by(.label, .rate_pct) | .[] | [.label, .rate_pct, .target_rate, .records_per_sec, .p50_ms, .p99_ms, .p999_ms, .run] | @tsv' "$OUT/sweep.json" |
    awk -F'\t' '{printf "%-10s %7s %12.0f %12.0f %10.3f %10.3f %10.3f %6s\n", $1, $2, $3, $4, $5, $6, $7, $8}'
  failed=$(jq '[.runs[] | select(.status != "succeeded")] | length' "$OUT/sweep.json")
  echo
  echo "runs: $(jq '.runs | length' "$OUT/sweep.json"), not succeeded: $failed"
} | tee "$OUT/report.txt"
log "report: $OUT/report.txt"
