#!/usr/bin/env bash
# ingest/measure.sh: throughput and CPU per event of cmd/ingest on the local
# stack (scripts/stack up), with the load tool's flood of realistic events.
#
#   ingest/measure.sh [EVENTS]      default 1000000
#   LOADGEN_FLAGS="--body-form json"  passed to loadgen flood
#   INGEST_FLAGS="--gc.percent 100"   passed to ingest run
#   MEASURE_KEEP=1                    keep the two databases and topics for
#                                     inspection (by default they are dropped:
#                                     ClickHouse would go on merging them in
#                                     the background and slow later
#                                     measurements, and each topic holds
#                                     about 0.2 GB per million events)
#
# Two runs, each on a fresh topic and a fresh database:
#   catch-up   EVENTS are produced first, then ingest starts and drains them;
#   sustained  ingest runs first, then loadgen floods EVENTS as fast as it can
#              (producer, ingest, Kafka and ClickHouse share the machine).
# Each prints events/s (first fetch to last row acknowledged by ClickHouse,
# read from ingest's own rows_inserted_total) and the ingest process's CPU
# seconds (user+sys from /proc) per event, and its peak RSS (VmHWM).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
N="${1:-1000000}"
set -a
# shellcheck source=/dev/null
. "${ERRTRAIL_STACK_DIR:-$PWD/.stack}/env"
set +a
PORT="${ERRTRAIL_MEASURE_PORT:-19199}"
read -r -a lflags <<<"${LOADGEN_FLAGS:-}"
read -r -a iflags <<<"${INGEST_FLAGS:-}"
tmp="$(mktemp -d)"
id="$(date +%s)"
cleanup() {
	if [[ "${MEASURE_KEEP:-}" != 1 ]]; then
		for db in "errtrail_measure_c$id" "errtrail_measure_s$id"; do
			curl -sf "http://$ERRTRAIL_CLICKHOUSE_HTTP/" --data-binary "DROP DATABASE IF EXISTS $db" >/dev/null || true
		done
		[[ -x "$tmp/loadgen" ]] && "$tmp/loadgen" drop-topics "measure.catchup.$id" "measure.sustained.$id" >/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/ingest" ./cmd/ingest
go build -o "$tmp/loadgen" ./cmd/loadgen
TCK="$(getconf CLK_TCK)"

rows() { curl -sf "http://127.0.0.1:$PORT/metrics" | awk '/^errtrail_ingest_rows_inserted_total /{printf "%d", $2}'; }
cpu() { awk -v t="$TCK" '{printf "%.2f", ($14+$15)/t}' "/proc/$1/stat"; }
flood() { "$tmp/loadgen" flood --events "$N" --kafka.topic "$1" --progress 0 "${lflags[@]}" >"$tmp/loadgen.log" 2>&1; }
start_ingest() {
	"$tmp/ingest" run --kafka.topic "$1" --kafka.group "measure-$1" --clickhouse.database "$2" \
		--http.listen-address "127.0.0.1:$PORT" "${iflags[@]}" 2>"$tmp/ingest.log" &
	PID=$!
	until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do sleep 0.2; done
}
wait_rows() {
	local n=0
	until ((n >= N)); do
		sleep 0.2
		n="$(rows || echo 0)"
		n="${n:-0}"
	done
}
stop_ingest() {
	HWM="$(awk '/VmHWM/{printf "%.0f", $2/1024}' "/proc/$PID/status")" # peak RSS, MiB
	kill -TERM "$PID" && wait "$PID"
}
report() { # name t0 t1 cpu0 cpu1
	awk -v name="$1" -v n="$N" -v t0="$2" -v t1="$3" -v c0="$4" -v c1="$5" -v h="$HWM" 'BEGIN {
		printf "%-10s %d events in %.1f s: %.0f events/s; ingest CPU %.1f s = %.2f us/event; peak RSS %d MiB\n",
			name, n, t1-t0, n/(t1-t0), c1-c0, (c1-c0)*1e6/n, h }'
}

# catch-up
topic="measure.catchup.$id" db="errtrail_measure_c$id"
flood "$topic"
start_ingest "$topic" "$db"
t0="$(date +%s.%N)" c0="$(cpu "$PID")"
wait_rows
t1="$(date +%s.%N)" c1="$(cpu "$PID")"
stop_ingest
report catch-up "$t0" "$t1" "$c0" "$c1"

# sustained
topic="measure.sustained.$id" db="errtrail_measure_s$id"
"$tmp/loadgen" flood --events 1 --kafka.topic "$topic" --progress 0 >/dev/null 2>&1 # create the topic
N=$((N + 1))
start_ingest "$topic" "$db"
sleep 3 # joined the group
t0="$(date +%s.%N)" c0="$(cpu "$PID")"
N=$((N - 1)) flood "$topic"
wait_rows
t1="$(date +%s.%N)" c1="$(cpu "$PID")"
stop_ingest
report sustained "$t0" "$t1" "$c0" "$c1"
if [[ "${MEASURE_KEEP:-}" == 1 ]]; then
	echo "(databases $db and errtrail_measure_c$id and topics measure.*.$id are left for inspection)"
fi
