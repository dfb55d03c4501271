#!/usr/bin/env bash
# Connection churn: logins per second through Gantry, HAProxy (TCP) and direct to the primary.
#
# What PHP workers, serverless functions, scripts and pools that recycle connections do: connect, run one
# statement, close. Starts `gantry demo` (a MariaDB primary, two replicas and Gantry; the servers offer TLS unless
# --no-server-tls) and HAProxy in TCP mode in front of the primary, then runs bench/lib/login-churn/churn.mjs
# (node mysql2, pinned in its package-lock.json, installed with `npm ci` under ~/.cache/gantry/login-churn):
# CONCURRENCY loops of connect / SELECT 1 / close for --time seconds, against direct, HAProxy and Gantry in turn,
# for --rounds interleaved rounds, at each --concurrency and each --client-tls setting.
#
# Printed per setting: the median logins per second of each target, Gantry/direct and Gantry/HAProxy, the median
# p99 login time (connect, TLS, handshake, authentication), the errors, and the CPU per login of each party
# (Gantry's JVM, HAProxy, the three mariadbd together) in microseconds. The targets of issue 47: Gantry >= 1.0 x
# direct with plaintext clients, >= 1.0 x HAProxy with TLS clients (HAProxy passes the client's TLS through to the
# server; Gantry ends it, with a self-signed certificate made for the run).
#
# Usage: bench/logins.sh [--rounds N] [--time SECONDS] [--warmup SECONDS] [--concurrency "8 64"]
#                        [--client-tls "plain tls"]
#                        [--no-server-tls] [--server bundled|debian] [--base-port PORT] [--gantry-port PORT]
#                        [--haproxy-port PORT] [--out DIR] [--gantry-arg ARG]... [--jar PATH]
#
# --client-tls tls needs servers that offer TLS (direct and HAProxy pass it to them). --server debian runs Debian's
# packaged MariaDB (10.11 on Debian 12) instead of the bundled 11.4. Between two runs the script waits for the
# sockets of the previous one to leave TIME_WAIT where the local port range runs short. Everything it starts is
# stopped on exit, also on failure or Ctrl-C. All traffic stays on 127.0.0.1.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/headless/target/gantry.jar"
prebuilt_jar=false
rounds=3
duration=10
warmup=30
concurrencies="8 64"
client_modes="plain"
server_tls=true
server=bundled
base_port=36061
gantry_port=36070
haproxy_port=36071
out=""
gantry_args=()

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

while (($#)); do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --time) duration="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --concurrency) concurrencies="$2"; shift 2 ;;
    --client-tls) client_modes="$2"; shift 2 ;;
    --no-server-tls) server_tls=false; shift ;;
    --server) server="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --gantry-port) gantry_port="$2"; shift 2 ;;
    --haproxy-port) haproxy_port="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --gantry-arg) gantry_args+=("$2"); shift 2 ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; prebuilt_jar=true; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "logins.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$rounds" "$duration" "$warmup" "$base_port" "$gantry_port" "$haproxy_port" $concurrencies; do
  [[ "$n" =~ ^[0-9]+$ && "$n" -ge 1 ]] || { echo "logins.sh: '$n' is not a number >= 1" >&2; exit 2; }
done
for mode in $client_modes; do
  [[ $mode == plain || $mode == tls ]] || { echo "logins.sh: --client-tls takes plain and/or tls, not '$mode'" >&2; exit 2; }
  [[ $mode == plain || $server_tls == true ]] \
    || { echo "logins.sh: --client-tls tls needs servers that offer TLS (drop --no-server-tls)" >&2; exit 2; }
done
[[ $server == bundled || $server == debian ]] || { echo "logins.sh: --server must be bundled or debian, not '$server'" >&2; exit 2; }

mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"
churn_dir="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/login-churn"

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"

# ---------------------------------------------------------------- tools
need_install=()
command -v haproxy >/dev/null || need_install+=(haproxy)
command -v node >/dev/null || need_install+=(nodejs)
command -v npm >/dev/null || need_install+=(npm)
command -v openssl >/dev/null || need_install+=(openssl)
[[ $server == bundled || -x /usr/sbin/mariadbd ]] || need_install+=(mariadb-server)
install_missing ${need_install[@]+"${need_install[@]}"}
ensure_jar "$root" "$jar" "$prebuilt_jar" "$mariadb_client"

# The client, with the versions its lock file pins; installed again only when the lock file changes.
mkdir -p "$churn_dir"
if ! cmp -s "$root/bench/lib/login-churn/package-lock.json" "$churn_dir/package-lock.json" \
    || [[ ! -d "$churn_dir/node_modules/mysql2" ]]; then
  log "installing the churn client's node packages (npm ci) under $churn_dir"
  cp "$root/bench/lib/login-churn/package.json" "$root/bench/lib/login-churn/package-lock.json" "$churn_dir/"
  (cd "$churn_dir" && npm ci --no-audit --no-fund >/dev/null) || die "npm ci in $churn_dir"
fi
cp "$root/bench/lib/login-churn/churn.mjs" "$churn_dir/"

ports_free "--base-port/--gantry-port/--haproxy-port" "$base_port" "$((base_port + 1))" "$((base_port + 2))" \
  "$gantry_port" "$haproxy_port"

# ---------------------------------------------------------------- clean-up
make_work_dir logins
gantry_pid=""
haproxy_pid=""

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  [[ -n "$haproxy_pid" ]] && stop_pid "$haproxy_pid" 5
  if [[ -n "$gantry_pid" ]]; then
    stop_pid "$gantry_pid" 30
    stop_leftover_servers "$demo_dir"
  fi
  rm -rf "$demo_dir" "$work/tls"
  [[ "$out" == "$work"/* ]] || rmdir "$work" 2>/dev/null
  if ((rc != 0)); then log "logs kept in $out"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- servers, Gantry, HAProxy
# Gantry offers TLS to its clients with a certificate made for this run (the clients do not verify it), with the
# kind of key the sandbox's servers have (RSA 2048), so that the TLS work of each target compares.
mkdir -p "$work/tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
  -keyout "$work/tls/key.pem" -out "$work/tls/cert.pem" >/dev/null 2>&1 || die "openssl could not make a certificate"
demo_args=(--no-console --tls-cert "$work/tls/cert.pem" --tls-key "$work/tls/key.pem")
[[ $server_tls == false ]] || demo_args+=(--server-tls)
server_home=""
[[ $server == bundled ]] || server_home=/usr
log "starting gantry demo (primary $base_port, Gantry $gantry_port; servers: $server$([[ $server_tls == true ]] && echo ', offering TLS'))"
GANTRY_MARIADB_HOME="$server_home" java ${GANTRY_JAVA_OPTS:-} -jar "$jar" demo --dir "$demo_dir" \
  --base-port "$base_port" --listen "127.0.0.1:$gantry_port" "${demo_args[@]}" \
  ${gantry_args[@]+"${gantry_args[@]}"} >"$out/gantry.log" 2>&1 &
gantry_pid=$!
await_demo_ready "$gantry_pid" "$out/gantry.log"

# TCP mode in front of the primary: HAProxy forwards the login (and the client's TLS) as bytes.
cat >"$out/haproxy.cfg" <<EOF
global
    nbthread $(nproc)
    maxconn 4096
defaults
    mode tcp
    timeout connect 5s
    timeout client 1m
    timeout server 1m
listen primary
    bind 127.0.0.1:$haproxy_port
    server primary 127.0.0.1:$base_port maxconn 2048
EOF
start_haproxy "$haproxy_port"

# ---------------------------------------------------------------- runs
clk_tck="$(getconf CLK_TCK)"
ticks_of() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }   # user + sys CPU ticks of a process
servers_ticks() {
  local f total=0
  for f in "$demo_dir"/*/server.pid; do total=$((total + $(ticks_of "$(cat "$f")"))); done
  echo "$total"
}
port_of() { case "$1" in direct) echo "$base_port" ;; haproxy) echo "$haproxy_port" ;; gantry) echo "$gantry_port" ;; esac; }
# Sockets in TIME_WAIT: at a few thousand logins a second the local port range (28 232 ports here) fills within a
# run; the next run starts once fewer than half the range are waiting.
await_ports() {
  local low high limit i
  read -r low high < /proc/sys/net/ipv4/ip_local_port_range
  limit=$(((high - low) / 2))
  for ((i = 0; i < 120; i++)); do
    (($(ss -tan state time-wait 2>/dev/null | wc -l) < limit)) && return 0
    sleep 1
  done
  log "still many sockets in TIME_WAIT after 120 s; going on"
}

run_churn() { # target concurrency mode logfile -> "logins_per_s p99_ms errors gantry_us haproxy_us servers_us"
  local target=$1 conc=$2 mode=$3 logf=$4 g0 h0 s0 g1 h1 s1 line
  await_ports
  g0="$(ticks_of "$gantry_pid")"; h0="$(ticks_of "$haproxy_pid")"; s0="$(servers_ticks)"
  node "$churn_dir/churn.mjs" 127.0.0.1 "$(port_of "$target")" app app app "$conc" "$duration" "$mode" >"$logf" 2>&1 \
    || { cat "$logf" >&2; die "the churn client against $target failed"; }
  g1="$(ticks_of "$gantry_pid")"; h1="$(ticks_of "$haproxy_pid")"; s1="$(servers_ticks)"
  line="$(tail -1 "$logf")"
  node -e '
    const r = JSON.parse(process.argv[1]);
    const [g, h, s, tck] = process.argv.slice(2).map(Number);
    const perLogin = (ticks) => r.completed ? Math.round(ticks / tck * 1e6 / r.completed) : 0;
    const errors = Object.values(r.errors).reduce((a, b) => a + b, 0);
    console.log(r.logins_per_s, r.login_ms_p99, errors, perLogin(g), perLogin(h), perLogin(s));
  ' "$line" "$((g1 - g0))" "$((h1 - h0))" "$((s1 - s0))" "$clk_tck"
}

results="$out/rounds.tsv"
printf 'mode\tconcurrency\tround\ttarget\tlogins_per_s\tp99_ms\terrors\tgantry_us\thaproxy_us\tservers_us\n' >"$results"
targets=(direct haproxy gantry)
# Gantry's JIT still compiles after 20 s of churn (a 5 s warm-up left 3.3 ms of CPU per login, mostly C2; warm,
# 0.47 ms): it gets --warmup seconds, the others a few.
log "warm-up (not counted): Gantry ${warmup} s, direct and HAProxy 3 s each; plain text, 8 loops"
save_duration=$duration
for t in "${targets[@]}"; do
  duration=$([[ $t == gantry ]] && echo "$warmup" || echo 3)
  run_churn "$t" 8 plain "$out/warmup-$t.log" >/dev/null
done
duration=$save_duration
for mode in $client_modes; do
  for conc in $concurrencies; do
    for ((r = 1; r <= rounds; r++)); do
      for t in "${targets[@]}"; do
        res="$(run_churn "$t" "$conc" "$mode" "$out/$mode-$conc-$r-$t.log")"
        read -r lps p99 errs gus hus sus <<<"$res"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$conc" "$r" "$t" "$lps" "$p99" "$errs" "$gus" "$hus" "$sus" >>"$results"
        log "$mode clients, $conc loops, round $r, $t: $lps logins/s, p99 ${p99} ms, $errs errors"
      done
    done
  done
done

# ---------------------------------------------------------------- summary
summary="$out/summary.txt"
awk -F'\t' -v rounds="$rounds" '
  NR == 1 {next}
  {k = $1 SUBSEP $2 SUBSEP $4; n[k]++; lps[k, n[k]] = $5; p99[k, n[k]] = $6; err[k] += $7
   cpu[k, n[k]] = ($4 == "gantry" ? $8 : $4 == "haproxy" ? $9 : 0); srv[k, n[k]] = $10
   if (!(($1 SUBSEP $2) in seen)) {seen[$1 SUBSEP $2] = 1; order[++m] = $1 SUBSEP $2}}
  function median(arr, k, c,   i, j, x, v) {
    for (i = 1; i <= c; i++) v[i] = arr[k, i]
    for (i = 2; i <= c; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {x = v[j]; v[j] = v[j - 1]; v[j - 1] = x}
    return (c % 2) ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
  }
  END {
    for (i = 1; i <= m; i++) {
      split(order[i], s, SUBSEP)
      printf "%s clients, %s concurrent loops (median of %d rounds):\n", s[1], s[2], rounds
      for (t = 1; t <= 3; t++) {
        name = (t == 1 ? "direct" : t == 2 ? "haproxy" : "gantry"); k = s[1] SUBSEP s[2] SUBSEP name
        med[name] = median(lps, k, n[k])
        printf "  %-8s %7.0f logins/s  p99 %6.2f ms  %d errors  proxy CPU %5.0f us/login  servers CPU %5.0f us/login\n",
          name, med[name], median(p99, k, n[k]), err[k], median(cpu, k, n[k]), median(srv, k, n[k])
      }
      printf "  Gantry/direct %.2f   Gantry/HAProxy %.2f\n", med["direct"] ? med["gantry"] / med["direct"] : 0,
        med["haproxy"] ? med["gantry"] / med["haproxy"] : 0
    }
  }' "$results" | tee "$summary"
log "per-round results: $results; summary: $summary"
