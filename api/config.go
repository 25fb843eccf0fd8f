package api

import (
	"errors"
	"flag"
	"fmt"
	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/incidents"
	"log/slog"
	"net/http"
	"time"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// Config is the api's settings. The zero value is not usable: start from
// DefaultConfig. Fields with a flag name are set by RegisterFlags.
type Config struct {
	Listen string // --http.listen-address

	// http.Server timeouts and sizes.
	ReadHeaderTimeout time.Duration // --http.read-header-timeout
	ReadTimeout       time.Duration // --http.read-timeout
	WriteTimeout      time.Duration // --http.write-timeout; must exceed RequestTimeout so a 504 can still be written
	IdleTimeout       time.Duration // --http.idle-timeout
	MaxHeaderBytes    int           // --http.max-header-bytes (request line and headers)
	MaxBodyBytes      int64         // --http.max-body-bytes; a longer body is refused with 413 (GET needs none)

	// RequestTimeout is the deadline of one lookup, report or readiness
	// check, from the moment the request reaches its handler.
	RequestTimeout time.Duration // --request.timeout

	// Auth. With neither TokenFile nor TokensEnv every client is let in.
	// With either, /v1/* needs "Authorization: Bearer TOKEN" with one of
	// the tokens; /healthz and /readyz never do, /metrics when MetricsAuth.
	TokenFile   string        // --auth.token-file: one token per line; blank lines and lines starting with '#' are skipped
	TokensEnv   string        // --auth.tokens-env: the NAME of a variable holding tokens separated by commas or white space
	TokenReload time.Duration // --auth.token-reload: re-read TokenFile this often (0: read once); the variable is read once
	MetricsAuth bool          // --auth.metrics: /metrics needs a token too

	// Rate limit: a token bucket per client (the hash of its bearer token
	// when it presents a valid one, else its address). RPS 0 turns it off.
	RPS        float64 // --ratelimit.rps: requests per second, sustained
	Burst      int     // --ratelimit.burst: requests allowed at once
	MaxClients int     // --ratelimit.max-clients: buckets kept; the least recently seen is dropped beyond

	// Concurrency limits on the questions the store is asked (see gate):
	// lookups (a story), lists and reports each have a gate. A request
	// waits at most QueueTimeout for a slot (it must be below
	// RequestTimeout, so that a full gate answers 503, not 504).
	Lookups      GateLimits    // --limits.lookups.*
	Lists        GateLimits    // --limits.lists.*
	Reports      GateLimits    // --limits.reports.*
	QueueTimeout time.Duration // --limits.queue-timeout

	// Not flags.
	Log *slog.Logger // access and error logs; nil discards
	// Pages, if set, builds the handler of every path outside /v1/ that no
	// route of the api serves (the web pages) on the api's lookup service
	// and reporter behind the same concurrency limits. The pages are
	// served after the same method, body, path and per-client rate-limit
	// checks, counted and logged under the route label "pages", but
	// without the bearer-token check (a browser form cannot send one; the
	// command decides whether pages may run with auth on). Their own
	// headers win over the api's.
	Pages func(svc lookup.Service, rep report.Reporter) http.Handler
	Now   func() time.Time // default time.Now; tests move it
	// Incidents answers /v1/incidents (an incidents.Store on the same
	// ClickHouse, its store failures wrapped as lookup's errors); nil: that
	// route answers 503 unavailable.
	Incidents incidents.Reader
	// Groups answers /v1/agents/{agent}/groups (a groups.Store on the same
	// ClickHouse, its store failures wrapped as lookup's errors); nil:
	// that route answers 503 unavailable.
	Groups groups.Reader
}

// DefaultConfig returns the defaults the flags show.
func DefaultConfig() Config {
	return Config{
		Listen:            "127.0.0.1:19102",
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      40 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		MaxBodyBytes:      4 << 10,
		RequestTimeout:    30 * time.Second,
		TokenReload:       30 * time.Second,
		RPS:               10,
		Burst:             20,
		MaxClients:        10000,
		Lookups:           GateLimits{Concurrency: 8, PerClient: 4, QueueLength: 64},
		Lists:             GateLimits{Concurrency: 4, PerClient: 2, QueueLength: 32},
		Reports:           GateLimits{Concurrency: 4, PerClient: 2, QueueLength: 16},
		QueueTimeout:      5 * time.Second,
	}
}

// RegisterFlags binds c's fields to flags on fs, with c's values as the
// defaults. The tokens never pass through a flag: --auth.tokens-env names
// the variable that holds them, so --help and ps never show one.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Listen, "http.listen-address", c.Listen, "address the API listens on")
	fs.DurationVar(&c.ReadHeaderTimeout, "http.read-header-timeout", c.ReadHeaderTimeout, "time to read a request's headers")
	fs.DurationVar(&c.ReadTimeout, "http.read-timeout", c.ReadTimeout, "time to read a whole request")
	fs.DurationVar(&c.WriteTimeout, "http.write-timeout", c.WriteTimeout, "time from the end of the request's headers to the end of the answer (must exceed --request.timeout)")
	fs.DurationVar(&c.IdleTimeout, "http.idle-timeout", c.IdleTimeout, "keep-alive connections idle longer are closed")
	fs.IntVar(&c.MaxHeaderBytes, "http.max-header-bytes", c.MaxHeaderBytes, "largest request line plus headers")
	fs.Int64Var(&c.MaxBodyBytes, "http.max-body-bytes", c.MaxBodyBytes, "largest request body (the API's requests need none); longer is refused with 413")
	fs.DurationVar(&c.RequestTimeout, "request.timeout", c.RequestTimeout, "deadline of one lookup or report; past it the answer is 504")
	fs.StringVar(&c.TokenFile, "auth.token-file", c.TokenFile, "file of bearer tokens, one per line ('#' starts a comment line); enables auth")
	fs.StringVar(&c.TokensEnv, "auth.tokens-env", c.TokensEnv, "name of an environment variable holding bearer tokens, separated by commas or spaces; enables auth")
	fs.DurationVar(&c.TokenReload, "auth.token-reload", c.TokenReload, "re-read --auth.token-file this often (0: read once at start)")
	fs.BoolVar(&c.MetricsAuth, "auth.metrics", c.MetricsAuth, "require a token for /metrics too")
	fs.Float64Var(&c.RPS, "ratelimit.rps", c.RPS, "sustained requests per second per client (0: no limit)")
	fs.IntVar(&c.Burst, "ratelimit.burst", c.Burst, "requests a client may make at once")
	fs.IntVar(&c.MaxClients, "ratelimit.max-clients", c.MaxClients, "clients whose buckets are kept; the least recently seen is forgotten beyond")
	for _, g := range []struct {
		name, what string
		l          *GateLimits
	}{{"lookups", "stories (one error by id)", &c.Lookups}, {"lists", "lists of errors", &c.Lists}, {"reports", "conformance reports", &c.Reports}} {
		fs.IntVar(&g.l.Concurrency, "limits."+g.name+".concurrency", g.l.Concurrency, g.what+" asking the store at once")
		fs.IntVar(&g.l.PerClient, "limits."+g.name+".per-client", g.l.PerClient, g.what+" one client may have running or queued; beyond, 429")
		fs.IntVar(&g.l.QueueLength, "limits."+g.name+".queue-length", g.l.QueueLength, g.what+" waiting for a slot; beyond, 503")
	}
	fs.DurationVar(&c.QueueTimeout, "limits.queue-timeout", c.QueueTimeout, "longest wait for a slot of --limits.*.concurrency; past it, 503 with Retry-After (must be below --request.timeout)")
}

// Validate reports the first setting that cannot work.
func (c *Config) Validate() error {
	switch {
	case c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0:
		return errors.New("--http.read-header-timeout, --http.read-timeout, --http.write-timeout and --http.idle-timeout must be positive")
	case c.RequestTimeout <= 0:
		return errors.New("--request.timeout must be positive")
	case c.WriteTimeout <= c.RequestTimeout:
		return fmt.Errorf("--http.write-timeout (%v) must exceed --request.timeout (%v), or a timed-out lookup could not be answered", c.WriteTimeout, c.RequestTimeout)
	case c.MaxHeaderBytes < 1024:
		return errors.New("--http.max-header-bytes must be at least 1024")
	case c.MaxBodyBytes < 0:
		return errors.New("--http.max-body-bytes must not be negative")
	case c.TokenReload < 0:
		return errors.New("--auth.token-reload must not be negative")
	case c.RPS < 0:
		return errors.New("--ratelimit.rps must not be negative")
	case c.RPS > 0 && c.Burst < 1:
		return errors.New("--ratelimit.burst must be at least 1")
	case c.RPS > 0 && c.MaxClients < 1:
		return errors.New("--ratelimit.max-clients must be at least 1")
	case c.QueueTimeout <= 0 || c.QueueTimeout >= c.RequestTimeout:
		return fmt.Errorf("--limits.queue-timeout (%v) must be positive and below --request.timeout (%v)", c.QueueTimeout, c.RequestTimeout)
	}
	for name, g := range map[string]GateLimits{"lookups": c.Lookups, "lists": c.Lists, "reports": c.Reports} {
		if g.Concurrency < 1 || g.PerClient < 1 || g.QueueLength < 0 {
			return fmt.Errorf("--limits.%s.concurrency and --limits.%[1]s.per-client must be at least 1, --limits.%[1]s.queue-length not negative", name)
		}
	}
	return nil
}

// HTTPServer returns an *http.Server serving s on s's configured address
// with its timeouts and header limit. The caller runs and shuts it down.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Addr:              s.cfg.Listen,
		Handler:           s,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}
