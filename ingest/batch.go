package ingest

import (
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
// batch is recycled after its insert succeeded.
type batch struct {
	msgs  []kafka.Message
	bytes int
	first time.Time // when the first message was added
	epoch uint64    // the source's generation the messages came in (Group); 0 for a kafka.Reader

	// filled by the writer
	todo   []int                    // indices of msgs to decode (not replays)
	maxOff map[TopicPartition]int64 // highest offset per partition, skipped ones included
	// staleProgress: partitions whose stored progress is beyond the log's
	// end (the topic was recreated); the insert's second look at progress
	// (Pipeline.dropStored) ignores it for them. nil when none.
	staleProgress map[TopicPartition]bool
}

func newBatch() *batch { return &batch{maxOff: map[TopicPartition]int64{}} }

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
