package parse

import (
	"strings"
	"testing"

	"github.com/errtrail/errtrail/redact"
)

// readByObserve are the reply headers observe reads, with a value it
// understands, and whether their value matters (false: only the presence).
var readByObserve = []struct {
	name, value string
	value_      bool
}{
	{"Content-Type", "application/json", true},
	{"Retry-After", "12", true},
	{"RateLimit", `"default";r=0;t=12`, true},
	{"RateLimit-Policy", `"default";q=100;w=60`, true},
	{"RateLimit-Reset", "12", true},
	{"X-RateLimit-Reset", "12", true},
	{"X-RateLimit-Resource", "search", true},
	{"X-Request-Id", "req-1", true},
	{"Request-Id", "req-1", true},
	{"X-Correlation-Id", "req-1", true},
	{"X-Envoy-Ratelimited", "true", false},
	{"X-Envoy-Overloaded", "true", false},
	{"Mcp-Session-Id", "sess-1", false},
	{"MCP-Protocol-Version", "2025-06-18", false},
	{"A2A-Extensions", "https://ext.example/x", false},
	{"X-A2A-Extensions", "https://ext.example/x", false},
	{"A2A-Version", "1.0", false},
}

// framing are the kept headers the framing of a raw reply reads (httpraw.go,
// grpc.go) rather than observe.
var framing = []string{"Content-Length", "Transfer-Encoding", ":status", "grpc-status", "grpc-message", "grpc-status-details-bin"}

// TestKeptHeadersAreWhatTheDecoderReads pins the allow-list
// (redact.KeptHeader) to the decoder: every header observe reads is kept
// (its value only when the value is read), the framing headers are kept,
// and a header observe does not read is dropped, whatever its case or a
// near miss of a kept name.
func TestKeptHeadersAreWhatTheDecoderReads(t *testing.T) {
	kept := map[string]bool{}
	for _, h := range readByObserve {
		var got hdrInfo
		got.observe(h.name, h.value)
		if got == (hdrInfo{}) {
			t.Errorf("observe does not read %s: drop it from redact.KeptHeader or from this list", h.name)
		}
		want := redact.HeaderName
		if h.value_ {
			want = redact.HeaderValue
		}
		for _, n := range []string{h.name, strings.ToLower(h.name), strings.ToUpper(h.name)} {
			if u := redact.KeptHeader(n); u != want {
				t.Errorf("KeptHeader(%q) = %d; want %d", n, u, want)
			}
		}
		kept[strings.ToLower(h.name)] = true
	}
	for _, n := range framing {
		if redact.KeptHeader(n) != redact.HeaderValue {
			t.Errorf("KeptHeader(%q): the framing header is not kept", n)
		}
		kept[strings.ToLower(n)] = true
	}
	others := []string{"Authorization", "Set-Cookie", "WWW-Authenticate", "Location", "Link", "Refresh",
		"X-Key", "X-Auth", "X-Session", "X-Goog-Iap-Jwt-Assertion", "Cf-Access-Jwt-Assertion", "X-Amzn-Oidc-Data",
		"Openai-Organization", "X-Vendor-Key", "Date", "Server", "Vary", "X-RateLimit-Limit", "X-RateLimit-Remaining",
		"grpc-encoding", "Mcp-Session", "X-Request-Id2", "Retry-Afte", "Content-Typ", "A2A-Extension", "x-envoy-overloade",
		strings.Repeat("X-Very-Long-Vendor-Name-", 3) + "Token"}
	for _, n := range others {
		if kept[strings.ToLower(n)] {
			continue
		}
		var got hdrInfo
		got.observe(n, "v")
		if got != (hdrInfo{}) {
			t.Errorf("observe reads %s, which redact.KeptHeader drops", n)
		}
		if u := redact.KeptHeader(n); u != redact.HeaderDrop {
			t.Errorf("KeptHeader(%q) = %d; want dropped", n, u)
		}
	}
}

// TestObserveAnswersAsKeptHeader holds observe's second answer, which raw
// framing takes instead of asking redact.KeptHeader again, to the
// allow-list: for every name observe reads, in any case, it says read and
// gives KeptHeader's answer; for the framing headers, the dropped names and
// near misses of kept names it says not read, so that KeptHeader decides.
func TestObserveAnswersAsKeptHeader(t *testing.T) {
	mixed := func(s string) string { // every other letter upper case
		b := []byte(strings.ToLower(s))
		for i := 0; i < len(b); i += 2 {
			b[i] = strings.ToUpper(string(b[i]))[0]
		}
		return string(b)
	}
	for _, h := range readByObserve {
		for _, n := range []string{h.name, strings.ToLower(h.name), strings.ToUpper(h.name), mixed(h.name)} {
			var hi hdrInfo
			use, read := hi.observe(n, h.value)
			if !read || use != redact.KeptHeader(n) {
				t.Errorf("observe(%q) = %d, read %v; KeptHeader says %d", n, use, read, redact.KeptHeader(n))
			}
		}
	}
	var near []string
	for _, h := range readByObserve {
		near = append(near, h.name[1:], h.name[:len(h.name)-1], h.name+"s", "X"+h.name[1:], strings.Replace(h.name, "-", "_", 1))
	}
	for _, n := range append(append(append([]string{}, framing...), "Authorization", "Set-Cookie", "Date", "Server", "Mcp", "x", ""), near...) {
		var hi hdrInfo
		if use, read := hi.observe(n, "v"); read {
			if use != redact.KeptHeader(n) {
				t.Errorf("observe(%q) = %d, read; KeptHeader says %d", n, use, redact.KeptHeader(n))
			}
			if hi == (hdrInfo{}) {
				t.Errorf("observe(%q) says read but recorded nothing", n)
			}
		}
	}
}

// plantedHeaders are response headers no row may hold, with values that
// must not survive anywhere.
var plantedHeaders = [][2]string{
	{"X-Vendor-Api-Secret", "planted-vendor-4q7"},
	{"X-Goog-Iap-Jwt-Assertion", "eyJplanted.iap.assertion"},
	{"X-Key", "planted-xkey-88"},
	{"X-Auth", "planted-xauth-91"},
	{"X-Session", "planted-xsession-19"},
	{"X-" + strings.Repeat("Long-", 14) + "Token", "planted-longtoken-55"},
	{"Location", "https://user:planted-pass-12@agent.example/cb?access_token=planted-at-33&code=planted-code-44"},
	{"Link", "<https://agent.example/next?access_token=planted-link-66>; rel=next"},
	{"Refresh", "0; url=https://agent.example/?code=planted-refresh-77"},
	{"WWW-Authenticate", `Bearer error="invalid_token", error_description="planted-desc-99"`},
	{"Mcp-Session-Id", "planted-session-10"},
}

// TestRawReplyKeepsOnlyAllowedHeaders decodes a raw HTTP reply and its
// event JSON form carrying the planted headers and the kept ones: the
// Reply's headers hold no planted value (a planted name at most, for the
// transport header), and the kept headers still drive the record.
func TestRawReplyKeepsOnlyAllowedHeaders(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":"r1","error":{"code":-32029,"message":"rate limited"}}`
	var raw strings.Builder
	raw.WriteString("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 12\r\nX-Request-Id: req-kept-1\r\n")
	ev := `{"v":1,"observed_at":1764489600123,"reply":{"http_status":429,"headers":[["Content-Type","application/json"],["Retry-After","12"],["X-Request-Id","req-kept-1"]`
	for _, h := range plantedHeaders {
		raw.WriteString(h[0] + ": " + h[1] + "\r\n")
		ev += `,["` + h[0] + `",` + strings.ReplaceAll(`"`+strings.ReplaceAll(h[1], `"`, `\"`)+`"`, "\r", "") + `]`
	}
	raw.WriteString("\r\n" + body)
	ev += `],"body_json":` + body + `}}`
	for name, msg := range map[string]string{"raw": raw.String(), "event": ev} {
		d := NewDecoder(Options{})
		var rec Record
		if err := d.DecodeMessage([]byte(msg), nil, 1764489600123, &rec); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, h := range d.sc.rep.Headers {
			if strings.Contains(h.Value, "planted") {
				t.Errorf("%s: header %s: %q kept", name, h.Name, h.Value)
			}
		}
		if rec.RetryAfterMS != 12000 || rec.HTTPRequestID != "req-kept-1" || rec.Protocol != ProtocolMCP {
			t.Errorf("%s: retry after %d, request id %q, protocol %v: the kept headers no longer drive the record", name, rec.RetryAfterMS, rec.HTTPRequestID, rec.Protocol)
		}
	}
}
