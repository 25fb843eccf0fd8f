// Command alerter evaluates errtrail's verdicts (agent overloaded, runaway
// caller, limit too low, retry storm, gateway mangling, untyped errors) from
// ClickHouse on a fixed interval and exports them as Prometheus metrics for
// the rules in alerts/. See docs/alerting.md.
//
// Every flag can also be set from the environment: --foo.bar-baz reads
// ERRTRAIL_ALERTER_FOO_BAR_BAZ when the flag is not given
// (--clickhouse.addr also reads ERRTRAIL_CLICKHOUSE_ADDR).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/errtrail/errtrail/alerter"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "alerter:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("alerter", flag.ContinueOnError)
	listen := fs.String("http.listen-address", "127.0.0.1:19101", "address for /metrics, /healthz and /readyz")
	chAddr := fs.String("clickhouse.addr", "127.0.0.1:19000", "ClickHouse native-protocol address(es), comma-separated")
	chDB := fs.String("clickhouse.database", "errtrail", "ClickHouse database of the errtrail tables")
	chUser := fs.String("clickhouse.user", "default", "ClickHouse user (password from ERRTRAIL_ALERTER_CLICKHOUSE_PASSWORD)")
	interval := fs.Duration("evaluation.interval", 15*time.Second, "time between evaluations")
	timeout := fs.Duration("evaluation.timeout", 10*time.Second, "deadline of one evaluation's queries")
	staleAfter := fs.Duration("stale-after", 60*time.Second, "withhold verdict series when the latest successful evaluation is older than this")
	logLevel := fs.String("log.level", "info", "debug, info, warn or error")
	cfg := alerter.DefaultConfig()
	cfg.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := envFallback(fs); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := alerter.ValidDatabase(*chDB); err != nil {
		return err // a name that can never work stops here, not in every evaluation
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log.level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	// 1. ClickHouse (lazy: the alerter serves and reports stale data while
	// ClickHouse is unreachable).
	begin := time.Now()
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:        strings.Split(*chAddr, ","),
		Protocol:    clickhouse.Native,
		Auth:        clickhouse.Auth{Database: "default", Username: *chUser, Password: os.Getenv("ERRTRAIL_ALERTER_CLICKHOUSE_PASSWORD")},
		DialTimeout: 5 * time.Second,
		ReadTimeout: *timeout,
	})
	if err != nil {
		return fmt.Errorf("clickhouse: %w", err)
	}
	defer conn.Close()

	// 2. Metrics on our own registry.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := alerter.NewMetrics(reg, *staleAfter, nil)
	runner := &alerter.Runner{
		Config:   &cfg,
		Source:   &alerter.Source{Conn: conn, Database: *chDB, Observe: m.QueryDone},
		Metrics:  m,
		Interval: *interval,
		Timeout:  *timeout,
		Log:      log,
	}

	// 3. HTTP.
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
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Info("listening", "addr", ln.Addr().String(), "clickhouse", *chAddr, "interval", *interval,
		"bucket", cfg.Bucket, "window", cfg.Window, "baseline", cfg.Baseline, "took", time.Since(begin))

	// 4. Run until a signal.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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

	// 5. Stop in reverse order, bounded.
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

// envFallback sets every flag not given on the command line from
// ERRTRAIL_ALERTER_<NAME>, NAME upper-cased with '.' and '-' as '_'.
func envFallback(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		key := "ERRTRAIL_ALERTER_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(f.Name))
		v, ok := os.LookupEnv(key)
		if !ok && f.Name == "clickhouse.addr" {
			v, ok = os.LookupEnv("ERRTRAIL_CLICKHOUSE_ADDR")
		}
		if ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", key, v, e)
			}
		}
	})
	return err
}
