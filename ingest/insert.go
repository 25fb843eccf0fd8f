package ingest

// Insert: one attempt to write a slot's rows, and the retries around it.
//
// insert writes a slot's rows with one INSERT into Config.Table (sent in
// blocks of InsertBlockRows), or, on a cluster, one per shard (shards.go).
// Transient errors are retried forever with Config.Backoff, each attempt
// bounded by InsertTimeout and built afresh from the column buffers, which
// stay untouched; meanwhile no batch is acknowledged, so fetching stops.
// Before every attempt the rows ClickHouse already holds are dropped
// (dropStored), and with a Group source the batch's generation is asked
// whether it may still be written (fencedAttempt). The batch's token, the
// same on every attempt, lets the server drop an insert it already holds
// (Config.InsertSettings). A permanent error, or the shutdown deadline,
// ends the attempts. On a cluster with a park lot (park.go), a shard's
// refusal hands the rows it refused to the lot at once (parkRefused);
// without one they are retried alone, after the other shards' partitions
// are committed.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// insert writes the worker buffers with one INSERT, retrying transient
// errors forever (a clickhouse-go batch cannot be re-sent, so each attempt
// builds a new one from the buffers, which stay untouched).
func (w *writer) insert(hard context.Context, s *slot, seq uint64) error {
	settings := w.settingsFor(s.token)
	for attempt := 0; ; attempt++ {
		start := time.Now()
		err := w.fencedAttempt(hard, s, settings, attempt)
		if errors.Is(err, errAbandoned) {
			return err
		}
		var pe *partialError
		if errors.As(err, &pe) {
			// Some shards stored their rows (now gone from s).
			w.m.RowsInserted.Add(float64(pe.rows))
			w.grace.storedSome()
			w.m.LastInsert.SetToCurrentTime() // rows were stored: ingest is not stalled
			if w.lot != nil {
				return w.parkRefused(s, seq, pe.err)
			}
			// Without a lot: commit the stored partitions, retry the rest alone.
			w.commit(hard, s.b.epoch, w.ledger.WrittenParts(seq, pe.stored))
			settings = w.settingsFor(s.token)
			err = pe.err
		}
		if err == nil {
			w.grace.stored()
			w.m.InsertDuration.Observe(time.Since(start).Seconds())
			if attempt > 0 {
				w.log.Info("insert succeeded after retries", "attempts", attempt+1, "rows", s.rows)
			}
			return nil
		}
		if hard.Err() != nil {
			return fmt.Errorf("insert abandoned at shutdown deadline (%d rows, not committed): %w", s.rows, hard.Err())
		}
		class := Classify(err)
		msg := "insert failed; keeping the rows and retrying"
		if class.Permanent() {
			left, ok := w.grace.allows(err, w.cfg.UnknownTableGrace, time.Now())
			if !ok {
				w.m.InsertFailures.WithLabelValues(string(class)).Inc()
				return &PermanentError{Class: class, Err: err}
			}
			msg = fmt.Sprintf("insert refused on a missing table (a migration may be creating or dropping a view); retrying for up to %v more", left.Round(time.Second))
		}
		w.m.InsertRetries.WithLabelValues(string(class)).Inc()
		if w.lot != nil {
			return w.parkRefused(s, seq, err)
		}
		d := w.cfg.Backoff.Delay(attempt, nil)
		w.warn.Log(slog.LevelWarn, msg, "class", class,
			"attempt", attempt+1, "rows", s.rows, "backoff", d, "err", err)
		if !sleep(hard, d) {
			return fmt.Errorf("insert abandoned at shutdown deadline (%d rows, not committed): %w", s.rows, hard.Err())
		}
	}
}

// parkRefused hands the rows left in s, which their shard refused (err), to
// the lot, which pauses their partitions, and returns errParked; take then
// commits the batch's other partitions. The refused rows are not retried in
// place: the healthy shards' partitions would wait behind them.
func (w *writer) parkRefused(s *slot, seq uint64, err error) error {
	rows := s.rows
	parts := w.lot.park(s, seq)
	w.warn.Log(slog.LevelWarn, "a shard refused its rows: they are parked and their partitions paused while the other partitions go on",
		"parked_partitions", parts, "parked_rows", rows, "class", Classify(err), "err", err)
	return errParked
}

// fencedAttempt makes one attempt if the batch's generation may still be
// written (always, for a source without generations): it drops the rows
// ClickHouse already holds, then inserts the rest. Both steps end early if
// the generation is abandoned meanwhile, which returns errAbandoned.
//
// Progress is read right before every attempt. Before the first attempt
// of the process and of each generation, inserts into the landing table
// that are still running on the server are waited for (settle.go). Before
// the first: a
// partition's former owner (a kafka.Reader source, which hands partitions
// over at once) or a crashed member may have stored some of these
// messages after the replay filter read progress. Before a retry: on a
// cluster a failed insert may have stored the rows of the shards that
// answered. Either way, sending them again would count them twice in the
// rollups (errors collapses the copy).
func (w *writer) fencedAttempt(hard context.Context, s *slot, settings map[string]any, attempt int) error {
	stop := hard
	if w.fence != nil {
		abandon, done, ok := w.fence.attempt(s.b.epoch)
		if !ok {
			return errAbandoned
		}
		defer done()
		stop = abandon
	}
	var epoch uint64
	if s.b != nil {
		epoch = s.b.epoch
	}
	if attempt == 0 && (!w.settled || epoch != w.settledEpoch) {
		// The first attempt of this process, or of a new generation: an
		// insert a former owner left running is waited for (settle.go).
		w.awaitEarlierInserts(hard, stop)
		w.settled, w.settledEpoch = true, epoch
	}
	if n := w.dropStored(hard, stop, s); n > 0 {
		w.m.Skipped.WithLabelValues("replayed").Add(float64(n))
		if attempt == 0 {
			w.log.Info("skipped messages stored meanwhile by another member", "messages", n, "left", s.rows)
		} else {
			w.log.Info("rows stored by the failed insert are not sent again", "rows", n, "left", s.rows)
		}
	}
	if stop != hard && stop.Err() != nil {
		return errAbandoned
	}
	if s.rows == 0 {
		return nil
	}
	err := w.insertOnce(hard, stop, s, settings)
	if err != nil && stop != hard && stop.Err() != nil {
		return errAbandoned // its outcome is unknown; the next owner's replay filter reads progress after it
	}
	return err
}

// dropStored removes from the slot the rows ClickHouse reports stored since
// the failed attempt, by each partition's progress (Config.Progress), and
// returns how many. On a cluster a failed insert may have stored the rows of
// the shards that answered, each shard's with its progress row in the same
// local insert; sending them again would count them twice in the rollups.
// A partition whose progress cannot be read (its shard is down), or whose
// progress the replay filter found stale (a recreated topic), keeps its
// rows; so does every row when the read fails.
func (w *writer) dropStored(hard, stop context.Context, s *slot) int {
	if w.cfg.Progress == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(hard, w.cfg.InsertTimeout)
	defer cancel()
	if stop != hard {
		defer context.AfterFunc(stop, cancel)()
	}
	stored := map[TopicPartition]int64{}
	for _, topic := range w.cfg.Topics {
		prog, err := w.cfg.Progress(ctx, w.conn, topic)
		if err != nil {
			if stop.Err() == nil { // else the generation was abandoned: nothing is sent
				w.warn.Log(slog.LevelWarn, "progress unreadable before an insert attempt; the batch is sent whole", "topic", topic, "err", err)
			}
			return 0
		}
		for part, off := range prog {
			k := TopicPartition{topic, part}
			if s.b != nil && s.b.staleProgress[k] {
				continue // a recreated topic's old progress: it vouches for nothing here
			}
			stored[k] = off
		}
	}
	dropped := 0
	for _, c := range s.cols[:s.used] {
		var keep []bool
		for i := 0; i < c.n; i++ {
			off, ok := stored[TopicPartition{c.topic[i], c.partition[i]}]
			if !ok || c.offset[i] > off {
				continue
			}
			if keep == nil {
				keep = make([]bool, c.n)
				for j := range keep {
					keep[j] = true
				}
			}
			keep[i] = false
			dropped++
		}
		if keep != nil {
			c.keepOnly(keep)
		}
	}
	s.rows -= dropped
	return dropped
}

// insertOnce makes one attempt, bounded by InsertTimeout and ended early
// by hard or stop.
func (w *writer) insertOnce(hard, stop context.Context, s *slot, settings map[string]any) error {
	if w.cfg.Shards != nil {
		return w.insertShards(hard, stop, s)
	}
	return w.insertTo(hard, stop, w.conn, w.insertSQL, s, settings)
}

// insertTo sends the slot's rows with one INSERT (sql) through conn, in
// blocks of InsertBlockRows.
func (w *writer) insertTo(hard, stop context.Context, conn driver.Conn, sql string, s *slot, settings map[string]any) error {
	ctx, cancel := context.WithTimeout(hard, w.cfg.InsertTimeout)
	defer cancel()
	if stop != hard {
		defer context.AfterFunc(stop, cancel)()
	}
	qid := insertQueryID()
	ctx = clickhouse.Context(ctx, clickhouse.WithQueryID(qid), clickhouse.WithSettings(clickhouse.Settings(settings)))
	if stop != hard {
		// An attempt its generation's end cancelled waits until the server
		// is done with it (settle.go).
		defer func() {
			if stop.Err() != nil {
				w.awaitServerEnd(hard, conn, qid)
			}
		}()
	}
	bt, err := conn.PrepareBatch(ctx, sql)
	if err != nil {
		return err
	}
	step := w.cfg.InsertBlockRows
	for _, c := range s.cols[:s.used] {
		for lo := 0; lo < c.n; {
			hi := c.blockEnd(lo, step)
			if err := c.appendTo(bt, lo, hi); err != nil {
				_ = bt.Abort()
				return err
			}
			if err := bt.Flush(); err != nil {
				_ = bt.Abort()
				return err
			}
			lo = hi
		}
	}
	return bt.Send()
}
