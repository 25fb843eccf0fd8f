package ingest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// Limits bound a batch: it is cut when any is reached, whichever first.
type Limits struct {
	Rows  int           // messages per batch; default 50,000
	Bytes int           // bytes of keys, values and headers; default 64 MiB
	Wait  time.Duration // age of the oldest message; default 1s
}

func (l *Limits) defaults() {
	if l.Rows <= 0 {
		l.Rows = 50000
	}
	if l.Bytes <= 0 {
		l.Bytes = 64 << 20
	}
	if l.Wait <= 0 {
		l.Wait = time.Second
	}
}

// batch is a run of fetched messages, reused from batch to batch. The
// messages' keys, values and headers (owned by kafka-go's Message) live
// until the batch is decoded (dropPayloads); their positions live until the
// batch is acknowledged (ack), once it is settled.
type batch struct {
	msgs  []kafka.Message
	bytes int
	first time.Time // when the first message was added
	epoch uint64    // the source's generation the messages came in (Group); 0 for a kafka.Reader

	// ack gives the batch back to the fetcher's pool (set once, when the
	// fetcher makes the batch). The writer calls it, through the slot's
	// ack, when the batch is settled; after it the batch is the fetcher's.
	ack func()

	// filled by the decoder's replay filter
	todo   []int                    // indices of msgs to decode (not replays)
	maxOff map[TopicPartition]int64 // highest offset per partition, skipped ones included
	// staleProgress: partitions whose stored progress is beyond the log's
	// end (the topic was recreated); the insert's second look at progress
	// (writer.dropStored) ignores it for them. nil when none.
	staleProgress map[TopicPartition]bool
}

func newBatch() *batch { return &batch{maxOff: map[TopicPartition]int64{}} }

// newBatchPool returns a pool of n empty batches, each of which its ack
// resets and puts back.
func newBatchPool(n int) chan *batch {
	free := make(chan *batch, n)
	for i := 0; i < n; i++ {
		b := newBatch()
		b.ack = func() {
			b.reset()
			free <- b
		}
		free <- b
	}
	return free
}

func (b *batch) reset() {
	clear(b.msgs) // drop references to message bytes
	b.msgs = b.msgs[:0]
	b.bytes = 0
	b.first = time.Time{}
	b.epoch = 0
	b.todo = b.todo[:0]
	b.staleProgress = nil
	b.maxOff = map[TopicPartition]int64{} // handed to the Ledger; never reused
}

// dropPayloads forgets the messages' keys, values and headers once their
// rows are decoded: the rows hold copies of everything they need (the
// string arena), and the ledger, the token and the lag need only the
// topics, partitions and offsets, which stay. The bytes then become
// garbage while the batch waits for and goes through its insert, instead
// of staying live until the batch is recycled.
func (b *batch) dropPayloads() {
	for i := range b.msgs {
		m := &b.msgs[i]
		m.Key, m.Value, m.Headers = nil, nil, nil
	}
}

// slot is a decoded batch on its way to ClickHouse: the batch and the
// decode workers' column buffers, filled by the decoder and written by the
// writer. The decoder has two, so the next batch is decoded while this one
// is written; the buffers are reused when the slot comes back. Strings in
// the buffers are borrowed from their arenas and die when the slot is
// reused.
type slot struct {
	b      *batch
	cols   []*columns
	used   int // workers used by this batch
	rows   int
	token  string
	pinned bool // rows of it are parked (park.go): never back to the pool, its arenas stay as they are

	// ack settles the batch: it acknowledges b (back to the fetcher) and
	// gives the slot back to the decoder (a fresh one in its place when
	// pinned). The decoder sets it for each batch; the writer calls it
	// exactly once, after the batch's rows were stored and the offsets the
	// ledger allows committed, or after the batch was dropped uncommitted
	// with its generation; never after a permanent failure. Rows parked
	// from it (park.go) are then the writer's alone: the slot stays pinned
	// and they keep their own copy of the batch's epoch and marks, the
	// batch itself is reused. Views (slot.view) have no ack.
	ack func()
}

// msgSize is the size a message counts for in Limits.Bytes.
func msgSize(m *kafka.Message) int {
	n := len(m.Key) + len(m.Value)
	for _, h := range m.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// add appends m and reports whether the batch reached a row or byte limit.
func (b *batch) add(m kafka.Message, l Limits, now time.Time) (full bool) {
	if len(b.msgs) == 0 {
		b.first = now
	}
	b.msgs = append(b.msgs, m)
	b.bytes += msgSize(&b.msgs[len(b.msgs)-1])
	return len(b.msgs) >= l.Rows || b.bytes >= l.Bytes
}

// due reports whether the batch's oldest message waited Limits.Wait.
func (b *batch) due(l Limits, now time.Time) bool {
	return len(b.msgs) > 0 && now.Sub(b.first) >= l.Wait
}

// batchToken names the rows of a batch: per topic and partition, in order,
// the first and last offset of the messages to write (batch.todo). It is
// the same on every retry of the batch and differs between batches.
func batchToken(b *batch) string {
	type span struct{ lo, hi int64 }
	spans := map[TopicPartition]span{}
	// Messages come in runs of one partition: merge each run into the map
	// once.
	var (
		k   TopicPartition
		run span
		in  bool
	)
	endRun := func() {
		if !in {
			return
		}
		if s, ok := spans[k]; ok {
			run.lo, run.hi = min(run.lo, s.lo), max(run.hi, s.hi)
		}
		spans[k] = run
	}
	for _, i := range b.todo {
		m := &b.msgs[i]
		if !in || int32(m.Partition) != k.Partition || m.Topic != k.Topic {
			endRun()
			k, run, in = TopicPartition{m.Topic, int32(m.Partition)}, span{m.Offset, m.Offset}, true
		}
		run.lo, run.hi = min(run.lo, m.Offset), max(run.hi, m.Offset)
	}
	endRun()
	keys := slices.SortedFunc(maps.Keys(spans), func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	var sb strings.Builder
	topic := ""
	for _, k := range keys {
		if k.Topic != topic || sb.Len() == 0 {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(k.Topic)
			topic = k.Topic
		}
		fmt.Fprintf(&sb, " %d:%d-%d", k.Partition, spans[k].lo, spans[k].hi)
	}
	return sb.String()
}
