package ingest

// The fetcher, the first stage: fetch and batching.
//
// The fetcher's goroutine is the only one that fetches from the Consumer. It
// fills a batch taken from its pool and hands it to the decoder when the
// batch holds Limits.Rows messages or Limits.Bytes bytes, or when its first
// message has waited Limits.Wait, whichever comes first, and at once when
// the source revokes its partitions (ErrRevoked): a batch never mixes two
// generations, and each batch carries the epoch it was fetched in. A batch
// returns to the pool only when it is acknowledged (batch.ack), after the
// writer stored it, so while ClickHouse refuses rows the pool runs dry and
// fetching stops: memory is bounded by the pool, not by what Kafka holds.
// The stage counts consumed messages and bytes and commits nothing; a
// message fetched but never handed on is delivered again by Kafka.

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"
)

// fetcher is the fetch stage.
type fetcher struct {
	src     Consumer
	limits  Limits
	batches int // batches in the pool: filling, queued, decoding, writing
	m       *Metrics
	warn    *LogLimiter // fetch errors
}

// newFetcher returns the fetch stage reading src; cfg has its defaults.
func newFetcher(cfg Config, src Consumer, warn *LogLimiter) *fetcher {
	return &fetcher{src: src, limits: cfg.Limits, batches: 4, m: cfg.Metrics, warn: warn}
}

// run fetches messages and cuts them into batches of its pool, which it
// sends to out. A batch is cut at its row or byte limit, or when its
// oldest message waited Limits.Wait: the fetch of the next message is
// bounded by that deadline. run blocks (and so stops fetching) while no
// batch of its pool is acknowledged. When fetchCtx ends it sends the batch
// in hand and closes out; a message fetched but not sent is not committed
// and will be fetched again.
func (f *fetcher) run(fetchCtx, hard context.Context, out chan<- *batch) {
	defer close(out)
	free := newBatchPool(f.batches)
	l := f.limits
	var (
		cur            *batch
		ctx            = fetchCtx // bounded by cur's deadline while cur has messages
		cancel         = context.CancelFunc(func() {})
		counted, bytes int    // consumed messages and value bytes not yet in the metrics
		epoch          uint64 // ErrRevoked seen so far
	)
	account := func() {
		f.m.Consumed.Add(float64(counted))
		f.m.ConsumedBytes.Add(float64(bytes))
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
		m, err := f.src.FetchMessage(ctx)
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
			f.m.FetchErrors.Inc()
			f.warn.Log(slog.LevelWarn, "kafka fetch failed", "err", err)
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
