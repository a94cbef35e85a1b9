#!/usr/bin/env bash
# Runs every check kbench has, stopping at the first failure:
#  1. installs what the tests need when it is missing (Debian packages:
#     chromium for the browser tests, graphviz for the pprof graph view,
#     gcc for cgo, which the race detector and SQLite need);
#  2. gofmt; no committed file names an absolute path of one machine (a
#     temporary or home directory); `go mod tidy -diff`: go.mod and go.sum
#     must be tidy;
#  3. go vet, then staticcheck at a pinned version, which this script
#     installs with `go install` into its own cache directory (only the Go
#     module proxy needs to be reachable);
#  4. `go test -race ./...`: the race detector on every package, the
#     end-to-end browser tests included (arguments go to this go test);
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

go test -race -count=1 -timeout 15m "$@" ./...
# Fuzz the upload reader for a few seconds: it must accept exactly what
# pprof accepts, gzipped or not (go test -fuzz runs one target at a time).
go test -run '^$' -fuzz '^FuzzLoadUpload$' -fuzztime 5s ./profiles/
