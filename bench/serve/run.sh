#!/usr/bin/env bash
# Serve benchmark: how fast `kbench serve` answers its pages while a run is
# in progress, over a history of 10,000 stored runs.
#
#   bash bench/serve/run.sh                 # 60 s at 50 clients
#   DURATION=10s bash bench/serve/run.sh    # quick smoke check
#
# Steps: build kbench, the seeder and the load generator; seed a fresh data
# directory; start `kbench serve` on a free loopback port; launch one real
# long producer run through the API and wait until it runs; load the runs
# page, a deep page of it, a stored run's page and the live run's page;
# sample the server's memory every second; cancel the run; stop the server
# with SIGINT; print the table. Everything is on 127.0.0.1, and every loop
# here is bounded in count and time. See bench/README.md ("Serving pages
# under load").
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

DURATION=${DURATION:-60s}    # load duration (loadgen -d)
CLIENTS=${CLIENTS:-50}       # concurrent clients
WARMUP=${WARMUP:-0s}         # unrecorded load before the measured part
RUNS=${RUNS:-10000}          # runs to seed
P99_LIMIT_MS=${P99_LIMIT_MS:-50}
RUN_PARAMS=${RUN_PARAMS:-'{"num-records":50000000,"throughput":20000,"profile":"cpu"}'}
RUN_NICE=${RUN_NICE:-0}      # >0: renice the live run's processes by this much
PERF=${PERF:-0}              # 1: perf record the server during the load (needs perf)
KEEP=${KEEP:-0}              # 1: keep the seeded data directory
COMPARE=${COMPARE:-0}        # 1: also load a 10-run comparison page and a report page
OUT=${OUT:-bench/serve/out/$(date -u +%Y%m%dT%H%M%SZ)}
KBENCH_BIN=${KBENCH_BIN:-}   # a prebuilt kbench to measure instead of the work tree
KBENCH_REV=${KBENCH_REV:-}   # a git revision to build and measure instead of the work tree

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TMP=$(mktemp -d -t kbench-serve-bench.XXXXXX)
DATA=$TMP/data
SERVER_PID=""
SAMPLER_PID=""
PERF_PID=""

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }

cleanup() {
  local rc=$?
  [ -n "$PERF_PID" ] && kill -INT "$PERF_PID" 2>/dev/null || true
  [ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null || true
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    log "stopping the server (pid $SERVER_PID)"
    kill -INT "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  if [ "$KEEP" = 1 ]; then log "data kept in $DATA"; else rm -rf "$TMP"; fi
  exit $rc
}
trap cleanup EXIT
trap 'log "error: line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT TERM

# --- build ---
log "building into $TMP"
SRC=$ROOT
if [ -n "$KBENCH_REV" ]; then
  # Build that revision as committed, with this benchmark's own programs
  # copied in, in a scratch copy (the work tree is left alone).
  SRC=$TMP/src
  mkdir -p "$SRC"
  git archive "$KBENCH_REV" | tar -x -C "$SRC"
  mkdir -p "$SRC/bench/serve"
  cp -r "$ROOT/bench/serve/fixture" "$ROOT/bench/serve/seed" "$ROOT/bench/serve/loadgen" "$SRC/bench/serve/"
  log "building kbench at $KBENCH_REV ($(git rev-parse --short "$KBENCH_REV"))"
fi
if [ -n "$KBENCH_BIN" ]; then cp "$KBENCH_BIN" "$TMP/kbench"; else (cd "$SRC" && go build -o "$TMP/kbench" .); fi
(cd "$SRC" && go build -o "$TMP/seed" ./bench/serve/seed && go build -o "$TMP/loadgen" ./bench/serve/loadgen)

# --- seed ---
log "seeding $RUNS runs"
"$TMP/seed" -data "$DATA" -runs "$RUNS" -quiet > "$OUT/seed.json"
SAMPLE_ID=$(jq -r .sample_run_id "$OUT/seed.json")
[ "$SAMPLE_ID" -gt 0 ] 2>/dev/null || die "seed printed no sample run"
log "seeded: $(jq -c '{runs, metrics, series_points, output_bytes, db_bytes, sample_run_id}' "$OUT/seed.json")"

# --- server ---
"$TMP/kbench" serve --listen 127.0.0.1:0 --data "$DATA" > "$OUT/server.out" 2> "$OUT/server.log" &
SERVER_PID=$!
ADDR=""
for _ in $(seq 1 150); do
  ADDR=$(sed -n 's|^kbench serving on http://\([^ ]*\) .*|\1|p' "$OUT/server.out" 2>/dev/null || true)
  [ -n "$ADDR" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || die "the server exited: $(tail -5 "$OUT/server.log")"
  sleep 0.2
done
[ -n "$ADDR" ] || die "the server did not start within 30 s"
BASE=http://$ADDR
log "server pid $SERVER_PID on $BASE"

# status of the server process: field of /proc/PID/status in kB
proc_kb() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$SERVER_PID/status" 2>/dev/null || echo 0; }
# CPU seconds (user + system) of a process, 0 when gone
cpu_s() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
  # fields after the command (which may hold spaces): utime is 14, stime 15
  echo "${stat##*) }" | awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($12 + $13) / hz}'
}
# the live run's processes: children of the server and their children
run_pids() {
  local kids
  kids=$(ps -o pid= --ppid "$SERVER_PID" 2>/dev/null | tr -d ' ' || true)
  for k in $kids; do echo "$k"; ps -o pid= --ppid "$k" 2>/dev/null | tr -d ' ' || true; done
}
# CPU seconds the whole machine spent busy (all cores, /proc/stat), and stolen by the hypervisor
machine_busy() { awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" {printf "%.2f %.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz, $9 / hz}' /proc/stat; }
sum_cpu() { local t=0; for p in "$@"; do t=$(awk -v a="$t" -v b="$(cpu_s "$p")" 'BEGIN {printf "%.2f", a + b}'); done; echo "$t"; }

# the server's open SQLite connections: its descriptors open on the database file
db_conns() { find "/proc/$SERVER_PID/fd" -maxdepth 1 -lname "$DATA/kbench.db" 2>/dev/null | wc -l; }

# Sampler: VmRSS (kB) and SQLite connections every second for the server's
# whole life, bounded.
(
  printf 'unix_time\tvm_rss_kb\tdb_conns\n'
  for _ in $(seq 1 7200); do
    kill -0 "$SERVER_PID" 2>/dev/null || exit 0
    printf '%s\t%s\t%s\n' "$(date -u +%s)" "$(proc_kb VmRSS)" "$(db_conns)"
    sleep 1
  done
) > "$OUT/rss.tsv" &
SAMPLER_PID=$!

# --- the live run ---
log "starting the live run: $RUN_PARAMS"
curl -sS --fail-with-body -m 10 -X POST -H 'Content-Type: application/json' \
  -d "{\"workload\":\"producer\",\"label\":\"serve-bench-live\",\"params\":$RUN_PARAMS}" \
  "$BASE/api/runs" > "$OUT/live-run-created.json" || die "POST /api/runs: $(cat "$OUT/live-run-created.json")"
LIVE_ID=$(jq -r .id "$OUT/live-run-created.json")
[ "$LIVE_ID" -gt 0 ] 2>/dev/null || die "no run id in $(cat "$OUT/live-run-created.json")"
status=""
for _ in $(seq 1 120); do
  status=$(curl -sS -m 5 "$BASE/api/runs/$LIVE_ID" | jq -r .status)
  [ "$status" = running ] && break
  case $status in succeeded|failed|canceled|interrupted) die "the live run ended early: $status";; esac
  sleep 0.5
done
[ "$status" = running ] || die "the live run is not running after 60 s (status $status)"
# Let it get past broker start-up and topic creation into steady sending.
sleep 5
status=$(curl -sS -m 5 "$BASE/api/runs/$LIVE_ID" | jq -r .status)
[ "$status" = running ] || die "the live run stopped during start-up: status $status"
RUN_PIDS=$(run_pids | xargs)
log "live run $LIVE_ID is running (processes: ${RUN_PIDS:-none found})"
if [ "$RUN_NICE" -gt 0 ] && [ -n "$RUN_PIDS" ]; then
  # shellcheck disable=SC2086
  renice -n "$RUN_NICE" -p $RUN_PIDS > /dev/null && log "reniced the run's processes by $RUN_NICE"
fi

URLS=("$BASE/" "$BASE/?page=150" "$BASE/runs/$SAMPLE_ID" "$BASE/runs/$LIVE_ID")
if [ "$COMPARE" = 1 ]; then
  # A comparison of 10 stored runs (all their metrics) and a saved report
  # of the same runs, as the reports issue asks.
  CMP_IDS=$(seq -s, $((SAMPLE_ID - 9)) "$SAMPLE_ID")
  SLUG=$(curl -sS -m 10 -H 'Content-Type: application/json' \
    -d "{\"title\":\"bench report\",\"runs\":[$CMP_IDS]}" "$BASE/api/reports" | jq -r .slug)
  [ -n "$SLUG" ] && [ "$SLUG" != null ] || die "could not create the report"
  URLS+=("$BASE/compare?runs=$CMP_IDS" "$BASE/r/$SLUG")
  log "compare and report pages: runs $CMP_IDS, report $SLUG"
fi
for u in "${URLS[@]}"; do
  code=$(curl -sS -m 10 -o /dev/null -w '%{http_code}' "$u")
  [ "$code" = 200 ] || die "GET $u answered $code before the load"
done

RSS_IDLE=$(proc_kb VmRSS)
# shellcheck disable=SC2086
CPU_SERVER0=$(cpu_s "$SERVER_PID"); CPU_RUN0=$(sum_cpu $RUN_PIDS)
read -r BUSY0 STEAL0 < <(machine_busy)
T0=$(date +%s.%N)

if [ "$PERF" = 1 ]; then
  command -v perf > /dev/null || die "PERF=1 but perf is not installed"
  dur_s=$(echo "$DURATION" | sed 's/s$//')
  perf record -F 499 -g -p "$SERVER_PID" -o "$OUT/perf.data" -- sleep "$dur_s" > "$OUT/perf-record.log" 2>&1 &
  PERF_PID=$!
fi

log "load: $CLIENTS clients for $DURATION (warm-up $WARMUP) on ${URLS[*]}"
"$TMP/loadgen" -c "$CLIENTS" -d "$DURATION" -warmup "$WARMUP" -label "serve-bench" \
  -json "$OUT/loadgen.json" "${URLS[@]}" | tee "$OUT/loadgen.txt" | sed '$d' >&2

T1=$(date +%s.%N)
# shellcheck disable=SC2086
CPU_SERVER1=$(cpu_s "$SERVER_PID"); CPU_RUN1=$(sum_cpu $RUN_PIDS)
read -r BUSY1 STEAL1 < <(machine_busy)
RSS_HWM=$(proc_kb VmHWM)
RSS_END=$(proc_kb VmRSS)
if [ -n "$PERF_PID" ]; then wait "$PERF_PID" || true; PERF_PID=""; fi
LIVE_AFTER=$(curl -sS -m 5 "$BASE/api/runs/$LIVE_ID" | jq -r .status)

# --- cancel the run, stop the server ---
log "canceling the live run (status $LIVE_AFTER)"
curl -sS -m 10 -X POST "$BASE/api/runs/$LIVE_ID/cancel" > "$OUT/live-run-cancel.json" || true
final=""
for _ in $(seq 1 80); do
  final=$(curl -sS -m 5 "$BASE/api/runs/$LIVE_ID" | jq -r .status)
  case $final in succeeded|failed|canceled|interrupted) break;; esac
  sleep 0.5
done
log "live run ended: $final"
kill -INT "$SERVER_PID"
for _ in $(seq 1 40); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.5; done
if kill -0 "$SERVER_PID" 2>/dev/null; then
  log "the server did not stop within 20 s of SIGINT; killing it"
  kill -KILL "$SERVER_PID"
fi
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
wait "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=""

# --- summary ---
RSS_MAX=$(awk 'NR > 1 && $2 > m {m = $2} END {print m + 0}' "$OUT/rss.tsv")
DB_CONNS_MAX=$(awk 'NR > 1 && $3 > m {m = $3} END {print m + 0}' "$OUT/rss.tsv")
WALL=$(awk -v a="$T0" -v b="$T1" 'BEGIN {printf "%.1f", b - a}')
SERVER_CPU=$(awk -v a="$CPU_SERVER0" -v b="$CPU_SERVER1" 'BEGIN {printf "%.1f", b - a}')
RUN_CPU=$(awk -v a="$CPU_RUN0" -v b="$CPU_RUN1" 'BEGIN {printf "%.1f", b - a}')
MACHINE_CPU=$(awk -v a="$BUSY0" -v b="$BUSY1" 'BEGIN {printf "%.1f", b - a}')
STEAL_CPU=$(awk -v a="$STEAL0" -v b="$STEAL1" 'BEGIN {printf "%.1f", b - a}')
SERVER_5XX=$(grep -c 'status=5[0-9][0-9]' "$OUT/server.log" || true)

jq -n --slurpfile lg "$OUT/loadgen.json" --slurpfile seed "$OUT/seed.json" \
  --arg duration "$DURATION" --argjson limit "$P99_LIMIT_MS" \
  --argjson rss_idle "${RSS_IDLE:-0}" --argjson rss_hwm "${RSS_HWM:-0}" --argjson rss_max "${RSS_MAX:-0}" --argjson rss_end "${RSS_END:-0}" --argjson db_conns "${DB_CONNS_MAX:-0}" \
  --argjson wall "$WALL" --argjson server_cpu "$SERVER_CPU" --argjson run_cpu "$RUN_CPU" \
  --argjson machine_cpu "$MACHINE_CPU" --argjson steal_cpu "$STEAL_CPU" --argjson cores "$(nproc)" \
  --arg live_id "$LIVE_ID" --arg live_after "$LIVE_AFTER" --arg live_final "$final" --argjson server_5xx "$SERVER_5XX" \
  '{duration: $duration, p99_limit_ms: $limit, loadgen: $lg[0], seed: $seed[0],
    server: {rss_idle_kb: $rss_idle, vm_hwm_kb: $rss_hwm, vm_rss_max_sampled_kb: $rss_max, rss_end_kb: $rss_end,
             cpu_s: $server_cpu, wall_s: $wall, logged_5xx: $server_5xx, sqlite_conns_max_sampled: $db_conns},
    machine: {cores: $cores, busy_cpu_s: $machine_cpu, steal_cpu_s: $steal_cpu,
              rest_of_machine_cpu_s: (($machine_cpu - $server_cpu - $run_cpu - $lg[0].loadgen_cpu_s) * 10 | round / 10)},
    live_run: {id: ($live_id | tonumber), status_after_load: $live_after, final_status: $live_final, cpu_s: $run_cpu},
    pass: (($lg[0].urls | all(.p99_ms < $limit)) and $lg[0].overall.errors == 0 and $live_after == "running")}' \
  > "$OUT/summary.json"

{
  echo "kbench serve under load: $CLIENTS clients, $DURATION, $RUNS stored runs + 1 live run ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores)"
  echo
  jq -r '(["url", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "KB/req"] | @tsv),
    ((.loadgen.urls[] | [(.url | sub("^https?://[^/]+"; "")), .requests, (.req_per_s | floor), .p50_ms, .p90_ms, .p99_ms, .p99_9_ms, .max_ms, .errors, ((.bytes_per_req / 1024 * 10 | floor) / 10)] | @tsv)),
    (.loadgen.overall | ["all", .requests, (.req_per_s | floor), .p50_ms, .p90_ms, .p99_ms, .p99_9_ms, .max_ms, .errors, ((.bytes_per_req / 1024 * 10 | floor) / 10)] | @tsv)' \
    "$OUT/summary.json" | column -t -s $'\t' -R 2,3,4,5,6,7,8,9,10
  echo
  jq -r '"server peak RSS (VmHWM): \(.server.vm_hwm_kb / 1024 | floor) MiB; max sampled VmRSS \(.server.vm_rss_max_sampled_kb / 1024 | floor) MiB; idle before load \(.server.rss_idle_kb / 1024 | floor) MiB; SQLite connections open (max sampled): \(.server.sqlite_conns_max_sampled)",
    "CPU during the load (\(.server.wall_s) s × \(.machine.cores) cores = \(.server.wall_s * .machine.cores | round) core-s): server \(.server.cpu_s) s (\(.server.cpu_s * 1000 / .loadgen.overall.requests * 100 | round / 100) ms/request), live run \(.live_run.cpu_s) s, loadgen \(.loadgen.loadgen_cpu_s * 10 | floor / 10) s, rest of the machine (other processes, unattributed kernel work) \(.machine.rest_of_machine_cpu_s) s, stolen \(.machine.steal_cpu_s) s",
    "live run \(.live_run.id): \(.live_run.status_after_load) after the load, then \(.live_run.final_status); 5xx lines in the server log: \(.server.logged_5xx)",
    "requirement p99 < \(.p99_limit_ms) ms on every URL with zero errors: \(if .pass then "PASS" else "FAIL" end)"' "$OUT/summary.json"
} | tee "$OUT/summary.txt"
log "results in $OUT"
