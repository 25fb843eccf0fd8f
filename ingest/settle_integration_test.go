package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/internal/testenv"
)

// signalHandler is a slog.Handler that keeps every message and closes
// waiting when one containing want arrives.
type signalHandler struct {
	mu      sync.Mutex
	msgs    []string
	want    string
	waiting chan struct{}
}

func (h *signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *signalHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *signalHandler) WithGroup(string) slog.Handler            { return h }
func (h *signalHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	if strings.Contains(r.Message, h.want) && h.waiting != nil {
		close(h.waiting)
		h.waiting = nil
	}
	return nil
}

func (h *signalHandler) said(part string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.msgs {
		if strings.Contains(m, part) {
			return true
		}
	}
	return false
}

// TestAwaitEarlierInsertsOnClickHouse: an insert into the landing table
// that a former owner left running on the server (here: one held open,
// with a block sent) is waited for before a new generation's first
// attempt; the wait ends only once the server no longer runs it. With no
// such insert, nothing is waited for; an insert into another table is not
// waited for either.
func TestAwaitEarlierInsertsOnClickHouse(t *testing.T) {
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{testenv.ClickHouse(t)}, Protocol: clickhouse.Native,
		DialTimeout: testenv.CHDialTimeout, ReadTimeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	defer cancel()
	db := fmt.Sprintf("errtrail_settle_it_%d", rand.IntN(1e9))
	for _, q := range []string{"CREATE DATABASE " + db,
		"CREATE TABLE " + db + ".landing (x UInt64) ENGINE = MergeTree ORDER BY x",
		"CREATE TABLE " + db + ".other (x UInt64) ENGINE = MergeTree ORDER BY x"} {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db) })

	h := &signalHandler{want: "waiting for inserts"}
	w := &writer{conn: conn, log: slog.New(h), warn: NewLogLimiter(slog.New(h), 100, time.Second),
		cfg: Config{Table: db + ".landing", InsertTimeout: 4 * time.Minute}}

	// Nothing running: no wait.
	w.awaitEarlierInserts(ctx, ctx)
	if h.said("waiting for inserts") {
		t.Fatalf("waited with no insert running: %q", h.msgs)
	}

	// An insert into another table, held open: not waited for.
	other := openInsert(t, ctx, conn, db+".other")
	w.awaitEarlierInserts(ctx, ctx)
	if h.said("waiting for inserts") {
		t.Fatalf("waited for an insert into another table: %q", h.msgs)
	}

	// An insert into landing, held open with a block sent: waited for until
	// it ends.
	h.waiting = make(chan struct{})
	waiting := h.waiting
	orphan := openInsert(t, ctx, conn, db+".landing")
	done := make(chan time.Time, 1)
	go func() { w.awaitEarlierInserts(ctx, ctx); done <- time.Now() }()
	select {
	case <-waiting:
	case at := <-done:
		t.Fatalf("returned at %s without waiting for the insert into landing the server runs: %q", at, h.msgs)
	case <-ctx.Done():
		t.Fatal("no wait began")
	}
	if err := orphan.Send(); err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	select {
	case at := <-done:
		if at.Before(ended) {
			t.Errorf("the wait ended at %s, before the insert did (%s)", at, ended)
		}
	case <-ctx.Done():
		t.Fatal("the wait did not end after the insert did")
	}
	if !h.said("inserts begun before this generation ended") {
		t.Errorf("no log of the wait's end: %q", h.msgs)
	}
	if err := other.Send(); err != nil {
		t.Fatal(err)
	}
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM "+db+".landing").Scan(&n); err != nil || n != 3 {
		t.Errorf("landing holds %d rows (%v); want the held insert's 3", n, err)
	}
}

// openInsert starts an insert into table under an insert attempt's query
// id and sends one block of three rows, leaving the query running on the
// server until Send.
func openInsert(t *testing.T, ctx context.Context, conn driver.Conn, table string) driver.Batch {
	t.Helper()
	qctx := clickhouse.Context(ctx, clickhouse.WithQueryID(insertQueryID()))
	bt, err := conn.PrepareBatch(qctx, "INSERT INTO "+table+" (x)")
	if err != nil {
		t.Fatal(err)
	}
	for x := uint64(1); x <= 3; x++ {
		if err := bt.Append(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := bt.Flush(); err != nil {
		t.Fatal(err)
	}
	return bt
}
