package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/table"
)

// Pipeline is the health of errtrail itself: is ingest keeping up, are
// inserts succeeding, where did the events go.
func Pipeline() *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder("errtrail / Pipeline health").
		Uid(UIDPipeline).
		Description("Ingest lag, inserts, dead letters and outcomes of the errtrail pipeline; the alerter's own health.").
		Tags([]string{"errtrail", "pipeline"}).
		Time("now-3h", "now").Refresh("30s").Timezone("browser").
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(clickhouseVar()).WithVariable(prometheusVar()).WithVariable(databaseVar()).
		Link(dashLink("Overview", UIDOverview, "")).
		WithRow(row("Now")).
		WithPanel(single("Since last successful insert").
			Description("time() - errtrail_ingest_last_insert_success_timestamp_seconds (docs/operations.md#ingest-stalled).").
			Datasource(promRef()).
			WithTarget(PromInstant("time() - max(errtrail_ingest_last_insert_success_timestamp_seconds > 0)", "age")).
			Unit("s").Decimals(0).NoValue("never").
			ColorMode(common.BigValueColorModeBackground).GraphMode(common.BigValueGraphModeNone).
			Thresholds(thresholds(step(nil, "green"), step(f(120), "orange"), step(f(600), "red"))).
			Height(4).Span(4)).
		WithPanel(single("Lag (messages)").
			Description("Messages after the group's committed offsets, from Kafka (every ingester reports the whole group: max, not sum).").
			Datasource(promRef()).
			WithTarget(PromInstant("max(errtrail_ingest_consumer_lag_messages)", "lag")).
			Decimals(0).GraphMode(common.BigValueGraphModeArea).
			Thresholds(thresholds(step(nil, "green"), step(f(100000), "orange"))).
			Height(4).Span(4)).
		WithPanel(single("Lag (seconds)").
			Description("Age of the oldest message not yet committed, by its Kafka timestamp (the producer's clock); 0 when none waits.").
			Datasource(promRef()).
			WithTarget(PromInstant("max(errtrail_ingest_consumer_lag_seconds)", "lag")).
			Unit("s").GraphMode(common.BigValueGraphModeArea).
			Thresholds(thresholds(step(nil, "green"), step(f(60), "orange"), step(f(300), "red"))).
			Height(4).Span(4)).
		WithPanel(single("Ingest permanent failure").
			Description("1 when ingest stopped on an error retrying cannot fix; see its logs.").
			Datasource(promRef()).
			WithTarget(PromInstant("max(errtrail_ingest_permanent_failure)", "failure")).
			ColorMode(common.BigValueColorModeBackground).GraphMode(common.BigValueGraphModeNone).
			Thresholds(thresholds(step(nil, "green"), step(f(1), "red"))).
			Height(4).Span(4)).
		WithPanel(single("Rows parked (a shard refuses them)").
			Description("On a cluster: rows ingest holds in memory, uncommitted, because their shard refuses them while the others take theirs; their partitions are paused (docs/operations.md#ingest-rows-parked).").
			Datasource(promRef()).
			WithTarget(PromInstant("sum(errtrail_ingest_parked_rows)", "parked")).
			Decimals(0).NoValue("0").GraphMode(common.BigValueGraphModeArea).
			Thresholds(thresholds(step(nil, "green"), step(f(1), "orange"))).
			Height(4).Span(4)).
		WithPanel(single("Alerter reads ClickHouse").
			Datasource(promRef()).
			WithTarget(PromInstant("min(errtrail_alerter_clickhouse_up)", "up")).
			ColorMode(common.BigValueColorModeBackground).GraphMode(common.BigValueGraphModeNone).
			Thresholds(thresholds(step(nil, "red"), step(f(1), "green"))).
			Height(4).Span(4)).
		WithPanel(single("Alerter data age").
			Description("Seconds since the alerter's latest successful evaluation; verdicts vanish past --evaluation.stale-after (docs/operations.md#alerter-stale).").
			Datasource(promRef()).
			WithTarget(PromInstant("max(errtrail_alerter_data_age_seconds)", "age")).
			Unit("s").ColorMode(common.BigValueColorModeBackground).GraphMode(common.BigValueGraphModeNone).
			Thresholds(thresholds(step(nil, "green"), step(f(60), "red"))).
			Height(4).Span(4)).
		WithPanel(single("Baseline history").
			Description("Baseline the alerter has data for; below --history.min (10m) callers are judged only against their peers and limit-too-low is not claimed (docs/alerting.md#history).").
			Datasource(promRef()).
			WithTarget(PromInstant("max(errtrail_alerter_history_seconds)", "history")).
			Unit("s").Decimals(0).GraphMode(common.BigValueGraphModeNone).
			Thresholds(thresholds(step(nil, "orange"), step(f(600), "green"))).
			Height(4).Span(4)).
		WithPanel(single("Agents over the cap").
			Description("Agents beyond --agent.top-k summed into agent=\"(other)\" (docs/operations.md#agent-cap).").
			Datasource(promRef()).
			WithTarget(PromInstant("max(errtrail_alerter_agents_capped)", "capped")).
			Decimals(0).GraphMode(common.BigValueGraphModeNone).
			Thresholds(thresholds(step(nil, "green"), step(f(1), "orange"))).
			Height(4).Span(4)).
		WithRow(row("Ingest")).
		WithPanel(ts("Consumer lag (messages)").
			Datasource(promRef()).
			WithTarget(Prom("max(errtrail_ingest_consumer_lag_messages)", "lag")).
			Legend(legendTable("max", "last")).Height(8).Span(12)).
		WithPanel(ts("Consumer lag (seconds)").
			Description("Age of the oldest message not yet committed, by its Kafka timestamp (the producer's clock), polled from Kafka independent of inserts; 0 when none waits (docs/ingest.md).").
			Datasource(promRef()).
			WithTarget(Prom("max(errtrail_ingest_consumer_lag_seconds)", "oldest uncommitted")).
			Unit("s").Legend(legendTable("max", "last")).Height(8).Span(12)).
		WithPanel(ts("Throughput").
			Datasource(promRef()).
			WithTarget(Prom("sum(rate(errtrail_ingest_messages_consumed_total[$__rate_interval]))", "consumed")).
			WithTarget(Prom("sum(rate(errtrail_ingest_messages_decoded_total[$__rate_interval]))", "decoded").RefId("B")).
			WithTarget(Prom("sum(rate(errtrail_ingest_rows_inserted_total[$__rate_interval]))", "rows inserted").RefId("C")).
			WithTarget(Prom("sum(rate(errtrail_ingest_dead_letter_total[$__rate_interval]))", "dead-lettered").RefId("D")).
			WithTarget(Prom("sum by (why) (rate(errtrail_ingest_messages_skipped_total[$__rate_interval]))", "skipped {{why}}").RefId("E")).
			Unit("reqps").Legend(legendTable("mean", "max")).Height(8).Span(12)).
		WithPanel(ts("Insert latency").
			Datasource(promRef()).
			WithTarget(Prom("histogram_quantile(0.5, sum by (le) (rate(errtrail_ingest_insert_duration_seconds_bucket[$__rate_interval])))", "p50")).
			WithTarget(Prom("histogram_quantile(0.99, sum by (le) (rate(errtrail_ingest_insert_duration_seconds_bucket[$__rate_interval])))", "p99").RefId("B")).
			WithTarget(Prom("histogram_quantile(0.5, sum by (le) (rate(errtrail_ingest_batch_rows_bucket[$__rate_interval])))", "median batch rows").RefId("C")).
			Unit("s").
			OverrideByName("median batch rows", []dashboard.DynamicConfigValue{{Id: "unit", Value: "none"}, {Id: "custom.axisPlacement", Value: "right"}}).
			Legend(legendTable("mean", "max")).Height(8).Span(12)).
		WithPanel(ts("Insert retries and failures").
			Datasource(promRef()).
			WithTarget(Prom("sum by (class) (rate(errtrail_ingest_insert_retries_total[$__rate_interval])) > 0", "retry {{class}}")).
			WithTarget(Prom("sum by (class) (increase(errtrail_ingest_insert_failures_total[$__rate_interval])) > 0", "failure {{class}}").RefId("B")).
			WithTarget(Prom("sum(rate(errtrail_ingest_commit_errors_total[$__rate_interval])) > 0", "commit errors").RefId("C")).
			WithTarget(Prom("sum(rate(errtrail_ingest_fetch_errors_total[$__rate_interval])) > 0", "fetch errors").RefId("D")).
			Legend(legendTable("max")).Height(8).Span(12)).
		WithPanel(ts("Dead letters by reason (ingest)").
			Datasource(promRef()).
			WithTarget(Prom("sum by (reason) (rate(errtrail_ingest_dead_letter_total[$__rate_interval])) > 0", "{{reason}}")).
			Unit("reqps").Stacking(stacked()).FillOpacity(60).
			Legend(legendTable("mean", "max")).Height(8).Span(12)).
		WithRow(row("Where did my events go? (ClickHouse)")).
		WithPanel(ts("Outcomes").
			Description("Every landed message per second by outcome (outcomes_1m): accepted into errors, or dead-lettered with its reason. Messages skipped as replayed or resent are in the ingest throughput panel.").
			Datasource(chRef()).Interval("1m").
			WithTarget(CH(TimeSeries, fmt.Sprintf(`SELECT %s AS ts, if(outcome = 'dead_letter', concat('dead_letter: ', dl_reason), outcome) AS what, sum(n) / $__interval_s AS messages_per_s
FROM ${database}.outcomes_1m
WHERE $__timeFilter(minute)
GROUP BY ts, what
ORDER BY ts, what`, bucket("minute")))).
			DisplayName("${__field.labels.what}").
			Unit("reqps").Stacking(stacked()).FillOpacity(60).
			Legend(legendTable("mean", "max")).Height(9).Span(12)).
		WithPanel(table.NewPanelBuilder().Title("Outcomes in the range").
			Datasource(chRef()).
			WithTarget(CH(Table, `SELECT kafka_topic, outcome, dl_reason, sum(n) AS messages, min(minute) AS first_minute, max(minute) AS last_minute
FROM ${database}.outcomes_1m
WHERE $__timeFilter(minute)
GROUP BY kafka_topic, outcome, dl_reason
ORDER BY messages DESC`)).
			Footer(sumTotal()).Height(9).Span(12)).
		WithPanel(table.NewPanelBuilder().Title("Latest dead letters").
			Description("Enough to reproduce each failure: topic, partition, offset, reason and error (with its offset or field path), and the start of the raw message.").
			Datasource(chRef()).
			WithTarget(CH(Table, `SELECT ingested_at, kafka_topic, kafka_partition, kafka_offset, agent, source_kind, dl_reason, dl_error, substring(raw, 1, 300) AS raw_start
FROM ${database}.dead_letter
WHERE $__timeFilter(ingested_at)
ORDER BY ingested_at DESC
LIMIT 100`)).
			Height(9).Span(24)).
		WithPanel(table.NewPanelBuilder().Title("Last insert per partition").
			Description("ingest_progress: the highest offset in ClickHouse per Kafka partition and when it was written.").
			Datasource(chRef()).
			WithTarget(CH(Table, `SELECT kafka_topic, kafka_partition, max(max_offset) AS max_offset, max(updated_at) AS last_insert,
    toUInt32(now()) - toUInt32(max(updated_at)) AS seconds_ago
FROM ${database}.ingest_progress
GROUP BY kafka_topic, kafka_partition
ORDER BY kafka_topic, kafka_partition`)).
			OverrideByName("seconds_ago", []dashboard.DynamicConfigValue{{Id: "unit", Value: "s"}}).
			Height(8).Span(24)).
		WithRow(row("Alerter")).
		WithPanel(ts("Alerter evaluations").
			Datasource(promRef()).
			WithTarget(Prom("sum by (result) (rate(errtrail_alerter_evaluations_total[$__rate_interval]))", "{{result}}")).
			WithTarget(Prom("sum by (query) (rate(errtrail_alerter_query_errors_total[$__rate_interval])) > 0", "query error {{query}}").RefId("B")).
			Unit("reqps").Legend(legendTable("max")).Height(8).Span(12)).
		WithPanel(ts("Alerter query duration").
			Datasource(promRef()).
			WithTarget(Prom("errtrail_alerter_query_duration_seconds", "{{query}}")).
			WithTarget(Prom("histogram_quantile(0.99, sum by (le) (rate(errtrail_alerter_evaluation_duration_seconds_bucket[$__rate_interval])))", "evaluation p99").RefId("B")).
			Unit("s").Legend(legendTable("mean", "max")).Height(8).Span(12))
}
