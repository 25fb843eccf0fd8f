package ingest

// Fetch and batching, the first stage.
//
// batchLoop is the only goroutine that fetches from the kafka.Reader. It
// fills a batch taken from the pool of free batches and hands it to the
// decode stage when the batch holds Limits.Rows messages or Limits.Bytes
// bytes, or when its first message has waited Limits.Wait, whichever comes
// first, and at once when the source revokes its partitions (ErrRevoked):
// a batch never mixes two generations, and each batch carries the epoch
// it was fetched in. Batches return to the pool only after their insert succeeded, so
// while ClickHouse refuses rows the pool runs dry and fetching stops:
// memory is bounded by the pool, not by what Kafka holds. The stage counts
// consumed messages and bytes and commits nothing; a message fetched but
// never handed on is delivered again by Kafka.

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"
)

// batchLoop fetches messages and cuts them into batches, which it sends to
// out. A batch is cut at its row or byte limit, or when its oldest message
// waited Limits.Wait: the fetch of the next message is bounded by that
// deadline. batchLoop blocks (and so stops fetching) while the writer has
// no free batch. When fetchCtx ends it sends the batch in hand and closes
// out; a message fetched but not sent is not committed and will be fetched
// again.
func (p *Pipeline) batchLoop(fetchCtx, hard context.Context, out chan<- *batch, free chan *batch) {
	defer close(out)
	l := p.cfg.Limits
	var (
		cur            *batch
		ctx            = fetchCtx // bounded by cur's deadline while cur has messages
		cancel         = context.CancelFunc(func() {})
		counted, bytes int    // consumed messages and value bytes not yet in the metrics
		epoch          uint64 // ErrRevoked seen so far
	)
	account := func() {
		p.m.Consumed.Add(float64(counted))
		p.m.ConsumedBytes.Add(float64(bytes))
		counted, bytes = 0, 0
	}
	flush := func() bool {
		cancel()
		ctx, cancel = fetchCtx, func() {}
		account()
		if cur == nil || len(cur.msgs) == 0 {
			return true
		}
		select {
		case out <- cur:
			cur = nil
			return true
		case <-hard.Done():
			return false
		}
	}
	defer func() { cancel() }()
	for {
		m, err := p.r.FetchMessage(ctx)
		if err != nil {
			switch {
			case fetchCtx.Err() != nil || errors.Is(err, io.EOF):
				flush()
				return
			case ctx.Err() != nil: // cur waited Limits.Wait
				if !flush() {
					return
				}
				continue
			case errors.Is(err, ErrRevoked): // the partitions move: hand the batch on now
				if !flush() {
					return
				}
				epoch++
				continue
			}
			p.m.FetchErrors.Inc()
			p.warn.Log(slog.LevelWarn, "kafka fetch failed", "err", err)
			select {
			case <-fetchCtx.Done():
				flush()
				return
			case <-time.After(time.Second):
			}
			continue
		}
		counted++
		bytes += len(m.Value)
		if cur == nil {
			select {
			case cur = <-free:
			case <-hard.Done():
				return
			}
			cur.reset()
			cur.epoch = epoch
		}
		var now time.Time // only the first message's time is kept
		if len(cur.msgs) == 0 {
			now = time.Now()
			due, stop := context.WithDeadline(fetchCtx, now.Add(l.Wait))
			ctx, cancel = due, stop
		}
		if cur.add(m, l, now) && !flush() {
			return
		}
		if counted >= 1024 {
			account()
		}
	}
}
