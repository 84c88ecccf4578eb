#!/usr/bin/env bash
# Runs the gateway's load benchmark (test/bench) and prints its
# Markdown report on stdout; progress goes to stderr.
#
# Defaults: -duration 5s -warmup 300ms -rounds 3 -c 1,16,64 -tools 5000
# -mem-clients 1000 -mem-duration 10s -stream-bytes 1GiB, pinned (upstream
# and the measured proxy on CPU 0, the load generator on CPU 1) when
# taskset exists and there are two CPUs or more. About 15 minutes.
#
#   ./scripts/bench.sh > bench.md           # the full run
#   ./scripts/bench.sh -quick               # what CI runs: about 45 seconds
#   ./scripts/bench.sh -scenarios small -c 16 -pin off
#   ./scripts/bench.sh -scenarios small -baseline-bin /tmp/gateway-old  # an older build, same run
#   ./scripts/bench.sh catalog              # catalog scale: ready time, heap held, a
#                                           # tools/list and a search at 100, 1,000 and
#                                           # 10,000 tools (about 2 minutes)
#
# Flags are passed through; `go run ./test/bench -h` lists them. The exit
# status is non-zero only when something does not work; speed targets are
# reported, never enforced.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = catalog ]; then
  shift
  exec go test -run '^$' -bench 'CatalogScale' -benchtime 1x "$@" ./proxy
fi
exec go run ./test/bench "$@"
