#!/bin/sh
# A stand-in for Kafka's kafka-producer-perf-test.sh in kbench's tool-run
# tests (serve --tool NAME=PATH). It records what it was given in
# $TOOL_RECORD_DIR (set on the server, whose environment the tool
# inherits), one file per run named after --topic:
#   TOPIC.argv    its arguments, one a line
#   TOPIC.config  the --producer.config file's mode (stat %a) and contents
# then prints Kafka's producer lines while a child process burns CPU.
# Topics steer it: fail-* prints two interval lines, a Java exception on
# stderr and exits 3; slow-* prints one line and sleeps (to be canceled).
topic= config=
prev=
for a in "$@"; do
	case "$prev" in
	--topic) topic=$a ;;
	--producer.config) config=$a ;;
	esac
	prev=$a
done
rec=${TOOL_RECORD_DIR:?}/$topic
: > "$rec.argv"
for a in "$@"; do printf '%s\n' "$a" >> "$rec.argv"; done
if [ -n "$config" ]; then
	{ stat -c %a "$config"; cat "$config"; } > "$rec.config"
fi
burn() {
	i=0
	while [ $i -lt "$1" ]; do i=$((i + 1)); done
}
echo "48120 records sent, 9616.3 records/sec (4.70 MB/sec), 3.7 ms avg latency, 598.0 ms max latency."
case "$topic" in
slow-*)
	sleep 120
	exit 0 ;;
esac
( burn 200000 ) &
wait
echo "99980 records sent, 19996.0 records/sec (9.76 MB/sec), 1.9 ms avg latency, 41.0 ms max latency."
case "$topic" in
fail-*)
	echo "org.apache.kafka.common.errors.TimeoutException: Expiring 12 record(s) for $topic-0: 30002 ms has passed since batch creation" >&2
	exit 3 ;;
esac
echo "500000 records sent, 19534.302235 records/sec (9.54 MB/sec), 2.06 ms avg latency, 598.00 ms max latency, 2 ms 50th, 6 ms 95th, 14 ms 99th, 561 ms 99.9th."
exit 0
