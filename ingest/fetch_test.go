package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// testFetcher returns a fetcher of src with a pool of n batches.
func testFetcher(src Consumer, l Limits, n int) *fetcher {
	cfg := Config{Topics: []string{"t"}, Limits: l, Logger: slog.New(slog.DiscardHandler)}
	cfg.defaults()
	f := newFetcher(cfg, src, NewLogLimiter(cfg.Logger, 5, time.Second))
	f.batches = n
	return f
}

// fakeConsumer is an in-memory stand-in for a Consumer, for the stages' unit
// tests: it returns its script of messages and errors, then blocks. Each
// fetch is announced on fetched (when not nil); each commit is written to
// log (when not nil) as "commit topic/partition:offset".
type fakeConsumer struct {
	script  []any
	fetched chan int
	log     *[]string
}

func (f *fakeConsumer) FetchMessage(ctx context.Context) (kafka.Message, error) {
	if len(f.script) == 0 {
		<-ctx.Done()
		return kafka.Message{}, ctx.Err()
	}
	next := f.script[0]
	f.script = f.script[1:]
	if f.fetched != nil {
		f.fetched <- len(f.script)
	}
	if err, ok := next.(error); ok {
		return kafka.Message{}, err
	}
	return next.(kafka.Message), nil
}

func (f *fakeConsumer) CommitMessages(_ context.Context, msgs ...kafka.Message) error {
	if f.log != nil {
		for _, m := range msgs {
			*f.log = append(*f.log, fmt.Sprintf("commit %s/%d:%d", m.Topic, m.Partition, m.Offset))
		}
	}
	return nil
}

// TestUnitFetcherCutsAtRevocationFakeSource: ErrRevoked cuts the batch in
// hand at once (long before its row limit or wait), and every batch after
// it carries the next epoch; no batch mixes two epochs.
func TestUnitFetcherCutsAtRevocationFakeSource(t *testing.T) {
	msg := func(off int64) kafka.Message { return kafka.Message{Topic: "t", Offset: off, Value: []byte("x")} }
	src := &fakeConsumer{script: []any{msg(1), msg(2), ErrRevoked, ErrRevoked, msg(3), ErrRevoked, msg(4)}}
	f := testFetcher(src, Limits{Rows: 1000, Wait: time.Hour}, 8)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan *batch, 8)
	done := make(chan struct{})
	go func() { f.run(ctx, context.Background(), out); close(done) }()
	type got struct {
		epoch uint64
		offs  []int64
	}
	var seen []got
	for len(seen) < 2 { // only the revocations can cut them: no row limit or wait is near
		b := <-out
		seen = append(seen, got{epoch: b.epoch, offs: offsets(b)})
	}
	cancel() // the batch of offset 4 is sent at the stop
	<-done
	for b := range out {
		seen = append(seen, got{epoch: b.epoch, offs: offsets(b)})
	}
	want := []got{{0, []int64{1, 2}}, {2, []int64{3}}, {3, []int64{4}}}
	if len(seen) != len(want) {
		t.Fatalf("batches %v; want %v", seen, want)
	}
	for i := range want {
		if seen[i].epoch != want[i].epoch || !slices.Equal(seen[i].offs, want[i].offs) {
			t.Errorf("batch %d: %v; want %v", i, seen[i], want[i])
		}
	}
}

// TestUnitFetcherReusesABatchOnlyAfterItsAck: with a pool of one batch, the
// fetcher hands out a batch and then, having fetched the next message,
// waits: no second batch comes before the first is acknowledged (fetching
// stops while the writer holds every batch). The ack gives the same batch
// back, emptied of the last batch's messages, filter results and offsets.
func TestUnitFetcherReusesABatchOnlyAfterItsAck(t *testing.T) {
	msg := func(off int64) kafka.Message { return kafka.Message{Topic: "t", Offset: off, Value: []byte("x")} }
	src := &fakeConsumer{script: []any{msg(1), msg(2), msg(3)}, fetched: make(chan int, 8)}
	f := testFetcher(src, Limits{Rows: 1, Wait: time.Hour}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan *batch)
	done := make(chan struct{})
	go func() { f.run(ctx, ctx, out); close(done) }() // ctx as hard too: it ends the wait for a free batch
	defer func() { cancel(); <-done }()

	a := <-out
	if got := offsets(a); !slices.Equal(got, []int64{1}) {
		t.Fatalf("first batch holds %v; want [1]", got)
	}
	<-src.fetched // offset 1
	<-src.fetched // offset 2: the fetcher now needs a batch, and the pool is empty
	select {
	case b := <-out:
		t.Fatalf("a batch (%v) came before the only batch of the pool was acknowledged", offsets(b))
	default:
	}
	a.todo = append(a.todo, 0) // as the decoder and the writer leave it
	a.maxOff[TopicPartition{"t", 0}] = 1
	a.ack()
	b := <-out
	if b != a {
		t.Error("the batch after the ack is not the acknowledged one: the pool grew")
	}
	if got := offsets(b); !slices.Equal(got, []int64{2}) || len(b.todo) != 0 || len(b.maxOff) != 0 {
		t.Errorf("reused batch: offsets %v, todo %v, maxOff %v; want [2] and nothing of the last batch", got, b.todo, b.maxOff)
	}
}

func offsets(b *batch) []int64 {
	var out []int64
	for _, m := range b.msgs {
		out = append(out, m.Offset)
	}
	return out
}
