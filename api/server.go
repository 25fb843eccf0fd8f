package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/errtrail/errtrail/internal/cmdkit"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// Registry is where the api's metrics go and what /metrics serves;
// *prometheus.Registry is one. Pass the process's own registry, never the
// global one.
type Registry interface {
	prometheus.Registerer
	prometheus.Gatherer
}

// Server is the api's http.Handler. Build it with New.
type Server struct {
	cfg     Config
	svc     lookup.Service
	rep     report.Reporter
	log     *slog.Logger
	now     func() time.Time
	tokens  *tokens // nil: auth off
	limiter *limiter
	m       *metrics
	promh   http.Handler
	keyMAC  []byte       // keys the client hashes; random per process
	pages   http.Handler // nil: no pages
}

// New checks cfg, reads the tokens and registers the metrics on reg. svc
// answers the lookups and the readiness check, rep the reports; for the
// real stores pass a *lookup.Finder and a *report.ClickHouse.
func New(cfg Config, svc lookup.Service, rep report.Reporter, reg Registry) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if svc == nil || rep == nil || reg == nil {
		return nil, errors.New("api.New: svc, rep and reg are required")
	}
	s := &Server{cfg: cfg, svc: svc, rep: rep, log: cfg.Log, now: cfg.Now}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = time.Now
	}
	var err error
	if s.tokens, err = newTokens(cfg.TokenFile, cfg.TokensEnv, cfg.TokenReload, s.now()); err != nil {
		return nil, err
	}
	s.limiter = newLimiter(cfg.RPS, cfg.Burst, cfg.MaxClients)
	s.m = newMetrics(reg, s.limiter)
	gm := newGateMetrics(reg)
	s.svc = gatedLookups{svc: svc, story: newGate(classLookups, cfg.Lookups, cfg.QueueTimeout, gm),
		lists: newGate(classLists, cfg.Lists, cfg.QueueTimeout, gm)}
	s.rep = gatedReports{rep: rep, g: newGate(classReports, cfg.Reports, cfg.QueueTimeout, gm)}
	if cfg.Pages != nil {
		s.pages = cfg.Pages(s.svc, s.rep)
	}
	if s.tokens != nil {
		s.tokens.onReload = func(err error, n int) {
			if err != nil {
				s.m.reloads.WithLabelValues("error").Inc()
				s.log.Warn("token file not re-read; the tokens last read stay", "err", err)
				return
			}
			s.m.reloads.WithLabelValues("ok").Inc()
			if n == 0 {
				s.log.Warn("token file holds no token: only --auth.tokens-env's tokens are accepted")
			}
		}
	}
	s.promh = cmdkit.MetricsHandler(reg)
	s.keyMAC = make([]byte, 32)
	if _, err := rand.Read(s.keyMAC); err != nil {
		return nil, err
	}
	return s, nil
}

// recorder is the answer's status, size and what the log should say of a
// failure.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	err    error // logged for 5xx answers
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush keeps http.Flusher for promhttp.
func (w *recorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// request is what a handler gets: the request, its route's checked query
// values and path values.
type request struct {
	*http.Request
	route *route
	query map[string]string // the route's parameters that were given, not empty
	path  map[string]string
}

// param returns the value of the route's query parameter name ("" when not
// given). Asking for a parameter the route table does not list is a bug
// and panics, so the table is the whole truth about what handlers read.
func (r *request) param(name string) string {
	if !slices.Contains(r.route.query, name) {
		panic("api: route " + r.route.pattern + " reads undeclared query parameter " + name)
	}
	return r.query[name]
}

// pathValue returns the value of the route's wildcard name.
func (r *request) pathValue(name string) string {
	if !slices.Contains(r.route.pathParams(), name) {
		panic("api: route " + r.route.pattern + " reads undeclared path parameter " + name)
	}
	return r.path[name]
}

// ServeHTTP implements http.Handler: it finds the route, applies the
// checks every request passes (method, body, rate limit, auth, query),
// serves it, and records the metrics and the access log line.
func (s *Server) ServeHTTP(hw http.ResponseWriter, hr *http.Request) {
	start := time.Now()
	s.m.inFlight.Inc()
	defer s.m.inFlight.Dec()

	w := &recorder{ResponseWriter: hw}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")

	escaped := hr.URL.EscapedPath()
	rt, pathVals := match(escaped)
	label := routeOther
	if rt != nil {
		label = rt.pattern
	}
	client := s.clientKey(hr)
	hr = hr.WithContext(context.WithValue(hr.Context(), clientCtxKey{}, client.limit))
	defer func() {
		status := w.status
		if status == 0 {
			status = http.StatusOK
		}
		d := time.Since(start)
		s.m.requests.WithLabelValues(label, strconv.Itoa(status)).Inc()
		s.m.duration.WithLabelValues(label).Observe(d.Seconds())
		attrs := []any{"route", label, "method", methodLabel(hr.Method), "status", status,
			"duration", d, "bytes", w.bytes, "client", client.log}
		if status >= 500 && w.err != nil {
			s.log.Warn("request", append(attrs, "err", w.err.Error())...)
		} else {
			s.log.Info("request", attrs...)
		}
	}()

	if hr.Method != http.MethodGet && hr.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		writeProblem(w, probMethod.body())
		return
	}
	if hr.ContentLength > s.cfg.MaxBodyBytes {
		writeProblem(w, probBodyTooLarge.body())
		return
	}
	hr.Body = http.MaxBytesReader(w, hr.Body, s.cfg.MaxBodyBytes)
	if rt == nil {
		// A path that is not in its canonical form (//x, /a/../b, /a/./b)
		// is no route and no page: the pages' ServeMux would answer it
		// with a redirect whose Location repeats the path, and a path can
		// hold the id asked with.
		if s.pages == nil || isAPIPath(escaped) || !canonical(escaped) || !canonical(hr.URL.Path) {
			writeProblem(w, probNoRoute.body())
			return
		}
		label = routePages
		if s.limiter != nil {
			if ok, wait := s.limiter.allow(client.limit, s.now()); !ok {
				s.m.rateLimited.WithLabelValues(label).Inc()
				h.Set("Retry-After", strconv.Itoa(retryAfter(wait)))
				writeProblem(w, probRateLimited.body())
				return
			}
		}
		s.pages.ServeHTTP(w, hr)
		return
	}

	if rt.access == accessAPI && s.limiter != nil {
		if ok, wait := s.limiter.allow(client.limit, s.now()); !ok {
			s.m.rateLimited.WithLabelValues(label).Inc()
			h.Set("Retry-After", strconv.Itoa(retryAfter(wait)))
			writeProblem(w, probRateLimited.body())
			return
		}
	}
	if s.tokens != nil && (rt.access == accessAPI || (rt.access == accessMetrics && s.cfg.MetricsAuth)) && !client.authed {
		reason := "invalid"
		if !client.presented {
			reason = "missing"
		}
		s.m.authFailed.WithLabelValues(reason).Inc()
		h.Set("WWW-Authenticate", `Bearer realm="errtrail"`)
		writeProblem(w, probUnauthorized.body())
		return
	}

	q, prob := parseQuery(hr.URL.RawQuery, rt.query)
	if prob != nil {
		writeProblem(w, prob)
		return
	}
	rt.serve(s, w, &request{Request: hr, route: rt, query: q, path: pathVals})
}

// canonical reports whether p is a path as http.ServeMux would leave it:
// starting with '/', without empty, "." or ".." segments (a trailing '/'
// is kept).
func canonical(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// isAPIPath reports whether an escaped path is under /v1, which only the
// api's routes serve (an unknown one is the api's 404, never a page).
func isAPIPath(p string) bool { return p == "/v1" || strings.HasPrefix(p, "/v1/") }

// methodLabel bounds the method logged: a client may send any token.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// clientID is who a request comes from.
type clientID struct {
	limit     string // the rate-limit bucket's key
	log       string // a short form of it for the access log
	presented bool   // a bearer token was sent
	authed    bool   // and it is accepted
}

// clientKey keys a client by its bearer token when it presents an accepted
// one, else by the TCP peer's address, as an HMAC under a key drawn at
// start: the log can tell clients apart within a process's life without
// holding a token or an address.
func (s *Server) clientKey(r *http.Request) clientID {
	var c clientID
	var tok string
	tok, c.presented = bearer(r.Header.Get("Authorization"))
	if c.presented && s.tokens != nil {
		c.authed = s.tokens.check(tok, s.now())
	}
	mac := hmac.New(sha256.New, s.keyMAC)
	if c.authed {
		mac.Write([]byte("token\x00" + tok))
	} else {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		mac.Write([]byte("addr\x00" + host))
	}
	sum := mac.Sum(nil)
	c.limit = string(sum)
	c.log = hex.EncodeToString(sum[:6])
	return c
}

// parseQuery checks a raw query string against a route's parameters: it
// must parse, name only those parameters, each at most once. Empty values
// count as not given. No problem it returns quotes the query.
func parseQuery(raw string, allowed []string) (map[string]string, *problem) {
	if raw == "" {
		return nil, nil
	}
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return nil, probBadQuery.body()
	}
	names := slices.Sorted(maps.Keys(vals))
	for _, name := range names {
		if !slices.Contains(allowed, name) {
			return nil, probUnknownParam.body()
		}
	}
	out := make(map[string]string, len(vals))
	for _, name := range names {
		vs := vals[name]
		if len(vs) > 1 {
			p := probRepeatedParam.body()
			p.Parameter = name // one of the route's own names
			return nil, p
		}
		if vs[0] != "" {
			out[name] = vs[0]
		}
	}
	return out, nil
}
