#!/usr/bin/env bash
# Capacity benchmark (issue 14): N tiny runs queued through the API of one
# `kbench serve --local-worker=false` and executed by 4 `kbench worker`
# processes on one shared PostgreSQL database; nothing lost, nothing run
# twice. Also submit → child process started with idle workers, on
# PostgreSQL and, as the peer, on SQLite (serve's own worker).
#
#   bash bench/capacity/run.sh                     # N=1000, then 20 latency runs per backend
#   N=200 LAT_N=5 bash bench/capacity/run.sh       # quick look
#   PARTS=latency bash bench/capacity/run.sh       # only the latency medians
#
# Steps: build kbench and bench/capacity once; start a throwaway
# PostgreSQL cluster (initdb in a temporary directory, a free loopback
# port, as the postgres user when run as root), or create a fresh database
# on the server KBENCH_BENCH_POSTGRES names; start one `kbench broker` that
# every run targets, the server and the workers; measure the server's idle
# CPU; submit N runs (50 per POST /api/runs, the most one request takes),
# sample pg_database_size every second, wait until every run is final,
# verify, and report. Everything is stopped and removed on exit. See
# bench/capacity/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

N=${N:-1000}                 # runs of the capacity part
WORKERS=${WORKERS:-4}        # kbench worker processes
RECORDS=${RECORDS:-200}      # records per run (100 B each)
PARALLEL=${PARALLEL:-4}      # POST /api/runs requests in flight
QUEUE=${QUEUE:-cap}
LAT_N=${LAT_N:-20}           # latency runs per backend
IDLE_S=${IDLE_S:-30}         # seconds of the server's idle CPU measured before submitting
PARTS=${PARTS:-capacity,latency}
SQLITE_PEER=${SQLITE_PEER:-1} # 1: also measure the latency on SQLite (serve's local worker)
PG_OPTS=${PG_OPTS:-}         # extra postgres -c settings for the throwaway cluster, e.g. "-c fsync=off"
OUT=${OUT:-bench/out/capacity-$(date -u +%Y%m%dT%H%M%SZ)}
KBENCH_BIN=${KBENCH_BIN:-}   # a prebuilt kbench to measure instead of the work tree
KEEP=${KEEP:-0}              # 1: keep the temporary directory (data, cluster stopped)

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TMP=$(mktemp -d -t kbench-capacity.XXXXXX)
PIDS=()          # every process this script started, stopped in reverse order
PG_CREATED_DB="" # the database created on KBENCH_BENCH_POSTGRES
ADMIN_URL=""

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
# shellcheck source=bench/lib/cluster.sh
. bench/lib/cluster.sh

cleanup() {
  local rc=$?
  local i
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop "${PIDS[i]}"; done
  if [ -n "$PG_CREATED_DB" ]; then
    psql -q "$ADMIN_URL" -c "DROP DATABASE IF EXISTS $PG_CREATED_DB WITH (FORCE)" >/dev/null 2>&1 || true
  fi
  stop_postgres "$KEEP"
  if [ "$KEEP" = 1 ]; then log "kept $TMP"; else rm -rf "$TMP"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'log "error: line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT
trap 'exit 143' TERM

now() { date +%s.%N; }

# --- build ---
log "building into $TMP"
if [ -n "$KBENCH_BIN" ]; then cp "$KBENCH_BIN" "$TMP/kbench"; else go build -o "$TMP/kbench" .; fi
go build -o "$TMP/capacity" ./bench/capacity
KB=$TMP/kbench
CAP=$TMP/capacity

# --- PostgreSQL ---
if [ -n "${KBENCH_BENCH_POSTGRES:-}" ]; then
  ADMIN_URL=$KBENCH_BENCH_POSTGRES
  PG_CREATED_DB=kbench_capacity_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
  psql -q "$ADMIN_URL" -c "CREATE DATABASE $PG_CREATED_DB" >/dev/null || die "could not create a database on KBENCH_BENCH_POSTGRES"
  # the same URL with the new database as its path
  DB=$(echo "$ADMIN_URL" | sed -E "s|^(postgres(ql)?://[^/]*)(/[^?]*)?|\1/$PG_CREATED_DB|")
  log "database $PG_CREATED_DB on KBENCH_BENCH_POSTGRES"
else
  start_postgres kbench-capacity "$PG_OPTS"
  log "PostgreSQL $(basename "$(dirname "$(pg_bin)")") at $DB ${PG_OPTS:+($PG_OPTS)}"
fi

# --- broker, server, workers ---
"$KB" broker --listen 127.0.0.1:0 >"$OUT/broker.out" 2>"$OUT/broker.log" &
BROKER_PID=$!
PIDS+=("$BROKER_PID")
BROKER=$(wait_line "$OUT/broker.out" 's/^kbench broker listening on \([^ ]*\).*/\1/p' "$BROKER_PID" "the broker")
log "broker pid $BROKER_PID on $BROKER"

"$KB" serve --listen 127.0.0.1:0 --database "$DB" --local-worker=false --allow-target "$BROKER" --data "$TMP/serve" \
  >"$OUT/serve.out" 2>"$OUT/serve.log" &
SERVE_PID=$!
PIDS+=("$SERVE_PID")
BASE=http://$(wait_line "$OUT/serve.out" 's|^kbench serving on http://\([^ ]*\) .*|\1|p' "$SERVE_PID" "the server")
log "server pid $SERVE_PID on $BASE"

# The workers start once the server has migrated the database: kbench's
# migrations do not expect to run twice at once on a fresh database.
WORKER_PIDS=()
WORKER_DIRS=()
for i in $(seq 1 "$WORKERS"); do
  "$KB" worker --database "$DB" --queue "$QUEUE" --data "$TMP/worker$i" --allow-target "$BROKER" \
    >"$OUT/worker$i.out" 2>"$OUT/worker$i.log" &
  WORKER_PIDS+=("$!")
  WORKER_DIRS+=("$TMP/worker$i")
  PIDS+=("$!")
done
for i in $(seq 1 "$WORKERS"); do
  wait_line "$OUT/worker$i.out" 's/^\(kbench worker on .*\)/\1/p' "${WORKER_PIDS[i - 1]}" "worker $i" >/dev/null
done
log "workers ${WORKER_PIDS[*]} on queue $QUEUE"

SUMMARY=$OUT/summary.json
echo '{}' >"$SUMMARY"
add() { jq --argjson v "$2" ".$1 = \$v" "$SUMMARY" >"$SUMMARY.tmp" && mv "$SUMMARY.tmp" "$SUMMARY"; }
add setup "$(jq -n --arg n "$N" --arg w "$WORKERS" --arg r "$RECORDS" --arg cores "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
  --arg pgopts "$PG_OPTS" \
  '{n: ($n | tonumber), workers: ($w | tonumber), records_per_run: ($r | tonumber), cores: ($cores | tonumber), loadavg_at_start: $load, pg_opts: $pgopts}')"

# --- capacity ---
if [[ ",$PARTS," == *",capacity,"* ]]; then
  log "measuring the server's idle CPU for $IDLE_S s"
  sleep 2
  I0=$(now); IS0=$(sum_ticks self "$SERVE_PID"); IW0=$(sum_ticks self "${WORKER_PIDS[@]}")
  sleep "$IDLE_S"
  I1=$(now); IS1=$(sum_ticks self "$SERVE_PID"); IW1=$(sum_ticks self "${WORKER_PIDS[@]}")

  "$CAP" dbsize -database "$DB" -out "$OUT/dbsize.tsv" >"$OUT/dbsize.json" &
  SAMPLER_PID=$!
  PIDS+=("$SAMPLER_PID")
  sleep 1
  C0=$(now); S0=$(sum_ticks self "$SERVE_PID"); W0=$(sum_ticks self "${WORKER_PIDS[@]}"); K0=$(sum_ticks children "${WORKER_PIDS[@]}")
  log "submitting $N runs to queue $QUEUE ($RECORDS records each, $PARALLEL requests in flight)"
  "$CAP" submit -base "$BASE" -n "$N" -queue "$QUEUE" -bootstrap "$BROKER" -records "$RECORDS" -parallel "$PARALLEL" \
    -label "capacity-$(basename "$OUT")" -out "$OUT/submitted.json" | tee "$OUT/submit.json" >&2
  "$CAP" wait -database "$DB" -submitted "$OUT/submitted.json" >"$OUT/wait.json"
  C1=$(now); S1=$(sum_ticks self "$SERVE_PID"); W1=$(sum_ticks self "${WORKER_PIDS[@]}"); K1=$(sum_ticks children "${WORKER_PIDS[@]}")
  sleep 1.5 # one more sample after the last run
  kill -TERM "$SAMPLER_PID"
  wait "$SAMPLER_PID" || true
  log "all $N runs final; verifying"
  verify_rc=0
  "$CAP" verify -database "$DB" -base "$BASE" -submitted "$OUT/submitted.json" \
    -data "$(IFS=,; echo "${WORKER_DIRS[*]}")" -pids "$(IFS=,; echo "${WORKER_PIDS[*]}")" \
    >"$OUT/verify.json" 2>"$OUT/verify.txt" || verify_rc=$?
  [ "$verify_rc" -eq 0 ] || cat "$OUT/verify.txt" >&2
  add capacity "$(jq -n --slurpfile v "$OUT/verify.json" --slurpfile s "$OUT/dbsize.json" \
    --argjson n "$N" --argjson hz "$HZ" \
    --argjson i0 "$I0" --argjson i1 "$I1" --argjson is0 "$IS0" --argjson is1 "$IS1" --argjson iw0 "$IW0" --argjson iw1 "$IW1" \
    --argjson c0 "$C0" --argjson c1 "$C1" --argjson s0 "$S0" --argjson s1 "$S1" --argjson w0 "$W0" --argjson w1 "$W1" \
    --argjson k0 "$K0" --argjson k1 "$K1" --argjson workers "$WORKERS" '
    ($i1 - $i0) as $idle_s | ($c1 - $c0) as $busy_s |
    (($is1 - $is0) / $hz / $idle_s) as $server_idle_rate |
    (($iw1 - $iw0) / $hz / $idle_s) as $workers_idle_rate |
    (($s1 - $s0) / $hz) as $server_cpu | (($w1 - $w0) / $hz) as $workers_cpu | (($k1 - $k0) / $hz) as $runs_cpu |
    $v[0] + {
      db_peak_bytes: $s[0].peak_bytes, db_after_bytes: $s[0].last_bytes,
      measured_seconds: $busy_s, idle_seconds: $idle_s,
      server_cpu_s: $server_cpu, server_idle_cpu_s_per_s: $server_idle_rate,
      server_cpu_ms_per_run: (($server_cpu - $server_idle_rate * $busy_s) * 1000 / $n),
      server_cpu_ms_per_run_raw: ($server_cpu * 1000 / $n),
      workers_cpu_s: $workers_cpu, workers_idle_cpu_s_per_s: $workers_idle_rate,
      workers_cpu_ms_per_run: (($workers_cpu - $workers_idle_rate * $busy_s) * 1000 / $n),
      run_children_cpu_ms_per_run: ($runs_cpu * 1000 / $n)
    }')"
  [ "$verify_rc" -eq 0 ] || die "verification failed: $(jq -c .capacity.violations "$SUMMARY")"
  jq -r '.capacity | "capacity: \(.n) runs on \(.per_worker_pid_db | length) workers in \(.wall_seconds * 10 | round / 10) s (first submit to last final): \(.runs_per_second * 100 | round / 100) runs/s; submitting took \(.submit_seconds * 100 | round / 100) s",
    "  statuses \(.statuses | tojson); per worker (pid: runs) \(.per_worker_pid_db | tojson); River jobs \(.river_jobs), each completed at attempt 1",
    "  database: peak \(.db_peak_bytes / 1048576 * 10 | round / 10) MiB (sampled every second), after \(.db_after_bytes / 1048576 * 10 | round / 10) MiB",
    "  server CPU: \(.server_cpu_ms_per_run * 100 | round / 100) ms per run (idle subtracted; \(.server_cpu_ms_per_run_raw * 100 | round / 100) ms raw, idle \(.server_idle_cpu_s_per_s * 1000 | round) ms/s)",
    "  workers CPU: \(.workers_cpu_ms_per_run * 100 | round / 100) ms per run (the 4 worker processes, idle subtracted); the runs themselves \(.run_children_cpu_ms_per_run * 10 | round / 10) ms per run"' \
    "$SUMMARY" | tee "$OUT/summary.txt" >&2
fi

# --- latency: submit -> child process started, idle workers ---
if [[ ",$PARTS," == *",latency,"* ]]; then
  log "latency on PostgreSQL: $LAT_N runs one at a time to idle workers"
  "$CAP" latency -base "$BASE" -queue "$QUEUE" -bootstrap "$BROKER" -records "$RECORDS" -n "$LAT_N" \
    -parents "$(IFS=,; echo "${WORKER_PIDS[*]}")" -label latency-postgres >"$OUT/latency-postgres.json"
  add latency_postgres "$(cat "$OUT/latency-postgres.json")"
  if [ "$SQLITE_PEER" = 1 ]; then
    "$KB" serve --listen 127.0.0.1:0 --allow-target "$BROKER" --data "$TMP/sqlite" \
      >"$OUT/serve-sqlite.out" 2>"$OUT/serve-sqlite.log" &
    SQLITE_PID=$!
    PIDS+=("$SQLITE_PID")
    SQLITE_BASE=http://$(wait_line "$OUT/serve-sqlite.out" 's|^kbench serving on http://\([^ ]*\) .*|\1|p' "$SQLITE_PID" "the SQLite server")
    log "latency on SQLite (serve pid $SQLITE_PID, its own worker): $LAT_N runs"
    "$CAP" latency -base "$SQLITE_BASE" -bootstrap "$BROKER" -records "$RECORDS" -n "$LAT_N" \
      -parents "$SQLITE_PID" -label latency-sqlite >"$OUT/latency-sqlite.json"
    add latency_sqlite "$(cat "$OUT/latency-sqlite.json")"
    stop "$SQLITE_PID"
  fi
  jq -r 'def ms: . * 10 | round / 10;
    def line(l): "\(l.submit_to_child_ms_median | ms) ms (min \(l.submit_to_child_ms_min | ms), max \(l.submit_to_child_ms_max | ms); created -> running \(l.created_to_running_ms_median | ms) ms)";
    "submit -> child process started, median of \(.latency_postgres.n): PostgreSQL \(line(.latency_postgres))"
    + (if .latency_sqlite then "; SQLite \(line(.latency_sqlite)); PostgreSQL/SQLite \(.latency_postgres.submit_to_child_ms_median / .latency_sqlite.submit_to_child_ms_median * 100 | round / 100)" else "" end)' \
    "$SUMMARY" | tee -a "$OUT/summary.txt" >&2
fi
log "results in $OUT"
