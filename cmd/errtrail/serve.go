package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/errtrail/errtrail/api"
	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/internal/cliflags"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
	"github.com/errtrail/errtrail/web"
)

// runServe executes `errtrail serve`: the JSON API under /v1/, /healthz,
// /readyz and /metrics, and the web pages everywhere else, on one address.
func runServe(ctx context.Context, args []string, stderr io.Writer) int {
	c := newCommon("serve", stderr)
	cfg := api.DefaultConfig()
	cfg.RegisterFlags(c.fs)
	external := c.fs.String("http.external-url", "", "the URL people reach errtrail serve at (scheme, host, any path prefix), for the pages' links (default: http://<listen address>)")
	grafana := c.fs.String("links.grafana-url", "", "base URL of the Grafana with errtrail's dashboards, for the pages' dashboard links (none without)")
	traceURL := traceURLFlag(c)
	pages := c.fs.Bool("web.enabled", true, "serve the web pages next to the API")
	pagesOpen := c.fs.Bool("web.without-auth", false, "serve the web pages although --auth.* protects the API: a browser form cannot send a bearer token, so only do this behind a proxy that authenticates people")
	pool := c.fs.Int("clickhouse.max-conns", 48, "connections of the lookups' and lists' pool (a story asks up to 5 queries at once: give at least 5 × --limits.lookups.concurrency + --limits.lists.concurrency)")
	reportAddr := c.fs.String("clickhouse.report-addr", "", "ClickHouse addresses for the reports (e.g. another replica; default --clickhouse.addr)")
	reportPool := c.fs.Int("clickhouse.report-conns", 4, "connections of the reports' own pool (at least --limits.reports.concurrency)")
	c.fs.Usage = func() {
		fmt.Fprint(c.fs.Output(), `usage: errtrail serve [flags]

Serves the support lookup and the conformance reports over HTTP: the JSON
API under /v1/ (docs/openapi.yaml), /healthz, /readyz, /metrics, and the web
pages for people everywhere else (/, /errors, /agents/AGENT/report,
/report). Only GET and HEAD; answers never carry a credential or the id
asked with.

`)
		c.fs.PrintDefaults()
	}
	if code, done := parseOrExit(c, args, stderr); done {
		return code
	}
	if c.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "errtrail serve: unexpected argument (serve takes flags only)\n")
		return exitUsage
	}
	log, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "errtrail serve:", err)
		return exitUsage
	}
	ext, err := cliflags.BaseURL("http.external-url", *external)
	if err == nil && ext == "" {
		ext = "http://" + cfg.Listen
	}
	graf, err2 := cliflags.BaseURL("links.grafana-url", *grafana)
	trace, err3 := traceURL()
	if err = errors.Join(err, err2, err3); err != nil {
		fmt.Fprintln(stderr, "errtrail serve:", err)
		return exitUsage
	}
	if *pool < cfg.Lookups.Concurrency+cfg.Lists.Concurrency || *reportPool < cfg.Reports.Concurrency {
		fmt.Fprintln(stderr, "errtrail serve: --clickhouse.max-conns must be at least --limits.lookups.concurrency + --limits.lists.concurrency, and --clickhouse.report-conns at least --limits.reports.concurrency")
		return exitUsage
	}
	if *reportAddr == "" {
		*reportAddr = *c.chAddr
	}
	authOn := cfg.TokenFile != "" || cfg.TokensEnv != ""
	if *pages && authOn && !*pagesOpen {
		fmt.Fprintln(stderr, "errtrail serve: --auth.* protects the API but the web pages cannot send a token; give --web.enabled=false, or --web.without-auth behind an authenticating proxy")
		return exitUsage
	}

	// Three pools, so that no class of question can take the connections
	// of another: lookups and lists, reports (behind their own gate, and
	// possibly on another replica), and one connection for /readyz.
	conn, err := c.connectPool(*c.chAddr, *pool)
	if err != nil {
		fmt.Fprintln(stderr, "errtrail serve:", err)
		return exitUsage
	}
	defer conn.Close()
	repConn, err := c.connectPool(*reportAddr, *reportPool)
	if err != nil {
		fmt.Fprintln(stderr, "errtrail serve:", err)
		return exitUsage
	}
	defer repConn.Close()
	readyConn, err := c.connectPool(*c.chAddr, 2)
	if err != nil {
		fmt.Fprintln(stderr, "errtrail serve:", err)
		return exitUsage
	}
	defer readyConn.Close()
	finder, _ := c.services(conn, c.redactor(func(s string) { log.Warn(s) }))
	_, rep := c.services(repConn, nil)
	svc := readyOn{Finder: finder, ready: &lookup.Finder{Conn: readyConn, Database: finder.Database}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg.Log = log
	inc := incidentStore{incidents.Store{Conn: repConn, Database: *c.chDB}}
	cfg.Incidents = inc
	grp := groupStore{groups.Store{Conn: repConn, Database: *c.chDB}}
	cfg.Groups = grp
	if *pages {
		cfg.Pages = func(svc lookup.Service, rep report.Reporter) http.Handler {
			return web.New(web.Config{ExternalURL: ext, GrafanaURL: graf, TraceURL: trace, Timeout: cfg.RequestTimeout, Logger: log, Incidents: inc, Groups: grp}, svc, rep)
		}
	}
	srv, err := api.New(cfg, svc, rep, reg)
	if err != nil {
		fmt.Fprintln(stderr, "errtrail serve:", err)
		return exitUsage
	}
	hs := srv.HTTPServer()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		log.Error("listen", "err", err)
		return exitFailed
	}
	log.Info("serving", "addr", ln.Addr().String(), "external_url", ext, "pages", *pages, "auth", authOn,
		"clickhouse", *c.chAddr, "clickhouse_reports", *reportAddr, "database", *c.chDB, "user", *c.chUser, "redaction_key", finder.Redactor != nil)
	return serveUntilDone(ctx, hs, ln, log)
}

// readyOn is the lookup service whose readiness check runs on a pool of its
// own: /readyz answers while lookups or reports hold every connection of
// theirs.
type readyOn struct {
	*lookup.Finder
	ready *lookup.Finder
}

func (r readyOn) Ready(ctx context.Context) error { return r.ready.Ready(ctx) }

// serveUntilDone serves hs on ln until ctx ends or serving fails, then
// shuts it down (10 s for the requests under way) and returns the exit
// status: errtrail serve's and errtrail mcp's end.
func serveUntilDone(ctx context.Context, hs *http.Server, ln net.Listener, log *slog.Logger) int {
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if e := hs.Shutdown(shut); e != nil && !errors.Is(e, http.ErrServerClosed) {
		log.Warn("shutdown", "err", e)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("serve", "err", err)
		return exitFailed
	}
	log.Info("stopped")
	return exitOK
}
