#!/usr/bin/env bash
# Runs every test the project has, from a fresh clone: installs the
# TypeScript MCP client the end-to-end tests drive, vets, runs the tests
# with the race detector, then each fuzz target briefly.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing the TypeScript MCP client (test/ts)"
npm ci --prefix test/ts --no-audit --no-fund --loglevel=error

echo "== go mod tidy -diff, gofmt and go vet"
go mod tidy -diff
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './test/ts/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...

echo "== go test -race"
go test -race -count=1 -timeout 20m ./...

# An execution-count budget, never a duration: at a -fuzztime deadline Go
# 1.26's fuzz coordinator can report "context deadline exceeded" on a busy
# machine (golang/go#75804), failing a run for nothing.
echo "== fuzz targets, briefly (FUZZTIME=${FUZZTIME:=20000x})"
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "-- $pkg $target"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" "$pkg"
  done
done
echo "== the load benchmark, briefly (keeps it working; asserts nothing about speed)"
go run ./test/bench -quick > /dev/null

echo "== all tests passed"
