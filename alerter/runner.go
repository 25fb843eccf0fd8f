package alerter

import (
	"context"
	"log/slog"
	"time"
)

// Runner evaluates on a fixed interval and hands the verdicts to Metrics.
type Runner struct {
	Config   *Config
	Reader   *Reader
	Metrics  *Metrics
	Interval time.Duration // between evaluation starts
	Timeout  time.Duration // per evaluation; default Interval
	Clock    func() time.Time
	Log      *slog.Logger
	// Incidents, if set, records each evaluation's episodes (Recorder). A
	// failed write is logged and counted; it does not make the verdicts
	// stale.
	Incidents *Recorder
	// NewGroups, if set, is checked after each evaluation (alerter/groups.go).
	NewGroups *NewGroups

	prev *Verdicts // the latest successful evaluation, for the hysteresis
}

// Once runs one evaluation and records it. It returns the verdicts, or nil
// and the error when ClickHouse could not be read; the previous verdicts stay
// exported until they are stale. Once is not safe for concurrent use: each
// evaluation starts from the one before (overload hysteresis).
func (r *Runner) Once(ctx context.Context) (*Verdicts, error) {
	clock := r.Clock
	if clock == nil {
		clock = time.Now
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = r.Interval
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	in, err := r.Reader.Gather(ctx, r.Config, clock())
	var v *Verdicts
	if err == nil {
		v = Evaluate(r.Config, in, r.prev)
		r.prev = v
	}
	r.Metrics.Observe(v, time.Since(start))
	if v != nil && r.Incidents != nil {
		ierr := r.Incidents.Record(ctx, r.Config, v)
		r.Metrics.IncidentWrite(ierr)
		if ierr != nil {
			r.logger().Warn("incidents not recorded", "err", ierr)
		}
	}
	if r.NewGroups != nil {
		if gerr := r.NewGroups.Check(ctx, clock()); gerr != nil {
			r.logger().Warn("new error groups not read", "err", gerr)
		}
	}
	return v, err
}

// Run evaluates until ctx is done: once at start, then every Interval. A
// slow evaluation delays the next one instead of overlapping it.
func (r *Runner) Run(ctx context.Context) {
	log := r.logger()
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	failing := false
	for {
		start := time.Now()
		v, err := r.Once(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			// One line per outage, not one per interval.
			if !failing {
				log.Warn("evaluation failed; verdicts go stale", "err", err)
			}
			failing = true
		default:
			if failing {
				log.Info("evaluation recovered")
			}
			failing = false
			log.Debug("evaluated", "took", time.Since(start), "agents", len(v.Agents),
				"runaway", len(v.Callers), "retry_storms", len(v.RetryStorms))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *Runner) logger() *slog.Logger {
	if r.Log == nil {
		return slog.Default()
	}
	return r.Log
}
