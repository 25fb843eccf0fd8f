package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"
)

// testDecoder returns a decoder with workers workers whose replay filter
// reads stored (per topic) instead of ClickHouse: a pure unit test's
// stand-in for Config.Progress.
func testDecoder(workers int, stored map[string]map[int32]int64) *decoder {
	cfg := Config{Topics: []string{"t"}, Workers: workers, Logger: slog.New(slog.DiscardHandler),
		Progress: func(_ context.Context, _ driver.Conn, topic string) (map[int32]int64, error) {
			return stored[topic], nil
		}}
	cfg.defaults()
	return newDecoder(cfg, nil, nil, nil, NewLogLimiter(cfg.Logger, 5, time.Second))
}

// slotRows returns the slot's rows in order as "partition:offset", with a
// "!" after a dead-letter row.
func slotRows(s *slot) []string {
	var out []string
	for _, c := range s.cols[:s.used] {
		for i := 0; i < c.n; i++ {
			r := fmt.Sprintf("%s/%d:%d", c.topic[i], c.partition[i], c.offset[i])
			if c.dead[i] == 1 {
				r += "!"
			}
			out = append(out, r)
		}
	}
	return out
}

// TestUnitDecoderProcess: the decoder's work on one batch, in order. The
// message ClickHouse already holds (offset 5) is skipped as a replay; the
// good events become rows, the message that is not an event a dead-letter
// row in its place; the producer's re-send of an event (offset 9, the
// event of offset 6 again) is dropped by the dedup window. Every message
// counts once in the metrics, the payloads are forgotten once decoded, and
// the token and the ledger's offsets cover the batch.
func TestUnitDecoderProcess(t *testing.T) {
	evs := steadyEvents(t, 3)
	d := testDecoder(2, map[string]map[int32]int64{"t": {0: 5}})
	b := newBatch()
	for i, v := range [][]byte{evs[0], evs[1], evs[2], []byte("not an event"), evs[1]} {
		b.msgs = append(b.msgs, kafka.Message{Topic: "t", Partition: 0, Offset: int64(5 + i), Value: v, HighWaterMark: 100})
	}
	s := d.newSlot()
	if err := d.process(context.Background(), s, b); err != nil {
		t.Fatal(err)
	}
	if got, want := slotRows(s), []string{"t/0:6", "t/0:7", "t/0:8!"}; !slices.Equal(got, want) || s.rows != 3 {
		t.Errorf("rows %v (%d); want %v: 5 is stored, 9 re-sends 6", got, s.rows, want)
	}
	for i, m := range b.msgs {
		if m.Value != nil {
			t.Errorf("message %d kept its payload after the decode", i)
		}
	}
	if s.token != "t 0:6-9" {
		t.Errorf("token %q; want %q (the messages past the stored offset)", s.token, "t 0:6-9")
	}
	if off := b.maxOff[TopicPartition{"t", 0}]; off != 9 || len(b.maxOff) != 1 {
		t.Errorf("highest offsets %v; want t/0 at 9 (the re-send and the replay included)", b.maxOff)
	}
	reason := s.cols[0].dlReason[2]
	for name, got := range map[string]float64{
		"decoded":                      testutil.ToFloat64(d.m.Decoded),
		"dead letters of " + reason:    testutil.ToFloat64(d.m.DeadLetter.WithLabelValues(reason)),
		"skipped as replays":           testutil.ToFloat64(d.m.Skipped.WithLabelValues("replayed")),
		"skipped as producer re-sends": testutil.ToFloat64(d.m.Skipped.WithLabelValues("resent")),
	} {
		want := 1.0
		if name == "decoded" {
			want = 3 // the re-send decodes before the window drops it
		}
		if got != want {
			t.Errorf("%s: %v; want %v", name, got, want)
		}
	}
}

// TestUnitDecoderKeepsPartitionOrderAcrossWorkers: a batch large enough
// for both workers, its partitions interleaved in runs, comes out with
// every message once and every partition in offset order.
func TestUnitDecoderKeepsPartitionOrderAcrossWorkers(t *testing.T) {
	evs := steadyEvents(t, 3000)
	d := testDecoder(2, nil)
	b := newBatch()
	next := map[int]int64{}
	for i, v := range evs {
		part := (i / 100) % 3 // runs of 100 messages of one partition
		b.msgs = append(b.msgs, kafka.Message{Topic: "t", Partition: part, Offset: next[part], Value: v, HighWaterMark: 1 << 20})
		next[part]++
	}
	s := d.newSlot()
	if err := d.process(context.Background(), s, b); err != nil {
		t.Fatal(err)
	}
	if s.used != 2 || s.rows != len(evs) {
		t.Fatalf("%d workers used, %d rows; want 2 and %d", s.used, s.rows, len(evs))
	}
	want := map[int32]int64{}
	for _, c := range s.cols[:s.used] {
		for i := 0; i < c.n; i++ {
			p := c.partition[i]
			if c.offset[i] != want[p] {
				t.Fatalf("partition %d: offset %d where %d comes next", p, c.offset[i], want[p])
			}
			want[p]++
		}
	}
}

// TestUnitDecoderAckReturnsBatchAndSlot: the decoder hands each slot on with
// an ack that gives the batch back to its owner (once) and the slot back to
// the decoder's pool, which the next batch then gets; a slot whose rows are
// parked (pinned) is not reused, a fresh one takes its place.
func TestUnitDecoderAckReturnsBatchAndSlot(t *testing.T) {
	d := testDecoder(1, nil)
	d.slots = 1
	in, out := make(chan *batch), make(chan *slot)
	done := make(chan error)
	go func() { done <- d.run(context.Background(), in, out) }()
	defer func() { close(in); <-done }() // the fetcher's end of the stream ends the decoder

	acks := map[*batch]int{}
	send := func(off int64) *batch {
		b := newBatch()
		b.ack = func() { acks[b]++ }
		b.msgs = append(b.msgs, kafka.Message{Topic: "t", Offset: off, Value: []byte("{}"), HighWaterMark: 100})
		in <- b
		return b
	}
	b1 := send(0)
	s1 := <-out
	if s1.b != b1 || acks[b1] != 0 {
		t.Fatalf("slot of batch %p (acked %d times); want batch 1, not acked", s1.b, acks[b1])
	}
	s1.ack()
	if acks[b1] != 1 {
		t.Errorf("batch 1 acked %d times by its slot's ack; want once", acks[b1])
	}
	send(1)
	s2 := <-out
	if s2 != s1 {
		t.Error("the next batch did not get the acknowledged slot")
	}
	s2.pinned = true // rows of it were parked: they borrow its arenas
	s2.ack()
	send(2)
	if s3 := <-out; s3 == s2 {
		t.Error("a pinned slot went back to the pool")
	}
}
