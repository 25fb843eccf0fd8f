package ingest

// Insert, the fourth stage: one goroutine, one INSERT in flight.
//
// insertLoop takes decoded slots in the order they were fetched, opens each
// batch in the ledger, writes its rows with one INSERT into Config.Table
// (sent in blocks of InsertBlockRows) and only then has its offsets
// committed (commit.go) and its batch and slot returned to their pools.
// Transient errors are retried forever with Config.Backoff, each attempt
// bounded by InsertTimeout and built afresh from the column buffers, which
// stay untouched; meanwhile no batch returns to the fetch stage, so
// fetching stops. The batch's token, the same on every attempt, lets the
// server drop an insert it already holds (Config.InsertSettings). A
// permanent error, or the shutdown deadline, ends the stage without
// committing the batch in hand.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// insertLoop writes decoded slots in order, one insert at a time, and
// commits each after its insert succeeded. While rows are parked
// (park.go) it retries them between slots, after the backoff.
func (p *Pipeline) insertLoop(hard context.Context, in <-chan *slot, freeSlots chan<- *slot, freeBatches chan<- *batch) error {
	for {
		var retry <-chan time.Time
		stop := func() {}
		if len(p.parked) > 0 {
			// The retry is due at parkNext however many slots arrive meanwhile.
			t := time.NewTimer(time.Until(p.parkNext))
			retry, stop = t.C, func() { t.Stop() }
		}
		select {
		case s, ok := <-in:
			stop()
			if !ok {
				if len(p.parked) > 0 {
					p.log.Warn("stopping with parked rows; they are not committed and will be fetched again", "slots", len(p.parked))
				}
				return nil
			}
			if err := p.take(hard, s, freeSlots, freeBatches); err != nil {
				return err
			}
		case <-retry:
			if err := p.retryParked(hard); err != nil {
				return err
			}
		}
	}
}

// take inserts one decoded slot and commits it, then recycles its batch,
// and its slot unless rows of it were parked (a fresh slot takes its place
// in the pool).
func (p *Pipeline) take(hard context.Context, s *slot, freeSlots chan<- *slot, freeBatches chan<- *batch) error {
	b := s.b
	seq := p.ledger.Open(b.maxOff)
	if len(p.parked) > 0 {
		p.purgeParked(hard, b.epoch)
	}
	ins := s
	if len(p.held) > 0 && s.rows > 0 {
		ins = p.parkHeld(s, seq) // the rows of paused partitions wait behind their parked rows
	}
	var err error
	if ins.rows > 0 {
		err = p.insert(hard, ins, seq)
	} else if p.fence != nil {
		if _, done, ok := p.fence.attempt(b.epoch); ok {
			done()
		} else {
			err = errAbandoned
		}
	}
	switch {
	case errors.Is(err, errAbandoned):
		p.m.Abandoned.Add(float64(len(b.msgs)))
		p.log.Warn("batch dropped uncommitted: its partitions moved to another member before it was stored, and that member stores it",
			"messages", len(b.msgs), "rows", s.rows)
		p.commit(hard, b.epoch, p.ledger.Drop(seq))
	case errors.Is(err, errParked): // what was stored is committed; the rest waits in p.parked
	case err != nil:
		return err
	default:
		if ins.rows > 0 {
			p.m.RowsInserted.Add(float64(ins.rows))
			p.m.BatchRows.Observe(float64(ins.rows))
			p.m.BatchBytes.Observe(float64(b.bytes))
			p.m.LastInsert.SetToCurrentTime()
		}
		if s.pinned { // its held rows are parked: the rest is written
			p.commit(hard, b.epoch, p.ledger.WrittenParts(seq, partsExcept(b.maxOff, p.parkedOf(seq))))
		} else {
			p.commit(hard, b.epoch, p.ledger.Written(seq))
		}
	}
	b.reset()
	freeBatches <- b
	if s.pinned || ins.pinned {
		freeSlots <- p.newSlot()
	} else {
		s.b = nil
		freeSlots <- s
	}
	return nil
}

// insert writes the worker buffers with one INSERT, retrying transient
// errors forever (a clickhouse-go batch cannot be re-sent, so each attempt
// builds a new one from the buffers, which stay untouched).
func (p *Pipeline) insert(hard context.Context, s *slot, seq uint64) error {
	settings := p.settingsFor(s.token)
	for attempt := 0; ; attempt++ {
		start := time.Now()
		err := p.fencedAttempt(hard, s, settings, attempt)
		if errors.Is(err, errAbandoned) {
			return err
		}
		var pe *partialError
		if errors.As(err, &pe) {
			// Some shards stored their rows (now gone from s): commit those
			// partitions, park the rest, or retry the rest alone.
			if err := p.partlyStored(hard, s, seq, pe); err != nil {
				return err // errParked
			}
			settings = p.settingsFor(s.token)
			err = pe.err
		}
		if err == nil {
			p.m.InsertDuration.Observe(time.Since(start).Seconds())
			if attempt > 0 {
				p.log.Info("insert succeeded after retries", "attempts", attempt+1, "rows", s.rows)
			}
			return nil
		}
		if hard.Err() != nil {
			return fmt.Errorf("insert abandoned at shutdown deadline (%d rows, not committed): %w", s.rows, hard.Err())
		}
		class := Classify(err)
		if class.Permanent() {
			p.m.InsertFailures.WithLabelValues(string(class)).Inc()
			return &PermanentError{Class: class, Err: err}
		}
		p.m.InsertRetries.WithLabelValues(string(class)).Inc()
		if p.canPark() {
			// On a cluster the refused rows wait parked, their partitions
			// paused, so that the other shards' partitions flow past them.
			return p.parkFailed(hard, s, seq, err)
		}
		d := p.cfg.Backoff.Delay(attempt, nil)
		p.warn.Log(slog.LevelWarn, "insert failed; keeping the rows and retrying", "class", class,
			"attempt", attempt+1, "rows", s.rows, "backoff", d, "err", err)
		if !sleep(hard, d) {
			return fmt.Errorf("insert abandoned at shutdown deadline (%d rows, not committed): %w", s.rows, hard.Err())
		}
	}
}

// fencedAttempt makes one attempt if the batch's generation may still be
// written (always, for a source without generations): it drops the rows
// ClickHouse already holds, then inserts the rest. Both steps end early if
// the generation is abandoned meanwhile, which returns errAbandoned.
//
// Progress is read right before every attempt. Before the first: a
// partition's former owner (a kafka.Reader source, which hands partitions
// over at once) or a crashed member may have stored some of these
// messages after the replay filter read progress. Before a retry: on a
// cluster a failed insert may have stored the rows of the shards that
// answered. Either way, sending them again would count them twice in the
// rollups (errors collapses the copy).
func (p *Pipeline) fencedAttempt(hard context.Context, s *slot, settings map[string]any, attempt int) error {
	stop := hard
	if p.fence != nil {
		abandon, done, ok := p.fence.attempt(s.b.epoch)
		if !ok {
			return errAbandoned
		}
		defer done()
		stop = abandon
	}
	if n := p.dropStored(hard, stop, s); n > 0 {
		p.m.Skipped.WithLabelValues("replayed").Add(float64(n))
		if attempt == 0 {
			p.log.Info("skipped messages stored meanwhile by another member", "messages", n, "left", s.rows)
		} else {
			p.log.Info("rows stored by the failed insert are not sent again", "rows", n, "left", s.rows)
		}
	}
	if stop != hard && stop.Err() != nil {
		return errAbandoned
	}
	if s.rows == 0 {
		return nil
	}
	err := p.insertOnce(hard, stop, s, settings)
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
func (p *Pipeline) dropStored(hard, stop context.Context, s *slot) int {
	if p.cfg.Progress == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(hard, p.cfg.InsertTimeout)
	defer cancel()
	if stop != hard {
		defer context.AfterFunc(stop, cancel)()
	}
	stored := map[TopicPartition]int64{}
	for _, topic := range p.cfg.Topics {
		prog, err := p.cfg.Progress(ctx, p.conn, topic)
		if err != nil {
			if stop.Err() == nil { // else the generation was abandoned: nothing is sent
				p.warn.Log(slog.LevelWarn, "progress unreadable before an insert attempt; the batch is sent whole", "topic", topic, "err", err)
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
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
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
func (p *Pipeline) insertOnce(hard, stop context.Context, s *slot, settings map[string]any) error {
	if p.cfg.Shards != nil {
		return p.insertShards(hard, stop, s)
	}
	return p.insertTo(hard, stop, p.conn, p.insertSQL, s, settings)
}

// insertTo sends the slot's rows with one INSERT (sql) through conn, in
// blocks of InsertBlockRows.
func (p *Pipeline) insertTo(hard, stop context.Context, conn driver.Conn, sql string, s *slot, settings map[string]any) error {
	ctx, cancel := context.WithTimeout(hard, p.cfg.InsertTimeout)
	defer cancel()
	if stop != hard {
		defer context.AfterFunc(stop, cancel)()
	}
	if settings != nil {
		ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings(settings)))
	}
	bt, err := conn.PrepareBatch(ctx, sql)
	if err != nil {
		return err
	}
	step := p.cfg.InsertBlockRows
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
		for lo := 0; lo < c.n; lo += step {
			if err := c.appendTo(bt, lo, min(lo+step, c.n)); err != nil {
				_ = bt.Abort()
				return err
			}
			if err := bt.Flush(); err != nil {
				_ = bt.Abort()
				return err
			}
		}
	}
	return bt.Send()
}

// token names the rows of a batch: per topic and partition, in order, the
// first and last offset written. It is the same on every retry of the batch
// and differs between batches.
func (p *Pipeline) token(b *batch) string { return batchToken(b) }

func batchToken(b *batch) string {
	type span struct{ lo, hi int64 }
	spans := map[TopicPartition]span{}
	// Messages come in runs of one partition: merge each run into the map
	// once.
	var (
		k   TopicPartition
		run span
		in  bool
	)
	endRun := func() {
		if !in {
			return
		}
		if s, ok := spans[k]; ok {
			run.lo, run.hi = min(run.lo, s.lo), max(run.hi, s.hi)
		}
		spans[k] = run
	}
	for _, i := range b.todo {
		m := &b.msgs[i]
		if !in || int32(m.Partition) != k.Partition || m.Topic != k.Topic {
			endRun()
			k, run, in = TopicPartition{m.Topic, int32(m.Partition)}, span{m.Offset, m.Offset}, true
		}
		run.lo, run.hi = min(run.lo, m.Offset), max(run.hi, m.Offset)
	}
	endRun()
	keys := slices.SortedFunc(maps.Keys(spans), func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	var sb strings.Builder
	topic := ""
	for _, k := range keys {
		if k.Topic != topic || sb.Len() == 0 {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(k.Topic)
			topic = k.Topic
		}
		fmt.Fprintf(&sb, " %d:%d-%d", k.Partition, spans[k].lo, spans[k].hi)
	}
	return sb.String()
}
