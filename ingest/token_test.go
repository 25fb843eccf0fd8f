package ingest

import (
	"testing"

	"github.com/segmentio/kafka-go"
)

func TestBatchToken(t *testing.T) {
	b := newBatch()
	for _, m := range []kafka.Message{{Topic: "t", Partition: 2, Offset: 7}, {Topic: "t", Partition: 0, Offset: 3}, {Topic: "t", Partition: 2, Offset: 9}, {Topic: "t", Partition: 0, Offset: 1}} {
		b.msgs = append(b.msgs, m)
	}
	b.todo = []int{0, 1, 2} // offset 1 of partition 0 was a replay
	if got, want := batchToken(b), "t 0:3-3 2:7-9"; got != want {
		t.Errorf("token = %q; want %q", got, want)
	}
	if batchToken(b) != batchToken(b) {
		t.Error("token differs between retries")
	}
}

func TestBatchTokenTwoTopics(t *testing.T) {
	b := newBatch()
	b.msgs = []kafka.Message{{Topic: "b", Partition: 0, Offset: 4}, {Topic: "a", Partition: 1, Offset: 2}, {Topic: "a", Partition: 0, Offset: 8}}
	b.todo = []int{0, 1, 2}
	if got, want := batchToken(b), "a 0:8-8 1:2-2 b 0:4-4"; got != want {
		t.Errorf("token = %q; want %q", got, want)
	}
}
