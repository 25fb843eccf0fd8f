package tracelink

import (
	"strings"
	"testing"
)

const (
	tid = "4bf92f3577b34da6a3ce929d0e0e4736"
	sid = "00f067aa0ba902b7"
)

// TestParseRefuses: a template that could become anything but an http(s)
// link to a host is refused with an error naming the flag; the good ones
// are kept as given.
func TestParseRefuses(t *testing.T) {
	for _, bad := range []string{
		"javascript:alert(1)//{trace_id}",
		"JavaScript:alert(document.cookie)/{trace_id}",
		"data:text/html,<script>{trace_id}</script>",
		"file:///etc/{trace_id}",
		"ftp://tempo.example/{trace_id}",
		"//tempo.example/trace/{trace_id}",
		"/trace/{trace_id}",
		"https://tempo.example/trace/",              // no placeholder
		"https://tempo.example/trace/{traceid}",     // misspelt
		"https://tempo.example/{trace_id}/{tenant}", // unknown placeholder
		"https://user:pw@tempo.example/{trace_id}",
		"https://tempo.example/{trace_id}\"onclick=x",
		"https:tempo/{trace_id}",
	} {
		tp, err := Parse("links.trace-url", bad)
		if err == nil || !strings.Contains(err.Error(), "--links.trace-url") {
			t.Errorf("%q: err %v, want a refusal naming the flag", bad, err)
		}
		if tp.Enabled() || tp.URL(tid, sid) != "" {
			t.Errorf("%q: a refused template builds links", bad)
		}
	}
	for _, good := range []string{
		"https://tempo.example/trace/{trace_id}",
		"http://jaeger.local:16686/trace/{trace_id}?uiFind={span_id}",
		"https://grafana.example/explore?left=%7B%22queries%22%3A%5B%7B%22query%22%3A%22{trace_id}%22%7D%5D%7D",
	} {
		if tp, err := Parse("links.trace-url", good); err != nil || tp.String() != good {
			t.Errorf("%q: %v", good, err)
		}
	}
	if tp, err := Parse("links.trace-url", ""); err != nil || tp.Enabled() || tp.URL(tid, sid) != "" {
		t.Errorf("empty template: %v, enabled %v", err, tp.Enabled())
	}
}

// TestURL: well-formed ids fill the placeholders; a malformed or hostile
// stored value builds no link at all rather than a changed one.
func TestURL(t *testing.T) {
	tp, err := Parse("links.trace-url", "https://tempo.example/trace/{trace_id}?span={span_id}")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tp.URL(tid, sid), "https://tempo.example/trace/"+tid+"?span="+sid; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, c := range [][2]string{
		{"", sid},
		{strings.ToUpper(tid), sid},
		{tid[:31], sid},
		{"00000000000000000000000000000000", sid},
		{"4bf92f3577b34da6a3ce929d0e0e47\"<", sid},
		{"../../../../evil.example/x?a=bcd", sid},
		{tid, ""}, // the template needs the span
		{tid, "0000000000000000"},
		{tid, "00f067aa0ba902b7&x=1"},
	} {
		if got := tp.URL(c[0], c[1]); got != "" {
			t.Errorf("URL(%q, %q) = %q, want no link", c[0], c[1], got)
		}
	}
	only, _ := Parse("links.trace-url", "https://tempo.example/trace/{trace_id}")
	if got := only.URL(tid, ""); got != "https://tempo.example/trace/"+tid {
		t.Errorf("a template without {span_id} needs no span: %q", got)
	}
}
