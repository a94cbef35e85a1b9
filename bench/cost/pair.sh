#!/usr/bin/env bash
# CPU per record of two producer configurations, paired by round: client
# CPU seconds per million records of `kbench run producer --mode raw`
# (timed, throttled runs against ONE `kbench broker` process), side A
# against side B, each side its own binary and flags. bench/cost/windows.sh
# (--profile-windows on against off) and bench/cost/histograms.sh (a
# commit against the one before) are made of it. See bench/README.md,
# "CPU profile windows" and "Whole histograms".
#
# Environment:
#   A_NAME, B_NAME   the sides' names (default a, b)
#   A_BIN, B_BIN     the sides' kbench binaries (required; the broker is B's)
#   A_ARGS, B_ARGS   extra flags of each side's runs (word-split)
#   TITLE            the report's first line
#   ROUNDS           rounds (default 15); each side runs once per round
#   DURATION         seconds per run (default 12)
#   THROUGHPUT       records/s of every run (default 100000, below what the
#                    broker sustains here when the machine is busy; -1: no
#                    limit). Unthrottled runs moved 6x in rate between
#                    rounds, which moves the CPU a record costs (batch sizes)
#                    more than what is measured.
#   PAIRING          concurrent (default: both sides of a round at once,
#                    against the same broker, the one started first
#                    alternating: on a shared machine whose load moves within
#                    minutes they meet the same contention, which narrows the
#                    per-round ratios) or interleaved (one after the other,
#                    the order alternating)
#   SIZE             record size in bytes (default 256)
#   TARGET           the ratio A/B the report compares with (default 1.03)
#   OUT              output directory (default bench/out/cost-<A>-<B>-<UTC time>)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

A_NAME=${A_NAME:-a}
B_NAME=${B_NAME:-b}
: "${A_BIN:?A_BIN: side A's kbench binary}" "${B_BIN:?B_BIN: side B's kbench binary}"
A_ARGS=${A_ARGS:-}
B_ARGS=${B_ARGS:-}
TITLE=${TITLE:-"kbench CPU per record: $A_NAME against $B_NAME"}
ROUNDS=${ROUNDS:-15}
DURATION=${DURATION:-12}
THROUGHPUT=${THROUGHPUT:-100000}
PAIRING=${PAIRING:-concurrent}
case "$PAIRING" in interleaved|concurrent) ;; *) echo "cost/pair.sh: PAIRING is interleaved or concurrent, not $PAIRING" >&2; exit 2 ;; esac
SIZE=${SIZE:-256}
TARGET=${TARGET:-1.03}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/bench/out/cost-$A_NAME-$B_NAME-$STAMP}
RUNS=$OUT/runs.jsonl
PRODUCER_PROPS=(batch.size=1048576 linger.ms=10 max.in.flight.requests.per.connection=1)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kbench-cost-pair.XXXXXX")
# shellcheck source=bench/lib/broker.sh
. "$ROOT/bench/lib/broker.sh"
cleanup() {
  stop_broker
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

cp "$A_BIN" "$WORK/kbench-a"
cp "$B_BIN" "$WORK/kbench-b"
mkdir -p "$OUT/runs"
: >"$RUNS"

start_broker "$WORK/kbench-b" "$WORK" "$OUT/broker.err"

{
  echo "$TITLE $STAMP"
  echo "$A_NAME: $A_BIN $A_ARGS"
  echo "$B_NAME: $B_BIN $B_ARGS"
  echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(go version | cut -d' ' -f3-)"
  echo "rounds: $ROUNDS; producer --mode raw --duration $DURATION --throughput $THROUGHPUT, $SIZE B records, $PAIRING"
  echo "figure: process CPU (user + system) over the measured window / records measured × 1e6"
} | tee "$OUT/header.txt"

# run SIDE ROUND: one producer run of side a or b.
run() {
  local side=$1 round=$2 name bin args
  if [ "$side" = a ]; then name=$A_NAME bin=$WORK/kbench-a args=$A_ARGS; else name=$B_NAME bin=$WORK/kbench-b args=$B_ARGS; fi
  local run="produce-$name-r$round"
  log "round $round: $name"
  # shellcheck disable=SC2086 # the side's flags are word-split on purpose
  "$bin" run producer --bootstrap-server "$ADDR" --topic "cost-$run" --duration "$DURATION" \
    --throughput "$THROUGHPUT" --record-size "$SIZE" --partitions 1 --mode raw $args \
    --out "$OUT/runs/$run" --producer-props "${PRODUCER_PROPS[@]}" >"$OUT/runs/$run.log" 2>&1 \
    || { tail -5 "$OUT/runs/$run.log" >&2; exit 1; }
  # The histogram log beside result.json, 0 bytes for a build without one.
  local hlog=0
  [ -f "$OUT/runs/$run/histograms.hlog" ] && hlog=$(stat -c %s "$OUT/runs/$run/histograms.hlog")
  jq -c --arg side "$side" --argjson round "$round" --argjson bytes "$(stat -c %s "$OUT/runs/$run/result.json")" --argjson hlog "$hlog" '{side:$side, round:$round,
    records:(.metrics[] | select(.name == "records-sent") | .value),
    cpu_seconds:(.metrics[] | select(.name == "process-cpu-seconds") | .value),
    result_bytes:$bytes, hlog_bytes:$hlog}' "$OUT/runs/$run/result.json" >>"$RUNS"
  rm -f "$OUT/runs/$run"/*.pb.gz
}

for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then first=a second=b; else first=b second=a; fi
  if [ "$PAIRING" = concurrent ]; then
    run "$first" "$r" & p1=$!
    run "$second" "$r" & p2=$!
    wait "$p1" || exit 1
    wait "$p2" || exit 1
  else
    run "$first" "$r"
    run "$second" "$r"
  fi
done

jq -rs --arg a "$A_NAME" --arg b "$B_NAME" --arg target "$TARGET" '
  def median: sort | if length == 0 then null elif length % 2 == 1 then .[length/2|floor]
    else (.[length/2 - 1] + .[length/2]) / 2 end;
  def r4: . * 10000 | round / 10000;
  def per: .cpu_seconds / .records * 1e6;
  . as $all
  | (map(select(.side == "a")) | map(per) | median) as $on
  | (map(select(.side == "b")) | map(per) | median) as $off
  | ([$all[] | select(.side == "a") as $x | ($all[] | select(.side == "b" and .round == $x.round)) as $y
      | ($x | per) / ($y | per)] | sort) as $ratios
  | "cpu s / 1e6 records, median of \(map(select(.side == "a")) | length) runs a side: \($a) \($on | r4), \($b) \($off | r4)",
    "ratio \($a)/\($b): \(($on / $off) | r4) of the medians, \($ratios | median | r4) median per round (target <= \($target)); per-round min–max \($ratios[0] | r4)–\($ratios[-1] | r4)",
    "result.json bytes, medians: \($a) \(map(select(.side == "a")) | map(.result_bytes) | median), \($b) \(map(select(.side == "b")) | map(.result_bytes) | median)",
    "histograms.hlog bytes, medians: \($a) \(map(select(.side == "a")) | map(.hlog_bytes // 0) | median), \($b) \(map(select(.side == "b")) | map(.hlog_bytes // 0) | median)"' \
  "$RUNS" | tee "$OUT/summary.txt"
cat "$OUT/header.txt" "$OUT/summary.txt" >"$OUT/report.txt"
log "raw runs: $RUNS; report: $OUT/report.txt"
