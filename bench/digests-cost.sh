#!/usr/bin/env bash
# What the statement digests cost (issue 48): point selects through Gantry with --digests on (the default) against the
# same Gantry with --digests off, both in front of the same servers.
#
# Starts one `gantry demo` (a MariaDB primary and two replicas; the demo's own Gantry, started with --no-cdc, is left
# idle) and two more Gantry processes, `java -jar gantry.jar run`, each with its own --listen port and --data-dir,
# in front of the demo's three servers as the demo's service account, alike but for one flag:
#   on   --digests on (the default): every statement counted under its shape, with its latency in a histogram
#   off  --digests off: nothing counted
# Both with --no-cdc. Loads 4 x 10 000 sysbench rows on the primary and waits for the replicas, then runs
# oltp_point_select from --threads sessions (reads on the replicas), one unmeasured warm-up per target, then --rounds
# rounds with the two targets interleaved (which goes first alternates every round). Prints medians over the rounds:
# qps, p95 latency, the proxy's CPU per query (user + sys of its process), and the median of the per-round on/off
# qps ratios. The machine should be otherwise idle: with --max-load L (default 1.0; 0 for no check) it refuses to
# start while the 1-minute load average is L or more. Everything it starts is stopped on exit, also on failure or
# Ctrl-C; all traffic stays on 127.0.0.1.
#
# Usage: bench/digests-cost.sh [--rounds N] [--time SECONDS] [--warmup SECONDS] [--threads N] [--ps-mode disable|auto]
#                              [--jar PATH] [--server bundled|debian] [--out DIR] [--base-port PORT]
#                              [--gantry-port PORT] [--max-load L] [--flags-on FLAGS --flags-off FLAGS]
#
# --flags-on and --flags-off compare any other pair of settings the same way, e.g. what a causal scope costs
# reads that write nothing (issue 49): --flags-on '--read-your-writes-scope account'
# --flags-off '--read-your-writes-scope session'.
#
# Defaults: 5 rounds of 15 s, 10 s warm-up, 64 threads, --ps-mode disable (text queries: each is shaped by the
# tokenizer; auto: server-side prepared statements, shaped once per statement). --base-port (28061) is the
# primary's, the replicas the next two; the targets listen on --gantry-port (28070: on) and +1 (off), the demo's own
# Gantry on +4. --server and --jar as in bench/point-select.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/headless/target/gantry.jar"
prebuilt_jar=false
rounds=5
duration=15
warmup=10
threads=64
ps_mode=disable
server=bundled
out=""
base_port=28061
gantry_port=28070
max_load=1.0
flags_on="--digests on"
flags_off="--digests off"
tables=4
table_size=10000

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --time) duration="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --ps-mode) ps_mode="$2"; shift 2 ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; prebuilt_jar=true; shift 2 ;;
    --server) server="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --gantry-port) gantry_port="$2"; shift 2 ;;
    --max-load) max_load="$2"; shift 2 ;;
    --flags-on) flags_on="$2"; shift 2 ;;
    --flags-off) flags_off="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "digests-cost.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$rounds" "$duration" "$warmup" "$threads" "$base_port" "$gantry_port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "digests-cost.sh: '$n' is not a number" >&2; exit 2; }
done
((rounds >= 1 && duration >= 1 && threads >= 1)) \
  || { echo "digests-cost.sh: rounds, time and threads must be >= 1" >&2; exit 2; }
[[ "$max_load" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "digests-cost.sh: --max-load must be a number" >&2; exit 2; }
[[ $ps_mode == disable || $ps_mode == auto ]] || { echo "digests-cost.sh: --ps-mode must be disable or auto" >&2; exit 2; }
[[ $server == bundled || $server == debian ]] || { echo "digests-cost.sh: --server must be bundled or debian" >&2; exit 2; }

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"

load="$(cut -d' ' -f1 /proc/loadavg)"
if awk -v l="$load" -v m="$max_load" 'BEGIN {exit !(m > 0 && l >= m)}'; then
  die "the 1-minute load average is $load (--max-load $max_load): other work would be measured too; try later"
fi

need_install=()
command -v sysbench >/dev/null || need_install+=(sysbench)
[[ $server == bundled || -x /usr/sbin/mariadbd ]] || need_install+=(mariadb-server)
install_missing ${need_install[@]+"${need_install[@]}"}
command -v java >/dev/null || die "'java' not found (a JDK 17 is needed)"
mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"
ensure_jar "$root" "$jar" "$prebuilt_jar" "$mariadb_client"

targets=(on off)
declare -A flags=([on]="$flags_on" [off]="$flags_off")
declare -A label=([on]="Gantry, $flags_on" [off]="Gantry, $flags_off")
demo_gantry_port=$((gantry_port + 4))
declare -A gport=([on]=$gantry_port [off]=$((gantry_port + 1)))
server_ports=("$base_port" $((base_port + 1)) $((base_port + 2)))
ports_free "--base-port/--gantry-port" "${server_ports[@]}" "${gport[@]}" "$demo_gantry_port"

# ---------------------------------------------------------------- clean-up
make_work_dir digests-cost
demo_pid=""
sb_pid=""
declare -A gpid=()
cleanup() {
  local rc=$? t
  trap - EXIT INT TERM
  set +e
  [[ -n "$sb_pid" ]] && stop_pid "$sb_pid" 5
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

# ---------------------------------------------------------------- servers and the two Gantry processes
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
for t in "${targets[@]}"; do
  start_gantry_run "$t" "${gport[$t]}" "${flags[$t]}"
  gpid[$t]=$run_pid
done
for t in "${targets[@]}"; do await_gantry_answering "$t" "${gpid[$t]}" "${gport[$t]}" "$svc_user" "$svc_pass"; done
log "pids: Gantry on ${gpid[on]}, Gantry off ${gpid[off]}"

# ---------------------------------------------------------------- data
sb_common=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-db="$db" --mysql-ssl=off --tables="$tables"
           --table-size="$table_size" --mysql-user="$svc_user" --mysql-password="$svc_pass")
log "preparing $tables tables x $table_size rows on the primary"
sysbench oltp_point_select "${sb_common[@]}" --mysql-port="$base_port" --threads="$tables" prepare >"$out/prepare.log" 2>&1 \
  || { cat "$out/prepare.log" >&2; die "sysbench prepare"; }
pos="$(root_sql "$base_port" "SELECT @@gtid_binlog_pos")"
for port in "${server_ports[@]:1}"; do
  [[ "$(root_sql "$port" "SELECT MASTER_GTID_WAIT('$pos', 120)")" == 0 ]] || die "replica $port did not reach $pos"
done
log "replicas caught up at GTID $pos"

# ---------------------------------------------------------------- runs
clk_tck="$(getconf CLK_TCK)"
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime of a process, in ticks
# One sysbench run, in this shell (the clean-up knows its pid). Sets `result` to "qps p95_ms queries proxy_ticks".
result=""
run() { # target seconds logfile
  local t=$1 secs=$2 logf=$3 g0 g1
  g0="$(proc_ticks "${gpid[$t]}")"
  sysbench oltp_point_select "${sb_common[@]}" --mysql-port="${gport[$t]}" --threads="$threads" --time="$secs" \
    --events=0 --report-interval=0 --percentile=95 --db-ps-mode="$ps_mode" run >"$logf" 2>&1 &
  sb_pid=$!
  if ! wait "$sb_pid"; then
    sb_pid=""; tail -20 "$logf" >&2; die "sysbench against $t failed; log: $logf"
  fi
  sb_pid=""
  g1="$(proc_ticks "${gpid[$t]}")"
  result="$(awk -v g="$((g1 - g0))" '
    /queries:/ {n = $2; gsub(/[()]/, ""); q = $3} /95th percentile:/ {p = $3}
    END {print q, p, n, g}' "$logf")"
}
order_of() { (($1 % 2)) && echo "on off" || echo "off on"; }

if ((warmup > 0)); then
  for t in "${targets[@]}"; do
    log "warm-up: $t, ${warmup} s (not counted)"
    run "$t" "$warmup" "$out/warmup-$t.log"
  done
fi

results="$out/rounds.tsv"
printf 'round\ttarget\tqps\tp95_ms\tqueries\tproxy_ticks\n' >"$results"
for ((rr = 1; rr <= rounds; rr++)); do
  for t in $(order_of "$rr"); do
    run "$t" "$duration" "$out/round$rr-$t.log"
    read -r qps p95 n g <<<"$result"
    printf '%d\t%s\t%s\t%s\t%s\t%s\n' "$rr" "$t" "$qps" "$p95" "$n" "$g" >>"$results"
    log "round $rr/$rounds $t: $qps qps, p95 $p95 ms, proxy CPU $(awk -v g="$g" -v k="$clk_tck" 'BEGIN {printf "%.2f", g / k}') s"
  done
done

# ---------------------------------------------------------------- report
median() { sort -g | awk '{v[NR] = $1} END {if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
med() { # target awk-expression -> the median over the rounds
  awk -F'\t' -v t="$1" -v tck="$clk_tck" 'NR > 1 && $2 == t {qps = $3; p95 = $4; n = $5; g = $6; print '"$2"'}' \
    "$results" | median
}
ratios() { # the per-round on/off qps ratios, in round order
  awk -F'\t' 'NR > 1 {q[$1, $2] = $3; if ($1 > r) r = $1}
    END {for (i = 1; i <= r; i++) if (q[i, "off"] > 0) printf "%s%.3f", (i > 1 ? " " : ""), q[i, "on"] / q[i, "off"]}' "$results"
}
{
  echo
  echo "Gantry with $flags_on (on) against $flags_off (off): oltp_point_select, $threads threads, $tables x $table_size rows, --db-ps-mode=$ps_mode,"
  echo "$rounds rounds x ${duration} s, the two targets interleaved (medians over the rounds)."
  echo "Servers: $(root_sql "${server_ports[1]}" "SELECT VERSION()") ($server), a primary and two replicas shared by both."
  echo "1-minute load average before the start: $load."
  echo
  echo "| target | qps | p95 ms | proxy CPU µs/query |"
  echo "|---|---:|---:|---:|"
  for t in "${targets[@]}"; do
    printf '| %s | %.0f | %.2f | %.1f |\n' "${label[$t]}" "$(med "$t" qps)" "$(med "$t" p95)" \
      "$(med "$t" 'g * 1e6 / tck / n')"
  done
  echo
  r="$(ratios)"
  printf 'on/off qps per round: %s; median %.3f\n' "$r" "$(tr ' ' '\n' <<<"$r" | median)"
} | tee "$out/summary.md"
log "done; logs, per-round results (rounds.tsv) and the summary in $out"
