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
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// insertLoop writes decoded slots in order, one insert at a time, and
// commits each after its insert succeeded.
func (p *Pipeline) insertLoop(hard context.Context, in <-chan *slot, freeSlots chan<- *slot, freeBatches chan<- *batch) error {
	for s := range in {
		b := s.b
		seq := p.ledger.Open(b.maxOff)
		if s.rows > 0 {
			if err := p.insert(hard, s); err != nil {
				return err
			}
			p.m.RowsInserted.Add(float64(s.rows))
			p.m.BatchRows.Observe(float64(s.rows))
			p.m.BatchBytes.Observe(float64(b.bytes))
			p.m.LastInsert.SetToCurrentTime()
		}
		p.commit(hard, p.ledger.Written(seq))
		b.reset()
		s.b = nil
		freeBatches <- b
		freeSlots <- s
	}
	return nil
}

// insert writes the worker buffers with one INSERT, retrying transient
// errors forever (a clickhouse-go batch cannot be re-sent, so each attempt
// builds a new one from the buffers, which stay untouched).
func (p *Pipeline) insert(hard context.Context, s *slot) error {
	// Read progress once more right before writing. A rebalance moves
	// partitions while batches are in flight: the new owner may write a
	// partition's messages from its last commit while the old owner still
	// holds a batch of them, and whichever writes second would store them
	// again (errors collapses the copy, the rollups would count it twice).
	// The replay filter read progress too early to know; now the other's
	// write has most likely landed. One small read per batch.
	{
		if n := p.dropStored(hard, s); n > 0 {
			p.m.Skipped.WithLabelValues("replayed").Add(float64(n))
			p.log.Info("skipped messages another member stored meanwhile", "messages", n, "left", s.rows)
			if s.rows == 0 {
				return nil
			}
		}
	}
	rows := s.rows
	var settings map[string]any
	if p.cfg.InsertSettings != nil {
		settings = p.cfg.InsertSettings(s.token)
	}
	for attempt := 0; ; attempt++ {
		start := time.Now()
		err := p.insertOnce(hard, s, settings)
		if err == nil {
			p.m.InsertDuration.Observe(time.Since(start).Seconds())
			if attempt > 0 {
				p.log.Info("insert succeeded after retries", "attempts", attempt+1, "rows", rows)
			}
			return nil
		}
		if hard.Err() != nil {
			return fmt.Errorf("insert abandoned at shutdown deadline (%d rows, not committed): %w", rows, hard.Err())
		}
		class := Classify(err)
		if class.Permanent() {
			p.m.InsertFailures.WithLabelValues(string(class)).Inc()
			return &PermanentError{Class: class, Err: err}
		}
		p.m.InsertRetries.WithLabelValues(string(class)).Inc()
		d := p.cfg.Backoff.Delay(attempt, nil)
		p.warn.Log(slog.LevelWarn, "insert failed; keeping the rows and retrying", "class", class,
			"attempt", attempt+1, "rows", rows, "backoff", d, "err", err)
		if !sleep(hard, d) {
			return fmt.Errorf("insert abandoned at shutdown deadline (%d rows, not committed): %w", rows, hard.Err())
		}
		if n := p.dropStored(hard, s); n > 0 {
			p.m.Skipped.WithLabelValues("replayed").Add(float64(n))
			p.log.Info("rows stored by the failed insert are not sent again", "rows", n, "left", s.rows)
			if s.rows == 0 {
				return nil
			}
		}
	}
}

// dropStored removes from the slot the rows ClickHouse reports stored since
// the failed attempt, by each partition's progress (Config.Progress), and
// returns how many. On a cluster a failed insert may have stored the rows of
// the shards that answered, each shard's with its progress row in the same
// local insert; sending them again would count them twice in the rollups.
// A partition whose progress cannot be read (its shard is down), or whose
// progress the replay filter found stale (a recreated topic), keeps its
// rows; so does every row when the read fails.
func (p *Pipeline) dropStored(hard context.Context, s *slot) int {
	if p.cfg.Progress == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(hard, p.cfg.InsertTimeout)
	defer cancel()
	stored := map[TopicPartition]int64{}
	for _, topic := range p.cfg.Topics {
		prog, err := p.cfg.Progress(ctx, p.conn, topic)
		if err != nil {
			p.warn.Log(slog.LevelWarn, "progress unreadable before a retry; the batch is sent whole", "topic", topic, "err", err)
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

func (p *Pipeline) insertOnce(hard context.Context, s *slot, settings map[string]any) error {
	ctx, cancel := context.WithTimeout(hard, p.cfg.InsertTimeout)
	defer cancel()
	if settings != nil {
		ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings(settings)))
	}
	bt, err := p.conn.PrepareBatch(ctx, p.insertSQL)
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
func (p *Pipeline) token(b *batch) string {
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
