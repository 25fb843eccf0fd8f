package ingest

// Splitting a slot by partition. On a cluster the writer sends each shard
// its partitions' rows (shards.go), and the park lot keeps and retries the
// rows of some partitions only (park.go); both take a slot apart here.

import (
	"reflect"
	"unsafe"

	"github.com/segmentio/kafka-go"
)

// slotParts returns the partitions of the slot's rows.
func slotParts(s *slot) map[TopicPartition]bool {
	parts := map[TopicPartition]bool{}
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
		for i := 0; i < c.n; i++ {
			parts[TopicPartition{c.topic[i], c.partition[i]}] = true
		}
	}
	return parts
}

// view returns a slot with copies of s's column slices holding only the
// rows of partitions keep accepts. Its strings still point into s's arenas,
// so s must not be recycled while the view lives; a slot something was
// parked from is never recycled (pinned).
func (s *slot) view(keep func(TopicPartition) bool) *slot {
	v := &slot{b: s.b, used: s.used}
	for w := 0; w < s.used; w++ {
		v.cols = append(v.cols, s.cols[w].clone())
	}
	v.keepParts(keep)
	return v
}

// keepParts removes from s the rows of partitions keep rejects.
func (s *slot) keepParts(keep func(TopicPartition) bool) {
	s.rows = 0
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
		mask := make([]bool, c.n)
		for i := range mask {
			mask[i] = keep(TopicPartition{c.topic[i], c.partition[i]})
			if mask[i] {
				s.rows++
			}
		}
		c.keepOnly(mask)
	}
	s.token = slotToken(s)
}

// clone returns c with every slice copied into new backing arrays (the
// strings are shared): keepOnly on the clone leaves c as it is. The arena
// is shared too and must not be reset through the clone.
func (c *columns) clone() *columns {
	d := *c
	v := reflect.ValueOf(&d).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() != reflect.Slice || f.IsNil() {
			continue
		}
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem() // unexported: settable through its address
		f.Set(reflect.AppendSlice(reflect.MakeSlice(f.Type(), 0, f.Len()), f))
	}
	return &d
}

// slotToken names the rows of a slot as token names a batch's: per topic
// and partition the first and last offset (the same on every retry of the
// same rows).
func slotToken(s *slot) string {
	b := &batch{}
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
		for i := 0; i < c.n; i++ {
			b.msgs = append(b.msgs, kafka.Message{Topic: c.topic[i], Partition: int(c.partition[i]), Offset: c.offset[i]})
			b.todo = append(b.todo, len(b.msgs)-1)
		}
	}
	return batchToken(b)
}
