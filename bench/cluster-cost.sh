#!/usr/bin/env bash
# What each Gantry instance of a cluster (--cluster) costs the primary while idle: queries, new connections,
# connections held, writes and binlog readers per instance.
#
# Starts `gantry demo` (a MariaDB primary, two replicas and the demo's own Gantry, not in the cluster), reads the
# primary's counters over --window seconds (the baseline), then starts --instances `gantry run --cluster cost`
# processes on the demo's servers (the change stream on, as by default), lets them settle for 10 s, and reads the
# counters over --window seconds again. Prints the difference per instance: statements per second (Questions),
# new connections per second (Connections), connections held (Threads_connected), writes per second (Com_insert +
# Com_update: the instances' signs of life), and binlog readers (Binlog Dump threads). The counters are read with
# one query each time; that query is in the figures of both windows, so it cancels out.
#
# Usage: bench/cluster-cost.sh [--instances N] [--window SECONDS] [--base-port PORT] [--out DIR] [--jar PATH]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/headless/target/gantry.jar"
prebuilt_jar=false
instances=3
window=30
base_port=36061
out=""

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

while (($#)); do
  case "$1" in
    --instances) instances="$2"; shift 2 ;;
    --window) window="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; prebuilt_jar=true; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "cluster-cost.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$instances" "$window" "$base_port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "cluster-cost.sh: '$n' is not a number" >&2; exit 2; }
done
((instances >= 1 && window >= 5)) || { echo "cluster-cost.sh: --instances >= 1 and --window >= 5" >&2; exit 2; }

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"
mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"

ensure_jar "$root" "$jar" "$prebuilt_jar" "$mariadb_client"
demo_port=$((base_port + 9))
for ((i = 0; i <= instances; i++)); do
  ! port_busy "$((demo_port + i))" || die "port $((demo_port + i)) on 127.0.0.1 is in use; choose --base-port"
done
for p in "$base_port" "$((base_port + 1))" "$((base_port + 2))"; do
  ! port_busy "$p" || die "port $p on 127.0.0.1 is in use; choose others with --base-port"
done

work="$(mktemp -d "${TMPDIR:-/tmp}/gantry-cluster-cost.XXXXXX")"
if [[ -z "$out" ]]; then out="$work/results"; fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
demo_dir="$work/demo"
demo_pid=""
instance_pids=()

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  for pid in "${instance_pids[@]}"; do stop_pid "$pid" 30; done
  if [[ -n "$demo_pid" ]]; then
    stop_pid "$demo_pid" 60
    stop_leftover_servers "$demo_dir"
  fi
  rm -rf "$demo_dir" "$work"/instance-*
  [[ "$out" == "$work"/* ]] || rmdir "$work" 2>/dev/null
  if ((rc != 0)); then log "logs kept in $out"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

primary_sql() { "$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "$base_port" -u root -N -B -e "$1"; }

# Questions Connections Threads_connected writes binlog_readers, at one moment.
counters() {
  primary_sql "SELECT
      (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'),
      (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'CONNECTIONS'),
      (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED'),
      (SELECT SUM(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS
        WHERE VARIABLE_NAME IN ('COM_INSERT', 'COM_UPDATE')),
      (SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%')"
}

# Rates over the window: questions/s connections/s held writes/s readers
measure() { # label
  local a b
  a=($(counters)); sleep "$window"; b=($(counters))
  awk -v w="$window" -v l="$1" -v q0="${a[0]}" -v q1="${b[0]}" -v c0="${a[1]}" -v c1="${b[1]}" \
      -v t="${b[2]}" -v w0="${a[3]}" -v w1="${b[3]}" -v r="${b[4]}" \
      'BEGIN { printf "%s %.2f %.3f %d %.3f %d\n", l, (q1 - q0) / w, (c1 - c0) / w, t, (w1 - w0) / w, r }'
}

log "starting gantry demo (primary $base_port, its Gantry $demo_port)"
java -jar "$jar" demo --dir "$demo_dir" --base-port "$base_port" --listen "127.0.0.1:$demo_port" --no-console \
  >"$out/demo.log" 2>&1 &
demo_pid=$!
await_demo_ready "$demo_pid" "$out/demo.log"
urls="mysql://root@127.0.0.1:$base_port/app,mysql://root@127.0.0.1:$((base_port + 1))/app"
urls+=",mysql://root@127.0.0.1:$((base_port + 2))/app"

sleep 5
log "baseline: the demo alone, $window s"
baseline="$(measure baseline)"
log "$baseline"

for ((i = 1; i <= instances; i++)); do
  java -jar "$jar" run --listen "127.0.0.1:$((demo_port + i))" --data-dir "$work/instance-$i" \
    --upstream-db-url "$urls" --cluster cost --cluster-instance "cost-$i" \
    --admin-socket "$work/instance-$i.sock" >"$out/instance-$i.log" 2>&1 &
  instance_pids+=($!)
done
for ((i = 1; i <= instances; i++)); do
  for ((t = 0; t < 600; t++)); do
    grep -q "joined; configuration version" "$out/instance-$i.log" && break
    kill -0 "${instance_pids[$((i - 1))]}" 2>/dev/null || { cat "$out/instance-$i.log" >&2; die "instance $i exited"; }
    sleep 0.1
  done
  grep -q "joined; configuration version" "$out/instance-$i.log" || die "instance $i did not join in 60 s"
done
log "$instances instances joined; settling 10 s"
sleep 10
log "with $instances instances, $window s"
with="$(measure with)"
log "$with"

read -r _ q0 c0 t0 w0 r0 <<<"$baseline"
read -r _ q1 c1 t1 w1 r1 <<<"$with"
awk -v n="$instances" -v q0="$q0" -v q1="$q1" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" \
    -v w0="$w0" -v w1="$w1" -v r0="$r0" -v r1="$r1" 'BEGIN {
  printf "per instance on the primary: %.2f statements/s, %.3f new connections/s, %.1f connections held, ", \
    (q1 - q0) / n, (c1 - c0) / n, (t1 - t0) / n
  printf "%.3f writes/s, %.1f binlog readers\n", (w1 - w0) / n, (r1 - r0) / n
}' | tee "$out/summary.txt"
