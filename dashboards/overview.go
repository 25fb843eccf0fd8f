package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/table"
)

// kindColumns sums the rollup's n per kind, one column per kind that an SRE
// acts on, and the rest as "other".
const kindColumns = `sum(n) AS total,
    sumIf(n, kind = 'overload') AS overload,
    sumIf(n, kind = 'quota') AS quota,
    sumIf(n, kind = 'internal') AS internal,
    sumIf(n, kind = 'unknown') AS unknown,
    sumIf(n, kind NOT IN ('overload', 'quota', 'internal', 'unknown')) AS other,
    sumIf(n, typed = 0) / sum(n) AS untyped_share`

// Overview is the SRE's first stop: what fails, where, and what the alerter
// concluded.
func Overview() *dashboard.DashboardBuilder {
	agentLink := linksTo("Agent dashboard for ${__value.raw}",
		"/d/"+UIDAgent+"?var-agent=${__value.raw}&${__url_time_range}")
	callerLink := linksTo("Agent dashboard for this caller",
		"/d/"+UIDAgent+"?var-agent=${__data.fields.agent}&var-caller=${__value.raw}&${__url_time_range}")

	return dashboard.NewDashboardBuilder("errtrail / Overview").
		Uid(UIDOverview).
		Description("Error replies of every agent from ClickHouse (errors_1m and errors_1m_v2, callers_1m, errors) and the alerter's verdicts from Prometheus.").
		Tags([]string{"errtrail"}).
		Time("now-6h", "now").Refresh("1m").Timezone("browser").
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(clickhouseVar()).WithVariable(prometheusVar()).WithVariable(databaseVar()).WithVariable(errtrailURLVar()).
		Link(dashLink("Pipeline health", UIDPipeline, "")).
		Link(dashLink("Support lookup", UIDLookup, "")).
		Link(pageLink("Conformance report of every agent", "/report")).
		WithRow(row("Verdicts now (alerter)")).
		WithPanel(verdictStat("Agents overloaded", "sum(errtrail_alerter_agent_overloaded)", "Agents the alerter calls overloaded: they fail for everyone (page).")).
		WithPanel(verdictStat("Limits too low", "sum(errtrail_alerter_limit_too_low)", "Agents whose quota rejections rose across most callers.")).
		WithPanel(verdictStat("Runaway callers", "sum(errtrail_alerter_runaway_callers)", "Callers whose error rate ran far above their own baseline.")).
		WithPanel(verdictStat("Retry storms", "sum(errtrail_alerter_retry_storm_callers)", "Callers retrying early or with fresh ids.")).
		WithPanel(verdictStat("Gateways mangling", "sum(errtrail_alerter_gateway_mangling)", "Agents whose replies a gateway rewrites.")).
		WithPanel(verdictStat("Mostly untyped", "sum(errtrail_alerter_untyped_errors)", "Agents whose replies mostly carry no typed reason.")).
		WithPanel(ts("Verdicts by agent").
			Description("Each line is one verdict that holds (value 1) for one agent.").
			Datasource(promRef()).
			WithTarget(Prom("errtrail_alerter_agent_overloaded == 1", "{{agent}} overloaded")).
			WithTarget(Prom("errtrail_alerter_limit_too_low == 1", "{{agent}} limit too low").RefId("B")).
			WithTarget(Prom("errtrail_alerter_untyped_errors == 1", "{{agent}} untyped").RefId("C")).
			WithTarget(Prom("errtrail_alerter_gateway_mangling == 1", "{{agent}} gateway mangling").RefId("D")).
			WithTarget(Prom("errtrail_alerter_caller_runaway == 1", "{{agent}} runaway {{caller}}").RefId("E")).
			WithTarget(Prom("errtrail_alerter_caller_retry_storm == 1", "{{agent}} retry storm {{caller}} ({{reason}})").RefId("F")).
			Min(0).Max(1).Decimals(0).ShowPoints(common.VisibilityModeAlways).
			Legend(legendTable()).Height(8).Span(24)).
		WithRow(row("Errors (ClickHouse)")).
		WithPanel(ts("Errors/s by kind").
			Description("Error replies per second from errors_1m and errors_1m_v2, stacked by kind.").
			Datasource(chRef()).Interval("1m").
			WithTarget(CH(TimeSeries, fmt.Sprintf(`SELECT %s AS ts, kind, sum(n) / $__interval_s AS errors_per_s
FROM %s
GROUP BY ts, kind
ORDER BY ts, kind`, bucket("minute"), errorMinutes("minute, kind, n", "$__timeFilter(minute)")))).
			DisplayName("${__field.labels.kind}").
			Unit("reqps").Stacking(stacked()).FillOpacity(60).
			Legend(legendTable("mean", "max")).Height(10).Span(12)).
		WithPanel(ts("Overload vs quota per agent").
			Description("Overload (the agent fails for everyone: page) against quota (one caller over its limit: no page), per agent.").
			Datasource(chRef()).Interval("1m").
			WithTarget(CH(TimeSeries, fmt.Sprintf(`SELECT %s AS ts, agent, kind, sum(n) / $__interval_s AS errors_per_s
FROM %s
GROUP BY ts, agent, kind
ORDER BY ts, agent, kind`, bucket("minute"), errorMinutes("minute, agent, kind, n", "$__timeFilter(minute) AND kind IN ('overload', 'quota')")))).
			DisplayName("${__field.labels.agent} ${__field.labels.kind}").
			Unit("reqps").OverrideByRegexp(".*quota", []dashboard.DynamicConfigValue{
			{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
		}).Legend(legendTable("mean", "max")).Height(10).Span(12)).
		WithPanel(table.NewPanelBuilder().Title("Top agents").
			Description("Agents with the most error replies in the range (errors_1m and errors_1m_v2; callers from callers_1m). Click an agent for its dashboard.").
			Datasource(chRef()).
			WithTarget(CH(Table, `SELECT agent,
    `+kindColumns+`,
    uniqExactIf(caller, from_callers = 1) AS callers
FROM (
    SELECT agent, kind, typed, n, '' AS caller, toUInt8(0) AS from_callers FROM `+errorMinutes("agent, kind, typed, n", "$__timeFilter(minute)")+`
    UNION ALL
    SELECT agent, '' AS kind, toUInt8(0) AS typed, toUInt64(0) AS n, caller, toUInt8(1) AS from_callers
    FROM ${database}.callers_1m WHERE $__timeFilter(minute)
)
GROUP BY agent
HAVING total > 0
ORDER BY total DESC
LIMIT 20`)).
			OverrideByName("agent", agentLink).
			OverrideByName("untyped_share", []dashboard.DynamicConfigValue{{Id: "unit", Value: "percentunit"}}).
			Footer(sumTotal()).Height(10).Span(12)).
		WithPanel(table.NewPanelBuilder().Title("Top callers").
			Description("Callers with the most error replies in the range, per agent, from callers_1m: quota, overload and other (every other kind).").
			Datasource(chRef()).
			WithTarget(CH(Table, `SELECT agent, caller,
    `+callerClasses+`
FROM ${database}.callers_1m
WHERE $__timeFilter(minute)
GROUP BY agent, caller
ORDER BY total DESC
LIMIT 20`)).
			OverrideByName("caller", callerLink).
			OverrideByName("untyped_share", []dashboard.DynamicConfigValue{{Id: "unit", Value: "percentunit"}}).
			Height(10).Span(12)).
		WithPanel(ts("Share of untyped replies").
			Description("Replies that no typed reason decided (only numbers did), per agent. A client cannot tell a quota from a crash in those.").
			Datasource(chRef()).Interval("1m").
			WithTarget(CH(TimeSeries, fmt.Sprintf(`SELECT %s AS ts, agent, sumIf(n, typed = 0) / sum(n) AS untyped_share
FROM %s
GROUP BY ts, agent
ORDER BY ts, agent`, bucket("minute"), errorMinutes("minute, agent, typed, n", "$__timeFilter(minute)")))).
			DisplayName("${__field.labels.agent}").
			Unit("percentunit").Min(0).Max(1).Legend(legendTable("mean", "last")).Height(9).Span(12)).
		WithPanel(table.NewPanelBuilder().Title("Findings").
			Description("Findings raised in the range (docs/record.md#findings): how many replies, from how many agents and callers.").
			Datasource(chRef()).
			WithTarget(CH(Table, `SELECT finding, count() AS replies, uniqExact(agent) AS agents, uniqExact(caller) AS callers, max(observed_at) AS last_seen
FROM ${database}.errors
ARRAY JOIN findings AS finding
WHERE $__timeFilter(observed_at)
GROUP BY finding
ORDER BY replies DESC`)).
			Height(9).Span(12)).
		WithPanel(table.NewPanelBuilder().Title("Findings by agent").
			Datasource(chRef()).
			WithTarget(CH(Table, `SELECT agent, finding, count() AS replies, uniqExact(caller) AS callers
FROM ${database}.errors
ARRAY JOIN findings AS finding
WHERE $__timeFilter(observed_at)
GROUP BY agent, finding
ORDER BY replies DESC
LIMIT 50`)).
			OverrideByName("agent", agentLink).
			Height(9).Span(24))
}

func verdictStat(title, expr, desc string) cog.Builder[dashboard.Panel] {
	return single(title).Description(desc).
		Datasource(promRef()).
		WithTarget(PromInstant(expr, title)).
		NoValue("no data (alerter stale?)").Decimals(0).
		ColorMode(common.BigValueColorModeBackground).GraphMode(common.BigValueGraphModeNone).
		Thresholds(thresholds(step(nil, "green"), step(f(1), "red"))).
		Height(4).Span(4)
}
