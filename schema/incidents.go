package schema

// IncidentsShard keeps every write of one episode on one shard in a cluster
// rendering, so that ReplacingMergeTree can collapse them there.
const IncidentsShard = "cityHash64(kind, agent, caller, reason)"

// incidentsColumns are the columns of incidents (migration 007), a contract
// with incidents/ (which reads them) and alerter/ (which writes them).
var incidentsColumns = []col{
	{"kind", "String", true, 0},
	{"agent", "String", true, 0},
	{"caller", "String", false, codecText},
	{"reason", "String", true, 0},
	{"started_at", "DateTime", false, 0},
	{"fired_at", "DateTime", false, 0},
	{"last_seen_at", "DateTime", false, 0},
	{"ended_at", "DateTime", false, 0},
	{"detail", "String", true, 0},
	{"peak_rate", "Float64", false, 0},
	{"baseline_rate", "Float64", false, 0},
	{"peak_score", "Float64", false, 0},
	{"peak_callers", "UInt32", false, 0},
	{"peak_count", "UInt64", false, 0},
	{"evaluations", "UInt32", false, 0},
	{"writer", "String", true, 0},
	{"version", "UInt64", false, 0},
}

// alerterMinutesColumns are the columns of alerter_minutes (migration 007):
// one row per alerter and minute in which it recorded incidents, so that a
// reader can tell "no episode" from "no alerter was recording".
var alerterMinutesColumns = []col{
	{"minute", "DateTime", false, 0},
	{"writer", "String", true, 0},
	{"last_at", "DateTime", false, 0},
}

// incidents is the table of the alerter's verdicts remembered as episodes
// (docs/schema.md, "incidents"): one row per episode of one verdict, written
// again by the alerter at every evaluation that changes it. The engine keeps,
// per episode identity (kind, agent, caller, reason, started_at), the write
// with the highest version (the evaluation time in milliseconds), so two
// alerters that write the same episode, or an alerter that continues the
// episode an earlier run opened, leave one row. Readers take the latest
// write with argMax(..., version) (or FINAL): merges are eventual.
func (r *renderer) incidents() []string {
	minutes := r.createTable(table{
		name: TableAlerterMinutes, cols: alerterMinutesColumns,
		engine: "ReplacingMergeTree", args: "last_at",
		partition: "toYYYYMM(minute)",
		orderBy:   "(minute, writer)",
		ttl:       "minute", ttlDays: r.o.RollupRetentionDays,
		shardKey: "cityHash64(writer)",
	})
	return append(minutes, r.createTable(table{
		name: TableIncidents, cols: incidentsColumns,
		engine: "ReplacingMergeTree", args: "version",
		partition: "toYYYYMM(started_at)",
		orderBy:   "(agent, kind, caller, reason, started_at)",
		ttl:       "last_seen_at", ttlDays: r.o.RollupRetentionDays,
		shardKey: IncidentsShard,
	})...)
}
