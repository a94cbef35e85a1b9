# Sourced by the bench scripts that run against ONE `kbench broker`
# process (compare.sh, cost/run.sh, cost/pair.sh, e2e/run.sh).
#
#   start_broker BIN WORKDIR ERRFILE   starts BIN broker on a free loopback
#                                      port; sets BROKER_PID and ADDR
#                                      (host:port), or exits the script
#                                      when it has not come up in 10 s
#   stop_broker                        stops it (call it from the EXIT trap)

BROKER_PID=""
ADDR=""

start_broker() {
  local bin=$1 work=$2 errfile=$3
  "$bin" broker --listen 127.0.0.1:0 >"$work/broker.out" 2>"$errfile" &
  BROKER_PID=$!
  for _ in $(seq 1 100); do
    ADDR=$(sed -n 's/^kbench broker listening on //p' "$work/broker.out" 2>/dev/null || true)
    [ -n "$ADDR" ] && return 0
    kill -0 "$BROKER_PID" 2>/dev/null || { cat "$errfile" >&2; exit 1; }
    sleep 0.1
  done
  echo "$(basename "$0"): the broker did not start in 10 s" >&2
  exit 1
}

stop_broker() {
  if [ -n "$BROKER_PID" ] && kill -0 "$BROKER_PID" 2>/dev/null; then
    kill -TERM "$BROKER_PID" 2>/dev/null || true
    wait "$BROKER_PID" 2>/dev/null || true
  fi
}
