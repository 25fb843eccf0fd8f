package ingest

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// LogLimiter lets through at most burst log lines per interval and then
// summarises how many it dropped. Bad input can arrive at 100k msgs/s; the
// counters and dead_letter hold every case, the log only samples them.
type LogLimiter struct {
	log      *slog.Logger
	interval time.Duration
	burst    int

	mu         sync.Mutex
	start      time.Time
	n          int
	suppressed int
}

// NewLogLimiter returns a LogLimiter writing at most burst lines per
// interval to l.
func NewLogLimiter(l *slog.Logger, burst int, interval time.Duration) *LogLimiter {
	return &LogLimiter{log: l, burst: burst, interval: interval}
}

// Log writes the line unless the budget of this interval is spent.
func (r *LogLimiter) Log(level slog.Level, msg string, args ...any) {
	now := time.Now()
	r.mu.Lock()
	if now.Sub(r.start) >= r.interval {
		if r.suppressed > 0 {
			r.log.Log(context.Background(), level, "log lines suppressed by rate limit",
				"suppressed", r.suppressed, "interval", r.interval)
		}
		r.start, r.n, r.suppressed = now, 0, 0
	}
	if r.n >= r.burst {
		r.suppressed++
		r.mu.Unlock()
		return
	}
	r.n++
	r.mu.Unlock()
	r.log.Log(context.Background(), level, msg, args...)
}
