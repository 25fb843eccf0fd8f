// Package api serves errtrail's read-only HTTP API for support lookups:
// the story of one stored error reply by any of its ids, a page of stored
// errors by agent, caller and kind, and the conformance report of an agent.
// docs/openapi.yaml describes every route, parameter and answer; a test
// keeps it and the route table in routes.go equal.
//
// The core types:
//
//   - Config: listen address, HTTP timeouts, auth, rate limit, sizes.
//     RegisterFlags binds it to --http.*, --auth.*, --ratelimit.*,
//     --request.* flags.
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
//
// Wiring it into a command (no command serves it yet):
//
//	cfg := api.DefaultConfig()
//	cfg.RegisterFlags(fs)            // then cliflags' Env for ERRTRAIL_API_* fallbacks
//	cfg.Log = log
//	reg := prometheus.NewRegistry()  // the process's own, never the global one
//	srv, err := api.New(cfg, &lookup.Finder{Conn: conn, Database: db, Redactor: r},
//		&report.ClickHouse{Conn: conn, Database: db}, reg)
//	hs := srv.HTTPServer()           // Addr, timeouts and header limit from cfg
//	go hs.Serve(ln); ...; hs.Shutdown(ctx)
//
// Caveats: the client address is the TCP peer's (X-Forwarded-For is not
// read), so behind a proxy every client shares one rate-limit bucket unless
// it authenticates with its own token. Tokens are hashed (SHA-256) when
// loaded and compared in constant time; the token file is re-read every
// Config.TokenReload (0: read once at New).
package api
