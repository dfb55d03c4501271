#!/usr/bin/env bash
# Sustained apply rate of Gantry's change stream (CDC) into a JSON-lines sink.
#
# Starts `gantry demo` with --cdc-sink, stops the stream (STOP GANTRY REPLICATION), writes a backlog
# on the primary, then starts the stream again and times how long it takes to apply the whole
# backlog (until SHOW GANTRY STATUS's CDC Position is the primary's GTID position). Two backlogs,
# measured one after the other:
#   rows:         --rows row inserts in transactions of --batch rows (row changes per second)
#   transactions: --singles one-row autocommit transactions (transactions per second)
# Each sink line is checked: the sink must hold exactly the rows written. Everything it starts is
# stopped on exit, also on failure or Ctrl-C. All traffic stays on 127.0.0.1.
#
# Usage: bench/cdc-throughput.sh [--rows N] [--batch N] [--singles N] [--base-port PORT]
#                                [--gantry-port PORT] [--out DIR] [--jar PATH]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/headless/target/gantry.jar"
prebuilt_jar=false
rows=500000
batch=100
singles=50000
base_port=35061
gantry_port=35070
out=""

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

while (($#)); do
  case "$1" in
    --rows) rows="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --singles) singles="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --gantry-port) gantry_port="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; prebuilt_jar=true; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "cdc-throughput.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$rows" "$batch" "$singles" "$base_port" "$gantry_port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "cdc-throughput.sh: '$n' is not a number" >&2; exit 2; }
done
((batch >= 1 && rows % batch == 0)) || { echo "cdc-throughput.sh: --rows must be a multiple of --batch" >&2; exit 2; }

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"
mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"

ensure_jar "$root" "$jar" "$prebuilt_jar" "$mariadb_client"
for p in "$base_port" $((base_port + 1)) $((base_port + 2)) "$gantry_port"; do
  ! port_busy "$p" || die "port $p on 127.0.0.1 is in use; choose others with --base-port/--gantry-port"
done

work="$(mktemp -d "${TMPDIR:-/tmp}/gantry-cdc-bench.XXXXXX")"
if [[ -z "$out" ]]; then out="$work/results"; fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
demo_dir="$work/demo"
sink="$work/changes.jsonl"
gantry_pid=""

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  if [[ -n "$gantry_pid" ]]; then
    stop_pid "$gantry_pid" 30
    stop_leftover_servers "$demo_dir"
  fi
  rm -rf "$demo_dir" "$sink"*
  if ((rc != 0)); then log "logs kept in $out"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "starting gantry demo with the sink $sink (primary $base_port, Gantry $gantry_port)"
java ${GANTRY_JAVA_OPTS:-} -jar "$jar" demo --dir "$demo_dir" --base-port "$base_port" \
  --listen "127.0.0.1:$gantry_port" --cdc-sink "jsonl:$sink" >"$out/gantry.log" 2>&1 &
gantry_pid=$!
await_demo_ready "$gantry_pid" "$out/gantry.log"

sql() { # port statement...
  local port=$1; shift
  "$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "$port" -u app -papp -N -B app -e "$*"
}
status() { sql "$gantry_port" "SHOW GANTRY STATUS" | awk -F'\t' -v k="$1" '$1 == k {print $2}'; }
await_position() { # gtid_pos seconds: until the stream has applied up to the primary's position
  local want=$1 i
  for ((i = 0; i < $2 * 20; i++)); do
    [[ "$(status 'CDC Position')" == "$want" ]] && return 0
    sleep 0.05
  done
  die "the stream did not reach $want (status: $(status 'CDC Status'), at $(status 'CDC Position'))"
}
sink_lines() { cat "$sink"* 2>/dev/null | grep -c "\"op\":\"$1\"" || true; }

sql "$base_port" "CREATE TABLE cdc_bench (id BIGINT PRIMARY KEY, k INT NOT NULL, note VARCHAR(64) NOT NULL)"
await_position "$(sql "$base_port" "SELECT @@gtid_binlog_pos")" 60

measure() { # name expected-lines sql-file -> one result line
  local name=$1 expected=$2 file=$3 pos t0 t1 before
  sql "$gantry_port" "STOP GANTRY REPLICATION" >/dev/null
  before="$(sink_lines insert)"
  log "$name: writing the backlog on the primary with the stream stopped"
  "$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "$base_port" -u app -papp app <"$file"
  pos="$(sql "$base_port" "SELECT @@gtid_binlog_pos")"
  log "$name: backlog written (primary at $pos); starting the stream"
  t0="$(date +%s.%N)"
  sql "$gantry_port" "START GANTRY REPLICATION" >/dev/null
  await_position "$pos" 600
  t1="$(date +%s.%N)"
  local got=$(( $(sink_lines insert) - before ))
  ((got == expected)) || die "$name: the sink got $got insert lines, expected $expected"
  awk -v n="$expected" -v tx="$4" -v a="$t0" -v b="$t1" -v name="$name" \
    'BEGIN {s = b - a; printf "%-12s %9d rows %8d transactions in %6.2f s: %9.0f rows/s %8.0f transactions/s\n", name, n, tx, s, n / s, tx / s}'
}

awk -v rows="$rows" -v batch="$batch" 'BEGIN {
  for (i = 0; i < rows / batch; i++)
    printf "INSERT INTO cdc_bench SELECT seq, seq %% 1000, CONCAT(\"row \", seq) FROM seq_%d_to_%d;\n", i * batch + 1, (i + 1) * batch }' \
  >"$work/rows.sql"
awk -v from="$((rows + 1))" -v n="$singles" 'BEGIN {
  for (i = 0; i < n; i++) printf "INSERT INTO cdc_bench VALUES (%d, %d, \"single\");\n", from + i, i % 1000 }' \
  >"$work/singles.sql"

{
  echo "cdc-throughput: jar $(sha256sum "$jar" | cut -c1-12), $(nproc) cores, $(date -u +%FT%TZ)"
  measure rows "$rows" "$work/rows.sql" $((rows / batch))
  measure transactions "$singles" "$work/singles.sql" "$singles"
} | tee "$out/result.txt"
