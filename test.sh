#!/usr/bin/env bash
# Runs kbench's whole test suite. Installs what the tests need when it is
# missing (Debian packages: chromium for browser tests, graphviz for the
# pprof graph view), then runs `go test ./...` with the race detector on
# the packages that use goroutines.
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
go vet ./...
go test -race -count=1 -timeout 15m "$@" ./...
# Fuzz the upload reader for a few seconds: it must accept exactly what
# pprof accepts, gzipped or not (go test -fuzz runs one target at a time).
go test -run '^$' -fuzz '^FuzzLoadUpload$' -fuzztime 5s ./profiles/
