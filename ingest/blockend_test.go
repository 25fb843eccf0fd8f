package ingest

import (
	"slices"
	"testing"
)

// TestUnitBlockEndKeepsMessagesWhole: an insert's blocks are cut every
// step rows, but never between two rows of one Kafka message (an OTLP
// message makes several): the cut moves past the message's last row. Rows
// of one offset on another partition or topic are other messages. The old
// cut (every step rows) starts blocks at [0 2 4 6 8] here.
func TestUnitBlockEndKeepsMessagesWhole(t *testing.T) {
	c := &columns{}
	for _, r := range []struct {
		topic string
		part  int32
		off   int64
	}{{"a", 0, 1}, {"a", 0, 1}, {"a", 0, 1}, {"a", 0, 2}, {"a", 0, 3}, {"a", 0, 3}, {"a", 1, 3}, {"b", 1, 3}, {"b", 1, 3}} {
		c.topic, c.partition, c.offset = append(c.topic, r.topic), append(c.partition, r.part), append(c.offset, r.off)
		c.n++
	}
	cuts := func(step int) []int {
		var out []int
		for lo := 0; lo < c.n; lo = c.blockEnd(lo, step) {
			out = append(out, lo)
		}
		return append(out, c.n)
	}
	for step, want := range map[int][]int{1: {0, 3, 4, 6, 7, 9}, 2: {0, 3, 6, 9}, 4: {0, 4, 9}, 100: {0, 9}, 0: {0, 3, 4, 6, 7, 9}} {
		if got := cuts(step); !slices.Equal(got, want) {
			t.Errorf("step %d: blocks start at %v, want %v", step, got, want)
		}
	}
}
