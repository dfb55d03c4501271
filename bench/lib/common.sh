# Helpers shared by the benchmark scripts (sourced, not run). The caller sets `set -euo pipefail`.

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

stop_pid() { # pid seconds: SIGTERM, wait up to `seconds`, then SIGKILL; reaps it (it is our child)
  local pid=$1 secs=$2 i
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < secs * 10; i++)); do
    [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || echo gone)" =~ ^(gone|Z)$ ]] && break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

stop_leftover_servers() { # demo_dir: mariadbd processes a killed demo may have left running
  local f spid
  # The sandbox writes server.pid (LocalServer's pid-file); mariadbd.pid is the name before the MySQL flavour.
  for f in "$1"/*/server.pid "$1"/*/mariadbd.pid; do
    [[ -f "$f" ]] || continue
    spid="$(cat "$f" 2>/dev/null)"
    if [[ -n "$spid" ]] && grep -q mariadbd "/proc/$spid/comm" 2>/dev/null && \
       [[ "$(awk '{print $3}' "/proc/$spid/stat" 2>/dev/null)" != Z ]]; then
      log "stopping leftover mariadbd $spid"; kill -KILL "$spid" 2>/dev/null
    fi
  done
}

await_demo_ready() { # pid logfile: until the demo prints its banner, at most 120 s
  local pid=$1 logf=$2 i
  for ((i = 0; i < 1200; i++)); do
    grep -q "Press Ctrl-C" "$logf" && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$logf" >&2; die "gantry demo exited during start-up"; }
    sleep 0.1
  done
  cat "$logf" >&2; die "gantry demo not ready after 120 s"
}

ensure_jar() { # root jar prebuilt(true|false) mariadb_client: builds the jar unless given one, then checks both
  local root=$1 jar=$2 prebuilt=$3 client=$4
  if [[ $prebuilt == false ]]; then
    log "building the jar if needed"
    "$root/gantry" --version >/dev/null
  fi
  [[ -f "$jar" ]] || die "no $jar after the build"
  log "jar: $jar (sha256 $(sha256sum "$jar" | cut -c1-12), built $(date -r "$jar" '+%F %T'))"
  [[ -x "$client" ]] || die "no mariadb client at $client (the build unpacks it)"
}

install_missing() { # package...: installs with apt-get those given (the caller lists what it found missing)
  (($#)) || return 0
  log "installing $*"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y "$@" >/dev/null; then
    apt-get update >/dev/null
    apt-get install -y "$@" >/dev/null
  fi
}

ports_free() { # hint port...: dies naming the first port in use and the flags (hint) that choose others
  local hint=$1 p; shift
  for p in "$@"; do
    ! port_busy "$p" || die "port $p on 127.0.0.1 is in use; choose others with $hint"
  done
}

make_work_dir() { # name: sets work (a new temporary directory), out (--out's, or work/results) and demo_dir
  work="$(mktemp -d "${TMPDIR:-/tmp}/gantry-$1.XXXXXX")"
  if [[ -z "$out" ]]; then out="$work/results"; fi
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  demo_dir="$work/demo"
}

start_haproxy() { # port: checks and starts "$out/haproxy.cfg", waits until it listens on port; sets haproxy_pid
  local port=$1 i
  haproxy -c -q -f "$out/haproxy.cfg" || die "haproxy rejected $out/haproxy.cfg"
  haproxy -db -f "$out/haproxy.cfg" >"$out/haproxy.log" 2>&1 &
  haproxy_pid=$!
  for ((i = 0; i < 100; i++)); do port_busy "$port" && break; sleep 0.1; done
  port_busy "$port" || { cat "$out/haproxy.log" >&2; die "haproxy is not listening"; }
}

demo_service_account() { # demo_log: sets db, svc_user and svc_pass from the demo's banner
  # "Database 'app', account 'app' / 'app' (...)"
  read -r db svc_user svc_pass < <(sed -n "s/^Database '\([^']*\)', account '\([^']*\)' \/ '\([^']*\)'.*/\1 \2 \3/p" "$1") \
    || die "no database and account in the demo's banner ($1)"
}

start_gantry_run() { # name port flags [data]: `gantry run` as the demo's service account in front of server_ports,
  # its log $out/gantry-NAME.log, its data in $work/gantry-DATA (default NAME), with --no-cdc and the (word-split)
  # flags; sets run_pid
  local name=$1 port=$2 flags=$3 data=${4:-$1} urls
  if [[ ! -f "$work/upstream.password" ]]; then
    printf '%s' "$svc_pass" >"$work/upstream.password"
    chmod 600 "$work/upstream.password"
  fi
  urls="$(printf "mysql://$svc_user@127.0.0.1:%s/$db," "${server_ports[@]}")"
  log "starting Gantry '$name' on port $port: $flags"
  # shellcheck disable=SC2086 # the flags are word-split on purpose
  java ${GANTRY_JAVA_OPTS:-} -jar "$jar" run --listen "127.0.0.1:$port" --data-dir "$work/gantry-$data" \
    --upstream-db-url "${urls%,}" --upstream-password-file "$work/upstream.password" --no-cdc $flags \
    >"$out/gantry-$name.log" 2>&1 &
  run_pid=$!
}

await_gantry_answering() { # name pid port user password: until `SELECT 1` as that account answers, at most 120 s
  local name=$1 pid=$2 port=$3 user=$4 password=$5 i
  for ((i = 0; i < 1200; i++)); do
    kill -0 "$pid" 2>/dev/null || { cat "$out/gantry-$name.log" >&2; die "Gantry $name exited during start-up"; }
    if port_busy "$port" && "$mariadb_client" --no-defaults --skip-ssl -h 127.0.0.1 -P "$port" -u "$user" \
        -p"$password" -N -B "$db" -e "SELECT 1" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  cat "$out/gantry-$name.log" >&2; die "Gantry $name not answering after 120 s"
}
