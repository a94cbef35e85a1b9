# Sourced by the bench scripts that start kbench's processes around one
# PostgreSQL database (capacity/run.sh, fleet/run.sh). The caller defines
# log and die, and a cleanup that calls stop_postgres.
#
#   pg_bin                          the newest installed PostgreSQL's bin directory
#   as_pg CMD…                      CMD as the postgres user when run as root
#   start_postgres PREFIX [OPTS]    a throwaway cluster (initdb in a new temporary
#                                   directory named after PREFIX, a free loopback
#                                   port, postgres -c OPTS); sets PG_DIR and DB
#   stop_postgres [KEEP]            stops it and removes its directory (kept when KEEP is 1)
#   stop PID                        SIGINT, then SIGKILL after 20 s
#   wait_line FILE SED_EXPR PID WHAT
#                                   the first match of SED_EXPR in FILE, waiting
#                                   up to 60 s while PID lives
#   ticks PID self|children         CPU clock ticks of a process (utime+stime) or
#                                   of its waited-for children (cutime+cstime)
#   sum_ticks self|children PID…    their sum; HZ is the ticks per second

PG_DIR=""
DB=""
HZ=$(getconf CLK_TCK)

pg_bin() { find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n1; }
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

start_postgres() {
  local prefix=$1 opts=${2:-} port
  [ -x "$(pg_bin)/initdb" ] || die "PostgreSQL is not installed (apt-get install postgresql)"
  # its own directory: the postgres user cannot enter the caller's (mode 700)
  PG_DIR=$(mktemp -d -t "$prefix-pg.XXXXXX")
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$PG_DIR"; fi
  as_pg "$(pg_bin)/initdb" -D "$PG_DIR/data" -A trust -U kbench -E UTF8 --no-sync >"$PG_DIR/initdb.log" 2>&1 ||
    { cat "$PG_DIR/initdb.log" >&2; die "initdb failed"; }
  local pg_port=""
  for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 40000))
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
    if as_pg "$(pg_bin)/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
      -o "-k $PG_DIR -p $port -c listen_addresses=127.0.0.1 -c max_connections=200 $opts" start >/dev/null; then
      pg_port=$port
      break
    fi
  done
  [ -n "$pg_port" ] || { cat "$PG_DIR/server.log" >&2 || true; die "could not start PostgreSQL"; }
  DB="postgres://kbench@127.0.0.1:$pg_port/postgres?sslmode=disable"
}

stop_postgres() {
  [ -n "$PG_DIR" ] || return 0
  as_pg "$(pg_bin)/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  if [ "${1:-0}" = 1 ]; then log "kept $PG_DIR"; else rm -rf "$PG_DIR"; fi
}

stop() {
  local pid=$1
  kill -0 "$pid" 2>/dev/null || return 0
  kill -INT "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

wait_line() {
  local file=$1 expr=$2 pid=$3 what=$4 v=""
  for _ in $(seq 1 300); do
    v=$(sed -n "$expr" "$file" 2>/dev/null | head -n1 || true)
    [ -n "$v" ] && { echo "$v"; return 0; }
    kill -0 "$pid" 2>/dev/null || die "$what exited: $(tail -n 5 "${file%.out}.log" 2>/dev/null)"
    sleep 0.2
  done
  die "$what did not start within 60 s"
}

ticks() {
  local stat
  stat=$(cat "/proc/$1/stat")
  # after the command, which may hold spaces: utime is field 12 of the rest
  echo "${stat##*) }" | awk -v which="$2" '{print which == "children" ? $14 + $15 : $12 + $13}'
}
sum_ticks() { local t=0 p; for p in "${@:2}"; do t=$((t + $(ticks "$p" "$1"))); done; echo "$t"; }
