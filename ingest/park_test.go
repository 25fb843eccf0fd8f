package ingest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The park lot's own tests: pure unit tests with a fake Group (fakeGroup,
// write_test.go) and a fake writer (fakeSink), no server.

// fakeSink is a stand-in for the writer's side of the lot: an attempt
// refuses the rows of a partition in down (writing "refused" and the
// partition to log) and stores the others (writing "store", the partition
// and the offsets); settling writes "stored seq" or "dropped seq".
type fakeSink struct {
	down map[TopicPartition]bool
	log  *[]string
}

func (f *fakeSink) attemptParked(_ context.Context, v *slot) error {
	parts := sortedParts(slotParts(v))
	if len(parts) != 1 {
		return fmt.Errorf("an attempt of %d partitions; the lot tries one at a time", len(parts))
	}
	k := parts[0]
	if f.down[k] {
		*f.log = append(*f.log, fmt.Sprintf("refused %s/%d", k.Topic, k.Partition))
		return io.EOF
	}
	var offs []int64
	for _, c := range v.cols[:v.used] {
		offs = append(offs, c.offset[:c.n]...)
	}
	*f.log = append(*f.log, fmt.Sprintf("store %s/%d %v", k.Topic, k.Partition, offs))
	return nil
}

func (f *fakeSink) storedParked(_ context.Context, epoch, seq uint64, parts []TopicPartition) {
	*f.log = append(*f.log, fmt.Sprintf("stored seq %d %v", seq, parts))
}

func (f *fakeSink) droppedParked(_ context.Context, epoch, seq uint64) {
	*f.log = append(*f.log, fmt.Sprintf("dropped seq %d", seq))
}

func testLot(log *[]string) (*parkLot, *fakeGroup, *fakeSink) {
	g := &fakeGroup{live: 1, log: log}
	l := slog.New(slog.DiscardHandler)
	return newParkLot(g, Backoff{Base: time.Millisecond, Max: time.Millisecond}, NewMetrics(nil), l, NewLogLimiter(l, 5, time.Second)),
		g, &fakeSink{log: log}
}

// TestUnitParkLotRetriesOldestFirstPartitionInOrder: the lot retries its
// slots oldest first and a partition never before its earlier parked
// rows: while t/1's oldest rows are refused, its later rows (of the next
// slot) are not tried, though the other partitions of both slots are
// stored. Each partition is paused once however many slots hold it, and
// resumed only when its last parked rows are stored; a stored partition
// is settled with its own batch (seq).
func TestUnitParkLotRetriesOldestFirstPartitionInOrder(t *testing.T) {
	var log []string
	lot, g, sink := testLot(&log)
	lot.park(clusterSlot(&log, 1, map[int32][]int64{1: {10, 11}, 2: {20}}), 1)
	lot.park(clusterSlot(&log, 1, map[int32][]int64{1: {12}, 3: {30}}), 2)
	if !maps.Equal(g.paused, map[TopicPartition]bool{tp(1): true, tp(2): true, tp(3): true}) || g.pauses != 3 {
		t.Fatalf("paused %v in %d pauses; want t/1, t/2, t/3, each once", g.paused, g.pauses)
	}
	if _, ok := lot.due(); !ok {
		t.Fatal("rows parked but no retry due")
	}

	sink.down = map[TopicPartition]bool{tp(1): true}
	lot.retry(context.Background(), sink)
	want := []string{"refused t/1", "store t/2 [20]", "resume t/2", "stored seq 1 [{t 2}]",
		"store t/3 [30]", "resume t/3", "stored seq 2 [{t 3}]"}
	if !slices.Equal(log, want) {
		t.Errorf("first retry: %q; want %q (t/1's later rows not tried)", log, want)
	}
	if !maps.Equal(g.paused, map[TopicPartition]bool{tp(1): true}) || lot.len() != 2 {
		t.Errorf("after the first retry: paused %v, %d slots; want t/1 paused, both slots kept", g.paused, lot.len())
	}
	if got := testutil.ToFloat64(lot.m.ParkedRows); got != 3 {
		t.Errorf("parked rows %v; want t/1's 3", got)
	}

	log = log[:0]
	sink.down = nil
	lot.retry(context.Background(), sink)
	want = []string{"store t/1 [10 11]", "stored seq 1 [{t 1}]", "store t/1 [12]", "resume t/1", "stored seq 2 [{t 1}]"}
	if !slices.Equal(log, want) {
		t.Errorf("second retry: %q; want %q (resumed only after its last rows)", log, want)
	}
	if _, ok := lot.due(); ok || lot.len() != 0 || len(g.paused) != 0 {
		t.Errorf("after the second retry: %d slots, retry due %v, paused %v; want an empty lot", lot.len(), ok, g.paused)
	}
	if got := testutil.ToFloat64(lot.m.ParkedRows); got != 0 {
		t.Errorf("parked rows %v; want 0", got)
	}
	if got := testutil.ToFloat64(lot.m.RowsInserted); got != 5 {
		t.Errorf("rows inserted %v; want 5", got)
	}
}

// TestUnitParkLotHoldsBackRowsOfPausedPartitions: a new slot's rows of a
// partition the lot holds are parked behind the held rows (the slot is
// pinned and keeps only them, with a batch of its own), and a view of its
// other rows, on the original batch, is returned to be inserted now; the
// partition is not paused again. A slot without held rows comes back as
// it is.
func TestUnitParkLotHoldsBackRowsOfPausedPartitions(t *testing.T) {
	var log []string
	lot, g, sink := testLot(&log)
	lot.park(clusterSlot(&log, 1, map[int32][]int64{1: {10}}), 1)

	s := clusterSlot(&log, 1, map[int32][]int64{0: {5, 6}, 1: {11, 12}})
	orig := s.b
	rest := lot.holdBack(s, 2)
	if rest == s || rest.rows != 2 || !slices.Equal(rest.cols[0].offset, []int64{5, 6}) || rest.cols[0].partition[0] != 0 {
		t.Fatalf("returned %d rows %v; want a view of t/0's 5, 6", rest.rows, rest.cols[0].offset)
	}
	if rest.b != orig {
		t.Error("the view lost its batch: its partitions could not be committed")
	}
	if !s.pinned || s.rows != 2 || !slices.Equal(s.cols[0].offset, []int64{11, 12}) || s.b == orig || s.b.epoch != 1 {
		t.Errorf("held slot: pinned %v, rows %v, own batch %v (epoch %d); want pinned, t/1's 11, 12, a batch of its own of epoch 1",
			s.pinned, s.cols[0].offset, s.b != orig, s.b.epoch)
	}
	if got := lot.partsOf(2); !maps.Equal(got, map[TopicPartition]bool{tp(1): true}) {
		t.Errorf("partsOf(2) = %v; want t/1", got)
	}
	if got := lot.partsOf(3); got != nil {
		t.Errorf("partsOf(3) = %v; want nothing", got)
	}
	if g.pauses != 1 {
		t.Errorf("%d pauses; want t/1 paused once", g.pauses)
	}

	u := clusterSlot(&log, 1, map[int32][]int64{0: {7}})
	if got := lot.holdBack(u, 3); got != u || u.pinned || u.rows != 1 {
		t.Errorf("a slot without held rows: got %p (rows %d, pinned %v); want itself, untouched", got, got.rows, u.pinned)
	}

	lot.retry(context.Background(), sink)
	want := []string{"store t/1 [10]", "stored seq 1 [{t 1}]", "store t/1 [11 12]", "resume t/1", "stored seq 2 [{t 1}]"}
	if !slices.Equal(log, want) {
		t.Errorf("retry: %q; want %q", log, want)
	}
}

// TestUnitParkLotDropsEndedGenerationsUncommitted: parked rows of a
// generation that ended are dropped, counted abandoned, settled as dropped
// (never as stored) and not resumed: at the first batch of a later
// generation (expire), and at a retry once the Group abandoned their
// generation.
func TestUnitParkLotDropsEndedGenerationsUncommitted(t *testing.T) {
	var log []string
	lot, g, sink := testLot(&log)
	lot.park(clusterSlot(&log, 1, map[int32][]int64{1: {10, 11}}), 1)
	lot.park(clusterSlot(&log, 2, map[int32][]int64{3: {30}}), 2)

	lot.expire(context.Background(), 2, sink)
	if want := []string{"dropped seq 1"}; !slices.Equal(log, want) {
		t.Errorf("expire: %q; want %q", log, want)
	}
	if lot.len() != 1 || lot.partsOf(1) != nil {
		t.Errorf("after expire: %d slots, partsOf(1) %v; want epoch 2's slot alone", lot.len(), lot.partsOf(1))
	}
	if got := testutil.ToFloat64(lot.m.Abandoned); got != 2 {
		t.Errorf("abandoned %v; want 2", got)
	}

	log = log[:0]
	g.live = 3
	lot.retry(context.Background(), sink)
	if want := []string{"dropped seq 2"}; !slices.Equal(log, want) {
		t.Errorf("retry of an abandoned generation: %q; want %q (no attempt, no resume)", log, want)
	}
	if _, ok := lot.due(); ok || lot.len() != 0 {
		t.Errorf("lot not empty: %d slots", lot.len())
	}
	if got := testutil.ToFloat64(lot.m.ParkedRows); got != 0 {
		t.Errorf("parked rows %v; want 0", got)
	}
	if got := testutil.ToFloat64(lot.m.RowsInserted); got != 0 {
		t.Errorf("rows inserted %v; want 0", got)
	}
}

// TestUnitParkLotNilParksNothing: a writer without a lot (no Group source,
// or no shards) holds nothing back and has nothing to retry.
func TestUnitParkLotNilParksNothing(t *testing.T) {
	var lot *parkLot
	var log []string
	s := clusterSlot(&log, 1, map[int32][]int64{0: {1}})
	if got := lot.holdBack(s, 1); got != s || s.pinned {
		t.Error("a nil lot held rows back")
	}
	if _, ok := lot.due(); ok || lot.len() != 0 || lot.partsOf(1) != nil {
		t.Error("a nil lot has something parked")
	}
	lot.expire(context.Background(), 2, &fakeSink{log: &log})
	if len(log) != 0 {
		t.Errorf("a nil lot settled %q", log)
	}
}
