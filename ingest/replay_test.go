package ingest

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/segmentio/kafka-go"
)

// TestFilterReplaysInMemoryProgress drives the replay filter with an
// in-memory stand-in for ingest_progress (the real table is exercised by
// the integration and fault tests).
func TestFilterReplaysInMemoryProgress(t *testing.T) {
	stored := map[int32]int64{0: 10, 1: 1000}
	queries := 0
	p, err := New(Config{Topic: "t", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Progress: func(context.Context, driver.Conn, string) (map[int32]int64, error) {
			queries++
			return stored, nil
		}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	step := func(name string, msgs []kafka.Message, wantTodo []int64, wantQueries int) {
		t.Helper()
		b := newBatch()
		b.msgs = msgs
		if err := p.filterReplays(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, i := range b.todo {
			got = append(got, b.msgs[i].Offset)
		}
		if !slices.Equal(got, wantTodo) {
			t.Errorf("%s: kept offsets %v; want %v", name, got, wantTodo)
		}
		if queries != wantQueries {
			t.Errorf("%s: %d progress queries; want %d", name, queries, wantQueries)
		}
	}
	m := func(part int, offs ...int64) []kafka.Message {
		var out []kafka.Message
		for _, o := range offs {
			out = append(out, kafka.Message{Partition: part, Offset: o, HighWaterMark: 100})
		}
		return out
	}
	step("first sight: offsets up to the stored 10 are replays", m(0, 8, 9, 10, 11, 12), []int64{11, 12}, 1)
	step("contiguous: no query", m(0, 13, 14), []int64{13, 14}, 1)
	step("jump back (reader restarted at an older commit)", m(0, 12, 13, 15), []int64{15}, 2)
	step("re-delivery inside one batch", append(m(0, 16, 17), m(0, 16, 17, 18)...), []int64{16, 17, 18}, 3)
	// Partition 1: ClickHouse says 1000 but the log ends at 100: the topic
	// was recreated. Its messages must be stored, not skipped.
	step("stored progress beyond the log end", m(1, 0, 1, 2), []int64{0, 1, 2}, 4)
	step("and afterwards", m(1, 3), []int64{3}, 4)
}
