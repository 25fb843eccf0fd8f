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
	a := l.Open(map[int32]int64{0: 10, 1: 5})
	b := l.Open(map[int32]int64{0: 20})
	c := l.Open(map[int32]int64{1: 9, 2: 3})

	// b and c succeed while a is still failing: nothing may be committed.
	if adv := l.Written(b); len(adv) != 0 {
		t.Fatalf("Written(b) before a: got %v; want nothing committable", adv)
	}
	if adv := l.Written(c); len(adv) != 0 {
		t.Fatalf("Written(c) before a: got %v; want nothing committable", adv)
	}
	if _, ok := l.Committable(0); ok {
		t.Fatal("partition 0 committable while batch a is not written")
	}
	// a finally succeeds: the whole prefix is written.
	adv := l.Written(a)
	want := map[int32]int64{0: 20, 1: 9, 2: 3}
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
		max  map[int32]int64
		want map[int32]int64
	}{
		{map[int32]int64{0: 1, 1: 1}, map[int32]int64{0: 1, 1: 1}},
		{map[int32]int64{0: 5}, map[int32]int64{0: 5}},
		{map[int32]int64{0: 3}, map[int32]int64{}}, // never moves back
		{map[int32]int64{}, map[int32]int64{}},     // a batch of replays only
	} {
		seq := l.Open(tc.max)
		if got := l.Written(seq); !maps.Equal(got, tc.want) {
			t.Errorf("batch %d: got %v; want %v", i, got, tc.want)
		}
	}
	if off, _ := l.Committable(0); off != 5 {
		t.Errorf("Committable(0) = %d; want 5", off)
	}
}

// A batch that fails for good is never written: everything after it stays
// uncommitted however many later batches succeed.
func TestLedgerFailedBatchBlocksForever(t *testing.T) {
	var l Ledger
	l.Written(l.Open(map[int32]int64{0: 1}))
	l.Open(map[int32]int64{0: 2}) // fails, never written
	for i := int64(3); i < 100; i++ {
		if adv := l.Written(l.Open(map[int32]int64{0: i})); len(adv) != 0 {
			t.Fatalf("offset moved to %v past the failed batch", adv)
		}
	}
	if off, _ := l.Committable(0); off != 1 {
		t.Fatalf("Committable(0) = %d; want 1", off)
	}
}
