package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// GroupCodeExpr is the "code or reason" of an error group's fingerprint:
// the typed reason where the reply gave one (ErrorInfo.reason, an
// aap.error's symbol), else its protocol code. The fingerprint is (agent,
// protocol, GroupCodeExpr, kind, method) (docs/record.md, "Error groups").
const GroupCodeExpr = "if(reason != '', reason, code)"

// errorGroupsColumns are the columns of error_groups (migration 008), a
// contract with groups/: one row per group and agent version, every figure
// an aggregate state (AggregatingMergeTree), read with the -Merge
// combinators.
var errorGroupsColumns = []col{
	{"agent", "String", true, 0},
	{"protocol", "String", true, 0},
	{"code", "String", true, 0},
	{"kind", "String", true, 0},
	{"method", "String", true, 0},
	{"source_version", "String", true, 0},
	{"n", "AggregateFunction(count)", false, 0},
	{"first_seen", "AggregateFunction(min, DateTime)", false, 0},
	{"last_seen", "AggregateFunction(max, DateTime)", false, 0},
	{"callers", "AggregateFunction(uniq, String)", false, 0},
	{"example", "AggregateFunction(argMax, String, UInt64)", false, 0},
}

// errorGroups1hColumns are the columns of error_groups_1h (migration 008):
// errors per group and hour, for the chart and for the silences that make
// a regression.
var errorGroups1hColumns = []col{
	{"agent", "String", true, 0},
	{"protocol", "String", true, 0},
	{"code", "String", true, 0},
	{"kind", "String", true, 0},
	{"method", "String", true, 0},
	{"hour", "DateTime", false, codecTime},
	{"n", "UInt64", false, 0},
}

// groupExampleExpr is the example of a group: its latest reply with an
// error_id, else its latest reply (by event id: the story finds both).
const groupExampleExpr = "argMaxState(if(error_id != '', error_id, " + eventIDExpr + "), toUInt64(error_id != '') * 10000000000000 + observed_at_ms)"

// errorGroups renders migration 008: the agent's version (source_version)
// on landing and errors, mv1_errors replaced by mv1_errors_v8 that copies
// it, and the two group rollups (docs/schema.md, "error_groups").
//
// ClickHouse 18.16 can neither change a view's query nor add a column "IF
// NOT EXISTS": the ALTERs render without it there and Migrate takes
// "column already exists" as done (a migration run again after a failure
// half way); the new errors view is created before the old one is
// dropped, so no block goes unstored in between (a block both stored
// twice collapses in errors, a ReplacingMergeTree by the same key).
func (r *renderer) errorGroups() []string {
	var out []string
	for _, c := range errorsUpTo(8)[len(errorsV1):] { // source_version
		out = append(out, r.addColumn(r.local(TableErrors), r.colDef(c)))
	}
	if r.o.Cluster != "" {
		out = append(out, r.redistribute(TableErrors, errorsUpTo(8), kafkaShard)...)
	}
	if r.o.Cluster != "" {
		out = append(out, r.relanding(colsOf(landingUpTo(8)))...)
	} else {
		for _, c := range landingUpTo(8)[len(landingV1):] {
			out = append(out, r.addColumn(r.local(TableLanding), c.Name+" "+c.Type))
		}
	}
	// Order: mv1_errors_v8 sorts where mv1_errors did, before
	// viewIngestProgress (landingViews).
	out = append(out, r.view(viewErrorsV8, TableErrors, r.errorsViewQuery(errorsUpTo(8))))
	out = append(out, fmt.Sprintf("DROP TABLE IF EXISTS %s%s", r.q(viewErrors), r.onCluster()))
	// A Null table keeps the name, as migration 010 does for mv4_errors_1m:
	// an older errtrail's Migrate (a rolling upgrade) repairs the objects
	// of 001 it finds missing, and would put the old view back on landing.
	out = append(out, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s%s\n(\n    dropped_by_migration_008 UInt8\n)\nENGINE = Null", r.q(viewErrors), r.onCluster()))

	dims := "agent, protocol, code, kind, method"
	out = append(out, r.createTable(table{
		// A few rows per group (one per agent version): the alerter reads
		// every agent's groups at each evaluation, a page one agent's.
		// A row is large (a uniq state of up to 65,536 callers: about
		// 1.6 KB with 2,000), so granules of 256 rows: one agent's groups
		// read 8x less than with 8,192 (0.9 s → 0.15 s for the callers'
		// query at 10 M events, measured under load).
		name: TableErrorGroups, viewTarget: true, cols: errorGroupsColumns,
		engine:      "AggregatingMergeTree",
		orderBy:     "(" + dims + ", source_version)",
		granularity: 256,
	})...)
	out = append(out, r.createTable(table{
		name: TableErrorGroups1h, viewTarget: true, cols: errorGroups1hColumns,
		engine: "SummingMergeTree", args: "(n)",
		partition: "toYYYYMM(hour)",
		orderBy:   "(" + dims + ", hour)",
		ttl:       "hour", ttlDays: r.o.RollupRetentionDays,
	})...)
	from := "FROM " + r.q(r.local(TableLanding)) + "\nWHERE dead = 0\n"
	// Order (both views): no dependency of their own; they sort before
	// viewIngestProgress, which must follow them (landingViews).
	out = append(out, r.view(viewErrorGroups, TableErrorGroups,
		"SELECT\n"+
			"    agent,\n"+
			"    protocol,\n"+
			"    "+GroupCodeExpr+" AS code,\n"+
			"    kind,\n"+
			"    method,\n"+
			"    source_version,\n"+
			"    countState() AS n,\n"+
			"    minState(observed_at) AS first_seen,\n"+
			"    maxState(observed_at) AS last_seen,\n"+
			"    uniqState(caller) AS callers,\n"+
			"    "+groupExampleExpr+" AS example\n"+
			from+
			"GROUP BY "+dims+", source_version"))
	out = append(out, r.view(viewErrorGroups1h, TableErrorGroups1h,
		"SELECT\n"+
			"    agent,\n"+
			"    protocol,\n"+
			"    "+GroupCodeExpr+" AS code,\n"+
			"    kind,\n"+
			"    method,\n"+
			"    toStartOfHour(observed_at) AS hour,\n"+
			"    count() AS n\n"+
			from+
			"GROUP BY "+dims+", hour"))
	return out
}

// addColumn renders ALTER TABLE ... ADD COLUMN, with IF NOT EXISTS where
// the server has it.
func (r *renderer) addColumn(table, def string) string {
	ifNot := ""
	if r.f.AlterIfNotExists {
		ifNot = "IF NOT EXISTS "
	}
	return fmt.Sprintf("ALTER TABLE %s%s ADD COLUMN %s%s", r.q(table), r.onCluster(), ifNot, def)
}

// errorsViewQuery is the SELECT of the view that copies decoded rows from
// landing to errors, with the columns cols.
func (r *renderer) errorsViewQuery(cols []col) string {
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = "    " + c.name
		if c.name == "event_id" {
			sel[i] = "    " + eventIDExpr + " AS event_id"
		}
	}
	return "SELECT\n" + strings.Join(sel, ",\n") + "\nFROM " + r.q(r.local(TableLanding)) + "\nWHERE dead = 0"
}

var (
	addColumnRE = regexp.MustCompile(`^ALTER TABLE \S+(?: ON CLUSTER \S+)? ADD COLUMN `)
	dropRE      = regexp.MustCompile(`^DROP TABLE IF EXISTS ([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)`)
)

// isAddColumn reports whether st adds a column (Migrate takes "already
// exists" from it as done).
func isAddColumn(st string) bool { return addColumnRE.MatchString(st) }

// droppedViews returns the names of the tables and views m drops and does
// not create again.
func droppedViews(m Migration) []string {
	var out []string
	for i, st := range m.Statements {
		if g := dropRE.FindStringSubmatch(st); g != nil && !createdAfter(m.Statements[i+1:], g[2]) {
			out = append(out, g[2])
		}
	}
	return out
}

// createdAfter reports whether one of sts creates name again: a DROP
// followed by its CREATE re-creates the object (redistribute), it does not
// drop it for good. A Null table that keeps a dropped view's name does not
// count: the view is gone.
func createdAfter(sts []string, name string) bool {
	for _, st := range sts {
		if g := createRE.FindStringSubmatch(st); g != nil && g[2] == name && !isNullPlaceholder(st) {
			return true
		}
	}
	return false
}
