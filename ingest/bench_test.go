package ingest

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/loadgen"
	"github.com/errtrail/errtrail/parse"
)

// steadyEvents returns n events of the load tool's steady scenario, the
// ~1.1 KiB events ingest/measure.sh floods, as the event JSON a producer
// sends.
func steadyEvents(tb testing.TB, n int) [][]byte {
	tb.Helper()
	sc, err := loadgen.Resolve("steady")
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := loadgen.Run(context.Background(), loadgen.Config{
		Scenario: sc, Loop: true, MaxEvents: int64(n), Duration: 5 * time.Minute, Output: &buf, KeepIDs: -1,
	}); err != nil {
		tb.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimRight(buf.Bytes(), "\n"), []byte{'\n'})
	if len(lines) < n {
		tb.Fatalf("loadgen gave %d events, want %d", len(lines), n)
	}
	return lines[:n]
}

// BenchmarkDecodeSteady measures what one decode worker spends per event of
// the steady mix: DecodeMessage and the landing row (columns.appendRow),
// the part of ingest's CPU per event that needs no server. An op is one
// event; B/s is event bytes.
func BenchmarkDecodeSteady(b *testing.B) {
	evs := steadyEvents(b, 20000)
	size := 0
	for _, e := range evs {
		size += len(e)
	}
	dec := parse.NewDecoder(parse.Options{KeepRaw: -1})
	var rec parse.Record
	var c columns
	meta := rowMeta{topic: "errtrail.replies", ingestedAt: time.Now().Unix()}
	b.SetBytes(int64(size / len(evs)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(evs)
		if k%8192 == 0 {
			c.reset()
		}
		meta.offset = int64(i)
		err := dec.DecodeMessage(evs[k], nil, 1764489600000, &rec)
		if err != nil {
			b.Fatalf("event %d: %v", k, err)
		}
		c.appendRow(&meta, &rec, nil, nil)
	}
}

// BenchmarkDecodeStage measures the decode stage on one batch of 20,000
// steady events: the replay filter, the decode on Config.Workers workers,
// the dedup window and the batch's token. Each op is a batch of a new
// epoch, so the filter and the window start afresh (what a rebalance
// costs is included); B/s is event bytes.
func BenchmarkDecodeStage(b *testing.B) {
	evs := steadyEvents(b, 20000)
	p, err := New(Config{Topics: []string{"errtrail.replies"}, Logger: slog.New(slog.DiscardHandler),
		Progress: func(context.Context, driver.Conn, string) (map[int32]int64, error) { return nil, nil }}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	bt := newBatch()
	size := 0
	for i, e := range evs {
		bt.msgs = append(bt.msgs, kafka.Message{Topic: "errtrail.replies", Partition: i % 4, Offset: int64(i / 4), Value: e, HighWaterMark: 1 << 20})
		size += len(e)
	}
	d := p.dec
	s := d.newSlot()
	s.b = bt
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bt.epoch = uint64(i + 1)
		bt.todo = bt.todo[:0]
		clear(bt.maxOff)
		if err := d.filterReplays(context.Background(), bt); err != nil {
			b.Fatal(err)
		}
		d.decode(s, time.Now())
		d.dedupAndCount(s)
		s.token = batchToken(bt)
		if s.rows != len(evs) {
			b.Fatalf("%d rows of %d events", s.rows, len(evs))
		}
	}
}
