#!/usr/bin/env bash
# Mutation testing of the packages that keep agents safe: gremlins mutates
# each package's code (flipped conditions, shifted boundaries, changed
# arithmetic) and runs that package's own tests against every mutant. A
# mutant the tests do not notice ("LIVED") is a protection that could stop
# working with every test still green.
#
#   ./scripts/mutation.sh                 # rendering authz proxy catalog
#   ./scripts/mutation.sh rendering       # one package
#
# Slow (tens of minutes on 2 cores, proxy the longest), so it is not part
# of .ci/run. Prints the score per package; the lived mutants of each are in
# $OUT/PKG.txt. Mutants shown to be equivalent (no test can tell them
# apart) are listed with the reason in scripts/mutation-equivalent.md.
set -euo pipefail
cd "$(dirname "$0")/.."

GREMLINS_VERSION=v0.6.0
TOOLS="${TMPDIR:-/tmp}/gateway-tools/gremlins-$GREMLINS_VERSION"
if [ ! -x "$TOOLS/gremlins" ]; then
  echo "== installing gremlins $GREMLINS_VERSION into $TOOLS" >&2
  GOBIN="$TOOLS" go install "github.com/go-gremlins/gremlins/cmd/gremlins@$GREMLINS_VERSION"
fi

OUT="${OUT:-${TMPDIR:-/tmp}/gateway-mutation}"
mkdir -p "$OUT"
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(rendering authz proxy catalog)

printf '| package | killed | lived | timed out | not covered | efficacy | mutant coverage |\n'
printf '|---|--:|--:|--:|--:|--:|--:|\n'
for p in "${pkgs[@]}"; do
  echo "== gremlins ./$p (lived mutants: $OUT/$p.txt)" >&2
  "$TOOLS/gremlins" unleash --workers "${WORKERS:-2}" --timeout-coefficient 10 "./$p" > "$OUT/$p.full.txt" 2>&1 || true
  grep -E 'LIVED' "$OUT/$p.full.txt" > "$OUT/$p.txt" || true
  summary=$(tail -6 "$OUT/$p.full.txt")
  killed=$(sed -n 's/.*Killed: \([0-9]*\).*/\1/p' <<<"$summary")
  lived=$(sed -n 's/.*Lived: \([0-9]*\).*/\1/p' <<<"$summary")
  notcov=$(sed -n 's/.*Not covered: \([0-9]*\).*/\1/p' <<<"$summary")
  timedout=$(sed -n 's/.*Timed out: \([0-9]*\).*/\1/p' <<<"$summary")
  eff=$(sed -n 's/.*Test efficacy: \([0-9.]*%\).*/\1/p' <<<"$summary")
  cov=$(sed -n 's/.*Mutator coverage: \([0-9.]*%\).*/\1/p' <<<"$summary")
  if [ -z "$eff" ]; then
    echo "gremlins did not finish on ./$p; see $OUT/$p.full.txt" >&2
    exit 1
  fi
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$p" "$killed" "$lived" "$timedout" "$notcov" "$eff" "$cov"
done
