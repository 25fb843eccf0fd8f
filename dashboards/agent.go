package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/table"
)

// agentFilter restricts a rollup or errors query to $agent and, when the
// $caller text box is not empty, to that caller. Values go through
// ${var:sqlstring}, which quotes and doubles quotes, so any text is safe.
const agentFilter = `agent = ${agent:sqlstring} AND (${caller:sqlstring} = '' OR caller = ${caller:sqlstring})`

// incidentsAnnotationSQL marks the agent's incidents (docs/alerting.md,
// "Incidents") on every panel: one region per episode under way in the
// range, from its start to its end (to the range's end while open), from
// each episode's latest write (argMax by version, as incidents.Read). The
// columns are the ClickHouse plugin's annotation columns.
const incidentsAnnotationSQL = `SELECT started_at AS time,
    if(end_ = toDateTime(0), $__toTime, end_) AS timeEnd,
    concat(kind, if(caller = '', '', concat(' of caller ', caller)), if(reason = '', '', concat(' (', reason, ')')),
        if(end_ = toDateTime(0), ', still open', '')) AS text,
    kind AS tags
FROM (
    SELECT kind, caller, reason, started_at, argMax(ended_at, version) AS end_
    FROM ${database}.incidents
    WHERE agent = ${agent:sqlstring} AND started_at <= $__toTime
    GROUP BY kind, caller, reason, started_at
    HAVING end_ = toDateTime(0) OR end_ >= $__fromTime
)
ORDER BY time`

// Agent is one agent's page, templated by $agent (alerts link here with
// var-agent, runaway and retry-storm alerts also with var-caller).
func Agent() *dashboard.DashboardBuilder {
	agentVar := dashboard.NewQueryVariableBuilder("agent").Label("Agent").
		Datasource(chRef()).
		Query(dashboard.StringOrMap{String: cog.ToPtr("SELECT DISTINCT agent FROM ${database}.callers_1m WHERE $__timeFilter(minute) ORDER BY agent")}).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		AllowCustomValue(true)
	callerVar := textVar("caller", "Caller (empty: all)", "").
		Description("Restrict the ClickHouse panels to one caller; empty shows all.")
	lookupLink := linksTo("Story of this request id in errtrail",
		"${errtrail_url}/errors?id=${__value.raw:percentencode}&agent=${agent:percentencode}")
	callerLink := linksTo("Only this caller",
		"/d/"+UIDAgent+"?var-agent=${agent}&var-caller=${__value.raw}&${__url_time_range}")

	return dashboard.NewDashboardBuilder("errtrail / Agent").
		Uid(UIDAgent).
		Description("One agent: overload against its baseline, quota by limit, its callers, runaway and retry-storm scores, gateway mangling.").
		Tags([]string{"errtrail"}).
		Time("now-3h", "now").Refresh("1m").Timezone("browser").
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(clickhouseVar()).WithVariable(prometheusVar()).WithVariable(databaseVar()).
		WithVariable(agentVar).WithVariable(callerVar).WithVariable(errtrailURLVar()).
		Link(dashLink("Overview", UIDOverview, "")).
		Link(dashLink("Support lookup", UIDLookup, "")).
		Link(pageLink("Conformance report of this agent", "/agents/${agent:percentencode}/report")).
		Link(pageLink("Recent errors of this agent and caller", "/errors?agent=${agent:percentencode}&caller=${caller:percentencode}")).
		Link(pageLink("Incidents of this agent", "/incidents?agent=${agent:percentencode}")).
		Annotation(dashboard.NewAnnotationQueryBuilder().Name("errtrail incidents").
			Datasource(chRef()).Enable(true).IconColor("red").
			Target(CH(Table, incidentsAnnotationSQL))).
		WithRow(row("Overload (page) and quota (no page)")).
		WithPanel(ts("Overload rate vs baseline (alerter)").
			Description("The alerter's current-window overload rate against the median of its baseline; the verdict fires at factor x baseline (docs/alerting.md#agent-overloaded).").
			Datasource(promRef()).
			WithTarget(Prom(`errtrail_alerter_overload_per_second{agent="$agent"}`, "overload/s")).
			WithTarget(Prom(`errtrail_alerter_overload_baseline_per_second{agent="$agent"}`, "baseline median/s").RefId("B")).
			WithTarget(Prom(`errtrail_alerter_agent_overloaded{agent="$agent"}`, "verdict overloaded").RefId("C")).
			WithTarget(Prom(`errtrail_alerter_overload_callers{agent="$agent"}`, "callers seeing overload").RefId("D")).
			Unit("reqps").
			OverrideByName("verdict overloaded", []dashboard.DynamicConfigValue{{Id: "custom.axisPlacement", Value: "right"}, {Id: "unit", Value: "none"}}).
			OverrideByName("callers seeing overload", []dashboard.DynamicConfigValue{{Id: "custom.axisPlacement", Value: "right"}, {Id: "unit", Value: "none"}}).
			Legend(legendTable("mean", "max", "last")).Height(9).Span(12)).
		WithPanel(ts("Errors/s by kind").
			Description("From errors_1m and errors_1m_v2: the full history the alerter's window slides over. With a caller: that caller's from callers_1m, as quota, overload and other (every other kind).").
			Datasource(chRef()).Interval("1m").
			WithTarget(CH(TimeSeries, fmt.Sprintf(`SELECT %s AS ts, kind, sum(n) / $__interval_s AS errors_per_s
FROM (
    SELECT minute, kind, n FROM %s
    UNION ALL
    %s
)
GROUP BY ts, kind
ORDER BY ts, kind`, bucket("minute"),
				errorMinutes("minute, kind, n", "$__timeFilter(minute) AND "+agentOnly+" AND "+noCaller),
				callerClassRows("$__timeFilter(minute) AND "+agentOnly+" AND "+oneCaller)))).
			DisplayName("${__field.labels.kind}").
			Unit("reqps").Stacking(stacked()).FillOpacity(60).
			Legend(legendTable("mean", "max")).Height(9).Span(12)).
		WithPanel(ts("Quota rejections by limit (alerter)").
			Description("Quota rejections per second by limit/policy name (top-k, rest 'other').").
			Datasource(promRef()).
			WithTarget(Prom(`errtrail_alerter_quota_rejections_per_second{agent="$agent"}`, "{{limit}}")).
			WithTarget(Prom(`errtrail_alerter_limit_too_low{agent="$agent"}`, "verdict limit too low").RefId("B")).
			Unit("reqps").
			OverrideByName("verdict limit too low", []dashboard.DynamicConfigValue{{Id: "custom.axisPlacement", Value: "right"}, {Id: "unit", Value: "none"}}).
			Legend(legendTable("mean", "max", "last")).Height(9).Span(12)).
		WithPanel(ts("Quota rejections by limit").
			Description("Quota replies per second by the limit the reply named (limit_name), '(none)' when it named none: from errors_1m and errors_1m_v2, or, with a caller, that caller's from errors.").
			Datasource(chRef()).Interval("1m").
			WithTarget(CH(TimeSeries, fmt.Sprintf(`SELECT %s AS ts, if(limit_name = '', '(none)', limit_name) AS quota_limit, sum(n) / $__interval_s AS rejections_per_s
FROM (
    SELECT minute, limit_name, n FROM %s
    UNION ALL
    SELECT toStartOfMinute(observed_at) AS minute, limit_name, toUInt64(1) AS n
    FROM ${database}.errors
    WHERE $__timeFilter(observed_at) AND %s AND %s AND kind = 'quota'
)
GROUP BY ts, quota_limit
ORDER BY ts, quota_limit`, bucket("minute"),
				errorMinutes("minute, limit_name, n", "$__timeFilter(minute) AND "+agentOnly+" AND kind = 'quota' AND "+noCaller),
				agentOnly, oneCaller))).
			DisplayName("${__field.labels.quota_limit}").
			Unit("reqps").Legend(legendTable("mean", "max")).Height(9).Span(12)).
		WithRow(row("Callers")).
		WithPanel(table.NewPanelBuilder().Title("Callers").
			Description("From callers_1m: the agent's callers in the range, quota, overload and other (every other kind); cannot_tell counts the untyped replies that cannot tell a quota from a crash. The delays the replies asked for are in Retries by caller.").
			Datasource(chRef()).
			WithTarget(CH(Table, fmt.Sprintf(`SELECT caller,
    %s
FROM ${database}.callers_1m
WHERE $__timeFilter(minute) AND %s
GROUP BY caller
ORDER BY total DESC
LIMIT 50`, callerClasses, agentFilter))).
			OverrideByName("caller", callerLink).
			OverrideByName("untyped_share", []dashboard.DynamicConfigValue{{Id: "unit", Value: "percentunit"}}).
			Height(10).Span(12)).
		WithPanel(ts("Errors/s of the top 10 callers").
			Description("From callers_1m.").
			Datasource(chRef()).Interval("1m").
			WithTarget(CH(TimeSeries, fmt.Sprintf(`SELECT %s AS ts, caller, sum(n) / $__interval_s AS errors_per_s
FROM ${database}.callers_1m
WHERE $__timeFilter(minute) AND %s
  AND caller GLOBAL IN (
    SELECT caller FROM ${database}.callers_1m
    WHERE $__timeFilter(minute) AND %s
    GROUP BY caller ORDER BY sum(n) DESC LIMIT 10)
GROUP BY ts, caller
ORDER BY ts, caller`, bucket("minute"), agentFilter, agentFilter))).
			DisplayName("${__field.labels.caller}").
			Unit("reqps").Legend(legendTable("mean", "max")).Height(10).Span(12)).
		WithRow(row("Runaway callers and retry storms")).
		WithPanel(ts("Runaway scores (flagged callers)").
			Description("Error rate / max(baseline median, floor) of flagged callers; runaway at --runaway.factor (docs/alerting.md#runaway-caller).").
			Datasource(promRef()).
			WithTarget(Prom(`errtrail_alerter_caller_runaway_score{agent="$agent"}`, "{{caller}}")).
			WithTarget(Prom(`errtrail_alerter_runaway_callers{agent="$agent"}`, "runaway callers").RefId("B")).
			Legend(legendTable("max", "last")).Height(9).Span(12)).
		WithPanel(ts("Retry storms (flagged callers)").
			Description("Share of a flagged caller's retries that came early or carried a fresh id (docs/alerting.md#retry-storm).").
			Datasource(promRef()).
			WithTarget(Prom(`errtrail_alerter_caller_retry_storm_share{agent="$agent"}`, "{{caller}} {{reason}}")).
			Unit("percentunit").Min(0).Max(1).
			Legend(legendTable("max", "last")).Height(9).Span(12)).
		WithPanel(table.NewPanelBuilder().Title("Retries by caller").
			Description("From errors: replies to retried requests (attempt > 1) per caller, and the mean delay the replies asked for. Whether a retry came early or with a fresh id is the alerter's retry-storm verdict above.").
			Datasource(chRef()).
			WithTarget(CH(Table, fmt.Sprintf(`SELECT caller,
    count() AS replies,
    countIf(attempt > 1) AS retries,
    countIf(attempt > 1) / count() AS retry_share,
    max(attempt) AS max_attempt,
    uniqExact(message_id) AS message_ids,
    countIf(retry_after_ms >= 0) AS with_retry_after,
    sumIf(retry_after_ms, retry_after_ms >= 0) / greatest(countIf(retry_after_ms >= 0), 1) / 1000 AS avg_retry_after_s
FROM ${database}.errors
WHERE $__timeFilter(observed_at) AND %s
GROUP BY caller
ORDER BY retries DESC
LIMIT 50`, agentFilter))).
			OverrideByName("retry_share", []dashboard.DynamicConfigValue{{Id: "unit", Value: "percentunit"}}).
			OverrideByName("avg_retry_after_s", []dashboard.DynamicConfigValue{{Id: "unit", Value: "s"}}).
			Height(9).Span(24)).
		WithRow(row("Gateway mangling")).
		WithPanel(ts("Gateway mangled share (alerter)").
			Description("Requests seen by both the agent and a gateway whose status differs or whose body was stripped (docs/alerting.md#gateway-mangling).").
			Datasource(promRef()).
			WithTarget(Prom(`errtrail_alerter_gateway_mangled_ratio{agent="$agent"}`, "mangled share")).
			WithTarget(Prom(`errtrail_alerter_gateway_mangling{agent="$agent"}`, "verdict mangling").RefId("B")).
			Unit("percentunit").Min(0).Max(1).Legend(legendTable("max", "last")).Height(9).Span(8)).
		WithPanel(ts("Gateway rewrites (alerter)").
			Datasource(promRef()).
			WithTarget(Prom(`errtrail_alerter_gateway_rewrites{agent="$agent"}`, "{{agent_status}} → {{gateway_status}}")).
			Legend(legendTable("max", "last")).Height(9).Span(8)).
		WithPanel(table.NewPanelBuilder().Title("Replies by source and status").
			Description("From errors: who reported the reply (agent or gateway) with what status; status_body_mismatch and body_missing are the findings a rewrite leaves.").
			Datasource(chRef()).
			WithTarget(CH(Table, fmt.Sprintf(`SELECT source_kind, http_status, grpc_status, kind,
    count() AS replies,
    countIf(has(findings, 'status_body_mismatch')) AS status_body_mismatch,
    countIf(has(findings, 'body_missing')) AS body_missing
FROM ${database}.errors
WHERE $__timeFilter(observed_at) AND %s
GROUP BY source_kind, http_status, grpc_status, kind
ORDER BY replies DESC
LIMIT 50`, agentFilter))).
			Height(9).Span(8)).
		WithRow(row("Recent replies")).
		WithPanel(table.NewPanelBuilder().Title("Latest 100 replies").
			Description("Click a request id for the support lookup.").
			Datasource(chRef()).
			WithTarget(CH(Table, fmt.Sprintf(`SELECT observed_at, caller, method, kind, protocol, binding, http_status, grpc_status, code, reason,
    limit_name, retry_after_ms, attempt, error_id, request_id, message, findings
FROM ${database}.errors
WHERE $__timeFilter(observed_at) AND %s
ORDER BY observed_at DESC
LIMIT 100`, agentFilter))).
			OverrideByName("request_id", lookupLink).
			Height(12).Span(24))
}
