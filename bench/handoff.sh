#!/usr/bin/env bash
# Handing a pooled server connection from one session to another: COM_RESET_CONNECTION against COM_CHANGE_USER
# (issue 32, point 1), measured straight against the server, without Gantry in between.
#
# Starts `gantry demo` with one server and no replicas (no change stream; Gantry's health check once an hour, so
# it adds no logins to the server during the run; Gantry's pool holds a few idle connections that do nothing), then
# bench/lib/Handoff.java on one connection to that server: --iterations hand-offs of each of four ways after
# --warmup of each, alternating in rounds of --round so noise on this shared machine hits every way alike:
#   reset               COM_RESET_CONNECTION alone
#   reset+replay        COM_RESET_CONNECTION, then the session's settings replayed in one SET (what Gantry does)
#   change_user         COM_CHANGE_USER to the same account (mysql_native_password), which resets the session too
#   change_user+replay  COM_CHANGE_USER, then the same SET
# Handoff.java speaks the protocol itself over a plain socket (no JDBC driver, so nothing else goes on the wire;
# see its header). Prints the server's version and, per way, the hand-off as the client sees it (median, p99 and
# mean µs, hand-offs a second), the round trips it took, the server's CPU per hand-off (the run time of all its
# threads from /proc/PID/task/*/schedstat, and user + system from /proc/PID/stat in 10 ms ticks) and the client's,
# then which way is faster and by how much. Everything it starts is stopped on exit, also on failure or Ctrl-C.
#
# Usage: bench/handoff.sh [--iterations N] [--warmup N] [--round N] [--server bundled|debian]
#                         [--replay SQL] [--base-port PORT] [--gantry-port PORT] [--out DIR] [--jar PATH]
#
# --server debian runs the server from Debian's packaged MariaDB (`mariadb-server`, 10.11 on Debian 12; installed
# with apt-get when /usr/sbin/mariadbd is missing) instead of the bundled 11.4, as a process of the benchmark's own
# (GANTRY_MARIADB_HOME=/usr; the system's own service is not used).
# --replay SQL replaces the default replay: SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci, sql_mode = '<MySQL 8's
# default>', time_zone = '+00:00'.
# --jar PATH runs that gantry.jar (for `gantry demo`) instead of building headless/target/gantry.jar with ./gantry.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/headless/target/gantry.jar"
prebuilt_jar=false
iterations=20000
warmup=2000
round=500
server=bundled
replay=""
base_port=37061
gantry_port=37070
out=""

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

while (($#)); do
  case "$1" in
    --iterations) iterations="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --round) round="$2"; shift 2 ;;
    --server) server="$2"; shift 2 ;;
    --replay) replay="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --gantry-port) gantry_port="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; prebuilt_jar=true; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "handoff.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$iterations" "$warmup" "$round" "$base_port" "$gantry_port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "handoff.sh: '$n' is not a number" >&2; exit 2; }
done
[[ $server == bundled || $server == debian ]] || { echo "handoff.sh: --server must be bundled or debian, not '$server'" >&2; exit 2; }
((iterations >= 1 && round >= 1)) || { echo "handoff.sh: --iterations and --round must be >= 1" >&2; exit 2; }

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"
mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"

if [[ $server == debian && ! -x /usr/sbin/mariadbd ]]; then
  log "installing mariadb-server"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y mariadb-server >/dev/null; then
    apt-get update >/dev/null
    apt-get install -y mariadb-server >/dev/null
  fi
fi
ensure_jar "$root" "$jar" "$prebuilt_jar" "$mariadb_client"
for p in "$base_port" "$gantry_port"; do
  ! port_busy "$p" || die "port $p on 127.0.0.1 is in use; choose others with --base-port/--gantry-port"
done

work="$(mktemp -d "${TMPDIR:-/tmp}/gantry-handoff.XXXXXX")"
if [[ -z "$out" ]]; then out="$work/results"; fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
demo_dir="$work/demo"
gantry_pid=""

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  if [[ -n "$gantry_pid" ]]; then
    stop_pid "$gantry_pid" 30
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

server_home=""
[[ $server == bundled ]] || server_home=/usr
log "starting gantry demo: one $server server on $base_port, no replicas (Gantry on $gantry_port, unused)"
GANTRY_MARIADB_HOME="$server_home" java -jar "$jar" demo --dir "$demo_dir" --base-port "$base_port" \
  --listen "127.0.0.1:$gantry_port" --replicas 0 --no-cdc --no-console --upstream-health-interval-secs 3600 \
  >"$out/gantry.log" 2>&1 &
gantry_pid=$!
await_demo_ready "$gantry_pid" "$out/gantry.log"

server_pid="$(cat "$demo_dir/primary/server.pid" 2>/dev/null || true)"
[[ -n "$server_pid" ]] && grep -q mariadbd "/proc/$server_pid/comm" 2>/dev/null \
  || die "no mariadbd process from $demo_dir/primary/server.pid ('$server_pid')"
server_version="$("$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "$base_port" -u app -papp -N -B app \
  -e "SELECT VERSION()")"
log "server: $server_version (pid $server_pid, $(readlink "/proc/$server_pid/exe"))"

handoff_args=("$base_port" app app app "$server_pid" "$iterations" "$warmup" "$round")
[[ -z "$replay" ]] || handoff_args+=("$replay")
log "hand-offs: $iterations of each way after $warmup of each, in rounds of $round"
java -Xms256m -Xmx256m "$root/bench/lib/Handoff.java" "${handoff_args[@]}" >"$out/handoff.txt" 2>"$out/handoff.log" \
  || { cat "$out/handoff.log" >&2; die "Handoff.java failed"; }

value() { grep "^$1=" "$out/handoff.txt" | head -1 | cut -d= -f2-; }
n="$(value iterations)"
{
  echo
  echo "Hand-off of one connection, straight to the server: $server_version ($server), $n hand-offs of each way after"
  echo "$warmup of each, alternating in rounds of $round; machine idle $(value machine_idle_pct) % meanwhile (of $(nproc) cores)."
  echo "Replay: $(value replay)"
  echo
  echo "| way | round trips | median µs | p99 µs | mean µs | hand-offs/s | server CPU µs/hand-off | server user + sys µs (ticks) | client CPU µs |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for way in reset reset_replay change_user change_user_replay; do
    case $way in
      reset) label=reset; trips=1 ;;
      reset_replay) label="reset+replay"; trips=2 ;;
      change_user) label=change_user; trips=1 ;;
      change_user_replay) label="change_user+replay"; trips=2 ;;
    esac
    awk -v label="$label" -v base="$trips" -v sw="$(value "$way.auth_switches")" -v n="$n" \
        -v med="$(value "$way.median_us")" -v p99="$(value "$way.p99_us")" -v mean="$(value "$way.mean_us")" \
        -v ps="$(value "$way.per_s")" -v cpu="$(value "$way.server_cpu_us")" -v us="$(value "$way.server_user_us")" \
        -v ss="$(value "$way.server_sys_us")" -v cl="$(value "$way.client_cpu_us")" 'BEGIN {
      printf "| %s | %s | %.1f | %.1f | %.1f | %.0f | %.1f | %.1f + %.1f | %.1f |\n",
        label, base + sw / n, med, p99, mean, ps, cpu, us, ss, cl}'
  done
  echo
  awk -v r="$(value reset.median_us)" -v c="$(value change_user.median_us)" \
      -v rr="$(value reset_replay.median_us)" -v cr="$(value change_user_replay.median_us)" \
      -v rs="$(value reset.server_cpu_us)" -v cs="$(value change_user.server_cpu_us)" \
      -v rrs="$(value reset_replay.server_cpu_us)" -v crs="$(value change_user_replay.server_cpu_us)" 'BEGIN {
    faster(r, c, rs, cs, "alone")
    faster(rr, cr, rrs, crs, "with the replay")
  }
  function faster(reset, change, rcpu, ccpu, what) {
    printf "%s: %s is faster, median %.1f µs against %.1f µs (%.2f x, %+.1f µs); server CPU %.1f against %.1f µs (%.2f x)\n",
      what, (reset <= change ? "COM_RESET_CONNECTION" : "COM_CHANGE_USER"), reset, change, change / reset, change - reset,
      rcpu, ccpu, ccpu / rcpu
  }'
  echo "COM_CHANGE_USER answered with an auth switch (a fresh scramble, one more round trip): $(value change_user.auth_switches) of $n alone, $(value change_user_replay.auth_switches) of $n with the replay."
  echo "The connection stayed the same throughout: id $(value connection_id) at the start, $(value connection_id_after) at the end."
} | tee "$out/summary.md"
log "done; output in $out"
