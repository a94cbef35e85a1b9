#!/usr/bin/env bash
# The instrument's own added latency: `kbench run e2e` in rate mode at a
# low rate with linger.ms=0 against kgopeer's e2e (a franz-go kgo producer
# at the same fixed rate and a kgo consumer in the same process, same
# record size, latency from send to receipt), both on ONE `kbench broker`
# process, interleaved over ROUNDS rounds (odd rounds kbench first). It
# prints each run, then the medians of p50 and p99 per client and the
# ratios kbench ÷ kgo. See bench/README.md.
#
#   bash bench/e2e/run.sh                    # 5 rounds of 5,000 records at 1,000/s
#   ROUNDS=7 RATE=500 N=3000 bash bench/e2e/run.sh
#
# Environment:
#   ROUNDS   rounds (default 5); each runs both clients once
#   RATE     records/s (default 1000)
#   N        records per run (default 5000)
#   SIZE     bytes per record (default 100)
#   OUT      output directory (default bench/out/e2e-<UTC time>)
#   KBENCH_BIN  measure this prebuilt kbench binary instead of building the work tree's
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

ROUNDS=${ROUNDS:-5}
RATE=${RATE:-1000}
N=${N:-5000}
SIZE=${SIZE:-100}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/bench/out/e2e-$STAMP}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kbench-e2e.XXXXXX")
# shellcheck source=bench/lib/broker.sh
. "$ROOT/bench/lib/broker.sh"
cleanup() {
  stop_broker
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
command -v jq >/dev/null || { echo "e2e/run.sh: needs jq" >&2; exit 2; }

log "building kbench and kgopeer into $WORK"
if [ -n "${KBENCH_BIN:-}" ]; then
  cp "$KBENCH_BIN" "$WORK/kbench"
else
  go build -o "$WORK/kbench" .
fi
go build -o "$WORK/kgopeer" ./bench/kgopeer
KBENCH=$WORK/kbench
PEER=$WORK/kgopeer
mkdir -p "$OUT/runs"

start_broker "$KBENCH" "$WORK" "$OUT/broker.err"

{
  echo "kbench e2e added latency $STAMP"
  echo "kbench: ${KBENCH_BIN:-built from $ROOT ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown))}"
  echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(go version | cut -d' ' -f3-)"
  echo "broker: one \`kbench broker\` process (kfake, in RAM) at $ADDR; 1 partition, a new topic per run"
  echo "load: $N records of $SIZE B at $RATE records/s, linger 0, acks=all, no compression; rounds: $ROUNDS, interleaved (odd rounds kbench first)"
  echo "kbench: run e2e --throughput $RATE --producer-props linger.ms=0 (rate mode: raw producer + one kafka-go Conn per partition, fetch.min.bytes=1, fetch.max.wait.ms=500)"
  echo "kgo:    kgopeer e2e --throughput $RATE --linger 0 (kgo producer + kgo consumer in one process, FetchMinBytes 1, FetchMaxWait 500ms; one warm-up record)"
} | tee "$OUT/header.txt"

# Each run appends "client round p50 p99 p999 records/s" to $OUT/runs.txt.
: >"$OUT/runs.txt"
kbench_run() {
  local r=$1 name="kbench-r$1"
  log "round $r: kbench"
  "$KBENCH" run e2e --bootstrap-server "$ADDR" --topic "e2e-kbench-r$r" --throughput "$RATE" --num-records "$N" \
    --record-size "$SIZE" --producer-props linger.ms=0 --profile none --out "$OUT/runs/$name" \
    >"$OUT/runs/$name.log" 2>&1 || { tail -5 "$OUT/runs/$name.log" >&2; exit 1; }
  jq -r --arg r "$r" '[.metrics[] | {(.name): .value}] | add |
    "kbench \($r) \(."e2e-latency-p50") \(."e2e-latency-p99") \(."e2e-latency-p999") \(."consume-rate")"' \
    "$OUT/runs/$name/result.json" >>"$OUT/runs.txt"
  "$PEER" delete-topic --brokers "$ADDR" --topic "e2e-kbench-r$r"
}
kgo_run() {
  local r=$1 name="kgo-r$1"
  log "round $r: kgo"
  "$PEER" e2e --brokers "$ADDR" --topic "e2e-kgo-r$r" --throughput "$RATE" --num-records "$N" \
    --record-size "$SIZE" --linger 0 >"$OUT/runs/$name.json" 2>"$OUT/runs/$name.log" \
    || { tail -5 "$OUT/runs/$name.log" >&2; exit 1; }
  jq -r --arg r "$r" '"kgo \($r) \(.p50_ms) \(.p99_ms) \(.p999_ms) \(.records_per_sec)"' "$OUT/runs/$name.json" >>"$OUT/runs.txt"
  "$PEER" delete-topic --brokers "$ADDR" --topic "e2e-kgo-r$r"
}

for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then kbench_run "$r"; kgo_run "$r"; else kgo_run "$r"; kbench_run "$r"; fi
done

# Medians per client (the middle value, or the mean of the two middle ones).
median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
col() { awk -v c="$1" -v k="$2" '$1==c {print $k}' "$OUT/runs.txt" | median; }
{
  echo
  echo "runs (ms; records/s):"
  awk '{printf "  %-6s round %-2s p50 %8.3f  p99 %8.3f  p99.9 %8.3f  %8.1f records/s\n", $1, $2, $3, $4, $5, $6}' "$OUT/runs.txt"
  kp50=$(col kbench 3) kp99=$(col kbench 4) gp50=$(col kgo 3) gp99=$(col kgo 4)
  echo
  printf "medians of %s rounds   %10s %10s %14s\n" "$ROUNDS" kbench kgo "kbench ÷ kgo"
  printf "  e2e p50 (ms)          %10.3f %10.3f %14.2f\n" "$kp50" "$gp50" "$(awk -v a="$kp50" -v b="$gp50" 'BEGIN {print a/b}')"
  printf "  e2e p99 (ms)          %10.3f %10.3f %14.2f\n" "$kp99" "$gp99" "$(awk -v a="$kp99" -v b="$gp99" 'BEGIN {print a/b}')"
} | tee "$OUT/summary.txt"
cat "$OUT/header.txt" "$OUT/summary.txt" >"$OUT/report.txt"
log "report: $OUT/report.txt"
