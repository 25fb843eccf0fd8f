package api

import (
	"container/list"
	"math"
	"sync"
	"time"
)

// limiter keeps one token bucket per client key, at most max of them: when
// a new client comes and the map is full, the least recently seen client's
// bucket is dropped (it comes back full, which only favours that client).
// A client that spreads over more than max keys can reset its own buckets
// that way; the bound is there for memory, not for such a client.
type limiter struct {
	rate  float64 // tokens per second
	burst float64
	max   int

	mu      sync.Mutex
	buckets map[string]*list.Element // of *bucket
	lru     list.List                // front: most recently seen
}

type bucket struct {
	key    string
	tokens float64
	last   time.Time
}

func newLimiter(rps float64, burst, max int) *limiter {
	if rps <= 0 {
		return nil
	}
	return &limiter{rate: rps, burst: float64(burst), max: max, buckets: make(map[string]*list.Element)}
}

// allow takes one token from key's bucket. When none is left it returns
// false and how long until one is.
func (l *limiter) allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b *bucket
	if e, ok := l.buckets[key]; ok {
		l.lru.MoveToFront(e)
		b = e.Value.(*bucket)
		if dt := now.Sub(b.last).Seconds(); dt > 0 {
			b.tokens = math.Min(l.burst, b.tokens+dt*l.rate)
		}
		b.last = now
	} else {
		for len(l.buckets) >= l.max {
			old := l.lru.Back()
			delete(l.buckets, old.Value.(*bucket).key)
			l.lru.Remove(old)
		}
		b = &bucket{key: key, tokens: l.burst, last: now}
		l.buckets[key] = l.lru.PushFront(b)
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// clients returns the number of buckets kept.
func (l *limiter) clients() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// retryAfter is the Retry-After value for a wait: whole seconds, rounded
// up, at least 1 (0 would invite an immediate retry).
func retryAfter(wait time.Duration) int {
	s := int(math.Ceil(wait.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}
