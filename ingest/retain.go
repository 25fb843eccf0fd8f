package ingest

// Retention, a loop beside the stages, for servers without TTL.
//
// retainLoop calls Config.Retain when Run starts and then every
// RetainEvery, each call bounded by ten minutes, until fetching stops. A
// failure is counted (retention_runs_total{result="error"}) and logged;
// the next tick tries again. It shares only the ClickHouse connection with
// the stages.

import (
	"context"
	"log/slog"
	"time"
)

func (p *Pipeline) retainLoop(ctx context.Context) {
	t := time.NewTicker(p.cfg.RetainEvery)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		err := p.cfg.Retain(rctx, p.conn)
		cancel()
		if err != nil && ctx.Err() == nil {
			p.m.Retention.WithLabelValues("error").Inc()
			p.warn.Log(slog.LevelWarn, "retention failed", "err", err)
		} else if err == nil {
			p.m.Retention.WithLabelValues("ok").Inc()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
