package emit

import (
	"net/http"
	"strings"

	"github.com/errtrail/errtrail/internal/keep"
)

// Config says how the middleware and the transport fill an event. Zero
// values take the defaults.
type Config struct {
	// Source of the events. Kind defaults to KindAgent for Handler and
	// KindClient for Transport (set KindGateway for a gateway); ID to the
	// host name.
	Source Source
	// Agent names the agent that answered; AgentFunc, when set, decides per
	// request (a gateway in front of several agents).
	Agent     string
	AgentFunc func(*http.Request) string
	// Endpoint is the URL the request went to; by default the request's own
	// (for Handler: scheme, Host and path). EndpointFunc, when set, decides
	// per request (a proxy names its upstream, never the client's Host).
	// Cleaned either way (CleanEndpoint).
	Endpoint     string
	EndpointFunc func(*http.Request) string
	// Caller says who sent the request, e.g. CallerFromHeader("X-Caller"),
	// CallerFromTLSPeer, or an auth subject from the request's context.
	// Never a token: the value is published as it is.
	Caller func(*http.Request) string
	// TraceContext, when set, gives the trace and span ids of the request
	// (32 and 16 lowercase hex digits), e.g. the active span of
	// r.Context() from OpenTelemetry (docs/emit.md). It wins over the
	// traceparent header, which is read without it; a value of another
	// form is ignored.
	TraceContext func(*http.Request) (traceID, spanID string)

	RequestIDHeader   string // "X-Request-Id"
	AttemptHeader     string // "X-Attempt": 1 for the first try, 2 for the first retry
	IdempotencyHeader string // "Idempotency-Key"

	// MaxRequestBytes bounds the request body read for ids (64 KiB).
	MaxRequestBytes int
	// MaxProbeBytes bounds the successful JSON or SSE-event bytes inspected
	// to tell a result from an error (64 KiB); past it a reply passes as a
	// success.
	MaxProbeBytes int
	// MaxBodyBytes bounds the error body captured for the event (512 KiB);
	// an error reply with a larger body is published as it passes the
	// bound, without its body (reply.body_incomplete "too_large").
	MaxBodyBytes int
	// Skip, when set, exempts requests (health checks, …) from inspection.
	Skip func(*http.Request) bool
}

func (c *Config) defaults(kind string) {
	if c.Source.Kind == "" {
		c.Source.Kind = kind
	}
	if c.RequestIDHeader == "" {
		c.RequestIDHeader = "X-Request-Id"
	}
	if c.AttemptHeader == "" {
		c.AttemptHeader = "X-Attempt"
	}
	if c.IdempotencyHeader == "" {
		c.IdempotencyHeader = "Idempotency-Key"
	}
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = 64 << 10
	}
	if c.MaxProbeBytes <= 0 {
		c.MaxProbeBytes = 64 << 10
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 512 << 10
	}
}

func (c *Config) agent(r *http.Request) string {
	if c.AgentFunc != nil {
		return c.AgentFunc(r)
	}
	return c.Agent
}

// CallerFromHeader returns a Caller that reads a request header. A header
// that carries credentials (keep.SensitiveHeader, as redact.SensitiveHeader: Authorization, X-Api-Key,
// …) is never read: the caller is then always empty.
func CallerFromHeader(name string) func(*http.Request) string {
	if keep.SensitiveHeader(name) {
		return func(*http.Request) string { return "" }
	}
	return func(r *http.Request) string { return strings.TrimSpace(r.Header.Get(name)) }
}

// CallerFromTLSPeer is a Caller that takes the common name of the verified
// mTLS client certificate (empty without one).
func CallerFromTLSPeer(r *http.Request) string {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return ""
	}
	return r.TLS.PeerCertificates[0].Subject.CommonName
}
