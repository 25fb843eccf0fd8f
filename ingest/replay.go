package ingest

// The replay filter, the second stage, run by the decode goroutine on each
// batch before it is decoded.
//
// A crash, a rebalance or a rewound offset makes Kafka deliver again what
// ClickHouse may already hold. Per partition the filter keeps a floor (the
// highest offset stored, per ingest_progress read through Config.Progress,
// or taken earlier in this run) and lists in batch.todo only the messages
// above it; batch.maxOff gets each partition's highest offset, skipped
// ones included, for the ledger. Progress is read again when a partition
// is first seen, after a rebalance and when its offsets jump; a failed
// read is retried unless its error is permanent, which stops the pipeline.

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/segmentio/kafka-go"
)

// partState is what the writer knows of one partition.
type partState struct {
	known  bool  // progress read from ClickHouse since this partition was (re)seen
	last   int64 // offset of the last message seen
	floor  int64 // highest offset known to be in ClickHouse or in an earlier row of this run
	own    int64 // highest offset this process wrote (or queued in the batch in hand)
	warned bool  // the stored progress was found beyond the log's end
}

// filterReplays drops messages whose offset ClickHouse already holds. The
// progress table is read when a partition is first seen and whenever its
// offsets jump (a rebalance or a restart of the reader), at most once per
// batch.
func (p *Pipeline) filterReplays(hard context.Context, b *batch) error {
	// kafka-go has no assignment callback; its rebalance counter (reset by
	// each Stats call) tells that partitions may have moved, possibly to a
	// member that wrote rows and could not commit: read progress again.
	if r, ok := p.r.(interface{ Stats() kafka.ReaderStats }); ok {
		if n := r.Stats().Rebalances; n > 0 {
			p.m.Rebalances.Add(float64(n))
			for _, st := range p.parts {
				st.known = false
			}
		}
	}
	// A Group's new epoch: every batch of the earlier ones was stored or
	// dropped before it began (group.go), so what this process wrote or
	// queued vouches for nothing any more: a dropped batch must leave
	// neither its offsets as a floor nor its event ids in the dedup window,
	// or its messages, delivered again, would be skipped. ClickHouse's
	// progress alone decides.
	if b.epoch != p.epoch {
		p.m.Rebalances.Add(float64(b.epoch - p.epoch))
		p.epoch = b.epoch
		for k := range p.parts {
			p.parts[k] = &partState{last: -2, floor: -1, own: -1}
		}
		p.win.reset()
	}
	refreshed := false
	skipped := 0
	// Messages come in runs of one partition: look the partition up, and
	// record the run's highest offset, once per run.
	var (
		key    TopicPartition
		st     *partState
		runMax int64
	)
	endRun := func() {
		if st == nil {
			return
		}
		if cur, ok := b.maxOff[key]; !ok || runMax > cur {
			b.maxOff[key] = runMax
		}
		if st.warned {
			// The stored progress of a recreated topic says nothing of
			// these messages: the insert must not drop them by it either.
			if b.staleProgress == nil {
				b.staleProgress = map[TopicPartition]bool{}
			}
			b.staleProgress[key] = true
		}
	}
	for i := range b.msgs {
		m := &b.msgs[i]
		if st == nil || int32(m.Partition) != key.Partition || m.Topic != key.Topic {
			endRun()
			key = TopicPartition{m.Topic, int32(m.Partition)}
			st = p.part(key)
			runMax = m.Offset
		}
		if (!st.known || m.Offset != st.last+1) && !refreshed {
			if err := p.refreshProgress(hard); err != nil {
				return err
			}
			refreshed = true
		}
		st.known = true
		st.last = m.Offset
		runMax = max(runMax, m.Offset)
		if m.Offset <= st.floor && st.floor > st.own && m.HighWaterMark > 0 && st.floor >= m.HighWaterMark {
			// ClickHouse holds offsets this log never reached: the topic was
			// deleted and created again (or truncated). Skipping would drop
			// every new message up to the old offsets; store them instead.
			if !st.warned {
				p.log.Error("stored progress is beyond the end of the partition (topic recreated?); ignoring it for this partition",
					"topic", m.Topic, "partition", m.Partition, "stored", st.floor, "high_watermark", m.HighWaterMark)
				st.warned = true
			}
			st.floor = st.own
		}
		if m.Offset <= st.floor {
			skipped++
			continue
		}
		st.floor = m.Offset
		st.own = m.Offset
		b.todo = append(b.todo, i)
	}
	endRun()
	if skipped > 0 {
		p.m.Skipped.WithLabelValues("replayed").Add(float64(skipped))
		p.log.Info("skipped replayed messages already in ClickHouse", "messages", skipped)
	}
	return nil
}

func (p *Pipeline) part(k TopicPartition) *partState {
	st := p.parts[k]
	if st == nil {
		st = &partState{last: -2, floor: -1, own: -1}
		p.parts[k] = st
	}
	return st
}

// readProgress raises each partition's floor to what ClickHouse holds, for
// every topic.
func (p *Pipeline) readProgress(hard context.Context) error {
	ctx, cancel := context.WithTimeout(hard, p.cfg.InsertTimeout)
	defer cancel()
	for _, topic := range p.cfg.Topics {
		prog, err := p.cfg.Progress(ctx, p.conn, topic)
		if err != nil {
			return err
		}
		for part, off := range prog {
			st := p.part(TopicPartition{topic, part})
			if off > st.floor {
				st.floor = off
			}
		}
	}
	return nil
}

func (p *Pipeline) refreshProgress(hard context.Context) error {
	for attempt := 0; ; attempt++ {
		err := p.readProgress(hard)
		if err == nil {
			return nil
		}
		if hard.Err() != nil {
			return hard.Err()
		}
		class := Classify(err)
		if class.Permanent() {
			p.m.InsertFailures.WithLabelValues(string(class)).Inc()
			return &PermanentError{Class: class, Err: fmt.Errorf("reading ingest progress: %w", err)}
		}
		p.m.InsertRetries.WithLabelValues(string(class)).Inc()
		d := p.cfg.Backoff.Delay(attempt, nil)
		p.warn.Log(slog.LevelWarn, "reading ingest progress failed; retrying", "class", class, "attempt", attempt+1, "backoff", d, "err", err)
		if !sleep(hard, d) {
			return hard.Err()
		}
	}
}
