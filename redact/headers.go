package redact

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

// HeaderUse says what errtrail keeps of a reply header.
type HeaderUse uint8

const (
	HeaderDrop  HeaderUse = iota // not kept at all
	HeaderName                   // its name only: the value is replaced by ""
	HeaderValue                  // name and value
)

// KeptHeader returns what is kept of a reply header (HTTP header, gRPC
// metadata or trailer) named name, matched without regard to case.
func KeptHeader(name string) HeaderUse {
	switch len(name) {
	case 7:
		if equalFold(name, ":status") {
			return HeaderValue
		}
	case 9:
		if equalFold(name, "ratelimit") {
			return HeaderValue
		}
	case 10:
		if equalFold(name, "request-id") {
			return HeaderValue
		}
	case 11:
		switch {
		case equalFold(name, "retry-after"), equalFold(name, "grpc-status"):
			return HeaderValue
		case equalFold(name, "a2a-version"):
			return HeaderName
		}
	case 12:
		if equalFold(name, "content-type") || equalFold(name, "x-request-id") || equalFold(name, "grpc-message") {
			return HeaderValue
		}
	case 14:
		switch {
		case equalFold(name, "content-length"):
			return HeaderValue
		case equalFold(name, "mcp-session-id"), equalFold(name, "a2a-extensions"):
			return HeaderName
		}
	case 15:
		if equalFold(name, "ratelimit-reset") {
			return HeaderValue
		}
	case 16:
		switch {
		case equalFold(name, "ratelimit-policy"), equalFold(name, "x-correlation-id"):
			return HeaderValue
		case equalFold(name, "x-a2a-extensions"):
			return HeaderName
		}
	case 17:
		if equalFold(name, "x-ratelimit-reset") || equalFold(name, "transfer-encoding") {
			return HeaderValue
		}
	case 18:
		if equalFold(name, "x-envoy-overloaded") {
			return HeaderName
		}
	case 19:
		if equalFold(name, "x-envoy-ratelimited") {
			return HeaderName
		}
	case 20:
		switch {
		case equalFold(name, "x-ratelimit-resource"):
			return HeaderValue
		case equalFold(name, "mcp-protocol-version"):
			return HeaderName
		}
	case 23:
		if equalFold(name, "grpc-status-details-bin") {
			return HeaderValue
		}
	}
	return HeaderDrop
}
