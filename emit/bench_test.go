package emit

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// benchWriter is a minimal ResponseWriter reused across iterations, so the
// figures show what the middleware adds, not a recorder's own cost.
type benchWriter struct {
	h      http.Header
	status int
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) WriteHeader(c int)           { w.status = c }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }

type nopSink struct{}

func (nopSink) Publish(ev *Event) bool {
	b, _ := ev.AppendJSON(make([]byte, 0, 1024))
	_ = b
	return true
}

// BenchmarkMiddleware: each reply kind, unwrapped ("base") and wrapped,
// alternated in one run. Opt-in figures, not assertions:
//
//	go test ./emit -run '^$' -bench Middleware -benchmem -count 5
func BenchmarkMiddleware(b *testing.B) {
	jsonOK := []byte(`{"jsonrpc":"2.0","id":"r1","result":{"id":"t-1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"parts":[{"text":"` + strings.Repeat("x", 600) + `"}]}]}}`)
	jsonErr := []byte(`{"jsonrpc":"2.0","id":"r1","error":{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`)
	reqBody := `{"jsonrpc":"2.0","id":"r1","method":"GetTask","params":{"id":"t-1"}}`
	cases := []struct {
		name   string
		ct     string
		status int
		body   []byte
		post   bool
	}{
		{"non-JSON-200", "text/html", 200, []byte("<html>hello</html>"), false},
		{"JSON-200", "application/json", 200, jsonOK, true},
		{"error", "application/json", 200, jsonErr, true},
	}
	for _, c := range cases {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body != nil {
				io.Copy(io.Discard, r.Body)
			}
			w.Header().Set("Content-Type", c.ct)
			w.WriteHeader(c.status)
			w.Write(c.body)
		})
		wrapped := Handler(h, nopSink{}, Config{Agent: "a"})
		for _, v := range []struct {
			name string
			h    http.Handler
		}{{"base", h}, {"emit", wrapped}} {
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				w := &benchWriter{h: http.Header{}}
				req, _ := http.NewRequest("GET", "http://agent.example/a2a", nil)
				body := strings.NewReader(reqBody)
				rc := io.NopCloser(body)
				if c.post {
					req.Method = "POST"
				} else {
					req.Body = http.NoBody
				}
				b.ReportAllocs()
				for b.Loop() {
					if c.post {
						body.Reset(reqBody)
						req.Body = rc
					}
					v.h.ServeHTTP(w, req)
				}
			})
		}
	}
}
