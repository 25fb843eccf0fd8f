#!/usr/bin/env bash
# bench/secrets/run.sh: reproduces the figures of bench/secrets/README.md.
#
#   bench/secrets/run.sh [ROUNDS] [BENCHTIME]     defaults 3 and 200ms
#
# Builds the test binary once, then runs each benchmark set in turn,
# -count=3 each, ROUNDS times over, so that the sets alternate on a noisy
# machine; writes the raw output to results/DATE-run.txt, the coverage table
# to results/DATE-coverage.md and the medians (benchsum) to results/DATE-summary.md.
#
# ERRTRAIL_REV=COMMIT measures parse.RedactString as it is in that commit
# (git archive into a temporary folder, go test -modfile with the replace
# pointed there) rather than in the work tree, which may be mid-change.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
ROUNDS="${1:-3}"
BT="${2:-200ms}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p results
day="$(date -u +%F-%H%M)"
out="results/$day-run.txt"
modflag=()
src="work tree $(git -C ../.. rev-parse --short HEAD)$(git -C ../.. status --porcelain -- parse redact go.mod | grep -q . && echo ' + uncommitted changes in parse/, redact/ or go.mod' || true)"
if [[ -n "${ERRTRAIL_REV:-}" ]]; then
	mkdir "$tmp/src"
	git -C ../.. archive "$ERRTRAIL_REV" | tar -x -C "$tmp/src"
	sed "s#^replace github.com/errtrail/errtrail => .*#replace github.com/errtrail/errtrail => $tmp/src#" go.mod >"$tmp/go.mod"
	cp go.sum "$tmp/go.sum"
	modflag=(-modfile "$tmp/go.mod")
	src="commit $(git -C ../.. rev-parse --short "$ERRTRAIL_REV")"
fi
go test "${modflag[@]}" -c -o "$tmp/secrets.test" .
"$tmp/secrets.test" -test.run 'TestCoverage' -table "$tmp/coverage.md"
{ echo "Coverage, gitleaks $(go list -m -f '{{.Version}}' github.com/zricethezav/gitleaks/v8) default config against parse.RedactString of errtrail $src:"; echo; cat "$tmp/coverage.md"; } >"results/$day-coverage.md"
"$tmp/secrets.test" -test.run 'TestSourceHasNoFinding'
{
	echo "# $(date -u +%FT%TZ) $(nproc) cores, $(go version | cut -d' ' -f3)," \
		"gitleaks $(go list -m -f '{{.Version}}' github.com/zricethezav/gitleaks/v8)," \
		"errtrail $src, rounds $ROUNDS, benchtime $BT, load $(cut -d' ' -f1-3 /proc/loadavg)"
	for r in $(seq "$ROUNDS"); do
		for b in Gitleaks Redact GitleaksAhoCorasick GitleaksPrefilter GitleaksRegex GitleaksDepth5 GitleaksOneRule; do
			echo "## round $r $b, load $(cut -d' ' -f1-3 /proc/loadavg)"
			"$tmp/secrets.test" -test.run '^$' -test.bench "^Benchmark$b\$" \
				-test.benchtime "$BT" -test.count 3 | grep -E '^Benchmark'
		done
	done
	echo "# done $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
go run ./benchsum "$out" | tee "results/$day-summary.md"
