package emit

import (
	"net/http"
	"testing"
)

// TestTransportHeaderKeptWithoutValue: Mcp-Session-Id is a session
// credential and protocol evidence at once: the event keeps its name (so the
// decoder still knows the reply is MCP) and never its value; other
// credential headers go entirely.
func TestTransportHeaderKeptWithoutValue(t *testing.T) {
	h := http.Header{}
	h.Set("Mcp-Session-Id", "sess-secret-4f2a")
	h.Set("Authorization", "Bearer tok-secret")
	h.Set("Content-Type", "application/json")
	got := AppendHeaders(nil, h, "")
	want := []Header{{"Content-Type", "application/json"}, {"Mcp-Session-Id", ""}}
	if len(got) != len(want) {
		t.Fatalf("headers %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("header %d = %v; want %v", i, got[i], want[i])
		}
	}
	cleaned := CleanHeaders([]Header{{"Mcp-Session-Id", "sess-secret-4f2a"}, {"Cookie", "a=b"}, {"Retry-After", "3"}}, "")
	if len(cleaned) != 2 || cleaned[0] != (Header{"Mcp-Session-Id", ""}) || cleaned[1] != (Header{"Retry-After", "3"}) {
		t.Errorf("CleanHeaders = %v", cleaned)
	}
}
