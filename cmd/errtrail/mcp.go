package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/errtrail/errtrail/api"
	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/mcpserve"
)

// runMCP executes `errtrail mcp`: the read side as an MCP server, on stdio
// (the default: an assistant starts it) or on Streamable HTTP with
// --mcp.listen, behind the API's tokens, rate limit and gates. mcpserve
// holds the tools.
func runMCP(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	c := newCommon("mcp", stderr)
	cfg := api.DefaultConfig()
	// Of the API's flags, those that mean the same here: auth, rate limit,
	// the concurrency limits of stories and reports, the request deadline.
	// Its listen address and HTTP timeouts stay the API's; no tool lists
	// errors, so the lists' limits are not offered.
	all := flag.NewFlagSet("api", flag.ContinueOnError)
	cfg.RegisterFlags(all)
	all.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "limits.lists.") {
			return
		}
		for _, p := range []string{"auth.", "ratelimit.", "limits.", "request."} {
			if strings.HasPrefix(f.Name, p) {
				c.fs.Var(f.Value, f.Name, f.Usage)
			}
		}
	})
	listen := c.fs.String("mcp.listen", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:19103); empty: serve on stdin and stdout")
	path := c.fs.String("mcp.path", "/mcp", "the Streamable HTTP endpoint's path")
	maxReply := c.fs.Int("mcp.max-reply-bytes", mcpserve.DefaultMaxReplyBytes, "largest reply the check tool takes")
	pool := c.fs.Int("clickhouse.max-conns", 16, "connections to ClickHouse, for stories, reports and incidents (a story asks up to 5 queries at once)")
	c.fs.Usage = func() {
		fmt.Fprint(c.fs.Output(), `usage: errtrail mcp [flags]

Serves errtrail's read side over the Model Context Protocol (revisions
2026-07-28 and 2025-11-25): the tools lookup, check, report and incidents
(docs/mcp.md). On stdin and stdout by default, for an assistant that starts
it; on Streamable HTTP with --mcp.listen, where --auth.* requires the API's
bearer tokens. Read-only; answers never carry a credential or an id the
caller did not send.

`)
		c.fs.PrintDefaults()
	}
	if code, done := parseOrExit(c, args, stderr); done {
		return code
	}
	if c.fs.NArg() > 0 {
		fmt.Fprintln(stderr, "errtrail mcp: unexpected argument (mcp takes flags only)")
		return exitUsage
	}
	log, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "errtrail mcp:", err)
		return exitUsage
	}
	authOn := cfg.TokenFile != "" || cfg.TokensEnv != ""
	switch {
	case *listen == "" && authOn:
		fmt.Fprintln(stderr, "errtrail mcp: --auth.* applies to Streamable HTTP (--mcp.listen); on stdio the client is the user who started the process")
		return exitUsage
	case *maxReply < 1024:
		fmt.Fprintln(stderr, "errtrail mcp: --mcp.max-reply-bytes must be at least 1024")
		return exitUsage
	case !strings.HasPrefix(*path, "/"):
		fmt.Fprintln(stderr, "errtrail mcp: --mcp.path must start with /")
		return exitUsage
	case *pool < cfg.Lookups.Concurrency+cfg.Reports.Concurrency:
		fmt.Fprintln(stderr, "errtrail mcp: --clickhouse.max-conns must be at least --limits.lookups.concurrency + --limits.reports.concurrency")
		return exitUsage
	}
	conn, err := c.connectPool(*c.chAddr, *pool)
	if err != nil {
		fmt.Fprintln(stderr, "errtrail mcp:", err)
		return exitUsage
	}
	defer conn.Close()
	finder, rep := c.services(conn, c.redactor(func(s string) { log.Warn(s) }))
	cfg.Log = log
	cfg.Incidents = incidentStore{incidents.Store{Conn: conn, Database: *c.chDB}}
	// The api's server is built for its checks and gates, not served; its
	// metrics (route "mcp") are served on /metrics next to the endpoint.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	guard, err := api.New(cfg, finder, rep, reg)
	if err != nil {
		fmt.Fprintln(stderr, "errtrail mcp:", err)
		return exitUsage
	}
	svc, gatedRep := guard.Services()
	// The SDK logs every session at INFO (on Streamable HTTP, stateless,
	// every request is one): it gets warnings and errors only.
	if err := c.log.Check(); err != nil {
		fmt.Fprintln(stderr, "errtrail mcp:", err)
		return exitUsage
	}
	sdk := *c.log
	if sdk.Level < slog.LevelWarn {
		sdk.Level = slog.LevelWarn
	}
	sdkLog := sdk.Logger(stderr)
	srv, err := mcpserve.New(mcpserve.Config{Lookup: svc, Reports: gatedRep, Incidents: cfg.Incidents,
		Groups:  groupStore{groups.Store{Conn: conn, Database: *c.chDB}},
		Timeout: cfg.RequestTimeout, MaxReplyBytes: *maxReply, Logger: sdkLog})
	if err != nil {
		fmt.Fprintln(stderr, "errtrail mcp:", err)
		return exitFailed
	}
	// A JSON string of n bytes is at most 6n on the wire (\u00XX escapes).
	maxBody := int64(*maxReply)*6 + 64<<10

	if *listen == "" {
		log.Info("serving MCP on stdio", "clickhouse", *c.chAddr, "database", *c.chDB, "redaction_key", finder.Redactor != nil)
		err := srv.Run(ctx, &mcp.IOTransport{Reader: stdin, Writer: stdout, MaxLineLength: int(maxBody)})
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			log.Error("mcp", "err", err)
			return exitFailed
		}
		return exitOK
	}

	mux := http.NewServeMux()
	mux.Handle(*path, guard.Protect("mcp", maxBody, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: sdkLog, MaxRequestBodyBytes: maxBody})))
	var metrics http.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	if cfg.MetricsAuth {
		metrics = guard.Protect("metrics", 0, metrics)
	}
	mux.Handle("GET /metrics", metrics)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: cfg.ReadHeaderTimeout, ReadTimeout: cfg.ReadTimeout,
		WriteTimeout: cfg.RequestTimeout + 10*time.Second, IdleTimeout: cfg.IdleTimeout, MaxHeaderBytes: cfg.MaxHeaderBytes}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Error("listen", "err", err)
		return exitFailed
	}
	log.Info("serving MCP on Streamable HTTP", "addr", ln.Addr().String(), "path", *path, "auth", authOn,
		"clickhouse", *c.chAddr, "database", *c.chDB, "redaction_key", finder.Redactor != nil)
	return serveUntilDone(ctx, hs, ln, log)
}
