package ingest

// The replay filter, the decoder's first step on each batch, before it is
// decoded.
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
)

// partState is what the replay filter knows of one partition.
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
func (d *decoder) filterReplays(hard context.Context, b *batch) error {
	// A kafka.Reader's partitions may have moved, possibly to a member
	// that wrote rows and could not commit: read progress again.
	if d.rebalances != nil {
		if n := d.rebalances(); n > 0 {
			d.m.Rebalances.Add(float64(n))
			for _, st := range d.parts {
				st.known = false
			}
		}
	}
	// A Group's new epoch: every batch of the earlier ones was stored or
	// dropped before it began (group.go), so what this process wrote or
	// queued vouches for nothing any more: a dropped batch must leave
	// neither its offsets as a floor nor its event ids in the dedup window,
	// or its messages, delivered again, would be skipped. ClickHouse's
	// progress alone decides. (The Group counted the rebalance as its
	// generation ended: a member may leave before a batch of the next
	// epoch reaches this point.)
	if b.epoch != d.epoch {
		d.epoch = b.epoch
		for k := range d.parts {
			d.parts[k] = &partState{last: -2, floor: -1, own: -1}
		}
		d.win.reset()
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
			st = d.part(key)
			runMax = m.Offset
		}
		if (!st.known || m.Offset != st.last+1) && !refreshed {
			if err := d.refreshProgress(hard); err != nil {
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
				d.log.Error("stored progress is beyond the end of the partition (topic recreated?); ignoring it for this partition",
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
		d.m.Skipped.WithLabelValues("replayed").Add(float64(skipped))
		d.log.Info("skipped replayed messages already in ClickHouse", "messages", skipped)
	}
	return nil
}

func (d *decoder) part(k TopicPartition) *partState {
	st := d.parts[k]
	if st == nil {
		st = &partState{last: -2, floor: -1, own: -1}
		d.parts[k] = st
	}
	return st
}

// readProgress raises each partition's floor to what ClickHouse holds, for
// every topic.
func (d *decoder) readProgress(hard context.Context) error {
	ctx, cancel := context.WithTimeout(hard, d.cfg.InsertTimeout)
	defer cancel()
	for _, topic := range d.cfg.Topics {
		prog, err := d.cfg.Progress(ctx, d.conn, topic)
		if err != nil {
			return err
		}
		for part, off := range prog {
			st := d.part(TopicPartition{topic, part})
			if off > st.floor {
				st.floor = off
			}
		}
	}
	return nil
}

func (d *decoder) refreshProgress(hard context.Context) error {
	for attempt := 0; ; attempt++ {
		err := d.readProgress(hard)
		if err == nil {
			return nil
		}
		if hard.Err() != nil {
			return hard.Err()
		}
		class := Classify(err)
		if class.Permanent() {
			d.m.InsertFailures.WithLabelValues(string(class)).Inc()
			return &PermanentError{Class: class, Err: fmt.Errorf("reading ingest progress: %w", err)}
		}
		d.m.InsertRetries.WithLabelValues(string(class)).Inc()
		delay := d.cfg.Backoff.Delay(attempt, nil)
		d.warn.Log(slog.LevelWarn, "reading ingest progress failed; retrying", "class", class, "attempt", attempt+1, "backoff", delay, "err", err)
		if !sleep(hard, delay) {
			return hard.Err()
		}
	}
}
