// Package alerter turns the rows that ingest writes into ClickHouse into the
// verdicts an SRE acts on, and exports them as Prometheus metrics.
//
// The package has three layers, each testable alone:
//
//   - verdict.go (and cap.go): pure functions from an Input (baseline counts
//     per agent, caller and bucket, the current window's counts, retry and
//     gateway statistics) and the previous Verdicts to Verdicts. No I/O, no
//     clock: Evaluate(cfg, in, prev) is deterministic. The previous verdicts
//     only serve the overload hysteresis.
//   - query.go, counts.go, retries.go, gateway.go: the ClickHouse query
//     layer (clickhouse-go v2, native protocol). Gather reads the baseline
//     from the callers_1m rollup (or, for buckets shorter than a minute, the
//     raw errors table), the current window and the retry and gateway
//     statistics from the raw errors table, the outcomes from outcomes_1m,
//     and fills an Input. Every count takes each request once, whether the
//     agent, a gateway or both reported it.
//   - metrics.go and runner.go: a prometheus.Collector that exposes the latest
//     Verdicts (only while they are fresh: stale verdicts vanish instead of
//     reading as zero) and the alerter's own health, and the loop that
//     evaluates on a fixed interval.
//
// The verdicts and their thresholds are defined in docs/alerting.md; what to
// do when an alert built on them fires is in docs/operations.md.
package alerter
