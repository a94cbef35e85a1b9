#!/usr/bin/env bash
# Write-path benchmark: `kbench run writepath` with every strategy, at two
# request shapes, against the sink and against the embedded broker,
# interleaved over ROUNDS rounds; prints the medians. See bench/README.md.
#
#   bash bench/writepath/run.sh                  # 5 rounds, about 5 minutes
#   ROUNDS=3 SMALL_REQUESTS=5000 LARGE_REQUESTS=1000 bash bench/writepath/run.sh
#
# Environment:
#   ROUNDS          rounds (default 5); every case runs once per round
#   SHAPES          request shapes, RECORDSxSIZE (default "16x256 4x16384")
#   SMALL_REQUESTS  measured requests of shapes up to 8 KiB of records
#                   (default 20000)
#   LARGE_REQUESTS  measured requests of larger shapes (default 5000; the
#                   embedded broker keeps every record in RAM)
#   WARMUP_PERCENT  warm-up requests, in % of the measured ones (default 10)
#   IN_FLIGHT       --in-flight (default 5, Kafka's max.in.flight default)
#   PROFILE         --profile (default none: figures without profiler cost)
#   TARGETS         "sink broker" (default) or one of them
#   STRATEGIES      default: the five Go strategies, and with java, javac and
#                   jfr on PATH the three Java ones and java-gather+jfr
#                   (java-gather recording the JVM with Flight Recorder,
#                   --profile cpu: the recording's overhead against
#                   java-gather in the same round)
#                   java-gather+jfr-base: java-gather+jfr run by the
#                   KBENCH_BASE binary (a build of an older revision), to
#                   measure an older recording in the same rounds
#   KBENCH_BASE     the binary of java-gather+jfr-base (default: none; with
#                   it, the default strategies add java-gather+jfr-base)
#   JAVA_HOME_DIR   --java-home for the Java strategies (default: PATH)
#   OUT             output directory (default bench/out/writepath-<UTC time>)
#   KBENCH_BIN      measure this prebuilt kbench binary instead of building
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

ROUNDS=${ROUNDS:-5}
SHAPES=${SHAPES:-16x256 4x16384}
SMALL_REQUESTS=${SMALL_REQUESTS:-20000}
LARGE_REQUESTS=${LARGE_REQUESTS:-5000}
WARMUP_PERCENT=${WARMUP_PERCENT:-10}
IN_FLIGHT=${IN_FLIGHT:-5}
PROFILE=${PROFILE:-none}
TARGETS=${TARGETS:-sink broker}
if [ -z "${STRATEGIES:-}" ]; then
  STRATEGIES="gather per-buffer copy kafka-go kafka-go-conn"
  if command -v java >/dev/null && command -v javac >/dev/null && command -v jfr >/dev/null; then
    STRATEGIES="$STRATEGIES java-gather java-per-buffer java-copy java-gather+jfr"
    if [ -n "${KBENCH_BASE:-}" ]; then STRATEGIES="$STRATEGIES java-gather+jfr-base"; fi
  fi
fi
case " $STRATEGIES " in
  *" java-gather+jfr-base "*)
    if [ -z "${KBENCH_BASE:-}" ]; then echo "java-gather+jfr-base needs KBENCH_BASE" >&2; exit 2; fi ;;
esac
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/bench/out/writepath-$STAMP}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kbench-writepath.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [ -n "${KBENCH_BIN:-}" ]; then
  cp "$KBENCH_BIN" "$WORK/kbench"
else
  go build -o "$WORK/kbench" .
fi
go build -o "$WORK/summarize" ./bench/writepath/summarize
KBENCH=$WORK/kbench
if [ -n "${KBENCH_BASE:-}" ]; then cp "$KBENCH_BASE" "$WORK/kbench-base"; fi

# jvm_threads follows the JVM that kbench (pid $1) starts and writes, about
# every 100 ms until kbench exits, one line per JVM thread to $2: the time
# in ns since the epoch, the thread's name and its CPU time in ns
# (/proc/PID/task/TID/schedstat). The summary reads the CPU of Flight
# Recorder's own threads ("JFR …") over the recording from it.
jvm_threads() {
  local parent=$1 out=$2 jvm="" t now
  while kill -0 "$parent" 2>/dev/null; do
    if [ -z "$jvm" ]; then jvm=$(pgrep -x -P "$parent" java | head -1 || true); fi
    if [ -n "$jvm" ] && [ -d "/proc/$jvm/task" ]; then
      now=$(date +%s%N)
      for t in /proc/"$jvm"/task/*; do
        { read -r name <"$t/comm" && read -r ns _ <"$t/schedstat" && printf '%s\t%s\t%s\n' "$now" "$name" "$ns"; } 2>/dev/null || true
      done >>"$out"
    fi
    sleep 0.1
  done
}

# Cases: shape (records × record size, measured requests), target, strategy.
CASES=()
for shape in $SHAPES; do
  records=${shape%x*} size=${shape#*x}
  requests=$SMALL_REQUESTS
  if [ $(( records * size )) -gt 8192 ]; then requests=$LARGE_REQUESTS; fi
  for target in $TARGETS; do
    for strategy in $STRATEGIES; do
      CASES+=("$records $size $requests $target $strategy")
    done
  done
done

mkdir -p "$OUT/runs"
{
  echo "write-path benchmark $STAMP"
  if [ -n "${KBENCH_BIN:-}" ]; then
    echo "kbench: $KBENCH_BIN"
  else
    echo "kbench: the work tree at $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' with local changes')"
  fi
  echo "rounds $ROUNDS, shapes $SHAPES, targets $TARGETS, in flight $IN_FLIGHT, warm-up $WARMUP_PERCENT%, profile $PROFILE"
  echo "go: $(go version)"
  if command -v java >/dev/null; then echo "java: $(java -version 2>&1 | head -1)"; fi
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') × $(nproc)"
} >"$OUT/setup.txt"
cat "$OUT/setup.txt" >&2

total=$(( ROUNDS * ${#CASES[@]} ))
n=0
for round in $(seq 1 "$ROUNDS"); do
  # Odd rounds run the cases in order, even rounds in reverse, so no case
  # always follows the same one.
  order=$(seq 0 $(( ${#CASES[@]} - 1 )))
  if [ $(( round % 2 )) -eq 0 ]; then order=$(echo "$order" | tac); fi
  for i in $order; do
    read -r records size requests target strategy <<<"${CASES[$i]}"
    n=$(( n + 1 ))
    dir="$OUT/runs/r$round-$target-${records}x$size-$strategy"
    # java-gather+jfr is java-gather with the JVM's flight recording of
    # the window (--profile cpu); the others take PROFILE.
    profile=$PROFILE run_strategy=$strategy bin=$KBENCH
    case $strategy in
      java-gather+jfr) profile=cpu run_strategy=java-gather ;;
      java-gather+jfr-base) profile=cpu run_strategy=java-gather bin=$WORK/kbench-base ;;
    esac
    args=(run writepath --strategy "$run_strategy" --records-per-request "$records" --record-size "$size"
      --requests "$requests" --warmup-requests $(( requests * WARMUP_PERCENT / 100 ))
      --in-flight "$IN_FLIGHT" --profile "$profile" --topic "wp-$run_strategy" --out "$dir")
    if [ -n "${JAVA_HOME_DIR:-}" ]; then args+=(--java-home "$JAVA_HOME_DIR"); fi
    if [ "$target" = sink ]; then args+=(--sink); fi
    log "[$n/$total] round $round: $target ${records}x$size $strategy"
    : >"$WORK/threads.tsv"
    "$bin" "${args[@]}" >"$WORK/stdout" 2>"$WORK/stderr" &
    pid=$!
    watcher=""
    case $run_strategy in java-*) jvm_threads "$pid" "$WORK/threads.tsv" & watcher=$! ;; esac
    if ! wait "$pid"; then
      log "  failed: $(tail -1 "$WORK/stderr")"
    fi
    if [ -n "$watcher" ]; then wait "$watcher" || true; fi
    mkdir -p "$dir"
    cp "$WORK/threads.tsv" "$dir/jvm-threads.tsv"
    cp "$WORK/stdout" "$dir/stdout.txt"
    cp "$WORK/stderr" "$dir/stderr.txt"
  done
done

"$WORK/summarize" "$OUT/runs" | tee "$OUT/summary.txt"
log "results in $OUT"
