package parse

import (
	"fmt"
	"testing"
)

// TestTraceContextFromEventAndHeaders: the event's trace_id and span_id,
// and the errtrail-trace-id / errtrail-span-id headers of the raw forms,
// reach the record when they are W3C trace context; any other value (wrong
// length, upper case, all zero, an e-mail address) is dropped, never
// stored, and the record is still decoded; a trace_id that is not a string
// is a wrong_type error like every other context field.
func TestTraceContextFromEventAndHeaders(t *testing.T) {
	const trace, span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	d := NewDecoder(Options{})
	var rec Record
	ev := func(tr, sp string) []byte {
		return []byte(fmt.Sprintf(`{"v":1,"observed_at":1,"agent":"a","trace_id":%s,"span_id":%s,"reply":{"binding":"http","http_status":503}}`, tr, sp))
	}
	if err := d.DecodeMessage(ev(`"`+trace+`"`, `"`+span+`"`), nil, 0, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.TraceID != trace || rec.SpanID != span || rec.Origin != OriginEvent {
		t.Errorf("event: trace %q span %q origin %q", rec.TraceID, rec.SpanID, rec.Origin)
	}
	for _, bad := range [][2]string{
		{`"4BF92F3577B34DA6A3CE929D0E0E4736"`, `"00F067AA0BA902B7"`},
		{`"00000000000000000000000000000000"`, `"0000000000000000"`},
		{`"4bf92f3577b34da6"`, `"00f067aa0ba902b700"`},
		{`"someone@example.com"`, `"x"`},
	} {
		if err := d.DecodeMessage(ev(bad[0], bad[1]), nil, 0, &rec); err != nil {
			t.Fatalf("%s: %v; want the record decoded without the trace", bad, err)
		}
		if rec.TraceID != "" || rec.SpanID != "" || rec.Kind == "" {
			t.Errorf("%s: kept trace %q span %q (kind %q)", bad, rec.TraceID, rec.SpanID, rec.Kind)
		}
	}
	err := d.DecodeMessage(ev(`42`, `null`), nil, 0, &rec)
	if de, ok := err.(*DecodeError); !ok || de.Reason != ErrWrongType || de.Path != "event.trace_id" {
		t.Errorf("trace_id 42: %v; want wrong_type at event.trace_id", err)
	}
	raw := []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
	hs := []MsgHeader{{Key: "errtrail-trace-id", Value: []byte(trace)}, {Key: "errtrail-span-id", Value: []byte(span)}}
	if err := d.DecodeMessage(raw, hs, 1, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.TraceID != trace || rec.SpanID != span || rec.Origin != OriginRaw {
		t.Errorf("raw: trace %q span %q origin %q", rec.TraceID, rec.SpanID, rec.Origin)
	}
	c := rec.Clone()
	if c.TraceID != trace || c.SpanID != span {
		t.Errorf("Clone lost the trace: %+v", c)
	}
}
