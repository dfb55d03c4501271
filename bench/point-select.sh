#!/usr/bin/env bash
# Point-select throughput of Gantry against HAProxy (TCP mode) and a direct replica connection.
#
# Starts `gantry demo` (a MariaDB primary, two replicas and Gantry in front of them), HAProxy in TCP
# mode round-robin over the same two replicas, loads 4 x 10 000 sysbench rows on the primary, waits
# for the replicas, then runs sysbench oltp_point_select at 64 threads against the three targets,
# interleaved, for N rounds. Prints the median qps and p95 of each target and the ratios
# Gantry/HAProxy and Gantry/direct, with the targets of issue 17 (qps >= 0.95 x HAProxy, p95 <= 1.0 x
# HAProxy, proxy CPU per query <= 1.1 x HAProxy's). With --cold-start SECONDS, the freshly started
# Gantry first runs that long under the same load with qps reported each second, and the time it took
# to reach steady throughput is printed. Each round also reads the CPU of the demo's three mariadbd processes: the
# summary gives the servers' CPU per query behind each target (with --server-tls, the servers' own TLS work). With --profile, one extra Gantry round is recorded with JFR and its hottest frames are
# summarised. Everything it starts is stopped on exit, also on failure or Ctrl-C. All traffic stays
# on 127.0.0.1.
#
# Usage: bench/point-select.sh [--rounds N] [--time SECONDS] [--threads N] [--warmup SECONDS]
#                              [--profile] [--base-port PORT] [--gantry-port PORT]
#                              [--haproxy-port PORT] [--haproxy-nbthread N] [--out DIR]
#                              [--gantry-arg ARG]... [--jar PATH] [--ps-mode disable|auto]
#                              [--cold-start SECONDS] [--cached [--eviction-samples N]]
#                              [--server bundled|debian] [--server-tls]
#
# --server debian runs the servers from Debian's packaged MariaDB (`mariadb-server`, 10.11 on Debian 12;
# installed with apt-get when /usr/sbin/mariadbd is missing) instead of the bundled 11.4, as processes of the
# benchmark's own (GANTRY_MARIADB_HOME=/usr; the system's own service is not used).
# --server-tls makes the servers offer TLS (`gantry demo --server-tls`), so Gantry's connections to them are
# encrypted by its default ssl-mode=PREFERRED, as against most production servers; sysbench talks plain text to
# every target and HAProxy forwards it as is, so HAProxy and direct stay plain text (the issue-32 comparison).
#
# --cached creates one query cache per table on sysbench's point select
# (CREATE CACHE FROM SELECT c FROM sbtestN WHERE id=?) before the runs, so Gantry answers from its cache;
# the summary then gives the caches' target (cached Gantry qps >= 1.5 x direct), their hits and misses,
# and the time from a write on the primary to the eviction of the entry it changes (median, p99 over
# --eviction-samples writes, default 100, measured by bench/lib/EvictionLatency.java).
# bench/cached-point-select.sh runs this with --cached.
#
# --ps-mode auto runs sysbench with server-side prepared statements (its default, and what JDBC pools
# with useServerPrepStmts do); disable (the default here) with text queries.
# --jar PATH runs that gantry.jar instead of building headless/target/gantry.jar with ./gantry
# (useful to benchmark a fixed build while the sources are being edited).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/headless/target/gantry.jar"
prebuilt_jar=false

rounds=3
duration=20
threads=64
# Unmeasured warm-up per target: with 5 s, Gantry's first measured round still ran a cold JIT (more
# than twice the user CPU per query of the later rounds).
warmup=15
cold_start=0
cached=false
eviction_samples=100
profile=false
base_port=34061      # primary; replicas are base_port+1 and base_port+2
gantry_port=34070
haproxy_port=34071
# HAProxy gets as many threads as there are cores, which is its own default (nbthread = CPUs the
# process may run on) and matches Gantry, whose Netty event-loop group also sizes itself from the
# core count (2 x cores): both proxies may use every core. One HAProxy thread is a different
# trade-off, not a fairer one: in a pilot here nbthread 1 gave HAProxy ~11 % less throughput but a
# ~27 % lower p95 than nbthread 2. Override with --haproxy-nbthread to check the other setting.
haproxy_nbthread="$(nproc)"
out=""
gantry_args=()
tables=4
table_size=10000
ps_mode=disable
server=bundled
server_tls=false

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

while (($#)); do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --time) duration="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --cold-start) cold_start="$2"; shift 2 ;;
    --cached) cached=true; shift ;;
    --eviction-samples) eviction_samples="$2"; shift 2 ;;
    --profile) profile=true; shift ;;
    --base-port) base_port="$2"; shift 2 ;;
    --gantry-port) gantry_port="$2"; shift 2 ;;
    --haproxy-port) haproxy_port="$2"; shift 2 ;;
    --haproxy-nbthread) haproxy_nbthread="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --gantry-arg) gantry_args+=("$2"); shift 2 ;;
    --ps-mode) ps_mode="$2"; shift 2 ;;
    --server) server="$2"; shift 2 ;;
    --server-tls) server_tls=true; shift ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; prebuilt_jar=true; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "point-select.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$rounds" "$duration" "$threads" "$warmup" "$base_port" "$gantry_port" "$haproxy_port" "$haproxy_nbthread" "$eviction_samples"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "point-select.sh: '$n' is not a number" >&2; exit 2; }
done
[[ $ps_mode == disable || $ps_mode == auto ]] || { echo "point-select.sh: --ps-mode must be disable or auto, not '$ps_mode'" >&2; exit 2; }
[[ $server == bundled || $server == debian ]] || { echo "point-select.sh: --server must be bundled or debian, not '$server'" >&2; exit 2; }
((rounds >= 1 && duration >= 1 && threads >= 1)) || { echo "point-select.sh: rounds, time and threads must be >= 1" >&2; exit 2; }

primary_port=$base_port
replica1_port=$((base_port + 1))
replica2_port=$((base_port + 2))
mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"

# ---------------------------------------------------------------- tools
need_install=()
command -v sysbench >/dev/null || need_install+=(sysbench)
command -v haproxy >/dev/null || need_install+=(haproxy)
[[ $server == bundled || -x /usr/sbin/mariadbd ]] || need_install+=(mariadb-server)
install_missing ${need_install[@]+"${need_install[@]}"}
for tool in java jcmd jfr; do
  command -v "$tool" >/dev/null || [[ $tool != java && $profile == false ]] || die "'$tool' not found (a JDK 17 is needed)"
done

ensure_jar "$root" "$jar" "$prebuilt_jar" "$mariadb_client"

ports_free "--base-port/--gantry-port/--haproxy-port" "$primary_port" "$replica1_port" "$replica2_port" \
  "$gantry_port" "$haproxy_port"

# ---------------------------------------------------------------- clean-up
make_work_dir bench
gantry_pid=""
haproxy_pid=""

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  [[ -n "$haproxy_pid" ]] && stop_pid "$haproxy_pid" 5
  if [[ -n "$gantry_pid" ]]; then
    stop_pid "$gantry_pid" 30
    # If the demo had to be killed, its servers may have been left running: stop them by pid file.
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

# ---------------------------------------------------------------- servers and Gantry
demo_args=()
[[ $server_tls == false ]] || demo_args+=(--server-tls)
server_home=""
[[ $server == bundled ]] || server_home=/usr
log "starting gantry demo (primary $primary_port, replicas $replica1_port/$replica2_port, Gantry $gantry_port;" \
  "servers: $server$([[ $server_tls == true ]] && echo ', offering TLS'))"
GANTRY_MARIADB_HOME="$server_home" java ${GANTRY_JAVA_OPTS:-} -jar "$jar" demo --dir "$demo_dir" \
  --base-port "$base_port" --listen "127.0.0.1:$gantry_port" ${demo_args[@]+"${demo_args[@]}"} \
  ${gantry_args[@]+"${gantry_args[@]}"} >"$out/gantry.log" 2>&1 &
gantry_pid=$!
await_demo_ready "$gantry_pid" "$out/gantry.log"

sql() { # port statement...
  local port=$1; shift
  "$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "$port" -u app -papp -N -B app -e "$*"
}

# ---------------------------------------------------------------- HAProxy
# TCP mode, round-robin per connection over the two replicas (what Gantry's default session balance
# does too). No `check` on the servers: no health-check connections during the runs. maxconn 4096,
# far above the 64 connections (HAProxy needs 2 fds per connection and refuses to start when its
# maxconn needs more fds than `ulimit -n` allows). Long client/server timeouts so no idle benchmark
# connection is cut.
cat >"$out/haproxy.cfg" <<EOF
global
    nbthread $haproxy_nbthread
    maxconn 4096
defaults
    mode tcp
    timeout connect 5s
    timeout client 10m
    timeout server 10m
    maxconn 4096
listen replicas
    bind 127.0.0.1:$haproxy_port
    balance roundrobin
    server replica1 127.0.0.1:$replica1_port maxconn 2048
    server replica2 127.0.0.1:$replica2_port maxconn 2048
EOF
log "starting haproxy on $haproxy_port (nbthread $haproxy_nbthread)"
start_haproxy "$haproxy_port"

# ---------------------------------------------------------------- data
sb_common=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=app --mysql-password=app
           --mysql-db=app --mysql-ssl=off --tables="$tables" --table-size="$table_size")
log "preparing $tables tables x $table_size rows on the primary"
sysbench oltp_point_select "${sb_common[@]}" --mysql-port="$primary_port" --threads="$tables" prepare \
  >"$out/prepare.log" 2>&1 || { cat "$out/prepare.log" >&2; die "sysbench prepare"; }
pos="$(sql "$primary_port" "SELECT @@gtid_binlog_pos")"
count_sql="SELECT $(for ((t = 1; t <= tables; t++)); do printf '%s(SELECT COUNT(*) FROM sbtest%d)' "$( ((t > 1)) && echo '+')" "$t"; done)"
for port in "$replica1_port" "$replica2_port"; do
  [[ "$(sql "$port" "SELECT MASTER_GTID_WAIT('$pos', 120)")" == 0 ]] || die "replica $port did not reach $pos"
  rows="$(sql "$port" "$count_sql")"
  [[ "$rows" == $((tables * table_size)) ]] || die "replica $port has $rows rows, expected $((tables * table_size))"
done
log "replicas caught up at GTID $pos ($((tables * table_size)) rows each)"

if [[ $cached == true ]]; then
  for ((t = 1; t <= tables; t++)); do
    sql "$gantry_port" "CREATE CACHE sb$t FROM SELECT c FROM sbtest$t WHERE id=?" \
      || die "CREATE CACHE on sbtest$t through Gantry"
  done
  log "caches: $(sql "$gantry_port" "SHOW CACHES" | awk -F'\t' '{printf "%s%s (%s, %s)", (NR > 1 ? "; " : ""), $1, $4, $6}')"
fi

# ---------------------------------------------------------------- runs
clk_tck="$(getconf CLK_TCK)"
proc_cpu() { awk '{print $14, $15}' "/proc/$1/stat"; }          # utime stime (ticks) of a process
# CPU ticks (user + sys) of a JVM's JIT compiler threads ("C1 CompilerThre", "C2 CompilerThre"): compiling
# is part of the proxy's CPU while code still gets compiled (or recompiled after a deoptimization).
jit_cpu() {
  local task total=0
  for task in /proc/"$1"/task/*; do
    [[ "$(cat "$task/comm" 2>/dev/null)" == C[12]\ CompilerThre* ]] || continue
    total=$((total + $(awk '{print $14 + $15}' "$task/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
machine_cpu() { awk '$1 == "cpu" {print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }  # idle total
# CPU ticks (user + sys) of the demo's three mariadbd processes together. They share the cores with the proxy and
# sysbench, so what they spend per query weighs on every target's throughput: with --server-tls they decrypt and
# encrypt Gantry's connections, which HAProxy's and direct's plain text spares them.
servers_cpu() {
  local f total=0
  for f in "$demo_dir"/*/server.pid; do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$(cat "$f")/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}

port_of() { case "$1" in direct) echo "$replica1_port" ;; haproxy) echo "$haproxy_port" ;; gantry) echo "$gantry_port" ;; esac; }
pid_of() { case "$1" in haproxy) echo "$haproxy_pid" ;; gantry) echo "$gantry_pid" ;; *) echo "" ;; esac; }

# All three targets run with the same --db-ps-mode (--ps-mode).
run_sysbench() { # target seconds logfile [perf-stat-file]
  # -> "qps p95_ms errors queries proxy_user_s proxy_sys_s machine_idle_pct proxy_jit_s servers_s"
  local target=$1 secs=$2 logf=$3 perf_file=${4:-} port pid u0=0 s0=0 u1=0 s1=0 j0=0 j1=0 i0 t0 i1 t1 perf_pid="" m0 m1
  port="$(port_of "$target")"; pid="$(pid_of "$target")"
  if [[ -n "$pid" ]]; then read -r u0 s0 < <(proc_cpu "$pid"); fi
  if [[ $target == gantry ]]; then j0="$(jit_cpu "$pid")"; fi
  if [[ -n "$perf_file" && -n "$pid" ]]; then
    perf stat -x, -e raw_syscalls:sys_enter,context-switches -p "$pid" -o "$perf_file" &
    perf_pid=$!
  fi
  read -r i0 t0 < <(machine_cpu)
  m0="$(servers_cpu)"
  if ! sysbench oltp_point_select "${sb_common[@]}" --mysql-port="$port" --threads="$threads" \
      --time="$secs" --events=0 --report-interval=0 --percentile=95 --db-ps-mode="$ps_mode" \
      --mysql-ignore-errors=none run >"$logf" 2>&1; then
    [[ -n "$perf_pid" ]] && kill -INT "$perf_pid" 2>/dev/null
    tail -20 "$logf" >&2; die "sysbench against $target (port $port) failed; log: $logf"
  fi
  read -r i1 t1 < <(machine_cpu)
  m1="$(servers_cpu)"
  if [[ -n "$perf_pid" ]]; then kill -INT "$perf_pid" 2>/dev/null; wait "$perf_pid" 2>/dev/null || true; fi
  if [[ -n "$pid" ]]; then read -r u1 s1 < <(proc_cpu "$pid"); fi
  if [[ $target == gantry ]]; then j1="$(jit_cpu "$pid")"; fi
  awk -v us="$(((u1 - u0)))" -v ss="$(((s1 - s0)))" -v js="$((j1 - j0))" -v ms="$((m1 - m0))" -v tck="$clk_tck" \
      -v idle="$(awk -v a="$((i1 - i0))" -v b="$((t1 - t0))" 'BEGIN {printf "%.1f", b ? 100 * a / b : 0}')" '
    /queries:/ {n = $2; gsub(/[()]/, ""); qps = $3}
    /ignored errors:/ {err = $3}
    /95th percentile:/ {p95 = $3}
    END {if (qps == "" || p95 == "") exit 1
         printf "%s %s %s %s %.2f %.2f %s %.2f %.2f\n", qps, p95, err + 0, n, us / tck, ss / tck, idle, js / tck, ms / tck}' "$logf" \
    || die "could not parse $logf"
}

# Time to steady throughput from a cold JVM: qps each second from the first query Gantry proxies. Steady
# is the first second from which the 5-second moving average never falls below 90 % of the plateau (the
# median of the last third of the seconds).
cold_summary=""
if ((cold_start > 0)); then
  log "cold start: ${cold_start} s against the fresh Gantry, qps each second"
  sysbench oltp_point_select "${sb_common[@]}" --mysql-port="$gantry_port" --threads="$threads" \
    --time="$cold_start" --events=0 --report-interval=1 --db-ps-mode="$ps_mode" run >"$out/cold-start.log" 2>&1 \
    || { tail -20 "$out/cold-start.log" >&2; die "sysbench cold start against gantry failed"; }
  cold_summary="$(awk '/^\[ *[0-9]+s \]/ {for (i = 1; i <= NF; i++) if ($i == "qps:") q[++n] = $(i + 1)}
    END {
      if (n < 6) {print "too few seconds reported"; exit}
      m = 0; for (i = n - int(n / 3) + 1; i <= n; i++) tail[++m] = q[i]
      for (i = 2; i <= m; i++) for (j = i; j > 1 && tail[j - 1] > tail[j]; j--) {x = tail[j]; tail[j] = tail[j - 1]; tail[j - 1] = x}
      plateau = (m % 2) ? tail[(m + 1) / 2] : (tail[m / 2] + tail[m / 2 + 1]) / 2
      steady = -1
      for (s = 1; s + 4 <= n; s++) {
        ok = 1
        for (t = s; t + 4 <= n; t++) {avg = 0; for (k = t; k < t + 5; k++) avg += q[k]; if (avg / 5 < 0.9 * plateau) {ok = 0; break}}
        if (ok) {steady = s; break}
      }
      printf "first second %.0f qps, plateau %.0f qps; steady (5 s average >= 90%% of the plateau from then on) after %s s", q[1], plateau, steady < 0 ? "more than " n : steady - 1
    }' "$out/cold-start.log")"
  log "cold start: $cold_summary"
fi

targets=(direct haproxy gantry)
if ((warmup > 0)); then
  log "warm-up: ${warmup} s against each target (not counted)"
  for t in "${targets[@]}"; do res="$(run_sysbench "$t" "$warmup" "$out/warmup-$t.log")"; done
fi

results="$out/rounds.tsv"
printf 'round\ttarget\tqps\tp95_ms\terrors\tqueries\tproxy_user_s\tproxy_sys_s\tmachine_idle_pct\tproxy_jit_s\tservers_s\n' >"$results"
for ((r = 1; r <= rounds; r++)); do
  # Rotate the order every round so no target always runs first (or right after another).
  order=("${targets[@]:$(((r - 1) % 3))}" "${targets[@]:0:$(((r - 1) % 3))}")
  for t in "${order[@]}"; do
    res="$(run_sysbench "$t" "$duration" "$out/round$r-$t.log")"
    read -r qps p95 err n us ss idle js ms <<<"$res"
    printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$t" "$qps" "$p95" "$err" "$n" "$us" "$ss" "$idle" "$js" "$ms" >>"$results"
    log "round $r/$rounds $t: $qps qps, p95 $p95 ms, errors $err, machine idle $idle%$( [[ $t != direct ]] && echo ", proxy CPU ${us}s user + ${ss}s sys")$( [[ $t == gantry ]] && echo " (JIT compiler threads ${js}s of it)")"
  done
done

# ---------------------------------------------------------------- report
median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { awk -F'\t' -v t="$1" -v c="$2" 'NR > 1 && $2 == t {print $c}' "$results"; }
# CPU µs per query of the proxy process in each round, "user sys" -> median of each.
cpu_per_query() { awk -F'\t' -v t="$1" -v c="$2" 'NR > 1 && $2 == t {printf "%.1f\n", $c * 1e6 / $6}' "$results" | median; }
server_version="$(sql "$replica1_port" "SELECT VERSION()")"
server_tls_seen="-"
if [[ $server_tls == true ]]; then
  # The servers' own count of TLS logins and the cipher of Gantry's connections, so the summary shows that
  # Gantry really encrypted (sysbench's and HAProxy's connections are plain text).
  server_tls_seen="$(sql "$replica1_port" "SHOW GLOBAL STATUS LIKE 'Ssl_finished_accepts'" | awk '{print $2}') TLS logins on replica1, $(sql "$gantry_port" "SHOW GANTRY STATUS" | awk -F'\t' '$1 == "TLS Implementation" {print $2}')"
fi
declare -A mq mp
for t in "${targets[@]}"; do mq[$t]="$(col "$t" 3 | median)"; mp[$t]="$(col "$t" 4 | median)"; done

{
  echo
  echo "oltp_point_select$( [[ $cached == true ]] && echo " with a cache per table"), $threads threads, $tables x $table_size rows, --db-ps-mode=$ps_mode, $rounds rounds x ${duration} s interleaved (medians)"
  echo "Servers: $server_version$([[ $server_tls == true ]] && echo ", offering TLS: Gantry -> servers encrypted ($server_tls_seen), HAProxy and direct plain text" || echo ", no TLS")."
  echo
  echo "| target | qps | p95 ms | proxy CPU µs/query: user + sys | servers' CPU µs/query | machine idle % | qps of each round |"
  echo "|---|---:|---:|---:|---:|---:|---|"
  for t in "${targets[@]}"; do
    per_round="$(col "$t" 3 | awk '{printf "%s%.0f", (NR > 1 ? ", " : ""), $1}')"
    idle="$(col "$t" 9 | median)"
    if [[ $t == direct ]]; then
      printf '| %s | %.0f | %.2f | - | %.1f | %.1f | %s |\n' "direct (replica1)" "${mq[$t]}" "${mp[$t]}" \
        "$(cpu_per_query "$t" 11)" "$idle" "$per_round"
    else
      label="$t"; [[ $t == gantry && $cached == true ]] && label="gantry (cached)"
      printf '| %s | %.0f | %.2f | %.1f + %.1f | %.1f | %.1f | %s |\n' "$label" "${mq[$t]}" "${mp[$t]}" \
        "$(cpu_per_query "$t" 7)" "$(cpu_per_query "$t" 8)" "$(cpu_per_query "$t" 11)" "$idle" "$per_round"
    fi
  done
  echo
  awk -v gq="${mq[gantry]}" -v hq="${mq[haproxy]}" -v dq="${mq[direct]}" -v cached="$cached" \
      -v gp="${mp[gantry]}" -v hp="${mp[haproxy]}" -v dp="${mp[direct]}" 'BEGIN {
    printf "| ratio | qps | p95 |\n|---|---:|---:|\n"
    printf "| Gantry / HAProxy | %.3f | %.3f |\n", gq / hq, gp / hp
    printf "| Gantry / direct | %.3f | %.3f |\n", gq / dq, gp / dp
    printf "| HAProxy / direct | %.3f | %.3f |\n", hq / dq, hp / dp
    # (Comparisons in parentheses: a bare > among printf arguments would redirect its output.)
    if (cached == "true") exit  # the caches have their own target, below
    printf "\nTargets: Gantry qps >= 0.95 x HAProxy: %s (%.3f); p95 <= 1.0 x HAProxy: %s (%.3f)\n",
      ((gq / hq >= 0.95) ? "met" : "NOT MET"), gq / hq, ((gp / hp <= 1.0) ? "met" : "NOT MET"), gp / hp
  }'
  gc="$(awk -F'\t' 'NR > 1 && $2 == "gantry" {printf "%.2f\n", ($7 + $8) * 1e6 / $6}' "$results" | median)"
  hc="$(awk -F'\t' 'NR > 1 && $2 == "haproxy" {printf "%.2f\n", ($7 + $8) * 1e6 / $6}' "$results" | median)"
  [[ $cached == true ]] || awk -v g="$gc" -v h="$hc" 'BEGIN {printf "Proxy CPU per query (user + sys, medians): Gantry %.1f µs, HAProxy %.1f µs: %.2f x; target <= 1.1 x: %s\n", g, h, g / h, ((g / h <= 1.1) ? "met" : "NOT MET")}'
  # Not a target, an explanation: how much of Gantry's CPU per query each round went to compiling code.
  awk -F'\t' 'NR > 1 && $2 == "gantry" {printf "%s%.1f", (n++ ? ", " : ""), $10 * 1e6 / $6}
    END {if (n) printf " µs/query in each round\n"}' "$results" | sed 's/^/Of which Gantry'"'"'s JIT compiler threads: /'
  # Not a target either: what the servers spent per query behind each proxy (all three share the machine's cores,
  # so what the servers spend more behind one proxy is throughput that proxy cannot have).
  awk -v g="$(cpu_per_query gantry 11)" -v h="$(cpu_per_query haproxy 11)" \
    'BEGIN {printf "Servers'"'"' CPU per query (the three mariadbd, medians): behind Gantry %.1f µs, behind HAProxy %.1f µs (%+.1f µs)\n", g, h, g - h}'
  if [[ -n "$cold_summary" ]]; then echo "Cold start (Gantry, ${cold_start} s): $cold_summary"; fi
  if [[ $cached == true ]]; then
    awk -v gq="${mq[gantry]}" -v dq="${mq[direct]}" 'BEGIN {
      printf "\nTarget: cached Gantry qps >= 1.5 x direct: %s (%.3f)\n", ((gq / dq >= 1.5) ? "met" : "NOT MET"), gq / dq}'
    echo
    echo "Caches after the runs (SHOW CACHES: name, entries, hits, misses, evicted by change/TTL/memory, freshness):"
    sql "$gantry_port" "SHOW CACHES" | awk -F'\t' '{printf "  %s: %s entries, %s hits, %s misses, evicted %s/%s/%s, %s\n", $1, $7, $9, $10, $11, $12, $13, $6}'
    read -r ev_median ev_p99 ev_n < <(java -cp "$jar" "$root/bench/lib/EvictionLatency.java" "$gantry_port" "$primary_port" "$eviction_samples") \
      || die "the eviction latency measurement failed"
    echo "Write on the primary -> eviction of the cached entry it changes, as a client sees it: median $ev_median ms, p99 $ev_p99 ms ($ev_n writes)"
  fi
  echo "sysbench errors over all rounds: $(awk -F'\t' 'NR > 1 {s += $5} END {print s + 0}' "$results")"
} | tee "$out/summary.md"

# ---------------------------------------------------------------- profile
if [[ $profile == true ]]; then
  # 1. System calls and context switches per query of each proxy (perf stat counts kernel
  #    tracepoints: no sampling, little overhead), in one extra short round each.
  perf_secs=$((duration < 10 ? duration : 10))
  if perf stat -e raw_syscalls:sys_enter -- true >/dev/null 2>&1; then
    {
      echo
      echo "Per query, each proxy in one extra ${perf_secs} s round under \`perf stat\` (process totals / sysbench queries):"
      echo
      echo "| proxy | qps | syscalls / query | context switches / query | CPU µs / query (user + sys) |"
      echo "|---|---:|---:|---:|---:|"
      for t in haproxy gantry; do
        res="$(run_sysbench "$t" "$perf_secs" "$out/perf-$t.log" "$out/perf-$t.csv")"
        read -r qps p95 err n us ss idle js ms <<<"$res"
        awk -F, -v t="$t" -v n="$n" -v q="$qps" -v us="$us" -v ss="$ss" '
          $3 ~ /sys_enter/ {sc = $1} $3 ~ /context-switches/ {cs = $1}
          END {printf "| %s | %.0f | %.2f | %.2f | %.1f + %.1f |\n", t, q, sc / n, cs / n, us * 1e6 / n, ss * 1e6 / n}' "$out/perf-$t.csv"
      done
    } | tee "$out/perf.md"
  else
    log "perf cannot count tracepoints here: skipping the syscall counts"
  fi

  # 2. JFR on the Gantry JVM. The recording is started with jcmd on the JVM that served the measured
  #    rounds, so servers, JIT state and connections are the same and the measured rounds ran
  #    without JFR.
  jfr_file="$out/gantry.jfr"
  log "profile: one more Gantry round (${duration} s) with JFR on the running Gantry JVM"
  jcmd "$gantry_pid" JFR.start name=bench settings=profile filename="$jfr_file" >"$out/jfr-start.log" 2>&1 \
    || { cat "$out/jfr-start.log" >&2; die "jcmd JFR.start"; }
  res="$(run_sysbench gantry "$duration" "$out/profile-gantry.log")"
  read -r qps p95 err n us ss idle js ms <<<"$res"
  jcmd "$gantry_pid" JFR.stop name=bench >"$out/jfr-stop.log" 2>&1 || { cat "$out/jfr-stop.log" >&2; die "jcmd JFR.stop"; }
  [[ -s "$jfr_file" ]] || die "no recording at $jfr_file"
  jfr summary "$jfr_file" >"$out/jfr-summary.txt"
  # One line per sample: thread <TAB> frame1 <TAB> frame2 ... (top frame first, line numbers dropped).
  stacks() {
    jfr print --events "$1" --stack-depth 64 "$jfr_file" | awk '
      /^jdk\.[A-Za-z]+ \{/ {thread = ""; n = 0; inst = 0; next}
      /sampledThread = / {s = $0; sub(/.*sampledThread = "/, "", s); sub(/".*/, "", s); thread = s}
      /stackTrace = \[/ {inst = 1; next}
      inst && /^[[:space:]]*\]/ {inst = 0; line = thread; for (i = 1; i <= n; i++) line = line "\t" f[i]; print line; next}
      inst {s = $0; sub(/^[[:space:]]+/, "", s); sub(/[[:space:]]+line:.*/, "", s); if (s != "...") f[++n] = s}'
  }
  stacks jdk.ExecutionSample >"$out/stacks.tsv"
  stacks jdk.NativeMethodSample >"$out/native-stacks.tsv"
  total="$(wc -l <"$out/stacks.tsv")"
  ntotal="$(wc -l <"$out/native-stacks.tsv")"
  pct() { awk -v t="$1" '{c = $1; $1 = ""; printf "%6d %5.1f%% %s\n", c, t ? 100 * c / t : 0, substr($0, 2)}'; }
  {
    echo
    echo "JFR profile of the Gantry JVM during one extra ${duration} s round: $qps qps, p95 $p95 ms (JFR on:"
    echo "its sampling costs throughput on a saturated 2-core machine; read the shares, not the qps)."
    echo "jdk.ExecutionSample (a thread running Java code, 'profile' settings: every 10 ms, a few threads a period): $total samples"
    echo
    echo "Top 15 frames by samples (self: the frame on top of the stack):"
    echo '```'
    awk -F'\t' '{print $2}' "$out/stacks.tsv" | sort | uniq -c | sort -rn | awk 'NR <= 15' | pct "$total"
    echo '```'
    echo "Self samples by package:"
    echo '```'
    awk -F'\t' '{m = $2; sub(/\.[^.]+\.[^.(]+\(.*$/, "", m); n = split(m, p, "."); k = p[1] "." p[2]; if ((p[1] == "io" || p[1] == "java") && n >= 3) k = k "." p[3]; print k}' \
      "$out/stacks.tsv" | sort | uniq -c | sort -rn | awk 'NR <= 12' | pct "$total"
    echo '```'
    echo "Gantry's own code (io.gantry.*): samples with an io.gantry frame on top (self), and, for every"
    echo "sample, the io.gantry frame nearest the top (inclusive: that method or what it calls), top 15:"
    echo '```'
    awk -F'\t' '$2 ~ /^io\.gantry\./ {s++} END {printf "self in io.gantry.*: %d samples\n", s}' "$out/stacks.tsv"
    awk -F'\t' '{for (i = 2; i <= NF; i++) if ($i ~ /^io\.gantry\./) {print $i; next}; print "(no io.gantry frame)"}' "$out/stacks.tsv" \
      | sort | uniq -c | sort -rn | awk 'NR <= 15' | pct "$total"
    echo '```'
    iototal="$(awk -F'\t' '$1 ~ /^gantry-io/' "$out/native-stacks.tsv" | wc -l)"
    echo "jdk.NativeMethodSample of the gantry-io threads (in a system call or waiting in epoll, every 20 ms;"
    echo "the other $((ntotal - iototal)) of $ntotal are idle threads, e.g. the sandbox waiting on its mariadbd processes):"
    echo '```'
    awk -F'\t' '$1 ~ /^gantry-io/ {print $2}' "$out/native-stacks.tsv" | sort | uniq -c | sort -rn | awk 'NR <= 6' | pct "$iototal"
    echo '```'
    echo "Java samples by thread:"
    echo '```'
    awk -F'\t' '{t = $1; sub(/-[0-9]+$/, "", t); print t}' "$out/stacks.tsv" | sort | uniq -c | sort -rn | awk 'NR <= 6'
    echo '```'
    echo "GC: $(awk '$1 == "jdk.GarbageCollection" {print $2}' "$out/jfr-summary.txt") collections during the round; recording: $jfr_file"
  } | tee "$out/profile.md"
fi

log "done; logs, per-round results and summaries in $out"
