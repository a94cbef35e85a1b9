#!/usr/bin/env bash
# The instrument's own cost: client CPU seconds per million records of
# `kbench run producer --mode raw` and `kbench run consumer --mode assign`
# against franz-go's kgo producer and consumer (bench/kgopeer), all against
# ONE `kbench broker` process, interleaved, over ROUNDS rounds. Each side's
# figure is its process CPU time (user + system, getrusage) over its
# measured window divided by the records it measured, × 1e6. See
# bench/README.md, section "Instrument cost".
#
#   bash bench/cost/run.sh                      # 5 rounds
#   ROUNDS=7 N=500000 bash bench/cost/run.sh
#   KBENCH_BASE=/path/to/old/kbench bash bench/cost/run.sh   # before/after in one run
#
# Environment:
#   ROUNDS       rounds (default 5); every side runs once per case per round
#   N            records per producer run and per consumer run (default 1000000)
#   SIZE         record size in bytes (default 256)
#   OUT          output directory (default bench/out/cost-<UTC time>)
#   KBENCH_BIN   measure this prebuilt kbench binary instead of building the
#                work tree's
#   KBENCH_BASE  a second kbench binary (e.g. built from an older commit),
#                measured as side "base" in the same rounds
#   PROFILE      1 (default) to capture, after the rounds, one CPU profile of
#                each side of each case (kbench --profile cpu, kgopeer
#                --cpuprofile) and print their top functions; 0 to skip
#   PROFILE_N    records per profiled run (default 3 × N, for more samples;
#                kbench's consumer run tops the topic up first, unmeasured)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

ROUNDS=${ROUNDS:-5}
N=${N:-1000000}
SIZE=${SIZE:-256}
PROFILE=${PROFILE:-1}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/bench/out/cost-$STAMP}
RUNS=$OUT/runs.jsonl

# The same settings as bench/compare.sh's matched producer and consumer.
PRODUCER_PROPS=(batch.size=1048576 linger.ms=10 max.in.flight.requests.per.connection=1)
PRODUCE_DESC_KBENCH="kbench run producer --mode raw: acks=all, 1 partition, batch.size=1048576, linger.ms=10, compression none, buffer.memory 32 MiB, 1 request in flight, --profile none"
PRODUCE_DESC_KGO="kgo: acks=all, 1 partition, ProducerBatchMaxBytes 1048576, ProducerLinger 10ms, no compression, idempotence off, 1 request in flight, MaxBufferedBytes 32 MiB"
CONSUME_DESC_KBENCH="kbench run consumer --mode assign: a kafka-go Conn per partition, ReadBatch min 1 B, max 1 MiB, max wait 500 ms, --profile none"
CONSUME_DESC_KGO="kgo consumer: ConsumeTopics + ConsumeResetOffset(start), no group, FetchMinBytes 1, FetchMaxWait 500ms, FetchMaxPartitionBytes 1 MiB, FetchMaxBytes 1 MiB"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kbench-cost.XXXXXX")
# shellcheck source=bench/lib/broker.sh
. "$ROOT/bench/lib/broker.sh"
cleanup() {
  stop_broker
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

log "building kbench and kgopeer into $WORK"
if [ -n "${KBENCH_BIN:-}" ]; then
  cp "$KBENCH_BIN" "$WORK/kbench"
else
  go build -o "$WORK/kbench" .
fi
go build -o "$WORK/kgopeer" ./bench/kgopeer
SIDES=(kbench kgo)
if [ -n "${KBENCH_BASE:-}" ]; then
  cp "$KBENCH_BASE" "$WORK/kbench-base"
  SIDES=(kbench kgo base)
fi
PEER=$WORK/kgopeer

mkdir -p "$OUT/runs"
: >"$RUNS"

start_broker "$WORK/kbench" "$WORK" "$OUT/broker.err"
log "broker pid $BROKER_PID at $ADDR"

{
  echo "kbench instrument cost $STAMP"
  echo "kbench: ${KBENCH_BIN:-built from $ROOT ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD -- . 2>/dev/null || echo ', with uncommitted changes'))}"
  [ -n "${KBENCH_BASE:-}" ] && echo "base:   $KBENCH_BASE"
  echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(go version | cut -d' ' -f3-)"
  echo "broker: one \`kbench broker\` process (kfake, in RAM) at $ADDR"
  echo "rounds: $ROUNDS; $N records of $SIZE B per run; sides: ${SIDES[*]}, order rotating each round"
  echo "produce: $PRODUCE_DESC_KBENCH"
  echo "         $PRODUCE_DESC_KGO"
  echo "consume: $CONSUME_DESC_KBENCH"
  echo "         $CONSUME_DESC_KGO"
  echo "figure: process CPU (user + system) over the measured window / records measured × 1e6"
} | tee "$OUT/header.txt"

# line CASE SIDE ROUND RECORDS CPU_SECONDS SECONDS: one JSON line of $RUNS.
line() {
  jq -cn --arg case "$1" --arg side "$2" --argjson round "$3" --argjson records "$4" \
    --argjson cpu "$5" --argjson secs "$6" \
    '{case:$case, side:$side, round:$round, records:$records, cpu_seconds:$cpu, seconds:$secs}' >>"$RUNS"
}

# kbench_result DIR RECORDS_METRIC: "records cpu seconds" from result.json.
kbench_result() {
  jq -r --arg m "$2" '[(.metrics[] | select(.name == $m) | .value),
    (.metrics[] | select(.name == "process-cpu-seconds") | .value),
    .measurement.window_seconds] | map(tostring) | join(" ")' "$1/result.json"
}

# produce SIDE ROUND [PROFILE_FILE]
produce() {
  local side=$1 round=$2 prof=${3:-} name="produce-$1-r$2" topic="cost-produce-$1-r$2"
  log "round $round: produce / $side"
  case $side in
  kgo)
    local extra=()
    [ -n "$prof" ] && extra=(--cpuprofile "$prof")
    "$PEER" produce --brokers "$ADDR" --topic "$topic" --num-records "$N" --record-size "$SIZE" \
      --partitions 1 --preset matched ${extra[@]+"${extra[@]}"} >"$OUT/runs/$name.json" 2>"$OUT/runs/$name.log" \
      || { tail -5 "$OUT/runs/$name.log" >&2; exit 1; }
    [ -n "$prof" ] || line produce kgo "$round" $(jq -r '"\(.records) \(.cpu_seconds) \(.seconds)"' "$OUT/runs/$name.json")
    ;;
  *)
    local bin=$WORK/kbench pf=none
    [ -n "$prof" ] && pf=cpu
    [ "$side" = base ] && bin=$WORK/kbench-base
    "$bin" run producer --bootstrap-server "$ADDR" --topic "$topic" --num-records "$N" \
      --record-size "$SIZE" --throughput -1 --partitions 1 --profile "$pf" --mode raw \
      --out "$OUT/runs/$name" --producer-props "${PRODUCER_PROPS[@]}" >"$OUT/runs/$name.log" 2>&1 \
      || { tail -5 "$OUT/runs/$name.log" >&2; exit 1; }
    [ -n "$prof" ] || line produce "$side" "$round" $(kbench_result "$OUT/runs/$name" records-sent)
    ;;
  esac
  "$PEER" delete-topic --brokers "$ADDR" --topic "$topic"
}

CONSUME_TOPIC="cost-consume-$STAMP"

# consume SIDE ROUND [PROFILE]
consume() {
  local side=$1 round=$2 prof=${3:-} name="consume-$1-r$2"
  log "round $round: consume / $side"
  case $side in
  kgo)
    local extra=()
    [ -n "$prof" ] && extra=(--cpuprofile "$prof")
    "$PEER" consume --brokers "$ADDR" --topic "$CONSUME_TOPIC" --num-records "$N" --preset matched \
      ${extra[@]+"${extra[@]}"} >"$OUT/runs/$name.json" 2>"$OUT/runs/$name.log" \
      || { tail -5 "$OUT/runs/$name.log" >&2; exit 1; }
    [ -n "$prof" ] || line consume kgo "$round" $(jq -r '"\(.records) \(.cpu_seconds) \(.seconds)"' "$OUT/runs/$name.json")
    ;;
  *)
    local bin=$WORK/kbench pf=none
    [ -n "$prof" ] && pf=cpu
    [ "$side" = base ] && bin=$WORK/kbench-base
    "$bin" run consumer --bootstrap-server "$ADDR" --topic "$CONSUME_TOPIC" --messages "$N" \
      --record-size "$SIZE" --mode assign --profile "$pf" --out "$OUT/runs/$name" \
      >"$OUT/runs/$name.log" 2>&1 || { tail -5 "$OUT/runs/$name.log" >&2; exit 1; }
    [ -n "$prof" ] || line consume "$side" "$round" $(kbench_result "$OUT/runs/$name" records-consumed-total)
    ;;
  esac
}

# The consumer topic is filled once by a consumer run that is not counted
# (it also warms the broker and the binaries' page cache).
log "prefilling $CONSUME_TOPIC with $N records of $SIZE B (not measured)"
"$WORK/kbench" run consumer --bootstrap-server "$ADDR" --topic "$CONSUME_TOPIC" --messages "$N" \
  --record-size "$SIZE" --mode assign --profile none --out "$OUT/runs/consume-prefill" \
  >"$OUT/runs/consume-prefill.log" 2>&1 || { tail -5 "$OUT/runs/consume-prefill.log" >&2; exit 1; }

for r in $(seq 1 "$ROUNDS"); do
  # Rotate the sides' order each round, so no side always runs first.
  order=()
  k=${#SIDES[@]}
  for ((i = 0; i < k; i++)); do order+=("${SIDES[$(((i + r - 1) % k))]}"); done
  for s in "${order[@]}"; do produce "$s" "$r"; done
  for s in "${order[@]}"; do consume "$s" "$r"; done
done

# ---- summary: medians of CPU s per million records, ratios vs kgo ----
summary() {
  jq -rs --argjson sides "$(printf '%s\n' "${SIDES[@]}" | jq -R . | jq -s .)" '
    def median: sort | if length == 0 then null elif length % 2 == 1 then .[length/2|floor]
      else (.[length/2 - 1] + .[length/2]) / 2 end;
    def r3: . * 1000 | round / 1000;
    def per(m): m.cpu_seconds / m.records * 1e6;
    . as $all
    | ["case", "side", "runs", "cpu s / 1e6 records (median)", "records/s (median)", "ratio vs kgo (of medians)", "ratio vs kgo (median per round)"],
      (["produce", "consume"][] as $c
       | ($all | map(select(.case == $c and .side == "kgo"))) as $kgo
       | ($kgo | map(per(.)) | median) as $kgoMed
       | $sides[] as $s
       | ($all | map(select(.case == $c and .side == $s))) as $rs
       | ($rs | map(per(.)) | median) as $med
       | [$c, $s, ($rs | length), ($med | r3),
          ($rs | map(.records / .seconds) | median | round),
          (($med / $kgoMed) | r3),
          ([$rs[] as $x | ($kgo[] | select(.round == $x.round)) as $y | per($x) / per($y)] | median | r3)])
    | @tsv' "$RUNS" | column -t -s $'\t'
}

echo
summary | tee "$OUT/summary.txt"

if [ "$PROFILE" = 1 ]; then
  N=${PROFILE_N:-$((3 * N))}
  log "profiling one more run of each side with $N records (not counted)"
  mkdir -p "$OUT/profiles"
  produce kbench p "x"
  cp "$OUT/runs/produce-kbench-rp/client-cpu.pb.gz" "$OUT/profiles/produce-kbench.pb.gz"
  produce kgo p "$OUT/profiles/produce-kgo.pb.gz"
  consume kbench p "x"
  cp "$OUT/runs/consume-kbench-rp/client-cpu.pb.gz" "$OUT/profiles/consume-kbench.pb.gz"
  consume kgo p "$OUT/profiles/consume-kgo.pb.gz"
  for p in produce-kbench produce-kgo consume-kbench consume-kgo; do
    {
      echo "== $p: top 25 by flat"
      go tool pprof -top -nodecount=25 "$OUT/profiles/$p.pb.gz" 2>/dev/null | sed -n '1,35p'
      echo "== $p: top 25 by cumulative"
      go tool pprof -top -cum -nodecount=25 "$OUT/profiles/$p.pb.gz" 2>/dev/null | sed -n '6,35p'
    } >"$OUT/profiles/$p.txt"
  done
  log "profiles and their top lists: $OUT/profiles/"
fi

"$PEER" delete-topic --brokers "$ADDR" --topic "$CONSUME_TOPIC"
cat "$OUT/header.txt" "$OUT/summary.txt" >"$OUT/report.txt"
log "raw runs: $RUNS; report: $OUT/report.txt"
