// Package e2e runs errtrail end to end on the real local stack: the load
// tool's scenarios go through Kafka, the ingester (cmd/ingest, built and run
// as a subprocess) writes ClickHouse, the alerter (cmd/alerter, likewise)
// turns the rows into verdict metrics, and the stack's Prometheus turns the
// verdicts into alerts with the rules of alerts/*.yml. The tests assert the
// verdicts (issue 4 §4) and the alerts that fire and must not fire.
//
// The package has only tests. TestScenarios runs in CI (scripts/test); the
// measurements of issue 4 §5 run with ERRTRAIL_MEASURE=1 (docs/performance.md,
// section Alerting). Servers are found by internal/testenv: a missing server
// skips outside CI and fails in CI.
//
// The alerter must listen on the address the stack's Prometheus scrapes
// (job errtrail-alerter), so only one run of these tests can be under way on
// a machine at a time: a file lock serializes them.
package e2e
