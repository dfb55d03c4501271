#!/usr/bin/env bash
# A take-over under load: what clients see while a new Gantry process takes over from the running one (issue 46).
#
# Starts `gantry demo` for its servers (a MariaDB primary and two replicas; its own Gantry stays idle) and
# `gantry run` on --socket-transport epoll in front of them, loads a sysbench table, opens --idle idle Connector/J
# sessions (bench/lib/IdleSessions.java, each noting its CONNECTION_ID()), and runs sysbench oltp_point_select with
# --threads threads for --time seconds, reporting every second. --at seconds into the run, a second `gantry run`
# with the same flags and data directory starts with --take-over. Prints:
#   - the point selects' p99 per second before the take-over (median) and the worst second from the new process's
#     launch until the old one has gone and a second more (the dip), their qps likewise, and sysbench's errors;
#   - the time the old Gantry took to move its sessions (from "stops accepting" to "done" in its log), how many it
#     moved, and when it exited;
#   - the idle sessions afterwards: how many answered with the same CONNECTION_ID(), another one, or not at all.
# --new-jar runs the Gantry taking over from another build than --jar's: an upgrade.
# Everything it starts is stopped on exit, also on failure or Ctrl-C.
#
# Usage: bench/take-over.sh [--idle N] [--threads N] [--time SECONDS] [--at SECONDS] [--base-port PORT]
#                           [--gantry-port PORT] [--out DIR] [--jar PATH] [--new-jar PATH]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/headless/target/gantry.jar"
prebuilt_jar=false
new_jar=""
idle=10000
threads=64
duration=40
at=15
base_port=27061
gantry_port=27070
out=""

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --idle) idle="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --time) duration="$2"; shift 2 ;;
    --at) at="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --gantry-port) gantry_port="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; prebuilt_jar=true; shift 2 ;;
    --new-jar) new_jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "take-over.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$idle" "$threads" "$duration" "$at" "$base_port" "$gantry_port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "take-over.sh: '$n' is not a number" >&2; exit 2; }
done
((threads >= 1 && at >= 2 && duration > at + 5)) \
  || { echo "take-over.sh: --threads must be >= 1, --at >= 2 and --time more than --at + 5" >&2; exit 2; }
files_needed=$((idle + 4 * threads + 1000))  # the most one process needs: Gantry's client sockets and its others
(($(ulimit -n) >= files_needed)) || ulimit -n "$files_needed" 2>/dev/null \
  || { echo "take-over.sh: $idle idle sessions need $files_needed open files; ulimit -n is $(ulimit -n)" >&2; exit 2; }

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"
need_install=()
command -v sysbench >/dev/null || need_install+=(sysbench)
install_missing ${need_install[@]+"${need_install[@]}"}
command -v java >/dev/null || die "'java' not found (a JDK 17 is needed)"
mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"
ensure_jar "$root" "$jar" "$prebuilt_jar" "$mariadb_client"
[[ -z "$new_jar" || -f "$new_jar" ]] || die "--new-jar $new_jar: no such file"
server_ports=("$base_port" $((base_port + 1)) $((base_port + 2)))
demo_gantry_port=$((gantry_port + 1))
ports_free "--base-port/--gantry-port" "${server_ports[@]}" "$gantry_port" "$demo_gantry_port"

# ---------------------------------------------------------------- clean-up
make_work_dir take-over
demo_pid=""
old_pid=""
new_pid=""
sb_pid=""
idle_pid=""
cleanup() {
  local rc=$? p
  trap - EXIT INT TERM
  set +e
  exec 7>&- 2>/dev/null
  for p in "$sb_pid" "$idle_pid"; do [[ -n "$p" ]] && stop_pid "$p" 5; done
  for p in "$new_pid" "$old_pid"; do [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null && stop_pid "$p" 30; done
  if [[ -n "$demo_pid" ]]; then
    stop_pid "$demo_pid" 30
    stop_leftover_servers "$demo_dir"
  fi
  rm -rf "$demo_dir" "$work"/gantry-* "$work/upstream.password" "$work/idle.in"
  [[ "$out" == "$work"/* ]] || rmdir "$work" 2>/dev/null
  if ((rc != 0)); then log "logs kept in $out"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- servers, Gantry, data
log "starting gantry demo for its servers (primary $base_port, replicas $((base_port + 1))/$((base_port + 2)))"
java ${GANTRY_JAVA_OPTS:-} -jar "$jar" demo --dir "$demo_dir" --base-port "$base_port" \
  --listen "127.0.0.1:$demo_gantry_port" --no-cdc --no-console >"$out/demo.log" 2>&1 &
demo_pid=$!
await_demo_ready "$demo_pid" "$out/demo.log"
demo_service_account "$out/demo.log"
run_flags="--socket-transport epoll --max-client-connections $((idle + threads + 100))"
start_gantry_run old "$gantry_port" "$run_flags" shared
old_pid=$run_pid
await_gantry_answering old "$old_pid" "$gantry_port" "$svc_user" "$svc_pass"

sb=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-db="$db" --mysql-ssl=off --tables=1 --table-size=10000
    --mysql-user="$svc_user" --mysql-password="$svc_pass")
log "preparing 1 table x 10 000 rows on the primary"
sysbench oltp_point_select "${sb[@]}" --mysql-port="$base_port" prepare >"$out/prepare.log" 2>&1 \
  || { cat "$out/prepare.log" >&2; die "sysbench prepare"; }
sleep 2  # the replicas apply the rows

log "opening $idle idle sessions through Gantry"
mkfifo "$work/idle.in"
java -Xmx2g -cp "$jar" "$root/bench/lib/IdleSessions.java" "$gantry_port" "$db" "$svc_user" "$svc_pass" "$idle" \
  <"$work/idle.in" >"$out/idle.txt" 2>"$out/idle.log" &
idle_pid=$!
exec 7>"$work/idle.in"
for ((i = 0; i < 600; i++)); do
  grep -q '^ready=' "$out/idle.txt" && break
  kill -0 "$idle_pid" 2>/dev/null || { cat "$out/idle.log" >&2; die "the idle sessions could not be opened"; }
  sleep 0.5
done
grep -q '^ready=' "$out/idle.txt" || die "the idle sessions were not open after 300 s"
log "$(grep '^ready=' "$out/idle.txt" | cut -d= -f2) idle sessions open"

# ---------------------------------------------------------------- the run, and the take-over in its middle
log "sysbench oltp_point_select, $threads threads, $duration s; the take-over at $at s"
sysbench oltp_point_select "${sb[@]}" --mysql-port="$gantry_port" --threads="$threads" --time="$duration" \
  --events=0 --report-interval=1 --percentile=99 --mysql-ignore-errors=all run >"$out/sysbench.log" 2>&1 &
sb_pid=$!
sleep "$at"
launched=$(date +%s.%N)
old_jar=$jar
jar=${new_jar:-$jar}
start_gantry_run new "$gantry_port" "$run_flags --take-over" shared
jar=$old_jar
new_pid=$run_pid
while kill -0 "$old_pid" 2>/dev/null; do
  if ! kill -0 "$new_pid" 2>/dev/null; then cat "$out/gantry-new.log" >&2; die "the new Gantry exited"; fi
  sleep 0.1
done
wait "$old_pid" 2>/dev/null || true
gone=$(date +%s.%N)
old_pid=""
wait "$sb_pid" || die "sysbench failed; see $out/sysbench.log"
sb_pid=""
echo >&7
exec 7>&-
wait "$idle_pid" || { cat "$out/idle.log" >&2; die "the idle sessions' check failed"; }
idle_pid=""

# ---------------------------------------------------------------- what clients saw
from=$(awk -v a="$launched" -v b="$gone" 'BEGIN { print a - b }')  # negative: seconds before the old one went
seconds_of() { sed -n "s/^[0-9-]* \([0-9:.]*\) .*$1.*/\1/p" "$out/gantry-old.log" | head -1 \
  | awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }'; }
stopped_accepting=$(seconds_of "stops accepting")
done_at=$(seconds_of "hand-over: done")
moved=$(sed -n 's/.*hand-over: done.*: \([0-9]*\) sessions moved.*/\1/p' "$out/gantry-old.log" | head -1)
# sysbench's per-second lines: "[ 16s ] thds: 64 tps: ... qps: Q (r/w/o: ...) lat (ms,99%): P err/s: E ..."
window_start=$at
window_end=$(awk -v at="$at" -v a="$launched" -v b="$gone" 'BEGIN { printf "%d", at + (b - a) + 1.999 }')
awk -v s="$window_start" -v e="$window_end" '
  /^\[ *[0-9]+s \]/ {
    t = $2; sub(/s/, "", t); t += 0
    for (i = 1; i <= NF; i++) {
      if ($i == "qps:") q = $(i + 1)
      if ($i == "(ms,99%):") p = $(i + 1)
      if ($i == "err/s:") err += $(i + 1)
    }
    if (t <= s) { bq[++nb] = q; bp[nb] = p }
    else if (t <= e) { if (p > wp) wp = p; if (wq == "" || q < wq) wq = q }
  }
  function median(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x } return a[int((n + 1) / 2)] }
  END {
    printf "point selects, %s threads: before the take-over p99 %.2f ms (median of %d seconds), %d qps;", threads, median(bp, nb), nb, median(bq, nb)
    printf " during it (%d s to %d s) worst second p99 %.2f ms, lowest %d qps; errors %d\n", s, e, wp, wq, err
  }' threads="$threads" "$out/sysbench.log" | tee "$out/summary.txt"
{
  printf 'take-over: the old Gantry moved %s sessions in %.2f s (from when it stopped accepting); it was gone %.1f s after the new one was launched\n' \
    "${moved:-?}" "$(awk -v a="$stopped_accepting" -v b="$done_at" 'BEGIN { print b - a }')" "$(awk -v f="$from" 'BEGIN { print -f }')"
  printf 'idle sessions afterwards: %s with the same CONNECTION_ID(), %s with another, %s lost\n' \
    "$(sed -n 's/^same=//p' "$out/idle.txt")" "$(sed -n 's/^changed=//p' "$out/idle.txt")" "$(sed -n 's/^lost=//p' "$out/idle.txt")"
} | tee -a "$out/summary.txt"
log "logs and sysbench's per-second report in $out"
