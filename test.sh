#!/usr/bin/env bash
# Runs every check kbench has, stopping at the first failure:
#  1. installs what the tests need when it is missing (Debian packages:
#     chromium for the browser tests, graphviz for the pprof graph view,
#     gcc for cgo, which the race detector and SQLite need,
#     openjdk-17-jdk-headless for the JVM tests, which then run with
#     KBENCH_REQUIRE_JDK=1 and fail rather than skip without it);
#  2. gofmt; no committed file names an absolute path of one machine (a
#     temporary or home directory); `go mod tidy -diff`: go.mod and go.sum
#     must be tidy;
#  3. go vet, then staticcheck at a pinned version, which this script
#     installs with `go install` into its own cache directory (only the Go
#     module proxy needs to be reachable);
#  4. `go test -race ./...`: the race detector on every package, the
#     end-to-end browser tests included (arguments go to this go test),
#     with a throwaway PostgreSQL cluster (Debian's postgresql, installed
#     when missing) for the tests that run on both SQLite and PostgreSQL:
#     initdb in a temporary directory, a free loopback port, as the
#     postgres user when run as root (PostgreSQL refuses root); its URL in
#     KBENCH_TEST_POSTGRES and KBENCH_REQUIRE_POSTGRES=1, so that those
#     tests fail rather than skip; stopped and removed on exit, also on
#     failure or interruption; beside it, the packages whose tests open
#     a store (server, internal/store, internal/lifecycle, …) again with
#     KBENCH_TEST_BACKEND=postgres, their stores on PostgreSQL;
#  5. fuzzes the profile-upload reader for 5 s.
# govulncheck is not run: it needs the Go vulnerability database, which
# the machines this runs on cannot always reach; leave it to a CI with
# internet access.
set -euo pipefail
cd "$(dirname "$0")"

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v dot >/dev/null 2>&1 || need+=(graphviz)
command -v gcc >/dev/null 2>&1 || need+=(gcc) # cgo: the race detector and SQLite
# The JVM side (Java strategies, JFR conversion): java, javac and jfr.
{ command -v java && command -v javac && command -v jfr; } >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1; }
[ -x "$(pg_bin)/initdb" ] || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "test.sh: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "test.sh: missing ${need[*]}; install them (sudo apt-get install ${need[*]}) or run as root" >&2
    exit 1
  fi
fi

gofmt_out=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$gofmt_out" ]; then
  echo "test.sh: gofmt would change:" >&2
  echo "$gofmt_out" >&2
  exit 1
fi
# No committed file names a path of one machine: tests use t.TempDir(),
# scripts mktemp -t, documents paths relative to the repository.
if paths=$(git grep -nE '(^|[^A-Za-z0-9_.~-])/(work|tmp|home|root|Users)/' 2>/dev/null); then
  echo "test.sh: these lines name an absolute path of one machine:" >&2
  echo "$paths" >&2
  exit 1
fi
if ! tidy=$(go mod tidy -diff 2>&1); then
  echo "test.sh: go.mod/go.sum are not tidy (run go mod tidy and commit the result); go mod tidy -diff says:" >&2
  echo "$tidy" >&2
  exit 1
fi

go vet ./...

# staticcheck, built once per version and Go toolchain: a staticcheck built
# by an older Go cannot load code written for a newer one.
staticcheck_version=v0.8.2
tools="${KBENCH_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kbench-tools}/staticcheck-$staticcheck_version-$(go env GOVERSION)"
if [ ! -x "$tools/staticcheck" ]; then
  echo "test.sh: installing staticcheck $staticcheck_version into $tools"
  # GOFLAGS such as -mod=vendor do not apply to go install pkg@version.
  GOBIN="$tools" GOFLAGS= go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
fi
if ! "$tools/staticcheck" ./...; then
  echo "test.sh: staticcheck $staticcheck_version found the problems above" >&2
  exit 1
fi

# A throwaway PostgreSQL cluster for the tests that run on both backends.
pg_dir=""
pg_pass=""
acceptance=""
pg_stop() {
  # The PostgreSQL pass and the acceptance tests run in the background:
  # they end with the script.
  if [ -n "$pg_pass" ]; then
    kill "$pg_pass" 2>/dev/null || true
  fi
  if [ -n "$acceptance" ]; then
    kill "$acceptance" 2>/dev/null || true
  fi
  if [ -n "$pg_dir" ]; then
    as_pg "$(pg_bin)/pg_ctl" -D "$pg_dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$pg_dir"
    pg_dir=""
  fi
}
trap pg_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# PostgreSQL refuses to run as root: as root, run it as the postgres user
# (which Debian's package creates).
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
pg_dir=$(mktemp -d -t kbench-pg.XXXXXX)
if [ "$(id -u)" -eq 0 ]; then chown postgres "$pg_dir"; fi
as_pg "$(pg_bin)/initdb" -D "$pg_dir/data" -A trust -U kbench -E UTF8 --no-sync >"$pg_dir/initdb.log" 2>&1 ||
  { cat "$pg_dir/initdb.log" >&2; echo "test.sh: initdb failed" >&2; exit 1; }
pg_port=""
for _ in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 40000))
  # Taken if something answers there; a race with another process
  # taking it meanwhile makes pg_ctl fail, and the next port is tried.
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
  if as_pg "$(pg_bin)/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
    -o "-k $pg_dir -p $port -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >/dev/null; then
    pg_port=$port
    break
  fi
done
if [ -z "$pg_port" ]; then
  cat "$pg_dir/server.log" >&2 || true
  echo "test.sh: could not start PostgreSQL" >&2
  exit 1
fi
export KBENCH_TEST_POSTGRES="postgres://kbench@127.0.0.1:$pg_port/postgres?sslmode=disable"
export KBENCH_REQUIRE_POSTGRES=1
# A JDK is installed above: the tests that need one fail rather than skip.
export KBENCH_REQUIRE_JDK=1

# The packages whose tests open a store, a second time on PostgreSQL:
# under KBENCH_TEST_BACKEND=postgres the server's newTestServer, the
# store's own tests outside eachBackend, the lifecycle's test
# environments, the launcher's, the regressions cache's and notifier's
# and the worker command's open their stores there (pgtest.DSN), so those
# tests also run on the shared-database backend (the server's take 2 to 4
# minutes). internal/jobs needs no second pass: its tests run on both
# backends. This pass runs beside the first, not after it: the suite
# waits on processes, brokers and databases far more than it computes
# (about 17 CPU-minutes in 20 minutes on 2 cores when run one after the
# other), so side by side they end minutes sooner. Its output follows
# the first's. It skips the server's slowest tests whose work ends before
# any store does (a decompression bomb's or a too-deep stack's refusal,
# the Host check, the client-file refusal, the form's round trips, the
# JVM's write paths): they test the same code on either backend, and
# the first pass runs them.
#
# The server's tests run there without the race detector: its handlers'
# concurrency is the same on either backend and the first pass checks it
# under -race, while the code that is PostgreSQL's own (the store, the
# lifecycle's sharing, listening and reaping, the launcher's fleets)
# keeps -race in this pass too. Under -race the server's pass alone cost
# more CPU than any other package (761 s beside the rest, 143 s without
# it on an idle machine), and the suite went past 25 minutes.
pg_pass_log=$(mktemp -t kbench-pg-pass.XXXXXX)
pg_skip='^(TestUploadBombs|TestUploadDepthLimit|TestHostCheckAgainstDNSRebinding|TestClientFilesNeverOpenedByTheServer|TestNewRunFormConfigurations|TestWritepathPresetJava)$'
(
  KBENCH_TEST_BACKEND=postgres go test -count=1 -timeout 15m -skip "$pg_skip" "$@" ./server/ >"$pg_pass_log.server" 2>&1 &
  server=$!
  status=0
  KBENCH_TEST_BACKEND=postgres go test -race -count=1 -timeout 15m "$@" ./internal/store/ ./internal/lifecycle/ \
    ./internal/launch/ ./internal/regressions/... ./internal/cli/ || status=1
  wait "$server" || status=1
  cat "$pg_pass_log.server"
  rm -f "$pg_pass_log.server"
  exit "$status"
) >"$pg_pass_log" 2>&1 &
pg_pass=$!
# acceptance/ is the longest package and mostly waits on the processes,
# databases and browsers it starts: it runs beside the other packages
# rather than holding one of go test's two package slots throughout, which
# left the server's and the runner's tests (the next longest) to start
# only once nearly everything else had ended. Its tests that wait on real
# runs (A/B, write paths, sweeps, workers, fleets, bombs) are parallel,
# four at a time: the suite used about 1.3 of the 2 cores on average.
acceptance_log=$(mktemp -t kbench-acceptance.XXXXXX)
go test -race -count=1 -timeout 15m -parallel 4 "$@" ./acceptance/ >"$acceptance_log" 2>&1 &
acceptance=$!
first=0
# shellcheck disable=SC2046 # one package path per word
go test -race -count=1 -timeout 15m "$@" $(go list ./... | grep -v '/acceptance$') || first=$?
wait "$acceptance" || first=1
acceptance=""
cat "$acceptance_log"
rm -f "$acceptance_log"
second=0
wait "$pg_pass" || second=$?
pg_pass=""
echo "--- the same packages on PostgreSQL (KBENCH_TEST_BACKEND=postgres):"
cat "$pg_pass_log"
rm -f "$pg_pass_log"
if [ "$first" -ne 0 ] || [ "$second" -ne 0 ]; then
  echo "test.sh: go test failed (SQLite pass exit $first, PostgreSQL pass exit $second)" >&2
  exit 1
fi
# Fuzz the upload reader for a few seconds: it must accept exactly what
# pprof accepts, gzipped or not (go test -fuzz runs one target at a time).
go test -run '^$' -fuzz '^FuzzLoadUpload$' -fuzztime 5s ./profiles/
# And the JFR converter, which reads the JSON the JDK's jfr tool prints.
go test -run '^$' -fuzz '^FuzzConvert$' -fuzztime 5s ./profiles/jfr/
