#!/usr/bin/env bash
# Pages at scale: the runs list, GET /api/runs, a comparison of 50 runs ×
# 60 metrics and a report of 20 runs over 100,000 stored runs, on SQLite
# and on PostgreSQL, server time (bench/serve/scale, in process).
#
#   bash bench/serve/scale.sh                          # the work tree, both backends
#   REVS="d724cdf ." bash bench/serve/scale.sh         # a revision against the work tree
#   BACKENDS=sqlite ROUNDS=1 N=20 bash bench/serve/scale.sh   # quick
#
# Each backend's history is seeded once (by the first of REVS), then every
# measurement opens a fresh copy of it (a copied file; a database made
# from it as a template), so each revision migrates and reads the same
# data. Revisions and rounds alternate: round 1 runs REVS in order, round
# 2 in reverse, and so on. PostgreSQL is a throwaway cluster in a
# temporary directory (Debian's postgresql; run as root, it runs as the
# postgres user), or the server KBENCH_TEST_POSTGRES names.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

RUNS=${RUNS:-100000}        # stored runs
DISTINCT=${DISTINCT:-5000}  # of them generated one by one; the rest bulk copies
N=${N:-60}                  # measured requests per URL and round
WARMUP=${WARMUP:-5}         # unmeasured requests per URL first
ROUNDS=${ROUNDS:-3}
REVS=${REVS:-.}             # revisions to measure; "." is the work tree
BACKENDS=${BACKENDS:-sqlite postgres}
OUT=${OUT:-bench/serve/out/scale-$(date -u +%Y%m%dT%H%M%SZ)}
KEEP=${KEEP:-0}             # 1: keep the temporary directory (seeded databases)
PAGES=${PAGES:-}            # a regular expression: measure only the pages it matches

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TMP=$(mktemp -d -t kbench-scale.XXXXXX)
PGDIR=""
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
cleanup() {
  local rc=$?
  if [ -n "$PGDIR" ]; then
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDIR" -m immediate stop > /dev/null 2>&1 || true
  fi
  if [ "$KEEP" = 1 ]; then log "kept $TMP"; else rm -rf "$TMP"; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- build the harness once per revision ---
i=0
declare -a BINS NAMES
for rev in $REVS; do
  if [ "$rev" = . ]; then
    name=worktree
    (go build -o "$TMP/scale-$i" ./bench/serve/scale)
  else
    name=$(git rev-parse --short "$rev")
    src=$TMP/src-$i
    mkdir -p "$src"
    git archive "$rev" | tar -x -C "$src"
    rm -rf "$src/bench/serve/scale" "$src/bench/serve/fixture"
    cp -r "$ROOT/bench/serve/scale" "$ROOT/bench/serve/fixture" "$src/bench/serve/"
    (cd "$src" && go build -o "$TMP/scale-$i" ./bench/serve/scale)
  fi
  BINS[$i]=$TMP/scale-$i
  NAMES[$i]=$name
  log "built the harness for $name"
  i=$((i + 1))
done
COUNT=$i

# --- PostgreSQL ---
PGBASE=${KBENCH_TEST_POSTGRES:-}
if [[ " $BACKENDS " == *" postgres "* ]] && [ -z "$PGBASE" ]; then
  PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -x "$PGBIN/initdb" ] || die "no PostgreSQL (apt-get install postgresql), and KBENCH_TEST_POSTGRES is unset"
  PGDIR=$TMP/pg
  chmod 755 "$TMP" # mktemp's 700 would keep the postgres user out
  mkdir -p "$PGDIR" && chown postgres "$PGDIR" && chmod 700 "$PGDIR"
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  runuser -u postgres -- "$PGBIN/initdb" -D "$PGDIR" -A trust -U kbench > "$TMP/initdb.log"
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDIR" -l "$PGDIR/log" -w \
    -o "-k $PGDIR -p $PORT -c listen_addresses=127.0.0.1 -c shared_buffers=256MB" start > /dev/null
  PGBASE="postgres://kbench@127.0.0.1:$PORT/postgres?sslmode=disable"
  log "PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on port $PORT"
fi
pg_url() { echo "$PGBASE" | sed -E "s|/[^/?]*(\\?\|$)|/$1\\1|"; }
psql_do() { psql "$PGBASE" -v ON_ERROR_STOP=1 -qAt -c "$1"; }

# --- seed each backend once ---
for b in $BACKENDS; do
  log "seeding $b with $RUNS runs"
  if [ "$b" = sqlite ]; then
    "${BINS[0]}" -dsn "$TMP/seed.db" -runs "$RUNS" -distinct "$DISTINCT" -seed-only
  else
    psql_do "DROP DATABASE IF EXISTS kbench_scale_seed WITH (FORCE)"
    psql_do "CREATE DATABASE kbench_scale_seed"
    "${BINS[0]}" -dsn "$(pg_url kbench_scale_seed)" -runs "$RUNS" -distinct "$DISTINCT" -seed-only
  fi
done

# --- measure ---
for round in $(seq 1 "$ROUNDS"); do
  order=$(seq 0 $((COUNT - 1)))
  [ $((round % 2)) = 0 ] && order=$(echo "$order" | tac)
  for i in $order; do
    for b in $BACKENDS; do
      log "round $round: ${NAMES[$i]} on $b"
      if [ "$b" = sqlite ]; then
        cp "$TMP/seed.db" "$TMP/run.db"
        dsn=$TMP/run.db
      else
        psql_do "DROP DATABASE IF EXISTS kbench_scale_run WITH (FORCE)"
        psql_do "CREATE DATABASE kbench_scale_run TEMPLATE kbench_scale_seed"
        dsn=$(pg_url kbench_scale_run)
        # A copy has the template's statistics but an empty visibility
        # map until vacuumed, as a store autovacuum has been through has.
        psql "$dsn" -qAt -c "VACUUM ANALYZE" > /dev/null
      fi
      "${BINS[$i]}" -dsn "$dsn" -n "$N" -warmup "$WARMUP" -label "${NAMES[$i]}" -pages "$PAGES" -json "$OUT/results.jsonl" -quiet \
        | tee -a "$OUT/tables.txt"
      rm -f "$TMP/run.db" "$TMP/run.db-wal" "$TMP/run.db-shm"
    done
  done
done

# --- medians over the rounds ---
jq -rs --argjson revs "$(printf '%s\n' "${NAMES[@]}" | jq -R . | jq -s .)" '
  def median: sort | if length == 0 then null elif length % 2 == 1 then .[(length / 2 | floor)] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  group_by([.backend, .name, .mode])
  | map({backend: .[0].backend, name: .[0].name, mode: .[0].mode, target: .[0].target_ms,
         by: (group_by(.label) | map({key: .[0].label, value: (map(.median_ms) | median)}) | from_entries),
         cpu: (group_by(.label) | map({key: .[0].label, value: (map(.cpu_ms) | median)}) | from_entries)})
  | (["backend", "page", "mode", "target ms"] + ($revs | map("median ms " + .)) + ($revs | map("cpu ms " + .))
     + (if ($revs | length) > 1 then ["first/last"] else [] end) | @tsv),
    (.[] | . as $row
      | [$row.backend, $row.name, $row.mode, $row.target] + ($revs | map($row.by[.] // "—")) + ($revs | map($row.cpu[.] // "—"))
        + (if ($revs | length) > 1 and ($row.by[$revs[0]] != null) and ($row.by[$revs[-1]] != null)
           then [(($row.by[$revs[0]] / $row.by[$revs[-1]]) * 10 | round / 10 | tostring) + "×"] else [] end)
      | map(tostring) | @tsv)' "$OUT/results.jsonl" | column -t -s $'\t' | tee "$OUT/summary.txt"
log "results in $OUT"
