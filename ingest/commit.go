package ingest

// Commit, the writer's step after each insert and before the batch's ack.
//
// An offset moves only after ClickHouse accepted its rows, and only as far
// as the ledger allows: to the end of the longest run of written batches,
// so a later success never carries it past a batch that failed. commit
// sends the offsets that advanced to the consumer group in one call, one
// message per partition, bounded by CommitTimeout. A failed commit is
// counted and logged, not retried and not fatal: the rows are stored, the
// next commit covers them, and a replay before that is dropped by the
// replay filter.
//
// Two loops run beside the stages on timers of their own and never hold
// them up: the lag monitor (lag.go), which a commit also asks to poll, and
// retention (retain.go).

import (
	"context"
	"log/slog"

	"github.com/segmentio/kafka-go"
)

// commit moves the consumer group's offsets to the ledger's frontier: one
// call per batch with one offset per partition, through the batch's
// generation for a Group (which drops the partitions it no longer owns). A failed
// commit is only counted: ClickHouse holds the rows, the next commit covers
// them, and a replay before that is filtered by filterReplays.
func (w *writer) commit(hard context.Context, epoch uint64, adv map[TopicPartition]int64) {
	if len(adv) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(hard, w.cfg.CommitTimeout)
	defer cancel()
	var err error
	if w.fence != nil {
		err = w.fence.commitEpoch(ctx, epoch, adv)
	} else {
		msgs := make([]kafka.Message, 0, len(adv))
		for k, off := range adv {
			msgs = append(msgs, kafka.Message{Topic: k.Topic, Partition: int(k.Partition), Offset: off})
		}
		err = w.src.CommitMessages(ctx, msgs...)
	}
	if err != nil {
		w.m.CommitErrors.Inc()
		w.warn.Log(slog.LevelWarn, "kafka commit failed; the rows are in ClickHouse and the next commit covers them", "err", err)
		return
	}
	if w.lag != nil {
		w.lag.afterCommit() // the lag gauges show this commit now, not at the next tick
	}
}
