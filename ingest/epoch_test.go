package ingest

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"
)

// TestFilterReplaysNewEpochForgetsWhatThisProcessQueued: a batch of a new
// consumer-group epoch (group.go) is judged by ClickHouse's progress alone.
// A batch of the old epoch that was queued and then dropped uncommitted
// left its offsets as the floor and its event ids in the dedup window; the
// same messages, delivered again in the new epoch, must be kept, not
// skipped as replays or re-sends. Within one epoch both still skip.
func TestFilterReplaysNewEpochForgetsWhatThisProcessQueued(t *testing.T) {
	stored := map[int32]int64{0: 9} // ClickHouse holds up to offset 9
	p, err := New(Config{Topics: []string{"t"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Progress: func(context.Context, driver.Conn, string) (map[int32]int64, error) { return stored, nil }}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	batchOf := func(epoch uint64, offs ...int64) *batch {
		b := newBatch()
		b.epoch = epoch
		for _, o := range offs {
			b.msgs = append(b.msgs, kafka.Message{Topic: "t", Partition: 0, Offset: o})
		}
		return b
	}
	// Epoch 0: offsets 10-12 are queued (and, say, dropped uncommitted).
	b := batchOf(0, 10, 11, 12)
	if err := p.dec.filterReplays(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if len(b.todo) != 3 {
		t.Fatalf("epoch 0 kept %d of 3 new messages", len(b.todo))
	}
	if p.dec.win.seen(42) || !p.dec.win.seen(42) {
		t.Fatal("the window did not remember id 42 (a decoded message's event id) within the epoch")
	}
	// Delivered again in the same epoch: replays.
	b = batchOf(0, 10, 11, 12)
	if err := p.dec.filterReplays(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if len(b.todo) != 0 {
		t.Errorf("same epoch: kept %d messages already queued; want 0", len(b.todo))
	}
	// Delivered again in epoch 1: ClickHouse holds only up to 9.
	b = batchOf(1, 10, 11, 12)
	if err := p.dec.filterReplays(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if len(b.todo) != 3 {
		t.Errorf("new epoch: kept %d of the 3 messages ClickHouse does not hold; want 3", len(b.todo))
	}
	if p.dec.win.seen(42) {
		t.Error("the new epoch kept event id 42 in the dedup window")
	}
	// The Group counted the rebalance as its generation ended; the new
	// epoch must not count it a second time.
	if got := testutil.ToFloat64(p.dec.m.Rebalances); got != 0 {
		t.Errorf("the decoder counted %v rebalances for a new epoch; want 0 (the Group counts them)", got)
	}
	// Offsets ClickHouse holds are still skipped in the new epoch.
	b = batchOf(2, 8, 9, 10)
	if err := p.dec.filterReplays(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if len(b.todo) != 1 || b.msgs[b.todo[0]].Offset != 10 {
		t.Errorf("epoch 2: kept %v; want only offset 10 (8 and 9 are stored)", b.todo)
	}
}

// TestLedgerDropLetsLaterBatchesCommit: a dropped batch (its generation
// abandoned) no longer holds the frontier back, and its own offsets are
// never reported committable.
func TestLedgerDropLetsLaterBatchesCommit(t *testing.T) {
	var l Ledger
	a := l.Open(map[TopicPartition]int64{tp(0): 10, tp(1): 5})
	b := l.Open(map[TopicPartition]int64{tp(1): 7, tp(2): 7})
	if adv := l.Written(b); !maps.Equal(adv, map[TopicPartition]int64{tp(2): 7}) {
		t.Fatalf("Written(b) before a: %v; want only partition 2", adv)
	}
	adv := l.Drop(a)
	if want := map[TopicPartition]int64{tp(1): 7}; !maps.Equal(adv, want) {
		t.Errorf("Drop(a): got %v; want %v", adv, want)
	}
	if off, ok := l.Committable(tp(0)); ok {
		t.Errorf("partition 0 committable at %d after its only batch was dropped", off)
	}
	if l.Pending() != 0 {
		t.Errorf("Pending = %d; want 0", l.Pending())
	}
}
