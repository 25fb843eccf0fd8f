package ingest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/ingest"
)

// TestEventWithoutObservedAtIsDeadLettered: the bytes that `ingest decode`
// reports as bad_event (internal/decodecli, parse's
// TestEventWithoutObservedAtIsBadEvent) are dead-lettered as bad_event by
// the pipeline too, although every Kafka message has a timestamp, and with
// an errtrail-observed-at header as well (headers carry the raw forms'
// context only). A raw HTTP/1.1 response without that header keeps its
// documented fallback and is stored with the Kafka timestamp.
func TestEventWithoutObservedAtIsDeadLettered(t *testing.T) {
	s := newStack(t, 2)
	event, err := os.ReadFile(filepath.Join("..", "parse", "testdata", "invalid", "event-without-observed-at.json"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "parse", "testdata", "seeds", "seed002-rest-429.http"))
	if err != nil {
		t.Fatal(err)
	}
	kafkaTime := time.UnixMilli(time.Now().Add(-time.Minute).UnixMilli()) // whole ms: the record's precision
	header := []kafka.Header{{Key: "errtrail-observed-at", Value: []byte("1764489600500")}}
	s.produce(t, []kafka.Message{
		{Key: []byte("a"), Value: event, Time: kafkaTime},
		{Key: []byte("b"), Value: event, Time: kafkaTime, Headers: header},
		{Key: []byte("c"), Value: raw, Time: kafkaTime, Headers: []kafka.Header{{Key: "errtrail-event-id", Value: []byte("raw-no-observed-at")}}},
	})
	cfg := s.config(testLogger(t), ingest.NewMetrics(nil))
	cfg.DedupWindow = -1 // both events carry the same event_id: not a producer re-send here
	run := s.start(t, cfg)
	s.waitFor(t, 2*time.Minute, "all three messages stored", func(c counts) bool { return c.errors+c.dead >= 3 })
	if err := run.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	c, _ := s.counts(t)
	checkExact(t, c, 1, 2)

	ctx := context.Background()
	rows, err := s.conn.Query(ctx, "SELECT dl_reason, dl_error FROM "+s.sopt.Database+".dead_letter")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var reason, msg string
		if err := rows.Scan(&reason, &msg); err != nil {
			t.Fatal(err)
		}
		if reason != "bad_event" || !strings.Contains(msg, "observed_at") {
			t.Errorf("dead_letter row: reason %q, error %q; want bad_event about observed_at", reason, msg)
		}
	}
	rows.Close()

	var id string
	var observedMS uint64
	if err := s.conn.QueryRow(ctx, "SELECT event_id, observed_at_ms FROM "+s.sopt.Database+".errors").Scan(&id, &observedMS); err != nil {
		t.Fatal(err)
	}
	if id != "raw-no-observed-at" || observedMS != uint64(kafkaTime.UnixMilli()) {
		t.Errorf("raw form stored as %s at %d; want raw-no-observed-at at the Kafka time %d", id, observedMS, kafkaTime.UnixMilli())
	}
}
