package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/internal/chdial"
)

// connectClickHouse opens the pool the evaluations query. Opening does not
// dial: the alerter serves, and reports its data stale, while ClickHouse is
// unreachable. chdial does TLS and bounds every write by the evaluation
// timeout, as for ingest.
func connectClickHouse(o *options) (driver.Conn, error) {
	return clickhouse.Open(&clickhouse.Options{
		Addr:        o.chAddr,
		Protocol:    clickhouse.Native,
		Auth:        clickhouse.Auth{Database: "default", Username: o.chUser, Password: *o.chPass},
		DialContext: (&chdial.Dialer{Timeout: 5 * time.Second, WriteTimeout: o.timeout, TLS: o.chTLS}).DialContext,
		DialTimeout: 5 * time.Second,
		ReadTimeout: o.timeout,
	})
}

// newHandler serves /metrics from reg, /healthz (200 while the process
// runs) and /readyz (200 only while m's verdicts are fresh).
func newHandler(reg *prometheus.Registry, m *alerter.Metrics) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		fresh, last := m.Fresh()
		if !fresh {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "stale: last successful evaluation %v\n", last.Format(time.RFC3339))
			return
		}
		fmt.Fprintf(w, "ready: last successful evaluation %v\n", last.Format(time.RFC3339))
	})
	return mux
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
