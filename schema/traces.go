package schema

// errorTracesColumns are the columns of error_traces (migration 009): what
// a stored error adds beyond errors' columns, keyed like errors so that a
// lookup reads it by the same (agent, observed_at, event_id). A contract
// with lookup/ (TraceRow).
var errorTracesColumns = []col{
	{"event_id", "String", false, codecText},
	{"observed_at", "DateTime", false, codecTime},
	{"agent", "String", true, 0},
	{"ingested_at", "DateTime", false, codecTime},
	{"kafka_index", "UInt32", false, 0},
	{"origin", "String", true, 0},
	{"trace_id", "String", false, codecText},
	{"span_id", "String", false, codecText},
	{"inferred", "Array(String)", false, codecText},
}

// traces is migration 009. It adds landing's trace and origin columns
// (RowColumns with Added 9) and stores them in a table of their own, error_traces,
// instead of adding them to errors: errors is filled by mv1_errors, whose
// column list 18.16 cannot change in place (no ALTER ... MODIFY QUERY), and
// dropping and re-creating that view would lose the blocks inserted in
// between and make Migrate's repair of migration 001 re-create the old view.
// Everything here only adds: columns, a table and two views.
//
// A trace id is also an id of error_lookup (id_kind 'trace_id'), written
// by a view of its own for the same reason.
//
// On servers without ADD COLUMN IF NOT EXISTS (18.16) the ALTER statements
// are not idempotent by themselves; Migrate takes a column that exists as
// added (execStatement), as for migration 008.
func (r *renderer) traces() []string {
	var out []string
	if r.o.Cluster != "" {
		out = append(out, r.relanding(colsOf(landingUpTo(9)))...)
	} else {
		for _, c := range landingUpTo(9)[len(landingUpTo(8)):] {
			out = append(out, r.addColumn(r.local(TableLanding), c.Name+" "+c.Type))
		}
	}
	out = append(out, r.createTable(table{
		name: TableErrorTraces, viewTarget: true, cols: errorTracesColumns,
		engine: "ReplacingMergeTree", args: "ingested_at",
		granularity: 1024, // read by a lookup's full key, like errors
		partition:   "toYYYYMMDD(observed_at)",
		orderBy:     "(agent, observed_at, event_id)",
		ttl:         "observed_at", ttlDays: r.o.RetentionDays,
	})...)
	// Order (both views): no dependency of their own; they sort before
	// viewIngestProgress, which must follow them (landingViews).
	out = append(out, r.view(viewErrorTraces, TableErrorTraces,
		"SELECT\n"+
			"    "+eventIDExpr+" AS event_id,\n"+
			"    observed_at,\n"+
			"    agent,\n"+
			"    ingested_at,\n"+
			"    kafka_index,\n"+
			"    origin,\n"+
			"    trace_id,\n"+
			"    span_id,\n"+
			"    inferred\n"+
			"FROM "+r.q(r.local(TableLanding))+"\n"+
			"WHERE dead = 0"))
	out = append(out, r.view(viewTraceLookup, TableErrorLookup,
		"SELECT\n"+
			"    trace_id AS id,\n"+
			"    'trace_id' AS id_kind,\n"+
			"    observed_at,\n"+
			"    agent,\n"+
			"    "+eventIDExpr+" AS event_id\n"+
			"FROM "+r.q(r.local(TableLanding))+"\n"+
			"WHERE dead = 0 AND trace_id != ''"))
	return out
}
