package redact

import "github.com/errtrail/errtrail/internal/keep"

// The reply headers errtrail keeps: an allow-list, in this one place, used
// by the emitters (package emit, cmd/tap) before an event leaves the
// process, by the decoder (package parse) as it reads a reply, and by Raw
// for the header block of a raw reply kept in a dead letter. A list of
// names to drop can never be complete (vendor key headers, identity-aware
// proxies' JWT assertions, X-Key, X-Session, URLs with credentials in
// Location or Link, WWW-Authenticate's error_description): every header not
// listed here is dropped, whatever its name or value.
//
// The list is what the decoder reads (parse/headers.go, pinned by
// parse's TestKeptHeadersAreWhatTheDecoderReads):
//
//	value kept  Content-Type, Retry-After, RateLimit, RateLimit-Policy,
//	            RateLimit-Reset, X-RateLimit-Reset, X-RateLimit-Resource,
//	            X-Request-Id, Request-Id, X-Correlation-Id,
//	            grpc-status, grpc-message, grpc-status-details-bin,
//	            and the framing of a raw reply: Content-Length,
//	            Transfer-Encoding, :status
//	name only   X-Envoy-Ratelimited, X-Envoy-Overloaded (their presence is
//	            what counts), and the protocols' transport headers
//	            Mcp-Session-Id (a session credential), MCP-Protocol-Version,
//	            A2A-Extensions, X-A2A-Extensions, A2A-Version (their
//	            presence names the protocol)

// HeaderUse says what errtrail keeps of a reply header. The list itself is
// declared once, in internal/keep, so that the emitters (package emit),
// which must not link this package's detectors, keep the same headers.
type HeaderUse = keep.Use

const (
	HeaderDrop  = keep.Drop  // not kept at all
	HeaderName  = keep.Name  // its name only: the value is replaced by ""
	HeaderValue = keep.Value // name and value
)

// KeptHeader returns what is kept of a reply header (HTTP header, gRPC
// metadata or trailer) named name, matched without regard to case.
func KeptHeader(name string) HeaderUse { return keep.Header(name) }
