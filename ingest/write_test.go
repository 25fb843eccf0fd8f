package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
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
// "insert" and its offsets to log, both after name when it has one (a
// shard's). Only PrepareBatch is implemented.
type fakeConn struct {
	driver.Conn
	name string
	errs []error
	log  *[]string
}

func (c *fakeConn) prefix() string {
	if c.name == "" {
		return ""
	}
	return c.name + " "
}

// Query answers no query: the writer's wait for earlier inserts
// (settle.go) cannot list the server's processes and goes on, as it does
// against a server that refuses system.processes.
func (c *fakeConn) Query(context.Context, string, ...any) (driver.Rows, error) {
	return nil, errors.New("fakeConn: no server to query")
}

func (c *fakeConn) PrepareBatch(context.Context, string, ...driver.PrepareBatchOption) (driver.Batch, error) {
	if len(c.errs) > 0 {
		err := c.errs[0]
		c.errs = c.errs[1:]
		if err != nil {
			*c.log = append(*c.log, c.prefix()+"refused")
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
	*b.c.log = append(*b.c.log, fmt.Sprint(b.c.prefix()+"insert ", b.offs))
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

// fakeGroup is a stand-in for a Group, for the parking tests: every epoch
// before live is abandoned, a commit writes "commit@epoch" and its offsets
// to log, a resume writes "resume" and the partition; pauses are counted
// and the paused partitions kept in paused.
type fakeGroup struct {
	fakeConsumer
	live    uint64
	log     *[]string
	paused  map[TopicPartition]bool
	pauses  int
	resumed chan TopicPartition // if not nil, told of each resume
}

func (g *fakeGroup) attempt(epoch uint64) (context.Context, func(), bool) {
	return context.Background(), func() {}, epoch >= g.live
}

func (g *fakeGroup) commitEpoch(_ context.Context, epoch uint64, stored map[TopicPartition]int64) error {
	line := fmt.Sprintf("commit@%d", epoch)
	for _, k := range sortedParts(partSet(stored)) {
		line += fmt.Sprintf(" %s/%d:%d", k.Topic, k.Partition, stored[k])
	}
	*g.log = append(*g.log, line)
	return nil
}

func (g *fakeGroup) pause(_ uint64, tp TopicPartition) {
	if g.paused == nil {
		g.paused = map[TopicPartition]bool{}
	}
	g.paused[tp] = true
	g.pauses++
}

func (g *fakeGroup) resume(_ uint64, tp TopicPartition) {
	delete(g.paused, tp)
	*g.log = append(*g.log, fmt.Sprintf("resume %s/%d", tp.Topic, tp.Partition))
	if g.resumed != nil {
		g.resumed <- tp
	}
}

func partSet[V any](m map[TopicPartition]V) map[TopicPartition]bool {
	out := map[TopicPartition]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// clusterSlot returns a slot of epoch with rows of t/p at offs[p], in
// partition order, its batch holding those messages; its ack writes "ack"
// to log.
func clusterSlot(log *[]string, epoch uint64, offs map[int32][]int64) *slot {
	var c columns
	b := newBatch()
	b.epoch = epoch
	for _, p := range slices.Sorted(maps.Keys(offs)) {
		k := TopicPartition{"t", p}
		for _, o := range offs[p] {
			c.appendRow(&rowMeta{topic: "t", partition: p, offset: o}, &parse.Record{GRPCCode: -1, RetryAfterMS: -1}, nil, nil)
			b.msgs = append(b.msgs, kafka.Message{Topic: "t", Partition: int(p), Offset: o})
			b.todo = append(b.todo, len(b.msgs)-1)
			b.maxOff[k] = max(b.maxOff[k], o)
		}
	}
	s := &slot{b: b, cols: []*columns{&c}, used: 1, rows: c.n, ack: func() { *log = append(*log, "ack") }}
	s.token = batchToken(b)
	return s
}

// clusterWriter returns a writer to two fake shards (even partitions on
// "shard1", odd ones on "shard2", whose PrepareBatch takes shard2Errs in
// turn) committing through a fakeGroup of epoch 1, everything written to
// log; nothing is stored yet by Config.Progress. The parked rows' backoff
// is an hour, so that run never retries them on its own: a test retries
// them with writer.retryParked.
func clusterWriter(log *[]string, shard2Errs ...error) (*writer, *fakeGroup) {
	g := &fakeGroup{live: 1, log: log}
	cfg := Config{Topics: []string{"t"}, Logger: slog.New(slog.DiscardHandler), Backoff: Backoff{Base: time.Hour, Max: time.Hour},
		Progress: func(context.Context, driver.Conn, string) (map[int32]int64, error) { return nil, nil },
		Shards: &Shards{Table: "landing_local",
			Conns: []driver.Conn{&fakeConn{name: "shard1", log: log}, &fakeConn{name: "shard2", errs: shard2Errs, log: log}},
			Of:    func(_ context.Context, _ string, p int32) (int, error) { return int(p % 2), nil }}}
	cfg.defaults()
	return newWriter(cfg, g, nil, nil, NewLogLimiter(cfg.Logger, 5, time.Second)), g
}

// TestUnitWriterStopsWithParkedRowsUncommitted: on a cluster, the rows a
// shard that is down refused are parked and their partition paused (once),
// while the other shard's partition is stored and committed; rows of the
// paused partition that arrive later are held back without an insert, and
// the rows of the other partition in the same batch go on. At the stop (the
// input closed) nothing of the parked partition is committed or resumed,
// and the refused rows were not retried in place.
func TestUnitWriterStopsWithParkedRowsUncommitted(t *testing.T) {
	var log []string
	w, g := clusterWriter(&log, io.EOF)
	err := writeAll(w, clusterSlot(&log, 1, map[int32][]int64{0: {0, 1, 2}, 1: {0, 1}}),
		clusterSlot(&log, 1, map[int32][]int64{0: {3, 4}, 1: {2, 3}}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"shard1 insert [0 1 2]", "shard2 refused", "commit@1 t/0:2", "ack", "shard1 insert [3 4]", "commit@1 t/0:4", "ack"}
	if !slices.Equal(log, want) {
		t.Errorf("events %q; want %q", log, want)
	}
	if len(g.paused) != 1 || !g.paused[TopicPartition{"t", 1}] || g.pauses != 1 {
		t.Errorf("paused %v in %d pauses; want t/1 alone, paused once", g.paused, g.pauses)
	}
	if got := testutil.ToFloat64(w.m.ParkedRows); got != 4 {
		t.Errorf("parked rows %v; want t/1's 4", got)
	}
	if got := testutil.ToFloat64(w.m.RowsInserted); got != 5 {
		t.Errorf("rows inserted %v; want t/0's 5", got)
	}
}

// TestUnitWriterRetriesParkedRowsInOrderThenResumes: once the shard is back,
// the parked rows are stored oldest first, each batch's committed after
// its rows (t/1 up to 1, then up to 3), and the partition is resumed only
// when its last parked rows are stored, not after the first ones.
func TestUnitWriterRetriesParkedRowsInOrderThenResumes(t *testing.T) {
	var log []string
	w, g := clusterWriter(&log, io.EOF)
	err := writeAll(w, clusterSlot(&log, 1, map[int32][]int64{0: {0, 1, 2}, 1: {0, 1}}),
		clusterSlot(&log, 1, map[int32][]int64{0: {3, 4}, 1: {2, 3}}))
	if err != nil {
		t.Fatal(err)
	}
	log = log[:0]
	w.retryParked(context.Background())
	want := []string{"shard2 insert [0 1]", "commit@1 t/1:1", "shard2 insert [2 3]", "resume t/1", "commit@1 t/1:3"}
	if !slices.Equal(log, want) {
		t.Errorf("events %q; want %q", log, want)
	}
	if len(g.paused) != 0 {
		t.Errorf("still paused: %v", g.paused)
	}
	if got := testutil.ToFloat64(w.m.ParkedRows); got != 0 {
		t.Errorf("parked rows %v; want 0", got)
	}
	if got := testutil.ToFloat64(w.m.RowsInserted); got != 9 {
		t.Errorf("rows inserted %v; want all 9", got)
	}
}

// TestUnitWriterRetriesParkedRowsWhenDue: run itself retries the parked
// rows once their backoff has passed, with no new slot arriving, and
// commits them after they are stored.
func TestUnitWriterRetriesParkedRowsWhenDue(t *testing.T) {
	var log []string
	w, g := clusterWriter(&log, io.EOF)
	w.lot.backoff = Backoff{Base: time.Millisecond, Max: time.Millisecond}
	g.resumed = make(chan TopicPartition, 1)
	in := make(chan *slot)
	done := make(chan error, 1)
	go func() { done <- w.run(context.Background(), in) }()
	in <- clusterSlot(&log, 1, map[int32][]int64{0: {0, 1, 2}, 1: {0, 1}})
	<-g.resumed // blocks until run retried the parked rows on its own
	close(in)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{"shard1 insert [0 1 2]", "shard2 refused", "commit@1 t/0:2", "ack", "shard2 insert [0 1]", "resume t/1", "commit@1 t/1:1"}
	if !slices.Equal(log, want) {
		t.Errorf("events %q; want %q", log, want)
	}
}

// TestUnitWriterDropsParkedRowsOfAnEndedGeneration: parked rows of a
// generation that ended (a batch of the next one arrives) are dropped
// uncommitted and counted abandoned, without a resume; the next
// generation's rows of that partition (fetched again from the last commit)
// are not held back behind them but stored and committed.
func TestUnitWriterDropsParkedRowsOfAnEndedGeneration(t *testing.T) {
	var log []string
	w, g := clusterWriter(&log, io.EOF)
	s1 := clusterSlot(&log, 1, map[int32][]int64{0: {0, 1, 2}, 1: {0, 1}})
	s2 := clusterSlot(&log, 2, map[int32][]int64{0: {3}, 1: {0, 1}})
	in := make(chan *slot, 2)
	in <- s1
	close(in)
	if err := w.run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	log = log[:0]
	g.live = 2
	in = make(chan *slot, 1)
	in <- s2
	close(in)
	if err := w.run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	want := []string{"shard1 insert [3]", "shard2 insert [0 1]", "commit@2 t/0:3 t/1:1", "ack"}
	if !slices.Equal(log, want) {
		t.Errorf("events %q; want %q: no commit of epoch 1's t/1, no resume", log, want)
	}
	if got := testutil.ToFloat64(w.m.Abandoned); got != 2 {
		t.Errorf("abandoned %v; want the 2 parked rows", got)
	}
	if got := testutil.ToFloat64(w.m.ParkedRows); got != 0 {
		t.Errorf("parked rows %v; want 0", got)
	}
}
