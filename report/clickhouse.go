package report

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/schema"
)

// ClickHouse builds reports from errtrail's tables. It needs only read access.
type ClickHouse struct {
	Conn     driver.Conn
	Database string // default schema.DefaultDatabase
	// RollupSince is when findings_1h started to fill: whole hours from
	// the first full hour after it are read from the rollup, everything
	// else from errors. Zero (the default) asks schema_migrations when
	// migration 006 was applied, once; before that migration exists every
	// report reads errors. Tests set it to pick a path.
	RollupSince time.Time
	// QueryIDPrefix, if set, names each statement in system.query_log:
	// query_id is QueryIDPrefix + "rollup", "errors" or "since" + "-" + a
	// number that counts the statements of this ClickHouse.
	QueryIDPrefix string

	queries atomic.Int64
	mu      sync.Mutex
	since   time.Time // RollupSince as learned from schema_migrations
}

// rollupMigration is the schema migration that creates findings_1h.
const rollupMigration = 6

// Report implements Reporter. agent "" asks for every agent; an agent of
// which errtrail holds no row at all is ErrUnknownAgent. The range is
// [from, to) in whole seconds (observed_at is a DateTime): from is rounded
// down and to up, and the Report carries the bounds it used. Errors:
// *BadRangeError for a range it refuses, *schema.ConfigError when the server
// refuses the configuration (no such database, user, password), *schema.UnavailableError when
// ClickHouse fails, ctx.Err() when ctx ends first.
//
// The whole hours of the range come from the findings_1h rollup, the
// partial hours at either end (and any hour before the rollup existed) from
// errors, in at most two statements. Counts from errors are
// uniqExact(event_id), exact even before the ReplacingMergeTree merged a
// re-sent copy; counts from findings_1h are stored messages, like errors_1m,
// so a re-send the ingester's dedup window missed counts twice there.
func (c *ClickHouse) Report(ctx context.Context, agent string, from, to time.Time) (*Report, error) {
	if err := CheckRange(from, to); err != nil {
		return nil, err
	}
	db := c.Database
	if db == "" {
		db = schema.DefaultDatabase
	}
	if err := schema.ValidDatabase(db); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	from = from.Truncate(time.Second).UTC()
	if t := to.Truncate(time.Second); t.Before(to) {
		to = t.Add(time.Second)
	}
	to = to.UTC()

	since, err := c.rollupSince(ctx, db)
	if err != nil {
		return nil, err
	}
	// [h0, h1) are the whole hours the rollup holds completely.
	h0 := ceilHour(from)
	if !since.IsZero() {
		if s := ceilHour(since); s.After(h0) {
			h0 = s
		}
	} else {
		h0 = to // no rollup: everything from errors
	}
	h1 := to.Truncate(time.Hour)
	if !h0.Before(h1) {
		h0, h1 = to, to
	}

	step, origin, _ := overSteps(from, to)
	steps := stepExpr{origin: origin.Unix(), seconds: int64(step / time.Second)}
	var parts []partRow
	if h0.Before(h1) {
		q, args := rollupQuery(db, agent, h0, h1, steps)
		if err := c.query(c.named(ctx, "rollup"), q, args, &parts); err != nil {
			return nil, err
		}
	}
	if from.Before(h0) || h1.Before(to) {
		q, args := rawQuery(db, agent, [2][2]time.Time{{from, h0}, {h1, to}}, steps)
		if err := c.query(c.named(ctx, "errors"), q, args, &parts); err != nil {
			return nil, err
		}
	}
	rep := build(agent, from, to, merge(parts))
	rep.Over = buildOver(rep, parts)
	if err := c.exampleGroups(c.named(ctx, "groups"), db, rep); err != nil {
		return nil, err
	}
	if agent != "" && rep.Replies == 0 && rep.OtherObservations == 0 {
		known, err := c.known(ctx, db, agent, !since.IsZero())
		if err != nil {
			return nil, err
		}
		if !known {
			return nil, ErrUnknownAgent
		}
	}
	return rep, nil
}

// known reports whether errtrail holds any row of agent, at any time:
// in errors (ordered by agent first: a read of one granule) or, when the
// rollup exists, in findings_1h, which is kept longer.
func (c *ClickHouse) known(ctx context.Context, db, agent string, rollup bool) (bool, error) {
	q := fmt.Sprintf("SELECT count() FROM (SELECT 1 FROM %s.%s WHERE agent = ? LIMIT 1)", db, schema.TableErrors)
	args := []any{agent}
	if rollup {
		q = fmt.Sprintf("SELECT count() FROM (SELECT 1 FROM %s.%s WHERE agent = ? LIMIT 1 UNION ALL SELECT 1 FROM %s.%s WHERE agent = ? LIMIT 1)",
			db, schema.TableErrors, db, schema.TableFindings1h)
		args = append(args, agent)
	}
	var n uint64
	if err := c.Conn.QueryRow(c.named(ctx, "known"), q, args...).Scan(&n); err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, &schema.UnavailableError{Err: fmt.Errorf("report: %w", err)}
	}
	return n > 0, nil
}

func ceilHour(t time.Time) time.Time {
	h := t.Truncate(time.Hour)
	if h.Before(t) {
		h = h.Add(time.Hour)
	}
	return h
}

// Only the validated database name is formatted into the SQL; the agent and
// the bounds are arguments. The bounds go as Unix seconds through
// toDateTime: a bound time.Time keeps 18.16 off the primary key (see
// schema.Lookup).

// stepExpr cuts time into the steps of Over: the step of a Unix second t
// is (t - origin) / seconds. Both are numbers errtrail computed, formatted
// into the SQL. Each statement groups by the step too, so one pair of
// statements answers both the totals (merge adds the steps up) and Over;
// the examples stay the same, since a step's argMax by the example order
// and then better across steps pick the global argMax.
type stepExpr struct{ origin, seconds int64 }

func (s stepExpr) of(column string) string {
	return fmt.Sprintf("intDiv(toInt64(toUInt32(%s)) - %d, %d)", column, s.origin, s.seconds)
}

// rollupQuery reads findings_1h over whole hours [h0, h1). The example is
// the latest hour's, preferring one with an error_id (what an agent team
// searches its own logs for); every argMax uses the same order, so they
// describe the same reply.
func rollupQuery(db, agent string, h0, h1 time.Time, steps stepExpr) (string, []any) {
	where := "hour >= toDateTime(?) AND hour < toDateTime(?)"
	args := []any{h0.Unix(), h1.Unix()}
	if agent != "" {
		where = "agent = ? AND " + where
		args = append([]any{agent}, args...)
	}
	const key = "(with_error_id, hour, example_event_id)"
	return fmt.Sprintf(`SELECT agent, source_kind, finding, sum(n), sum(breaking),
    argMax(example_event_id, %[3]s), argMax(example_error_id, %[3]s), toUInt32(argMax(hour, %[3]s)), %[5]s AS step
FROM %[1]s.%[4]s
WHERE %[2]s
GROUP BY agent, source_kind, finding, step`, db, where, key, schema.TableFindings1h, steps.of("hour")), args
}

// rawQuery reads errors over the given ranges (an empty range matches
// nothing), in the same shape as rollupQuery: the row of the empty finding counts
// every reply.
func rawQuery(db, agent string, ranges [2][2]time.Time, steps stepExpr) (string, []any) {
	where := "((observed_at >= toDateTime(?) AND observed_at < toDateTime(?)) OR (observed_at >= toDateTime(?) AND observed_at < toDateTime(?)))"
	args := []any{ranges[0][0].Unix(), ranges[0][1].Unix(), ranges[1][0].Unix(), ranges[1][1].Unix()}
	if agent != "" {
		where = "agent = ? AND " + where
		args = append([]any{agent}, args...)
	}
	const key = "(error_id != '', observed_at, event_id)"
	return fmt.Sprintf(`SELECT agent, source_kind, finding, uniqExact(event_id), uniqExactIf(event_id, notEmpty(findings)),
    argMax(event_id, %[3]s), argMax(error_id, %[3]s), toUInt32(argMax(observed_at, %[3]s)), %[5]s AS step
FROM %[1]s.%[4]s
ARRAY JOIN arrayPushFront(findings, '') AS finding
WHERE %[2]s
GROUP BY agent, source_kind, finding, step`, db, where, key, schema.TableErrors, steps.of("observed_at")), args
}

// exampleGroups sets each rule's ExampleGroup: one read of errors for
// every example at once, each by its agent, its hour (the sorting key's
// prefix) and its event_id.
func (c *ClickHouse) exampleGroups(ctx context.Context, db string, rep *Report) error {
	defer func() {
		for i := range rep.Rules {
			rep.Rules[i].exampleAt = 0 // read here only: equal reports compare equal
		}
	}()
	var cond []string
	var args []any
	for _, r := range rep.Rules {
		if r.ExampleEventID == "" || r.ExampleAgent == "" {
			continue
		}
		h := time.Unix(r.exampleAt, 0).UTC().Truncate(time.Hour)
		cond = append(cond, "(agent = ? AND observed_at >= toDateTime(?) AND observed_at < toDateTime(?) AND event_id = ?)")
		args = append(args, r.ExampleAgent, h.Unix(), h.Add(time.Hour).Unix(), r.ExampleEventID)
	}
	if len(cond) == 0 {
		return nil
	}
	q := fmt.Sprintf(`SELECT agent, event_id, protocol, code, reason, kind, method
FROM %s.%s
WHERE %s
LIMIT 1 BY agent, event_id`, db, schema.TableErrors, strings.Join(cond, " OR "))
	rows, err := c.Conn.Query(ctx, q, args...)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return lookup.StoreError(fmt.Errorf("report: %w", err))
	}
	defer rows.Close()
	ids := map[[2]string]string{}
	for rows.Next() {
		var agent, event, protocol, code, reason, kind, method string
		if err := rows.Scan(&agent, &event, &protocol, &code, &reason, &kind, &method); err != nil {
			return lookup.StoreError(fmt.Errorf("report: %w", err))
		}
		ids[[2]string{agent, event}] = groups.KeyOf(agent, protocol, code, reason, kind, method).ID()
	}
	if err := rows.Err(); err != nil {
		return lookup.StoreError(fmt.Errorf("report: %w", err))
	}
	for i := range rep.Rules {
		rep.Rules[i].ExampleGroup = ids[[2]string{rep.Rules[i].ExampleAgent, rep.Rules[i].ExampleEventID}]
	}
	return nil
}

// rollupSince returns RollupSince, else when migration 006 was applied
// (zero while it is not).
func (c *ClickHouse) rollupSince(ctx context.Context, db string) (time.Time, error) {
	if !c.RollupSince.IsZero() {
		return c.RollupSince, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.since.IsZero() {
		return c.since, nil
	}
	// max: a migration re-recorded later (another server version) must
	// not move the start back before a gap.
	var at uint32
	q := fmt.Sprintf("SELECT toUInt32(max(applied_at)) FROM %s.%s WHERE version = %d", db, schema.TableMigrations, rollupMigration)
	if err := c.Conn.QueryRow(c.named(ctx, "since"), q).Scan(&at); err != nil {
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
		return time.Time{}, schema.StoreError(fmt.Errorf("report: %w", err))
	}
	if at > 0 {
		c.since = time.Unix(int64(at), 0).UTC()
	}
	return c.since, nil
}

// named gives the statement its query_id when QueryIDPrefix is set.
func (c *ClickHouse) named(ctx context.Context, name string) context.Context {
	if c.QueryIDPrefix == "" {
		return ctx
	}
	id := c.QueryIDPrefix + name + "-" + strconv.FormatInt(c.queries.Add(1), 10)
	return clickhouse.Context(ctx, clickhouse.WithQueryID(id))
}

// query runs q and appends its rows, mapping failures to the documented
// error types.
func (c *ClickHouse) query(ctx context.Context, q string, args []any, out *[]partRow) error {
	fail := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return schema.StoreError(fmt.Errorf("report: %w", err))
	}
	rows, err := c.Conn.Query(ctx, q, args...)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var r partRow
		var at uint32
		if err := rows.Scan(&r.agent, &r.source, &r.code, &r.replies, &r.breaking, &r.eventID, &r.errorID, &at, &r.step); err != nil {
			return fail(err)
		}
		r.at = int64(at)
		*out = append(*out, r)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	return nil
}
