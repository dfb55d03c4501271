#!/usr/bin/env bash
# Takes the console screenshots of the README and docs/console.md against the demo topology, under Xvfb:
#   sliders.png   the weight sliders (weights set to 70 / 30 first)
#   chart.png     lag and RTT over the last 5 minutes (--window 5m), with replica1 held back for a while
#   queries.png   the Queries tab under sysbench oltp_read_write through Gantry (2 threads, 20 tps)
#   timeline.png  the failover timeline after replica2 was killed (kill -9)
#   table.png     the server table at that moment (the top of timeline.png)
# Needs Debian's xvfb, imagemagick, libgtk-3-0 and sysbench (installed when missing, as root). Run from anywhere:
#   assets/screenshots/take.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$root/target/screenshots"
base_port="${GANTRY_SCREENSHOT_PORT:-34061}"
listen="127.0.0.1:$((base_port + 9))"
size="1280x820"

missing=()
command -v xvfb-run >/dev/null || missing+=(xvfb)
command -v import >/dev/null || missing+=(imagemagick)
ldconfig -p | grep -q 'libgtk-3.so.0' || missing+=(libgtk-3-0)
command -v sysbench >/dev/null || missing+=(sysbench)
if (( ${#missing[@]} )); then
  echo "take.sh: installing ${missing[*]} ..." >&2
  apt-get install -y "${missing[@]}" >/dev/null
fi

mkdir -p "$work"
# Builds the jars when stale, then starts the sandbox and Gantry without a console of its own.
"$root/gantry" demo --no-console --dir "$work/demo" --base-port "$base_port" --listen "$listen" \
  > "$work/demo.log" 2>&1 &
demo=$!
stop() {
  kill "$demo" 2>/dev/null || true
  wait "$demo" 2>/dev/null || true
}
trap stop EXIT
for _ in $(seq 1 240); do
  grep -q '^Press Ctrl-C' "$work/demo.log" && break
  kill -0 "$demo" 2>/dev/null || { cat "$work/demo.log" >&2; exit 1; }
  sleep 0.5
done
grep -q '^Press Ctrl-C' "$work/demo.log" || { echo "take.sh: the demo did not start" >&2; cat "$work/demo.log" >&2; exit 1; }
socket="$work/demo/gantry-data/admin.sock"
client="$(awk '$1 == "primary" && $2 == "primary" { for (i = 4; i <= NF; i++) printf "%s ", $i }' "$work/demo.log")"
replica1="127.0.0.1:$((base_port + 1))"
replica2="127.0.0.1:$((base_port + 2))"
admin() { java -jar "$root/headless/target/gantry.jar" admin --admin-socket "$socket" "$@" >/dev/null; }
# shellcheck disable=SC2086
sql() { ${client/-P $base_port/-P $1} -e "$2"; }

admin "ALTER GANTRY SET WEIGHT '$replica1' TO 70"
admin "ALTER GANTRY SET WEIGHT '$replica2' TO 30"

# Some history for the chart: writes on the primary while replica1's SQL thread is stopped for 20 s, so its lag
# climbs and falls back.
sql "$base_port" "CREATE TABLE IF NOT EXISTS ticks (id INT AUTO_INCREMENT PRIMARY KEY, at TIMESTAMP(3))"
writes() {
  for _ in $(seq 1 "$1"); do sql "$base_port" "INSERT INTO ticks (at) VALUES (NOW(3))"; sleep 0.2; done
}
writes 25
sql "$((base_port + 1))" "STOP SLAVE SQL_THREAD"
writes 100
sql "$((base_port + 1))" "START SLAVE SQL_THREAD"
writes 50

shot() {
  # $1 tab, $2 file, $3 seconds to let the console settle
  xvfb-run -a -s "-screen 0 ${size}x24" bash -c '
    java -jar "$0" --socket "$1" --tab "$2" --window 5m > "$3.log" 2>&1 &
    console=$!
    sleep "$4"
    import -window root "$3"
    kill "$console"
    wait "$console" 2>/dev/null || true
  ' "$root/console-ui/target/gantry-console.jar" "$socket" "$1" "$work/$2" "$3"
  echo "take.sh: $work/$2"
}

shot weights sliders.png 8
shot chart chart.png 10

# The statement digests under a read-write load through Gantry: 50 s of pushes in the chart of the busiest shape.
bench=(sysbench oltp_read_write --mysql-host=127.0.0.1 --mysql-port="${listen##*:}" --mysql-user=app
  --mysql-password=app --mysql-db=app --mysql-ssl=off --tables=2 --table-size=2000)
"${bench[@]}" prepare > "$work/sysbench.log"
"${bench[@]}" --threads=2 --rate=20 --time=80 run >> "$work/sysbench.log" &
load=$!
shot queries queries.png 50
wait "$load"

# A failover: replica2 killed (its pid from its own pid file), then the timeline with the down entry.
kill -9 "$(cat "$work/demo/replica2/server.pid")"
sleep 3
shot timeline timeline.png 8
convert "$work/timeline.png" -crop 1280x212+0+0 +repage "$work/table.png"

cp "$work"/{table,timeline,sliders,chart,queries}.png "$here/"
echo "take.sh: wrote $here/{table,timeline,sliders,chart,queries}.png"
