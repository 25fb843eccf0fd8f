package ingest

import (
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

func TestBatchLimits(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := Limits{Rows: 3, Bytes: 100, Wait: time.Second}
	msg := func(n int) kafka.Message { return kafka.Message{Value: make([]byte, n)} }

	b := newBatch()
	if b.due(l, t0.Add(time.Hour)) {
		t.Fatal("an empty batch is never due")
	}
	if b.add(msg(10), l, t0) || b.add(msg(10), l, t0.Add(10*time.Millisecond)) {
		t.Fatal("full before the row limit")
	}
	if !b.add(msg(10), l, t0.Add(20*time.Millisecond)) {
		t.Fatal("not full at 3 rows")
	}

	b.reset()
	if b.add(msg(60), l, t0) {
		t.Fatal("full at 60 bytes")
	}
	if !b.add(kafka.Message{Key: make([]byte, 20), Value: make([]byte, 10),
		Headers: []kafka.Header{{Key: "errtrail-v", Value: []byte("1")}}}, l, t0) {
		t.Fatalf("not full at %d bytes (limit 100)", b.bytes)
	}
	if b.bytes != 60+20+10+len("errtrail-v")+1 {
		t.Errorf("bytes = %d", b.bytes)
	}

	b.reset()
	b.add(msg(1), l, t0)
	if b.due(l, t0.Add(999*time.Millisecond)) || !b.due(l, t0.Add(time.Second)) {
		t.Error("time limit: due before 1s or not at 1s")
	}
	if len(b.msgs) != 1 || b.bytes != 1 {
		t.Errorf("reset kept state: %d msgs, %d bytes", len(b.msgs), b.bytes)
	}
}

func TestLimitsDefaults(t *testing.T) {
	var l Limits
	l.defaults()
	if l.Rows != 50000 || l.Bytes != 64<<20 || l.Wait != time.Second {
		t.Errorf("defaults = %+v", l)
	}
}

// After decoding, a batch keeps what the ledger, the token and the lag read
// and nothing of the payloads; its byte count (a metric) stays too.
func TestDropPayloadsKeepsPositions(t *testing.T) {
	l := Limits{Rows: 10, Bytes: 1 << 20, Wait: time.Second}
	b := newBatch()
	b.add(kafka.Message{Topic: "a", Partition: 2, Offset: 7, HighWaterMark: 9, Key: []byte("k"), Value: []byte("{}"),
		Headers: []kafka.Header{{Key: "errtrail-v", Value: []byte("1")}}}, l, time.Unix(1000, 0))
	b.add(kafka.Message{Topic: "b", Partition: 0, Offset: 3, HighWaterMark: 4, Value: []byte("x")}, l, time.Unix(1000, 0))
	bytes := b.bytes
	b.dropPayloads()
	want := []kafka.Message{{Topic: "a", Partition: 2, Offset: 7, HighWaterMark: 9}, {Topic: "b", Partition: 0, Offset: 3, HighWaterMark: 4}}
	for i, m := range b.msgs {
		if m.Key != nil || m.Value != nil || m.Headers != nil {
			t.Errorf("message %d still holds its payload", i)
		}
		if m.Topic != want[i].Topic || m.Partition != want[i].Partition || m.Offset != want[i].Offset || m.HighWaterMark != want[i].HighWaterMark {
			t.Errorf("message %d = %s/%d@%d hwm %d, want %s/%d@%d hwm %d", i, m.Topic, m.Partition, m.Offset, m.HighWaterMark,
				want[i].Topic, want[i].Partition, want[i].Offset, want[i].HighWaterMark)
		}
	}
	if b.bytes != bytes {
		t.Errorf("bytes = %d after dropping payloads, want %d", b.bytes, bytes)
	}
}
