package ingest

// An insert attempt cancelled because its generation was abandoned
// (group.go) may still be running on the server: a block it received whole
// is written, views and progress row included, after the client left. The
// partitions' next owner reads progress right before its own insert, so
// this member must not rejoin the group until the server is done with the
// cancelled attempt; else the rollups count that block twice (seen in
// TestRebalanceTwoConsumers with two suites on one 2-core machine: 500 and
// 928 events counted twice). The drain waits for every attempt to return
// before the member rejoins, so the attempt waits here.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// insertQueryID returns a query id of its own for one insert attempt.
func insertQueryID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "errtrail-insert-" + hex.EncodeToString(b[:])
}

// settlePoll is how often awaitServerEnd asks the server; settleMax bounds
// the wait: the drain abandons a generation at two thirds of the rebalance
// timeout, and a member that has not rejoined by its end is dropped from
// the group (a block normally settles well within a second).
const (
	settlePoll = 50 * time.Millisecond
	settleMax  = 8 * time.Second
)

// awaitServerEnd returns once the server conn reaches no longer runs the
// query qid (system.processes), or after settleMax (InsertTimeout if less),
// or when hard ends; the last two are logged, since the next owner may then
// count a block twice in the rollups.
func (w *writer) awaitServerEnd(hard context.Context, conn driver.Conn, qid string) {
	ctx, cancel := context.WithTimeout(hard, min(w.cfg.InsertTimeout, settleMax))
	defer cancel()
	for {
		var n uint64
		err := conn.QueryRow(ctx, "SELECT count() FROM system.processes WHERE query_id = ?", qid).Scan(&n)
		if err == nil && n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			w.warn.Log(slog.LevelWarn, "a cancelled insert may still be running on the server; its partitions' next owner may store its last block again",
				"query_id", qid, "err", err)
			return
		case <-time.After(settlePoll):
		}
	}
}
