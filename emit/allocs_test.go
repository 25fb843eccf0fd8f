package emit

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestMiddlewareSuccessAddsNoAllocation: a successful reply, JSON or not,
// costs the wrapped handler no allocation in steady state (the benchmarks
// show the time; this fails on the first allocation the middleware adds).
// An error reply must allocate (its event is built), which shows the
// measurement is live.
func TestMiddlewareSuccessAddsNoAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted under the race detector; the run without -race checks them")
	}
	jsonOK := []byte(`{"jsonrpc":"2.0","id":"r1","result":{"id":"t-1","status":{"state":"TASK_STATE_COMPLETED"}}}`)
	jsonErr := []byte(`{"jsonrpc":"2.0","id":"r1","error":{"code":-32001,"message":"Task not found"}}`)
	reqBody := `{"jsonrpc":"2.0","id":"r1","method":"GetTask","params":{"id":"t-1"}}`
	published := 0
	sink := SinkFunc(func(ev *Event) bool { published++; return true })
	for _, c := range []struct {
		name   string
		ct     []string
		body   []byte
		post   bool
		events int
	}{
		{"not JSON", []string{"text/html"}, []byte("<p>ok</p>"), false, 0},
		{"JSON result", []string{"application/json"}, jsonOK, true, 0},
		{"event stream", []string{"text/event-stream"}, []byte("event: status\ndata: {\"state\":\"working\"}\n\n"), true, 0},
		{"JSON-RPC error", []string{"application/json"}, jsonErr, true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header()["Content-Type"] = c.ct // no allocation of its own
				w.WriteHeader(200)
				w.Write(c.body)
			})
			wrapped := Handler(h, sink, Config{Agent: "a", Source: Source{ID: "test"}})
			w := &benchWriter{h: http.Header{}}
			req, _ := http.NewRequest("GET", "http://agent.example/a2a", nil)
			body := strings.NewReader(reqBody)
			rc := io.NopCloser(body)
			run := func(hh http.Handler) func() {
				return func() {
					if c.post {
						body.Reset(reqBody)
						req.Method, req.Body = "POST", rc
					} else {
						req.Method, req.Body = "GET", http.NoBody
					}
					hh.ServeHTTP(w, req)
				}
			}
			published = 0
			base := testing.AllocsPerRun(200, run(h))
			with := testing.AllocsPerRun(200, run(wrapped))
			if published != 201*c.events {
				t.Fatalf("published %d events over 201 replies, want %d each", published, c.events)
			}
			if c.events == 0 && with != base {
				t.Errorf("wrapped: %.1f allocations per reply, unwrapped %.1f: the middleware must add none", with, base)
			}
			if c.events > 0 && with <= base {
				t.Errorf("an error reply allocated nothing (%.1f vs %.1f): the measurement is not seeing the event", with, base)
			}
		})
	}
}
