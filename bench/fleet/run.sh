#!/usr/bin/env bash
# Fleet coordination benchmark (issue 27): one throwaway PostgreSQL, one
# `kbench broker`, `kbench serve --local-worker=false` and WORKERS
# `kbench worker` processes on this machine (loopback only); ROUNDS
# producer fleets and ROUNDS e2e fleets of WORKERS shards each. On two
# cores it measures coordination, not scaling: the barrier's skew, submit
# to the common start, and the server's and the database's CPU per shard.
#
#   bash bench/fleet/run.sh                 # 4 workers, 5 rounds of each workload
#   ROUNDS=2 bash bench/fleet/run.sh        # a quick look
#   SHOT=docs/images/fleet-run.png ROUNDS=1 bash bench/fleet/run.sh
#                                           # and a screenshot of the last
#                                           # producer fleet's page (Chromium)
#
# Each round's figures are in $OUT/<workload>.jsonl, the summaries
# (medians, minima and maxima over the rounds) in $OUT/summary.json.
set -euo pipefail
cd "$(dirname "$0")/../.."

WORKERS=${WORKERS:-4}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5}     # each fleet's window, seconds
RATE=${RATE:-4000}          # each fleet's records/s, divided among its shards
QUEUE=fleet
OUT=${OUT:-bench/out/fleet-$(date -u +%Y%m%dT%H%M%SZ)}
KEEP=${KEEP:-0}

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TMP=$(mktemp -d -t kbench-fleet.XXXXXX)
PIDS=()

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
# shellcheck source=bench/lib/cluster.sh
. bench/lib/cluster.sh

cleanup() {
  local rc=$? i
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop "${PIDS[i]}"; done
  stop_postgres "$KEEP"
  if [ "$KEEP" = 1 ]; then log "kept $TMP"; else rm -rf "$TMP"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "building into $TMP"
go build -o "$TMP/kbench" .
go build -o "$TMP/fleet" ./bench/fleet
KB=$TMP/kbench

start_postgres kbench-fleet
PM_PID=$(head -n1 "$PG_DIR/data/postmaster.pid")
log "PostgreSQL at $DB (postmaster $PM_PID)"

"$KB" broker --listen 127.0.0.1:0 >"$OUT/broker.out" 2>"$OUT/broker.log" &
PIDS+=("$!")
BROKER=$(wait_line "$OUT/broker.out" 's/^kbench broker listening on \([^ ]*\).*/\1/p' "$!" "the broker")

"$KB" serve --listen 127.0.0.1:0 --database "$DB" --local-worker=false --allow-target "$BROKER" --data "$TMP/serve" \
  >"$OUT/serve.out" 2>"$OUT/serve.log" &
SERVE_PID=$!
PIDS+=("$SERVE_PID")
BASE=http://$(wait_line "$OUT/serve.out" 's|^kbench serving on http://\([^ ]*\) .*|\1|p' "$SERVE_PID" "the server")

# The workers start once the server has migrated the database.
for i in $(seq 1 "$WORKERS"); do
  "$KB" worker --database "$DB" --queue "$QUEUE" --data "$TMP/worker$i" --allow-target "$BROKER" \
    >"$OUT/worker$i.out" 2>"$OUT/worker$i.log" &
  PIDS+=("$!")
  wait_line "$OUT/worker$i.out" 's/^\(kbench worker on .*\)/\1/p' "$!" "worker $i" >/dev/null
done
log "broker $BROKER, server $BASE (pid $SERVE_PID), $WORKERS workers on queue $QUEUE; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

for workload in producer e2e; do
  log "$ROUNDS $workload fleets of $WORKERS shards, $RATE records/s for $DURATION s"
  "$TMP/fleet" -base "$BASE" -queue "$QUEUE" -bootstrap "$BROKER" -workload "$workload" -workers "$WORKERS" -rounds "$ROUNDS" \
    -duration "$DURATION" -rate "$RATE" -server-pid "$SERVE_PID" -postmaster-pid "$PM_PID" -out "$OUT/$workload.jsonl" \
    >"$OUT/$workload.summary.json"
done
jq -s '.' "$OUT/producer.summary.json" "$OUT/e2e.summary.json" | tee "$OUT/summary.json"
if [ -n "${SHOT:-}" ]; then
  # The page of the last producer fleet, as a user sees it after the run.
  parent=$(tail -n1 "$OUT/producer.jsonl" | jq -r .run_id)
  case "$SHOT" in /*) ;; *) SHOT=$(pwd)/$SHOT ;; esac
  mkdir -p "$(dirname "$SHOT")"
  chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync \
    --no-first-run --hide-scrollbars --window-size=1280,1500 --screenshot="$SHOT" "$BASE/runs/$parent" >/dev/null 2>&1 ||
    die "chromium could not take the screenshot"
  log "screenshot of run $parent's page in $SHOT"
fi
log "results in $OUT"
