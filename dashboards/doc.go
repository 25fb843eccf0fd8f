// Package dashboards builds errtrail's Grafana dashboards as code with the
// Grafana Foundation SDK and renders them as JSON.
//
// Four dashboards, each with a stable uid that alert annotations link to
// (/d/<uid>):
//
//   - errtrail-overview: errors/s by kind, overload vs quota per agent, top
//     agents and callers, untyped share, findings, and the alerter's verdicts.
//   - errtrail-agent: one agent ($agent, optional $caller): overload vs
//     baseline, quota by limit, callers, runaway scores, retry storms,
//     gateway mangling, recent replies.
//   - errtrail-lookup: support lookup by $error_id / $request_id through
//     error_lookup, every field of the record.
//   - errtrail-pipeline: ingest lag, insert rate and latency, dead letters,
//     outcomes ("where did my events go?"), last successful insert.
//
// ClickHouse panels use the grafana-clickhouse-datasource plugin. The SDK has
// no typed query for it, so SQLQuery is a small cog.Builder that produces the
// plugin's query model (rawSql, editorType, queryType, format) as a
// variants.UnknownDataquery. Every SQL text must run on ClickHouse 18.16 and
// on a current release: no toStartOfInterval (the plugin's $__timeInterval),
// no window functions, no CTEs, no JOINs. Expand substitutes the plugin's
// macros and Grafana's variables the way Grafana and the plugin do, so the
// tests (sql_test.go on the local server, scripts/check-dashboard-sql in
// chdb) run exactly the text a dashboard sends.
//
// The JSON under json/ is generated (go generate ./dashboards, or go run
// ./dashboards/cmd/gen) and committed; TestGoldenJSON fails when it differs.
package dashboards

//go:generate go run ./cmd/gen -out json
