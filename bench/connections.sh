#!/usr/bin/env bash
# Many clients on few server connections: connection multiplexing under 10 000 mostly idle clients.
#
# For each mode (--multiplex on, then off) starts `gantry demo` (a MariaDB primary, two replicas and Gantry),
# then bench/lib/ManyClients.java: a login storm (--storm connects offered at once from 500 threads, all held
# until the last is in), then --idle clients that log in, run one point select and stay connected, then
# --active clients running point selects without pause for --time seconds while the idle ones stay. Meanwhile
# it samples, once a second, the connections each server has open (Threads_connected, less the sampler's own
# and the replication threads' one per replica) and Gantry's resident memory (the demo's JVM, which also
# runs the sandbox's control code; the servers are processes of their own). Prints one line per mode and the
# ratio of the active clients' throughput, on to off.
#
# Without multiplexing every client holds its own connection to the primary, and Gantry two file descriptors
# per client: where the process's hard limit on open files (`ulimit -Hn`) cannot hold --idle of them, the off
# run uses the most idle clients that fit and says so. The servers' max_connections is raised for the off run.
#
# With multiplexing on, Gantry runs with --max-backend-connections-per-server --cap (200; the demo's servers
# allow 500 connections, so the automatic cap would be 400): the storm must not open more than that.
#
# Usage: bench/connections.sh [--idle N] [--active N] [--time SECONDS] [--storm N] [--cap N]
#                             [--modes "on off"] [--base-port PORT] [--gantry-port PORT] [--out DIR] [--jar PATH]
#                             [--gantry-java-opts "OPTIONS"]   (more JVM options for Gantry's JVM, after -Xmx2g)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/headless/target/gantry.jar"
prebuilt_jar=false
idle=10000
active=100
duration=60
storm=5000
cap=200
modes="on off"
base_port=35061
gantry_port=35070
out=""
gantry_java_opts=""

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

while (($#)); do
  case "$1" in
    --idle) idle="$2"; shift 2 ;;
    --active) active="$2"; shift 2 ;;
    --time) duration="$2"; shift 2 ;;
    --storm) storm="$2"; shift 2 ;;
    --cap) cap="$2"; shift 2 ;;
    --modes) modes="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --gantry-port) gantry_port="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --gantry-java-opts) gantry_java_opts="$2"; shift 2 ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; prebuilt_jar=true; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "connections.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$idle" "$active" "$duration" "$storm" "$cap" "$base_port" "$gantry_port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "connections.sh: '$n' is not a number" >&2; exit 2; }
done
for mode in $modes; do
  [[ $mode == on || $mode == off ]] || { echo "connections.sh: --modes takes on and off, not '$mode'" >&2; exit 2; }
done
((active >= 1 && duration >= 1)) || { echo "connections.sh: --active and --time must be >= 1" >&2; exit 2; }

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"
mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"

ensure_jar "$root" "$jar" "$prebuilt_jar" "$mariadb_client"
for p in "$base_port" "$((base_port + 1))" "$((base_port + 2))" "$gantry_port"; do
  ! port_busy "$p" || die "port $p on 127.0.0.1 is in use; choose others with --base-port/--gantry-port"
done

work="$(mktemp -d "${TMPDIR:-/tmp}/gantry-connections.XXXXXX")"
if [[ -z "$out" ]]; then out="$work/results"; fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
demo_dir="$work/demo"
gantry_pid=""
sampler_pid=""

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  [[ -n "$sampler_pid" ]] && kill "$sampler_pid" 2>/dev/null
  if [[ -n "$gantry_pid" ]]; then
    stop_pid "$gantry_pid" 60
    stop_leftover_servers "$demo_dir"
  fi
  rm -rf "$demo_dir"
  [[ "$out" == "$work"/* ]] || rmdir "$work" 2>/dev/null
  if ((rc != 0)); then log "logs kept in $out"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

root_sql() { # port statement
  "$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "$1" -u root -N -B -e "$2"
}

# Once a second: each server's connections of the clients' account (many: what the sessions hold, what the cap
# limits), Gantry's RSS in MiB, then each server's connections of every kind (less this query's own: Gantry's
# service connections, the replicas' replication threads and the primary's binlog dumps too); one line per sample.
sample() { # file
  while true; do
    local line="" all="" port counts
    for port in "$base_port" "$((base_port + 1))" "$((base_port + 2))"; do
      counts="$(root_sql "$port" "SELECT SUM(USER = 'many'), COUNT(*) - 1 FROM information_schema.PROCESSLIST
        WHERE COMMAND <> 'Daemon'" 2>/dev/null)"
      read -r app every <<<"${counts:-0 0}"
      line+="${app:-0} "
      all+=" ${every:-0}"
    done
    line+="$(awk '/VmRSS/ {printf "%d", $2 / 1024}' "/proc/$gantry_pid/status" 2>/dev/null)"
    echo "$line$all" >>"$1"
    sleep 1
  done
}

hard_files="$(ulimit -Hn)"
summary=()
declare -A qps
for mode in $modes; do
  clients=$idle
  if [[ $mode == off && $hard_files != unlimited ]]; then
    fits=$(( (hard_files - 2000) / 2 - active - storm / 2 ))
    if ((clients > fits)); then
      log "multiplexing off: $idle idle clients would need $((2 * (idle + active))) open files in Gantry; the hard limit is $hard_files: using $fits"
      clients=$fits
    fi
  fi
  mode_args=(--multiplex "$mode")
  [[ $mode == on ]] && mode_args+=(--max-backend-connections-per-server "$cap")
  rm -rf "$demo_dir"
  log "mode $mode: starting gantry demo (primary $base_port, Gantry $gantry_port) ${mode_args[*]}"
  # shellcheck disable=SC2086 # the options are words
  java -Xmx2g $gantry_java_opts -jar "$jar" demo --dir "$demo_dir" --base-port "$base_port" --listen "127.0.0.1:$gantry_port" \
    --no-console "${mode_args[@]}" --max-client-connections $((idle + storm + active + 100)) \
    >"$out/gantry-$mode.log" 2>&1 &
  gantry_pid=$!
  await_demo_ready "$gantry_pid" "$out/gantry-$mode.log"
  if [[ $mode == off ]]; then
    for port in "$base_port" "$((base_port + 1))" "$((base_port + 2))"; do
      root_sql "$port" "SET GLOBAL max_connections = $((clients + storm + active + 500))"
    done
  fi
  # The clients' own account (bench/lib/ManyClients.java): on the servers, its connections are the sessions'.
  root_sql "$base_port" "CREATE USER IF NOT EXISTS many@'%' IDENTIFIED BY 'many'; GRANT ALL ON app.* TO many@'%'"
  samples="$out/samples-$mode.txt"
  : >"$samples"
  sample "$samples" &
  sampler_pid=$!
  log "mode $mode: storm of $storm, then $clients idle and $active active clients for $duration s"
  java -Xmx6g -cp "$jar" "$root/bench/lib/ManyClients.java" "$gantry_port" "$base_port" "$clients" "$active" \
    "$duration" "$storm" >"$out/clients-$mode.txt" 2>"$out/clients-$mode.log" || {
      cat "$out/clients-$mode.log" >&2; die "the clients failed in mode $mode"; }
  kill "$sampler_pid" 2>/dev/null; wait "$sampler_pid" 2>/dev/null || true
  sampler_pid=""
  value() { grep "^$1=" "$out/clients-$mode.txt" | cut -d= -f2; }
  read -r max_primary max_r1 max_r2 max_rss all_primary all_r1 all_r2 < <(awk '
    {for (i = 1; i <= 7; i++) if ($i > m[i]) m[i] = $i}
    END {print m[1]+0, m[2]+0, m[3]+0, m[4]+0, m[5]+0, m[6]+0, m[7]+0}' "$samples")
  qps[$mode]="$(value active_qps)"
  line="multiplex $mode: storm $(value storm_ok) of $storm logins ok ($(value storm_failed) failed) in $(value storm_ms) ms;"
  line+=" $(value idle_open) idle clients ($(value idle_failed) failed); $active active: $(value active_qps) qps,"
  line+=" p50 $(value p50_us) us, p95 $(value p95_us) us, p99 $(value p99_us) us ($(value active_failed) failed);"
  line+=" most server connections of the clients' account: primary $max_primary, replicas $max_r1 and $max_r2"
  line+=" (of every kind: $all_primary, $all_r1, $all_r2); Gantry RSS at most $max_rss MiB"
  log "$line"
  summary+=("$line")
  stop_pid "$gantry_pid" 60
  stop_leftover_servers "$demo_dir"
  gantry_pid=""
done

echo
printf '%s\n' "${summary[@]}"
if [[ -n "${qps[on]:-}" && -n "${qps[off]:-}" ]]; then
  awk -v on="${qps[on]}" -v off="${qps[off]}" 'BEGIN {printf "active clients qps, multiplexing on / off: %.3f\n", on / off}'
fi
