package ingest

// The writer, the third stage: one goroutine, one INSERT in flight.
//
// The writer takes decoded slots in the order they were fetched, opens each
// batch in the ledger (ledger.go), writes its rows (insert.go; on a cluster
// each shard its own, shards.go), has the offsets the ledger allows
// committed (commit.go) and only then acknowledges the slot, which hands
// the batch back to the fetcher and the slot back to the decoder. On a
// cluster with a Group source the rows a shard refused, and later rows of
// their partitions, go to the writer's park lot (park.go), which retries
// them between slots; the writer commits a batch's partitions but those
// the lot holds. A permanent error, or the shutdown deadline, ends the
// stage without committing or acknowledging the batch in hand.

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

	ledger   Ledger
	lot      *parkLot               // park.go; nil unless rows may be parked (Config.Shards and a Group source)
	shardIdx map[TopicPartition]int // shards.go: the shard of each partition seen

	settled      bool   // settle.go: earlier inserts were awaited for settledEpoch
	settledEpoch uint64 // the batch epoch of that wait

	grace schemaGrace // grace.go: UNKNOWN_TABLE retried for a while once rows were stored
}

// newWriter returns the write stage of a pipeline committing to src and
// writing through conn (or cfg.Shards); cfg has its defaults.
func newWriter(cfg Config, src Consumer, conn driver.Conn, lag *lagMonitor, warn *LogLimiter) *writer {
	w := &writer{
		cfg: cfg, conn: conn, src: src, lag: lag, m: cfg.Metrics, log: cfg.Logger, warn: warn,
		insertSQL: insertInto(cfg.Table),
	}
	w.fence, _ = src.(fenced)
	if cfg.Shards != nil && w.fence != nil {
		w.lot = newParkLot(w.fence, cfg.Backoff, w.m, w.log, warn)
	}
	return w
}

// run writes decoded slots in order, one insert at a time, commits each
// after its insert succeeded and then acknowledges it. While rows are
// parked it has the lot retry them between slots, when due. It
// returns nil when in is closed, or the error that stopped it (a
// *PermanentError, or the shutdown deadline), leaving the slot in hand
// unacknowledged.
func (w *writer) run(hard context.Context, in <-chan *slot) error {
	for {
		var retry <-chan time.Time
		stop := func() {}
		if at, ok := w.lot.due(); ok {
			// The retry is due at its time however many slots arrive meanwhile.
			t := time.NewTimer(time.Until(at))
			retry, stop = t.C, func() { t.Stop() }
		}
		select {
		case s, ok := <-in:
			stop()
			if !ok {
				if n := w.lot.len(); n > 0 {
					w.log.Warn("stopping with parked rows; they are not committed and will be fetched again", "slots", n)
				}
				return nil
			}
			if err := w.take(hard, s); err != nil {
				return err
			}
		case <-retry:
			w.retryParked(hard)
		}
	}
}

// take inserts one decoded slot, commits what it stored and acknowledges
// the slot: what was parked of it is the lot's now (the slot stays
// pinned), the rest is settled. On an error it returns without either.
func (w *writer) take(hard context.Context, s *slot) error {
	b := s.b
	seq := w.ledger.Open(b.maxOff)
	w.lot.expire(hard, b.epoch, w) // parked rows of ended generations are dropped
	ins := w.lot.holdBack(s, seq)  // rows of paused partitions wait behind their parked rows
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
	case errors.Is(err, errParked): // what was stored is committed; the rest waits in the lot
		w.written(hard, b, seq)
	case err != nil:
		return err
	default:
		if ins.rows > 0 {
			w.m.RowsInserted.Add(float64(ins.rows))
			w.m.BatchRows.Observe(float64(ins.rows))
			w.m.BatchBytes.Observe(float64(b.bytes))
			w.m.LastInsert.SetToCurrentTime()
		}
		w.written(hard, b, seq)
	}
	s.ack()
	return nil
}

// written commits batch seq's partitions but those the lot holds: they are
// stored, or had no rows left to send.
func (w *writer) written(hard context.Context, b *batch, seq uint64) {
	parked := w.lot.partsOf(seq)
	if len(parked) == 0 {
		w.commit(hard, b.epoch, w.ledger.Written(seq))
		return
	}
	w.commit(hard, b.epoch, w.ledger.WrittenParts(seq, partsExcept(b.maxOff, parked)))
}

// partsExcept returns the partitions of max not in except.
func partsExcept(max map[TopicPartition]int64, except map[TopicPartition]bool) []TopicPartition {
	var out []TopicPartition
	for k := range max {
		if !except[k] {
			out = append(out, k)
		}
	}
	return out
}

// retryParked has the lot retry the parked rows.
func (w *writer) retryParked(hard context.Context) { w.lot.retry(hard, w) }

// The writer's side of the lot (parkSink): an attempt goes through the
// usual fenced attempt with the rows' own token, and what the lot stored
// or dropped is settled in the ledger and committed like any batch.

func (w *writer) attemptParked(hard context.Context, v *slot) error {
	return w.fencedAttempt(hard, v, w.settingsFor(v.token), 0)
}

func (w *writer) storedParked(hard context.Context, epoch, seq uint64, parts []TopicPartition) {
	w.grace.stored()
	w.commit(hard, epoch, w.ledger.WrittenParts(seq, parts))
}

func (w *writer) droppedParked(hard context.Context, epoch, seq uint64) {
	w.commit(hard, epoch, w.ledger.Drop(seq))
}

// settingsFor returns the insert settings for a token.
func (w *writer) settingsFor(token string) map[string]any {
	if w.cfg.InsertSettings == nil {
		return nil
	}
	return w.cfg.InsertSettings(token)
}
