package incidents

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/schema"
)

// columns are the columns Write fills, in order.
const columns = "kind, agent, caller, reason, started_at, fired_at, last_seen_at, ended_at, detail, " +
	"peak_rate, baseline_rate, peak_score, peak_callers, peak_count, evaluations, writer, version"

// Write inserts rows into database db's incidents table, in one insert: each
// a new write of its episode, which replaces the ones with a lower Version.
// The alerter (alerter.Recorder) decides what to write; this only stores it.
func Write(ctx context.Context, conn driver.Conn, db string, rows []Incident) error {
	if err := schema.ValidDatabase(db); err != nil {
		return fmt.Errorf("%w: %v", ErrBadFilter, err)
	}
	b, err := conn.PrepareBatch(ctx, fmt.Sprintf("INSERT INTO %s.%s (%s)", db, Table, columns))
	if err != nil {
		return fmt.Errorf("incidents: write: %w", err)
	}
	for _, i := range rows {
		end := time.Unix(0, 0).UTC()
		if !i.End.IsZero() {
			end = i.End
		}
		if err := b.Append(string(i.Kind), i.Agent, i.Caller, i.Reason, i.Start, i.Fired, i.LastSeen, end,
			i.Detail, i.PeakRate, i.BaselineRate, i.PeakScore, i.PeakCallers, i.PeakCount, i.Evaluations,
			i.Writer, i.Version); err != nil {
			_ = b.Abort()
			return fmt.Errorf("incidents: write: %w", err)
		}
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("incidents: write: %w", err)
	}
	return nil
}
