#!/usr/bin/env bash
# Point-select throughput with a query cache: Gantry answering from its cache, against a direct replica
# connection and HAProxy (TCP mode) over the two replicas, interleaved; then the caches' hits and misses and
# the time from a write on the primary to the eviction of the entry it changes (median, p99).
#
# It is bench/point-select.sh with --cached (one cache per table on sysbench's point select, created before
# the runs); every option of that script works here, --eviction-samples N among them. See its --help.
#
# Usage: bench/cached-point-select.sh [--rounds N] [--time SECONDS] [--warmup SECONDS] [--ps-mode disable|auto]
#                                     [--eviction-samples N] [--jar PATH] [--out DIR] [...]
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/point-select.sh" --cached "$@"
