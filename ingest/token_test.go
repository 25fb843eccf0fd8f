package ingest

import (
	"testing"

	"github.com/segmentio/kafka-go"
)

func TestBatchToken(t *testing.T) {
	p := &Pipeline{cfg: Config{Topic: "t"}}
	b := newBatch()
	for _, m := range []kafka.Message{{Partition: 2, Offset: 7}, {Partition: 0, Offset: 3}, {Partition: 2, Offset: 9}, {Partition: 0, Offset: 1}} {
		b.msgs = append(b.msgs, m)
	}
	b.todo = []int{0, 1, 2} // offset 1 of partition 0 was a replay
	if got, want := p.token(b), "t 0:3-3 2:7-9"; got != want {
		t.Errorf("token = %q; want %q", got, want)
	}
	if p.token(b) != p.token(b) {
		t.Error("token differs between retries")
	}
}
