package dashboards

import "fmt"

// errorMinutes is the source of the per-minute error counts without a
// caller: errors_1m holds the replies stored before schema migration 010,
// errors_1m_v2 those stored after it, and each reply is in one of them, so
// a panel sums both (docs/schema.md, "errors_1m_v2"). cols are the columns
// the panel takes (both tables have them; not caller: errors_1m_v2 has
// none), where restricts both.
func errorMinutes(cols, where string) string {
	return fmt.Sprintf(`(
    SELECT %[1]s FROM ${database}.errors_1m WHERE %[2]s
    UNION ALL
    SELECT %[1]s FROM ${database}.errors_1m_v2 WHERE %[2]s
)`, cols, where)
}

// agentOnly restricts a rollup without a caller to $agent.
const agentOnly = `agent = ${agent:sqlstring}`

// noCaller and oneCaller pick a branch of a panel by the $caller text box:
// the rollup without callers when it is empty, the caller's own counts
// when it is not.
const (
	noCaller  = `${caller:sqlstring} = ''`
	oneCaller = `${caller:sqlstring} != '' AND caller = ${caller:sqlstring}`
)

// callerClasses are the classes of callers_1m, the rollup per caller:
// quota and overload apart, every other kind together as "other" (the
// story's context uses the same three, lookup.KindOther).
const callerClasses = `sum(n) AS total,
    sum(overload) AS overload,
    sum(quota) AS quota,
    total - overload - quota AS other,
    sum(cannot_tell) AS cannot_tell,
    sum(untyped) / sum(n) AS untyped_share`

// callerClassRows turns each callers_1m row into one row per class
// (minute, kind, count), classes with a count of 0 left out, to follow a UNION ALL of (minute, kind, n) rows
// (columns match by position). The count is not named n: that alias would
// replace the column n inside the ARRAY JOIN's own expression.
func callerClassRows(where string) string {
	return `SELECT minute, tupleElement(k, 1) AS kind, tupleElement(k, 2) AS class_n
    FROM ${database}.callers_1m
    ARRAY JOIN arrayFilter(x -> tupleElement(x, 2) > 0,
        [('quota', quota), ('overload', overload), ('other', toUInt64(n - quota - overload))]) AS k
    WHERE ` + where
}
