#!/usr/bin/env bash
# First start: how long a fresh machine's `go run . serve` takes to answer
# its first page, and where that time goes.
#
#   bash bench/firststart/run.sh                      # 2 runs of HEAD
#   REVS="main HEAD" RUNS=3 bash bench/firststart/run.sh   # before/after, interleaved
#   PHASES=download REVS="main HEAD" bash bench/firststart/run.sh  # the download only
#
# Every run starts from nothing of its own: a fresh clone of the revision
# (committed state only), an empty module cache (GOMODCACHE), an empty build
# cache (GOCACHE) and GOPATH, all under one temporary directory that is
# deleted at the end. The shared caches of this machine are never read,
# written or cleared. GOPROXY is the environment's; GOFLAGS is the
# environment's without any -mod= flag (go.sum must be complete, as on a
# user's machine). Phases, each timed on its own:
#
#   download  `go list -deps .` of the main package: it fetches exactly what
#             the build of the binary needs (go.mod files of the pruned
#             module graph, zips of the modules that provide imported
#             packages), as `go run` does; bytes are the zips in the cache.
#   compile   `go build` of the binary with -debug-actiongraph (per-package
#             start and end times), with GOPROXY=off and -mod=readonly, so
#             it fails if the download phase missed anything.
#   start     `go run . serve` on a free loopback port and a data directory
#             of its own, timed from launch to the first 200 on /healthz and
#             then on / (`go run` links again; compiled packages are cached).
#
# See bench/README.md ("First start").
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

REVS=${REVS:-HEAD}           # revisions to measure; runs alternate between them
RUNS=${RUNS:-2}              # rounds; each measures every revision once
START_TIMEOUT=${START_TIMEOUT:-600}  # seconds to wait for the first page
OUT=${OUT:-bench/out/firststart-$(date -u +%Y%m%dT%H%M%SZ)}
KEEP=${KEEP:-0}              # 1: keep each run's temporary directory
PHASES=${PHASES:-all}        # all, or download (skip compile and start)

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TMPROOT=$(mktemp -d -t kbench-firststart.XXXXXX)
SERVER_PGID=""

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
now() { date +%s.%N; }
# cpu FILE CMD...: runs CMD, appending its user+sys CPU seconds (children
# included) to FILE; CPU is steadier than wall time on a shared machine.
cpu() {
  local f=$1; shift
  local TIMEFORMAT='%U %S'
  { time "$@" 2>&3 ; } 3>&2 2>> "$f.raw"
  awk '{printf "%.2f\n", $1 + $2}' "$f.raw" > "$f"
}
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.2f", b - a}'; }

stop_server() {
  if [ -n "$SERVER_PGID" ]; then
    # `go run` and the kbench it started share the process group setsid made.
    kill -INT -- "-$SERVER_PGID" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 -- "-$SERVER_PGID" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$SERVER_PGID" 2>/dev/null || true
    SERVER_PGID=""
  fi
}
cleanup() {
  local rc=$?
  stop_server
  if [ "$KEEP" = 1 ]; then log "kept $TMPROOT"; else chmod -R u+w "$TMPROOT" 2>/dev/null || true; rm -rf "$TMPROOT"; fi
  exit $rc
}
trap cleanup EXIT
trap 'log "error: line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT TERM

# The environment's GOFLAGS without -mod=... (a user's go run has none).
FLAGS=""
for f in $(go env GOFLAGS); do case "$f" in -mod=*) ;; *) FLAGS="$FLAGS $f" ;; esac; done
FLAGS=${FLAGS# }
PROXY=$(go env GOPROXY)
log "go $(go env GOVERSION), GOPROXY=$PROXY, GOFLAGS='$FLAGS', $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

echo "$REVS" > "$OUT/revs.txt" # the order summarize prints them in
# Resolve every revision once, in the work tree's repository.
declare -A COMMIT
for r in $REVS; do COMMIT[$r]=$(git rev-parse --verify "$r^{commit}"); done

# measure REV N: one fresh run of revision REV, results in $OUT/REV-N/.
measure() {
  local rev=$1 n=$2 commit=${COMMIT[$1]}
  local name; name=$(echo "$rev" | tr -c 'A-Za-z0-9._\n-' '_')-$n
  local res=$OUT/$name t=$TMPROOT/$name
  mkdir -p "$res" "$t/gopath" "$t/data"
  log "run $name: $rev ($(git rev-parse --short "$commit"))"
  git clone --quiet --no-checkout "$ROOT" "$t/src"
  git -C "$t/src" checkout --quiet --detach "$commit"

  local -a env=(env "GOPATH=$t/gopath" "GOMODCACHE=$t/gopath/pkg/mod" "GOCACHE=$t/gocache"
    "GOFLAGS=$FLAGS" "GOPROXY=$PROXY")
  local loadavg; loadavg=$(cut -d' ' -f1 /proc/loadavg)

  # --- download ---
  local t0; t0=$(now)
  (cd "$t/src" && cpu "$res/download.cpu" "${env[@]}" go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' . \
    | sort -u > "$res/build-modules.txt") 2> "$res/download.log" || die "download: $(tail -5 "$res/download.log")"
  local dl; dl=$(since "$t0")
  (cd "$t/gopath/pkg/mod/cache/download" && find . -name '*.zip' -printf '%s %P\n' | sort -n) > "$res/zips.txt"
  (cd "$t/gopath/pkg/mod/cache/download" && find . -name '*.mod' -printf '%s %P\n' | sort -n) > "$res/mods.txt"

  local cc="" health="" page=""
  if [ "$PHASES" = download ]; then
    printf 'rev\tcommit\trun\tload1\tdownload_s\tcompile_s\tstart_healthz_s\tstart_page_s\n%s\t%s\t%s\t%s\t%s\t-\t-\t-\n' \
      "$rev" "$commit" "$n" "$loadavg" "$dl" > "$res/phases.tsv"
    log "run $name: download ${dl} s (compile and start skipped)"
    if [ "$KEEP" != 1 ]; then chmod -R u+w "$t"; rm -rf "$t"; fi
    return
  fi

  # --- compile ---
  t0=$(now)
  (cd "$t/src" && cpu "$res/compile.cpu" "${env[@]}" GOPROXY=off GOFLAGS="$FLAGS -mod=readonly" \
    go build -debug-actiongraph="$res/actiongraph.json" -o "$t/kbench" .) > "$res/compile.log" 2>&1 \
    || die "compile: $(tail -5 "$res/compile.log")"
  cc=$(since "$t0")

  # --- start ---
  t0=$(now)
  (cd "$t/src" && exec setsid "${env[@]}" GOPROXY=off GOFLAGS="$FLAGS -mod=readonly" \
    go run . serve --listen 127.0.0.1:0 --data "$t/data") > "$res/server.out" 2> "$res/server.log" &
  SERVER_PGID=$!
  local addr="" deadline=$(( $(date +%s) + START_TIMEOUT ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    [ -z "$addr" ] && addr=$(sed -n 's|^kbench serving on http://\([^ ]*\) .*|\1|p' "$res/server.out" 2>/dev/null || true)
    if [ -n "$addr" ]; then
      if [ -z "$health" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' -m 5 "http://$addr/healthz")" = 200 ]; then health=$(since "$t0"); fi
      if [ -n "$health" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' -m 10 "http://$addr/")" = 200 ]; then page=$(since "$t0"); break; fi
    fi
    kill -0 "$SERVER_PGID" 2>/dev/null || die "the server exited: $(tail -5 "$res/server.log")"
    sleep 0.05
  done
  [ -n "$page" ] || die "no 200 on / within ${START_TIMEOUT} s"
  stop_server

  printf 'rev\tcommit\trun\tload1\tdownload_s\tcompile_s\tstart_healthz_s\tstart_page_s\n%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "$rev" "$commit" "$n" "$loadavg" "$dl" "$cc" "$health" "$page" > "$res/phases.tsv"
  log "run $name: download ${dl} s, compile ${cc} s, first /healthz ${health} s, first / ${page} s"
  if [ "$KEEP" != 1 ]; then chmod -R u+w "$t"; rm -rf "$t"; fi
}

for n in $(seq 1 "$RUNS"); do
  # Alternate the order each round so neither revision always runs first.
  revs=$REVS
  if [ $((n % 2)) = 0 ]; then revs=$(echo "$REVS" | tr ' ' '\n' | tac | tr '\n' ' '); fi
  for r in $revs; do measure "$r" "$n"; done
done

go run ./bench/firststart/summarize "$OUT" | tee "$OUT/report.txt"
log "results in $OUT"
