package ingest_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/errtrail/errtrail/ingest"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p[:len(p)-1])); return len(p), nil }

// TestIngestEndToEnd produces good and poison events, runs the pipeline on
// the real stack and checks that each is stored exactly once, as an errors
// row or a dead_letter row.
func TestIngestEndToEnd(t *testing.T) {
	s := newStack(t, 4)
	const good, bad = 20000, 300
	msgs := interleave(goodEvents("e2e", 0, good), poisonEvents(bad))
	s.produce(t, msgs)

	reg := prometheus.NewRegistry()
	m := ingest.NewMetrics(reg)
	run := s.start(t, s.config(testLogger(t), m))
	c := s.waitFor(t, 3*time.Minute, "all events stored", func(c counts) bool { return c.errors+c.dead >= good+bad })
	if err := run.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	c, _ = s.counts(t)
	checkExact(t, c, good, bad)
	if got := value(m.Consumed); got != good+bad {
		t.Errorf("messages_consumed_total = %v; want %d", got, good+bad)
	}
	if got := value(m.RowsInserted); got != good+bad {
		t.Errorf("rows_inserted_total = %v; want %d", got, good+bad)
	}
	if got := value(m.LastInsert); got < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("last_insert_success_timestamp_seconds = %v", got)
	}

	// Replay: rewinding the group's offsets must write nothing twice. A new
	// group starts from the first offset; progress filters every message.
	s.group += "-replay"
	m2 := ingest.NewMetrics(nil)
	run = s.start(t, s.config(testLogger(t), m2))
	deadline := time.Now().Add(3 * time.Minute)
	for value(m2.Consumed) < good+bad && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second) // let the last batch reach the writer
	if err := run.stop(t); err != nil {
		t.Fatalf("Run (replay): %v", err)
	}
	if got := value(m2.Consumed); got != good+bad {
		t.Fatalf("replay consumed %v; want %d", got, good+bad)
	}
	if got := value(m2.RowsInserted); got != 0 {
		t.Errorf("replay inserted %v rows; want 0", got)
	}
	c, _ = s.counts(t)
	checkExact(t, c, good, bad)
	t.Logf("stored: %s", c)
}

// value reads a counter or gauge.
func value(m prometheus.Metric) float64 {
	var pb dto.Metric
	if err := m.Write(&pb); err != nil {
		panic(err)
	}
	if pb.Counter != nil {
		return pb.Counter.GetValue()
	}
	return pb.Gauge.GetValue()
}
