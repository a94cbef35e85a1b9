#!/usr/bin/env bash
# What --profile-windows costs: client CPU seconds per million records of
# `kbench run producer --mode raw --profile cpu` with the CPU profile in
# windows (--profile-windows on) against one profile of the whole window
# (--profile-windows off), paired by round (PAIRING), over ROUNDS rounds,
# against ONE `kbench broker` process. Runs are timed (--duration), so each holds
# several windows, and throttled (--throughput): the broker shares the
# machine's cores, and unthrottled runs moved 6x in rate between rounds,
# which moves the CPU a record costs (batch sizes) more than the profiler
# does. See bench/README.md, section "CPU profile windows".
#
#   bash bench/cost/windows.sh                 # 15 rounds of 12 s runs, both sides at once
#   PAIRING=interleaved bash bench/cost/windows.sh
#   ROUNDS=3 DURATION=6 bash bench/cost/windows.sh
#
# Environment:
#   ROUNDS     rounds (default 15); each side runs once per round
#   DURATION   seconds per run (default 12: six 2 s windows)
#   THROUGHPUT records/s of every run (default 100000, below what the
#              broker sustains here when the machine is busy; -1: no limit)
#   PAIRING    concurrent (default: both sides of a round at once, against
#              the same broker, the one started first alternating: on a
#              shared machine whose load moves within minutes they meet the
#              same contention, which narrows the per-round ratios) or
#              interleaved (one after the other, the order alternating)
#   SIZE       record size in bytes (default 256)
#   OUT        output directory (default bench/out/cost-windows-<UTC time>)
#   KBENCH_BIN measure this prebuilt kbench binary instead of building the
#              work tree's
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

ROUNDS=${ROUNDS:-15}
DURATION=${DURATION:-12}
THROUGHPUT=${THROUGHPUT:-100000}
PAIRING=${PAIRING:-concurrent}
case "$PAIRING" in interleaved|concurrent) ;; *) echo "cost/windows.sh: PAIRING is interleaved or concurrent, not $PAIRING" >&2; exit 2 ;; esac
SIZE=${SIZE:-256}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/bench/out/cost-windows-$STAMP}
RUNS=$OUT/runs.jsonl
PRODUCER_PROPS=(batch.size=1048576 linger.ms=10 max.in.flight.requests.per.connection=1)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kbench-cost-windows.XXXXXX")
BROKER_PID=""
cleanup() {
  if [ -n "$BROKER_PID" ] && kill -0 "$BROKER_PID" 2>/dev/null; then
    kill -TERM "$BROKER_PID" 2>/dev/null || true
    wait "$BROKER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [ -n "${KBENCH_BIN:-}" ]; then
  cp "$KBENCH_BIN" "$WORK/kbench"
else
  go build -o "$WORK/kbench" .
fi
mkdir -p "$OUT/runs"
: >"$RUNS"

"$WORK/kbench" broker --listen 127.0.0.1:0 >"$WORK/broker.out" 2>"$OUT/broker.err" &
BROKER_PID=$!
ADDR=""
for _ in $(seq 1 100); do
  ADDR=$(sed -n 's/^kbench broker listening on //p' "$WORK/broker.out" 2>/dev/null || true)
  [ -n "$ADDR" ] && break
  kill -0 "$BROKER_PID" 2>/dev/null || { cat "$OUT/broker.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$ADDR" ] || { echo "cost/windows.sh: broker did not start" >&2; exit 1; }

{
  echo "kbench --profile-windows cost $STAMP"
  echo "kbench: ${KBENCH_BIN:-built from $ROOT ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown))}"
  echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(go version | cut -d' ' -f3-)"
  echo "rounds: $ROUNDS; producer --mode raw --duration $DURATION --throughput $THROUGHPUT, $SIZE B records, --profile cpu, --profile-windows on vs off, $PAIRING"
  echo "figure: process CPU (user + system) over the measured window / records measured × 1e6"
} | tee "$OUT/header.txt"

# run SIDE ROUND: one producer run with --profile-windows SIDE.
run() {
  local side=$1 round=$2 name="produce-$1-r$2" topic="cost-windows-$1-r$2"
  log "round $round: --profile-windows $side"
  "$WORK/kbench" run producer --bootstrap-server "$ADDR" --topic "$topic" --duration "$DURATION" \
    --throughput "$THROUGHPUT" --record-size "$SIZE" --partitions 1 --mode raw --profile cpu --profile-windows "$side" \
    --out "$OUT/runs/$name" --producer-props "${PRODUCER_PROPS[@]}" >"$OUT/runs/$name.log" 2>&1 \
    || { tail -5 "$OUT/runs/$name.log" >&2; exit 1; }
  jq -c --arg side "$side" --argjson round "$round" '{side:$side, round:$round,
    records:(.metrics[] | select(.name == "records-sent") | .value),
    cpu_seconds:(.metrics[] | select(.name == "process-cpu-seconds") | .value)}' \
    "$OUT/runs/$name/result.json" >>"$RUNS"
  rm -f "$OUT/runs/$name"/*.pb.gz
}

for r in $(seq 1 "$ROUNDS"); do
  if [ "$PAIRING" = concurrent ]; then
    # Both at once; the one started first alternates.
    if [ $((r % 2)) = 1 ]; then first=on second=off; else first=off second=on; fi
    run "$first" "$r" & p1=$!
    run "$second" "$r" & p2=$!
    wait "$p1" || exit 1
    wait "$p2" || exit 1
  elif [ $((r % 2)) = 1 ]; then run on "$r"; run off "$r"; else run off "$r"; run on "$r"; fi
done

jq -rs '
  def median: sort | if length == 0 then null elif length % 2 == 1 then .[length/2|floor]
    else (.[length/2 - 1] + .[length/2]) / 2 end;
  def r4: . * 10000 | round / 10000;
  def per: .cpu_seconds / .records * 1e6;
  . as $all
  | (map(select(.side == "on")) | map(per) | median) as $on
  | (map(select(.side == "off")) | map(per) | median) as $off
  | ([$all[] | select(.side == "on") as $a | ($all[] | select(.side == "off" and .round == $a.round)) as $b
      | ($a | per) / ($b | per)] | median) as $perRound
  | "cpu s / 1e6 records, median of \(map(select(.side == "on")) | length) runs a side: on \($on | r4), off \($off | r4)",
    "ratio on/off: \(($on / $off) | r4) of the medians, \($perRound | r4) median per round (target <= 1.03)"' \
  "$RUNS" | tee "$OUT/summary.txt"
cat "$OUT/header.txt" "$OUT/summary.txt" >"$OUT/report.txt"
log "raw runs: $RUNS; report: $OUT/report.txt"
