package keep

// The reply headers errtrail keeps: an allow-list, in this one place, used
// by the emitters (package emit, cmd/tap) before an event leaves the
// process, by the decoder (package parse, through redact.KeptHeader) as it
// reads a reply, and by redact.Raw for the header block of a raw reply kept
// in a dead letter. A list of
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

// Use says what errtrail keeps of a reply header.
type Use uint8

const (
	Drop  Use = iota // not kept at all
	Name             // its name only: the value is replaced by ""
	Value            // name and value
)

// Header returns what is kept of a reply header (HTTP header, gRPC
// metadata or trailer) named name, matched without regard to case.
func Header(name string) Use {
	switch len(name) {
	case 7:
		if equalFold(name, ":status") {
			return Value
		}
	case 9:
		if equalFold(name, "ratelimit") {
			return Value
		}
	case 10:
		if equalFold(name, "request-id") {
			return Value
		}
	case 11:
		switch {
		case equalFold(name, "retry-after"), equalFold(name, "grpc-status"):
			return Value
		case equalFold(name, "a2a-version"):
			return Name
		}
	case 12:
		if equalFold(name, "content-type") || equalFold(name, "x-request-id") || equalFold(name, "grpc-message") {
			return Value
		}
	case 14:
		switch {
		case equalFold(name, "content-length"):
			return Value
		case equalFold(name, "mcp-session-id"), equalFold(name, "a2a-extensions"):
			return Name
		}
	case 15:
		if equalFold(name, "ratelimit-reset") {
			return Value
		}
	case 16:
		switch {
		case equalFold(name, "ratelimit-policy"), equalFold(name, "x-correlation-id"):
			return Value
		case equalFold(name, "x-a2a-extensions"):
			return Name
		}
	case 17:
		if equalFold(name, "x-ratelimit-reset") || equalFold(name, "transfer-encoding") {
			return Value
		}
	case 18:
		if equalFold(name, "x-envoy-overloaded") {
			return Name
		}
	case 19:
		if equalFold(name, "x-envoy-ratelimited") {
			return Name
		}
	case 20:
		switch {
		case equalFold(name, "x-ratelimit-resource"):
			return Value
		case equalFold(name, "mcp-protocol-version"):
			return Name
		}
	case 23:
		if equalFold(name, "grpc-status-details-bin") {
			return Value
		}
	}
	return Drop
}
