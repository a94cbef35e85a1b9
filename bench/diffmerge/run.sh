#!/usr/bin/env bash
# The merged diff of 10 + 10 runs against one pairwise diff, both of the
# large public CPU profile (../shared/public-data/pprof-large-cpu.pb.gz),
# interleaved: each round runs profiles' BenchmarkDiffLarge (one base
# against one target) and BenchmarkDiffRunsLarge (ten runs a side,
# normalised and merged by profiles.DiffRuns) once each, alternating which
# goes first, then prints each side's median and the median of the
# per-round ratios with their spread. See bench/README.md.
#
#   bash bench/diffmerge/run.sh             # 7 rounds
#   ROUNDS=15 bash bench/diffmerge/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

ROUNDS=${ROUNDS:-7}
TMP=$(mktemp -d -t kbench-diffmerge.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

go test -c -o "$TMP/profiles.test" ./profiles
run() { # run BENCH: one op of it, its ns/op on stdout
  (cd profiles && "$TMP/profiles.test" -test.run '^$' -test.bench "^$1\$" -test.benchtime 1x -test.count 1) |
    awk -v b="$1" '$1 ~ "^"b"(-[0-9]+)?$" { for (i = 2; i <= NF; i++) if ($(i+1) == "ns/op") { print $i; exit } }'
}
: >"$TMP/rounds"
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then
    pair=$(run BenchmarkDiffLarge); merged=$(run BenchmarkDiffRunsLarge)
  else
    merged=$(run BenchmarkDiffRunsLarge); pair=$(run BenchmarkDiffLarge)
  fi
  echo "$pair $merged" >>"$TMP/rounds"
  awk -v r="$r" -v p="$pair" -v m="$merged" 'BEGIN { printf "round %d: pairwise %.0f ms, merged 10+10 %.0f ms, ratio %.2f\n", r, p / 1e6, m / 1e6, m / p }'
done
awk '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  { p[NR] = $1; m[NR] = $2; r[NR] = $2 / $1 }
  END {
    n = NR; mp = median(p, n); mm = median(m, n); mr = median(r, n)
    printf "\n%d rounds, interleaved\n", n
    printf "pairwise diff (1 + 1):  median %.0f ms (min %.0f, max %.0f)\n", mp / 1e6, p[1] / 1e6, p[n] / 1e6
    printf "merged diff (10 + 10):  median %.0f ms (min %.0f, max %.0f)\n", mm / 1e6, m[1] / 1e6, m[n] / 1e6
    printf "merged / pairwise:      median of per-round ratios %.2f× (min %.2f, max %.2f); ratio of medians %.2f×\n", mr, r[1], r[n], mm / mp
  }' "$TMP/rounds"
