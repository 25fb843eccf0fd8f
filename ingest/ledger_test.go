package ingest

import (
	"maps"
	"testing"
)

// The story: Vector, the OTel collector and ClickHouse's Kafka engine lost
// data by committing an offset past a batch whose insert had failed. The
// Ledger must never let a later success move the offset past an earlier
// batch that is not written.
func TestLedgerLaterSuccessDoesNotPassFailedBatch(t *testing.T) {
	var l Ledger
	a := l.Open(map[TopicPartition]int64{tp(0): 10, tp(1): 5})
	b := l.Open(map[TopicPartition]int64{tp(0): 20})
	c := l.Open(map[TopicPartition]int64{tp(1): 9, tp(2): 3})

	// b and c succeed while a is still failing: nothing may be committed.
	if adv := l.Written(b); len(adv) != 0 {
		t.Fatalf("Written(b) before a: got %v; want nothing committable", adv)
	}
	if adv := l.Written(c); len(adv) != 0 {
		t.Fatalf("Written(c) before a: got %v; want nothing committable", adv)
	}
	if _, ok := l.Committable(tp(0)); ok {
		t.Fatal("partition 0 committable while batch a is not written")
	}
	// a finally succeeds: the whole prefix is written.
	adv := l.Written(a)
	want := map[TopicPartition]int64{tp(0): 20, tp(1): 9, tp(2): 3}
	if !maps.Equal(adv, want) {
		t.Fatalf("Written(a): got %v; want %v", adv, want)
	}
	if l.Pending() != 0 {
		t.Fatalf("Pending = %d; want 0", l.Pending())
	}
}

func TestLedgerInOrder(t *testing.T) {
	var l Ledger
	for i, tc := range []struct {
		max  map[TopicPartition]int64
		want map[TopicPartition]int64
	}{
		{map[TopicPartition]int64{tp(0): 1, tp(1): 1}, map[TopicPartition]int64{tp(0): 1, tp(1): 1}},
		{map[TopicPartition]int64{tp(0): 5}, map[TopicPartition]int64{tp(0): 5}},
		{map[TopicPartition]int64{tp(0): 3}, map[TopicPartition]int64{}}, // never moves back
		{map[TopicPartition]int64{}, map[TopicPartition]int64{}},         // a batch of replays only
	} {
		seq := l.Open(tc.max)
		if got := l.Written(seq); !maps.Equal(got, tc.want) {
			t.Errorf("batch %d: got %v; want %v", i, got, tc.want)
		}
	}
	if off, _ := l.Committable(tp(0)); off != 5 {
		t.Errorf("Committable(0) = %d; want 5", off)
	}
}

// A batch that fails for good is never written: everything after it stays
// uncommitted however many later batches succeed.
func TestLedgerFailedBatchBlocksForever(t *testing.T) {
	var l Ledger
	l.Written(l.Open(map[TopicPartition]int64{tp(0): 1}))
	l.Open(map[TopicPartition]int64{tp(0): 2}) // fails, never written
	for i := int64(3); i < 100; i++ {
		if adv := l.Written(l.Open(map[TopicPartition]int64{tp(0): i})); len(adv) != 0 {
			t.Fatalf("offset moved to %v past the failed batch", adv)
		}
	}
	if off, _ := l.Committable(tp(0)); off != 1 {
		t.Fatalf("Committable(0) = %d; want 1", off)
	}
}

// tp names partition n of the topic "t".
func tp(n int32) TopicPartition { return TopicPartition{Topic: "t", Partition: n} }

// Partition 0 of one topic is not partition 0 of another: each keeps its
// own committable offset.
func TestLedgerTopicsAreSeparate(t *testing.T) {
	var l Ledger
	a := TopicPartition{Topic: "a", Partition: 0}
	b := TopicPartition{Topic: "b", Partition: 0}
	adv := l.Written(l.Open(map[TopicPartition]int64{a: 7, b: 3}))
	if !maps.Equal(adv, map[TopicPartition]int64{a: 7, b: 3}) {
		t.Fatalf("got %v; want a/0 at 7 and b/0 at 3", adv)
	}
	if adv := l.Written(l.Open(map[TopicPartition]int64{b: 9})); !maps.Equal(adv, map[TopicPartition]int64{b: 9}) {
		t.Fatalf("got %v; want only b/0 to advance", adv)
	}
	if off, _ := l.Committable(a); off != 7 {
		t.Fatalf("a/0 committable at %d; want 7", off)
	}
}
