package incidents

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/schema"
)

// Table is the table Read reads (schema.TableIncidents).
const Table = schema.TableIncidents

// DefaultLimit is the number of episodes Read returns when Filter.Limit is 0.
const DefaultLimit = 500

// Filter selects episodes. Every field is optional.
type Filter struct {
	Agent string
	Kind  Kind
	// From and To select the episodes under way at some moment of
	// [From, To): started before To, and open or ended after From.
	From, To time.Time
	// OpenOnly keeps the episodes whose latest write left them open.
	OpenOnly bool
	// Limit bounds the answer (the latest starts first); 0: DefaultLimit.
	Limit int
}

// ErrBadFilter wraps a filter that cannot be read.
var ErrBadFilter = errors.New("incidents: bad filter")

// Read returns the episodes of database db that f selects, the latest
// start first (then by kind, agent, caller, reason). Values reach the SQL as
// bound parameters; only the validated database name is formatted into it.
// It runs on ClickHouse 18.16 and current releases.
func Read(ctx context.Context, conn driver.Conn, db string, f Filter) ([]Incident, error) {
	if err := schema.ValidDatabase(db); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFilter, err)
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return nil, fmt.Errorf("%w: from %s is not before to %s", ErrBadFilter, f.From.UTC().Format(time.RFC3339), f.To.UTC().Format(time.RFC3339))
	}
	if f.Kind != "" {
		if _, err := ParseKind(string(f.Kind)); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadFilter, err)
		}
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	where := "1"
	var args []any
	if f.Agent != "" {
		where += " AND agent = ?"
		args = append(args, f.Agent)
	}
	if f.Kind != "" {
		where += " AND kind = ?"
		args = append(args, string(f.Kind))
	}
	if !f.To.IsZero() {
		where += " AND started_at < toDateTime(?)"
		args = append(args, f.To.Unix())
	}
	having := "1"
	if !f.From.IsZero() {
		having += " AND (end_ = toDateTime(0) OR end_ > toDateTime(?))"
		args = append(args, f.From.Unix())
	}
	if f.OpenOnly {
		having += " AND end_ = toDateTime(0)"
	}
	// One row per episode: its latest write (the engine collapses them on
	// merge, in the background). The HAVING conditions apply to that write.
	q := fmt.Sprintf(`SELECT kind, agent, caller, reason, started_at,
    min(fired_at),
    argMax(last_seen_at, version) AS last_seen_,
    argMax(ended_at, version) AS end_,
    argMax(detail, version),
    argMax(peak_rate, version),
    argMax(baseline_rate, version),
    argMax(peak_score, version),
    argMax(peak_callers, version),
    argMax(peak_count, version),
    argMax(evaluations, version),
    argMax(writer, version),
    max(version)
FROM %s.%s
WHERE %s
GROUP BY kind, agent, caller, reason, started_at
HAVING %s
ORDER BY started_at DESC, kind, agent, caller, reason
LIMIT %d`, db, Table, where, having, limit)
	rows, err := conn.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("incidents: read: %w", err)
	}
	defer rows.Close()
	var out []Incident
	for rows.Next() {
		var i Incident
		var kind string
		if err := rows.Scan(&kind, &i.Agent, &i.Caller, &i.Reason, &i.Start, &i.Fired, &i.LastSeen, &i.End,
			&i.Detail, &i.PeakRate, &i.BaselineRate, &i.PeakScore, &i.PeakCallers, &i.PeakCount,
			&i.Evaluations, &i.Writer, &i.Version); err != nil {
			return nil, fmt.Errorf("incidents: read: %w", err)
		}
		i.Kind = Kind(kind)
		i.Start, i.Fired, i.LastSeen = i.Start.UTC(), i.Fired.UTC(), i.LastSeen.UTC()
		if i.End.Unix() <= 0 {
			i.End = time.Time{}
		} else {
			i.End = i.End.UTC()
		}
		out = append(out, i)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("incidents: read: %w", err)
	}
	return out, nil
}
