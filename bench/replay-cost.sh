#!/usr/bin/env bash
# What transaction replay costs (issue 45): Gantry with --transaction-replay on (the default) against the same Gantry
# with it off, and HAProxy in TCP mode, all three in front of the same servers.
#
# Starts one `gantry demo` (a MariaDB primary and two replicas; the demo's own Gantry, started with --no-cdc, is left
# idle) and two more Gantry processes, `java -jar gantry.jar run`, each with its own --listen port and --data-dir,
# in front of the demo's three servers as the demo's service account, alike but for one flag:
#   on       --transaction-replay on (the default): each statement of a transaction on the primary is copied and its
#            answer checksummed
#   off      --transaction-replay off
#   haproxy  HAProxy, TCP mode: point selects round-robin over the two replicas, read-write to the primary
# All with --no-cdc. Loads 4 x 10 000 sysbench rows on the primary and waits for the replicas, then runs sysbench
# rounds interleaved over the three targets (order rotated every round), for each workload:
#   point  oltp_point_select from --threads sessions (reads on replicas: replay has nothing to keep)
#   rw     oltp_read_write from --rw-threads sessions: transactions of 14 reads and 4 writes on the primary, each kept
#          whole for a replay with replay on
# Each target and workload gets an unmeasured warm-up first. Prints per target and workload, medians over the rounds:
# qps, p95 latency, the proxy's CPU per query (user + sys of its process), and the ratios on/off and on/haproxy.
# sysbench's deadlocks in oltp_read_write (1213) are retried by sysbench and counted. Everything it starts is
# stopped on exit, also on failure or Ctrl-C; all traffic stays on 127.0.0.1.
#
# Usage: bench/replay-cost.sh [--rounds N] [--time SECONDS] [--warmup SECONDS] [--threads N] [--rw-threads N]
#                             [--workloads point,rw] [--ps-mode disable|auto] [--jar PATH]
#                             [--server bundled|debian] [--out DIR] [--base-port PORT] [--gantry-port PORT]
#
# Defaults: 5 rounds of 15 s, 10 s warm-up, 64 threads for point, 16 for rw, both workloads, --ps-mode disable
# (text queries). --base-port (29061) is the primary's, the replicas the next two; the targets listen on --gantry-port
# (29070: on), +1 (off), +2 (HAProxy to the replicas), +3 (HAProxy to the primary), the demo's own Gantry on +4.
# --server and --jar as in bench/point-select.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/headless/target/gantry.jar"
prebuilt_jar=false
rounds=5
duration=15
warmup=10
threads=64
rw_threads=16
workloads="point,rw"
ps_mode=disable
server=bundled
out=""
base_port=29061
gantry_port=29070
tables=4
table_size=10000

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --time) duration="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --rw-threads) rw_threads="$2"; shift 2 ;;
    --workloads) workloads="$2"; shift 2 ;;
    --ps-mode) ps_mode="$2"; shift 2 ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; prebuilt_jar=true; shift 2 ;;
    --server) server="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --gantry-port) gantry_port="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "replay-cost.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$rounds" "$duration" "$warmup" "$threads" "$rw_threads" "$base_port" "$gantry_port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "replay-cost.sh: '$n' is not a number" >&2; exit 2; }
done
((rounds >= 1 && duration >= 1 && threads >= 1 && rw_threads >= 1)) \
  || { echo "replay-cost.sh: rounds, time, threads and rw-threads must be >= 1" >&2; exit 2; }
[[ $ps_mode == disable || $ps_mode == auto ]] || { echo "replay-cost.sh: --ps-mode must be disable or auto" >&2; exit 2; }
[[ $server == bundled || $server == debian ]] || { echo "replay-cost.sh: --server must be bundled or debian" >&2; exit 2; }
IFS=, read -r -a wl <<<"$workloads"
((${#wl[@]} >= 1)) || { echo "replay-cost.sh: --workloads is empty" >&2; exit 2; }
for w in "${wl[@]}"; do
  [[ $w == point || $w == rw ]] || { echo "replay-cost.sh: unknown workload '$w' (point, rw)" >&2; exit 2; }
done

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"

need_install=()
command -v sysbench >/dev/null || need_install+=(sysbench)
command -v haproxy >/dev/null || need_install+=(haproxy)
[[ $server == bundled || -x /usr/sbin/mariadbd ]] || need_install+=(mariadb-server)
install_missing ${need_install[@]+"${need_install[@]}"}
command -v java >/dev/null || die "'java' not found (a JDK 17 is needed)"
mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"
ensure_jar "$root" "$jar" "$prebuilt_jar" "$mariadb_client"

targets=(on off haproxy)
declare -A flags=([on]="--transaction-replay on" [off]="--transaction-replay off")
declare -A label=([on]="Gantry, replay on (default)" [off]="Gantry, replay off" [haproxy]="HAProxy (TCP)")
haproxy_replicas_port=$((gantry_port + 2))
haproxy_primary_port=$((gantry_port + 3))
demo_gantry_port=$((gantry_port + 4))
declare -A gport=([on]=$gantry_port [off]=$((gantry_port + 1)))
server_ports=("$base_port" $((base_port + 1)) $((base_port + 2)))
ports_free "--base-port/--gantry-port" "${server_ports[@]}" "${gport[@]}" "$haproxy_replicas_port" \
  "$haproxy_primary_port" "$demo_gantry_port"

# ---------------------------------------------------------------- clean-up
make_work_dir replay-cost
demo_pid=""
sb_pid=""
haproxy_pid=""
declare -A gpid=()
cleanup() {
  local rc=$? t
  trap - EXIT INT TERM
  set +e
  [[ -n "$sb_pid" ]] && stop_pid "$sb_pid" 5
  [[ -n "$haproxy_pid" ]] && stop_pid "$haproxy_pid" 5
  for t in "${!gpid[@]}"; do stop_pid "${gpid[$t]}" 30; done
  if [[ -n "$demo_pid" ]]; then
    stop_pid "$demo_pid" 30
    stop_leftover_servers "$demo_dir"
  fi
  rm -rf "$demo_dir" "$work"/gantry-* "$work/upstream.password"
  [[ "$out" == "$work"/* ]] || rmdir "$work" 2>/dev/null
  if ((rc != 0)); then log "logs kept in $out"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- servers, the two Gantry processes, HAProxy
server_home=""
[[ $server == bundled ]] || server_home=/usr
log "starting gantry demo (primary $base_port, replicas $((base_port + 1))/$((base_port + 2)), its own Gantry" \
  "$demo_gantry_port, idle; servers: $server)"
GANTRY_MARIADB_HOME="$server_home" java ${GANTRY_JAVA_OPTS:-} -jar "$jar" demo --dir "$demo_dir" --base-port "$base_port" \
  --listen "127.0.0.1:$demo_gantry_port" --no-cdc --no-console >"$out/demo.log" 2>&1 &
demo_pid=$!
await_demo_ready "$demo_pid" "$out/demo.log"
demo_service_account "$out/demo.log"
root_sql() { # port statement
  "$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "$1" -u root -N -B -e "$2"
}
for t in on off; do
  start_gantry_run "$t" "${gport[$t]}" "${flags[$t]}"
  gpid[$t]=$run_pid
done
for t in on off; do await_gantry_answering "$t" "${gpid[$t]}" "${gport[$t]}" "$svc_user" "$svc_pass"; done

cat >"$out/haproxy.cfg" <<EOF
global
    maxconn 4096
defaults
    mode tcp
    timeout connect 5s
    timeout client 10m
    timeout server 10m
    maxconn 4096
listen replicas
    bind 127.0.0.1:$haproxy_replicas_port
    balance roundrobin
    server replica1 127.0.0.1:$((base_port + 1)) maxconn 2048
    server replica2 127.0.0.1:$((base_port + 2)) maxconn 2048
listen primary
    bind 127.0.0.1:$haproxy_primary_port
    server primary 127.0.0.1:$base_port maxconn 2048
EOF
start_haproxy "$haproxy_primary_port"
gpid[haproxy]=$haproxy_pid
haproxy_pid=""  # stopped with the others
log "pids: Gantry on ${gpid[on]}, Gantry off ${gpid[off]}, HAProxy ${gpid[haproxy]}"

# ---------------------------------------------------------------- data
sb_common=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-db="$db" --mysql-ssl=off --tables="$tables"
           --table-size="$table_size" --mysql-user="$svc_user" --mysql-password="$svc_pass")
log "preparing $tables tables x $table_size rows on the primary"
sysbench oltp_read_write "${sb_common[@]}" --mysql-port="$base_port" --threads="$tables" prepare >"$out/prepare.log" 2>&1 \
  || { cat "$out/prepare.log" >&2; die "sysbench prepare"; }
pos="$(root_sql "$base_port" "SELECT @@gtid_binlog_pos")"
for port in "${server_ports[@]:1}"; do
  [[ "$(root_sql "$port" "SELECT MASTER_GTID_WAIT('$pos', 120)")" == 0 ]] || die "replica $port did not reach $pos"
done
log "replicas caught up at GTID $pos"

# ---------------------------------------------------------------- runs
clk_tck="$(getconf CLK_TCK)"
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime of a process, in ticks
port_of() { # target workload
  case "$1" in
    haproxy) [[ $2 == point ]] && echo "$haproxy_replicas_port" || echo "$haproxy_primary_port" ;;
    *) echo "${gport[$1]}" ;;
  esac
}
# One sysbench run, in this shell (the clean-up knows its pid). Sets `result` to "qps p95_ms queries proxy_ticks errors".
result=""
run() { # target workload seconds logfile
  local t=$1 w=$2 secs=$3 logf=$4 script=oltp_point_select n=$threads g0 g1
  [[ $w == point ]] || { script=oltp_read_write; n=$rw_threads; }
  g0="$(proc_ticks "${gpid[$t]}")"
  sysbench "$script" "${sb_common[@]}" --mysql-port="$(port_of "$t" "$w")" --threads="$n" --time="$secs" \
    --events=0 --report-interval=0 --percentile=95 --db-ps-mode="$ps_mode" --mysql-ignore-errors=1213 \
    run >"$logf" 2>&1 &
  sb_pid=$!
  if ! wait "$sb_pid"; then
    sb_pid=""; tail -20 "$logf" >&2; die "sysbench against $t ($w) failed; log: $logf"
  fi
  sb_pid=""
  g1="$(proc_ticks "${gpid[$t]}")"
  result="$(awk -v g="$((g1 - g0))" '
    /queries:/ {n = $2; gsub(/[()]/, ""); q = $3} /95th percentile:/ {p = $3} /ignored errors:/ {e = $3}
    END {print q, p, n, g, e + 0}' "$logf")"
}
order_of() { local k=$((($1 - 1) % 3)); echo "${targets[@]:k}" "${targets[@]:0:k}"; }

if ((warmup > 0)); then
  for w in "${wl[@]}"; do
    for t in "${targets[@]}"; do
      log "warm-up: $w on $t, ${warmup} s (not counted)"
      run "$t" "$w" "$warmup" "$out/warmup-$w-$t.log"
    done
  done
fi

results="$out/rounds.tsv"
printf 'round\tworkload\ttarget\tqps\tp95_ms\tqueries\tproxy_ticks\terrors\n' >"$results"
for ((rr = 1; rr <= rounds; rr++)); do
  for w in "${wl[@]}"; do
    for t in $(order_of "$rr"); do
      run "$t" "$w" "$duration" "$out/round$rr-$w-$t.log"
      read -r qps p95 n g e <<<"$result"
      printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rr" "$w" "$t" "$qps" "$p95" "$n" "$g" "$e" >>"$results"
      log "round $rr/$rounds $w $t: $qps qps, p95 $p95 ms, proxy CPU $(awk -v g="$g" -v k="$clk_tck" 'BEGIN {printf "%.2f", g / k}') s, $e deadlocks retried"
    done
  done
done

# ---------------------------------------------------------------- report
median() { sort -g | awk '{v[NR] = $1} END {if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
med() { # workload target awk-expression -> the median over the rounds
  awk -F'\t' -v w="$1" -v t="$2" -v tck="$clk_tck" 'NR > 1 && $2 == w && $3 == t {
      qps = $4; p95 = $5; n = $6; g = $7; e = $8; print '"$3"'}' "$results" | median
}
# Per round, on's qps over the other target's in the same round, then the median of those ratios.
ratio() { # workload other
  awk -F'\t' -v w="$1" -v o="$2" 'NR > 1 && $2 == w {q[$1, $3] = $4; r[$1] = 1}
    END {for (k in r) if (q[k, o] > 0) print q[k, "on"] / q[k, o]}' "$results" | median
}
{
  echo
  echo "Transaction replay's cost: $tables x $table_size rows, --db-ps-mode=$ps_mode, $rounds rounds x ${duration} s, targets"
  echo "interleaved (medians over the rounds; ratios are the median of the per-round ratios)."
  echo "Servers: $(root_sql "${server_ports[1]}" "SELECT VERSION()") ($server), a primary and two replicas shared by the targets."
  for w in "${wl[@]}"; do
    echo
    case "$w" in
      point) echo "**point**: oltp_point_select, $threads threads (replicas)" ;;
      rw) echo "**rw**: oltp_read_write, $rw_threads threads (primary; 18 statements between BEGIN and COMMIT)" ;;
    esac
    echo
    echo "| target | qps | p95 ms | proxy CPU µs/query | deadlocks retried |"
    echo "|---|---:|---:|---:|---:|"
    for t in "${targets[@]}"; do
      printf '| %s | %.0f | %.2f | %.1f | %s |\n' "${label[$t]}" "$(med "$w" "$t" qps)" "$(med "$w" "$t" p95)" \
        "$(med "$w" "$t" 'g * 1e6 / tck / n')" "$(med "$w" "$t" e)"
    done
    echo
    printf 'on/off %.3f, on/HAProxy %.3f\n' "$(ratio "$w" off)" "$(ratio "$w" haproxy)"
  done
} | tee "$out/summary.md"
log "done; logs, per-round results (rounds.tsv) and the summary in $out"
