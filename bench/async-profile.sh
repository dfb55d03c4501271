#!/usr/bin/env bash
# CPU profile of a running JVM (Gantry under a benchmark's load) with async-profiler: Java, JIT-compiled,
# native (OpenSSL/BoringSSL inside netty-tcnative, libc) and kernel frames in the same stacks, which JFR
# cannot show. Attaches to the JVM with jcmd, samples CPU time for SECONDS, detaches, and prints where the
# CPU went: by thread, by kind of frame, and the hottest frames.
#
# Usage: bench/async-profile.sh --pid PID [--seconds N] [--out FILE.collapsed] [--event cpu|itimer]
#
# async-profiler comes from Maven Central (tools.profiler:async-profiler, pinned below), fetched once into
# ~/.m2 and its native library unpacked into ~/.cache/gantry/async-profiler. `--event cpu` (the default) uses
# perf_events and sees kernel frames; where the kernel refuses them (perf_event_paranoid, seccomp) use
# `--event itimer`. To name frames inside netty-tcnative, start the JVM with
# GANTRY_JAVA_OPTS="-Dio.netty.native.workdir=DIR -Dio.netty.native.deleteLibAfterLoading=false": by default
# Netty deletes the unpacked library after loading it, and its frames show as one "(deleted)" file.
# The output (collapsed stacks, one line per stack: thread;frame;...;frame count) loads into any flame
# graph tool.
set -euo pipefail

version=4.1
pid=""
seconds=20
out=""
event=cpu
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --pid) pid="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --event) event="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "async-profile.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n "$pid" ]] || { echo "async-profile.sh: --pid is required (the JVM to profile)" >&2; exit 2; }
kill -0 "$pid" 2>/dev/null || { echo "async-profile.sh: no process $pid" >&2; exit 2; }
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "async-profile.sh: --seconds must be a positive number, not '$seconds'" >&2; exit 2; }
[[ $event == cpu || $event == itimer ]] || { echo "async-profile.sh: --event must be cpu or itimer, not '$event'" >&2; exit 2; }
out="${out:-/tmp/async-profile-$pid.collapsed}"

lib_dir="$HOME/.cache/gantry/async-profiler/$version"
lib="$lib_dir/libasyncProfiler.so"
if [[ ! -s "$lib" ]]; then
  jar="$HOME/.m2/repository/tools/profiler/async-profiler/$version/async-profiler-$version.jar"
  if [[ ! -s "$jar" ]]; then
    echo "fetching tools.profiler:async-profiler:$version from Maven Central" >&2
    mvn -q -B dependency:get -Dartifact="tools.profiler:async-profiler:$version" >&2
  fi
  case "$(uname -m)" in x86_64) arch=linux-x64 ;; aarch64) arch=linux-arm64 ;; *) echo "async-profile.sh: no async-profiler library for $(uname -m)" >&2; exit 1 ;; esac
  mkdir -p "$lib_dir"
  unzip -p "$jar" "$arch/libasyncProfiler.so" >"$lib.tmp" && mv "$lib.tmp" "$lib"
fi

# jcmd parses key=value pairs in its arguments itself: the agent's options go in one quoted argument.
agent() { jcmd "$pid" JVMTI.agent_load "$lib" "\"$1\"" | grep -v "^$pid:$" | grep -v "return code: 0" || true; }
rm -f "$out"
agent "start,event=$event,interval=1ms,threads"
sleep "$seconds"
agent "stop,threads,file=$out,collapsed"
[[ -s "$out" ]] || { echo "async-profile.sh: the profiler wrote nothing to $out" >&2; exit 1; }

total="$(awk '{s += $NF} END {print s + 0}' "$out")"
pct() { awk -v t="$total" '{c = $1; $1 = ""; printf "%8d %5.1f%% %s\n", c, 100 * c / t, substr($0, 2)}'; }
echo "async-profiler, event $event every 1 ms of CPU, ${seconds} s of process $pid: $total samples ($out)"
echo
echo "By thread (numbers folded):"
awk '{n = $NF; split($0, f, ";"); t = f[1]; gsub(/[0-9]+/, "N", t); s[t] += n} END {for (t in s) print s[t], t}' "$out" \
  | sort -rn | head -8 | pct
echo
echo "By kind of frame on top (self time):"
awk '{n = $NF; line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";"); top = f[k]
      if (top ~ /_\[k\]$/) kind = "kernel"
      else if (top ~ /tcnative|^bssl::|^SSL_|^aes|^gcm|^EVP_|^CRYPTO_|^BIO_|^ERR_/) kind = "TLS library (netty-tcnative / BoringSSL)"
      else if (top ~ /\//) kind = "Java (JIT-compiled or interpreted)"
      else kind = "other native (JVM, libc)"
      s[kind] += n} END {for (k in s) print s[k], k}' "$out" | sort -rn | pct
echo
echo "Hottest frames (self time), top 25:"
awk '{n = $NF; line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";"); s[f[k]] += n} END {for (x in s) print s[x], x}' "$out" \
  | sort -rn | head -25 | pct
