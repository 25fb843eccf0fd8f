// Package api serves errtrail's read-only HTTP API for support lookups:
// the story of one stored error reply by any of its ids, a page of stored
// errors by agent, caller and kind, and the conformance report of an agent.
// docs/openapi.yaml describes every route, parameter and answer; a test
// keeps it and the route table in routes.go equal.
//
// The core types:
//
//   - Config: listen address, HTTP timeouts, auth, rate limit, sizes,
//     concurrency limits. RegisterFlags binds it to --http.*, --auth.*,
//     --ratelimit.*, --request.*, --limits.* flags.
//   - Server: New builds it from a Config, a lookup.Service, a
//     report.Reporter and the registry its metrics go to; it is the
//     http.Handler, and HTTPServer wraps it in an *http.Server with the
//     configured timeouts.
//
// What the package promises, whatever the request:
//
//   - No answer, log line or metric label carries the id of the path or a
//     query value. Error answers are RFC 9457 problem documents whose type,
//     title and detail come from the fixed table in problem.go (a
//     *lookup.BadIDError's reason is passed on, unless it contains the id).
//     Metrics and access logs name the route template ("/v1/errors/{id}"),
//     never the path, and the client as a keyed hash of its token or
//     address.
//   - Only GET and HEAD; unknown or repeated query parameters, and bad
//     values, are refused with 400 before the lookup is asked. The api
//     builds no SQL: it passes checked values to lookup.Service and
//     report.Reporter.
//   - Every lookup runs under Config.RequestTimeout: a store that does not
//     answer in time gives 504, an unavailable one 503.
//   - Bounded: stories, lists and reports pass a gate each (gate.go:
//     Config.Lookups, Lists, Reports, QueueTimeout) before they ask the
//     store, for the API and the pages alike (Config.Pages is built on the
//     gated services); a client over its share gets 429, a request that
//     finds no slot within the queue deadline 503, both with Retry-After.
//     The readiness check passes no gate. Paths not in canonical form are
//     a 404, never a redirect.
//
// Wiring it into a command (cmd/errtrail/serve.go does this, with the
// pages and a pool of its own for reports and for the readiness check):
//
//	cfg := api.DefaultConfig()
//	cfg.RegisterFlags(fs)            // then cliflags' Env for ERRTRAIL_API_* fallbacks
//	cfg.Log = log
//	reg := prometheus.NewRegistry()  // the process's own, never the global one
//	srv, err := api.New(cfg, &lookup.Finder{Conn: conn, Database: db, Redactor: r,
//		Recompute: &alerter.Recomputer{Conn: conn, Database: db}},
//		&report.ClickHouse{Conn: conn, Database: db}, reg)
//	hs := srv.HTTPServer()           // Addr, timeouts and header limit from cfg
//	go hs.Serve(ln); ...; hs.Shutdown(ctx)
//
// Another front end of the same process (errtrail mcp's Streamable HTTP
// endpoint) reuses these checks rather than copying them: Server.Protect
// wraps its handler in the body limit, the rate limit and the bearer-token
// check (protect.go), and Server.Services gives it the gated lookup
// service and reporter.
//
// Caveats: the client address is the TCP peer's (X-Forwarded-For is not
// read), so behind a proxy every client shares one rate-limit bucket unless
// it authenticates with its own token. Tokens are hashed (SHA-256) when
// loaded and compared in constant time; the token file is re-read every
// Config.TokenReload (0: read once at New).
package api
