package ingest

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is a capped exponential backoff with jitter: attempt n (from 0)
// waits a random duration in [d/2, d], d = min(Max, Base·2ⁿ). The jitter
// keeps several ingesters from hammering a recovering ClickHouse in step.
type Backoff struct {
	Base time.Duration // first delay; default 100ms
	Max  time.Duration // cap; default 30s
}

// Delay returns the wait before retry number attempt (0 = first retry).
// rnd returns a float in [0,1); nil uses math/rand.
func (b Backoff) Delay(attempt int, rnd func() float64) time.Duration {
	base, max := b.Base, b.Max
	if base <= 0 {
		base = 100 * time.Millisecond
	}
	if max <= 0 {
		max = 30 * time.Second
	}
	if max < base {
		max = base
	}
	d := base
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	half := d / 2
	return half + time.Duration(rnd()*float64(d-half))
}

// sleep waits d and reports whether it did; false means ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
