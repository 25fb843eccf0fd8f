package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/errtrail/errtrail/parse"
	"github.com/segmentio/kafka-go"
)

// fakeConn is an in-memory stand-in for a ClickHouse connection, for the
// writer's unit tests: each PrepareBatch takes the next error of errs (nil,
// or errs used up: a batch that takes the rows) and a sent batch writes
// "insert" and its offsets to log. Only PrepareBatch is implemented.
type fakeConn struct {
	driver.Conn
	errs []error
	log  *[]string
}

func (c *fakeConn) PrepareBatch(context.Context, string, ...driver.PrepareBatchOption) (driver.Batch, error) {
	if len(c.errs) > 0 {
		err := c.errs[0]
		c.errs = c.errs[1:]
		if err != nil {
			*c.log = append(*c.log, "refused")
			return nil, err
		}
	}
	return &fakeBatch{c: c}, nil
}

// fakeBatch records the kafka_offset column of what is appended.
type fakeBatch struct {
	driver.Batch
	c    *fakeConn
	offs []int64
}

type fakeColumn struct {
	b      *fakeBatch
	offset bool
}

func (c fakeColumn) Append(v any) error {
	if c.offset {
		c.b.offs = append(c.b.offs, v.([]int64)...)
	}
	return nil
}
func (c fakeColumn) AppendRow(any) error { return nil }

func (b *fakeBatch) Column(i int) driver.BatchColumn {
	return fakeColumn{b: b, offset: LandingColumns[i] == "kafka_offset"}
}
func (b *fakeBatch) Flush() error { return nil }
func (b *fakeBatch) Abort() error { return nil }
func (b *fakeBatch) Send() error {
	*b.c.log = append(*b.c.log, fmt.Sprint("insert ", b.offs))
	return nil
}

// testWriter returns a writer to conn committing to a fakeConsumer, both
// writing to log; nothing is stored yet by Config.Progress.
func testWriter(conn driver.Conn, log *[]string) *writer {
	cfg := Config{Topics: []string{"t"}, Logger: slog.New(slog.DiscardHandler), Backoff: Backoff{Base: time.Millisecond, Max: time.Millisecond},
		Progress: func(context.Context, driver.Conn, string) (map[int32]int64, error) { return nil, nil }}
	cfg.defaults()
	return newWriter(cfg, &fakeConsumer{log: log}, conn, nil, NewLogLimiter(cfg.Logger, 5, time.Second))
}

// decodedSlot returns a slot of rows of t/0 at offs, its batch holding
// offsets up to max, whose ack writes "ack" to log.
func decodedSlot(log *[]string, max int64, offs ...int64) *slot {
	var c columns
	for _, o := range offs {
		c.appendRow(&rowMeta{topic: "t", offset: o}, &parse.Record{GRPCCode: -1, RetryAfterMS: -1}, nil, nil)
	}
	b := newBatch()
	b.maxOff[TopicPartition{"t", 0}] = max
	for o := int64(0); o <= max; o++ {
		b.msgs = append(b.msgs, kafka.Message{Topic: "t", Offset: o})
	}
	return &slot{b: b, cols: []*columns{&c}, used: 1, rows: len(offs), ack: func() { *log = append(*log, "ack") }}
}

// writeAll runs the writer over slots and returns its error.
func writeAll(w *writer, slots ...*slot) error {
	in := make(chan *slot, len(slots))
	for _, s := range slots {
		in <- s
	}
	close(in)
	return w.run(context.Background(), in)
}

// TestUnitWriterAcksAfterTheCommitAfterTheInsert: a batch's offsets are
// committed only after its rows were stored (here on the second attempt,
// the first refused by a server that is away), and the batch is
// acknowledged only after that, once; a batch whose every message was a
// replay (no rows) is committed and acknowledged without an insert.
func TestUnitWriterAcksAfterTheCommitAfterTheInsert(t *testing.T) {
	var log []string
	w := testWriter(&fakeConn{errs: []error{io.EOF}, log: &log}, &log)
	if err := writeAll(w, decodedSlot(&log, 8, 6, 7, 8), decodedSlot(&log, 10)); err != nil {
		t.Fatal(err)
	}
	want := []string{"refused", "insert [6 7 8]", "commit t/0:8", "ack", "commit t/0:10", "ack"}
	if !slices.Equal(log, want) {
		t.Errorf("events %q; want %q", log, want)
	}
	if got := testutil.ToFloat64(w.m.InsertRetries.WithLabelValues(string(ClassNetwork))); got != 1 {
		t.Errorf("retries counted %v; want 1", got)
	}
	if got := testutil.ToFloat64(w.m.RowsInserted); got != 3 {
		t.Errorf("rows inserted %v; want 3", got)
	}
}

// TestUnitWriterPermanentErrorNeitherCommitsNorAcks: a refusal retrying
// cannot fix (an unknown table) stops the writer with a *PermanentError;
// the batch is neither committed nor acknowledged, and the batch after it
// is not written.
func TestUnitWriterPermanentErrorNeitherCommitsNorAcks(t *testing.T) {
	var log []string
	w := testWriter(&fakeConn{errs: []error{&clickhouse.Exception{Code: 60, Message: "table landing does not exist"}}, log: &log}, &log)
	err := writeAll(w, decodedSlot(&log, 8, 6, 7, 8), decodedSlot(&log, 10, 9, 10))
	var perm *PermanentError
	if !errors.As(err, &perm) || perm.Class != ClassSchema {
		t.Fatalf("error %v; want a permanent schema error", err)
	}
	if want := []string{"refused"}; !slices.Equal(log, want) {
		t.Errorf("events %q; want %q: no commit, no ack, no later insert", log, want)
	}
}

// fakeFence is a stand-in for a Group's generations: every epoch before
// live is abandoned.
type fakeFence struct {
	fenced
	live uint64
	log  *[]string
}

func (f *fakeFence) attempt(epoch uint64) (context.Context, func(), bool) {
	return context.Background(), func() {}, epoch >= f.live
}

func (f *fakeFence) commitEpoch(_ context.Context, epoch uint64, stored map[TopicPartition]int64) error {
	*f.log = append(*f.log, fmt.Sprint("commit epoch ", epoch, stored))
	return nil
}

// TestUnitWriterDropsAnAbandonedGenerationUncommitted: a batch of a
// generation the Group abandoned is not written and not committed (the
// partitions' next owner stores it), but it is acknowledged: its buffers
// go back to the stages.
func TestUnitWriterDropsAnAbandonedGenerationUncommitted(t *testing.T) {
	var log []string
	w := testWriter(&fakeConn{log: &log}, &log)
	w.fence = &fakeFence{live: 1, log: &log}
	if err := writeAll(w, decodedSlot(&log, 8, 6, 7, 8)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"ack"}; !slices.Equal(log, want) {
		t.Errorf("events %q; want %q: no insert, no commit", log, want)
	}
	if got := testutil.ToFloat64(w.m.Abandoned); got != 9 {
		t.Errorf("abandoned %v; want the batch's 9 messages", got)
	}
}

// nullConn takes every INSERT and keeps nothing: the writer's own work per
// batch (ledger, insert attempt, shard split, commit, ack) without a
// server or a driver's encoding. Only PrepareBatch is implemented.
type nullConn struct{ driver.Conn }

func (nullConn) PrepareBatch(context.Context, string, ...driver.PrepareBatchOption) (driver.Batch, error) {
	return nullBatch{}, nil
}

type nullBatch struct{ driver.Batch }
type nullColumn struct{}

func (nullColumn) Append(any) error             { return nil }
func (nullColumn) AppendRow(any) error          { return nil }
func (nullBatch) Column(int) driver.BatchColumn { return nullColumn{} }
func (nullBatch) Flush() error                  { return nil }
func (nullBatch) Abort() error                  { return nil }
func (nullBatch) Send() error                   { return nil }

// BenchmarkWriterTake measures the writer's path for one decoded batch of
// 20,000 rows over 4 partitions (take: ledger, insert, commit, ack) to a
// server that takes everything at once: to Config.Table (single), and on a
// cluster of two shards each sent its partitions' rows (shards). An op is a
// batch; the driver's encoding and the network are not in it.
func BenchmarkWriterTake(b *testing.B) {
	const rows, parts = 20000, 4
	var c columns
	bt := newBatch()
	for i := 0; i < rows; i++ {
		m := rowMeta{topic: "t", partition: int32(i % parts), offset: int64(i / parts)}
		c.appendRow(&m, &parse.Record{GRPCCode: -1, RetryAfterMS: -1}, nil, nil)
		bt.msgs = append(bt.msgs, kafka.Message{Topic: "t", Partition: i % parts, Offset: int64(i / parts)})
		bt.maxOff[TopicPartition{"t", int32(i % parts)}] = int64(i / parts)
	}
	for _, tc := range []struct {
		name   string
		shards *Shards
	}{
		{"single", nil},
		{"shards", &Shards{Table: "landing_local", Conns: []driver.Conn{nullConn{}, nullConn{}},
			Of: func(_ context.Context, _ string, p int32) (int, error) { return int(p % 2), nil }}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := testWriter(nullConn{}, nil)
			w.cfg.Shards = tc.shards
			s := &slot{b: bt, cols: []*columns{&c}, used: 1, rows: rows, ack: func() {}}
			s.token = slotToken(s)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.take(context.Background(), s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
