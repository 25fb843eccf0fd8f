#!/usr/bin/env bash
# ingest/measure-ab.sh: compares the ingest CPU per event of two git
# revisions on the local stack (scripts/stack up), in alternation, because
# single runs on a shared machine vary by up to 20 % with other load.
#
#   ingest/measure-ab.sh REV_A REV_B [ROUNDS] [EVENTS]    defaults 5 and 1500000
#   INGEST_FLAGS="--gc.percent 100"                        passed to both
#   INGEST_FLAGS_A=... INGEST_FLAGS_B=...                  passed to one
#                                  (same revision twice: compares flags)
#
# Builds cmd/ingest at both revisions (git worktrees in a temporary folder),
# floods EVENTS events of the load tool's steady scenario into one new
# topic, then per round drains the whole topic with A and then with B, each
# with a fresh consumer group and a fresh database (catch-up, as
# measure.sh's first run). Prints each run's events/s, CPU per event
# (user+sys of the ingest process) and peak RSS, each round's A - B, and
# the mean and median of those differences. Drops its databases and its
# topic (measure.ab.<id>) at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
A="${1:?usage: ingest/measure-ab.sh REV_A REV_B [ROUNDS] [EVENTS]}"
B="${2:?usage: ingest/measure-ab.sh REV_A REV_B [ROUNDS] [EVENTS]}"
ROUNDS="${3:-5}"
N="${4:-1500000}"
set -a
# shellcheck source=/dev/null
. "${ERRTRAIL_STACK_DIR:-$PWD/.stack}/env"
set +a
PORT="${ERRTRAIL_MEASURE_PORT:-19199}"
read -r -a iflags <<<"${INGEST_FLAGS:-}"
read -r -a iflags_a <<<"${INGEST_FLAGS_A:-}"
read -r -a iflags_b <<<"${INGEST_FLAGS_B:-}"
tmp="$(mktemp -d)"
id="$(date +%s)"
cleanup() {
	local db
	for db in $(curl -sf "http://$ERRTRAIL_CLICKHOUSE_HTTP/" --data-binary \
		"SELECT name FROM system.databases WHERE startsWith(name, 'errtrail_measure_ab_${id}_')" || true); do
		curl -sf "http://$ERRTRAIL_CLICKHOUSE_HTTP/" --data-binary "DROP DATABASE IF EXISTS $db" >/dev/null || true
	done
	[[ -x "$tmp/loadgen" ]] && "$tmp/loadgen" drop-topics "measure.ab.$id" >/dev/null || true
	for w in a b; do git worktree remove --force "$tmp/$w" >/dev/null 2>&1 || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
for w in a b; do
	rev="$A"
	[[ "$w" == b ]] && rev="$B"
	git worktree add --detach "$tmp/$w" "$rev" >/dev/null 2>&1
	(cd "$tmp/$w" && go build -o "$tmp/ingest-$w" ./cmd/ingest)
done
go build -o "$tmp/loadgen" ./cmd/loadgen
TCK="$(getconf CLK_TCK)"
topic="measure.ab.$id"
"$tmp/loadgen" flood --events "$N" --kafka.topic "$topic" --progress 0 >"$tmp/loadgen.log" 2>&1 ||
	{ cat "$tmp/loadgen.log"; exit 1; }

rows() { curl -sf "http://127.0.0.1:$PORT/metrics" | awk '/^errtrail_ingest_rows_inserted_total /{printf "%d", $2}'; }
drain() { # which round -> prints "us_per_event"
	local w="$1" db="errtrail_measure_ab_${id}_$2_$1" pid t0 t1 c0 c1 n=0 hwm own
	own=("${iflags_a[@]}")
	[[ "$w" == b ]] && own=("${iflags_b[@]}")
	"$tmp/ingest-$w" run --kafka.topic "$topic" --kafka.group "$db" --clickhouse.database "$db" \
		--http.listen-address "127.0.0.1:$PORT" "${iflags[@]}" "${own[@]}" 2>"$tmp/ingest-$w.log" &
	pid=$!
	until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do sleep 0.1; done
	t0="$(date +%s.%N)" c0="$(awk '{print $14+$15}' "/proc/$pid/stat")"
	until ((n >= N)); do
		sleep 0.2
		n="$(rows || echo 0)"
		n="${n:-0}"
	done
	t1="$(date +%s.%N)" c1="$(awk '{print $14+$15}' "/proc/$pid/stat")"
	hwm="$(awk '/VmHWM/{printf "%.0f", $2/1024}' "/proc/$pid/status")"
	kill -TERM "$pid" && wait "$pid"
	curl -sf "http://$ERRTRAIL_CLICKHOUSE_HTTP/" --data-binary "DROP DATABASE IF EXISTS $db" >/dev/null || true
	awk -v w="$w" -v n="$N" -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" -v t="$TCK" -v h="$hwm" 'BEGIN {
		printf "  %s: %.0f events/s, %.2f us/event, peak RSS %d MiB\n", w, n/(t1-t0), (c1-c0)/t*1e6/n, h > "/dev/stderr"
		printf "%.4f\n", (c1-c0)/t*1e6/n }'
}
echo "A = $A ($(git rev-parse --short "$A")) ${INGEST_FLAGS_A:-}, B = $B ($(git rev-parse --short "$B")) ${INGEST_FLAGS_B:-}, both ${INGEST_FLAGS:-(no shared flags)}, $N events, $ROUNDS rounds"
diffs=()
for r in $(seq "$ROUNDS"); do
	echo "round $r"
	a="$(drain a "$r")"
	b="$(drain b "$r")"
	d="$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", a-b}')"
	diffs+=("$d")
	echo "  A - B = $d us/event"
done
printf '%s\n' "${diffs[@]}" | sort -g | awk '{v[NR]=$1; s+=$1} END {
	m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2
	printf "A - B over %d rounds: mean %.2f, median %.2f us/event (positive: B uses less CPU)\n", NR, s/NR, m }'
