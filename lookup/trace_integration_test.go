package lookup

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestStoryByTraceID: a trace id finds the error stored with it like the
// other ids (MatchedAs "trace_id"), and the story's record carries the
// trace and span ids and the origin; a record stored without a trace has
// none, and a trace id nobody stored is not found.
func TestStoryByTraceID(t *testing.T) {
	conn, opts := openDB(t)
	at := time.Now().Add(-5 * time.Minute).Truncate(time.Millisecond)
	const trace, span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	store(t, conn, opts,
		ev{ID: "ev-trace-1", At: at, Agent: "lead-agent", Caller: "buyer-3", Status: 200, Binding: "jsonrpc",
			Body: aapRateLimited("err_01HZ9TRACE1"), Trace: [2]string{trace, span}},
		ev{ID: "ev-trace-2", At: at, Agent: "lead-agent", Caller: "buyer-3", Status: 200, Binding: "jsonrpc",
			Body: aapRateLimited("err_01HZ9TRACE2")})
	f := newFinder(conn, opts)
	ctx := context.Background()
	st, err := f.Story(ctx, trace, FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.MatchedAs != "trace_id" || st.Record.EventID != "ev-trace-1" || st.Record.TraceID != trace ||
		st.Record.SpanID != span || st.Record.Origin != "event" {
		t.Errorf("Story(trace id) = matched %q, record %s trace %q span %q origin %q",
			st.MatchedAs, st.Record.EventID, st.Record.TraceID, st.Record.SpanID, st.Record.Origin)
	}
	st, err = f.Story(ctx, "err_01HZ9TRACE2", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Record.TraceID != "" || st.Record.SpanID != "" || st.Record.Origin != "event" {
		t.Errorf("a record without a trace: trace %q span %q origin %q", st.Record.TraceID, st.Record.SpanID, st.Record.Origin)
	}
	if _, err := f.Story(ctx, "ffffffffffffffffffffffffffffffff", FindOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown trace id: %v; want ErrNotFound", err)
	}
}
