package parse

import (
	"strings"
	"time"

	"github.com/errtrail/errtrail/redact"
)

// hdrInfo is what the decoder reads from HTTP response headers (or gRPC
// metadata). Values are views of the input.
type hdrInfo struct {
	contentType     string
	retryAfter      string
	rateLimit       string // RateLimit (draft -08+ list, or -07 dictionary)
	rateLimitPolicy string // RateLimit-Policy
	rlResetField    string // RateLimit-Reset (drafts <= -06)
	xrlReset        string // X-RateLimit-Reset (GitHub epoch or Envoy delta)
	xrlResource     string // X-RateLimit-Resource (GitHub) — the limit's name
	requestID       string // X-Request-Id / Request-Id
	envoyLimited    bool   // x-envoy-ratelimited
	envoyOverloaded bool   // x-envoy-overloaded
	transport       uint8  // trMCP, trA2A: a protocol's own transport header was present
}

// Transport headers that name a protocol (docs/record.md, protocol row).
// Only their presence counts; values are never read or kept.
const (
	trMCP uint8 = 1 << iota // Mcp-Session-Id, MCP-Protocol-Version
	trA2A                   // A2A-Extensions, X-A2A-Extensions (v0.3), A2A-Version
)

// transportOf returns the protocol a transport header name belongs to, or 0.
// Each name is defined by one protocol's spec only, so its presence on a
// reply says which protocol the endpoint speaks:
//   - Mcp-Session-Id: MCP streamable HTTP (2025-03-26 … 2025-11-25), set by the
//     server once a session exists; a session credential, so dropped after.
//   - MCP-Protocol-Version: a request header of MCP streamable HTTP
//     (2025-06-18 on); counted when a server or tap echoes it on the reply.
//   - A2A-Extensions (v1.0) / X-A2A-Extensions (v0.3): the response SHOULD
//     list the extensions activated for the request (A2A extensions topic).
//   - A2A-Version: an A2A service parameter (§3.2.6, §14.2.1), request side;
//     counted when echoed, like MCP-Protocol-Version.
func transportOf(n string) uint8 {
	switch len(n) {
	case 11:
		if equalFoldASCII(n, "A2A-Version") {
			return trA2A
		}
	case 14:
		switch n[0] | 0x20 {
		case 'm':
			if equalFoldASCII(n, "Mcp-Session-Id") {
				return trMCP
			}
		case 'a':
			if equalFoldASCII(n, "A2A-Extensions") {
				return trA2A
			}
		}
	case 16:
		if equalFoldASCII(n, "X-A2A-Extensions") {
			return trA2A
		}
	case 20:
		if equalFoldASCII(n, "MCP-Protocol-Version") {
			return trMCP
		}
	}
	return 0
}

// TransportHeader reports whether a response header's name is protocol
// evidence (transportOf): only its presence counts, so a producer that must
// not publish its value (Mcp-Session-Id is a session credential) publishes
// the name with an empty value and the record is the same.
func TransportHeader(name string) bool { return transportOf(name) != 0 }

// transportProtocol is what the transport headers say, or ProtocolUnknown
// when they say nothing or name two protocols at once.
func (h *hdrInfo) transportProtocol() Protocol {
	switch h.transport {
	case trMCP:
		return ProtocolMCP
	case trA2A:
		return ProtocolA2A
	}
	return ProtocolUnknown
}

// keptHeader is what the decoder keeps of a reply header: the allow-list
// of redact.KeptHeader, which is exactly the names observe reads (pinned by
// TestKeptHeadersAreWhatTheDecoderReads). Every other header is dropped as
// it is read, whatever its name or value, so no row can hold it.
func keptHeader(name string) redact.HeaderUse { return redact.KeptHeader(name) }

func readHeaders(hs []Header) hdrInfo {
	var h hdrInfo
	for i := range hs {
		h.observe(hs[i].Name, hs[i].Value)
	}
	return h
}

// observe records what one header says. For a name it reads it also
// returns what is kept of the header, the allow-list's answer for that
// name (pinned by TestKeptHeadersAreWhatTheDecoderReads and
// TestObserveAnswersAsKeptHeader), so that framing need not match the name
// a second time; read is false for every other name, whose fate
// keptHeader decides. The callers keep only what the allow-list allows.
func (h *hdrInfo) observe(n, v string) (use redact.HeaderUse, read bool) {
	if len(n) < 4 {
		return redact.HeaderDrop, false
	}
	// Dispatch on length and first letter before comparing names; the
	// commonest names are compared in their canonical case first, against
	// a constant, which compiles to a word compare or two without a call.
	switch c := n[0] | 0x20; {
	case c == 'c' && len(n) == 12 && (n == "Content-Type" || equalFoldASCII(n, "Content-Type")):
		h.contentType = trimHeader(v)
	case c == 'r' && len(n) == 11 && (n == "Retry-After" || equalFoldASCII(n, "Retry-After")):
		h.retryAfter = trimHeader(v)
	case c == 'r' && len(n) == 9 && equalFoldASCII(n, "RateLimit"):
		h.rateLimit = joinHeader(h.rateLimit, trimHeader(v))
	case c == 'r' && len(n) == 16 && equalFoldASCII(n, "RateLimit-Policy"):
		h.rateLimitPolicy = joinHeader(h.rateLimitPolicy, trimHeader(v))
	case c == 'r' && len(n) == 15 && equalFoldASCII(n, "RateLimit-Reset"):
		h.rlResetField = trimHeader(v)
	case c == 'x' && len(n) == 17 && equalFoldASCII(n, "X-RateLimit-Reset"):
		h.xrlReset = trimHeader(v)
	case c == 'x' && len(n) == 20 && equalFoldASCII(n, "X-RateLimit-Resource"):
		h.xrlResource = trimHeader(v)
	case (c == 'x' || c == 'r') && (equalFoldASCII(n, "X-Request-Id") || equalFoldASCII(n, "Request-Id") || equalFoldASCII(n, "X-Correlation-Id")):
		h.requestID = trimHeader(v)
	case c == 'x' && len(n) == 19 && equalFoldASCII(n, "X-Envoy-Ratelimited"):
		h.envoyLimited = true
		return redact.HeaderName, true
	case c == 'x' && len(n) == 18 && equalFoldASCII(n, "X-Envoy-Overloaded"):
		h.envoyOverloaded = true
		return redact.HeaderName, true
	case c == 'm' || c == 'a' || c == 'x':
		tr := transportOf(n)
		if tr == 0 {
			return redact.HeaderDrop, false
		}
		h.transport |= tr // only the presence counts (kept by name)
		return redact.HeaderName, true
	default:
		return redact.HeaderDrop, false
	}
	return redact.HeaderValue, true
}

// trimHeader is strings.TrimSpace minus the call for a value with nothing
// to trim (raw HTTP framing trims values already).
func trimHeader(s string) string {
	if n := len(s); n == 0 || s[0] > ' ' && s[0] < 0x80 && s[n-1] > ' ' && s[n-1] < 0x80 {
		return s
	}
	return strings.TrimSpace(s)
}

// joinHeader keeps the first line of a split list field; a second line is
// rare enough that the first policy is what we report.
func joinHeader(old, v string) string {
	if old != "" {
		return old
	}
	return v
}

// mediaType returns the content type without parameters, lower-cased
// comparison left to the caller (EqualFold).
func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.TrimSpace(ct)
}

func isJSONMedia(ct string) bool {
	mt := mediaType(ct)
	return equalFoldASCII(mt, "application/json") || equalFoldASCII(mt, "application/a2a+json") ||
		equalFoldASCII(mt, "application/problem+json") ||
		(len(mt) > 5 && equalFoldASCII(mt[len(mt)-5:], "+json"))
}

// isSSEMedia reports whether a Content-Type names an event stream. mediaType
// only shortens a value, so a shorter one is not looked at further.
func isSSEMedia(ct string) bool {
	return len(ct) >= len("text/event-stream") && equalFoldASCII(mediaType(ct), "text/event-stream")
}

// retryAfterMS parses a Retry-After value: delay-seconds or an HTTP-date in
// any of its three forms (RFC 9110 §10.2.3), relative to nowMS. A date in the
// past gives 0.
func retryAfterMS(v string, nowMS int64) (int64, bool) {
	if v == "" {
		return 0, false
	}
	if n, ok := parseIntPrefix([]byte(v)); ok && n >= 0 && isDigits(v) {
		return n * 1000, true
	}
	for _, layout := range httpDateLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			d := t.UnixMilli() - nowMS
			if d < 0 {
				d = 0
			}
			return d, true
		}
	}
	return 0, false
}

var httpDateLayouts = [...]string{
	"Mon, 02 Jan 2006 15:04:05 GMT",  // IMF-fixdate
	"Monday, 02-Jan-06 15:04:05 GMT", // RFC 850
	"Mon Jan _2 15:04:05 2006",       // asctime
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// rateLimitReset reads the seconds until reset from the RateLimit header in
// any draft generation, and the policy name when one is given.
//
//	-08 and later: "default";r=0;t=12   (named list item; t delta seconds)
//	-07:           limit=100, remaining=0, reset=12
//	<= -06:        RateLimit-Reset: 12 (separate field)
func (h *hdrInfo) rateLimitReset() (ms int64, policy string, ok bool) {
	if v := h.rateLimit; v != "" {
		// Take the first list member.
		item := v
		if i := strings.IndexByte(item, ','); i >= 0 && strings.HasPrefix(strings.TrimSpace(item), `"`) {
			item = item[:i]
		}
		item = strings.TrimSpace(item)
		if strings.HasPrefix(item, `"`) {
			if j := strings.IndexByte(item[1:], '"'); j >= 0 {
				policy = item[1 : 1+j]
				if t, found := sfParam(item[2+j:], "t"); found {
					if n, ok := parseIntPrefix([]byte(t)); ok && n >= 0 {
						return n * 1000, policy, true
					}
				}
				return 0, policy, false
			}
		}
		// -07 dictionary form.
		for _, part := range splitComma(v) {
			k, val, found := strings.Cut(strings.TrimSpace(part), "=")
			if found && strings.TrimSpace(k) == "reset" {
				if n, ok := parseIntPrefix([]byte(strings.TrimSpace(val))); ok && n >= 0 {
					return n * 1000, "", true
				}
			}
		}
	}
	if h.rlResetField != "" && isDigits(h.rlResetField) {
		n, _ := parseIntPrefix([]byte(h.rlResetField))
		return n * 1000, "", true
	}
	return 0, "", false
}

// policyName returns the name of the first RateLimit-Policy item, if any.
func (h *hdrInfo) policyName() string {
	if h.rateLimitPolicy == "" {
		return ""
	}
	v := strings.TrimSpace(h.rateLimitPolicy)
	if strings.HasPrefix(v, `"`) {
		if j := strings.IndexByte(v[1:], '"'); j >= 0 {
			return v[1 : 1+j]
		}
	}
	return ""
}

// sfParam finds ;name=value in a structured-field parameter list.
func sfParam(params, name string) (string, bool) {
	for params != "" {
		i := strings.IndexByte(params, ';')
		if i < 0 {
			return "", false
		}
		params = params[i+1:]
		end := strings.IndexByte(params, ';')
		p := params
		if end >= 0 {
			p = params[:end]
		}
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if k == name {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// splitComma splits without allocating more than a small fixed array.
func splitComma(s string) []string {
	var out [8]string
	n := 0
	for n < len(out)-1 {
		i := strings.IndexByte(s, ',')
		if i < 0 {
			break
		}
		out[n] = s[:i]
		n++
		s = s[i+1:]
	}
	out[n] = s
	return out[:n+1]
}

// xRateLimitResetMS reads X-RateLimit-Reset. GitHub sends UTC epoch seconds,
// Envoy and most gateways the delta in seconds. A value above 10^9 is taken
// as epoch seconds (a delta of 31 years is implausible); above 10^12 as epoch
// milliseconds. This is a heuristic, documented in docs/record.md.
func xRateLimitResetMS(v string, nowMS int64) (int64, bool) {
	if !isDigits(v) {
		return 0, false
	}
	n, ok := parseIntPrefix([]byte(v))
	if !ok {
		return 0, false
	}
	var d int64
	switch {
	case n >= 1e12:
		d = n - nowMS
	case n >= 1e9:
		d = n*1000 - nowMS
	default:
		d = n * 1000
	}
	if d < 0 {
		d = 0
	}
	return d, true
}

// durationMS parses a ProtoJSON Duration string such as "12s" or "1.500s".
func durationMS(s []byte) (int64, bool) {
	if len(s) < 2 || s[len(s)-1] != 's' {
		return 0, false
	}
	s = s[:len(s)-1]
	neg := false
	if s[0] == '-' {
		neg, s = true, s[1:]
	}
	var sec, frac, scale int64 = 0, 0, 1000
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if sec > 1<<40 {
			return 0, false
		}
		sec = sec*10 + int64(s[i]-'0')
	}
	if i == 0 {
		return 0, false
	}
	if i < len(s) {
		if s[i] != '.' {
			return 0, false
		}
		i++
		for ; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			if scale > 1 {
				scale /= 10
				frac += int64(s[i]-'0') * scale
			}
		}
	}
	ms := sec*1000 + frac
	if neg {
		ms = -ms
	}
	return ms, true
}
