#!/bin/sh
# A stand-in for Kafka's kafka-e2e-latency.sh (EndToEndLatency) in
# kbench's tests, taking its positional arguments:
#   broker_list topic num_messages producer_acks message_size_bytes [properties_file]
# It refuses what the tool refuses (a wrong argument count, acks other
# than 1 or all: a message on stderr, exit 1), then prints the tool's
# lines: a progress line "i<TAB>ms" for every 1000th of num_messages
# while a child process burns CPU for BURN_MS milliseconds (default 600),
# then "Avg latency: … ms" and "Percentiles: …". The figures are fixed:
# it measures nothing.
#   TOOL_RECORD_DIR  gets TOPIC.argv (its arguments, one a line) and, with
#                    a properties file, TOPIC.config (its mode and contents)
#   FAIL_HALF        =1, or a topic fail-*: after the first progress line, a
#                    Java exception on stderr and exit 1, as the tool's poll
#                    timeout ends it
if [ $# -ne 5 ] && [ $# -ne 6 ]; then
	echo "USAGE: java org.apache.kafka.tools.EndToEndLatency broker_list topic num_messages producer_acks message_size_bytes [optional] properties_file" >&2
	exit 1
fi
topic=$2 num=$3 acks=$4
if [ -n "$TOOL_RECORD_DIR" ]; then
	: > "$TOOL_RECORD_DIR/$topic.argv"
	for a in "$@"; do printf '%s\n' "$a" >> "$TOOL_RECORD_DIR/$topic.argv"; done
	if [ $# -eq 6 ]; then
		{ stat -c %a "$6"; cat "$6"; } > "$TOOL_RECORD_DIR/$topic.config"
	fi
fi
case "$acks" in
1|all) ;;
*)
	echo "Latency testing requires synchronous acknowledgement. Please use 1 or all" >&2
	exit 1 ;;
esac
case "$topic" in fail-*) FAIL_HALF=1 ;; esac
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
printf '0\t23.456789\n'
if [ "$FAIL_HALF" = 1 ]; then
	echo "poll() timed out before finding a result (timeout:[60000])" >&2
	echo "java.lang.RuntimeException: poll() timed out before finding a result (timeout:[60000])" >&2
	echo "	at org.apache.kafka.tools.EndToEndLatency.validate(EndToEndLatency.java:143)" >&2
	exit 1
fi
( burn "${BURN_MS:-600}" ) &
wait
i=1000
while [ "$i" -lt "$num" ]; do
	printf '%d\t1.1896300000000002\n' "$i"
	i=$((i + 1000))
done
echo "Avg latency: 1.5614 ms"
echo "Percentiles: 50th = 1, 99th = 24, 99.9th = 26"
exit 0
