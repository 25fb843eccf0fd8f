// Package e2e runs errtrail end to end on the real local stack: the load
// tool's scenarios go through Kafka, the ingester (cmd/ingest, built and run
// as a subprocess) writes ClickHouse, the alerters (cmd/alerter, likewise)
// turn the rows into verdict metrics, and a Prometheus and an Alertmanager
// of the test's own (the Debian binaries the stack installs; promstack_test.go)
// turn the verdicts into alerts with the rules of alerts/*.yml and deliver
// them to a webhook in the test, as on-call would receive them.
//
// The tests: TestScenarios (every scenario on a fresh database and after an
// hour of history: the verdicts and alerts that must and must not happen),
// TestClickHouseOutage (ClickHouse paused under an overload page, two
// alerters), TestLongRetryAfterScenario (quotas with long waits) run in CI
// (scripts/test); the measurements TestMeasureOnsetToAlert and
// TestMeasureQueryCost run only with ERRTRAIL_MEASURE=1 (docs/performance.md,
// section Alerting). Servers are found by
// internal/testenv: a missing server or binary skips outside CI and fails
// in CI.
//
// Every run has its own topic, consumer group, database and ports, so runs
// do not share state; TestClickHouseOutage pauses a ClickHouse of its own
// (internal/testenv.Own), so it and TestScenarios run at the same time
// (t.Parallel), and with the other packages (scripts/test).
package e2e
