#!/usr/bin/env bash
# The Cetus claim, measured (issue 44, point 7): Gantry's --connection-retention-ms 256 (the default, a figure taken
# from Cetus) against --connection-retention-ms 0 and against --multiplex off, all three in front of the same servers.
#
# Starts one `gantry demo` (a MariaDB primary and two replicas; the demo's own Gantry, started with --no-cdc, is left
# idle) and three more Gantry processes, `java -jar gantry.jar run`, each with its own --listen port and --data-dir,
# in front of the demo's three servers as the demo's service account, alike but for one setting:
#   r256  --connection-retention-ms 256 (the default)
#   r0    --connection-retention-ms 0: a session's connection goes back to the pool at the end of every statement
#   off   --multiplex off: each session keeps its own connections for its whole life
# All three run with --no-cdc (no writes here, so the change stream would only idle). Loads 4 x 10 000 sysbench rows
# on the primary and waits for the replicas, makes one sysbench account per target (SELECT on the demo's database),
# so that each server's PROCESSLIST tells the targets' connections apart, then runs sysbench rounds interleaved over
# the three targets (order rotated every round, so the shared machine's noise hits them alike), for each workload:
#   flat   oltp_point_select from --threads sessions, flat out
#   paced  the same at --rate statements a second, all sessions together (sysbench's --rate): each session pauses
#          between statements, on average threads / rate seconds (21 ms at the defaults). A session whose pause is
#          longer than the retention finds its connection back in the pool, and its next statement takes a pooled
#          one, most often one another session used last (a hand-off). With r256 that needs pauses over 256 ms, a
#          --rate below threads x 1000 / 256 (250 at 64 threads); r0 hands off at any rate.
#   own    bench/lib/point-select-own-settings.lua at --rate: each session with settings of its own (time zone,
#          max_join_size, sql_mode, SET NAMES), so a hand-off also resets the connection and replays the settings
# Each target and workload gets an unmeasured warm-up of --warmup seconds first. Per target and workload it prints,
# medians over the rounds: qps, avg and p95 latency (sysbench), Gantry's CPU per query (user + sys of its JVM from
# /proc/PID/stat, as bench/point-select.sh), the three servers' CPU per query, the connections of the target's
# account on each server 2 s before the round's end (information_schema.PROCESSLIST, as root) and how many of them sat
# idle in Gantry's pools then (SHOW GANTRY POOLS, Idle), and over the round, from SHOW GANTRY POOLS, the pool takes
# per query (Reused: a statement or login that took a pooled connection instead of opening one; a hand-off where
# another session used it last, which with the own workload means a reset and a replay) and the server connections
# the target opened (Created; with --multiplex off every session opens its own). It also saves each target's
# gantry.events (a replica marked down changes the routing of that target's round). Everything it starts is stopped
# on exit, also on failure or Ctrl-C; all traffic stays on 127.0.0.1. Time: about workloads x 3 x (warmup + rounds x
# time) plus a minute of start-up (9 minutes at the defaults); a sysbench run still going 60 s after its time stops
# the script.
#
# Usage: bench/retention.sh [--rounds N] [--time SECONDS] [--warmup SECONDS] [--threads N] [--rate QPS]
#                           [--workloads flat,paced,own] [--ps-mode disable|auto] [--jar PATH]
#                           [--server bundled|debian] [--out DIR] [--base-port PORT] [--gantry-port PORT]
#
# Defaults: 3 rounds of 15 s, 10 s warm-up, 64 threads, --rate 3000, all three workloads, --ps-mode disable (text
# queries). --base-port (39061) is the primary's, the replicas the next two; the three targets listen on
# --gantry-port (39070), +1 and +2 (r256, r0, off), the demo's own Gantry on +3. --server and --jar as in
# bench/point-select.sh: debian runs the servers from Debian's mariadb-server (installed when missing); --jar runs
# that jar instead of building headless/target/gantry.jar with ./gantry.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/headless/target/gantry.jar"
prebuilt_jar=false
rounds=3
duration=15
warmup=10
threads=64
rate=3000
workloads="flat,paced,own"
ps_mode=disable
server=bundled
out=""
base_port=39061
gantry_port=39070
tables=4
table_size=10000

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --time) duration="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --workloads) workloads="$2"; shift 2 ;;
    --ps-mode) ps_mode="$2"; shift 2 ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; prebuilt_jar=true; shift 2 ;;
    --server) server="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --gantry-port) gantry_port="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "retention.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$rounds" "$duration" "$warmup" "$threads" "$rate" "$base_port" "$gantry_port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "retention.sh: '$n' is not a number" >&2; exit 2; }
done
((rounds >= 1 && duration >= 2 && threads >= 1 && rate >= 1)) \
  || { echo "retention.sh: rounds, threads and rate must be >= 1, time >= 2" >&2; exit 2; }
[[ $ps_mode == disable || $ps_mode == auto ]] || { echo "retention.sh: --ps-mode must be disable or auto" >&2; exit 2; }
[[ $server == bundled || $server == debian ]] || { echo "retention.sh: --server must be bundled or debian" >&2; exit 2; }
IFS=, read -r -a wl <<<"$workloads"
((${#wl[@]} >= 1)) || { echo "retention.sh: --workloads is empty" >&2; exit 2; }
for w in "${wl[@]}"; do
  [[ $w == flat || $w == paced || $w == own ]] || { echo "retention.sh: unknown workload '$w' (flat, paced, own)" >&2; exit 2; }
  [[ $w != own ]] || ((threads <= 780)) || { echo "retention.sh: own: at most 780 threads (the lua's distinct settings)" >&2; exit 2; }
done

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"

need_install=()
command -v sysbench >/dev/null || need_install+=(sysbench)
[[ $server == bundled || -x /usr/sbin/mariadbd ]] || need_install+=(mariadb-server)
if ((${#need_install[@]})); then
  log "installing ${need_install[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y "${need_install[@]}" >/dev/null; then
    apt-get update >/dev/null
    apt-get install -y "${need_install[@]}" >/dev/null
  fi
fi
command -v java >/dev/null || die "'java' not found (a JDK 17 is needed)"
mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"
ensure_jar "$root" "$jar" "$prebuilt_jar" "$mariadb_client"

targets=(r256 r0 off)
declare -A flags=([r256]="--connection-retention-ms 256" [r0]="--connection-retention-ms 0" [off]="--multiplex off")
declare -A label=([r256]="retention 256 ms (default)" [r0]="retention 0" [off]="multiplexing off")
declare -A tport=([r256]=$gantry_port [r0]=$((gantry_port + 1)) [off]=$((gantry_port + 2)))
demo_gantry_port=$((gantry_port + 3))
server_ports=("$base_port" $((base_port + 1)) $((base_port + 2)))
for p in "${server_ports[@]}" "${tport[@]}" "$demo_gantry_port"; do
  ! port_busy "$p" || die "port $p on 127.0.0.1 is in use; choose others with --base-port/--gantry-port"
done

# ---------------------------------------------------------------- clean-up
work="$(mktemp -d "${TMPDIR:-/tmp}/gantry-retention.XXXXXX")"
[[ -n "$out" ]] || out="$work/results"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
demo_dir="$work/demo"
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
    stop_leftover_servers "$demo_dir"  # a demo that had to be killed may have left its servers running
  fi
  rm -rf "$demo_dir" "$work"/gantry-* "$work/upstream.password" "$work"/sample.[0-3]
  [[ "$out" == "$work"/* ]] || rmdir "$work" 2>/dev/null
  if ((rc != 0)); then log "logs kept in $out"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- servers and the three Gantry processes
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
account_of() { echo "sb_$1"; }
for t in "${targets[@]}"; do
  a="$(account_of "$t")"
  root_sql "$base_port" "CREATE USER IF NOT EXISTS '$a'@'%' IDENTIFIED BY '$a'; GRANT SELECT ON \`$db\`.* TO '$a'@'%'" \
    || die "creating the sysbench account $a"
done

for t in "${targets[@]}"; do
  start_gantry_run "$t" "${tport[$t]}" "${flags[$t]}"
  gpid[$t]=$run_pid
done
for t in "${targets[@]}"; do
  await_gantry_answering "$t" "${gpid[$t]}" "${tport[$t]}" "$(account_of "$t")" "$(account_of "$t")"
done
log "Gantry pids: r256 ${gpid[r256]}, r0 ${gpid[r0]}, off ${gpid[off]}"

# ---------------------------------------------------------------- data
sb_common=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-db="$db" --mysql-ssl=off --tables="$tables"
           --table-size="$table_size")
log "preparing $tables tables x $table_size rows on the primary"
sysbench oltp_point_select "${sb_common[@]}" --mysql-user="$svc_user" --mysql-password="$svc_pass" \
  --mysql-port="$base_port" --threads="$tables" prepare >"$out/prepare.log" 2>&1 \
  || { cat "$out/prepare.log" >&2; die "sysbench prepare"; }
pos="$(root_sql "$base_port" "SELECT @@gtid_binlog_pos")"
count_sql="SELECT $(for ((n = 1; n <= tables; n++)); do printf '%s(SELECT COUNT(*) FROM %s.sbtest%d)' "$( ((n > 1)) && echo '+')" "$db" "$n"; done)"
for port in "${server_ports[@]:1}"; do
  [[ "$(root_sql "$port" "SELECT MASTER_GTID_WAIT('$pos', 120)")" == 0 ]] || die "replica $port did not reach $pos"
  rows="$(root_sql "$port" "$count_sql")"
  [[ "$rows" == $((tables * table_size)) ]] || die "replica $port has $rows rows, expected $((tables * table_size))"
done
log "replicas caught up at GTID $pos ($((tables * table_size)) rows each)"

# ---------------------------------------------------------------- runs
declare -A ev0=()  # each target's last event before the runs
for t in "${targets[@]}"; do
  ev0[$t]="$("$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "${tport[$t]}" -u "$svc_user" -p"$svc_pass" -N -B \
    -e "SELECT COALESCE(MAX(id), 0) FROM gantry.events")" || die "could not read gantry.events of $t"
done
clk_tck="$(getconf CLK_TCK)"
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime of a process, in ticks
servers_ticks() { # the demo's three mariadbd together
  local f total=0
  for f in "$demo_dir"/*/server.pid; do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$(cat "$f")/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
pool_figures() { # target [column...] -> the columns (default Reused Created) of SHOW GANTRY POOLS, summed over the
  # target's account's rows (one per server), or "-" each without such rows
  local t=$1; shift
  "$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "${tport[$t]}" -u "$svc_user" -p"$svc_pass" -B \
    -e "SHOW GANTRY POOLS" | awk -F'\t' -v u="$(account_of "$t")" -v cols="${*:-Reused Created}" '
      NR == 1 {for (c = 1; c <= NF; c++) h[$c] = c; k = split(cols, want, " "); next}
      $h["User"] == u {for (i = 1; i <= k; i++) v[i] += $h[want[i]]; n++}
      END {for (i = 1; i <= k; i++) printf "%s%s", (i > 1 ? " " : ""), (n ? v[i] : "-"); print ""}'
}
# Connections of the target's account on each server (PROCESSLIST, as root) and idle in its Gantry's pools, asked
# at once (one after the other they took over a second on a busy machine) -> "primary replica1 replica2 pool_idle"
connections_of() { # target
  local t=$1 a k jobs=()
  a="$(account_of "$t")"
  for k in 0 1 2; do
    { root_sql "${server_ports[$k]}" "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = '$a'" \
        2>/dev/null || echo "?"; } >"$work/sample.$k" &
    jobs+=($!)
  done
  { pool_figures "$t" Idle 2>/dev/null || echo "?"; } >"$work/sample.3" &
  jobs+=($!)
  wait "${jobs[@]}" || true
  cat "$work"/sample.[0-3] | paste -sd' '
}
alive() { ! [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || echo gone)" =~ ^(gone|Z)$ ]]; }

# One sysbench run against a target, in this shell (so that the clean-up knows sysbench's pid). Sets `result` to
# "qps avg_ms p95_ms queries gantry_ticks servers_ticks conns_primary conns_r1 conns_r2 pool_idle reused created".
result=""
sample_before=$((duration >= 4 ? 2 : 1))  # seconds before a round's end that the connections are counted
run() { # target workload seconds logfile
  local t=$1 w=$2 secs=$3 logf=$4 script=oltp_point_select r=0 g0 g1 s0 s1 p0 p1 conns="? ? ? ?" start now
  [[ $w == flat ]] || r=$rate
  [[ $w != own ]] || script="$root/bench/lib/point-select-own-settings.lua"
  p0="$(pool_figures "$t")"
  g0="$(proc_ticks "${gpid[$t]}")"; s0="$(servers_ticks)"
  LUA_PATH="/usr/share/sysbench/?.lua;;" sysbench "$script" "${sb_common[@]}" --mysql-port="${tport[$t]}" \
    --mysql-user="$(account_of "$t")" --mysql-password="$(account_of "$t")" --threads="$threads" --time="$secs" \
    --events=0 --rate="$r" --report-interval=0 --percentile=95 --db-ps-mode="$ps_mode" --mysql-ignore-errors=none \
    run >"$logf" 2>&1 &
  sb_pid=$!
  start="${EPOCHREALTIME//[.,]/}"
  local sampled=false
  while alive "$sb_pid"; do
    now="${EPOCHREALTIME//[.,]/}"
    if [[ $sampled == false ]] && ((now - start >= (secs - sample_before) * 1000000)); then
      conns="$(connections_of "$t")"; sampled=true
      # Sampled after sysbench's end, multiplexing off would show no connections: such a sample is no sample.
      alive "$sb_pid" || { log "sysbench against $t ended before the connections were counted"; conns="? ? ? ?"; }
    fi
    ((now - start < (secs + 60) * 1000000)) || die "sysbench against $t ($w) still running $((secs + 60)) s after its start"
    sleep 0.1
  done
  if ! wait "$sb_pid"; then
    sb_pid=""; tail -20 "$logf" >&2; die "sysbench against $t ($w, port ${tport[$t]}) failed; log: $logf"
  fi
  sb_pid=""
  g1="$(proc_ticks "${gpid[$t]}")"; s1="$(servers_ticks)"
  p1="$(pool_figures "$t")"
  result="$(awk -v g="$((g1 - g0))" -v s="$((s1 - s0))" -v c="$conns" -v p0="$p0" -v p1="$p1" '
    /queries:/ {n = $2; gsub(/[()]/, ""); q = $3} /avg:/ {a = $2} /95th percentile:/ {p = $3}
    END {
      split(p0, x, " "); split(p1, y, " ")
      pr = (x[1] == "-" || y[1] == "-") ? "-" : y[1] - x[1]; pc = (x[1] == "-" || y[1] == "-") ? "-" : y[2] - x[2]
      print q, a, p, n, g, s, c, pr, pc
    }' "$logf")"
}

# Rotates the targets: round r starts with the ((r - 1) mod 3)th.
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
printf 'round\tworkload\ttarget\tqps\tavg_ms\tp95_ms\tqueries\tgantry_ticks\tservers_ticks\tconns_primary\tconns_replica1\tconns_replica2\tpool_idle\treused\tcreated\n' >"$results"
for ((rr = 1; rr <= rounds; rr++)); do
  for w in "${wl[@]}"; do
    for t in $(order_of "$rr"); do
      run "$t" "$w" "$duration" "$out/round$rr-$w-$t.log"
      read -r qps avg p95 n g s c0 c1 c2 idle reused created <<<"$result"
      printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rr" "$w" "$t" "$qps" "$avg" "$p95" "$n" "$g" \
        "$s" "$c0" "$c1" "$c2" "$idle" "$reused" "$created" >>"$results"
      log "round $rr/$rounds $w $t: $qps qps, avg $avg ms, p95 $p95 ms, Gantry CPU $(awk -v g="$g" -v k="$clk_tck" 'BEGIN {printf "%.2f", g / k}') s," \
        "server connections $c0/$c1/$c2 (idle in the pools $idle), pool takes $reused, created $created"
    done
  done
done

# ---------------------------------------------------------------- report
# What each target's timeline gained during the runs (a server marked down, a new primary, ...): a round where one of
# them saw a replica down routed differently and is not comparable.
events=""
for t in "${targets[@]}"; do
  "$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "${tport[$t]}" -u "$svc_user" -p"$svc_pass" -N -B \
    -e "SELECT id, at, server, kind, reason FROM gantry.events WHERE id > ${ev0[$t]} ORDER BY id" >"$out/events-$t.tsv" \
    || log "could not read gantry.events of $t"
  events+="${events:+, }$t $(wc -l <"$out/events-$t.tsv")"
done
median() { sort -g | awk '{v[NR] = $1} END {if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# Per round of workload $1 on target $2, the awk expression $3 over the columns -> median ("-" where a column is "-").
med() {
  awk -F'\t' -v w="$1" -v t="$2" -v tck="$clk_tck" 'NR > 1 && $2 == w && $3 == t {
      qps = $4; avg = $5; p95 = $6; n = $7; g = $8; s = $9; c0 = $10; c1 = $11; c2 = $12; idle = $13; reused = $14; created = $15
      v = '"$3"'
      if (v == "-" || v == "?") next  # no pools; a connection count that could not be taken
      print v}' "$results" | median
}
describe() {
  case "$1" in
    flat) echo "oltp_point_select, flat out" ;;
    paced) echo "oltp_point_select at $rate statements/s (a session's mean pause $(awk -v t="$threads" -v r="$rate" 'BEGIN {printf "%.1f", 1000 * t / r}') ms)" ;;
    own) echo "own settings per session (bench/lib/point-select-own-settings.lua) at $rate statements/s" ;;
  esac
}
{
  echo
  echo "Connection retention with multiplexing on, against multiplexing off: $threads sysbench sessions, $tables x $table_size rows,"
  echo "--db-ps-mode=$ps_mode, $rounds rounds x ${duration} s, targets interleaved (medians over the rounds)."
  echo "Servers: $(root_sql "${server_ports[1]}" "SELECT VERSION()") ($server), a primary and two replicas shared by the three targets."
  for w in "${wl[@]}"; do
    echo
    echo "**$w**: $(describe "$w")"
    echo
    echo "| target | qps | avg ms | p95 ms | Gantry CPU µs/query | servers' CPU µs/query | account's server connections ${sample_before} s before the end: primary + replicas (idle in Gantry's pools) | pool takes per query | server connections opened per round |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for t in "${targets[@]}"; do
      printf '| %s | %.0f | %.3f | %.2f | %.1f | %.1f | %s + %s + %s (%s) | %s | %s |\n' "${label[$t]}" "$(med "$w" "$t" qps)" \
        "$(med "$w" "$t" avg)" "$(med "$w" "$t" p95)" "$(med "$w" "$t" 'g * 1e6 / tck / n')" \
        "$(med "$w" "$t" 's * 1e6 / tck / n')" "$(med "$w" "$t" c0)" "$(med "$w" "$t" c1)" "$(med "$w" "$t" c2)" \
        "$(med "$w" "$t" idle)" \
        "$(med "$w" "$t" '(reused == "-") ? "-" : sprintf("%.3f", reused / n)')" "$(med "$w" "$t" created)"
    done
  done
  echo
  echo "sysbench errors: none (--mysql-ignore-errors=none stops the script at the first). New events in gantry.events"
  echo "during the runs (a replica marked down, ...): $events$(cat "$out"/events-*.tsv | awk -F'\t' '{printf "%s%s %s %s", (NR == 1 ? "; " : ", "), $2, $3, $4}')."
} | tee "$out/summary.md"
log "done; logs, per-round results (rounds.tsv) and the summary in $out"
