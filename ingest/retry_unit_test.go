package ingest

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/parse"
)

// TestUnitDropStoredBeforeRetry (a pure unit test: Config.Progress is a
// function of the test, no server): before an insert and before each retry,
// the rows whose partition's progress covers them are dropped — another
// member stored them meanwhile, or on a cluster the shards that answered
// did — and the others are kept, in order; a partition without progress,
// one whose progress the replay filter found stale (a recreated topic), or
// a failed read keeps everything.
func TestUnitDropStoredBeforeRetry(t *testing.T) {
	mk := func() *slot {
		var a, b columns
		for i := 0; i < 4; i++ {
			rec := parse.Record{GRPCCode: -1, RetryAfterMS: -1}
			a.appendRow(&rowMeta{topic: "t", partition: 0, offset: int64(10 + i)}, &rec, nil, nil)
			b.appendRow(&rowMeta{topic: "t", partition: 1, offset: int64(20 + i)}, &rec, nil, nil)
		}
		b.appendRow(&rowMeta{topic: "u", partition: 0, offset: 5}, &parse.Record{GRPCCode: -1, RetryAfterMS: -1}, nil, nil)
		return &slot{cols: []*columns{&a, &b}, used: 2, rows: 9}
	}
	progress := map[string]map[int32]int64{"t": {0: 13, 1: 21}} // partition 0 wholly stored, 1 up to 21; u unknown
	fail := false
	p := &writer{warn: NewLogLimiter(slog.New(slog.DiscardHandler), 5, time.Second), cfg: Config{Topics: []string{"t", "u"}, InsertTimeout: time.Second,
		Progress: func(ctx context.Context, conn driver.Conn, topic string) (map[int32]int64, error) {
			if fail {
				return nil, errors.New("shard down")
			}
			return progress[topic], nil
		}}}

	s := mk()
	if n := p.dropStored(context.Background(), context.Background(), s); n != 6 || s.rows != 3 {
		t.Fatalf("dropped %d, %d rows left; want 6 dropped (4 of partition 0, 2 of partition 1), 3 left", n, s.rows)
	}
	if s.cols[0].n != 0 {
		t.Errorf("partition 0 is stored up to 13: %d of its rows kept (%v)", s.cols[0].n, s.cols[0].offset)
	}
	if got := s.cols[1].offset; len(got) != 3 || got[0] != 22 || got[1] != 23 || got[2] != 5 || s.cols[1].topic[2] != "u" {
		t.Errorf("kept %v (topics %v); want 22, 23 of t/1 and 5 of u, in order", got, s.cols[1].topic)
	}

	// A recreated topic: the replay filter marked partition 0's progress
	// stale, so its rows are kept although the old progress covers them.
	s = mk()
	s.b = &batch{staleProgress: map[TopicPartition]bool{{"t", 0}: true}}
	if n := p.dropStored(context.Background(), context.Background(), s); n != 2 || s.cols[0].n != 4 {
		t.Errorf("stale progress of t/0: dropped %d, kept %d of t/0; want only t/1's 2 dropped, all 4 of t/0 kept", n, s.cols[0].n)
	}

	fail = true
	s = mk()
	if n := p.dropStored(context.Background(), context.Background(), s); n != 0 || s.rows != 9 || s.cols[0].n != 4 || s.cols[1].n != 5 {
		t.Errorf("progress unreadable: dropped %d, rows %d (%d, %d); want every row kept", n, s.rows, s.cols[0].n, s.cols[1].n)
	}
	p.cfg.Progress = nil
	if n := p.dropStored(context.Background(), context.Background(), mk()); n != 0 {
		t.Errorf("without Config.Progress: dropped %d", n)
	}
}
