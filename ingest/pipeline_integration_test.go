package ingest_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"
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

	// The group's committed offsets reached the end of every partition.
	checkCommittedToEnd(t, s, 4)

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

// checkCommittedToEnd asserts the group committed, for every partition, the
// offset after the last message (commit = highest written + 1).
func checkCommittedToEnd(t *testing.T, s *stack, partitions int) {
	t.Helper()
	checkCommittedToEndOf(t, s, s.topic, partitions)
}

func checkCommittedToEndOf(t *testing.T, s *stack, topic string, partitions int) {
	t.Helper()
	client := testenv.KafkaClient(t, s.brokers)
	parts := make([]int, partitions)
	offReq := map[string][]kafka.OffsetRequest{}
	for i := range parts {
		parts[i] = i
		offReq[topic] = append(offReq[topic], kafka.LastOffsetOf(i))
	}
	ends, err := client.ListOffsets(t.Context(), &kafka.ListOffsetsRequest{Topics: offReq})
	if err != nil {
		t.Fatal(err)
	}
	end := map[int]int64{}
	for _, p := range ends.Topics[topic] {
		end[p.Partition] = p.LastOffset
	}
	res, err := client.OffsetFetch(t.Context(), &kafka.OffsetFetchRequest{GroupID: s.group, Topics: map[string][]int{topic: parts}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Topics[topic]) != partitions || len(end) != partitions {
		t.Fatalf("offsets of %d partitions, ends of %d; want %d", len(res.Topics[topic]), len(end), partitions)
	}
	for _, p := range res.Topics[topic] {
		if p.CommittedOffset != end[p.Partition] || p.CommittedOffset <= 0 {
			t.Errorf("partition %d: committed %d; want the end of the log %d", p.Partition, p.CommittedOffset, end[p.Partition])
		}
	}
}

// TestBatchSentInBlocksIsOnePart sends each insert as many small blocks
// (InsertBlockRows) and checks that ClickHouse still writes one part per
// insert into errors, not one per block, and that every event is stored
// once.
func TestBatchSentInBlocksIsOnePart(t *testing.T) {
	s := newStack(t, 1)
	const n = 12000
	s.produce(t, goodEvents("blocks", 0, n))

	reg := prometheus.NewRegistry()
	m := ingest.NewMetrics(reg)
	cfg := s.config(testLogger(t), m)
	cfg.Limits = ingest.Limits{Rows: n, Wait: 10 * time.Second}
	cfg.InsertBlockRows = 1000
	run := s.start(t, cfg)
	s.waitFor(t, 3*time.Minute, "all events stored", func(c counts) bool { return c.errors >= n })
	if err := run.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	c, _ := s.counts(t)
	checkExact(t, c, n, 0)

	inserts := histogramCount(t, m.BatchRows)
	if inserts == 0 || inserts > 3 {
		t.Fatalf("%d inserts for %d events in batches of up to %d; want 1 to 3", inserts, n, n)
	}
	// Each part written gets the next block number of the table, and a
	// merge keeps the range of the parts it merged: the range counts the
	// parts ever written.
	var written uint64
	q := "SELECT toUInt64(max(max_block_number) - min(min_block_number) + 1) FROM system.parts WHERE database = ? AND table = 'errors'"
	if err := s.conn.QueryRow(t.Context(), q, s.sopt.Database).Scan(&written); err != nil {
		t.Fatal(err)
	}
	if written != inserts {
		t.Errorf("errors got %d parts from %d inserts of %d-row blocks; want one part per insert", written, inserts, cfg.InsertBlockRows)
	}
}

// histogramCount reads how many observations a histogram holds.
func histogramCount(t *testing.T, h prometheus.Histogram) uint64 {
	t.Helper()
	var pb dto.Metric
	if err := h.Write(&pb); err != nil {
		t.Fatal(err)
	}
	return pb.GetHistogram().GetSampleCount()
}

// TestTwoTopicsOneGroup: one ingester consumes two topics in one consumer
// group. Partition numbers repeat across the topics; every event is stored
// once with its topic, each topic's offsets are committed to its end, and a
// new group replaying both writes nothing.
func TestTwoTopicsOneGroup(t *testing.T) {
	s := newStack(t, 2)
	other := s.topic + ".b"
	createTopic(t, s.brokers[0], other, 2)
	t.Cleanup(func() { deleteTopic(s.brokers[0], other) })
	const n = 6000
	s.produceTo(t, s.topic, goodEvents("two-a", 0, n))
	s.produceTo(t, other, goodEvents("two-b", 0, n))

	cfg := s.config(testLogger(t), ingest.NewMetrics(nil))
	cfg.Topics = []string{s.topic, other}
	run := s.start(t, cfg)
	s.waitFor(t, 3*time.Minute, "both topics stored", func(c counts) bool { return c.errors >= 2*n })
	if err := run.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	c, _ := s.counts(t)
	checkExact(t, c, 2*n, 0)
	checkCommittedToEndOf(t, s, s.topic, 2)
	checkCommittedToEndOf(t, s, other, 2)

	byTopic := map[string]uint64{}
	rows, err := s.conn.Query(t.Context(), "SELECT kafka_topic, count() FROM "+s.sopt.Database+".errors GROUP BY kafka_topic")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var topic string
		var k uint64
		if err := rows.Scan(&topic, &k); err != nil {
			t.Fatal(err)
		}
		byTopic[topic] = k
	}
	rows.Close()
	if byTopic[s.topic] != n || byTopic[other] != n || len(byTopic) != 2 {
		t.Errorf("rows by topic %v; want %d in each of %s and %s", byTopic, n, s.topic, other)
	}

	// A new group starts both topics from the first offset: the progress of
	// each topic filters every message.
	s.group += "-replay"
	m2 := ingest.NewMetrics(nil)
	cfg2 := s.config(testLogger(t), m2)
	cfg2.Topics = cfg.Topics
	run = s.start(t, cfg2)
	waitUntil(t, 3*time.Minute, "the replay consumed both topics", func() bool { return value(m2.Consumed) >= 2*n })
	time.Sleep(time.Second) // let the last batch reach the writer
	if err := run.stop(t); err != nil {
		t.Fatalf("Run (replay): %v", err)
	}
	if got := value(m2.RowsInserted); got != 0 {
		t.Errorf("replay inserted %v rows; want 0", got)
	}
	c, _ = s.counts(t)
	checkExact(t, c, 2*n, 0)
}
