#!/usr/bin/env bash
# node mysql2's own test suite through a Gantry that is taken over every --every seconds (issue 46).
#
# Starts `gantry demo --server-tls` for its servers (a MariaDB primary and two replicas; its own Gantry stays idle)
# and creates the database `test`; runs the suite (`npx poku`, as root) straight against the primary; then starts
# `gantry run` on --socket-transport epoll in front of the servers (its defaults otherwise, change stream included)
# and runs the suite again through it while, every --every seconds, a new `gantry run` with the same flags, data
# directory and --listen starts with --take-over (old -> new -> newer ...). Each Gantry's log is kept. Prints
# passed/failed/skipped of both runs and the files that failed, and per take-over what the new Gantry says it took
# over (sessions moved, TLS sessions ended, sessions left to the old one's drain) and what the old one drained.
# Everything it starts is stopped on exit, also on failure or Ctrl-C.
#
# Usage: bench/mysql2-take-overs.sh --mysql2 DIR [--every SECONDS] [--no-direct] [--base-port PORT]
#                                   [--gantry-port PORT] [--out DIR] [--jar PATH]
#
# --mysql2 DIR is a checkout of https://github.com/sidorares/node-mysql2; `npm ci` is run there if it has no
# node_modules. The suite runs at nice 19. A take-over starts --every seconds after the one before started, but not
# before that one is done (its new Gantry took over or exited): a Gantry taking over refuses another.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/headless/target/gantry.jar"
prebuilt_jar=false
mysql2=""
every=10
direct=true
base_port=31061
gantry_port=31070
out=""

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --mysql2) mysql2="$(cd "$2" && pwd)"; shift 2 ;;
    --every) every="$2"; shift 2 ;;
    --no-direct) direct=false; shift ;;
    --base-port) base_port="$2"; shift 2 ;;
    --gantry-port) gantry_port="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; prebuilt_jar=true; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "mysql2-take-overs.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n "$mysql2" && -f "$mysql2/poku.config.js" ]] \
  || { echo "mysql2-take-overs.sh: --mysql2 DIR, a node-mysql2 checkout, is needed (see --help)" >&2; exit 2; }
for n in "$every" "$base_port" "$gantry_port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "mysql2-take-overs.sh: '$n' is not a number" >&2; exit 2; }
done

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"
command -v java >/dev/null || die "'java' not found (a JDK 17 is needed)"
command -v npx >/dev/null || die "'npx' not found (Node.js 20 is needed)"
mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"
ensure_jar "$root" "$jar" "$prebuilt_jar" "$mariadb_client"
if [[ ! -d "$mysql2/node_modules" ]]; then
  log "npm ci in $mysql2"
  (cd "$mysql2" && npm ci >/dev/null) || die "npm ci failed in $mysql2"
fi
server_ports=("$base_port" $((base_port + 1)) $((base_port + 2)))
ports_free "--base-port/--gantry-port" "${server_ports[@]}" "$gantry_port" $((gantry_port + 1))

make_work_dir mysql2-take-overs
demo_pid=""
suite_pid=""
gantry_pids=()
cleanup() {
  local rc=$? p
  trap - EXIT INT TERM
  set +e
  [[ -n "$suite_pid" ]] && stop_pid "$suite_pid" 5
  for p in ${gantry_pids[@]+"${gantry_pids[@]}"}; do kill -0 "$p" 2>/dev/null && stop_pid "$p" 30; done
  if [[ -n "$demo_pid" ]]; then
    stop_pid "$demo_pid" 30
    stop_leftover_servers "$demo_dir"
  fi
  rm -rf "$demo_dir" "$work/gantry-data" "$work/upstream.password"
  [[ "$out" == "$work"/* ]] || rmdir "$work" 2>/dev/null
  if ((rc != 0)); then log "logs kept in $out"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "starting gantry demo --server-tls (primary $base_port, replicas $((base_port + 1))/$((base_port + 2)))"
java -jar "$jar" demo --dir "$demo_dir" --base-port "$base_port" --listen "127.0.0.1:$((gantry_port + 1))" \
  --server-tls --no-cdc --no-console >"$out/demo.log" 2>&1 &
demo_pid=$!
await_demo_ready "$demo_pid" "$out/demo.log"
demo_service_account "$out/demo.log"
"$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "$base_port" -u root -e "CREATE DATABASE IF NOT EXISTS test"

run_suite() { # name port: the suite as root against 127.0.0.1:port, its output in $out/suite-NAME.log; sets suite_pid
  log "node mysql2's suite, $1, port $2"
  (cd "$mysql2" && MYSQL_HOST=127.0.0.1 MYSQL_PORT="$2" MYSQL_USER=root MYSQL_DATABASE=test \
    exec nice -n 19 npx poku) >"$out/suite-$1.log" 2>&1 &
  suite_pid=$!
}
if [[ $direct == true ]]; then
  run_suite direct "$base_port"
  wait "$suite_pid" || true
  suite_pid=""
fi

printf '%s' "$svc_pass" >"$work/upstream.password"
chmod 600 "$work/upstream.password"
urls="$(printf "mysql://$svc_user@127.0.0.1:%s/$db," "${server_ports[@]}")"
start_gantry() { # n [--take-over]: Gantry number n, its log $out/gantry-N.log
  java -jar "$jar" run --listen "127.0.0.1:$gantry_port" --data-dir "$work/gantry-data" \
    --upstream-db-url "${urls%,}" --upstream-password-file "$work/upstream.password" --socket-transport epoll \
    "${@:2}" >"$out/gantry-$1.log" 2>&1 &
  gantry_pids+=($!)
}
log "starting Gantry 0 on port $gantry_port (epoll)"
start_gantry 0
await_gantry_answering 0 "${gantry_pids[0]}" "$gantry_port" "$svc_user" "$svc_pass"

run_suite gantry "$gantry_port"
suite_started=$SECONDS
taken_over() { # n: Gantry n has taken over, or has exited
  grep -q 'taken over from pid' "$out/gantry-$1.log" || ! kill -0 "${gantry_pids[$1]}" 2>/dev/null
}
n=0
launched=()  # seconds into the suite's run
next=$((SECONDS + every))
while :; do  # every --every seconds, but not before the last take-over is done (else it is refused: one at a time)
  while ((SECONDS < next)) || { ((n > 0)) && ! taken_over "$n"; }; do
    kill -0 "$suite_pid" 2>/dev/null || break 2
    sleep 0.1
  done
  next=$((SECONDS + every))
  n=$((n + 1))
  launched+=($((SECONDS - suite_started)))
  log "take-over $n: Gantry $n starts with --take-over"
  start_gantry "$n" --take-over
done
wait "$suite_pid" || true
suite_pid=""
log "the suite is done; waiting for the last take-over to end"
for ((i = 0; i < 700; i++)); do  # the old Gantry: --take-over-timeout and --drain-timeout-secs, 30 s each
  alive=0
  for p in "${gantry_pids[@]:0:${#gantry_pids[@]}-1}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
  ((alive == 0)) && break
  sleep 0.1
done

plain() { sed 's/\x1b\[[0-9;]*m//g' "$out/suite-$1.log"; }  # poku's output without its colours
counts() { # poku's "PASS › 227   FAIL › 0   SKIP › 2"
  plain "$1" | grep -o 'PASS › *[0-9]* *FAIL › *[0-9]* *SKIP › *[0-9]*' | tail -1 \
    | awk '{ print $3 " passed, " $6 " failed, " $9 " skipped" }'
}
failed() { plain "$1" | sed -n 's/^ *FAIL  *\(test\/.*\)/\1/p' | tr '\n' ' '; }
{
  for s in direct gantry; do
    if [[ -f "$out/suite-$s.log" ]]; then printf '%s: %s; failed: %s\n' "$s" "$(counts "$s")" "$(failed "$s")"; fi
  done
  printf 'take-overs started: %d\n' "$n"
  for ((i = 1; i <= n; i++)); do
    line="$(grep -h -o 'taken over from pid.*' "$out/gantry-$i.log" || true)"
    if [[ -z "$line" ]]; then
      rc=0; wait "${gantry_pids[i]}" || rc=$?
      line="$(grep -h -m1 -o -E '(gantry|ERROR).*' "$out/gantry-$i.log" || echo "no log")"
      printf '  %d (at %d s): exit %d, %s\n' "$i" "${launched[i - 1]}" "$rc" "$line"
      continue
    fi
    from="?"  # which Gantry it took over from, by its pid
    for ((j = 0; j < i; j++)); do if [[ "$line" == "taken over from pid ${gantry_pids[j]}:"* ]]; then from=$j; fi; done
    drain=""
    [[ $from == "?" ]] || drain="$(grep -h -o -E 'drained in [^:]*|stopping with [0-9]+ sessions[^(]*' \
      "$out/gantry-$from.log" | head -1 || true)"
    printf '  %d (at %d s): %s | Gantry %s: %s\n' "$i" "${launched[i - 1]}" "$line" "$from" "$drain"
  done
  grep -h -o -E 'hand-over: [0-9]+ sessions? cannot move yet.*' "$out"/gantry-*.log | sort | uniq -c || true
} >"$out/summary.txt"  # not a pipe: `wait` above needs this shell
cat "$out/summary.txt"
log "logs in $out"
