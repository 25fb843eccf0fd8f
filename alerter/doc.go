// Package alerter turns the rows that ingest writes into ClickHouse into the
// verdicts an SRE acts on, and exports them as Prometheus metrics.
//
// The package has three layers, each testable alone:
//
//   - verdict.go: pure functions from an Input (counts per agent, caller and
//     time bucket, retry and gateway statistics) to Verdicts. No I/O, no
//     clock: Evaluate(cfg, in) is deterministic.
//   - query.go: the ClickHouse query layer (clickhouse-go v2, native
//     protocol). Gather reads the rollups (errors_1m, outcomes_1m) or, for
//     buckets shorter than a minute, the raw errors table, and fills an Input.
//   - metrics.go and runner.go: a prometheus.Collector that exposes the latest
//     Verdicts (only while they are fresh: stale verdicts vanish instead of
//     reading as zero) and the alerter's own health, and the loop that
//     evaluates on a fixed interval.
//
// The verdicts and their thresholds are defined in docs/alerting.md; what to
// do when an alert built on them fires is in docs/operations.md.
package alerter
