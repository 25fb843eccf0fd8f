// Package alerter turns the rows that ingest writes into ClickHouse into the
// verdicts an SRE acts on, and exports them as Prometheus metrics.
//
// The package has three layers, each testable alone:
//
//   - rules.go, verdict.go (and cap.go): pure functions from an Input
//     (baseline counts per agent, caller and bucket, the current window's
//     counts, retry and gateway statistics) and the previous Verdicts to
//     Verdicts. No I/O, no clock: Evaluate(cfg, in, prev) is deterministic.
//     Each verdict is one function of rules.go (overloaded, limitTooLow,
//     untypedErrors, scoreCaller and runaways, retryStorms,
//     gatewayMangling), tested alone; Evaluate aggregates the Input and
//     puts their answers together. The previous verdicts only serve the
//     overload hysteresis.
//   - query.go, counts.go, retries.go, gateway.go: the ClickHouse query
//     layer (clickhouse-go v2, native protocol). Gather reads the baseline
//     from the callers_1m rollup (or, for buckets shorter than a minute, the
//     raw errors table), the current window and the retry and gateway
//     statistics from the raw errors table, the outcomes from outcomes_1m,
//     and fills an Input. Every count takes each request once, whether the
//     agent, a gateway or both reported it. The baseline is reduced in
//     ClickHouse (Input.Baseline: per-agent overload and idle callers; the
//     buckets only of the callers whose own past can change a verdict),
//     and the independent queries run at once; Reader.Reference reads
//     everything in full instead, for the tests that prove the verdicts
//     the same (reduced_integration_test.go, and scale_test.go at 100
//     agents x 10,000 callers, docs/performance.md). Every query goes
//     through Reader.query: only integers, the validated database name
//     and schema's table constants are formatted into the SQL; the agent
//     names of Reader.Agents are bound values.
//   - recompute.go: Recomputer, the incidents.Recomputer the support
//     lookup is handed to compute one agent's verdicts at one second
//     afresh (the lookup does not import this package).
//   - metrics.go and runner.go: a prometheus.Collector that exposes the latest
//     Verdicts (only while they are fresh: stale verdicts vanish instead of
//     reading as zero) and the alerter's own health, and the loop that
//     evaluates on a fixed interval.
//
// Beside the verdicts, groups.go (NewGroups, a Collector of its own that
// the Runner checks after each evaluation, at most once a minute) exports
// the error groups that are new (package groups) for the
// ErrtrailNewErrorGroup ticket; it reads the error_groups rollup only.
//
// The verdicts and their thresholds are defined in docs/alerting.md; what to
// do when an alert built on them fires is in docs/operations.md.
package alerter
