package ingest

// The writer, the third stage: one goroutine, one INSERT in flight.
//
// The writer takes decoded slots in the order they were fetched, opens each
// batch in the ledger (ledger.go), writes its rows (insert.go; on a cluster
// each shard its own, shards.go, and the rows of a shard that is down
// parked, park.go), has the offsets the ledger allows committed
// (commit.go) and only then acknowledges the slot, which hands the batch
// back to the fetcher and the slot back to the decoder. A permanent error,
// or the shutdown deadline, ends the stage without committing or
// acknowledging the batch in hand.

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// writer is the write stage. Its fields are touched only by its goroutine.
type writer struct {
	cfg   Config
	conn  driver.Conn
	src   Consumer    // commits go to it
	fence fenced      // src, when its partitions move only once settled (Group); else nil
	lag   *lagMonitor // told of each commit; nil when lag polling is off
	m     *Metrics
	log   *slog.Logger
	warn  *LogLimiter // retries, commits

	insertSQL string // insertInto(cfg.Table)

	ledger    Ledger
	parked    []*parkedSlot          // park.go, in fetch order
	held      map[TopicPartition]int // parked slots holding rows of each partition
	parkTries int                    // retries of the parked rows since the last one that emptied them
	parkNext  time.Time              // when the parked rows are retried next
	shardIdx  map[TopicPartition]int // shards.go: the shard of each partition seen
}

// newWriter returns the write stage of a pipeline committing to src and
// writing through conn (or cfg.Shards); cfg has its defaults.
func newWriter(cfg Config, src Consumer, conn driver.Conn, lag *lagMonitor, warn *LogLimiter) *writer {
	w := &writer{
		cfg: cfg, conn: conn, src: src, lag: lag, m: cfg.Metrics, log: cfg.Logger, warn: warn,
		insertSQL: insertInto(cfg.Table),
	}
	w.fence, _ = src.(fenced)
	return w
}

// run writes decoded slots in order, one insert at a time, commits each
// after its insert succeeded and then acknowledges it. While rows are
// parked (park.go) it retries them between slots, after the backoff. It
// returns nil when in is closed, or the error that stopped it (a
// *PermanentError, or the shutdown deadline), leaving the slot in hand
// unacknowledged.
func (w *writer) run(hard context.Context, in <-chan *slot) error {
	for {
		var retry <-chan time.Time
		stop := func() {}
		if len(w.parked) > 0 {
			// The retry is due at parkNext however many slots arrive meanwhile.
			t := time.NewTimer(time.Until(w.parkNext))
			retry, stop = t.C, func() { t.Stop() }
		}
		select {
		case s, ok := <-in:
			stop()
			if !ok {
				if len(w.parked) > 0 {
					w.log.Warn("stopping with parked rows; they are not committed and will be fetched again", "slots", len(w.parked))
				}
				return nil
			}
			if err := w.take(hard, s); err != nil {
				return err
			}
		case <-retry:
			if err := w.retryParked(hard); err != nil {
				return err
			}
		}
	}
}

// take inserts one decoded slot, commits what it stored and acknowledges
// the slot: what was parked of it is the writer's now (the slot stays
// pinned), the rest is settled. On an error it returns without either.
func (w *writer) take(hard context.Context, s *slot) error {
	b := s.b
	seq := w.ledger.Open(b.maxOff)
	if len(w.parked) > 0 {
		w.purgeParked(hard, b.epoch)
	}
	ins := s
	if len(w.held) > 0 && s.rows > 0 {
		ins = w.parkHeld(s, seq) // the rows of paused partitions wait behind their parked rows
	}
	var err error
	if ins.rows > 0 {
		err = w.insert(hard, ins, seq)
	} else if w.fence != nil {
		if _, done, ok := w.fence.attempt(b.epoch); ok {
			done()
		} else {
			err = errAbandoned
		}
	}
	switch {
	case errors.Is(err, errAbandoned):
		w.m.Abandoned.Add(float64(len(b.msgs)))
		w.log.Warn("batch dropped uncommitted: its partitions moved to another member before it was stored, and that member stores it",
			"messages", len(b.msgs), "rows", s.rows)
		w.commit(hard, b.epoch, w.ledger.Drop(seq))
	case errors.Is(err, errParked): // what was stored is committed; the rest waits in w.parked
	case err != nil:
		return err
	default:
		if ins.rows > 0 {
			w.m.RowsInserted.Add(float64(ins.rows))
			w.m.BatchRows.Observe(float64(ins.rows))
			w.m.BatchBytes.Observe(float64(b.bytes))
			w.m.LastInsert.SetToCurrentTime()
		}
		if s.pinned { // its held rows are parked: the rest is written
			w.commit(hard, b.epoch, w.ledger.WrittenParts(seq, partsExcept(b.maxOff, w.parkedOf(seq))))
		} else {
			w.commit(hard, b.epoch, w.ledger.Written(seq))
		}
	}
	s.ack()
	return nil
}
