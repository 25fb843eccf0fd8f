package incidents

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/schema"
)

// MinutesTable is the table of the minutes in which an alerter recorded
// incidents (schema.TableAlerterMinutes).
const MinutesTable = schema.TableAlerterMinutes

// MarkRecording notes that alerter writer recorded incidents in the minute
// of at. The alerter calls it once a minute, after an evaluation whose
// episodes it recorded.
func MarkRecording(ctx context.Context, conn driver.Conn, db, writer string, at time.Time) error {
	if err := schema.ValidDatabase(db); err != nil {
		return fmt.Errorf("%w: %v", ErrBadFilter, err)
	}
	b, err := conn.PrepareBatch(ctx, fmt.Sprintf("INSERT INTO %s.%s (minute, writer, last_at)", db, MinutesTable))
	if err != nil {
		return fmt.Errorf("incidents: mark recording: %w", err)
	}
	at = at.UTC().Truncate(time.Second)
	if err := b.Append(at.Truncate(time.Minute), writer, at); err != nil {
		_ = b.Abort()
		return fmt.Errorf("incidents: mark recording: %w", err)
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("incidents: mark recording: %w", err)
	}
	return nil
}

// Moment is what the incidents say of one agent at one moment.
type Moment struct {
	// Recording: an alerter recorded incidents in the moment's minute. When
	// false, no episode means nothing: no alerter was looking.
	Recording bool
	// Incidents are the agent's episodes under way at the moment: started
	// at or before it and not ended by then.
	Incidents []Incident
}

// At reads what the incidents say of agent at t: two point reads at once
// (the minute's alerters, the agent's episodes by the sorting-key prefix).
func At(ctx context.Context, conn driver.Conn, db, agent string, t time.Time) (Moment, error) {
	var m Moment
	if err := schema.ValidDatabase(db); err != nil {
		return m, fmt.Errorf("%w: %v", ErrBadFilter, err)
	}
	t = t.UTC()
	var n uint64
	var nerr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		nerr = conn.QueryRow(ctx, fmt.Sprintf("SELECT count() FROM %s.%s WHERE minute = toDateTime(?)", db, MinutesTable),
			t.Truncate(time.Minute).Unix()).Scan(&n)
	}()
	list, err := Read(ctx, conn, db, Filter{Agent: agent, From: t, To: t.Add(time.Second)})
	wg.Wait()
	if nerr != nil {
		return m, fmt.Errorf("incidents: read: %w", nerr)
	}
	if err != nil {
		return m, err
	}
	m.Recording = n > 0
	for _, i := range list {
		if i.At(t) {
			m.Incidents = append(m.Incidents, i)
		}
	}
	return m, nil
}
