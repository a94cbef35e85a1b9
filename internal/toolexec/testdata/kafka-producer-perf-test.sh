#!/bin/sh
# A stand-in for Kafka's kafka-producer-perf-test.sh in kbench's tests: it
# prints Kafka's producer lines while a child process burns CPU for BURN_MS
# milliseconds (default 1500; two such children, one after the other, so
# processes come and go), then the summary.
#   PIDFILE    gets the script's pid first
#   STATFILE   gets the script's /proc/PID/stat at the end, once every child
#              was reaped: its cutime+cstime hold the whole tree's CPU
#   FAIL_HALF  =1: after half the lines, a Java exception on stderr and exit 3
[ -n "$PIDFILE" ] && echo $$ > "$PIDFILE"
# The clock is /proc/uptime in hundredths of a second, read by the shell
# itself: the burning child forks nothing while it burns.
burn() {
	read up _ < /proc/uptime
	end=$(( ${up%.*}${up#*.} + $1 / 10 ))
	while :; do
		i=0
		while [ $i -lt 20000 ]; do i=$((i + 1)); done
		read up _ < /proc/uptime
		[ $(( ${up%.*}${up#*.} )) -lt $end ] || break
	done
}
echo "48120 records sent, 9616.3 records/sec (4.70 MB/sec), 3.7 ms avg latency, 598.0 ms max latency."
( burn $(( ${BURN_MS:-1500} / 2 )) ) &
wait
echo "99980 records sent, 19996.0 records/sec (9.76 MB/sec), 1.9 ms avg latency, 41.0 ms max latency."
if [ "$FAIL_HALF" = 1 ]; then
	echo "org.apache.kafka.common.errors.TimeoutException: Expiring 12 record(s) for bench-0: 30002 ms has passed since batch creation" >&2
	echo "	at org.apache.kafka.clients.producer.internals.RecordAccumulator.expiredBatches(RecordAccumulator.java:382)" >&2
	exit 3
fi
( burn $(( ${BURN_MS:-1500} / 2 )) ) &
wait
echo "100031 records sent, 20002.2 records/sec (9.77 MB/sec), 1.7 ms avg latency, 35.0 ms max latency."
echo "500000 records sent, 19534.302235 records/sec (9.54 MB/sec), 2.06 ms avg latency, 598.00 ms max latency, 2 ms 50th, 6 ms 95th, 14 ms 99th, 561 ms 99.9th."
[ -n "$STATFILE" ] && cat /proc/$$/stat > "$STATFILE"
exit 0
