#!/usr/bin/env bash
# Point selects from sessions that each have settings of their own, through Gantry with multiplexing and no
# retention: the cost of handing pooled connections between sessions (issue 32). Each of --threads sysbench
# sessions sets its own time_zone and max_join_size, an sql_mode and SET NAMES once after connecting
# (bench/lib/point-select-own-settings.lua); with --connection-retention-ms 0 every statement gives its connection
# back to the pool and the next one takes whichever is free, most often one another session used last, so Gantry
# resets it (COM_RESET_CONNECTION) and replays the session's settings before the statement.
#
# With --rate N (sysbench's fixed arrival rate, all sessions together) sessions pause between statements, so
# nearly every statement is such a hand-off (the pools' Reused per query is printed); without it the sessions run
# flat out and most statements find the session's own connection still there.
#
# Given two jars (--jar A --jar B), starts a `gantry demo` of each (own servers and ports) and runs the rounds
# alternately against them, so both see the same machine; prints qps and p95 per jar (medians), Gantry's CPU per
# query, and the pools' reuse from SHOW GANTRY POOLS. Everything it starts is stopped on exit.
#
# Usage: bench/own-settings.sh --jar A [--jar B] [--rounds N] [--time SECONDS] [--threads N] [--warmup SECONDS]
#                              [--ps-mode disable|auto] [--rate QPS] [--base-port PORT] [--out DIR]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jars=()
rounds=5
duration=15
threads=64
warmup=10
ps_mode=disable
rate=0
base_port=38061
out=""
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --jar) jars+=("$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --time) duration="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --ps-mode) ps_mode="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "own-settings.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
((${#jars[@]} >= 1 && ${#jars[@]} <= 2)) || { echo "own-settings.sh: give one or two --jar" >&2; exit 2; }
for n in "$rounds" "$duration" "$threads" "$warmup" "$rate" "$base_port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "own-settings.sh: '$n' is not a number" >&2; exit 2; }
done
[[ $ps_mode == disable || $ps_mode == auto ]] || { echo "own-settings.sh: --ps-mode must be disable or auto" >&2; exit 2; }
((threads <= 780)) || { echo "own-settings.sh: at most 780 threads (the script's distinct settings)" >&2; exit 2; }

# shellcheck source=lib/common.sh
source "$root/bench/lib/common.sh"
command -v sysbench >/dev/null || die "sysbench not found (apt-get install sysbench)"
mariadb_client="${GANTRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gantry}/mariadb-11.4.5/bin/mariadb"
for j in "${jars[@]}"; do ensure_jar "$root" "$j" true "$mariadb_client"; done

work="$(mktemp -d "${TMPDIR:-/tmp}/gantry-own-settings.XXXXXX")"
out="${out:-$work/results}"
mkdir -p "$out"
pids=()
dirs=()
cleanup() {
  local rc=$? i
  trap - EXIT INT TERM
  set +e
  for i in "${!pids[@]}"; do stop_pid "${pids[$i]}" 30; stop_leftover_servers "${dirs[$i]}"; rm -rf "${dirs[$i]}"; done
  if ((rc != 0)); then log "logs kept in $out"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

sb_common=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=app --mysql-password=app --mysql-db=app
           --mysql-ssl=off --tables=4 --table-size=10000)
gantry_port() { echo $((base_port + 100 + $1)); }
for i in "${!jars[@]}"; do
  primary=$((base_port + 10 * i))
  for p in "$primary" $((primary + 1)) $((primary + 2)) "$(gantry_port "$i")"; do
    ! port_busy "$p" || die "port $p on 127.0.0.1 is in use; choose another --base-port"
  done
  dirs[i]="$work/demo$i"
  log "starting gantry demo $i (${jars[$i]}), primary $primary, Gantry $(gantry_port "$i"), --connection-retention-ms 0"
  java -jar "${jars[$i]}" demo --dir "${dirs[$i]}" --base-port "$primary" --listen "127.0.0.1:$(gantry_port "$i")" \
    --connection-retention-ms 0 >"$out/gantry$i.log" 2>&1 &
  pids[i]=$!
  await_demo_ready "${pids[$i]}" "$out/gantry$i.log"
  sysbench oltp_point_select "${sb_common[@]}" --mysql-port="$primary" --threads=4 prepare >"$out/prepare$i.log" 2>&1 \
    || { cat "$out/prepare$i.log" >&2; die "sysbench prepare on demo $i"; }
done
sleep 5  # the replicas catch up with 40 000 rows well within this

reused() { # demo -> the pools' Reused, all servers together
  "$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "$(gantry_port "$1")" -u app -papp -B -e "SHOW GANTRY POOLS" \
    | awk -F'\t' 'NR == 1 {for (c = 1; c <= NF; c++) h[$c] = c; next} {r += $h["Reused"]} END {print r + 0}'
}

run() { # demo seconds logfile -> "qps p95_ms avg_ms queries gantry_cpu_s reused"
  local i=$1 c0 c1 r0 r1
  r0="$(reused "$i")"
  c0="$(awk '{print $14 + $15}' "/proc/${pids[$i]}/stat")"
  LUA_PATH="/usr/share/sysbench/?.lua;;" sysbench "$root/bench/lib/point-select-own-settings.lua" "${sb_common[@]}" \
    --mysql-port="$(gantry_port "$i")" --threads="$threads" --time="$2" --rate="$rate" --report-interval=0 \
    --percentile=95 --db-ps-mode="$ps_mode" --mysql-ignore-errors=none run >"$3" 2>&1 \
    || { tail -20 "$3" >&2; die "sysbench on demo $i"; }
  c1="$(awk '{print $14 + $15}' "/proc/${pids[$i]}/stat")"
  r1="$(reused "$i")"
  awk -v c="$((c1 - c0))" -v r="$((r1 - r0))" -v tck="$(getconf CLK_TCK)" '/queries:/ {n = $2; gsub(/[()]/, ""); q = $3}
    /avg:/ {a = $2} /95th percentile:/ {p = $3} END {printf "%s %s %s %s %.2f %d\n", q, p, a, n, c / tck, r}' "$3"
}

for i in "${!jars[@]}"; do log "warm-up ${warmup} s on demo $i"; run "$i" "$warmup" "$out/warmup$i.log" >/dev/null; done
printf 'round\tdemo\tqps\tp95_ms\tavg_ms\tqueries\tgantry_cpu_s\treused\n' >"$out/rounds.tsv"
for ((r = 1; r <= rounds; r++)); do
  order=("${!jars[@]}"); ((r % 2 == 0 && ${#jars[@]} == 2)) && order=(1 0)
  for i in "${order[@]}"; do
    read -r qps p95 avg n cpu reuses < <(run "$i" "$duration" "$out/round$r-$i.log")
    printf '%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$i" "$qps" "$p95" "$avg" "$n" "$cpu" "$reuses" >>"$out/rounds.tsv"
    log "round $r/$rounds demo $i: $qps qps, p95 $p95 ms, avg $avg ms, Gantry CPU ${cpu}s, $reuses hand-offs"
  done
done

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { awk -F'\t' -v i="$1" -v c="$2" 'NR > 1 && $2 == i {print $c}' "$out/rounds.tsv" | median; }
{
  echo
  echo "Point selects from $threads sessions with settings of their own, --connection-retention-ms 0, --db-ps-mode=$ps_mode,"
  echo "$( ((rate > 0)) && echo "at $rate queries a second, " || echo "flat out, ")$rounds rounds x ${duration} s alternating (medians):"
  echo
  echo "| jar | qps | avg ms | p95 ms | Gantry CPU µs/query | hand-offs per query (pools' Reused) |"
  echo "|---|---:|---:|---:|---:|---:|"
  for i in "${!jars[@]}"; do
    printf '| %s | %.0f | %.3f | %.2f | %s | %s |\n' "$(basename "${jars[$i]}")" "$(col "$i" 3)" "$(col "$i" 5)" \
      "$(col "$i" 4)" "$(awk -F'\t' -v i="$i" 'NR > 1 && $2 == i {printf "%.1f\n", $7 * 1e6 / $6}' "$out/rounds.tsv" | median)" \
      "$(awk -F'\t' -v i="$i" 'NR > 1 && $2 == i {printf "%.2f\n", $8 / $6}' "$out/rounds.tsv" | median)"
  done
  echo "sysbench errors: none (--mysql-ignore-errors=none stops a round at the first)"
} | tee "$out/summary.md"
log "done; logs and per-round results in $out"
