package tracelink

import (
	"fmt"
	"net/url"
	"strings"
)

// Placeholders a template may hold.
const (
	TraceID = "{trace_id}"
	SpanID  = "{span_id}"
)

// Template is a validated trace link template; the zero value builds no
// links.
type Template struct {
	raw string
}

// Parse validates tmpl, the value of the flag named flag ("" is no link).
func Parse(flag, tmpl string) (Template, error) {
	if tmpl == "" {
		return Template{}, nil
	}
	bad := func(why string) (Template, error) {
		return Template{}, fmt.Errorf("--%s: %s (want an http(s) URL holding {trace_id}, e.g. https://tempo.example/trace/{trace_id})", flag, why)
	}
	if !strings.Contains(tmpl, TraceID) {
		return bad("no {trace_id} placeholder")
	}
	rest := strings.NewReplacer(TraceID, "", SpanID, "").Replace(tmpl)
	if strings.ContainsAny(rest, "{}") {
		return bad("only {trace_id} and {span_id} may appear in braces")
	}
	// Check the URL with sample ids in the placeholders' places: the ids
	// are hex, so whatever parses here parses the same with real ids.
	u, err := url.Parse(strings.NewReplacer(TraceID, "0af7651916cd43dd8448eb211c80319c", SpanID, "b7ad6b7169203331").Replace(tmpl))
	switch {
	case err != nil:
		return bad("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("scheme " + fmt.Sprintf("%q", u.Scheme) + " refused")
	case u.Host == "" || u.Opaque != "":
		return bad("no host")
	case u.User != nil:
		return bad("credentials in the URL")
	case strings.ContainsAny(tmpl, " \t\r\n\"'<>\\`"):
		return bad("spaces, quotes, angle brackets or backslashes")
	}
	return Template{raw: tmpl}, nil
}

// Enabled reports whether links are built.
func (t Template) Enabled() bool { return t.raw != "" }

// String is the template as given.
func (t Template) String() string { return t.raw }

// URL is the link to the trace of traceID (and span spanID, "" when
// unknown), or "" when no template is set, traceID is not a W3C trace id,
// or the template needs a span id that is missing or malformed.
func (t Template) URL(traceID, spanID string) string {
	if t.raw == "" || !hexID(traceID, 32) {
		return ""
	}
	if strings.Contains(t.raw, SpanID) && !hexID(spanID, 16) {
		return ""
	}
	// The values are hex digits already; escaping them is what keeps
	// that true should the checks above ever be loosened.
	return strings.NewReplacer(TraceID, url.QueryEscape(traceID), SpanID, url.QueryEscape(spanID)).Replace(t.raw)
}

// hexID reports whether s is n lowercase hex digits, not all zero (W3C
// Trace Context's trace-id and parent-id).
func hexID(s string, n int) bool {
	if len(s) != n {
		return false
	}
	zero := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9' || c >= 'a' && c <= 'f':
		default:
			return false
		}
		if c != '0' {
			zero = false
		}
	}
	return !zero
}
