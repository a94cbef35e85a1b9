#!/usr/bin/env bash
# Peer comparison: kbench (segmentio/kafka-go) against franz-go's kgo, and
# the cost of kbench's CPU profiling, all against ONE `kbench broker`
# process, interleaved, over ROUNDS rounds. See bench/README.md.
#
#   bash bench/compare.sh                # 5 rounds
#   ROUNDS=7 N=200000 bash bench/compare.sh
#
# Environment:
#   ROUNDS        rounds (default 5); every case runs once per side per round
#   N             records per run for every case (overrides the three below)
#   N256          records per 256 B producer run (default 1000000)
#   N512          records per 512 B producer run (default 500000)
#   NCONSUME      records per consumer run (default 1000000)
#   CONSUME_SIZE  record size of the consumer topic (default 256)
#   MODE          kbench producer mode of the matched and profile cases
#                 (default raw, kafka-go's fastest path; the writer case
#                 always measures the Writer, the defaults case too)
#   OUT           output directory (default bench/out/<UTC time>)
#   KBENCH_BIN    measure this prebuilt kbench binary instead of building the
#                 work tree's (e.g. a candidate change built elsewhere)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

ROUNDS=${ROUNDS:-5}
N256=${N:-${N256:-1000000}}
N512=${N:-${N512:-500000}}
NCONSUME=${N:-${NCONSUME:-1000000}}
CONSUME_SIZE=${CONSUME_SIZE:-256}
MODE=${MODE:-raw}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/bench/out/$STAMP}
RUNS=$OUT/runs.jsonl

# The two producer configurations, as each client spells them.
MATCHED_KBENCH=(batch.size=1048576 linger.ms=10 max.in.flight.requests.per.connection=1)
MATCHED_DESC_KBENCH="kbench --mode $MODE: acks=all, 1 partition, batch.size=1048576, linger.ms=10, compression none, buffer.memory 32 MiB, 1 request in flight"
WRITER_DESC_KBENCH="kbench --mode writer (kafka-go Writer): acks=all, 1 partition, batch.size=1048576, linger.ms=10, compression none, buffer.memory 32 MiB, 1 request in flight"
MATCHED_DESC_KGO="kgo: acks=all, 1 partition, ProducerBatchMaxBytes 1048576, ProducerLinger 10ms (kgo's default), no compression, idempotence off, 1 request in flight, MaxBufferedBytes 32 MiB"
DEFAULTS_DESC_KBENCH="kbench --mode writer with Kafka defaults: acks=all, 1 partition, batch.size=16384, linger.ms=5, compression none, buffer.memory 32 MiB"
DEFAULTS_DESC_KGO="kgo defaults: acks=all, idempotent (5 in flight), snappy preferred, 1000012-byte batches, 10ms linger, 50000 buffered records"
CONSUME_DESC_KBENCH="kbench consumer --mode assign: a kafka-go Conn per partition, ReadBatch min 1 B, max 1 MiB, max wait 500 ms"
CONSUME_DESC_KGO="kgo consumer: ConsumeTopics + ConsumeResetOffset(start), no group, FetchMinBytes 1, FetchMaxWait 500ms, FetchMaxPartitionBytes 1 MiB, FetchMaxBytes 1 MiB"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kbench-compare.XXXXXX")
# shellcheck source=bench/lib/broker.sh
. "$ROOT/bench/lib/broker.sh"
cleanup() {
  stop_broker
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

log "building kbench, kgopeer and summarize into $WORK"
if [ -n "${KBENCH_BIN:-}" ]; then
  cp "$KBENCH_BIN" "$WORK/kbench"
else
  go build -o "$WORK/kbench" .
fi
go build -o "$WORK/kgopeer" ./bench/kgopeer
go build -o "$WORK/summarize" ./bench/summarize
KBENCH=$WORK/kbench
PEER=$WORK/kgopeer
SUM=$WORK/summarize

mkdir -p "$OUT/runs"
: >"$RUNS"

# One broker for the whole comparison, on a free loopback port.
start_broker "$KBENCH" "$WORK" "$OUT/broker.err"
log "broker pid $BROKER_PID at $ADDR"

{
  echo "kbench peer comparison $STAMP"
  echo "kbench: ${KBENCH_BIN:-built from $ROOT ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD -- . 2>/dev/null || echo ', with uncommitted changes'))}"
  echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(go version | cut -d' ' -f3-)"
  echo "broker: one \`kbench broker\` process (kfake, in RAM) at $ADDR"
  echo "rounds: $ROUNDS; records per run: 256 B producer $N256, 512 B producer $N512, consumer $NCONSUME of $CONSUME_SIZE B"
  echo "order: sides alternate per round (odd rounds kbench/cpu first), and even rounds run the cases in reverse order"
  echo "producer-matched: $MATCHED_DESC_KBENCH"
  echo "                  $MATCHED_DESC_KGO"
  echo "producer-writer:  $WRITER_DESC_KBENCH"
  echo "                  $MATCHED_DESC_KGO"
  echo "producer-defaults: $DEFAULTS_DESC_KBENCH"
  echo "                   $DEFAULTS_DESC_KGO"
  echo "consume: $CONSUME_DESC_KBENCH"
  echo "         $CONSUME_DESC_KGO"
  echo "profile: kbench producer-matched (--mode $MODE) at 256 B, --profile cpu vs --profile none"
} | tee "$OUT/header.txt"

# ---- one run of each kind; each appends a line to $RUNS ----

# kbench_produce CASE SIDE ROUND MODE SIZE N PROFILE DESC [PROPS…]
kbench_produce() {
  local case=$1 side=$2 round=$3 mode=$4 size=$5 n=$6 profile=$7 desc=$8
  shift 8
  local name="$case-$side-r$round" topic="cmp-$case-$side-r$round"
  local props=()
  [ $# -gt 0 ] && props=(--producer-props "$@")
  log "round $round: $case / $side"
  "$KBENCH" run producer --bootstrap-server "$ADDR" --topic "$topic" --num-records "$n" \
    --record-size "$size" --throughput -1 --partitions 1 --profile "$profile" --mode "$mode" \
    --out "$OUT/runs/$name" ${props[@]+"${props[@]}"} >"$OUT/runs/$name.log" 2>&1 \
    || { tail -5 "$OUT/runs/$name.log" >&2; exit 1; }
  "$SUM" line --round "$round" --case "$case" --side "$side" --config "$desc" \
    --kbench-result "$OUT/runs/$name" >>"$RUNS"
  "$PEER" delete-topic --brokers "$ADDR" --topic "$topic"
}

# kgo_produce CASE ROUND SIZE N PRESET DESC
kgo_produce() {
  local case=$1 round=$2 size=$3 n=$4 preset=$5 desc=$6
  local name="$case-kgo-r$round" topic="cmp-$case-kgo-r$round"
  log "round $round: $case / kgo"
  "$PEER" produce --brokers "$ADDR" --topic "$topic" --num-records "$n" --record-size "$size" \
    --partitions 1 --preset "$preset" >"$OUT/runs/$name.json" 2>"$OUT/runs/$name.log" \
    || { tail -5 "$OUT/runs/$name.log" >&2; exit 1; }
  "$SUM" line --round "$round" --case "$case" --side kgo --config "$desc" \
    <"$OUT/runs/$name.json" >>"$RUNS"
  "$PEER" delete-topic --brokers "$ADDR" --topic "$topic"
}

CONSUME_TOPIC="cmp-consume-$STAMP"

kbench_consume() {
  local round=$1 name="consume-kbench-r$1"
  log "round $round: consume / kbench"
  "$KBENCH" run consumer --bootstrap-server "$ADDR" --topic "$CONSUME_TOPIC" --messages "$NCONSUME" \
    --record-size "$CONSUME_SIZE" --mode assign --profile none --out "$OUT/runs/$name" \
    >"$OUT/runs/$name.log" 2>&1 || { tail -5 "$OUT/runs/$name.log" >&2; exit 1; }
  "$SUM" line --round "$round" --case consume --side kbench --config "$CONSUME_DESC_KBENCH" \
    --kbench-result "$OUT/runs/$name" >>"$RUNS"
}

kgo_consume() {
  local round=$1 name="consume-kgo-r$1"
  log "round $round: consume / kgo"
  "$PEER" consume --brokers "$ADDR" --topic "$CONSUME_TOPIC" --num-records "$NCONSUME" --preset matched \
    >"$OUT/runs/$name.json" 2>"$OUT/runs/$name.log" || { tail -5 "$OUT/runs/$name.log" >&2; exit 1; }
  "$SUM" line --round "$round" --case consume --side kgo --config "$CONSUME_DESC_KGO" \
    <"$OUT/runs/$name.json" >>"$RUNS"
}

# ---- the cases; each runs both of its sides, in the round's order ----

case_produce_256() {
  local r=$1 first=$2
  local a=(kbench_produce produce-256 kbench "$r" "$MODE" 256 "$N256" none "$MATCHED_DESC_KBENCH" "${MATCHED_KBENCH[@]}")
  local b=(kgo_produce produce-256 "$r" 256 "$N256" matched "$MATCHED_DESC_KGO")
  if [ "$first" = a ]; then "${a[@]}"; "${b[@]}"; else "${b[@]}"; "${a[@]}"; fi
}

case_produce_512() {
  local r=$1 first=$2
  local a=(kbench_produce produce-512 kbench "$r" "$MODE" 512 "$N512" none "$MATCHED_DESC_KBENCH" "${MATCHED_KBENCH[@]}")
  local b=(kgo_produce produce-512 "$r" 512 "$N512" matched "$MATCHED_DESC_KGO")
  if [ "$first" = a ]; then "${a[@]}"; "${b[@]}"; else "${b[@]}"; "${a[@]}"; fi
}

# The application path: kafka-go's Writer, with the same settings.
case_produce_writer() {
  local r=$1 first=$2
  local a=(kbench_produce produce-256-writer kbench "$r" writer 256 "$N256" none "$WRITER_DESC_KBENCH" "${MATCHED_KBENCH[@]}")
  local b=(kgo_produce produce-256-writer "$r" 256 "$N256" matched "$MATCHED_DESC_KGO")
  if [ "$first" = a ]; then "${a[@]}"; "${b[@]}"; else "${b[@]}"; "${a[@]}"; fi
}

case_produce_defaults() {
  local r=$1 first=$2
  local a=(kbench_produce produce-256-defaults kbench "$r" writer 256 "$N256" none "$DEFAULTS_DESC_KBENCH")
  local b=(kgo_produce produce-256-defaults "$r" 256 "$N256" kgo-defaults "$DEFAULTS_DESC_KGO")
  if [ "$first" = a ]; then "${a[@]}"; "${b[@]}"; else "${b[@]}"; "${a[@]}"; fi
}

case_consume() {
  local r=$1 first=$2
  if [ "$first" = a ]; then kbench_consume "$r"; kgo_consume "$r"; else kgo_consume "$r"; kbench_consume "$r"; fi
}

case_profile() {
  local r=$1 first=$2
  local a=(kbench_produce profile-256 cpu "$r" "$MODE" 256 "$N256" cpu "$MATCHED_DESC_KBENCH --profile cpu" "${MATCHED_KBENCH[@]}")
  local b=(kbench_produce profile-256 none "$r" "$MODE" 256 "$N256" none "$MATCHED_DESC_KBENCH --profile none" "${MATCHED_KBENCH[@]}")
  if [ "$first" = a ]; then "${a[@]}"; "${b[@]}"; else "${b[@]}"; "${a[@]}"; fi
}

CASES=(case_produce_256 case_produce_512 case_produce_writer case_consume case_profile case_produce_defaults)

# The consumer topic is filled once, by a kbench consumer run that is not
# counted (it also warms up the broker and both binaries' page cache).
log "prefilling $CONSUME_TOPIC with $NCONSUME records of $CONSUME_SIZE B (not measured)"
"$KBENCH" run consumer --bootstrap-server "$ADDR" --topic "$CONSUME_TOPIC" --messages "$NCONSUME" \
  --record-size "$CONSUME_SIZE" --mode assign --profile none --out "$OUT/runs/consume-prefill" \
  >"$OUT/runs/consume-prefill.log" 2>&1 || { tail -5 "$OUT/runs/consume-prefill.log" >&2; exit 1; }

for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then
    first=a
    order=("${CASES[@]}")
  else
    first=b
    order=()
    for ((i = ${#CASES[@]} - 1; i >= 0; i--)); do order+=("${CASES[$i]}"); done
  fi
  for c in "${order[@]}"; do "$c" "$r" "$first"; done
done

"$PEER" delete-topic --brokers "$ADDR" --topic "$CONSUME_TOPIC"

echo
"$SUM" table "$RUNS" | tee "$OUT/summary.txt"
cat "$OUT/header.txt" "$OUT/summary.txt" >"$OUT/report.txt"
log "raw runs: $RUNS; report: $OUT/report.txt"
