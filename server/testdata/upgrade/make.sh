#!/usr/bin/env bash
# Makes kbench-0002.db: a database written by a real `kbench serve` at
# schema 0002_ab_batch, with runs of every kind a user makes (launched
# producer, consumer and write-path runs, a repetition group, an A/B pair,
# a failed and a canceled run, imported Kafka output with a profile, an
# import of profiles alone) and a report. TestUpgradeKeepsPages opens a
# copy with today's code and checks that every page, export and API answer
# of those runs is what the code of that time served (the golden files
# beside it). Run from the repository's root:
#
#   bash server/testdata/upgrade/make.sh
#
# It was run once, at the commit that added it; running it again makes a
# database of today's schema, so the fixture is kept as it was made.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=server/testdata/upgrade
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

go build -o "$work/kbench" .
# A port nothing listens on: the failed run's target.
closed=127.0.0.1:1
"$work/kbench" serve --listen 127.0.0.1:0 --data "$work/data" --allow-target "$closed" >"$work/serve.out" 2>"$work/serve.err" &
pid=$!
for _ in $(seq 300); do
  addr=$(sed -n 's#^kbench serving on http://\([^ ]*\) .*#\1#p' "$work/serve.out")
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "kbench serve did not start" >&2; cat "$work/serve.err" >&2; exit 1; }
api=http://$addr

post() { curl -sf -X POST "$api$1" -H 'Content-Type: application/json' -d "$2"; }
wait_done() {
  for id in "$@"; do
    for _ in $(seq 1200); do
      st=$(curl -sf "$api/api/runs/$id" | sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' | head -1)
      case "$st" in succeeded|failed|canceled|interrupted) break ;; esac
      sleep 0.25
    done
  done
}
ids() { grep -o '"id":[0-9]*' | cut -d: -f2 | sort -un | paste -sd' '; }

small='"num-records": 3000, "record-size": 128, "throughput": -1, "warmup-records": 0, "profile": ["cpu"]'
group=$(post /api/runs "{\"workload\":\"producer\",\"label\":\"trunk\",\"repetitions\":2,\"params\":{$small}}" | ids)
ab=$(post /api/runs "{\"workload\":\"producer\",\"repetitions\":2,\"configs\":[
  {\"label\":\"none\",\"params\":{$small}},
  {\"label\":\"lz4\",\"params\":{$small, \"producer-props\":[\"compression.type=lz4\"]}}]}" | ids)
consumer=$(post /api/runs '{"workload":"consumer","label":"assign","params":{"messages":3000,"mode":"assign","record-size":128,"profile":["cpu"]}}' | ids)
writepath=$(post /api/runs '{"workload":"writepath","label":"gather","params":{"sink":true,"strategy":"gather","requests":300,"records-per-request":8,"record-size":64}}' | ids)
failed=$(post /api/runs "{\"workload\":\"producer\",\"label\":\"unreachable\",\"params\":{\"num-records\":100},\"target\":{\"bootstrap_server\":\"$closed\"}}" | ids)
wait_done $group $ab $consumer $writepath $failed
canceled=$(post /api/runs '{"workload":"producer","label":"canceled","params":{"num-records":50000000,"throughput":10}}' | ids)
sleep 1
curl -sf -X POST "$api/api/runs/$canceled/cancel" >/dev/null
wait_done $canceled

cat >"$work/producer.txt" <<'TXT'
49993 records sent, 9996.6 records/sec (0.95 MB/sec), 2.4 ms avg latency, 152.0 ms max latency.
50009 records sent, 10001.8 records/sec (0.95 MB/sec), 1.1 ms avg latency, 12.0 ms max latency.
100000 records sent, 9998.200324 records/sec (0.95 MB/sec), 1.74 ms avg latency, 152.00 ms max latency, 1 ms 50th, 3 ms 95th, 9 ms 99th, 120 ms 99.9th.
TXT
cat >"$work/stacks.folded" <<'TXT'
java.lang.Thread.run;org.apache.kafka.clients.producer.internals.Sender.run;sun.nio.ch.SocketChannelImpl.write;sun.nio.ch.IOUtil.write;sun.nio.ch.FileDispatcherImpl.writev0 40
java.lang.Thread.run;org.apache.kafka.clients.producer.internals.Sender.run;org.apache.kafka.common.record.MemoryRecordsBuilder.append 25
java.lang.Thread.run;org.apache.kafka.clients.producer.KafkaProducer.send 35
TXT
first() { grep -o '"id":[0-9]*' | head -1 | cut -d: -f2; } # a run's id comes before its profiles'
imported=$(curl -sf -F label=java-trunk -F output=@"$work/producer.txt" -F profile=@"$work/stacks.folded" "$api/api/import" | first)
profonly=$(curl -sf -F label=java-stacks -F profile=@"$work/stacks.folded" "$api/api/import" | first)
g=$(echo $group | tr ' ' ','); g=${g%,}
slug=$(post /api/reports "{\"title\":\"trunk vs A/B\",\"runs\":[${g}],\"by\":\"run\",\"notes\":\"**Fixture** for the upgrade test: two repetitions of trunk.\"}" | sed -n 's/.*"slug":"\([^"]*\)".*/\1/p')
[ -n "$slug" ] || { echo "report not created" >&2; exit 1; }

kill -INT "$pid"; wait "$pid" || true
cp "$work/data/kbench.db" "$out/kbench-0002.db"
go run ./server/testdata/upgrade/vacuum "$out/kbench-0002.db"
cat >"$out/runs.json" <<JSON
{"group": [$(echo $group | tr ' ' ',' | sed 's/,$//')], "ab": [$(echo $ab | tr ' ' ',' | sed 's/,$//')],
 "consumer": $consumer, "writepath": $writepath, "failed": $failed, "canceled": $canceled,
 "imported": $imported, "profiles_only": $profonly, "report": "$slug"}
JSON
echo "wrote $out/kbench-0002.db and $out/runs.json"
