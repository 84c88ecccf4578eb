#!/usr/bin/env bash
# Runs every test the project has, from a fresh clone: installs the
# TypeScript MCP client the end-to-end tests drive and the Prometheus and
# Alertmanager the example's test runs against, vets, runs the tests
# with the race detector, then each fuzz target briefly.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing the TypeScript MCP client (test/ts)"
npm ci --prefix test/ts --no-audit --no-fund --loglevel=error

# The import tests (cmd/gateway realdocs_test.go, openapi's benchmark) read
# real public OpenAPI documents from pinned npm packages: GitHub's REST
# description (700 operations), authentik's (1,190), Okta's and Netlify's
# (Swagger 2.0), Blockfrost's, Directus's, Neon's, ReadMe's (3.1) and
# example sets; the tool search relevance benchmark reads them too. They
# are never copied into the repository; npm ci fills
# test/openapi-cache/node_modules (gitignored), and is skipped when the
# lock file has not changed since the last fill.
echo "== real OpenAPI documents for the import tests (test/openapi-cache)"
if ! cmp -s test/openapi-cache/package-lock.json test/openapi-cache/node_modules/.filled-from-lock 2>/dev/null; then
  npm ci --prefix test/openapi-cache --ignore-scripts --no-audit --no-fund --loglevel=error
  cp test/openapi-cache/package-lock.json test/openapi-cache/node_modules/.filled-from-lock
fi

# examples/prometheus-alertmanager's end-to-end test starts Debian's
# prometheus and prometheus-alertmanager itself (no systemd needed). Missing
# binaries are installed when we can (root, or passwordless sudo under CI);
# otherwise the test fails under CI=true saying how to install them, and is
# skipped elsewhere.
echo "== Prometheus and Alertmanager for examples/prometheus-alertmanager"
if ! command -v prometheus >/dev/null || ! { command -v prometheus-alertmanager || command -v alertmanager; } >/dev/null; then
  sudo=
  if [ "$(id -u)" != 0 ] && [ "${CI:-}" = true ] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  fi
  if [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; then
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus prometheus-alertmanager
  else
    echo "prometheus or alertmanager is missing and we are not root: the example's test will fail under CI=true and skip otherwise."
    echo "install them with: sudo apt-get install -y --no-install-recommends prometheus prometheus-alertmanager"
  fi
fi
prometheus --version 2>&1 | head -1 || true

# Approvals shared between replicas live in Redis. The tests of
# approval/ and test/ start Debian's redis-server themselves on a unix
# socket in their temp dir (no network, one server per test); a missing
# binary fails them under CI=true. Installed here when we can.
echo "== redis-server for the approval store tests"
if ! command -v redis-server >/dev/null; then
  sudo=
  if [ "$(id -u)" != 0 ] && [ "${CI:-}" = true ] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  fi
  if [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; then
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server
  else
    echo "redis-server is missing and we are not root: install it with sudo apt-get install -y --no-install-recommends redis-server"
  fi
fi

# The approval page's test drives Debian's chromium headless
# (chromedp) through an OpenID sign-in; a missing binary fails it under
# CI=true. Installed here when we can.
echo "== chromium for the approval page test"
if ! command -v chromium >/dev/null; then
  sudo=
  if [ "$(id -u)" != 0 ] && [ "${CI:-}" = true ] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  fi
  if [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; then
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
  else
    echo "chromium is missing and we are not root: install it with sudo apt-get install -y --no-install-recommends chromium"
  fi
fi

echo "== go mod tidy -diff, gofmt and go vet"
go mod tidy -diff
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './test/ts/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...

echo "== go test -race"
go test -race -count=1 -timeout 20m ./...

# The tool search relevance benchmark skips itself under -race (ranking
# is single-goroutine arithmetic that the detector slows tenfold).
echo "== tool search relevance, without -race"
go test -count=1 -timeout 20m -run '^TestRelevance$' ./cmd/gateway

# deploy/ is a Go module of its own, so Helm and the Kubernetes API types
# stay out of the gateway's go.mod (the root's ./... skips it); its nested
# module deploy/kube136 decodes the chart's renders into the previous
# Kubernetes version's types. The first build of Helm and k8s.io takes
# minutes on two cores; the Go build cache keeps it for later runs.
echo "== deploy: the Helm chart, the kustomize manifests and the Grafana dashboard"
for mod in deploy deploy/kube136; do
  echo "-- $mod"
  (cd "$mod" && go mod tidy -diff && go vet ./... && go test -count=1 -timeout 20m ./...)
done

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
