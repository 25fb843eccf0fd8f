package emit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/parse"
)

func TestUnitParseTraceparent(t *testing.T) {
	const tr, sp = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	good := map[string]bool{
		"00-" + tr + "-" + sp + "-01":                            true,
		"00-" + tr + "-" + sp + "-00":                            true,
		"01-" + tr + "-" + sp + "-01-whatever":                   true, // a later version: its first four fields
		"00-" + strings.ToUpper(tr) + "-" + sp + "-01":           false,
		"00-00000000000000000000000000000000-" + sp + "-01":      false,
		"00-" + tr + "-0000000000000000-01":                      false,
		"ff-" + tr + "-" + sp + "-01":                            false,
		"00-" + tr + "-" + sp + "-01-extra":                      false, // version 00 is exactly 55 bytes
		"00-" + tr + "-" + sp:                                    false,
		"00_" + tr + "-" + sp + "-01":                            false,
		"00-" + tr[:31] + "g-" + sp + "-01":                      false,
		"someone@example.com-" + tr + "-" + sp + "-01"[:0] + "x": false,
	}
	for v, want := range good {
		gotTr, gotSp, ok := ParseTraceparent(v)
		if ok != want {
			t.Errorf("ParseTraceparent(%q) ok = %v; want %v", v, ok, want)
		}
		if want && (gotTr != tr || gotSp != sp) {
			t.Errorf("ParseTraceparent(%q) = %q, %q", v, gotTr, gotSp)
		}
		if !want && (gotTr != "" || gotSp != "") {
			t.Errorf("ParseTraceparent(%q) returned ids %q, %q for a bad value", v, gotTr, gotSp)
		}
	}
}

// TestMiddlewareTraceContext: the error event of a request that carried a
// traceparent has its trace and parent ids, which the decoder reads back;
// Config.TraceContext (the active span, in code linked with OpenTelemetry)
// wins over the header; a request with a malformed traceparent publishes
// its error without trace ids, and a successful reply publishes nothing.
func TestMiddlewareTraceContext(t *testing.T) {
	const tr, sp = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	const serverSpan = "b7ad6b7169203331"
	fail := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			io.WriteString(w, "ok")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(503)
		io.WriteString(w, `{"error":{"code":503,"status":"UNAVAILABLE","message":"busy"}}`)
	})
	run := func(cfg Config, path, traceparent string) []parse.Record {
		sink := &capSink{}
		srv := httptest.NewServer(Handler(fail, sink, cfg))
		defer srv.Close()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if traceparent != "" {
			req.Header.Set("traceparent", traceparent)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		var out []parse.Record
		d := parse.NewDecoder(parse.Options{})
		for _, ev := range sink.all() {
			var rec parse.Record
			if err := d.DecodeMessage(ev, nil, 0, &rec); err != nil {
				t.Fatalf("%s: %v", ev, err)
			}
			out = append(out, *rec.Clone())
		}
		return out
	}
	recs := run(Config{Agent: "a"}, "/v1/tasks/t1", "00-"+tr+"-"+sp+"-01")
	if len(recs) != 1 || recs[0].TraceID != tr || recs[0].SpanID != sp {
		t.Fatalf("traceparent: %+v; want one record with the trace and parent ids", recs)
	}
	fromSpan := Config{Agent: "a", TraceContext: func(*http.Request) (string, string) { return tr, serverSpan }}
	recs = run(fromSpan, "/v1/tasks/t1", "00-"+tr+"-"+sp+"-01")
	if len(recs) != 1 || recs[0].SpanID != serverSpan {
		t.Fatalf("TraceContext: %+v; want the active span's id", recs)
	}
	recs = run(Config{Agent: "a"}, "/v1/tasks/t1", "00-"+tr+"-"+sp)
	if len(recs) != 1 || recs[0].TraceID != "" || recs[0].SpanID != "" {
		t.Fatalf("malformed traceparent: %+v; want the error without trace ids", recs)
	}
	if recs = run(Config{Agent: "a"}, "/ok", "00-"+tr+"-"+sp+"-01"); len(recs) != 0 {
		t.Fatalf("a success published %d events", len(recs))
	}
}
