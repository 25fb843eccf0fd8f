package ingest

import (
	"maps"
	"testing"
)

// The story: Vector, the OTel collector and ClickHouse's Kafka engine lost
// data by committing an offset past a batch whose insert had failed. The
// Ledger must never let a later success move a partition's offset past an
// earlier batch whose rows of that partition are not written.
func TestLedgerLaterSuccessDoesNotPassFailedBatch(t *testing.T) {
	var l Ledger
	a := l.Open(map[TopicPartition]int64{tp(0): 10, tp(1): 5})
	b := l.Open(map[TopicPartition]int64{tp(0): 20})
	c := l.Open(map[TopicPartition]int64{tp(1): 9, tp(2): 3})

	// b and c succeed while a is still failing: nothing may be committed.
	if adv := l.Written(b); len(adv) != 0 {
		t.Fatalf("Written(b) before a: got %v; want nothing committable", adv)
	}
	// c's partition 2 is in no earlier batch: it may move; partition 1 is
	// held back by a.
	if adv := l.Written(c); !maps.Equal(adv, map[TopicPartition]int64{tp(2): 3}) {
		t.Fatalf("Written(c) before a: got %v; want only partition 2 (in no earlier batch) committable", adv)
	}
	if _, ok := l.Committable(tp(0)); ok {
		t.Fatal("partition 0 committable while batch a is not written")
	}
	// a finally succeeds: the whole prefix is written.
	adv := l.Written(a)
	want := map[TopicPartition]int64{tp(0): 20, tp(1): 9}
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

// WrittenParts: a batch whose partition 1 is parked (its shard is down)
// lets partition 0 commit, holds partition 1 back in it and in every later
// batch, and leaves the ledger once partition 1 is written too.
func TestLedgerWrittenPartsHoldsOnlyTheParkedPartition(t *testing.T) {
	var l Ledger
	a := l.Open(map[TopicPartition]int64{tp(0): 10, tp(1): 5})
	if adv := l.WrittenParts(a, []TopicPartition{tp(0)}); !maps.Equal(adv, map[TopicPartition]int64{tp(0): 10}) {
		t.Fatalf("WrittenParts(a, 0): %v; want partition 0 at 10", adv)
	}
	b := l.Open(map[TopicPartition]int64{tp(0): 20, tp(1): 9})
	if adv := l.WrittenParts(b, []TopicPartition{tp(0)}); !maps.Equal(adv, map[TopicPartition]int64{tp(0): 20}) {
		t.Fatalf("WrittenParts(b, 0): %v; want partition 0 at 20", adv)
	}
	if off, ok := l.Committable(tp(1)); ok {
		t.Fatalf("partition 1 committable at %d while its rows are parked", off)
	}
	// b's partition 1 is stored before a's: still held back by a.
	if adv := l.WrittenParts(b, []TopicPartition{tp(1)}); len(adv) != 0 {
		t.Fatalf("partition 1 of b written before a's: %v; want nothing", adv)
	}
	if adv := l.WrittenParts(a, []TopicPartition{tp(1)}); !maps.Equal(adv, map[TopicPartition]int64{tp(1): 9}) {
		t.Fatalf("partition 1 of a written: %v; want partition 1 at 9", adv)
	}
	if l.Pending() != 0 {
		t.Errorf("Pending = %d; want 0", l.Pending())
	}
}
