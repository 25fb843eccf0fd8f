package ingest_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"
	"google.golang.org/protobuf/proto"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/otlpin"
)

func otlpStr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// otlpExpect is what one OTLP test message must become.
type otlpExpect struct {
	rows  map[string]uint32 // event_id → kafka_index
	ok    int
	other int
}

// otlpTraceMessages returns n ExportTraceServiceRequest messages (otlp_proto),
// message i holding 1 + i%6 protocol spans of which those with (i+j)%3 != 0
// failed, and every fourth a database span that describes no protocol
// reply; and the rows they must make.
func otlpTraceMessages(run string, from, n int, exp *otlpExpect) []kafka.Message {
	now := uint64(time.Now().UnixNano())
	var out []kafka.Message
	for i := from; i < from+n; i++ {
		tid := make([]byte, 16)
		copy(tid, run)
		binary.BigEndian.PutUint64(tid[8:], uint64(i)+1)
		var spans []*tracepb.Span
		for j := 0; j < 1+i%6; j++ {
			sid := make([]byte, 8)
			binary.BigEndian.PutUint64(sid, uint64(j)+1)
			sp := &tracepb.Span{TraceId: tid, SpanId: sid, Name: "tools/call", Kind: tracepb.Span_SPAN_KIND_SERVER,
				StartTimeUnixNano: now, EndTimeUnixNano: now + uint64(j),
				Attributes: []*commonpb.KeyValue{otlpStr("mcp.method.name", "tools/call"), otlpStr("jsonrpc.request.id", fmt.Sprint(j))}}
			if (i+j)%3 != 0 {
				sp.Attributes = append(sp.Attributes, otlpStr("error.type", "-32603"), otlpStr("enduser.id", "caller-"+fmt.Sprint(i%5)))
				sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "internal error"}
				exp.rows["otlp-"+hex.EncodeToString(tid)+"-"+hex.EncodeToString(sid)] = uint32(len(spans))
			} else {
				exp.ok++
			}
			spans = append(spans, sp)
		}
		if i%4 == 0 {
			spans = append([]*tracepb.Span{{TraceId: tid, SpanId: []byte("dbspan01"), Name: "SELECT", Kind: tracepb.Span_SPAN_KIND_CLIENT,
				Attributes: []*commonpb.KeyValue{otlpStr("db.system.name", "postgresql")}, Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR}}}, spans...)
			exp.other++
			// The protocol spans moved one place on.
			for j := range spans[1:] {
				id := "otlp-" + hex.EncodeToString(tid) + "-" + hex.EncodeToString(spans[j+1].SpanId)
				if _, ok := exp.rows[id]; ok {
					exp.rows[id] = uint32(j + 1)
				}
			}
		}
		b, _ := proto.Marshal(&tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
			Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{otlpStr("service.name", "otlp-agent-"+fmt.Sprint(i%3))}},
			ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}}})
		out = append(out, kafka.Message{Key: []byte(fmt.Sprint(i)), Value: b,
			Headers: []kafka.Header{{Key: "x-tenant", Value: []byte("t1")}}})
	}
	return out
}

// otlpLogMessages returns n ExportLogsServiceRequest messages (otlp_json),
// each with one failed MCP log record (index 0) and one INFO record.
func otlpLogMessages(run string, n int, exp *otlpExpect) []kafka.Message {
	var out []kafka.Message
	for i := 0; i < n; i++ {
		tid := fmt.Sprintf("%016x%016x", 0xabc, i+1)
		v := fmt.Sprintf(`{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"log-agent"}}]},"scopeLogs":[{"logRecords":[
{"timeUnixNano":"%d","severityNumber":17,"traceId":"%s","spanId":"00000000000000%02x","body":{"stringValue":"Method not found %s"},
 "attributes":[{"key":"mcp.method.name","value":{"stringValue":"weather/forecast"}},{"key":"error.type","value":{"stringValue":"-32601"}}]},
{"timeUnixNano":"%d","severityNumber":9,"body":{"stringValue":"fine"},"attributes":[{"key":"mcp.method.name","value":{"stringValue":"tools/list"}}]}]}]}]}`,
			time.Now().UnixNano(), tid, i%250+1, run, time.Now().UnixNano())
		exp.ok++
		out = append(out, kafka.Message{Key: []byte(fmt.Sprint(i)), Value: []byte(v)})
		exp.rows["log:"+tid] = 0
	}
	return out
}

// TestOTLPTopicsExactlyOnce: OTLP messages on real Kafka (spans in
// otlp_proto, log records in otlp_json) consumed next to an event topic,
// ingest stopped mid-way and started again: every failed protocol reply is
// stored exactly once at its (offset, kafka_index), successful and
// non-protocol spans make no row, the unparsable message is one dead
// letter with reason bad_otlp, and landing saw no row twice.
func TestOTLPTopicsExactlyOnce(t *testing.T) {
	s := newStack(t, 2)
	logsTopic, eventsTopic := s.topic+".logs", s.topic+".events"
	createTopic(t, s.brokers[0], logsTopic, 1)
	createTopic(t, s.brokers[0], eventsTopic, 1)
	t.Cleanup(func() { deleteTopic(s.brokers[0], logsTopic); deleteTopic(s.brokers[0], eventsTopic) })

	exp := &otlpExpect{rows: map[string]uint32{}}
	first := otlpTraceMessages("otlprun1", 0, 60, exp)
	first = append(first, kafka.Message{Key: []byte("bad"), Value: []byte("\xff\xfe not protobuf \x00")})
	s.produce(t, first)
	s.produceTo(t, logsTopic, otlpLogMessages("r1", 20, exp))
	const events = 40
	s.produceTo(t, eventsTopic, goodEvents("otlpmix", 0, events))

	reg := prometheus.NewRegistry()
	m := ingest.NewMetrics(reg)
	cfg := s.config(testLogger(t), m)
	cfg.Topics = []string{s.topic, logsTopic, eventsTopic}
	cfg.OTLP = map[string]otlpin.Format{s.topic: {Signal: otlpin.Traces, Encoding: otlpin.Proto}, logsTopic: {Signal: otlpin.Logs, Encoding: otlpin.JSON}}
	cfg.Limits = ingest.Limits{Rows: 7, Wait: 200 * time.Millisecond} // many small batches
	cfg.InsertBlockRows = 2                                           // a message's rows span several blocks' worth

	run := s.start(t, cfg)
	s.waitFor(t, 5*time.Minute, "some rows stored", func(c counts) bool { return c.errors > 0 })
	if err := run.stop(t); err != nil {
		t.Fatalf("first run: %v", err)
	}
	mid, _ := s.counts(t)
	t.Logf("stopped mid-way at %s", mid)

	// More messages while ingest is down, among them a Collector's re-send
	// of one (the same spans in a new message: the dedup window drops its
	// rows by event_id), then a second process.
	second := otlpTraceMessages("otlprun2", 60, 40, exp)
	resent := second[5] // message 65: 6 spans, 4 of them failed
	resentRows := 4
	second = append(second, kafka.Message{Key: resent.Key, Value: resent.Value})
	s.produce(t, second)
	want := uint64(len(exp.rows) + events)
	m2 := ingest.NewMetrics(prometheus.NewRegistry())
	cfg.Metrics = m2
	run = s.start(t, cfg)
	c := s.waitFor(t, 5*time.Minute, "every row stored", func(c counts) bool { return c.errors >= want && c.dead >= 1 })
	// Anything doubled would arrive with the rest: let the pipeline go
	// idle, then stop and count.
	if err := run.stop(t); err != nil {
		t.Fatalf("second run: %v", err)
	}
	c, _ = s.counts(t)
	checkExact(t, c, want, 1)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := s.sopt.Database
	var reason string
	if err := s.conn.QueryRow(ctx, "SELECT dl_reason FROM "+db+".dead_letter").Scan(&reason); err != nil || reason != "bad_otlp" {
		t.Errorf("dead letter reason %q (%v), want bad_otlp", reason, err)
	}
	rows, err := s.conn.Query(ctx, "SELECT event_id, kafka_index, origin, trace_id FROM "+db+".error_traces FINAL WHERE origin = 'otlp'")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint32{}
	logs := 0
	for rows.Next() {
		var id, origin, trace string
		var idx uint32
		if err := rows.Scan(&id, &idx, &origin, &trace); err != nil {
			t.Fatal(err)
		}
		if len(id) > 9 && id[:9] == "otlp-log-" {
			logs++
			if idx != 0 {
				t.Errorf("log row %s at index %d, want 0", id, idx)
			}
			continue
		}
		got[id] = idx
		if trace == "" {
			t.Errorf("%s: no trace_id stored", id)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	spanRows := 0
	for id, idx := range exp.rows {
		if id[:4] == "log:" {
			continue
		}
		spanRows++
		if g, ok := got[id]; !ok {
			t.Errorf("span %s not stored", id)
		} else if g != idx {
			t.Errorf("span %s at kafka_index %d, want %d", id, g, idx)
		}
	}
	if len(got) != spanRows || logs != 20 {
		t.Errorf("error_traces holds %d span rows and %d log rows; want %d and 20", len(got), logs, spanRows)
	}
	// Successful and non-protocol items were counted, never stored; the
	// counters of the two runs together see each at least once.
	if n := testutil.ToFloat64(m2.Skipped.WithLabelValues("resent")); n < float64(resentRows) {
		t.Errorf("the re-sent message's %d rows were not dropped as resent (%v)", resentRows, n)
	}
	okSeen := testutil.ToFloat64(m.OTLPItems.WithLabelValues("ok")) + testutil.ToFloat64(m2.OTLPItems.WithLabelValues("ok"))
	otherSeen := testutil.ToFloat64(m.OTLPItems.WithLabelValues("other")) + testutil.ToFloat64(m2.OTLPItems.WithLabelValues("other"))
	if okSeen < float64(exp.ok) || otherSeen < float64(exp.other) {
		t.Errorf("counted %v ok and %v other items; want at least %d and %d", okSeen, otherSeen, exp.ok, exp.other)
	}
}
