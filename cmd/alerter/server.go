package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/internal/cmdkit"
)

// connectClickHouse opens the pool the evaluations query. Opening does not
// dial: the alerter serves, and reports its data stale, while ClickHouse is
// unreachable. Each answer and each write is bounded by the evaluation
// timeout (cmdkit.ClickHouse.Open).
func connectClickHouse(o *options) (driver.Conn, error) {
	// Log in to errtrail's own database (a user allowed that database only
	// is refused a session in "default"); every query names it anyway.
	return o.ch.Open(cmdkit.Pool{Timeout: o.timeout, OwnDatabase: true})
}

// newHandler serves /metrics from reg, /healthz (200 while the process
// runs) and /readyz (200 only while m's verdicts are fresh).
func newHandler(reg *prometheus.Registry, m *alerter.Metrics) http.Handler {
	return cmdkit.Ops(reg, func() (string, error) {
		fresh, last := m.Fresh()
		if !fresh {
			return "", fmt.Errorf("stale: last successful evaluation %v", last.Format(time.RFC3339))
		}
		return "last successful evaluation " + last.Format(time.RFC3339), nil
	})
}

// serve evaluates on o.interval and serves HTTP until ctx ends (nil) or
// the HTTP server fails (its error), then stops both within 10s.
func serve(ctx context.Context, o *options, log *slog.Logger) error {
	begin := time.Now()
	conn, err := connectClickHouse(o)
	if err != nil {
		return fmt.Errorf("clickhouse: %w", err)
	}
	defer conn.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := alerter.NewMetrics(reg, o.staleAfter, nil)
	m.SetLinks(o.links)
	runner := &alerter.Runner{
		Config:   &o.cfg,
		Reader:   &alerter.Reader{Conn: conn, Database: o.chDB, Observe: m.QueryDone},
		Metrics:  m,
		Interval: o.interval,
		Timeout:  o.timeout,
		Log:      log,
	}
	runner.NewGroups = &alerter.NewGroups{Conn: conn, Database: o.chDB}
	reg.MustRegister(runner.NewGroups)
	if o.incidents {
		runner.Incidents = &alerter.Recorder{Conn: conn, Database: o.chDB, Writer: o.writer, Interval: o.interval}
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: newHandler(reg, m), ReadHeaderTimeout: 5 * time.Second}
	log.Info("listening", "addr", ln.Addr().String(), "clickhouse", o.chAddr, "database", o.chDB,
		"user", o.chUser, "tls", o.chTLS != nil, "interval", o.interval, "incidents", o.incidents,
		"bucket", o.cfg.Bucket, "window", o.cfg.Window, "baseline", o.cfg.Baseline, "took", time.Since(begin))

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	done := make(chan struct{})
	go func() { runner.Run(ctx); close(done) }()
	select {
	case <-ctx.Done():
	case err = <-served:
		stop()
	}

	log.Info("stopping")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if e := srv.Shutdown(shutdownCtx); e != nil && !errors.Is(e, http.ErrServerClosed) {
		log.Warn("http shutdown", "err", e)
	}
	select {
	case <-done:
	case <-shutdownCtx.Done():
		log.Warn("evaluation did not stop within 10s")
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	log.Info("stopped")
	return err
}
