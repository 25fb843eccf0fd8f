package ingest_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/ingest"
)

// TestRawFormsWithKafkaHeaders: taps that cannot build JSON publish the reply
// bytes as the value (a raw HTTP/1.1 response or the gRPC text form) and the
// context as errtrail-* Kafka headers (docs/event-contract.md). Those
// messages must reach ClickHouse with the context the headers carried, through
// the real broker and the ingester's zero-copy header conversion.
func TestRawFormsWithKafkaHeaders(t *testing.T) {
	s := newStack(t, 2)
	httpReply, err := os.ReadFile(filepath.Join("..", "parse", "testdata", "seeds", "seed002-rest-429.http"))
	if err != nil {
		t.Fatal(err)
	}
	grpcReply, err := os.ReadFile(filepath.Join("..", "parse", "testdata", "cases", "grpc-unavailable-overloaded.grpc"))
	if err != nil {
		t.Fatal(err)
	}
	observed := time.Now().Add(-time.Minute).UnixMilli()
	hdrs := func(id, agent, caller string) []kafka.Header {
		return []kafka.Header{
			{Key: "errtrail-v", Value: []byte("1")},
			{Key: "errtrail-event-id", Value: []byte(id)},
			{Key: "errtrail-observed-at", Value: []byte(strconv.FormatInt(observed, 10))},
			{Key: "errtrail-agent", Value: []byte(agent)},
			{Key: "errtrail-caller", Value: []byte(caller)},
			{Key: "errtrail-method", Value: []byte("SendMessage")},
			{Key: "errtrail-source-kind", Value: []byte("gateway")},
		}
	}
	s.produce(t, []kafka.Message{
		{Key: []byte("a"), Value: httpReply, Headers: hdrs("raw-http-1", "tap-agent", "tap-caller")},
		{Key: []byte("b"), Value: grpcReply, Headers: hdrs("raw-grpc-1", "tap-grpc-agent", "tap-grpc-caller")},
	})
	run := s.start(t, s.config(testLogger(t), ingest.NewMetrics(nil)))
	s.waitFor(t, 2*time.Minute, "both raw messages stored", func(c counts) bool { return c.errors+c.dead >= 2 })
	if err := run.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	c, _ := s.counts(t)
	checkExact(t, c, 2, 0)

	type row struct {
		agent, caller, source, method, binding, kind, code string
		observedMS                                         uint64
	}
	got := map[string]row{}
	rows, err := s.conn.Query(context.Background(),
		"SELECT event_id, agent, caller, source_kind, method, binding, kind, code, observed_at_ms FROM "+s.sopt.Database+".errors")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var r row
		if err := rows.Scan(&id, &r.agent, &r.caller, &r.source, &r.method, &r.binding, &r.kind, &r.code, &r.observedMS); err != nil {
			t.Fatal(err)
		}
		got[id] = r
	}
	rows.Close()
	want := map[string]row{
		"raw-http-1": {"tap-agent", "tap-caller", "gateway", "SendMessage", "http", "quota", "RATE_LIMIT_EXCEEDED", uint64(observed)},
		"raw-grpc-1": {"tap-grpc-agent", "tap-grpc-caller", "gateway", "SendMessage", "grpc", "overload", "AGENT_OVERLOADED", uint64(observed)},
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s stored as %+v; want %+v", id, got[id], w)
		}
	}
}
