package web

import (
	"testing"

	"github.com/errtrail/errtrail/internal/tracelink"
)

// TestUnitStoryTraceLink: with --links.trace-url the story links the
// record's trace through the template; without it, or for a stored trace id
// that is not a W3C trace id, no trace link appears at all.
func TestUnitStoryTraceLink(t *testing.T) {
	const tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tp, err := tracelink.Parse("links.trace-url", "https://tempo.example/trace/{trace_id}?span={span_id}")
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(Config{TraceURL: tp})
	r.svc.story.Record.TraceID, r.svc.story.Record.SpanID, r.svc.story.Record.Origin = tid, sid, "otlp"
	_, body := r.get(t, storyPath(typedID))
	wantText(t, body,
		`<a href="https://tempo.example/trace/`+tid+`?span=`+sid+`" rel="noreferrer">The trace around this reply</a>`,
		`<dt>trace_id</dt><dd>`+tid+`</dd>`, `<dt>span_id</dt><dd>`+sid+`</dd>`, `<dt>origin</dt><dd>otlp</dd>`)

	// No template: the ids show, no link.
	r = newRig(Config{})
	r.svc.story.Record.TraceID, r.svc.story.Record.SpanID = tid, sid
	_, body = r.get(t, storyPath(typedID))
	wantText(t, body, `<dt>trace_id</dt><dd>`+tid+`</dd>`)
	wantNoText(t, body, "The trace around this reply", "tempo.example")

	// A hostile stored value builds no link, and is escaped where shown.
	r = newRig(Config{TraceURL: tp})
	r.svc.story.Record.TraceID, r.svc.story.Record.SpanID = `"><script>alert(1)</script>`, sid
	_, body = r.get(t, storyPath(typedID))
	wantNoText(t, body, "The trace around this reply", "<script>alert")
}
