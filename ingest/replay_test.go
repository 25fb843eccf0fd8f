package ingest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
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
	p, err := New(Config{Topics: []string{"t"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
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
		if err := p.dec.filterReplays(context.Background(), b); err != nil {
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
			out = append(out, kafka.Message{Topic: "t", Partition: part, Offset: o, HighWaterMark: 100})
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

// TestFilterReplaysPerTopic: with two topics, partition 0 of one is not
// partition 0 of the other; each is filtered by its own topic's progress.
func TestFilterReplaysPerTopic(t *testing.T) {
	stored := map[string]map[int32]int64{"t": {0: 10}, "u": {0: 2}}
	var asked []string
	p, err := New(Config{Topics: []string{"t", "u"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Progress: func(_ context.Context, _ driver.Conn, topic string) (map[int32]int64, error) {
			asked = append(asked, topic)
			return stored[topic], nil
		}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := newBatch()
	for _, o := range []int64{9, 10, 11} {
		b.msgs = append(b.msgs, kafka.Message{Topic: "t", Partition: 0, Offset: o, HighWaterMark: 100})
	}
	for _, o := range []int64{1, 2, 3} {
		b.msgs = append(b.msgs, kafka.Message{Topic: "u", Partition: 0, Offset: o, HighWaterMark: 100})
	}
	if err := p.dec.filterReplays(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range b.todo {
		got = append(got, fmt.Sprintf("%s/%d", b.msgs[i].Topic, b.msgs[i].Offset))
	}
	if want := []string{"t/11", "u/3"}; !slices.Equal(got, want) {
		t.Errorf("kept %v; want %v", got, want)
	}
	if !slices.Equal(asked, []string{"t", "u"}) {
		t.Errorf("progress read for %v; want both topics once", asked)
	}
	want := map[TopicPartition]int64{{"t", 0}: 11, {"u", 0}: 3}
	if !maps.Equal(b.maxOff, want) {
		t.Errorf("highest offsets %v; want %v", b.maxOff, want)
	}
}

// TestFilterReplaysMarksStaleProgress: a partition whose stored progress is
// beyond the log's end (a recreated topic) is named in the batch, so that
// the insert's second look at progress does not drop its messages either;
// a partition with ordinary progress is not.
func TestFilterReplaysMarksStaleProgress(t *testing.T) {
	stored := map[int32]int64{0: 5, 1: 1000}
	p, err := New(Config{Topics: []string{"t"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Progress: func(_ context.Context, _ driver.Conn, _ string) (map[int32]int64, error) { return stored, nil }}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := newBatch()
	for _, m := range []struct {
		part int
		off  int64
	}{{0, 6}, {0, 7}, {1, 0}, {1, 1}} {
		b.msgs = append(b.msgs, kafka.Message{Topic: "t", Partition: m.part, Offset: m.off, HighWaterMark: 100})
	}
	if err := p.dec.filterReplays(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if !b.staleProgress[TopicPartition{"t", 1}] || b.staleProgress[TopicPartition{"t", 0}] || len(b.todo) != 4 {
		t.Errorf("stale progress %v, kept %d messages; want t/1 marked (its progress 1000 is past the log's end 100), t/0 not, all 4 kept",
			b.staleProgress, len(b.todo))
	}
	b.reset()
	if b.staleProgress != nil {
		t.Errorf("reset kept the stale-progress marks %v", b.staleProgress)
	}
}
