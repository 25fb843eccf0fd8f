#!/usr/bin/env bash
# bench/drivers/run.sh: reproduces "Ingest drivers (measured, not adopted)"
# in docs/performance.md on the local stack (scripts/stack up).
#
#   bench/drivers/run.sh [RUNS] [MESSAGES]     defaults 3 and 1000000
#
# ClickHouse: one database errtrail_driverbench_<id> with the landing
# columns (schema.LandingColumns) as ENGINE = Null (timed runs: the client's
# work only) and ENGINE = MergeTree (the check that every driver stores the
# same rows, and one timed round). Each timed run is its own process:
# 2 warm-up batches, then 20 batches of 50,000 rows; CPU is the process's
# user+sys (getrusage), allocations from runtime.MemStats.
# Kafka: MESSAGES events of loadgen's steady scenario (~1.1 KiB, LZ4) into a
# new topic driverbench.<id> (the broker's default partition count, 4 on the
# stack), consumed by each client in its own process with a new consumer
# group, one commit per 50,000 messages.
# Everything it creates is dropped at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
RUNS="${1:-3}"
N="${2:-1000000}"
set -a
# shellcheck source=/dev/null
. "${ERRTRAIL_STACK_DIR:-$PWD/../../.stack}/env"
set +a
tmp="$(mktemp -d)"
id="$(date +%s)"
db="errtrail_driverbench_$id"
topic="driverbench.$id"
groups=()
cleanup() {
	"$tmp/driverbench" ch-drop -db "$db" || true
	if [[ -f "$tmp/produced" ]]; then
		g="$(IFS=,; echo "${groups[*]-}")"
		"$tmp/driverbench" kafka-drop -topic "$topic" -group "$g" || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/driverbench" .
(cd ../.. && go build -o "$tmp/loadgen" ./cmd/loadgen)
B="$tmp/driverbench"
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)"

echo "## ClickHouse ($ERRTRAIL_CLICKHOUSE_ADDR)"
"$B" ch-probe
"$B" ch-setup -db "$db"
"$B" ch-verify -db "$db"
for r in $(seq "$RUNS"); do
	for d in clickhouse-go clickhouse-go-blocks ch-go ch-go-direct; do
		"$B" ch -db "$db" -table landing_null -driver "$d"
	done
done
for d in clickhouse-go clickhouse-go-blocks ch-go ch-go-direct; do
	"$B" ch -db "$db" -table landing_mt -driver "$d"
done

echo "## Kafka ($ERRTRAIL_KAFKA_BROKERS)"
t0="$(date +%s.%N)"
"$tmp/loadgen" flood --events "$N" --kafka.topic "$topic" --progress 0 >"$tmp/loadgen.log" 2>&1 ||
	{ cat "$tmp/loadgen.log"; exit 1; }
touch "$tmp/produced"
echo "produced $N messages into $topic in $(echo "$(date +%s.%N) - $t0" | bc) s"
for r in $(seq "$RUNS"); do
	for d in kafka-go franz-go; do
		g="driverbench.$id.$d.$r"
		groups+=("$g")
		"$B" kafka -topic "$topic" -group "$g" -driver "$d" -n "$N"
	done
done
echo "# done, load $(cut -d' ' -f1-3 /proc/loadavg)"
